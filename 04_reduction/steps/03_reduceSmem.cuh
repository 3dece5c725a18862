// Step 3 of 04_reduction: step 2's tree in shared memory. Global memory is
// read once and written once per block, and the input is left untouched.
// Beside it, the pitfall that breaks it: seed 003's early return.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/02_reduceGmem.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceSmem: a static array of kBlock elements (seed 002's
// reduce_shared_memory, seed 000's reduceSmem). Threads past the end load 0,
// the identity of +, so the tree needs no bounds checks.
// Look for: ncu global load sectors = n * sizeof(T) / 32 and one store per
// block (compare reduceGmem's).
template <class T>
__global__ void __launch_bounds__(kBlock) reduceSmem(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T s[kBlock];
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * kBlock + tid;
    s[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned offset = kBlock / 2; offset > 0; offset /= 2) {
        if (tid < offset) s[tid] += s[tid + offset];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

// ---- The launcher ----------------------------------------------------------
template <class T>
std::string launch_reduceSmem(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(kBlock));
    reduceSmem<T><<<grid, kBlock>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

// ---- The pitfall: returning before the barriers ------------------------------
// reduceSmemEarlyReturn (seed 003's reduceSharedMem): `if (idx >= n) return;`
// before the barriers. In the last, partial block the returned threads never
// write their s[tid], yet the tree still reads those slots: it adds whatever
// an earlier block left in that shared memory. Wrong whenever n is not a
// multiple of the block (a test catches it at n = 129); and a __syncthreads()
// that not every thread of the block reaches is itself undefined.
template <class T>
__global__ void __launch_bounds__(kBlock) reduceSmemEarlyReturn(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T s[kBlock];
    const unsigned tid = threadIdx.x;
    const size_t idx = size_t(blockIdx.x) * kBlock + tid;
    if (idx >= n) return;  // the seed's bug
    s[tid] = in[idx];
    __syncthreads();
    for (unsigned offset = kBlock / 2; offset > 0; offset /= 2) {
        if (tid < offset) s[tid] += s[tid + offset];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

template <class T>
std::string launch_reduceSmemEarlyReturn(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(kBlock));
    reduceSmemEarlyReturn<T><<<grid, kBlock>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

// scribbleShared: fills shared memory with a non-zero pattern. Shared memory
// is not cleared between blocks or kernels, so the early-return pitfall reads
// whatever the previous block left; on a fresh context that may be zeros and
// the bug hides. Same array as the pitfall (T[kBlock], 128 threads), so the
// same shared-memory configuration and the same addresses on each SM.
template <class T>
__global__ void __launch_bounds__(kBlock) scribbleShared() {
    __shared__ T junk[kBlock];
    junk[threadIdx.x] = T(37 + threadIdx.x);
    __syncthreads();
    if (junk[(threadIdx.x + 1) % kBlock] == T(-1)) junk[threadIdx.x] = T(0);  // keep the stores
}
template <class T>
void scribble_shared() {
    scribbleShared<T><<<common::sm_count() * 64, kBlock>>>();  // several waves: every block slot of every SM
    CHECK_LAUNCH();
    // No wait here: launch the pitfall right after, in the same stream. A host wait
    // between the two lets another process's kernels onto the SMs (a shared GPU,
    // a desktop's compositor), and they leave their own data, zeros included.
}

}  // namespace reduction
