// micro.cuh - what remote shared memory costs (./distributed_smem --micro).
//
// Dependent-load latency (one thread chasing a chain of indices, clock64 per
// load) in local shared memory, in another block's shared memory through
// DSMEM, in the L2 and in DRAM; aggregate DSMEM read bandwidth and remote
// atomic throughput by cluster size; the cost of cluster.sync() by cluster size.
// All cluster kernels compile to nothing below sm_90; the host code waives them.
// run_micro_benchmarks() at the end runs them and writes the table.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include "02_distributed_smem/distributed_smem.cuh"
#include "common/buffer.cuh"
#include "common/check.cuh"
#include "common/cluster.cuh"
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/launch.cuh"
#include "common/report.hpp"
#include "common/timer.cuh"

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
    const int4* src = kRemote ? cluster.map_shared_rank(buf, (r + 1) % c) : buf;
    unsigned acc = 0;
    for (int p = 0; p < passes; ++p) {
        for (int i = threadIdx.x; i < words; i += blockDim.x) {
            const int4 v = src[i];
            acc += unsigned(v.x ^ v.y ^ v.z ^ v.w);
        }
        // A compiler barrier: memory may have changed, so the next pass loads
        // again instead of reusing this one's values (emits no instruction).
        asm volatile("" ::: "memory");
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

// ---------------------------------------------------------------------------
// The host side: ./distributed_smem --micro.
// ---------------------------------------------------------------------------

// What DSMEM costs next to local shared memory, the L2 and DRAM, as a
// common::Report: `problem` is the measure, `size` and `cluster` the cluster
// size (0 and "-": none), the rate column `value` in the row's `unit`, and
// `h100_published` the published H100 figure where there is one (the README
// cites it). Repetitions: the latency and barrier rows are one launch each,
// because the kernel times itself with clock64() over 2^14 to 2^16 dependent loads
// (1000 barriers) and an event median over launches would measure launch
// overhead, not the loads; the bandwidth and atomics rows are the median of
// --reps launches under the common rule (timer.cuh).
inline bool run_micro_benchmarks(const common::DeviceInfo& dev, const common::CommonOptions& opt,
                                 const std::string& command_line) {
    std::printf("\nWhat remote shared memory costs on %s (h100_published: published H100 figures, README)\n",
                dev.name.c_str());
    common::Report report("value", "h100", {"cluster", "unit", "h100_published"});
    std::string last_measure;
    auto add = [&](const std::string& measure, const char* kernel, const std::string& launch, int cluster, double ms,
                   double value, const char* unit, const char* h100) {
        if (measure != last_measure) report.section(measure);
        last_measure = measure;
        report.add({measure, double(cluster), kernel, launch, ms, value, -1, 0, "-",
                    {cluster ? std::to_string(cluster) : "-", unit, h100}});
    };
    const common::Gpu& g = common::gpu();
    // A cluster this GPU (or GPU_PROFILE) lacks: larger than it allows, or one
    // the occupancy calculator cannot place (a GPU or MIG slice with fewer SMs
    // to a GPC holds smaller clusters). active_clusters also lets a kernel
    // launch clusters of more than 8 blocks.
    auto not_here = [&](const char* measure, auto kernel, int c, size_t smem) {
        std::string why = cluster_size_refusal(c, g);
        if (why.empty() && active_clusters(kernel, c, smem, g) < 1)
            why = "WAIVED: no cluster of " + std::to_string(c) + " blocks fits this GPU (cudaOccupancyMaxActiveClusters)";
        if (!why.empty()) std::printf("  %s, cluster %d: %s\n", measure, c, why.c_str());
        return !why.empty();
    };
    common::DeviceBuffer<long long> d_cycles(1);
    common::DeviceBuffer<unsigned> d_sink(1);
    auto cycles = [&] {
        long long c = 0;
        CHECK(cudaMemcpy(&c, d_cycles.get(), sizeof c, cudaMemcpyDeviceToHost));
        return double(c);
    };

    // Latency: dependent loads, cycles per load.
    const int steps = 1 << 14;
    auto chase = [&](const char* measure, int c, int target, const char* h100) {
        const size_t smem = kChainWords * 4;
        if (not_here(measure, chaseSmem, c, smem)) return;
        const double ms = common::time_once_ms([&] {
            CHECK(common::launch_cluster(chaseSmem, c, kThreads, smem, c, target, steps, d_cycles.get(), d_sink.get()));
        });
        add(measure, "chaseSmem", common::launch_string(c, kThreads, smem, c), c, ms, cycles() / steps,
            "cycles", h100);
    };
    chase("latency: local shared memory (LDS)", 1, -1, "~30");
    chase("latency: DSMEM, neighbour block (rank 1)", 2, 1, "~180-190");
    chase("latency: DSMEM, neighbour block (rank 1)", 16, 1, "-");
    chase("latency: DSMEM, farthest rank (15)", 16, 15, "-");
    chase("latency: own block via map_shared_rank (generic)", 2, 0, "-");
    {   // L2: a random cycle through 65536 lines of 128 bytes (8 MiB: past the L1, inside the L2), second pass timed.
        const int lines = 65536;
        std::vector<unsigned> perm(lines), pos(lines);
        for (int i = 0; i < lines; ++i) perm[i] = i;
        common::SplitMix64 rng(uint64_t(opt.seed));
        for (int i = lines - 1; i > 0; --i) std::swap(perm[i], perm[rng.next() % (i + 1)]);
        for (int i = 0; i < lines; ++i) pos[i] = perm[i] * 32;
        common::DeviceBuffer<unsigned> next(size_t(lines) * 32), d_pos(lines);
        CHECK(cudaMemset(next.get(), 0, next.bytes()));
        d_pos.upload(pos);
        scatterChain<<<common::ceil_div(lines, 256), 256>>>(next.get(), d_pos.get(), lines);
        CHECK_LAUNCH();
        chaseGlobal<<<1, 1>>>(next.get(), pos[0], lines, d_cycles.get(), d_sink.get());
        const double ms =
            common::time_once_ms([&] { chaseGlobal<<<1, 1>>>(next.get(), pos[0], lines, d_cycles.get(), d_sink.get()); });
        add("latency: L2 hit (8 MiB random chain, ld.global.cg)", "chaseGlobal", common::launch_string(1, 1), 0, ms,
            cycles() / lines, "cycles", "~260");
    }
    {   // DRAM: 32768 random lines of a 2 GiB buffer, each visited once, the L2 flushed by a 512 MiB memset.
        // The lines are distinct: one drawn twice would turn the chain back into lines it has just
        // visited (a cycle, or a jump past the rest), and those are L2 hits.
        const int count = 32768;
        const size_t words = size_t(1) << 29;
        common::DeviceBuffer<unsigned> next(words), d_pos(count), scratch(size_t(1) << 27);
        std::vector<unsigned> pos(count);
        std::unordered_set<unsigned> drawn;
        common::SplitMix64 rng(uint64_t(opt.seed) + 1);
        for (int i = 0; i < count;)
            if (const unsigned p = unsigned((rng.next() % (words / 32)) * 32); drawn.insert(p).second) pos[i++] = p;
        d_pos.upload(pos);
        scatterChain<<<common::ceil_div(count, 256), 256>>>(next.get(), d_pos.get(), count);
        CHECK_LAUNCH();
        CHECK(cudaMemset(scratch.get(), 1, scratch.bytes()));
        const double ms = common::time_once_ms(
            [&] { chaseGlobal<<<1, 1>>>(next.get(), pos[0], count - 1, d_cycles.get(), d_sink.get()); });
        add("latency: DRAM (2 GiB random chain, TLB misses included)", "chaseGlobal", common::launch_string(1, 1), 0, ms,
            cycles() / (count - 1), "cycles", "-");
    }

    // Bandwidth and atomics: a full wave of clusters, every block on its neighbour (or itself at C = 1),
    // timed under the common rule.
    auto timed = [&](auto&& run, const std::string& launch, double* ms) {
        const double once = common::time_once_ms(run);
        const common::Timing t = common::time_kernel(run, once, int(opt.warmup), int(opt.reps));
        *ms = t.ms;
        return launch + common::reps_note(t.plan);
    };
    const int words4 = 2048;  // 32 KB of int4 per block
    const int passes = 256;
    for (int c = 1; c <= 16; c *= 2) {
        const auto kernel = c == 1 ? dsmemRead<false> : dsmemRead<true>;
        const size_t smem = size_t(words4) * 16;
        const int clusters = active_clusters(kernel, c, smem, g);
        if (clusters < 1) continue;
        double ms = 0;
        const std::string launch = timed(
            [&] { CHECK(common::launch_cluster(kernel, clusters * c, kThreads, smem, c, words4, passes, d_sink.get())); },
            common::launch_string(clusters * c, kThreads, smem, c), &ms);
        const double bytes = double(clusters) * c * words4 * 16.0 * passes;
        add(c == 1 ? "bandwidth: local shared memory reads (all SMs)" : "bandwidth: DSMEM reads, neighbour block (all SMs)",
            c == 1 ? "dsmemRead<false>" : "dsmemRead<true>", launch, c, ms, bytes / (ms * 1e6), "GB/s",
            c == 2 ? "~3300" : "-");
    }
    const int awords = 8192, iters = 4096;
    for (int c = 1; c <= 16; c *= 2) {
        const auto kernel = c == 1 ? dsmemAtomics<false> : dsmemAtomics<true>;
        const size_t smem = size_t(awords) * 4;
        const int clusters = active_clusters(kernel, c, smem, g);
        if (clusters < 1) continue;
        double ms = 0;
        const std::string launch = timed(
            [&] { CHECK(common::launch_cluster(kernel, clusters * c, kThreads, smem, c, awords, iters)); },
            common::launch_string(clusters * c, kThreads, smem, c), &ms);
        const double ops = double(clusters) * c * kThreads * iters;
        add(c == 1 ? "atomics: local shared memory (all SMs)" : "atomics: DSMEM, neighbour block (all SMs)",
            c == 1 ? "dsmemAtomics<false>" : "dsmemAtomics<true>", launch, c, ms, ops / (ms * 1e6), "Gatomic/s", "-");
    }
    // Barriers: one cluster alone, 1000 in a row.
    const int sync_iters = 1000;
    auto barrier = [&](const char* measure, bool cluster_sync, int c, const char* h100) {
        const auto kernel = cluster_sync ? syncCost<true> : syncCost<false>;
        if (not_here(measure, kernel, c, 0)) return;
        const double ms = common::time_once_ms(
            [&] { CHECK(common::launch_cluster(kernel, c, kThreads, 0, c, sync_iters, d_cycles.get())); });
        add(measure, cluster_sync ? "syncCost<true>" : "syncCost<false>",
            common::launch_string(c, kThreads, 0, c), c, ms, cycles() / sync_iters, "cycles", h100);
    };
    for (int c = 1; c <= 16; c *= 2) barrier("cluster.sync() (one cluster alone)", true, c, c > 1 ? "~850" : "-");
    barrier("__syncthreads() (512 threads)", false, 1, "-");
    CHECK(cudaDeviceSynchronize());

    if (!opt.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, command_line);
        meta.push_back({"columns", "problem = the measure; size and cluster = the cluster size (0 and - for none); "
                                   "value in unit; h100_published = the published H100 figure (README)"});
        report.write_csv(opt.csv, meta);
    }
    return true;
}

}  // namespace distributed_smem::micro
