// distributed_smem.cuh - part 1 of 02_distributed_smem, host side: the
// histogram kernels (histogram_kernels.cuh) as the program's rows, how each one
// runs a bin count (make_plan) or why it cannot, its launch, and the CPU
// reference. (Seed 000 and the other seeds: the top README's Sources section.)
//
// Naming: `num_bins` is always the count of bins (an int, checked once by
// bins_problem() where it enters: the command line, make_plan); `hist` is the
// array of counters.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
#include "02_distributed_smem/histogram_exchange.cuh"
#include "02_distributed_smem/histogram_kernels.cuh"
#include "common/check.cuh"
#include "common/cluster.cuh"
#include "common/data.hpp"
#include "common/launch.cuh"

namespace distributed_smem {

// The most bins any plan accepts (4 GiB of counters; the cluster kernels hold
// far fewer, make_plan says how many).
constexpr int kMaxBins = 1 << 30;

// "" when `num_bins` is a bin count the kernels can be asked for, else why not.
inline std::string bins_problem(int64_t num_bins) {
    if (num_bins < 1 || num_bins > kMaxBins)
        return "the bin count must be in [1, 2^30], got " + std::to_string(num_bins);
    return "";
}

enum class Algo { Global, SmemStatic, Smem, Cluster, ClusterNoFinalSync, Vec4, Vec4Agg, Sliced, SlicedAgg, Exchange, Best };

struct Variant {
    const char* name;
    Algo algo;
    int cluster;       // the cluster size; 0 = chosen from the bins and occupancy
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
        {"clusterHistExchange", Algo::Exchange, 0, "all-to-all: samples sorted by owner block, 16-bit slots via DSMEM"},
        {"clusterHistBest", Algo::Best, 0, "the H200 sweeps' choice: Sliced up to C = 2, then Exchange"},
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

// The cluster variants: every kernel from clusterHist on, written for clusters. Whether a
// plan of one launches a cluster is launches_clusters' (the fast ones at C = 1 do not).
inline bool needs_cluster(Algo a) {
    return a == Algo::Cluster || a == Algo::ClusterNoFinalSync || a == Algo::Vec4 || a == Algo::Vec4Agg ||
           a == Algo::Sliced || a == Algo::SlicedAgg || a == Algo::Exchange || a == Algo::Best;
}

// Counters one block can hold on GPU g.
inline int bins_per_block(const common::Gpu& g) { return int(g.smem_per_block / 4); }

// The two launch shapes: a plain <<<grid, block, smem>>> launch of
// (in, n, hist, num_bins), and a cluster launch with one more argument.
using PlainKernel = void (*)(const int*, size_t, unsigned*, int);
using ClusterKernel = void (*)(const int*, size_t, unsigned*, int, int);

// How one variant runs one bin count: or why it cannot.
struct Plan {
    bool ok = false;
    std::string why_not;  // when !ok: "WAIVED: ..." (the device lacks a feature), "n/a: ..." (too many
                          // bins for this kernel) or "invalid: ..." (not a bin count at all)
    PlainKernel plain_kernel = nullptr;      // histGlobalAtomics, histSmemStatic, histSmem
    ClusterKernel cluster_kernel = nullptr;  // clusterHist, clusterHistFastT, clusterHistExchange
    int grid = 0, cluster = 1;
    bool plain_launch = false;  // cluster_kernel launched without a cluster: the fast kernels at C = 1, which
                                // call no cluster function (kLocal), so they run on any GPU
    int cluster_arg = 0;  // the cluster kernel's last argument: bins_per_block (clusterHist), log2(cluster)
                          // (clusterHistFastT) or the groups of bins (clusterHistExchange)
    std::string note;     // appended to the launch column (clusterHistExchange: " 2 groups", " 16-bit")
    int threads = kThreads;
    size_t smem = 0;
    bool claims = false;  // clusterHistExchange: launch() zeroes the claims counter (histogram_exchange.cuh)
    int num_bins = 0;     // the bin count the plan was made for (its slices and shared memory): launch() refuses another
    int share_grid = 0;   // one group: histShareAtomics's blocks on the SMs no cluster fits on (0: none)
    std::string describe() const {  // the launch column
        return common::launch_string(grid, threads, smem, cluster_kernel && !plain_launch ? cluster : 0) + note +
               (share_grid > 0 ? " + idle SMs: " + std::to_string(share_grid) + " x 512 global atomics" : "");
    }
};

inline int log2_exact(int c) { int l = 0; while ((1 << l) < c) ++l; return l; }

// Blocks per SM for a plain (non-cluster) kernel at `smem` bytes, times the SMs: one full wave.
inline int wave_blocks(PlainKernel kernel, size_t smem, const common::Gpu& g) {
    return common::resident_blocks(reinterpret_cast<const void*>(kernel), kThreads, smem, g) * g.sms;
}

// The number of clusters of `c` blocks with `smem` bytes each that can be
// resident at once under g's limits (0: none). The occupancy calculator
// answers for the real GPU; a profile's SMs and shared memory cap it.
template <class... Params>
int active_clusters(void (*kernel)(Params...), int c, size_t smem, const common::Gpu& g, int threads = kThreads) {
    if (c > g.max_cluster || !common::smem_refusal(smem, g).empty()) return 0;
    if (!common::request_dynamic_smem(kernel, smem).empty()) return 0;
    if (c > 8) common::allow_large_clusters(kernel);
    const common::ClusterLaunch l(c * 64, threads, smem, c);
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(kernel), &l.cfg);
    if (e != cudaSuccess) { (void)cudaGetLastError(); return 0; }  // e.g. 16 not allowed on this device
    const int blocks = common::resident_blocks(reinterpret_cast<const void*>(kernel), threads, smem, g);
    return std::min(clusters, g.sms * blocks / c);
}

// "" where the cluster kernels run: a GPU of 9.0 or newer (GPU_PROFILE's) and
// a build holding their sm_90 code, else why not.
inline std::string cluster_refusal(const common::Gpu& g) {
    std::string why = common::cc_refusal(90, "thread-block clusters", g);
    if (why.empty()) why = common::code_refusal(reinterpret_cast<const void*>(clusterHist<true>), 90);
    return why;
}

// A cluster of c blocks is more than g launches: why, else "".
inline std::string cluster_size_refusal(int c, const common::Gpu& g) {
    if (c <= g.max_cluster) return "";
    return "WAIVED: a cluster of " + std::to_string(c) + " blocks; this GPU allows " + std::to_string(g.max_cluster) +
           (g.profile.empty() ? "" : " (GPU_PROFILE)");
}

// The clusterHistFastT instance for a variant at cluster size c. clusterHistBest
// is the sliced kernel where it runs one (below kBestExchangeFrom; README,
// "The cluster-size sweep").
inline ClusterKernel fast_kernel(Algo a, int c) {
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

// The clusterHistExchange instance for a cluster of c = 2, 4, 8 or 16 blocks,
// 32- or 16-bit (narrow) counters, one group of bins or several.
template <int kLog2C>
ClusterKernel exchange_kernel_c(bool narrow, bool one_group) {
    if (one_group) return narrow ? clusterHistExchange<kLog2C, true, true> : clusterHistExchange<kLog2C, false, true>;
    return narrow ? clusterHistExchange<kLog2C, true, false> : clusterHistExchange<kLog2C, false, false>;
}
inline ClusterKernel exchange_kernel(int c, bool narrow, bool one_group) {
    switch (c) {
        case 2: return exchange_kernel_c<1>(narrow, one_group);
        case 4: return exchange_kernel_c<2>(narrow, one_group);
        case 8: return exchange_kernel_c<3>(narrow, one_group);
        default: return exchange_kernel_c<4>(narrow, one_group);
    }
}

// Whether a block's `slice` counters fit its shared memory beside the staging
// buffers (32-bit counters, or 16-bit ones: narrow). The slots are 16-bit: at
// most 65536 counters.
inline bool exchange_slice_fits(int slice, bool narrow, const common::Gpu& g) {
    return slice <= kExMaxSlice && exchange_smem(slice, narrow) <= g.smem_per_block;
}

// clusterHistExchange's plan: the smallest cluster (2..16, or `c` when > 0)
// whose slices fit one block beside the staging buffers with 32-bit
// counters, else with 16-bit ones (the largest bin counts); beyond that, the
// fewest groups of bins that fit (each group reads every sample once), with
// 16-bit counters if 32-bit ones need more groups than clusters fit.
inline Plan exchange_plan(int num_bins, const common::Gpu& g, int c, bool narrow_counters = false) {
    Plan p;
    if (c == 1) {
        p.why_not = "n/a: the exchange needs a cluster of 2 or more blocks";
        return p;
    }
    if (p.why_not = cluster_size_refusal(c, g); !p.why_not.empty()) return p;
    auto fits = [&](int cl, int groups, bool narrow) {
        return exchange_slice_fits(exchange_slice(num_bins, cl, groups), narrow, g);
    };
    auto runs = [&](int cl, bool narrow) {
        return active_clusters(exchange_kernel(cl, narrow, true), cl,
                               exchange_smem(exchange_slice(num_bins, cl, 1), narrow), g, kExThreads) >= 1;
    };
    bool narrow = narrow_counters;
    if (c == 0) {
        for (bool nar : {false, true})
            for (int cl = 2; cl <= g.max_cluster && c == 0; cl *= 2)
                if (fits(cl, 1, nar) && runs(cl, nar)) c = cl, narrow = nar;
        if (c == 0)
            c = g.max_cluster >= 16 &&
                        active_clusters(exchange_kernel(16, true, false), 16, exchange_smem(2), g, kExThreads) >= 1
                    ? 16 : std::min(8, g.max_cluster);
    }
    if (c < 2) {
        p.why_not = "WAIVED: the exchange needs clusters of 2 or more blocks; this GPU allows " +
                    std::to_string(g.max_cluster);
        return p;
    }
    if (!fits(c, 1, false) && fits(c, 1, true)) narrow = true;  // 16-bit counters only to save a group
    int groups = 1;
    while (!fits(c, groups, narrow) && groups < 1024) ++groups;
    const int slice = exchange_slice(num_bins, c, groups);
    if (!fits(c, groups, narrow)) {
        p.why_not = "n/a: too many bins for the exchange's cluster of " + std::to_string(c);
        return p;
    }
    p.cluster_kernel = exchange_kernel(c, narrow, groups == 1);
    p.cluster = c;
    p.cluster_arg = groups;
    p.threads = kExThreads;
    p.smem = exchange_smem(slice, narrow);
    p.note = (groups > 1 ? " " + std::to_string(groups) + " groups" : "") + (narrow ? " 16-bit" : "");
    const int clusters = active_clusters(p.cluster_kernel, c, p.smem, g, kExThreads);
    if (clusters < 1) {
        p.why_not = "WAIVED: no cluster of " + std::to_string(c) + " blocks with " + std::to_string(p.smem / 1024) +
                    " KB each fits this device";
        return p;
    }
    if (clusters < groups) {
        if (!narrow)  // 16-bit counters: fewer groups, so fewer clusters needed
            if (Plan q = exchange_plan(num_bins, g, c, true); q.ok) return q;
        p.why_not = "n/a: " + std::to_string(groups) + " groups of bins need as many clusters; " + std::to_string(clusters) +
                    " fit";
        return p;
    }
    p.grid = clusters * c;
    p.claims = true;
    if (groups == 1) {  // the SMs no cluster fits on count a share of the samples (histShareAtomics)
        const int per_sm = common::resident_blocks(reinterpret_cast<const void*>(p.cluster_kernel), kExThreads, p.smem, g);
        const int idle = g.sms - common::ceil_div(p.grid, std::max(1, per_sm));
        if (idle > 0)
            p.share_grid = idle * common::resident_blocks(reinterpret_cast<const void*>(histShareAtomics), kExThreads, 0, g);
    }
    p.num_bins = num_bins;
    p.ok = true;
    return p;
}

// The cluster size the fast kernels pick when none is given: the smallest
// power of two whose slices fit one block's shared memory (fewer remote adds,
// or fewer re-reads for the sliced kernel). 0: no cluster holds the bins.
inline int pick_cluster(int num_bins, const common::Gpu& g) {
    for (int c = 1; c <= std::max(1, std::min(16, g.max_cluster)); c *= 2)
        if (common::ceil_div(num_bins, c) <= bins_per_block(g)) return c;
    return 0;
}

// clusterHistBest: clusterHistSliced while the bins fit a cluster of fewer
// than this many blocks, clusterHistExchange from there on (measured: README).
constexpr int kBestExchangeFrom = 4;

// The cluster size make_plan gives variant v: the override, the variant's own,
// or the smallest that holds the bins (0: none does).
inline int cluster_for(const Variant& v, int num_bins, const common::Gpu& g, int cluster_override = 0) {
    if (cluster_override > 0) return cluster_override;
    return v.cluster > 0 ? v.cluster : pick_cluster(num_bins, g);
}

// Whether v's plan at cluster size c (cluster_for's) is a cluster launch: the
// seed's kernel and the exchange always; the fast kernels from C = 2 on. At
// C = 1 their kLocal instance calls no cluster function, so it is a plain
// launch and runs on a GPU without clusters too.
inline bool launches_clusters(const Variant& v, int c) {
    const bool fast = v.algo == Algo::Vec4 || v.algo == Algo::Vec4Agg || v.algo == Algo::Sliced ||
                      v.algo == Algo::SlicedAgg || v.algo == Algo::Best;
    return needs_cluster(v.algo) && !(fast && c == 1);
}

// The plan for variant v at `num_bins` (cluster: v.cluster, or cluster_override when > 0).
// Refuses a bin count outside [1, kMaxBins] before any CUDA call.
inline Plan make_plan(const Variant& v, int num_bins, const common::Gpu& g, int cluster_override = 0) {
    Plan p;
    const std::string bad = bins_problem(num_bins);
    if (!bad.empty()) {
        p.why_not = "invalid: " + bad;
        return p;
    }
    const int cap = bins_per_block(g);
    if (launches_clusters(v, cluster_for(v, num_bins, g, cluster_override)))
        if (const std::string why = cluster_refusal(g); !why.empty()) {
            p.why_not = "WAIVED: " + why;
            if (!launches_clusters(v, 1))  // a fast kernel: it runs where one block holds the bins
                p.why_not += "; " + std::to_string(num_bins) + " bins need a cluster (one block holds " +
                             std::to_string(cap) + ")";
            return p;
        }
    switch (v.algo) {
        case Algo::Global:
            p.plain_kernel = histGlobalAtomics;
            p.grid = wave_blocks(histGlobalAtomics, 0, g);
            break;
        case Algo::SmemStatic:
            if (num_bins > kStaticBins) { p.why_not = "n/a: a static array holds at most 12288 bins (48 KB)"; return p; }
            p.plain_kernel = histSmemStatic;
            p.grid = wave_blocks(histSmemStatic, 0, g);
            break;
        case Algo::Exchange:
            return exchange_plan(num_bins, g, cluster_override > 0 ? cluster_override : v.cluster);
        case Algo::Smem:
            if (num_bins > cap) {
                p.why_not = "n/a: one block holds at most " + std::to_string(cap) + " bins";
                return p;
            }
            p.plain_kernel = histSmem;
            p.smem = size_t(num_bins) * 4;
            if (const std::string why = common::request_dynamic_smem(histSmem, p.smem); !why.empty()) {
                p.why_not = "WAIVED: " + why;
                return p;
            }
            p.grid = wave_blocks(histSmem, p.smem, g);
            break;
        case Algo::Best:  // the sweeps' choice (README, "The cluster-size sweep")
            if (const int c = cluster_for(v, num_bins, g, cluster_override); c == 0 || c >= kBestExchangeFrom)
                return exchange_plan(num_bins, g, cluster_override);
            [[fallthrough]];  // clusterHistSliced (fast_kernel)
        default: {
            const bool seed = v.algo == Algo::Cluster || v.algo == Algo::ClusterNoFinalSync;
            const int c = cluster_for(v, num_bins, g, cluster_override);
            p.plain_launch = !launches_clusters(v, c);
            if (!p.plain_launch)
                if (p.why_not = cluster_size_refusal(c, g); !p.why_not.empty()) return p;
            const int most = std::max(1, std::min(16, g.max_cluster));
            if (c == 0 || common::ceil_div(num_bins, c) > cap) {
                p.why_not = "n/a: a cluster of " + std::to_string(c ? c : most) + " holds at most " +
                            std::to_string(int64_t(c ? c : most) * cap) + " bins";
                return p;
            }
            const int slice = common::ceil_div(num_bins, c);  // counters per block
            p.cluster = c;
            p.smem = size_t(slice) * 4;
            if (seed) {
                p.cluster_kernel = v.algo == Algo::Cluster ? clusterHist<true> : clusterHist<false>;
                p.cluster_arg = slice;
            } else {
                p.cluster_kernel = fast_kernel(v.algo, c);
                p.cluster_arg = log2_exact(c);
                // One block per SM: make it a big one, twice the loads in flight.
                if (2 * p.smem > g.smem_per_block) p.threads = kFastThreads;
            }
            if (p.plain_launch) {  // one wave of blocks, as histSmem
                if (const std::string why = common::request_dynamic_smem(p.cluster_kernel, p.smem); !why.empty()) {
                    p.why_not = "WAIVED: " + why;
                    return p;
                }
                p.grid = common::resident_blocks(reinterpret_cast<const void*>(p.cluster_kernel), p.threads, p.smem,
                                                 g) * g.sms;
            } else {
                p.grid = active_clusters(p.cluster_kernel, c, p.smem, g, p.threads) * c;
            }
            if (p.grid < 1) {
                const std::string what = p.plain_launch ? "block" : "cluster of " + std::to_string(c) + " blocks";
                p.why_not = "WAIVED: no " + what + " with " + std::to_string(p.smem / 1024) + " KB each fits this device";
                return p;
            }
        }
    }
    p.num_bins = num_bins;
    p.ok = true;
    return p;
}

// Zeroes `hist` and launches: the whole of what one histogram costs. Returns
// the launch's error (a refused configuration would otherwise leave zeroed
// counts and no error); the caller CHECKs it. The command line's limits hold
// here too: more than kMaxSamples samples could wrap a 32-bit count, so they
// are refused (cudaErrorInvalidValue) before anything runs, like a bad bin count
// or one the plan was not made for.
[[nodiscard]] inline cudaError_t launch(const Plan& p, const int* in, size_t n, unsigned* hist, int num_bins,
                                        cudaStream_t s = 0) {
    if (!p.ok || num_bins != p.num_bins || n > size_t(kMaxSamples) || !bins_problem(num_bins).empty())
        return cudaErrorInvalidValue;
    CHECK(cudaMemsetAsync(hist, 0, size_t(num_bins) * sizeof(unsigned), s));
    if (p.plain_kernel) {
        p.plain_kernel<<<p.grid, p.threads, p.smem, s>>>(in, n, hist, num_bins);
        return cudaGetLastError();
    }
    static unsigned* claims = [] {
        void* a = nullptr;
        CHECK(cudaGetSymbolAddress(&a, g_exchange_claims));
        return static_cast<unsigned*>(a);
    }();
    if (p.claims) CHECK(cudaMemsetAsync(claims, 0, sizeof(unsigned), s));
    if (p.plain_launch) {
        p.cluster_kernel<<<p.grid, p.threads, p.smem, s>>>(in, n, hist, num_bins, p.cluster_arg);
        return cudaGetLastError();
    }
    const common::ClusterLaunch l(p.grid, p.threads, p.smem, p.cluster, s);
    if (p.share_grid == 0 || p.cluster_arg != 1)  // (several groups: a static share of the samples, no claims)
        return cudaLaunchKernelEx(&l.cfg, p.cluster_kernel, in, n, hist, num_bins, p.cluster_arg);
    // The share kernel beside the clusters, on a second stream: after the zeroing, launched after the
    // clusters (which then find their GPCs' SMs free), and s waits for both.
    static cudaStream_t side;
    static cudaEvent_t fork, join;
    static const bool made = [] {
        CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
        return true;
    }();
    (void)made;
    CHECK(cudaEventRecord(fork, s));
    CHECK(cudaStreamWaitEvent(side, fork));
    const cudaError_t e = cudaLaunchKernelEx(&l.cfg, p.cluster_kernel, in, n, hist, num_bins, p.cluster_arg);
    if (e != cudaSuccess) return e;
    histShareAtomics<<<p.share_grid, kExThreads, 0, side>>>(in, n, hist, num_bins);
    const cudaError_t e2 = cudaGetLastError();
    CHECK(cudaEventRecord(join, side));
    CHECK(cudaStreamWaitEvent(s, join));
    return e2;
}

// The most bins clusterHist's largest cluster holds on this device (0 below cc 9.0: no cluster limit applies).
inline int largest_cluster_bins(const common::Gpu& g) {
    if (!cluster_refusal(g).empty()) return 0;
    const int cap = bins_per_block(g);
    for (int c = 16; c >= 1; c /= 2)
        if (active_clusters(clusterHist<true>, c, size_t(cap) * 4, g) >= 1) return c * cap;
    return cap;
}

// The most bins one pass over the samples counts on this device, the limit
// main() puts on --bins (0 below cc 9.0: no cluster limit applies):
// clusterHist's largest cluster, or clusterHistExchange's largest cluster with
// one group of 16-bit counters (16 x 65536 = 2^20 on the H200), whichever is
// more. (The exchange alone could take more, in groups of bins, each group
// reading every sample again.)
inline int largest_one_pass_bins(const common::Gpu& g) {
    const int most = largest_cluster_bins(g);
    if (most == 0) return 0;
    int slice = kExMaxSlice;
    while (slice > 2 && !exchange_slice_fits(slice, true, g)) --slice;
    for (int c = 16; c >= 2; c /= 2)
        if (c <= g.max_cluster &&
            active_clusters(exchange_kernel(c, true, true), c, exchange_smem(slice, true), g, kExThreads) >= 1)
            return std::max(most, c * slice);
    return most;
}

// ---------------------------------------------------------------------------
// Inputs and the CPU reference.
// ---------------------------------------------------------------------------

// uniform: every bin equally likely. skewed: 90% of the samples in 8 hot bins
// (spread over the range), the rest uniform: where atomics contend.
// out_of_range: this fraction of samples below 0 or >= num_bins (the clamping).
// Filled in parallel from per-chunk seeds: the same data for any thread count.
inline void make_samples(std::vector<int>& v, size_t n, int num_bins, bool skewed, double out_of_range,
                         uint64_t seed) {
    v.resize(n);
    const size_t chunk = size_t(1) << 20;
    const size_t chunks = (n + chunk - 1) / chunk;
    const unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    const int64_t bins = num_bins;  // 64-bit for the products below
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

inline void histogram_cpu(const int* in, size_t n, int num_bins, std::vector<unsigned>& hist) {
    hist.assign(size_t(num_bins), 0u);
    for (size_t i = 0; i < n; ++i) ++hist[size_t(bin_of(in[i], num_bins))];
}

}  // namespace distributed_smem
