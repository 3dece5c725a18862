// Step 7 of 04_reduction: the block's tree as straight-line code (the block
// size a template parameter), the last warp with __syncwarp(). Steps 7-10
// make the tree cheaper step by step; all load 8 elements per thread.
// Beside it, the pitfall it fixes: the seeds' volatile last warp.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/06_reduceSmemUnroll.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceCompleteUnroll<BlockSize> (seed 004): `BlockSize >= 1024 && ...` is
// decided at compile time and the loop becomes straight-line code. Below 64
// values one warp is left. The seeds finish it with `volatile` and no barrier
// ("a warp runs in lockstep"); since Volta the lanes of a warp are scheduled
// independently and that is a data race (reduceSmemVolatile below). Done
// right: __syncwarp() between each write and the read of it, and between
// each read and the next write over it.
// Look for: the same time as reduceSmemUnroll8: done right, it costs nothing.
template <class T, int BlockSize>
__global__ void __launch_bounds__(BlockSize)
reduceCompleteUnroll(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    static_assert(BlockSize >= 64 && BlockSize <= 1024 && (BlockSize & (BlockSize - 1)) == 0, "a power of 2 >= 64");
    static_assert(BlockSize == kBlock, "load_unrolled strides by kBlock");
    __shared__ T s[BlockSize];
    const unsigned tid = threadIdx.x;
    s[tid] = load_unrolled<8>(in, n, size_t(blockIdx.x) * BlockSize * 8, tid);
    __syncthreads();
    if (BlockSize >= 1024 && tid < 512) s[tid] += s[tid + 512];
    if (BlockSize >= 1024) __syncthreads();
    if (BlockSize >= 512 && tid < 256) s[tid] += s[tid + 256];
    if (BlockSize >= 512) __syncthreads();
    if (BlockSize >= 256 && tid < 128) s[tid] += s[tid + 128];
    if (BlockSize >= 256) __syncthreads();
    if (BlockSize >= 128 && tid < 64) s[tid] += s[tid + 64];
    if (BlockSize >= 128) __syncthreads();
    if (tid < 32) {
        T v = s[tid] + s[tid + 32];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) {
            __syncwarp();  // every lane has read s[] before it is overwritten
            s[tid] = v;
            __syncwarp();  // the writes are visible to the lanes that read them
            v += s[tid + offset];
        }
        if (tid == 0) partial[blockIdx.x] = v;
    }
}

// ---- The launcher ----------------------------------------------------------
template <class T>
std::string launch_reduceCompleteUnroll(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(8) * kBlock);
    reduceCompleteUnroll<T, kBlock><<<grid, kBlock>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

// ---- The pitfall: the seeds' volatile last warp --------------------------------
// reduceSmemVolatile (seed 003's reduceSharedMem, seed 000's reduceSmem, seed
// 004): the last warp through a `volatile` pointer with no __syncwarp().
// volatile only stops the compiler from keeping values in registers; it does
// not order one lane's write before another lane's read. Since Volta
// (independent thread scheduling) nothing guarantees the lanes run in
// lockstep: a data race, and undefined behaviour. compute-sanitizer racecheck
// reports it; the sum often still comes out right, which is why the idiom
// survived.
template <class T>
__global__ void __launch_bounds__(kBlock) reduceSmemVolatile(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T s[kBlock];
    const unsigned tid = threadIdx.x;
    s[tid] = load_unrolled<8>(in, n, size_t(blockIdx.x) * kBlock * 8, tid);
    __syncthreads();
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
    if (tid < 32) {
        volatile T* vs = s;
        vs[tid] += vs[tid + 32];
        vs[tid] += vs[tid + 16];
        vs[tid] += vs[tid + 8];
        vs[tid] += vs[tid + 4];
        vs[tid] += vs[tid + 2];
        vs[tid] += vs[tid + 1];
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

template <class T>
std::string launch_reduceSmemVolatile(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(8) * kBlock);
    reduceSmemVolatile<T><<<grid, kBlock>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

}  // namespace reduction
