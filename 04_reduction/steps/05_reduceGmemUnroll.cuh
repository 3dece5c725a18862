// Step 5 of 04_reduction: unrolling. Each thread first adds U elements that
// are kBlock apart (coalesced: a warp reads U contiguous 128-byte lines), so a
// block covers U * kBlock elements, the grid is U times smaller, and U
// independent loads are in flight per thread before the first add. Rows
// reduceGmemUnroll4 and reduceGmemUnroll8; the tree is still step 2's, in
// place in global memory.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/04_reduceSmemDyn.cuh"

namespace reduction {

// The sum of this thread's U elements base + tid + k * kBlock (those < n).
template <int U, class T>
__device__ __forceinline__ T load_unrolled(const T* __restrict__ in, size_t n, size_t base, unsigned tid) {
    T v[U];
    if (base + size_t(U) * kBlock <= n) {  // a full chunk (every block but maybe the last): no checks
#pragma unroll
        for (int k = 0; k < U; ++k) v[k] = in[base + tid + k * kBlock];
    } else {
#pragma unroll
        for (int k = 0; k < U; ++k) v[k] = base + tid + k * kBlock < n ? in[base + tid + k * kBlock] : T(0);
    }
    T sum = v[0];
#pragma unroll
    for (int k = 1; k < U; ++k) sum += v[k];
    return sum;
}

// ---- The kernel ------------------------------------------------------------
// reduceGmemUnroll<4> / <8> (seed 003's reduceGlobalMemUnroll8): the unrolled
// sums land in global memory (in place), then reduceGmem's tree.
// Look for: the tree's traffic is now over 1/U of the data, and U loads per
// thread are in flight: the time drops sharply.
template <int U, class T>
__global__ void __launch_bounds__(kBlock) reduceGmemUnroll(const T* in, T* x, size_t n, T* partial) {
    const unsigned tid = threadIdx.x;
    const size_t base = size_t(blockIdx.x) * kBlock * U;
    const T v = load_unrolled<U>(in, n, base, tid);
    T* bx = x + base;
    const size_t m = n - base < kBlock ? n - base : kBlock;
    if (tid < m) bx[tid] = v;  // positions past n do not exist: never write them
    __syncthreads();
    for (unsigned offset = kBlock / 2; offset > 0; offset /= 2) {
        if (tid < offset && tid + offset < m) bx[tid] += bx[tid + offset];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = bx[0];
}

// ---- The launcher ----------------------------------------------------------
template <int U, class T>
std::string launch_reduceGmemUnroll(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(U) * kBlock);
    reduceGmemUnroll<U, T><<<grid, kBlock>>>(in, ws.work, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

}  // namespace reduction
