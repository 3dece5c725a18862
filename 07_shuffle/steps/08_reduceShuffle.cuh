// Step 8 of 07_shuffle: a block reduction from warp reductions (one shared-
// memory slot per warp), and a deterministic sum of any n in two passes.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "07_shuffle/steps/lane_emulator.cuh"
#include "07_shuffle/steps/06_reduceDownVsXor.cuh"
#include "07_shuffle/steps/07_warpScans.cuh"

namespace shuffle {

// ---- The building block --------------------------------------------------------
// blockReduce: every warp reduces with shuffles, lane 0 of each parks its sum
// in shared memory, and warp 0 reduces those. Thread 0 returns the block's
// total. BLOCK must be a multiple of 32 (every shuffle names the full warp);
// a caller reusing it must __syncthreads() between calls.
template <class T, int BLOCK>
__device__ T blockReduce(T v) {
    static_assert(BLOCK % kWarp == 0 && BLOCK <= 1024, "BLOCK: a multiple of 32, at most 1024");
    constexpr int W = BLOCK / kWarp;
    __shared__ T warp_sums[W];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warpReduceDown(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) v = warpReduceDown(lane < W ? warp_sums[lane] : T(0));
    return v;
}

// ---- The kernel ----------------------------------------------------------------
// reduceShuffle: a grid-stride sum per thread, then blockReduce; block b
// writes partial[b]. Run twice (the second time with one block over the
// partials) it gives the sum of any n with a fixed order: deterministic.
template <class T>
__global__ void __launch_bounds__(kBlock) reduceShuffle(const T* __restrict__ in, T* __restrict__ partial, size_t n) {
    T s = T(0);
    for (size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += size_t(gridDim.x) * kBlock) s += in[i];
    s = blockReduce<T, kBlock>(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// ---- The launcher --------------------------------------------------------------
// Sum of in[0..n) into *out (device), through `partial` (>= kReduceBlocks).
constexpr int kReduceBlocks = 1024;
template <class T>
void launch_reduceShuffle(const T* in, size_t n, T* partial, T* out) {
    const int blocks = int(std::min<size_t>(kReduceBlocks, common::ceil_div(n, kBlock)));
    reduceShuffle<T><<<blocks > 0 ? blocks : 1, kBlock>>>(in, partial, n);
    CHECK_LAUNCH();
    reduceShuffle<T><<<1, kBlock>>>(partial, out, size_t(blocks > 0 ? blocks : 1));
    CHECK_LAUNCH();
}

}  // namespace shuffle
