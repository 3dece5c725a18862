// reduction.cuh - sum an array on the GPU, from the seeds' first kernel to one
// that beats cub::DeviceReduce::Sum.
//
// A sum reads every input element once and writes one number, so it is bound
// by memory bandwidth: the least it can move is n * sizeof(T) bytes (the
// output is negligible), and every GB/s figure in this chapter counts exactly
// that. The work is in how the n values are combined: in place in global
// memory, in shared memory, in registers across a warp (shuffles), and how
// the per-block partial sums become one (a second kernel, atomics, or the
// last block to finish).
//
// Every kernel below is correct for any n >= 1 and for T = int, float and
// double (the seeds' `real`). Kernels are in teaching order; the host side
// (launch wrappers, the kernel list, the CPU references) is at the end.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"

namespace reduction {

// The seeds' thread block for the block-per-chunk kernels (seed 000 launches
// <<<n / 128, 128>>>). The grid-stride kernels use kStrideThreads.
constexpr int kBlock = 128;
constexpr int kStrideThreads = 256;
constexpr int kFinalThreads = 1024;
constexpr unsigned kFullMask = 0xffffffffu;  // all 32 lanes: never 0xffff (seed pitfall)

// ---------------------------------------------------------------------------
// Building blocks: warp and block sums in registers.
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// The toy (seed 002): 8 numbers, one block of 4 threads, in place. Each step
// adds the upper half onto the lower half: 1..8 -> 6 8 10 12 -> 16 20 -> 36.
// `history` receives the array after every step (8 values per step).
// ---------------------------------------------------------------------------
template <class T>
__global__ void reduceToy(T* x, int n, T* history) {
    const int tid = threadIdx.x;
    int step = 0;
    for (int offset = n / 2; offset > 0; offset /= 2) {
        if (tid < offset) x[tid] += x[tid + offset];
        __syncthreads();
        if (tid == 0)
            for (int i = 0; i < n; ++i) history[step * n + i] = x[i];
        ++step;
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------
// 1. In place in global memory: each block sums its own kBlock elements and
//    writes one partial sum; a second kernel (reduceFinal) adds the partials.
// ---------------------------------------------------------------------------

// reduceNeighbored: neighbouring pairs, stride 1, 2, 4, ...: thread t adds
// x[t + s] into x[t] when t is a multiple of 2s. Correct, and the slowest
// way: after the first step only every other thread of a warp works, then
// every 4th..., so warps stay busy to do a fraction of the adds, and every
// step reads and writes global memory (through L1/L2). Look at its time and
// at the ncu load/store sectors (make profile): many times the n * 4 bytes.
// `x` is a scratch copy of the input (the program restores it before every run).
template <class T>
__global__ void reduceNeighbored(T* x, size_t n, T* partial) {
    const unsigned tid = threadIdx.x;
    const size_t base = size_t(blockIdx.x) * blockDim.x;
    T* bx = x + base;
    // Elements of this block that exist: the last block may be partial, and
    // any read past them would be out of bounds.
    const size_t m = n - base < blockDim.x ? n - base : blockDim.x;
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0 && tid + s < m) bx[tid] += bx[tid + s];
        __syncthreads();  // every thread reaches it: only the work is guarded
    }
    if (tid == 0) partial[blockIdx.x] = bx[0];
}

// reduceGmem: the seeds' order (seed 002's reduce_global, seed 000's
// reduceGmem): halve the active range each step, thread t adds x[t + offset]
// into x[t]. The working threads are now the first `offset` ones, so whole
// warps finish early instead of every warp idling lane by lane, and a warp's
// accesses are contiguous. Still in place in global memory.
template <class T>
__global__ void reduceGmem(T* x, size_t n, T* partial) {
    const unsigned tid = threadIdx.x;
    const size_t base = size_t(blockIdx.x) * blockDim.x;
    T* bx = x + base;
    const size_t m = n - base < blockDim.x ? n - base : blockDim.x;
    for (unsigned offset = blockDim.x / 2; offset > 0; offset /= 2) {
        if (tid < offset && tid + offset < m) bx[tid] += bx[tid + offset];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = bx[0];
}

// ---------------------------------------------------------------------------
// 2. The same tree in shared memory: global memory is read once and written
//    once per block, and the input is left untouched.
// ---------------------------------------------------------------------------

// reduceSmem: a static array of kBlock elements (seed 002 reduce_shared_memory,
// seed 000 reduceSmem). Threads past the end load 0, the identity of +, so the
// tree needs no bounds checks. ncu: global load sectors = n * sizeof(T) / 32,
// one store per block (compare reduceGmem's).
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

// reduceSmemDyn: the same with dynamic shared memory, sized at launch (third
// <<<>>> argument) to blockDim.x elements. `extern __shared__` arrays of
// different types would clash between the int/float/double instances, hence
// the raw byte array. Same time as reduceSmem: where the size comes from does
// not change the hardware.
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

// ---------------------------------------------------------------------------
// 3. Unrolling: each thread first adds U elements that are kBlock apart
//    (coalesced: a warp reads U contiguous 128-byte lines), so a block covers
//    U * kBlock elements, the grid is U times smaller, and U independent loads
//    are in flight per thread before the first add.
// ---------------------------------------------------------------------------

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

// reduceGmemUnroll4 / reduceGmemUnroll8 (seed 003 reduceGlobalMemUnroll8):
// the unrolled adds land in global memory (in place), then reduceGmem's tree.
// The tree's traffic is now over 1/U of the data, so the time drops sharply.
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

// reduceSmemUnroll4 (seed 000's reduceSmemUnroll) / reduceSmemUnroll8 (seed
// 003 reduceSharedMemUnroll8): the unrolled sum goes to shared memory.
// ncu: the same load sectors as reduceSmem, 1/U of its stores.
template <int U, class T>
__global__ void __launch_bounds__(kBlock) reduceSmemUnroll(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T s[kBlock];
    const unsigned tid = threadIdx.x;
    s[tid] = load_unrolled<U>(in, n, size_t(blockIdx.x) * kBlock * U, tid);
    __syncthreads();
    for (unsigned offset = kBlock / 2; offset > 0; offset /= 2) {
        if (tid < offset) s[tid] += s[tid + offset];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

// ---------------------------------------------------------------------------
// 4. The block's tree, made cheaper step by step (all load 8 per thread).
// ---------------------------------------------------------------------------

// reduceCompleteUnroll<BlockSize>: the block size is a template parameter
// (seed 004), so `BlockSize >= 1024 && ...` is decided at compile time and
// the loop becomes straight-line code. Below 64 values one warp is left. The
// seeds finish it with `volatile` and no barrier ("a warp runs in lockstep");
// since Volta the lanes of a warp are scheduled independently and that is a
// data race (see reduceSmemVolatile, a pitfall). Done right: __syncwarp()
// between each write and the read of it, and between each read and the next
// write over it.
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

// reduceLastWarpShfl: the same tree down to 64 values, then the last warp in
// registers with __shfl_down_sync: no shared memory traffic, no __syncwarp().
template <class T>
__global__ void __launch_bounds__(kBlock) reduceLastWarpShfl(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T s[kBlock];
    const unsigned tid = threadIdx.x;
    s[tid] = load_unrolled<8>(in, n, size_t(blockIdx.x) * kBlock * 8, tid);
    __syncthreads();
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
    if (tid < 32) {
        const T v = warp_sum_down(s[tid] + s[tid + 32]);
        if (tid == 0) partial[blockIdx.x] = v;
    }
}

// reduceShflDown: shuffles all the way. Every warp sums its own 32 values in
// registers, one value per warp goes through shared memory, one barrier,
// and warp 0 sums those (block_sum above). log2(128) = 7 steps, 1 barrier,
// against the shared-memory tree's 7 steps and 7 barriers.
template <class T>
__global__ void __launch_bounds__(kBlock) reduceShflDown(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    const T v = block_sum<kBlock>(load_unrolled<8>(in, n, size_t(blockIdx.x) * kBlock * 8, threadIdx.x));
    if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

// reduceShflXor: the same with the butterfly. Same instruction count and the
// same time; the difference is that every lane ends with the sum.
template <class T>
__global__ void __launch_bounds__(kBlock) reduceShflXor(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T warp_sums[kBlock / 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T v = warp_sum_xor(load_unrolled<8>(in, n, size_t(blockIdx.x) * kBlock * 8, threadIdx.x));
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum_xor(lane < kBlock / 32 ? warp_sums[lane] : T(0));
        if (lane == 0) partial[blockIdx.x] = v;
    }
}

// reduceFinal: the second kernel of every kernel above: one block of 1024
// threads adds the m partial sums. With one partial per 128 (or 1024)
// elements this is a real cost at large n (see the README's "where the final
// sum happens").
template <class T>
__global__ void __launch_bounds__(kFinalThreads) reduceFinal(const T* __restrict__ partial, size_t m, T* __restrict__ out) {
    T v = 0;
    for (size_t i = threadIdx.x; i < m; i += kFinalThreads) v += partial[i];
    v = block_sum<kFinalThreads>(v);
    if (threadIdx.x == 0) *out = v;
}

// ---------------------------------------------------------------------------
// 5. A grid that fits the GPU: as many blocks as can be resident at once,
//    each thread looping over the array with the grid's stride (seed 004).
//    No block waits for a free SM, and there are few partial sums.
// ---------------------------------------------------------------------------

// reduceGridStrideAtomic: one atomicAdd per block straight into the result,
// so no second kernel; the result must be zeroed first (a cudaMemsetAsync,
// counted in the time). Floating-point atomics land in whatever order the
// blocks finish: the float sum is not bit-identical from run to run (the
// README's determinism column shows it).
template <class T>
__global__ void __launch_bounds__(kStrideThreads) reduceGridStrideAtomic(const T* __restrict__ in, size_t n, T* out) {
    T v = 0;
    for (size_t i = size_t(blockIdx.x) * kStrideThreads + threadIdx.x; i < n; i += size_t(gridDim.x) * kStrideThreads)
        v += in[i];
    v = block_sum<kStrideThreads>(v);
    if (threadIdx.x == 0) atomicAdd(out, v);
}

// The last block to finish sums the partials (CUDA's threadFenceReduction).
// Thread 0 of each block stores its partial, then __threadfence() makes that
// store visible to the whole GPU BEFORE the atomic takes a ticket: without
// the fence the last block could take the last ticket and still read a stale
// partial (the ordering seed 000 and 004 describe). The last block fences
// again after its ticket (the acquire side), reads the partials from L2
// (__ldcg: never a stale L1 line), and resets the counter for the next launch.
// A grid of one block (small n) skips all of that: its sum is the result.
template <int kThreads, class T>
__device__ __forceinline__ void last_block_finishes(T block_total, T* partial, unsigned* ticket, T* out) {
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *out = block_total;
        return;
    }
    __shared__ bool am_last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = block_total;
        __threadfence();
        am_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        if (am_last) __threadfence();
    }
    __syncthreads();  // also separates the two uses of block_sum's shared array
    if (!am_last) return;
    T v = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) v += __ldcg(&partial[b]);
    v = block_sum<kThreads>(v);
    if (threadIdx.x == 0) {
        *out = v;
        *ticket = 0;  // the kernel leaves the counter as it found it
    }
}

// reduceSinglePass: grid-stride accumulation, block sum, last block adds the
// partials. One launch, no memset, and the same order every run (bit-identical
// float results).
template <class T>
__global__ void __launch_bounds__(kStrideThreads)
reduceSinglePass(const T* __restrict__ in, size_t n, T* partial, unsigned* ticket, T* out) {
    T v = 0;
    for (size_t i = size_t(blockIdx.x) * kStrideThreads + threadIdx.x; i < n; i += size_t(gridDim.x) * kStrideThreads)
        v += in[i];
    v = block_sum<kStrideThreads>(v);
    last_block_finishes<kStrideThreads>(v, partial, ticket, out);
}

// ---------------------------------------------------------------------------
// 6. The fastest: reduceSinglePass with 16-byte loads and more bytes in flight.
// ---------------------------------------------------------------------------

// 16 bytes of T, loaded in one instruction (LDG.E.128 in SASS).
template <class T> struct Vec16;
template <> struct Vec16<int> { using type = int4; };
template <> struct Vec16<float> { using type = float4; };
template <> struct Vec16<double> { using type = double2; };
__device__ __forceinline__ int hsum(int4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ float hsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ double hsum(double2 v) { return v.x + v.y; }

// How the block sums become the result; reduceVec4 can do all three, which
// is how the README measures what each costs.
enum class Finish { Partials, Atomic, LastBlock };

constexpr int kVecThreads = 512;
constexpr int kVecUnroll = 4;

// reduceVec4: each thread keeps kVecUnroll independent 16-byte loads in flight
// per loop trip (with 2048 threads per SM that is 128 KiB requested per SM,
// several times what HBM needs to stay busy), sums them into separate
// accumulators, and the grid is exactly what fits on the GPU at once. The
// loads are __ldcs (streaming: the data is read once, do not keep it).
// A misaligned start (a pointer into the middle of an array) is handled: the
// head before the first 16-byte boundary and the tail after the last whole
// vector are added by single loads.
template <class T, Finish F = Finish::LastBlock>
__global__ void __launch_bounds__(kVecThreads)
reduceVec4(const T* __restrict__ in, size_t n, T* partial, unsigned* ticket, T* out) {
    using V = typename Vec16<T>::type;
    constexpr int W = 16 / sizeof(T);  // elements per vector
    const size_t misalign = reinterpret_cast<uintptr_t>(in) % 16 / sizeof(T);
    const size_t head = misalign ? (W - misalign < n ? W - misalign : n) : 0;
    const size_t nv = (n - head) / W;  // whole vectors
    const size_t tail = head + nv * W; // first element after them
    const V* body = reinterpret_cast<const V*>(in + head);

    const size_t stride = size_t(gridDim.x) * kVecThreads;
    const size_t g = size_t(blockIdx.x) * kVecThreads + threadIdx.x;
    T acc[kVecUnroll];
#pragma unroll
    for (int u = 0; u < kVecUnroll; ++u) acc[u] = T(0);
    size_t i = g;
    for (; i + (kVecUnroll - 1) * stride < nv; i += kVecUnroll * stride) {
        V v[kVecUnroll];
#pragma unroll
        for (int u = 0; u < kVecUnroll; ++u) v[u] = __ldcs(body + i + u * stride);  // all loads first
#pragma unroll
        for (int u = 0; u < kVecUnroll; ++u) acc[u] += hsum(v[u]);
    }
    for (; i < nv; i += stride) acc[0] += hsum(__ldcs(body + i));
    if (g < head) acc[1 % kVecUnroll] += in[g];
    if (g < n - tail) acc[2 % kVecUnroll] += in[tail + g];
    T v = acc[0];
#pragma unroll
    for (int u = 1; u < kVecUnroll; ++u) v += acc[u];
    v = block_sum<kVecThreads>(v);
    if constexpr (F == Finish::Partials) {
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    } else if constexpr (F == Finish::Atomic) {
        if (threadIdx.x == 0) atomicAdd(out, v);
    } else {
        last_block_finishes<kVecThreads>(v, partial, ticket, out);
    }
}

// ---------------------------------------------------------------------------
// Pitfalls: the seeds' bugs, kept to show how they fail. Never in the default
// run (`./reduction --pitfalls`); see the README and tests/test_04_reduction.cu.
// ---------------------------------------------------------------------------

// reduceSmemVolatile (seed 003 reduceSharedMem, seed 000 reduceSmem, seed 004):
// the last warp through a `volatile` pointer with no __syncwarp(). volatile
// only stops the compiler from keeping values in registers; it does not order
// one lane's write before another lane's read. Since Volta (independent thread
// scheduling) nothing guarantees the lanes run in lockstep: a data race, and
// undefined behaviour. compute-sanitizer racecheck reports it; on the H200 the
// sum usually still comes out right, which is why the idiom survived.
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

// reduceSmemEarlyReturn (seed 003 reduceSharedMem): `if (idx >= n) return;`
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

// reduceGlobalTid (seed 004, example 1): a grid-stride loop into dynamic
// shared memory, but the tree's conditions test the GLOBAL thread id
// (`tid < 64` with tid = threadIdx.x + blockIdx.x * blockDim.x). Only block 0
// has such threads; every other block skips its whole tree and reports just
// its thread 0's value. Right with one block, wrong with two or more.
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
    int sms = 0, dev = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    scribbleShared<T><<<sms * 64, kBlock>>>();  // several waves: every block slot of every SM
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
}

// An empty kernel: what a launch costs with nothing in it (the --final table).
__global__ void emptyKernel() {}

// ---------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------

inline size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Device buffers one reduction needs, sized for n elements.
template <class T>
struct Workspace {
    size_t n = 0;
    T* work = nullptr;         // scratch copy of the input for the in-place kernels
    T* partial = nullptr;      // one per block
    unsigned* ticket = nullptr;// the last-block counter, zero between launches
    T* out = nullptr;          // the result
    size_t max_partials = 0;
    explicit Workspace(size_t n_) : n(n_) {
        max_partials = ceil_div(n, kBlock) + 1;
        CHECK(cudaMalloc(&work, n * sizeof(T)));
        CHECK(cudaMalloc(&partial, max_partials * sizeof(T)));
        CHECK(cudaMalloc(&ticket, sizeof(unsigned)));
        CHECK(cudaMalloc(&out, sizeof(T)));
        CHECK(cudaMemset(ticket, 0, sizeof(unsigned)));
    }
    ~Workspace() { cudaFree(work); cudaFree(partial); cudaFree(ticket); cudaFree(out); }
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;
    // Bytes of device memory a Workspace for n elements of T takes.
    static size_t bytes(size_t n) { return n * sizeof(T) + (ceil_div(n, kBlock) + 1) * sizeof(T) + 64; }
};

// Launches the whole reduction of in[0..n) into ws.out on the default stream
// and returns the launch configuration. In-place kernels reduce ws.work,
// which the caller must have filled with the input (restore_work).
template <class T>
using LaunchFn = std::string (*)(const T* in, size_t n, Workspace<T>& ws);

template <class T>
struct Kernel {
    const char* name;
    bool in_place;     // destroys ws.work: restore it before each run
    LaunchFn<T> launch;
    const char* what;
};

template <class T>
void restore_work(const T* in, size_t n, Workspace<T>& ws) {
    CHECK(cudaMemcpyAsync(ws.work, in, n * sizeof(T), cudaMemcpyDeviceToDevice));
}

inline std::string grid_string(size_t grid, int block) {
    return std::to_string(grid) + "x" + std::to_string(block);
}

// The second stage of the block-per-chunk kernels: one block sums `m` partials.
template <class T>
std::string launch_final(size_t m, Workspace<T>& ws) {
    reduceFinal<T><<<1, kFinalThreads>>>(ws.partial, m, ws.out);
    CHECK_LAUNCH();
    return " + 1x" + std::to_string(kFinalThreads);
}

// Block-per-chunk kernels: grid = n / (U * kBlock) blocks, then reduceFinal.
enum class Form { InPlace, InPlaceUnroll, Input, Dynamic };
template <class T, int U, Form form, auto K>
std::string launch_chunks(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = ceil_div(n, size_t(U) * kBlock);
    if constexpr (form == Form::InPlace) K<<<grid, kBlock>>>(ws.work, n, ws.partial);
    else if constexpr (form == Form::InPlaceUnroll) K<<<grid, kBlock>>>(in, ws.work, n, ws.partial);
    else if constexpr (form == Form::Input) K<<<grid, kBlock>>>(in, n, ws.partial);
    else K<<<grid, kBlock, kBlock * sizeof(T)>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return grid_string(grid, kBlock) + launch_final(grid, ws);
}

// Blocks of `threads` that fit on the GPU at once (occupancy x SMs), or fewer
// when n is small: at least `per_thread` elements per thread.
template <class KernelPtr>
size_t resident_grid(KernelPtr kernel, int threads, size_t n, size_t per_thread) {
    int dev = 0, sms = 0, per_sm = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    const size_t want = ceil_div(n, size_t(threads) * per_thread);
    const size_t most = size_t(sms) * size_t(per_sm > 0 ? per_sm : 1);
    return want < 1 ? 1 : want < most ? want : most;
}

template <class T>
std::string launch_grid_stride_atomic(const T* in, size_t n, Workspace<T>& ws) {
    static const size_t most = resident_grid(reduceGridStrideAtomic<T>, kStrideThreads, SIZE_MAX / 2, 1);
    const size_t grid = std::min(most, ceil_div(n, size_t(kStrideThreads) * 4));
    CHECK(cudaMemsetAsync(ws.out, 0, sizeof(T)));  // part of the operation, timed with it
    reduceGridStrideAtomic<T><<<grid, kStrideThreads>>>(in, n, ws.out);
    CHECK_LAUNCH();
    return "memset + " + grid_string(grid, kStrideThreads);
}

template <class T>
std::string launch_single_pass(const T* in, size_t n, Workspace<T>& ws) {
    static const size_t most = resident_grid(reduceSinglePass<T>, kStrideThreads, SIZE_MAX / 2, 1);
    const size_t grid = std::min(most, ceil_div(n, size_t(kStrideThreads) * 4));
    reduceSinglePass<T><<<grid, kStrideThreads>>>(in, n, ws.partial, ws.ticket, ws.out);
    CHECK_LAUNCH();
    return grid_string(grid, kStrideThreads);
}

// reduceVec4's grid: resident blocks, but no more than give each thread one
// full trip of kVecUnroll vectors.
template <class T, Finish F>
size_t vec4_grid(size_t n) {
    static const size_t most = resident_grid(reduceVec4<T, F>, kVecThreads, SIZE_MAX / 2, 1);
    const size_t want = ceil_div(n, size_t(kVecThreads) * kVecUnroll * (16 / sizeof(T)));
    return std::min(most, want);
}

template <class T, Finish F = Finish::LastBlock>
std::string launch_vec4(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = vec4_grid<T, F>(n);
    std::string s;
    if constexpr (F == Finish::Atomic) {
        CHECK(cudaMemsetAsync(ws.out, 0, sizeof(T)));
        s = "memset + ";
    }
    reduceVec4<T, F><<<grid, kVecThreads>>>(in, n, ws.partial, ws.ticket, ws.out);
    CHECK_LAUNCH();
    s += grid_string(grid, kVecThreads);
    if constexpr (F == Finish::Partials) s += launch_final(grid, ws);
    return s;
}

// Every kernel of the chapter, in teaching order.
template <class T>
const std::vector<Kernel<T>>& kernels() {
    static const std::vector<Kernel<T>> k = {
        {"reduceNeighbored", true, launch_chunks<T, 1, Form::InPlace, reduceNeighbored<T>>,
         "global memory in place, neighbouring pairs (stride 1, 2, 4..)"},
        {"reduceGmem", true, launch_chunks<T, 1, Form::InPlace, reduceGmem<T>>,
         "global memory in place, halving (seed 002 reduce_global)"},
        {"reduceSmem", false, launch_chunks<T, 1, Form::Input, reduceSmem<T>>, "static shared memory"},
        {"reduceSmemDyn", false, launch_chunks<T, 1, Form::Dynamic, reduceSmemDyn<T>>, "dynamic shared memory"},
        {"reduceGmemUnroll4", true, launch_chunks<T, 4, Form::InPlaceUnroll, reduceGmemUnroll<4, T>>,
         "4 loads per thread, tree in global memory"},
        {"reduceSmemUnroll4", false, launch_chunks<T, 4, Form::Input, reduceSmemUnroll<4, T>>,
         "4 loads per thread, tree in shared memory"},
        {"reduceGmemUnroll8", true, launch_chunks<T, 8, Form::InPlaceUnroll, reduceGmemUnroll<8, T>>,
         "8 loads per thread, tree in global memory"},
        {"reduceSmemUnroll8", false, launch_chunks<T, 8, Form::Input, reduceSmemUnroll<8, T>>,
         "8 loads per thread, tree in shared memory"},
        {"reduceCompleteUnroll", false, launch_chunks<T, 8, Form::Input, reduceCompleteUnroll<T, kBlock>>,
         "template block size, last warp with __syncwarp"},
        {"reduceLastWarpShfl", false, launch_chunks<T, 8, Form::Input, reduceLastWarpShfl<T>>,
         "last warp with __shfl_down_sync"},
        {"reduceShflDown", false, launch_chunks<T, 8, Form::Input, reduceShflDown<T>>,
         "every warp with __shfl_down_sync, 1 barrier"},
        {"reduceShflXor", false, launch_chunks<T, 8, Form::Input, reduceShflXor<T>>,
         "every warp with __shfl_xor_sync (butterfly)"},
        {"reduceGridStrideAtomic", false, launch_grid_stride_atomic<T>,
         "resident grid, grid-stride loop, one atomicAdd per block"},
        {"reduceSinglePass", false, launch_single_pass<T>,
         "resident grid, __threadfence + last-block ticket, 1 launch"},
        {"reduceVec4", false, launch_vec4<T>, "single pass, 16-byte loads, 4 in flight per thread"},
    };
    return k;
}

// The seeds' bugs (./reduction --pitfalls). launch_pitfall_* return the launch.
template <class T>
const std::vector<Kernel<T>>& pitfalls() {
    static const std::vector<Kernel<T>> k = {
        {"reduceSmemVolatile", false, launch_chunks<T, 8, Form::Input, reduceSmemVolatile<T>>,
         "seeds' volatile last warp without __syncwarp: a race"},
        {"reduceSmemEarlyReturn", false, launch_chunks<T, 1, Form::Input, reduceSmemEarlyReturn<T>>,
         "seed 003: `if (idx >= n) return;` before __syncthreads"},
        {"reduceGlobalTid", false, launch_chunks<T, 1, Form::Dynamic, reduceGlobalTid<T>>,
         "seed 004: global thread id in the block's conditions"},
    };
    return k;
}

// All names, for --kernel.
inline std::vector<std::string> kernel_names(bool with_pitfalls) {
    std::vector<std::string> v;
    for (const auto& k : kernels<int>()) v.push_back(k.name);
    if (with_pitfalls)
        for (const auto& k : pitfalls<int>()) v.push_back(k.name);
    return v;
}

// ---------------------------------------------------------------------------
// CPU side: references, the tolerance, summation methods for the accuracy
// table, and the command-line limits.
// ---------------------------------------------------------------------------

// The exact int sum, wrapped to 32 bits as the GPU's int adds wrap.
inline int reference_int(const int* x, size_t n) {
    int64_t s = 0;
    for (size_t i = 0; i < n; ++i) s += x[i];
    return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
}

// A floating-point reference far more accurate than any float or double sum:
// Neumaier's compensated summation in long double (64-bit significand on
// x86), and the sum of |x| that scales the error bound.
struct Reference {
    long double sum = 0, sum_abs = 0;
};
template <class T>
Reference reference_float(const T* x, size_t n) {
    long double s = 0, c = 0, a = 0;
    for (size_t i = 0; i < n; ++i) {
        const long double v = x[i], t = s + v;
        c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
        s = t;
        a += std::fabs(v);
    }
    return {s + c, a};
}

// The tolerance of a float or double sum. Every kernel adds each element
// through a chain of k sequential adds (k ~ n / threads) and a tree of
// log2(threads) levels; Higham's bound for any such order is
// |error| <= gamma_h * sum|x| with h the longest chain, which at n = 2^28 is
// ~1000 * eps * sum|x|: true and useless. With inputs of random sign the
// rounding errors do not line up: the error grows like eps * sum|x| times a
// small factor. We allow 2 * (log2(n) + 1) * eps * sum|x|, which holds with a
// wide margin for random data and is still ~1000x tighter than the worst case.
template <class T>
double tolerance(size_t n, long double sum_abs) {
    const double eps = std::numeric_limits<T>::epsilon();
    return 2.0 * (std::log2(double(n)) + 1.0) * eps * double(sum_abs);
}

// Inputs whose sum is known exactly: the tolerance above cannot see one
// element (at n = 10000019 in float it is ~29 while an element is < 1), so the
// tests also sum values on a binary grid, x[i] = k[i] * 2^-b with k[i] a
// NONZERO integer in [-K, K] (uniform, random sign: not all equal), whose
// exact sum is the integer sum of the k[i], computed in int64. When every
// partial sum a kernel forms is a multiple of 2^-b below 2^p * 2^-b in
// magnitude (p = 24 bits for float, 53 for double), every add is exact, in any
// order, and the result must EQUAL the exact sum: tolerance 0. Then a
// dropped or doubled element (|x| >= 2^-b) always fails, and a wrong one
// fails unless it happens to hold the same k (chance 1 / 2K).
//  - double: K = 2^20, b = 20: |partial| <= sum|k| <= n 2^20 <= 2^51 < 2^53
//    for every n the program admits, so exact in any order: a proof.
//  - int: K = 100, b = 0; exact anyway (32-bit wrap, as on the GPU).
//  - float, n <= 2^20: K = 2^24 / n (a power of two, 16 .. 2^12) makes the
//    same proof (sum|k| <= 2^24). For larger n the proof would leave K < 16
//    (and none at all past 2^24: sum|k| >= n), too few distinct values to
//    catch a wrong element, so there K is the largest power of two
//    with n K^2 <= 2^40: a partial sum is a sum over a subset S of m <= n
//    elements that the kernel's indexing picks, independently of the values,
//    so by Hoeffding P(|sum_S k| >= 2^24) <= 2 exp(-2^48 / (2 m K^2))
//    <= 2 e^-128, and over the < 2n partial sums of a run < 1e-45: every add
//    is exact unless something astronomically unlikely happens, and such a
//    failure would be a false alarm, never a missed bug. K is 16 at
//    n = 2^31 - 1, 256 at n = 10000019.
struct GridScale {
    int64_t K = 1;     // |k| in [1, K]
    int b = 0;         // x = k * 2^-b
    bool proof = true; // sum|k| fits the significand: exact in any order, no probability
};
template <class T>
GridScale grid_scale(size_t n) {
    if constexpr (std::is_integral_v<T>) return {100, 0, true};
    else if constexpr (sizeof(T) == 8) return {int64_t(1) << 20, 20, true};
    else {
        int lk = 0;  // K = 2^lk
        while (lk < 12 && double(n) * std::ldexp(1.0, lk + 1) <= 0x1p24) ++lk;
        if (lk >= 4) return {int64_t(1) << lk, lk, true};  // n <= 2^20: K >= 16 with a proof
        lk = 0;
        while (lk < 12 && double(n) * std::ldexp(1.0, 2 * (lk + 1)) <= 0x1p40) ++lk;
        return {int64_t(1) << lk, lk, false};
    }
}

// x[0..n) on the grid, and the exact sum sum k[i] (in units of 2^-b).
// The int result poison (0xFF bytes = -1) must not be the answer: if the
// sum is -1, one element changes sign (the sum moves by 2 k != 0).
template <class T>
int64_t fill_grid(T* x, size_t n, uint64_t seed, const GridScale& g) {
    uint64_t state = seed;
    auto next = [&state] {  // SplitMix64, as common::fill_uniform
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    const T scale = T(std::ldexp(1.0, -g.b));
    int64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = next();
        const int64_t k = int64_t(r % uint64_t(g.K)) + 1;  // 1 .. K
        const int64_t sk = (r >> 63) ? -k : k;
        x[i] = T(sk) * scale;  // exact: |k| <= 2^20 and a power-of-two scale
        sum += sk;
    }
    if (std::is_integral_v<T> && sum == -1) {
        sum -= 2 * int64_t(x[0]);
        x[0] = -x[0];
    }
    return sum;
}

// The exact sum as a T: k_sum * 2^-b, or NaN if it is not representable
// (|k_sum| >= 2^p), which the float data of grid_scale never produces in
// practice (see above) and a test would report.
template <class T>
T grid_sum(int64_t k_sum, const GridScale& g) {
    if constexpr (std::is_integral_v<T>) return T(int32_t(uint32_t(uint64_t(k_sum))));
    else {
        const int p = std::numeric_limits<T>::digits;
        if (std::fabs(double(k_sum)) >= std::ldexp(1.0, p)) return std::numeric_limits<T>::quiet_NaN();
        return T(std::ldexp(double(k_sum), -g.b));
    }
}

// Summation methods for the accuracy table, in float.
inline float sum_sequential(const float* x, size_t n) {
    float s = 0;
    for (size_t i = 0; i < n; ++i) s += x[i];
    return s;
}
inline float sum_kahan(const float* x, size_t n) {
    // volatile keeps -O3 (or -ffast-math) from simplifying (t - s) - y to 0.
    volatile float s = 0, c = 0;
    for (size_t i = 0; i < n; ++i) {
        const float y = x[i] - c;
        const float t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}
inline float sum_pairwise(const float* x, size_t n) {
    if (n <= 8) {
        float s = 0;
        for (size_t i = 0; i < n; ++i) s += x[i];
        return s;
    }
    return sum_pairwise(x, n / 2) + sum_pairwise(x + n / 2, n - n / 2);
}

// What the toy prints: the seed's halving on the CPU, step by step.
template <class T>
std::vector<std::vector<T>> toy_steps_cpu(std::vector<T> x) {
    std::vector<std::vector<T>> steps;
    for (size_t offset = x.size() / 2; offset > 0; offset /= 2) {
        for (size_t t = 0; t < offset; ++t) x[t] += x[t + offset];
        steps.push_back(x);
    }
    return steps;
}

// Limits of --n: at least 1, at most 2^31 - 1 elements (the program holds
// the input and a scratch copy on the GPU, 32 GiB in double).
constexpr int64_t kMaxN = (int64_t(1) << 31) - 1;

inline std::string check_n(int64_t n) {
    if (n < 1 || n > kMaxN) return "--n must be in [1, " + std::to_string(kMaxN) + "]";
    return "";
}

}  // namespace reduction
