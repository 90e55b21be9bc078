// SPDX-License-Identifier: Apache-2.0
// How a device fill becomes the fills OpenCL takes: clEnqueueFillBuffer and
// clCommandFillBufferKHR need the offset (and size) to be a multiple of the
// pattern size, while a view may start elsewhere (a 16-byte element at an
// 8-byte boundary). Such a fill is split into the pattern's first bytes up
// to the next boundary, the pattern rotated to start there over the aligned
// middle, and the rotated pattern's first bytes over what is left; the ends
// are written as aligned 1-, 2-, 4- or 8-byte pieces. Same bytes; the pieces
// are disjoint, so they may run in any order. Pure; thread-safe.
#ifndef ANYDEV_BACKENDS_OPENCL_OPENCL_FILL_PIECES_H_
#define ANYDEV_BACKENDS_OPENCL_OPENCL_FILL_PIECES_H_

#include <array>
#include <cstddef>
#include <cstring>

namespace anydev::opencl {

// One fill OpenCL takes: `bytes` at `offset` (both multiples of `size`) of
// the first `size` bytes of `pattern`.
struct FillPiece {
  std::array<unsigned char, 16> pattern{};
  std::size_t size = 0;
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

// At most 4 pieces at each end (8 + 4 + 2 + 1 bytes) and the middle.
struct FillPieces {
  std::array<FillPiece, 9> piece{};
  std::size_t count = 0;
};

namespace detail {

// Appends `count` literal bytes of `data` at `offset` as aligned power-of-two
// pieces, each its own pattern.
inline void add_literal(FillPieces& out, const unsigned char* data, std::size_t offset,
                        std::size_t count) {
  while (count > 0) {
    std::size_t size = 8;
    while (size > count || offset % size != 0) size /= 2;
    FillPiece& p = out.piece[out.count++];
    std::memcpy(p.pattern.data(), data, size);
    p.size = size;
    p.offset = offset;
    p.bytes = size;
    data += size;
    offset += size;
    count -= size;
  }
}

}  // namespace detail

// The pieces of a fill of `bytes` (a multiple of `size`, 1 to 16) at
// `offset` with `size` bytes of `pattern` repeated: one piece, the fill
// itself, when `offset` is a multiple of `size` or nothing is written.
inline FillPieces fill_pieces(const unsigned char* pattern, std::size_t size, std::size_t offset,
                              std::size_t bytes) {
  FillPieces out;
  if (offset % size == 0 || bytes == 0) {
    FillPiece& p = out.piece[out.count++];
    std::memcpy(p.pattern.data(), pattern, size);
    p.size = size;
    p.offset = offset;
    p.bytes = bytes;
    return out;
  }
  const std::size_t head = size - offset % size;  // < size <= bytes
  std::array<unsigned char, 16> rotated{};
  for (std::size_t i = 0; i < size; ++i) rotated[i] = pattern[(i + head) % size];
  const std::size_t middle = (bytes - head) / size * size;
  const std::size_t tail = bytes - head - middle;
  detail::add_literal(out, pattern, offset, head);
  if (middle > 0) {
    FillPiece& p = out.piece[out.count++];
    p.pattern = rotated;
    p.size = size;
    p.offset = offset + head;
    p.bytes = middle;
  }
  detail::add_literal(out, rotated.data(), offset + head + middle, tail);
  return out;
}

}  // namespace anydev::opencl

#endif  // ANYDEV_BACKENDS_OPENCL_OPENCL_FILL_PIECES_H_
