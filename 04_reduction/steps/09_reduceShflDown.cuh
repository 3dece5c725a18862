// Step 9 of 04_reduction: shuffles all the way: every warp sums itself in
// registers, one value per warp goes through shared memory, one barrier.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/08_reduceLastWarpShfl.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceShflDown: block_sum (block_sum.cuh): each warp's warp_sum_down, one
// value per warp to shared memory, one barrier, warp 0 sums those.
// Look for: 1 barrier and 10 shuffle rounds (5 in each warp, then 5 in warp
// 0) for log2(128) = 7 levels, against the shared-memory tree's 7 levels and
// 8 barriers.
template <class T>
__global__ void __launch_bounds__(kBlock) reduceShflDown(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    const T v = block_sum<kBlock>(load_unrolled<8>(in, n, size_t(blockIdx.x) * kBlock * 8, threadIdx.x));
    if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

// ---- The launcher ----------------------------------------------------------
template <class T>
std::string launch_reduceShflDown(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(8) * kBlock);
    reduceShflDown<T><<<grid, kBlock>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

}  // namespace reduction
