// SPDX-License-Identifier: Apache-2.0
#include "core_kernels.h"

#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core_config.h"
#include "core_memory.h"

namespace anydev_emu::core {
namespace {

constexpr const char* kFill16 = "anydev_fill_pattern16";

// The size of a PTX scalar parameter type (".u64" -> 8), 0 when unknown.
std::size_t scalar_size(const std::string& type) {
  if (type.size() < 3 || type[0] != '.') return 0;
  const std::string bits = type.substr(2);
  if (bits == "8") return 1;
  if (bits == "16") return 2;
  if (bits == "32") return 4;
  if (bits == "64") return 8;
  return 0;
}

// The words of `text`, split at white space and commas.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == ',') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

// The size of one ".param ..." declaration's words (after ".param"):
// ".u64 name" or ".align 8 .b8 name[16]".
std::size_t param_size(const std::vector<std::string>& w, std::size_t* i) {
  if (*i < w.size() && w[*i] == ".align") *i += 2;
  if (*i + 1 >= w.size()) return 0;
  const std::size_t element = scalar_size(w[*i]);
  const std::string& name = w[*i + 1];
  *i += 2;
  const std::size_t open = name.find('[');
  if (open == std::string::npos) return element;
  return element * static_cast<std::size_t>(std::strtoull(name.c_str() + open + 1, nullptr, 10));
}

}  // namespace

Status parse_ptx_entries(const char* api, const std::string& ptx, std::vector<KernelEntry>* out) {
  out->clear();
  for (std::size_t at = ptx.find(".entry"); at != std::string::npos;
       at = ptx.find(".entry", at + 1)) {
    const std::size_t open = ptx.find('(', at);
    const std::size_t close = ptx.find(')', at);
    if (open == std::string::npos || close == std::string::npos || close < open) {
      return misuse(Status::invalid_value,
                    std::string(api) + ": a .entry without a parameter list");
    }
    KernelEntry entry;
    const std::vector<std::string> head = words(ptx.substr(at + 6, open - at - 6));
    if (head.size() != 1) {
      return misuse(Status::invalid_value, std::string(api) + ": a .entry without one name");
    }
    entry.name = head[0];
    const std::vector<std::string> w = words(ptx.substr(open + 1, close - open - 1));
    for (std::size_t i = 0; i < w.size();) {
      if (w[i] != ".param") {
        return misuse(Status::invalid_value,
                      std::string(api) + ": unexpected '" + w[i] + "' in .entry " + entry.name);
      }
      ++i;
      const std::size_t size = param_size(w, &i);
      if (size == 0) {
        return misuse(Status::invalid_value, std::string(api) + ": a parameter of .entry " +
                                                 entry.name +
                                                 " of a type the emulator cannot size");
      }
      entry.param_sizes.push_back(size);
    }
    out->push_back(std::move(entry));
  }
  if (out->empty()) {
    return misuse(Status::invalid_value, std::string(api) + ": the image declares no .entry");
  }
  return Status::success;
}

bool known_kernel(const KernelEntry& entry, std::string* why) {
  if (entry.name != kFill16) {
    *why = "the emulator performs only " + std::string(kFill16) + ", not " + entry.name;
    return false;
  }
  const std::vector<std::size_t> expected{8, 8, 8, 8};
  if (entry.param_sizes != expected) {
    *why = std::string(kFill16) + " must take four 64-bit parameters (dst, bytes, lo, hi); " +
           "this module declares " + std::to_string(entry.param_sizes.size());
    return false;
  }
  return true;
}

Status kernel_task(const char* api, const KernelEntry& entry, void* const* params,
                   std::uint64_t threads, std::function<Status()>* out) {
  std::string why;
  if (!known_kernel(entry, &why))
    return misuse(Status::invalid_value, std::string(api) + ": " + why);
  if (params == nullptr) {
    return misuse(Status::invalid_value, std::string(api) + ": no kernelParams for " + entry.name);
  }
  std::uint64_t v[4] = {};
  for (std::size_t i = 0; i < 4; ++i) {
    if (params[i] == nullptr) {
      return misuse(Status::invalid_value,
                    std::string(api) + ": kernelParams[" + std::to_string(i) + "] is null");
    }
    std::memcpy(&v[i], params[i], sizeof(v[i]));
  }
  const std::uintptr_t dst = static_cast<std::uintptr_t>(v[0]);
  const std::size_t bytes = static_cast<std::size_t>(v[1]);
  if (bytes == 0) {
    *out = [] { return Status::success; };
    return Status::success;
  }
  if (threads < 16) {
    return misuse(Status::invalid_value, std::string(api) + ": " + entry.name + " launched with " +
                                             std::to_string(threads) +
                                             " threads; its head and tail need 16");
  }
  Span span;
  if (const Status s = resolve(dst, bytes, Access::kDeviceOrPinned, api, &span);
      s != Status::success) {
    return s;
  }
  unsigned char pattern[16];
  std::memcpy(pattern, &v[2], 8);
  std::memcpy(pattern + 8, &v[3], 8);
  *out = [api, span, dst, bytes, pattern = std::to_array(pattern)] {
    std::byte* base = span.bytes();
    if (base == nullptr) {
      return misuse(Status::illegal_address,
                    std::string(api) + ": " + span.describe() + " was freed before the kernel ran");
    }
    // Byte (address mod 16) of the pattern at every address: the contract,
    // 16 bytes at a time from the pattern seen from dst.
    unsigned char seen[16];
    for (std::size_t j = 0; j < 16; ++j) seen[j] = pattern[(dst + j) % 16];
    std::size_t i = 0;
    for (; i + 16 <= bytes; i += 16) std::memcpy(base + i, seen, 16);
    std::memcpy(base + i, seen, bytes - i);
    return Status::success;
  };
  return Status::success;
}

Status enqueue_kernel(const char* api, const StreamRef& stream, const KernelEntry& entry,
                      void* const* params, std::uint64_t threads) {
  std::function<Status()> task;
  if (const Status s = kernel_task(api, entry, params, threads, &task); s != Status::success) {
    return s;
  }
  stream->enqueue(api, std::move(task));
  return Status::success;
}

}  // namespace anydev_emu::core
