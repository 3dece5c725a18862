// Step 4 of 04_reduction: step 3 with dynamic shared memory, sized at launch.
// Beside it, the pitfall that breaks it: seed 004's global thread id in the
// block's conditions.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/03_reduceSmem.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceSmemDyn: the same tree in dynamic shared memory of blockDim.x
// elements (the third <<<>>> argument). `extern __shared__` arrays of
// different types would clash between the int/float/double instances, hence
// the raw byte array.
// Look for: the same time as reduceSmem: where the size comes from does not
// change the hardware.
template <class T>
__global__ void reduceSmemDyn(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* s = reinterpret_cast<T*>(smem_raw);
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    s[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned offset = blockDim.x / 2; offset > 0; offset /= 2) {
        if (tid < offset) s[tid] += s[tid + offset];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

// ---- The launcher ----------------------------------------------------------
// The dynamic shared memory it asks for: one T per thread.
template <class T>
constexpr size_t dynamic_smem_bytes() { return kBlock * sizeof(T); }

template <class T>
std::string launch_reduceSmemDyn(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(kBlock)), smem = dynamic_smem_bytes<T>();
    reduceSmemDyn<T><<<grid, kBlock, smem>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock, smem) + launch_final(grid, ws);
}

// ---- The pitfall: the global thread id in block-local conditions ------------
// reduceGlobalTid (seed 004, example 1): a grid-stride loop into dynamic
// shared memory, but the tree's conditions test the GLOBAL thread id
// (`tid < 64` with tid = threadIdx.x + blockIdx.x * blockDim.x). Only block 0
// has such threads; every other block skips its whole tree and reports just
// its thread 0's value. Right with one block, wrong as soon as a block other
// than block 0 holds two or more elements.
template <class T>
__global__ void reduceGlobalTid(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* cache = reinterpret_cast<T*>(smem_raw);
    const size_t tid = threadIdx.x + size_t(blockIdx.x) * blockDim.x;  // the seed's global id
    T t = 0;
    for (size_t i = tid; i < n; i += size_t(gridDim.x) * blockDim.x) t += in[i];
    cache[threadIdx.x] = t;
    __syncthreads();
    for (unsigned offset = blockDim.x / 2; offset > 0; offset /= 2) {
        if (tid < offset) cache[threadIdx.x] += cache[threadIdx.x + offset];  // the bug: tid, not threadIdx.x
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = cache[0];
}

template <class T>
std::string launch_reduceGlobalTid(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(kBlock)), smem = dynamic_smem_bytes<T>();
    reduceGlobalTid<T><<<grid, kBlock, smem>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock, smem) + launch_final(grid, ws);
}

}  // namespace reduction
