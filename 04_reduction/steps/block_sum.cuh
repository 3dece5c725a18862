// Sums in registers, shared by every step of 04_reduction: a warp's sum with
// shuffles (two ways) and a block's sum built from them. reduceFinal (the
// second kernel of the two-pass steps) uses block_sum from step 1 on; steps
// 8-10 show the same pieces one at a time.
#pragma once
#include <cuda_runtime.h>

namespace reduction {

constexpr unsigned kFullMask = 0xffffffffu;  // all 32 lanes: never 0xffff (a seed's pitfall)

// Tree sum of a warp with __shfl_down_sync: after the loop lane 0 holds the
// warp's sum (the other lanes hold partial sums nobody reads). Registers only:
// no shared memory, no barrier, and no race, because a shuffle is one
// instruction that all 32 lanes execute together.
template <class T>
__device__ __forceinline__ T warp_sum_down(T v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// The butterfly: __shfl_xor_sync pairs lane i with lane i ^ mask, so after the
// loop EVERY lane holds the warp's sum (useful when all lanes need it).
template <class T>
__device__ __forceinline__ T warp_sum_xor(T v) {
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(kFullMask, v, mask);
    return v;
}

// Block sum: each warp sums itself, lane 0 of each warp leaves its sum in
// shared memory, one barrier, then warp 0 sums those. The result is valid in
// thread 0. Two calls in one kernel need a __syncthreads() between them
// (warp_sums is reused).
template <int kThreads, class T>
__device__ __forceinline__ T block_sum(T v) {
    static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32");
    __shared__ T warp_sums[kThreads / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum_down(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kThreads / 32 ? warp_sums[lane] : T(0);
        v = warp_sum_down(v);
    }
    return v;
}

}  // namespace reduction
