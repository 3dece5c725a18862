// micro.cuh - what remote shared memory costs (./distributed_smem --micro).
//
// Dependent-load latency (one thread chasing a chain of indices, clock64 per
// load) in local shared memory, in another block's shared memory through
// DSMEM, in the L2 and in DRAM; aggregate DSMEM read bandwidth and remote
// atomic throughput by cluster size; the cost of cluster.sync() by cluster size.
// All cluster kernels compile to nothing below sm_90; the host code waives them.
#pragma once
#include <cstdint>
#include <vector>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/data.hpp"

namespace distributed_smem::micro {

namespace cg = cooperative_groups;

constexpr int kChainWords = 4096;  // 16 KB chain in shared memory
constexpr int kChainStep = 33;     // stride in words: every load in another bank

// target < 0: the block's own shared memory (LDS); else block `target` of the cluster (DSMEM).
__global__ void chaseSmem(int target, int steps, long long* cycles, unsigned* sink) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ unsigned chain[];
    cg::cluster_group cluster = cg::this_cluster();
    for (int i = threadIdx.x; i < kChainWords; i += blockDim.x) chain[i] = (i + kChainStep) % kChainWords;
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        unsigned j = 0;
        long long t0, t1;
        if (target < 0) {
            for (int k = 0; k < 64; ++k) j = chain[j];  // warm-up
            t0 = clock64();
#pragma unroll 8
            for (int k = 0; k < steps; ++k) j = chain[j];
            t1 = clock64();
        } else {
            const unsigned* remote = cluster.map_shared_rank(chain, target);
            for (int k = 0; k < 64; ++k) j = remote[j];
            t0 = clock64();
#pragma unroll 8
            for (int k = 0; k < steps; ++k) j = remote[j];
            t1 = clock64();
        }
        cycles[0] = t1 - t0;
        sink[0] = j;
    }
    cluster.sync();  // the target block stays alive until the chase is over
#endif
}

// One thread chasing `next` through the L2 (ld.global.cg skips the L1).
__global__ void chaseGlobal(const unsigned* next, unsigned start, int steps, long long* cycles, unsigned* sink) {
    unsigned j = start;
    const long long t0 = clock64();
    for (int k = 0; k < steps; ++k) j = __ldcg(next + j);
    const long long t1 = clock64();
    cycles[0] = t1 - t0;
    sink[0] = j;
}

__global__ void scatterChain(unsigned* next, const unsigned* pos, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) next[pos[i]] = pos[(i + 1) % count];
}

// Every thread reads 16-byte words of the next block's shared memory (or its
// own, kRemote = false), `passes` times over `words` int4.
template <bool kRemote>
__global__ void dsmemRead(int words, int passes, unsigned* sink) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ int4 buf[];
    cg::cluster_group cluster = cg::this_cluster();
    for (int i = threadIdx.x; i < words; i += blockDim.x) buf[i] = make_int4(i, i + 1, i + 2, i + 3);
    cluster.sync();
    const unsigned c = cluster.num_blocks(), r = cluster.block_rank();
    const volatile int4* src = kRemote ? cluster.map_shared_rank(buf, (r + 1) % c) : buf;
    unsigned acc = 0;
    for (int p = 0; p < passes; ++p)
        for (int i = threadIdx.x; i < words; i += blockDim.x) {
            const int4 v = const_cast<const int4&>(src[i]);
            acc += unsigned(v.x ^ v.y ^ v.z ^ v.w);
        }
    cluster.sync();
    if (acc == 0x9E3779B9u) sink[0] = acc;  // keeps the loads
#endif
}

// Every thread adds 1 to `iters` different words of the next block's shared
// memory (kRemote) or its own: consecutive lanes, consecutive words (no bank
// conflicts, no two lanes on one counter). A histogram of uniform data at its best.
template <bool kRemote>
__global__ void dsmemAtomics(int words, int iters) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ unsigned cnt[];
    cg::cluster_group cluster = cg::this_cluster();
    for (int i = threadIdx.x; i < words; i += blockDim.x) cnt[i] = 0;
    cluster.sync();
    const unsigned c = cluster.num_blocks(), r = cluster.block_rank();
    unsigned* dst = kRemote ? cluster.map_shared_rank(cnt, (r + 1) % c) : cnt;
    for (int k = 0; k < iters; ++k) atomicAdd(dst + ((threadIdx.x + 32 * k) & (words - 1)), 1u);
    cluster.sync();
#endif
}

// `iters` cluster.sync() (or __syncthreads(), kCluster = false) in a row, timed by block 0's thread 0.
template <bool kCluster>
__global__ void syncCost(int iters, long long* cycles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const long long t0 = clock64();
    for (int k = 0; k < iters; ++k) {
        if (kCluster) cluster.sync(); else __syncthreads();
    }
    const long long t1 = clock64();
    if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = t1 - t0;
#endif
}

}  // namespace distributed_smem::micro
