#include "cuda_driver.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <type_traits>

namespace anydev::cuda {
namespace {

#define ANYDEV_CUDA_STR2(x) #x
#define ANYDEV_CUDA_STR(x) ANYDEV_CUDA_STR2(x)
#define ANYDEV_CUDA_IS_REQUIRED true
#define ANYDEV_CUDA_IS_OPTIONAL false

// cuda.h maps some names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2).
// The version listed in cuda_symbols.h must name that same signature.
#define ANYDEV_CUDA_CHECK_SIGNATURE(name, version, need)                        \
  static_assert(std::is_same_v<PFN_cu##name##_v##version, decltype(&cu##name)>, \
                "cuda_symbols.h: cu" #name " version " #version                 \
                " does not match the signature cuda.h declares");
ANYDEV_CUDA_SYMBOLS(ANYDEV_CUDA_CHECK_SIGNATURE)
#undef ANYDEV_CUDA_CHECK_SIGNATURE

using GetProcAddressV2 = PFN_cuGetProcAddress_v12000;  // CUDA 12.0+: with a query result
using GetProcAddressV1 = PFN_cuGetProcAddress_v11030;  // CUDA 11.3+

const char* QueryResultName(CUdriverProcAddressQueryResult result) {
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
std::string ProcAddressFailure(const char* how, const char* base, int version, CUresult r,
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
        why += std::string(" (") + QueryResultName(*status) + ")";
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

// Resolves one symbol at a time with the best mechanism the library offers.
class SymbolResolver {
 public:
  explicit SymbolResolver(void* library) : library_(library) {
    v2_ = reinterpret_cast<GetProcAddressV2>(dlsym(library, "cuGetProcAddress_v2"));
    if (v2_ == nullptr) {
      v1_ = reinterpret_cast<GetProcAddressV1>(dlsym(library, "cuGetProcAddress"));
    }
  }

  const char* mechanism() const {
    return v2_ != nullptr ? "cuGetProcAddress_v2" : v1_ != nullptr ? "cuGetProcAddress" : "dlsym";
  }

  // `base` is the unversioned name (cuMemAlloc), `exported` the symbol cuda.h
  // maps it to (cuMemAlloc_v2), used only when cuGetProcAddress is missing.
  void* Find(const char* base, const char* exported, int version, std::string* why) const {
    void* fn = nullptr;
    if (v2_ != nullptr) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
      const CUresult r = v2_(base, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
      if (r == CUDA_SUCCESS && fn != nullptr) return fn;
      *why = ProcAddressFailure("cuGetProcAddress_v2", base, version, r, &status);
      return nullptr;
    }
    if (v1_ != nullptr) {
      const CUresult r = v1_(base, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT);
      if (r == CUDA_SUCCESS && fn != nullptr) return fn;
      *why = ProcAddressFailure("cuGetProcAddress", base, version, r, nullptr);
      return nullptr;
    }
    dlerror();
    fn = dlsym(library_, exported);
    if (fn != nullptr) return fn;
    const char* error = dlerror();
    *why = std::string("dlsym(\"") + exported + "\") failed: " + (error ? error : "null symbol");
    return nullptr;
  }

 private:
  void* library_;
  GetProcAddressV2 v2_ = nullptr;
  GetProcAddressV1 v1_ = nullptr;
};

std::string OpenedPath(void* library, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

std::string DriverVersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

bool LoadCudaDriver(const std::string& path, CudaDriver* driver, std::string* reason) {
  dlerror();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    *reason = "cannot open the CUDA driver library \"" + path +
              "\": " + (error ? error : "dlopen failed") +
              " (is the NVIDIA driver installed? ANYDEV_CUDA_LIBRARY overrides the path)";
    return false;
  }
  CudaDriver loaded;
  loaded.requested_path = path;
  loaded.opened_path = OpenedPath(library, path);

  const SymbolResolver resolver(library);
  loaded.resolver = resolver.mechanism();
  const std::string file =
      "\"" + path + "\"" + (loaded.opened_path != path ? " (" + loaded.opened_path + ")" : "");
  std::string why;
#define ANYDEV_CUDA_RESOLVE(name, version, need)                                            \
  loaded.name = reinterpret_cast<PFN_cu##name##_v##version>(                                \
      resolver.Find("cu" #name, ANYDEV_CUDA_STR(cu##name), version, &why));                 \
  if (loaded.name == nullptr && ANYDEV_CUDA_IS_##need) {                                    \
    *reason = "the CUDA driver library " + file +                                           \
              " lacks the required entry point cu" #name " (version " #version "): " + why; \
    dlclose(library);                                                                       \
    return false;                                                                           \
  }
  ANYDEV_CUDA_SYMBOLS(ANYDEV_CUDA_RESOLVE)
#undef ANYDEV_CUDA_RESOLVE

  const CUresult r = loaded.DriverGetVersion(&loaded.version);
  if (r != CUDA_SUCCESS) {
    *reason = "cuDriverGetVersion failed with CUresult " + std::to_string(r) + " in " + file;
    dlclose(library);
    return false;
  }
  *driver = std::move(loaded);
  return true;
}

}  // namespace anydev::cuda
