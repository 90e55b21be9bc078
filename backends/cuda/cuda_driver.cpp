// SPDX-License-Identifier: Apache-2.0
#include "cuda_driver.h"

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "anydev/kit/library.h"

namespace anydev::cuda {
namespace {

// cuda.h maps some names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2).
// The version listed in cuda_symbols.h must name that same signature.
#define ANYDEV_CUDA_CHECK_SIGNATURE(name, need, type, key) \
  static_assert(std::is_same_v<type, decltype(&cu##name)>, \
                "cuda_symbols.h: "                         \
                "the version listed for cu" #name          \
                " does not match the signature cuda.h declares");
ANYDEV_CUDA_SYMBOLS(ANYDEV_CUDA_CHECK_SIGNATURE)
#undef ANYDEV_CUDA_CHECK_SIGNATURE

using GetProcAddressV2 = PFN_cuGetProcAddress_v12000;  // CUDA 12.0+: with a query result
using GetProcAddressV1 = PFN_cuGetProcAddress_v11030;  // CUDA 11.3+

const char* query_result_name(CUdriverProcAddressQueryResult result) {
  switch (result) {
    case CU_GET_PROC_ADDRESS_SUCCESS:
      return "CU_GET_PROC_ADDRESS_SUCCESS";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND:
      return "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
      return "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT";
    default:
      return "an unknown query result";
  }
}

// Why cuGetProcAddress did not hand out `base`.
std::string proc_address_failure(const char* how, const char* base, int version, CUresult r,
                                 const CUdriverProcAddressQueryResult* status) {
  std::string why = std::string(how) + "(\"" + base + "\", cudaVersion " + std::to_string(version) +
                    ") returned ";
  switch (r) {
    case CUDA_ERROR_STUB_LIBRARY:
      return why +
             "CUDA_ERROR_STUB_LIBRARY: this is the CUDA Toolkit's link-time stub, not "
             "the NVIDIA driver's libcuda.so.1";
    case CUDA_ERROR_NOT_FOUND:
      why += "CUDA_ERROR_NOT_FOUND";
      if (status != nullptr) {
        why += std::string(" (") + query_result_name(*status) + ")";
        if (*status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) {
          why += ": the driver is older than this entry point";
        }
      }
      return why;
    case CUDA_SUCCESS:
      return why + "CUDA_SUCCESS with a null pointer (treated as missing)";
    default:
      return why + "CUresult " + std::to_string(static_cast<int>(r));
  }
}

// Resolves one symbol at a time with the best mechanism the library offers:
// the backend kit's resolver for ANYDEV_CUDA_SYMBOLS. Holds the handle, does
// not own it.
class SymbolResolver {
 public:
  using key_type = CudaSymbolKey;

  explicit SymbolResolver(void* library) : library_(library) {
    v2_ = reinterpret_cast<GetProcAddressV2>(dlsym(library, "cuGetProcAddress_v2"));
    if (v2_ == nullptr) {
      v1_ = reinterpret_cast<GetProcAddressV1>(dlsym(library, "cuGetProcAddress"));
    }
  }

  const char* mechanism() const {
    return v2_ != nullptr ? "cuGetProcAddress_v2" : v1_ != nullptr ? "cuGetProcAddress" : "dlsym";
  }

  // key.exported is used only when cuGetProcAddress is missing.
  void* operator()(const CudaSymbolKey& key, std::string* why) const {
    const char* base = key.base;
    const int version = key.version;
    void* fn = nullptr;
    if (v2_ != nullptr) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
      const CUresult r = v2_(base, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
      if (r == CUDA_SUCCESS && fn != nullptr) return fn;
      *why = proc_address_failure("cuGetProcAddress_v2", base, version, r, &status);
      return nullptr;
    }
    if (v1_ != nullptr) {
      const CUresult r = v1_(base, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT);
      if (r == CUDA_SUCCESS && fn != nullptr) return fn;
      *why = proc_address_failure("cuGetProcAddress", base, version, r, nullptr);
      return nullptr;
    }
    fn = kit::dlsym_resolver(library_)(key.exported, why);
    if (fn == nullptr) *why = std::string("dlsym(\"") + key.exported + "\") failed: " + *why;
    return fn;
  }

 private:
  void* library_;
  GetProcAddressV2 v2_ = nullptr;
  GetProcAddressV1 v1_ = nullptr;
};

}  // namespace

std::string driver_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

bool load_cuda_driver(void* library, const std::string& path, const std::string& opened_file,
                      CudaDriver* driver, std::string* reason) {
  const char* what = "CUDA driver library";
  CudaDriver loaded;
  loaded.requested_path = path;
  loaded.opened_path = opened_file;

  const SymbolResolver resolver(library);
  loaded.resolver = resolver.mechanism();
  const std::string opened = loaded.opened_path != path ? loaded.opened_path : "";
  kit::missing_symbol<CudaSymbolKey> missing;
  if (!ANYDEV_KIT_RESOLVE_SYMBOLS(ANYDEV_CUDA_SYMBOLS, loaded, resolver, &missing)) {
    *reason = kit::symbol_failure(
        what, path, kit::cat(missing.key.base, " (version ", missing.key.version, ")"), missing.why,
        opened);
    return false;
  }

  const std::string file = "\"" + path + "\"" + (opened.empty() ? "" : " (" + opened + ")");
  const CUresult r = loaded.DriverGetVersion(&loaded.version);
  if (r != CUDA_SUCCESS) {
    *reason = "cuDriverGetVersion failed with CUresult " + std::to_string(r) + " in " + file;
    return false;
  }
  *driver = std::move(loaded);
  return true;
}

}  // namespace anydev::cuda
