// Step 7 of 07_shuffle: inclusive and exclusive scan of a warp's 32 values
// with __shfl_up_sync (scan4 of step 2 over the whole warp).
#pragma once
#include <cstddef>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "07_shuffle/steps/lane_emulator.cuh"

namespace shuffle {

// The block size of the building blocks' kernels (steps 7 to 9).
constexpr int kBlock = 256;

// ---- The building blocks -------------------------------------------------------
// warpInclusiveScan: lane l gets v[0] + ... + v[l] (Hillis-Steele, 5 steps).
template <class T>
__device__ __forceinline__ T warpInclusiveScan(T v) {
    const int lane = threadIdx.x % kWarp;
    for (int delta = 1; delta < kWarp; delta *= 2) {
        const T n = __shfl_up_sync(kFullMask, v, delta);
        if (lane >= delta) v += n;
    }
    return v;
}

// warpExclusiveScan: lane l gets v[0] + ... + v[l-1], lane 0 gets 0. Shifting
// the inclusive scan up one lane, rather than subtracting v, keeps float
// results exactly the partial sums the inclusive scan formed.
template <class T>
__device__ __forceinline__ T warpExclusiveScan(T v) {
    const T inc = warpInclusiveScan(v);
    const T e = __shfl_up_sync(kFullMask, inc, 1);
    return threadIdx.x % kWarp == 0 ? T(0) : e;
}

// ---- The kernel ----------------------------------------------------------------
// warpScans: inclusive and exclusive scan of each warp's 32 elements. What to
// look for: no early return past the end of the array - all 32 lanes must
// reach every shuffle.
template <class T>
__global__ void warpScans(const T* in, T* inc, T* exc, size_t n) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const T v = i < n ? in[i] : T(0);  // no early return: all 32 lanes must shuffle
    const T a = warpInclusiveScan(v), b = warpExclusiveScan(v);
    if (i < n) { inc[i] = a; exc[i] = b; }
}

// ---- The launcher --------------------------------------------------------------
template <class T>
void launch_warpScans(const T* in, T* inc, T* exc, size_t n) {
    warpScans<T><<<unsigned(common::ceil_div(n, kBlock)), kBlock>>>(in, inc, exc, n);
    CHECK_LAUNCH();
}

}  // namespace shuffle
