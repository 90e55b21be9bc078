// SPDX-License-Identifier: Apache-2.0
#include "core_images.h"

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

#include "core_config.h"

namespace anydev_emu::core {
namespace {

// One MessagePack value: enough of the format for code object metadata
// (maps, arrays, strings, integers, booleans, nil, binary, floats).
struct Value {
  enum class Kind { kNil, kBool, kInt, kString, kArray, kMap, kOther } kind = Kind::kNil;
  std::uint64_t number = 0;
  std::string text;
  std::vector<Value> items;                  // kArray
  std::vector<std::pair<Value, Value>> map;  // kMap

  const Value* at(const std::string& key) const {
    for (const auto& [k, v] : map) {
      if (k.kind == Kind::kString && k.text == key) return &v;
    }
    return nullptr;
  }
};

// Reads MessagePack from [p, end); false on a truncated or unknown encoding.
class Reader {
 public:
  Reader(const unsigned char* p, const unsigned char* end) : p_(p), end_(end) {}

  bool read(Value* v, int depth = 0) {
    if (depth > 16 || p_ >= end_) return false;
    const unsigned char b = *p_++;
    if (b <= 0x7f) return integer(v, b);
    if (b >= 0xe0) return integer(v, b);  // negative fixint: its bits will do
    if ((b & 0xf0) == 0x80) return map(v, b & 0x0f, depth);
    if ((b & 0xf0) == 0x90) return array(v, b & 0x0f, depth);
    if ((b & 0xe0) == 0xa0) return string(v, b & 0x1f);
    std::uint64_t n = 0;
    switch (b) {
      case 0xc0:
        v->kind = Value::Kind::kNil;
        return true;
      case 0xc2:
      case 0xc3:
        v->kind = Value::Kind::kBool;
        v->number = b & 1u;
        return true;
      case 0xc4:
        return big(1, &n) && skip(v, n);
      case 0xc5:
        return big(2, &n) && skip(v, n);
      case 0xc6:
        return big(4, &n) && skip(v, n);
      case 0xca:
        return skip(v, 4);
      case 0xcb:
        return skip(v, 8);
      case 0xcc:
      case 0xd0:
        return big(1, &n) && integer(v, n);
      case 0xcd:
      case 0xd1:
        return big(2, &n) && integer(v, n);
      case 0xce:
      case 0xd2:
        return big(4, &n) && integer(v, n);
      case 0xcf:
      case 0xd3:
        return big(8, &n) && integer(v, n);
      case 0xd9:
        return big(1, &n) && string(v, n);
      case 0xda:
        return big(2, &n) && string(v, n);
      case 0xdb:
        return big(4, &n) && string(v, n);
      case 0xdc:
        return big(2, &n) && array(v, n, depth);
      case 0xdd:
        return big(4, &n) && array(v, n, depth);
      case 0xde:
        return big(2, &n) && map(v, n, depth);
      case 0xdf:
        return big(4, &n) && map(v, n, depth);
      default:
        return false;
    }
  }

 private:
  bool big(int bytes, std::uint64_t* n) {
    if (end_ - p_ < bytes) return false;
    *n = 0;
    for (int i = 0; i < bytes; ++i) *n = (*n << 8) | *p_++;
    return true;
  }
  static bool integer(Value* v, std::uint64_t n) {
    v->kind = Value::Kind::kInt;
    v->number = n;
    return true;
  }
  bool skip(Value* v, std::uint64_t n) {
    if (static_cast<std::uint64_t>(end_ - p_) < n) return false;
    p_ += n;
    v->kind = Value::Kind::kOther;
    return true;
  }
  bool string(Value* v, std::uint64_t n) {
    if (static_cast<std::uint64_t>(end_ - p_) < n) return false;
    v->kind = Value::Kind::kString;
    v->text.assign(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }
  bool array(Value* v, std::uint64_t n, int depth) {
    v->kind = Value::Kind::kArray;
    v->items.resize(n);
    for (Value& item : v->items) {
      if (!read(&item, depth + 1)) return false;
    }
    return true;
  }
  bool map(Value* v, std::uint64_t n, int depth) {
    v->kind = Value::Kind::kMap;
    v->map.resize(n);
    for (auto& [key, value] : v->map) {
      if (!read(&key, depth + 1) || !read(&value, depth + 1)) return false;
    }
    return true;
  }

  const unsigned char* p_;
  const unsigned char* end_;
};

// The descriptor of the ELF's NT_AMDGPU_METADATA note, or false.
bool metadata_note(const unsigned char* elf, const unsigned char** desc, std::size_t* size) {
  Elf64_Ehdr header;
  std::memcpy(&header, elf, sizeof header);
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    std::memcpy(&section, elf + header.e_shoff + std::size_t{i} * header.e_shentsize,
                sizeof section);
    if (section.sh_type != SHT_NOTE) continue;
    const unsigned char* note = elf + section.sh_offset;
    const unsigned char* const end = note + section.sh_size;
    while (note + sizeof(Elf64_Nhdr) <= end) {
      Elf64_Nhdr n;
      std::memcpy(&n, note, sizeof n);
      const unsigned char* name = note + sizeof n;
      const unsigned char* data = name + ((n.n_namesz + 3u) & ~3u);
      if (n.n_type == 32 && n.n_namesz == 7 && std::memcmp(name, "AMDGPU", 7) == 0) {
        *desc = data;
        *size = n.n_descsz;
        return true;
      }
      note = data + ((n.n_descsz + 3u) & ~3u);
    }
  }
  return false;
}

Status bad_image(const char* api, const std::string& what) {
  return misuse(Status::invalid_value, std::string(api) + ": " + what);
}

}  // namespace

Status parse_amdgpu_code_object(const char* api, const void* image, std::string* processor,
                                std::vector<KernelEntry>* out) {
  out->clear();
  const auto* elf = static_cast<const unsigned char*>(image);
  Elf64_Ehdr header;
  std::memcpy(&header, elf, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_machine != EM_AMDGPU) {
    return bad_image(api, "the image is not an AMD GPU code object (a 64-bit EM_AMDGPU ELF)");
  }
  const unsigned char* desc = nullptr;
  std::size_t size = 0;
  Value root;
  if (!metadata_note(elf, &desc, &size) || !Reader(desc, desc + size).read(&root) ||
      root.kind != Value::Kind::kMap) {
    return bad_image(api, "the code object has no readable AMDGPU metadata note");
  }
  const Value* target = root.at("amdhsa.target");
  const Value* kernels = root.at("amdhsa.kernels");
  if (target == nullptr || target->kind != Value::Kind::kString || kernels == nullptr ||
      kernels->kind != Value::Kind::kArray) {
    return bad_image(api, "the code object's metadata lacks amdhsa.target or amdhsa.kernels");
  }
  // "amdgcn-amd-amdhsa--gfx90a" or "...--gfx90a:xnack+": the processor.
  const std::size_t dashes = target->text.rfind("--");
  *processor = dashes == std::string::npos ? "" : target->text.substr(dashes + 2);
  *processor = processor->substr(0, processor->find(':'));
  for (const Value& kernel : kernels->items) {
    const Value* name = kernel.at(".name");
    const Value* args = kernel.at(".args");
    if (name == nullptr || name->kind != Value::Kind::kString) {
      return bad_image(api, "a kernel of the code object has no .name");
    }
    KernelEntry entry;
    entry.name = name->text;
    for (const Value& arg : args == nullptr ? std::vector<Value>{} : args->items) {
      const Value* kind = arg.at(".value_kind");
      const Value* bytes = arg.at(".size");
      if (kind == nullptr || bytes == nullptr || bytes->kind != Value::Kind::kInt) {
        return bad_image(api,
                         "an argument of kernel " + entry.name + " lacks .value_kind or .size");
      }
      if (kind->text.rfind("hidden_", 0) == 0) continue;
      entry.param_sizes.push_back(static_cast<std::size_t>(bytes->number));
    }
    out->push_back(std::move(entry));
  }
  if (out->empty()) return bad_image(api, "the code object declares no kernel");
  return Status::success;
}

Status parse_spirv_entries(const char* api, const void* il, std::size_t size,
                           std::vector<KernelEntry>* out) {
  out->clear();
  if (il == nullptr || size < 20 || size % 4 != 0) {
    return bad_image(api, "the module is not SPIR-V (" + std::to_string(size) + " bytes)");
  }
  std::vector<std::uint32_t> words(size / 4);
  std::memcpy(words.data(), il, size);
  if (words[0] != 0x07230203u) return bad_image(api, "the module lacks the SPIR-V magic number");
  constexpr std::uint32_t kOpTypeInt = 21, kOpTypePointer = 32, kOpEntryPoint = 15,
                          kOpFunction = 54, kOpFunctionParameter = 55, kKernelModel = 6;
  std::map<std::uint32_t, std::size_t> type_sizes;    // result id -> bytes
  std::map<std::uint32_t, std::string> kernel_names;  // function id -> entry name
  std::map<std::uint32_t, KernelEntry> functions;
  std::uint32_t current = 0;  // the function whose parameters follow
  for (std::size_t i = 5; i < words.size();) {
    const std::uint32_t opcode = words[i] & 0xffffu;
    const std::uint32_t count = words[i] >> 16;
    if (count == 0 || i + count > words.size()) return bad_image(api, "a truncated instruction");
    const std::uint32_t* w = &words[i];
    if (opcode == kOpTypeInt && count >= 3) type_sizes[w[1]] = w[2] / 8;
    if (opcode == kOpTypePointer && count >= 2) type_sizes[w[1]] = 8;  // Physical64
    if (opcode == kOpEntryPoint && count >= 4 && w[1] == kKernelModel) {
      kernel_names[w[2]] = reinterpret_cast<const char*>(&w[3]);
    }
    if (opcode == kOpFunction && count >= 3) {
      current = w[2];
      functions[current];
    }
    if (opcode == kOpFunctionParameter && count >= 2) {
      const auto type = type_sizes.find(w[1]);
      functions[current].param_sizes.push_back(type == type_sizes.end() ? 0 : type->second);
    }
    i += count;
  }
  for (const auto& [id, name] : kernel_names) {
    KernelEntry entry = functions[id];
    entry.name = name;
    out->push_back(std::move(entry));
  }
  if (out->empty()) return bad_image(api, "the SPIR-V module declares no kernel entry point");
  return Status::success;
}

}  // namespace anydev_emu::core
