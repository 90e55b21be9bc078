// SPDX-License-Identifier: Apache-2.0
// The memcpy and memset nodes of CUDA's native graphs (gpu_graph.h): a copy
// is a CUDA_MEMCPY3D of one row of one slice between unified addresses, a
// fill a CUDA_MEMSET_NODE_PARAMS of one row; both in the device's primary
// context. Stateless; thread-safe.
#include "cuda_api.h"

namespace anydev::cuda {

CUresult CudaApi::graph_add_copy(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps,
                                 std::size_t count, CUdeviceptr dst, CUdeviceptr src,
                                 std::size_t bytes, int device) {
  CUcontext context = nullptr;
  if (primary_context(device, &context) != ANYDEV_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.srcDevice = src;
  p.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.dstDevice = dst;
  p.WidthInBytes = bytes;
  p.Height = 1;
  p.Depth = 1;
  return driver().GraphAddMemcpyNode(out, graph, deps, count, &p, context);
}

CUresult CudaApi::graph_add_memset(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps,
                                   std::size_t count, CUdeviceptr dst, unsigned value,
                                   unsigned element, std::size_t width, int device) {
  CUcontext context = nullptr;
  if (primary_context(device, &context) != ANYDEV_SUCCESS) return CUDA_ERROR_INVALID_CONTEXT;
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = dst;
  p.value = value;
  p.elementSize = element;
  p.width = width;
  p.height = 1;
  p.pitch = width * element;  // one row: the pitch is its width
  return driver().GraphAddMemsetNode(out, graph, deps, count, &p, context);
}

}  // namespace anydev::cuda
