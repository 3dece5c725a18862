// histogram_kernels.cuh - the histogram kernels of 02_distributed_smem, in
// teaching order: from global atomics to thread-block clusters and distributed
// shared memory (DSMEM). The host side (which kernel runs a size, how it is
// launched, the CPU reference) is distributed_smem.cuh.
//
// The problem (seed 000's clusterHist_kernel; the seeds: the top README's
// Sources section): n int samples, `num_bins` counters in `hist`; sample v goes
// to bin v, clamped: v < 0 counts in bin 0, v >= num_bins in bin num_bins - 1.
// Counts are exact 32-bit integers (n is limited to 2^32 - 1, so no bin's
// count can wrap; the exchange's 16-bit counters, and its slot-0 counter that
// also counts padding, do wrap and are corrected modulo 2^32); sample
// indices are 64-bit.
//
// Where the counters live decides the speed:
//   global memory   every sample is an atomic in the L2 (histGlobalAtomics)
//   shared memory   every block keeps a private copy, flushed once at the end
//                   (histSmemStatic, histSmem); the bins are limited by one
//                   block's shared memory (227 KB = 58112 counters on Hopper)
//   a cluster       C blocks (C <= 8 portable, 16 on H100/H200) split the bins;
//                   a sample's counter may live in another block's shared
//                   memory, reached through DSMEM (clusterHist, the seed's
//                   kernel, and the faster clusterHistVec4 / clusterHistSliced)
// Each kernel is correct for any n >= 1 and any num_bins >= 1 up to what it
// can hold (make_plan() says why a kernel cannot run a size).
#pragma once
#include <cstdint>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace distributed_smem {

namespace cg = cooperative_groups;

constexpr int kThreads = 512;            // the block size (Plan::threads), but clusterHistFastT's
                                         // kFastThreads where one block fills an SM, the exchange's kExThreads
constexpr int kStaticBins = 12288;       // histSmemStatic's array: 48 KB, the static limit
constexpr int64_t kMaxSamples = 4294967295ll;  // 2^32 - 1: a 32-bit counter cannot wrap

// The seed's clamp: out-of-range values count in the first or last bin.
__host__ __device__ __forceinline__ int bin_of(int v, int num_bins) { return v < 0 ? 0 : (v >= num_bins ? num_bins - 1 : v); }

// n ints read as int4 where they can be: the `head` ints before the first
// 16-byte boundary (at most 3, at most n), then n4 whole int4s (`body`), then
// the ints from `tail` to n (at most 3).
struct Int4Split {
    size_t head, n4, tail;
    const int4* body;
};
__host__ __device__ inline Int4Split split_int4(const int* in, size_t n) {
    const size_t mis = ((16 - (reinterpret_cast<uintptr_t>(in) & 15)) & 15) / 4;
    const size_t head = mis < n ? mis : n, n4 = (n - head) / 4;
    return {head, n4, head + n4 * 4, reinterpret_cast<const int4*>(in + head)};
}

// ---------------------------------------------------------------------------
// 1. Global atomics only: the baseline every privatized histogram beats.
// ---------------------------------------------------------------------------

// histGlobalAtomics: one atomicAdd in global memory (the L2) per sample. With
// few bins every warp's 32 atomics collide on the same addresses and the L2
// serializes them; with many bins they spread out and it gets faster. Skewed
// data is its worst case.
__global__ void __launch_bounds__(kThreads)
histGlobalAtomics(const int* __restrict__ in, size_t n, unsigned* __restrict__ hist, int num_bins) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&hist[bin_of(in[i], num_bins)], 1u);
}

// ---------------------------------------------------------------------------
// 2. A private histogram per block in shared memory.
// ---------------------------------------------------------------------------

// The body both shared-memory kernels share: zero, count with shared atomics
// (fast, on-chip, contention only inside one block), flush the non-zero
// counters to global memory with one atomic each.
__device__ __forceinline__ void block_histogram(unsigned* smem, const int* __restrict__ in, size_t n,
                                                unsigned* __restrict__ hist, int num_bins) {
    for (int i = threadIdx.x; i < num_bins; i += blockDim.x) smem[i] = 0;
    __syncthreads();
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&smem[bin_of(in[i], num_bins)], 1u);
    __syncthreads();  // every count of this block is in smem before it is flushed
    for (int i = threadIdx.x; i < num_bins; i += blockDim.x)
        if (smem[i]) atomicAdd(&hist[i], smem[i]);
}

// histSmemStatic: seed 000's static allocation, `__shared__ unsigned h[N]` with
// N fixed at compile time. A kernel's static shared memory is capped at 48 KB,
// so it holds at most 12288 bins whatever the GPU has; it also always takes
// 48 KB, even for 7 bins (fewer blocks fit per SM than the counters need).
__global__ void __launch_bounds__(kThreads)
histSmemStatic(const int* __restrict__ in, size_t n, unsigned* __restrict__ hist, int num_bins) {
    __shared__ unsigned smem[kStaticBins];
    block_histogram(smem, in, n, hist, num_bins);
}

// histSmem: dynamic allocation (`extern __shared__`, the size is the third
// launch parameter): exactly num_bins * 4 bytes, and beyond 48 KB up to the
// device's opt-in limit (227 KB on Hopper) after
// cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize). More
// bins = more shared memory per block = fewer blocks per SM.
__global__ void __launch_bounds__(kThreads)
histSmem(const int* __restrict__ in, size_t n, unsigned* __restrict__ hist, int num_bins) {
    extern __shared__ unsigned smem_dyn[];
    block_histogram(smem_dyn, in, n, hist, num_bins);
}

// ---------------------------------------------------------------------------
// 3. The seed's cluster histogram: the bins split over the blocks of a cluster.
// ---------------------------------------------------------------------------

// clusterHist: seed 000's clusterHist_kernel, fixed. Block `rank` of a cluster
// of C owns bins [rank * bins_per_block, (rank + 1) * bins_per_block); a
// sample whose bin another block owns is added there through DSMEM
// (cluster.map_shared_rank gives a pointer into the other block's shared
// memory; the atomic travels over the SM-to-SM network of the GPC).
//   First cluster.sync(): every block of the cluster is running and has
//     zeroed its counters before anyone adds to them.
//   Second cluster.sync(): every remote add has landed before a block reads
//     its counters, and no block exits (freeing its shared memory) while
//     another still writes into it. kSecondSync = false is the pitfall.
// Fixed against the seed: bins_per_block rounds up (the seed's nbins /
// cluster_size loses the last bins when C does not divide them), the grid is
// a multiple of C sized from cudaOccupancyMaxActiveClusters (the seed's
// array_size / threads launches 0 blocks for small inputs), 64-bit indices,
// the last block's slice may be partial.
template <bool kSecondSync = true>
__global__ void __launch_bounds__(kThreads)
clusterHist(const int* __restrict__ in, size_t n, unsigned* __restrict__ hist, int num_bins, int bins_per_block) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ unsigned smem_dyn[];
    cg::cluster_group cluster = cg::this_cluster();
    for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x) smem_dyn[i] = 0;
    cluster.sync();
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int b = bin_of(in[i], num_bins);
        unsigned* dst = cluster.map_shared_rank(smem_dyn, b / bins_per_block);
        atomicAdd(dst + b % bins_per_block, 1u);
    }
    if (kSecondSync) cluster.sync();
    else __syncthreads();  // the pitfall: only this block's own adds are known to be done
    const int first = int(cluster.block_rank()) * bins_per_block;
    for (int i = threadIdx.x; i < bins_per_block && first + i < num_bins; i += blockDim.x)
        if (smem_dyn[i]) atomicAdd(&hist[first + i], smem_dyn[i]);
#endif
}
// The pitfall as its own name: clusterHist<false>.
inline constexpr auto clusterHistNoFinalSync = clusterHist<false>;

// ---------------------------------------------------------------------------
// 4. As fast as we can make it.
// ---------------------------------------------------------------------------
// Three changes to clusterHist, each for a reason the numbers show:
//  - 16-byte loads (int4), kUnroll of them in flight per thread before the
//    first atomic: the loads are what must saturate HBM.
//  - interleaved bins: bin b lives in block b % C at slot b / C. C is a power
//    of two, so that is a mask and a shift instead of the seed's division.
//  - warp aggregation (kAggregate): __match_any_sync finds the lanes of a warp
//    with the same bin; one of them adds the count. Skewed data, where most
//    lanes of a warp hit the same counter, then costs one atomic, not 32.
// Modes:
//   kLocal   C = 1, shared-memory atomics (ATOMS), no cluster at all: launched
//            plainly (make_plan), so it runs below sm_90 too
//   kDsmem   C > 1, a sample's counter may be in another block (DSMEM atomics)
//   kSliced  C > 1, no remote atomics: every block of a cluster reads all of the
//            cluster's samples and counts only those in its own bins. The cluster
//            is used only to run its C blocks at the same time on one GPC, so the
//            C reads of a sample are one DRAM read and C - 1 L2 hits.
enum Mode { kLocal = 0, kDsmem = 1, kSliced = 2 };
constexpr int kUnroll = 4;
constexpr int kFastThreads = 1024;  // used when a block's counters leave room for only one block per SM

template <int kMode, bool kAggregate>
__device__ __forceinline__ void count_sample(unsigned* smem, int v, bool valid, int num_bins, int log2c, unsigned rank) {
    (void)rank;
    int b = bin_of(v, num_bins);
    if (kMode == kSliced) valid = valid && (unsigned(b) & ((1u << log2c) - 1)) == rank;
    const unsigned slot = unsigned(b) >> log2c;
    if (kAggregate) {
        const unsigned peers = __match_any_sync(0xffffffffu, valid ? b : -1);
        if (!valid || (threadIdx.x & 31) != unsigned(__ffs(peers) - 1)) return;
        const unsigned count = __popc(peers);
        if (kMode == kDsmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
            atomicAdd(cg::this_cluster().map_shared_rank(smem + slot, unsigned(b) & ((1u << log2c) - 1)), count);
#endif
        } else {
            atomicAdd(smem + slot, count);
        }
    } else {
        if (!valid) return;
        if (kMode == kDsmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
            atomicAdd(cg::this_cluster().map_shared_rank(smem + slot, unsigned(b) & ((1u << log2c) - 1)), 1u);
#endif
        } else {
            atomicAdd(smem + slot, 1u);
        }
    }
}

template <int kMode, bool kAggregate>
__global__ void __launch_bounds__(kFastThreads)
clusterHistFastT(const int* __restrict__ in, size_t n, unsigned* __restrict__ hist, int num_bins, int log2c) {
    // Below sm_90 only the kLocal instance runs (C = 1, a plain launch: launches_clusters);
    // the cluster calls compile out there.
    {
        extern __shared__ unsigned smem_dyn[];
        const int c = 1 << log2c;
        unsigned rank = 0;
        unsigned part = blockIdx.x, parts = gridDim.x;  // which share of the input this block reads
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (kMode != kLocal) rank = cg::this_cluster().block_rank();
        if (kMode == kSliced) { part = blockIdx.x >> log2c; parts = gridDim.x >> log2c; }
#endif
        const int slots = (num_bins + c - 1) >> log2c;
        for (int i = threadIdx.x; i < slots; i += blockDim.x) smem_dyn[i] = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (kMode == kDsmem) cg::this_cluster().sync(); else __syncthreads();
#else
        __syncthreads();
#endif
        // Samples before the first 16-byte boundary, then int4s, then the tail.
        const auto [head, n4, tail, in4] = split_int4(in, n);
        const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
        // Warp-uniform loop bounds (every lane runs every iteration: __match_any_sync needs them all).
        const size_t wstride = size_t(parts) * warps * 32;
        for (size_t wbase = (size_t(part) * warps + warp) * 32; wbase < n4; wbase += wstride * kUnroll) {
            int4 v[kUnroll];
            bool ok[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const size_t i = wbase + u * wstride + lane;
                ok[u] = i < n4;
                v[u] = ok[u] ? __ldg(in4 + i) : make_int4(0, 0, 0, 0);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                count_sample<kMode, kAggregate>(smem_dyn, v[u].x, ok[u], num_bins, log2c, rank);
                count_sample<kMode, kAggregate>(smem_dyn, v[u].y, ok[u], num_bins, log2c, rank);
                count_sample<kMode, kAggregate>(smem_dyn, v[u].z, ok[u], num_bins, log2c, rank);
                count_sample<kMode, kAggregate>(smem_dyn, v[u].w, ok[u], num_bins, log2c, rank);
            }
        }
        // At most 3 + 3 scalar samples: the first warp of share 0 takes them.
        if (part == 0 && warp == 0) {
            const size_t i = lane < head ? lane : tail + (lane - 3);
            const bool ok = (lane < head) || (lane >= 3 && lane < 6 && i < n);
            count_sample<kMode, kAggregate>(smem_dyn, ok ? __ldg(in + i) : 0, ok, num_bins, log2c, rank);
        }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (kMode == kDsmem) cg::this_cluster().sync(); else __syncthreads();
#else
        __syncthreads();
#endif
        for (int i = threadIdx.x; i < slots; i += blockDim.x) {
            const int b = (i << log2c) + int(rank);
            if (b < num_bins && smem_dyn[i]) atomicAdd(&hist[b], smem_dyn[i]);
        }
    }
}

}  // namespace distributed_smem
