// Step 6 of 07_shuffle: the two warp reductions, shuffle-down and the xor
// butterfly, and who holds the total after each; their mirrors on the host.
#pragma once
#include <cuda_runtime.h>
#include "07_shuffle/steps/lane_emulator.cuh"

namespace shuffle {

// ---- The building blocks -------------------------------------------------------
// warpReduceDown: tree reduction with shuffle-down. Only LANE 0 ends with the
// total: lane l adds lane l + delta, and lanes whose source is past the
// warp's end add their own value (the shuffle returns it), so lanes 1..31
// hold partial, partly doubled sums. Use it when one lane writes the result.
template <class T>
__device__ __forceinline__ T warpReduceDown(T v) {
    for (int delta = 16; delta > 0; delta /= 2) v += __shfl_down_sync(kFullMask, v, delta);
    return v;
}

// warpReduceXor: the butterfly. EVERY lane ends with the total (the same
// number of shuffles): use it when every lane needs the result.
template <class T>
__device__ __forceinline__ T warpReduceXor(T v) {
    for (int mask = 16; mask > 0; mask /= 2) v += __shfl_xor_sync(kFullMask, v, mask);
    return v;
}

// ---- The kernel ----------------------------------------------------------------
// reduceDownVsXor: the seed's 31 - laneId through both warp reductions; every
// lane's result is written, to show who holds the total. What to look for:
// 496 in lane 0 only (down), in every lane (xor).
__global__ void reduceDownVsXor(int* down, int* xr) {
    const int lane = threadIdx.x % kWarp;
    down[lane] = warpReduceDown(31 - lane);
    xr[lane] = warpReduceXor(31 - lane);
}

// ---- On the host ---------------------------------------------------------------
// The emulator applied to the whole warp algorithms: warpReduceDown
// (Op::Down) and warpReduceXor (Op::Xor) on the host, lane by lane, as the
// GPU runs them: five steps, 16 lanes apart down to 1.
template <class T>
Warp<T> emulate_reduce(Op op, Warp<T> v) {
    for (int b = 16; b > 0; b /= 2) {
        const Shuffled<T> s = emulate(op, kFullMask, v, b, kWarp);
        for (int l = 0; l < kWarp; ++l) v[l] += s.value[l];
    }
    return v;
}
template <class T>
Warp<T> emulate_reduce_down(Warp<T> v) { return emulate_reduce(Op::Down, v); }
template <class T>
Warp<T> emulate_reduce_xor(Warp<T> v) { return emulate_reduce(Op::Xor, v); }

}  // namespace shuffle
