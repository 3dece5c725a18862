// Step 9 of 07_shuffle: a block scan from warp scans (one shared-memory slot
// per warp), inclusive and exclusive in one pass.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "07_shuffle/steps/lane_emulator.cuh"
#include "07_shuffle/steps/07_warpScans.cuh"

namespace shuffle {

// ---- The building block --------------------------------------------------------
// blockScan: warp scans, then warp 0 scans the warp totals (exclusive), then
// every thread adds its warp's offset. Both scans in one pass.
template <class T, int BLOCK>
__device__ void blockScan(T v, T& inclusive, T& exclusive) {
    static_assert(BLOCK % kWarp == 0 && BLOCK <= 1024, "BLOCK: a multiple of 32, at most 1024");
    constexpr int W = BLOCK / kWarp;
    __shared__ T warp_offset[W];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const T inc = warpInclusiveScan(v);
    T exc = __shfl_up_sync(kFullMask, inc, 1);
    if (lane == 0) exc = T(0);
    if (lane == kWarp - 1) warp_offset[warp] = inc;  // the warp's total
    __syncthreads();
    if (warp == 0) {
        const T total = lane < W ? warp_offset[lane] : T(0);
        const T off = warpExclusiveScan(total);
        if (lane < W) warp_offset[lane] = off;  // each thread rewrites only the slot it read
    }
    __syncthreads();
    inclusive = inc + warp_offset[warp];
    exclusive = exc + warp_offset[warp];
}

// ---- The kernel ----------------------------------------------------------------
// scanTiles: each block scans its own tile of kBlock elements (a block scan;
// chaining tiles into a whole-array scan is cub::DeviceScan's job).
template <class T>
__global__ void __launch_bounds__(kBlock) scanTiles(const T* __restrict__ in, T* __restrict__ inc, T* __restrict__ exc,
                                                    size_t n) {
    const size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x;
    T a, b;
    blockScan<T, kBlock>(i < n ? in[i] : T(0), a, b);
    if (i < n) { inc[i] = a; exc[i] = b; }
}

// ---- The launcher --------------------------------------------------------------
template <class T>
void launch_scanTiles(const T* in, T* inc, T* exc, size_t n) {
    scanTiles<T><<<unsigned(common::ceil_div(n, kBlock)), kBlock>>>(in, inc, exc, n);
    CHECK_LAUNCH();
}

}  // namespace shuffle
