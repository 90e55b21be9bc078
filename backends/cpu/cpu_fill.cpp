#include "cpu_fill.h"

#include <cstring>

namespace anydev::cpu {
namespace {

// A multiple of every valid pattern size, so that the block repeats the
// pattern seamlessly and any tail is a prefix of it.
constexpr std::size_t kBlockBytes = 64;

bool all_bytes_equal(const unsigned char* pattern, std::size_t pattern_size) {
  for (std::size_t i = 1; i < pattern_size; ++i) {
    if (pattern[i] != pattern[0]) return false;
  }
  return true;
}

}  // namespace

bool is_valid_fill_pattern_size(std::size_t pattern_size) {
  return pattern_size == 1 || pattern_size == 2 || pattern_size == 4 || pattern_size == 8 ||
         pattern_size == 16;
}

void fill_pattern(void* dst, const void* pattern, std::size_t pattern_size, std::size_t bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* pat = static_cast<const unsigned char*>(pattern);
  // Zero fills and other byte-uniform patterns are the common case: memset is
  // the fastest way to write them.
  if (all_bytes_equal(pat, pattern_size)) {
    std::memset(out, pat[0], bytes);
    return;
  }
  alignas(kBlockBytes) unsigned char block[kBlockBytes];
  for (std::size_t i = 0; i < kBlockBytes; i += pattern_size) {
    std::memcpy(block + i, pat, pattern_size);
  }
  const std::size_t whole = bytes - bytes % kBlockBytes;
  for (std::size_t i = 0; i < whole; i += kBlockBytes) {
    std::memcpy(out + i, block, kBlockBytes);
  }
  std::memcpy(out + whole, block, bytes - whole);
}

}  // namespace anydev::cpu
