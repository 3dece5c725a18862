// distributed_smem.cuh - a histogram from global atomics to thread-block clusters
// and distributed shared memory (DSMEM), and what remote shared memory costs.
//
// The problem (seed 000's clusterHist_kernel): n int samples, `bins` counters;
// sample v goes to bin v, clamped: v < 0 counts in bin 0, v >= bins in bin
// bins - 1. Counts are exact 32-bit integers (n is limited to 2^32 - 1, so no
// counter can wrap); sample indices are 64-bit.
//
// Where the counters live decides the speed:
//   global memory   every sample is an atomic in the L2 (histGlobalAtomics)
//   shared memory   every block keeps a private copy, flushed once at the end
//                   (histSmemStatic, histSmem); bins are limited by one block's
//                   shared memory: 227 KB = 58112 counters on an H200
//   a cluster       C blocks (C <= 8 portable, 16 on H100/H200) split the bins;
//                   a sample's counter may live in another block's shared
//                   memory, reached through DSMEM (clusterHist, the seed's
//                   kernel, and the faster clusterHistVec4 / clusterHistSliced)
// Kernels in teaching order; each is correct for any n >= 1 and any bins >= 1
// up to what it can hold (plan() says why a kernel cannot run a size).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/data.hpp"

namespace distributed_smem {

namespace cg = cooperative_groups;

constexpr int kThreads = 512;            // every histogram kernel's block size
constexpr int kStaticBins = 12288;       // histSmemStatic's array: 48 KB, the static limit
constexpr int64_t kMaxSamples = 4294967295ll;  // 2^32 - 1: a 32-bit counter cannot wrap

// The seed's clamp: out-of-range values count in the first or last bin.
__host__ __device__ __forceinline__ int bin_of(int v, int bins) { return v < 0 ? 0 : (v >= bins ? bins - 1 : v); }

// ---------------------------------------------------------------------------
// 1. Global atomics only: the baseline every privatized histogram beats.
// ---------------------------------------------------------------------------

// histGlobalAtomics: one atomicAdd in global memory (the L2) per sample. With
// few bins every warp's 32 atomics collide on the same addresses and the L2
// serializes them; with many bins they spread out and it gets faster. Skewed
// data is its worst case.
__global__ void __launch_bounds__(kThreads)
histGlobalAtomics(const int* __restrict__ in, size_t n, unsigned* __restrict__ bins, int nbins) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&bins[bin_of(in[i], nbins)], 1u);
}

// ---------------------------------------------------------------------------
// 2. A private histogram per block in shared memory.
// ---------------------------------------------------------------------------

// The body both shared-memory kernels share: zero, count with shared atomics
// (fast, on-chip, contention only inside one block), flush the non-zero
// counters to global memory with one atomic each.
__device__ __forceinline__ void block_histogram(unsigned* smem, const int* __restrict__ in, size_t n,
                                                unsigned* __restrict__ bins, int nbins) {
    for (int i = threadIdx.x; i < nbins; i += blockDim.x) smem[i] = 0;
    __syncthreads();
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&smem[bin_of(in[i], nbins)], 1u);
    __syncthreads();  // every count of this block is in smem before it is flushed
    for (int i = threadIdx.x; i < nbins; i += blockDim.x)
        if (smem[i]) atomicAdd(&bins[i], smem[i]);
}

// histSmemStatic: seed 000's static allocation, `__shared__ unsigned h[N]` with
// N fixed at compile time. A kernel's static shared memory is capped at 48 KB,
// so it holds at most 12288 bins whatever the GPU has; it also always takes
// 48 KB, even for 7 bins (fewer blocks fit per SM than the counters need).
__global__ void __launch_bounds__(kThreads)
histSmemStatic(const int* __restrict__ in, size_t n, unsigned* __restrict__ bins, int nbins) {
    __shared__ unsigned smem[kStaticBins];
    block_histogram(smem, in, n, bins, nbins);
}

// histSmem: dynamic allocation (`extern __shared__`, the size is the third
// launch parameter): exactly nbins * 4 bytes, and beyond 48 KB up to the
// device's opt-in limit (227 KB on Hopper) after
// cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize). More
// bins = more shared memory per block = fewer blocks per SM.
__global__ void __launch_bounds__(kThreads)
histSmem(const int* __restrict__ in, size_t n, unsigned* __restrict__ bins, int nbins) {
    extern __shared__ unsigned smem_dyn[];
    block_histogram(smem_dyn, in, n, bins, nbins);
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
clusterHist(const int* __restrict__ in, size_t n, unsigned* __restrict__ bins, int nbins, int bins_per_block) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ unsigned smem_dyn[];
    cg::cluster_group cluster = cg::this_cluster();
    for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x) smem_dyn[i] = 0;
    cluster.sync();
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int b = bin_of(in[i], nbins);
        unsigned* dst = cluster.map_shared_rank(smem_dyn, b / bins_per_block);
        atomicAdd(dst + b % bins_per_block, 1u);
    }
    if (kSecondSync) cluster.sync();
    else __syncthreads();  // the pitfall: only this block's own adds are known to be done
    const int first = int(cluster.block_rank()) * bins_per_block;
    for (int i = threadIdx.x; i < bins_per_block && first + i < nbins; i += blockDim.x)
        if (smem_dyn[i]) atomicAdd(&bins[first + i], smem_dyn[i]);
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
//   kLocal   C = 1, shared-memory atomics (ATOMS), no cluster at all
//   kDsmem   C > 1, a sample's counter may be in another block (DSMEM atomics)
//   kSliced  C > 1, no remote atomics: every block of a cluster reads all of the
//            cluster's samples and counts only those in its own bins. The cluster
//            is used only to run its C blocks at the same time on one GPC, so the
//            C reads of a sample are one DRAM read and C - 1 L2 hits.
enum Mode { kLocal = 0, kDsmem = 1, kSliced = 2 };
constexpr int kUnroll = 4;
constexpr int kFastThreads = 1024;  // used when a block's counters leave room for only one block per SM

template <int kMode, bool kAggregate>
__device__ __forceinline__ void count_sample(unsigned* smem, int v, bool valid, int nbins, int log2c, unsigned rank) {
    (void)rank;
    int b = bin_of(v, nbins);
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
clusterHistFastT(const int* __restrict__ in, size_t n, unsigned* __restrict__ bins, int nbins, int log2c) {
    // Below sm_90 only kLocal is ever launched; the cluster calls compile out there.
    {
        extern __shared__ unsigned smem_dyn[];
        const int c = 1 << log2c;
        unsigned rank = 0;
        unsigned part = blockIdx.x, parts = gridDim.x;  // which share of the input this block reads
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (kMode != kLocal) rank = cg::this_cluster().block_rank();
        if (kMode == kSliced) { part = blockIdx.x >> log2c; parts = gridDim.x >> log2c; }
#endif
        const int slots = (nbins + c - 1) >> log2c;
        for (int i = threadIdx.x; i < slots; i += blockDim.x) smem_dyn[i] = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (kMode == kDsmem) cg::this_cluster().sync(); else __syncthreads();
#else
        __syncthreads();
#endif
        // Samples before the first 16-byte boundary, then int4s, then the tail.
        const size_t mis = ((16 - (reinterpret_cast<uintptr_t>(in) & 15)) & 15) / 4;
        const size_t head = mis < n ? mis : n;
        const size_t n4 = (n - head) / 4;
        const size_t tail = head + n4 * 4;
        const int4* in4 = reinterpret_cast<const int4*>(in + head);
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
                count_sample<kMode, kAggregate>(smem_dyn, v[u].x, ok[u], nbins, log2c, rank);
                count_sample<kMode, kAggregate>(smem_dyn, v[u].y, ok[u], nbins, log2c, rank);
                count_sample<kMode, kAggregate>(smem_dyn, v[u].z, ok[u], nbins, log2c, rank);
                count_sample<kMode, kAggregate>(smem_dyn, v[u].w, ok[u], nbins, log2c, rank);
            }
        }
        // At most 3 + 3 scalar samples: the first warp of share 0 takes them.
        if (part == 0 && warp == 0) {
            const size_t i = lane < head ? lane : tail + (lane - 3);
            const bool ok = (lane < head) || (lane >= 3 && lane < 6 && i < n);
            count_sample<kMode, kAggregate>(smem_dyn, ok ? __ldg(in + i) : 0, ok, nbins, log2c, rank);
        }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (kMode == kDsmem) cg::this_cluster().sync(); else __syncthreads();
#else
        __syncthreads();
#endif
        for (int i = threadIdx.x; i < slots; i += blockDim.x) {
            const int b = (i << log2c) + int(rank);
            if (b < nbins && smem_dyn[i]) atomicAdd(&bins[b], smem_dyn[i]);
        }
    }
}

// ---------------------------------------------------------------------------
// Host side: which kernels, how each is launched, the CPU reference.
// ---------------------------------------------------------------------------

enum class Algo { Global, SmemStatic, Smem, Cluster, ClusterNoFinalSync, Vec4, Vec4Agg, Sliced, SlicedAgg, Best };

struct Variant {
    const char* name;
    Algo algo;
    int cluster;       // the cluster size; 0 = chosen from bins and occupancy
    const char* what;
};

// In teaching order. The clusterHist rows are the seed's kernel at every legal cluster size.
inline const std::vector<Variant>& kernels() {
    static const std::vector<Variant> v = {
        {"histGlobalAtomics", Algo::Global, 1, "one global atomic per sample (the L2 serializes collisions)"},
        {"histSmemStatic", Algo::SmemStatic, 1, "private histogram per block, static __shared__ (<= 12288 bins)"},
        {"histSmem", Algo::Smem, 1, "private histogram per block, dynamic shared memory (<= 227 KB opt-in)"},
        {"clusterHist_c1", Algo::Cluster, 1, "seed 000's cluster kernel, cluster of 1 (no remote traffic)"},
        {"clusterHist_c2", Algo::Cluster, 2, "seed 000's cluster kernel, bins split over 2 blocks"},
        {"clusterHist_c4", Algo::Cluster, 4, "... over 4 blocks"},
        {"clusterHist_c8", Algo::Cluster, 8, "... over 8 blocks (the largest portable cluster)"},
        {"clusterHist_c16", Algo::Cluster, 16, "... over 16 blocks (non-portable, H100/H200)"},
        {"clusterHistVec4", Algo::Vec4, 0, "int4 loads, interleaved bins, DSMEM atomics, C from bins"},
        {"clusterHistVec4Agg", Algo::Vec4Agg, 0, "clusterHistVec4 + warp-aggregated atomics (__match_any_sync)"},
        {"clusterHistSliced", Algo::Sliced, 0, "each block reads the cluster's samples, counts its own bins"},
        {"clusterHistSlicedAgg", Algo::SlicedAgg, 0, "clusterHistSliced + warp-aggregated atomics"},
        {"clusterHistBest", Algo::Best, 0, "the H200 sweeps' choice: Sliced (C = 1 where the bins fit one block)"},
    };
    return v;
}

// Never in kernels(): the seed's bug kept on show (./distributed_smem --pitfalls).
inline const std::vector<Variant>& pitfalls() {
    static const std::vector<Variant> v = {
        {"clusterHistNoFinalSync_c2", Algo::ClusterNoFinalSync, 2, "clusterHist without the second cluster.sync()"},
        {"clusterHistNoFinalSync_c4", Algo::ClusterNoFinalSync, 4, "... cluster of 4"},
        {"clusterHistNoFinalSync_c16", Algo::ClusterNoFinalSync, 16, "... cluster of 16"},
    };
    return v;
}

inline bool needs_cluster(Algo a) {
    return a == Algo::Cluster || a == Algo::ClusterNoFinalSync || a == Algo::Vec4 || a == Algo::Vec4Agg ||
           a == Algo::Sliced || a == Algo::SlicedAgg || a == Algo::Best;
}

struct Caps {
    int cc = 0, sms = 0;
    size_t smem_optin = 0;  // bytes of shared memory one block may opt into
    bool clusters() const { return cc >= 90; }
};

inline Caps device_caps(int device) {
    Caps c;
    int major = 0, minor = 0, optin = 0;
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, device));
    CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    c.cc = major * 10 + minor;
    c.smem_optin = size_t(optin);
    return c;
}

// How one variant runs one bin count: or why it cannot.
struct Plan {
    bool ok = false;
    std::string why_not;     // when !ok: "WAIVED: ..." (the device lacks a feature) or "n/a: ..." (too many bins)
    void (*kernel)(const int*, size_t, unsigned*, int, int) = nullptr;  // cluster kernels (5 args)
    void (*kernel4)(const int*, size_t, unsigned*, int) = nullptr;      // the others (4 args)
    int grid = 0, cluster = 1, arg = 0;  // arg: bins_per_block (clusterHist) or log2(cluster) (fast)
    int threads = kThreads;
    size_t smem = 0;
    std::string describe() const {
        return "grid " + std::to_string(grid) + (cluster > 1 ? " cl " + std::to_string(cluster) : "") + " x " +
               std::to_string(threads) + " smem " + std::to_string((smem + 1023) / 1024) + "K";
    }
};

inline int log2_exact(int c) { int l = 0; while ((1 << l) < c) ++l; return l; }

// Blocks per SM for a plain (non-cluster) kernel at `smem` bytes, times the SMs: one full wave.
template <class K>
int wave_blocks(K kernel, size_t smem, const Caps& caps) {
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
    return per_sm * caps.sms;
}

// The number of clusters of `c` blocks with `smem` bytes each that can be resident at once (0: none).
template <class K>
int active_clusters(K kernel, int c, size_t smem, int threads = kThreads) {
    CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(smem)));
    if (c > 8)
        CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                   cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(c * 64);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = c;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(kernel), &cfg);
    if (e != cudaSuccess) { (void)cudaGetLastError(); return 0; }  // e.g. 16 not allowed on this device
    return clusters;
}

inline void (*fast_kernel(Algo a, int c))(const int*, size_t, unsigned*, int, int) {
    // clusterHistBest: the sliced kernel at every cluster size. In the H200 sweeps it beats the
    // DSMEM-atomic kernels up to C = 8 and is within 3% of them at C = 16 on uniform data, where it
    // wins on skewed data (no hot counter in another block).
    if (a == Algo::Best) a = Algo::Sliced;
    if (c == 1) return a == Algo::Vec4Agg || a == Algo::SlicedAgg ? clusterHistFastT<kLocal, true>
                                                                  : clusterHistFastT<kLocal, false>;
    switch (a) {
        case Algo::Vec4: return clusterHistFastT<kDsmem, false>;
        case Algo::Vec4Agg: return clusterHistFastT<kDsmem, true>;
        case Algo::Sliced: return clusterHistFastT<kSliced, false>;
        default: return clusterHistFastT<kSliced, true>;
    }
}

// The cluster size the fast kernels pick when none is given: the smallest
// power of two whose slices fit one block's shared memory (fewer remote adds,
// or fewer re-reads for the sliced kernel).
inline int pick_cluster(int64_t bins, const Caps& caps) {
    const int64_t cap = int64_t(caps.smem_optin / 4);
    for (int c = 1; c <= 16; c *= 2)
        if ((bins + c - 1) / c <= cap) return c;
    return 0;
}

// The plan for variant v at `bins` (cluster: v.cluster, or override when > 0).
inline Plan make_plan(const Variant& v, int64_t bins, const Caps& caps, int cluster_override = 0) {
    Plan p;
    const int64_t cap = int64_t(caps.smem_optin / 4);  // counters one block can hold
    if (needs_cluster(v.algo) && !caps.clusters()) {
        p.why_not = "WAIVED: thread-block clusters need compute capability 9.0";
        return p;
    }
    switch (v.algo) {
        case Algo::Global:
            p.kernel4 = histGlobalAtomics;
            p.grid = wave_blocks(histGlobalAtomics, 0, caps);
            break;
        case Algo::SmemStatic:
            if (bins > kStaticBins) { p.why_not = "n/a: a static array holds at most 12288 bins (48 KB)"; return p; }
            p.kernel4 = histSmemStatic;
            p.grid = wave_blocks(histSmemStatic, 0, caps);
            break;
        case Algo::Smem:
            if (bins > cap) {
                p.why_not = "n/a: one block holds at most " + std::to_string(cap) + " bins";
                return p;
            }
            p.kernel4 = histSmem;
            p.smem = size_t(bins) * 4;
            CHECK(cudaFuncSetAttribute(histSmem, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.smem)));
            p.grid = wave_blocks(histSmem, p.smem, caps);
            break;
        default: {
            const bool seed = v.algo == Algo::Cluster || v.algo == Algo::ClusterNoFinalSync;
            int c = cluster_override > 0 ? cluster_override : v.cluster;
            if (c == 0) c = pick_cluster(bins, caps);
            if (c == 0 || (bins + c - 1) / c > cap) {
                p.why_not = "n/a: a cluster of " + std::to_string(c ? c : 16) + " holds at most " +
                            std::to_string((c ? c : 16) * cap) + " bins";
                return p;
            }
            p.cluster = c;
            p.smem = size_t((bins + c - 1) / c) * 4;
            if (seed) {
                p.kernel = v.algo == Algo::Cluster ? clusterHist<true> : clusterHist<false>;
                p.arg = int((bins + c - 1) / c);
            } else {
                p.kernel = fast_kernel(v.algo, c);
                p.arg = log2_exact(c);
                // One block per SM: make it a big one, twice the loads in flight.
                if (2 * p.smem > caps.smem_optin) p.threads = kFastThreads;
            }
            const int clusters = active_clusters(p.kernel, c, p.smem, p.threads);
            if (clusters < 1) {
                p.why_not = "WAIVED: no cluster of " + std::to_string(c) + " blocks with " +
                            std::to_string(p.smem / 1024) + " KB each fits this device";
                return p;
            }
            p.grid = clusters * c;
        }
    }
    p.ok = true;
    return p;
}

// Zeroes `out` and launches: the whole of what one histogram costs.
inline void launch(const Plan& p, const int* in, size_t n, unsigned* out, int bins, cudaStream_t s = 0) {
    CHECK(cudaMemsetAsync(out, 0, size_t(bins) * sizeof(unsigned), s));
    if (p.kernel4) {
        p.kernel4<<<p.grid, p.threads, p.smem, s>>>(in, n, out, bins);
        return;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(p.grid);
    cfg.blockDim = dim3(p.threads);
    cfg.dynamicSmemBytes = p.smem;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = p.cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, p.kernel, in, n, out, bins, p.arg));
}

// The largest bin count any kernel here can hold on this device (0 below cc 9.0: no cluster limit applies).
inline int64_t largest_cluster_bins(const Caps& caps) {
    if (!caps.clusters()) return 0;
    const int64_t cap = int64_t(caps.smem_optin / 4);
    for (int c = 16; c >= 1; c /= 2)
        if (active_clusters(clusterHist<true>, c, size_t(cap) * 4) >= 1) return c * cap;
    return cap;
}

// ---------------------------------------------------------------------------
// Inputs and the CPU reference.
// ---------------------------------------------------------------------------

// uniform: every bin equally likely. skewed: 90% of the samples in 8 hot bins
// (spread over the range), the rest uniform: where atomics contend.
// out_of_range: this fraction of samples below 0 or >= bins (the clamping).
// Filled in parallel from per-chunk seeds: the same data for any thread count.
inline void make_samples(std::vector<int>& v, size_t n, int64_t bins, bool skewed, double out_of_range,
                         uint64_t seed) {
    v.resize(n);
    const size_t chunk = size_t(1) << 20;
    const size_t chunks = (n + chunk - 1) / chunk;
    const unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nt; ++t)
        pool.emplace_back([&, t] {
            for (size_t c = t; c < chunks; c += nt) {
                common::SplitMix64 g(seed * 0x9E3779B97F4A7C15ull + c);
                for (size_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
                    const uint64_t r = g.next();
                    const double u = (r >> 11) * (1.0 / 9007199254740992.0);
                    int x;
                    if (u < out_of_range) {
                        x = (r & 1) ? -1 - int((r >> 1) % 1000000) : int(bins + int64_t((r >> 1) % 1000000));
                        if (r & 2) x = (r & 1) ? INT32_MIN : INT32_MAX;  // the extremes too
                    } else if (skewed && u < out_of_range + 0.9) {
                        x = int((((r >> 8) & 7) * bins) / 8);
                    } else {
                        x = int(g.next() % uint64_t(bins));
                    }
                    v[i] = x;
                }
            }
        });
    for (std::thread& t : pool) t.join();
}

inline void histogram_cpu(const int* in, size_t n, int bins, std::vector<unsigned>& out) {
    out.assign(size_t(bins), 0u);
    for (size_t i = 0; i < n; ++i) ++out[size_t(bin_of(in[i], bins))];
}

}  // namespace distributed_smem
