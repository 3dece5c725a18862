// distributed_smem.cu - a histogram from global atomics to thread-block
// clusters, checked against the CPU and timed against cub::DeviceHistogram.
//
//   ./distributed_smem                           2^28 int samples, 2^17 bins (more than one block holds)
//   ./distributed_smem --bins 256 --dist skewed  any size and distribution
//   ./distributed_smem --sweep --csv 02_distributed_smem/results/h200.csv
//   ./distributed_smem --cluster-sweep --csv 02_distributed_smem/results/h200_cluster.csv
//   ./distributed_smem --micro --csv 02_distributed_smem/results/h200_micro.csv
//   ./distributed_smem --pitfalls                the seed's missing second cluster.sync()
//   ./distributed_smem --sync                    part 2: synchronization (sync.cuh)
//
// GB/s = n * 4 bytes / time: every sample read once (the counters are on chip
// or small next to the samples).
#include <algorithm>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
#include <string>
#include <vector>
#include <cub/device/device_histogram.cuh>
#include "02_distributed_smem/distributed_smem.cuh"
#include "02_distributed_smem/micro.cuh"
#include "02_distributed_smem/sync.cuh"
#include "common/buffer.cuh"
#include "common/cli.hpp"
#include "common/device.cuh"
#include "common/report.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"

namespace {

using namespace distributed_smem;

struct Problem {
    int64_t n, bins;
    bool skewed;
    std::string name() const {
        std::string ns = std::to_string(n);
        for (int k = 10; k < 40; ++k) if (n == (int64_t(1) << k)) ns = "2^" + std::to_string(k);
        return "n=" + ns + " bins=" + std::to_string(bins) + (skewed ? " skewed" : " uniform");
    }
};

double gbps(int64_t n, double ms) { return double(n) * 4.0 / (ms * 1e6); }

// Median of opt.reps, fewer (at least 3) when one launch is so slow that they would take over 3 s.
template <class F>
double timed(F&& f, const common::CommonOptions& opt) {
    const double once = common::time_median_ms(f, int(std::min<int64_t>(opt.warmup, 1)), 1);
    int reps = int(opt.reps);
    if (once * reps > 3000.0) reps = std::max(3, int(3000.0 / once));
    return common::time_median_ms(f, int(opt.warmup), reps);
}

struct Cub {
    size_t bytes = 0;
    void* temp = nullptr;
    ~Cub() { if (temp) cudaFree(temp); }
    void run(const int* in, unsigned* out, int64_t n, int64_t bins) {
        size_t need = 0;
        CHECK(cub::DeviceHistogram::HistogramEven(nullptr, need, in, out, int(bins + 1), 0, int(bins), n));
        if (need > bytes) {
            if (temp) CHECK(cudaFree(temp));
            CHECK(cudaMalloc(&temp, need));
            bytes = need;
        }
        CHECK(cub::DeviceHistogram::HistogramEven(temp, bytes, in, out, int(bins + 1), 0, int(bins), n));
    }
};

// Checks the kernel on a small input with 1% of its samples out of range: the timed inputs are
// all in range (where CUB, which drops such samples, computes the same thing), this is the clamp.
bool clamp_check(const Plan& p, int64_t bins, bool skewed, uint64_t seed) {
    const size_t n = 100003;
    std::vector<int> in;
    std::vector<unsigned> ref, got;
    make_samples(in, n, bins, skewed, 0.01, seed + 17);
    histogram_cpu(in.data(), n, int(bins), ref);
    common::DeviceBuffer<int> d_in(n);
    common::DeviceBuffer<unsigned> d_out{size_t(bins)};
    d_in.upload(in);
    d_out.poison();
    launch(p, d_in.get(), n, d_out.get(), int(bins));
    CHECK(cudaDeviceSynchronize());
    d_out.download(got);
    return common::compare(got.data(), ref.data(), size_t(bins)).pass();
}

// One problem: CUB, then every selected kernel (or `only`), verified and timed.
bool run_problem(const Problem& pb, const common::CommonOptions& opt, const Caps& caps, common::Report& report,
                 const std::vector<std::string>& only = {}, bool ratios = true) {
    const size_t n = size_t(pb.n);
    const int bins = int(pb.bins);
    std::vector<int> in;
    std::vector<unsigned> ref, got;
    make_samples(in, n, pb.bins, pb.skewed, 0.0, uint64_t(opt.seed));
    histogram_cpu(in.data(), n, bins, ref);
    common::DeviceBuffer<int> d_in(n);
    common::DeviceBuffer<unsigned> d_out{size_t(bins)};
    d_in.upload(in);
    const std::string problem = pb.name();
    report.section(problem + " (" + common::human_bytes(4.0 * n) + " of samples), median of " +
                   std::to_string(opt.reps));

    auto check = [&](const std::string& name) {
        d_out.download(got);
        const common::Comparison c = common::compare(got.data(), ref.data(), size_t(bins));
        if (!c.pass()) std::printf("  %s: %s\n", name.c_str(), common::describe(c, got.data(), ref.data()).c_str());
        return c;
    };
    auto extra = [&](int cluster) {
        return std::vector<std::string>{std::to_string(pb.bins), pb.skewed ? "skewed" : "uniform",
                                        std::to_string(cluster)};
    };

    Cub cub;
    d_out.poison();
    cub.run(d_in.get(), d_out.get(), pb.n, pb.bins);
    CHECK(cudaDeviceSynchronize());
    common::Comparison c = check("cub::DeviceHistogram");
    const double cub_ms = timed([&] { cub.run(d_in.get(), d_out.get(), pb.n, pb.bins); }, opt);
    report.add({problem, double(pb.bins), "cub::DeviceHistogram", "HistogramEven", cub_ms, gbps(pb.n, cub_ms),
                100.0, c.max_abs_err, c.pass() ? "PASS" : "FAIL", extra(0)});
    bool ok = c.pass();

    double atomics_ms = -1;
    for (const Variant& v : kernels()) {
        const bool chosen = only.empty() ? (opt.kernel.empty() || opt.kernel == v.name)
                                         : std::find(only.begin(), only.end(), v.name) != only.end();
        if (!chosen) continue;
        const Plan p = make_plan(v, pb.bins, caps);
        if (!p.ok) {
            std::printf("%-28s %s\n", v.name, p.why_not.c_str());
            continue;
        }
        d_out.poison();
        launch(p, d_in.get(), n, d_out.get(), bins);
        CHECK(cudaDeviceSynchronize());
        c = check(v.name);
        const bool clamp_ok = clamp_check(p, pb.bins, pb.skewed, uint64_t(opt.seed));
        if (!clamp_ok) std::printf("  %s: wrong counts with out-of-range samples (clamping)\n", v.name);
        const double ms = timed([&] { launch(p, d_in.get(), n, d_out.get(), bins); }, opt);
        if (v.algo == Algo::Global) atomics_ms = ms;
        report.add({problem, double(pb.bins), v.name, p.describe(), ms, gbps(pb.n, ms), 100.0 * cub_ms / ms,
                    c.max_abs_err, c.pass() && clamp_ok ? "PASS" : "FAIL", extra(p.cluster)});
        ok &= c.pass() && clamp_ok;
    }

    if (ratios) {  // the ratios the chapter is judged by (../shared/ANCHORS.md, issue 10)
        const common::Row* best = nullptr;
        const common::Row* rule = nullptr;
        for (const common::Row& r : report.rows()) {
            if (r.problem != problem || r.kernel.rfind("cluster", 0) != 0 || r.result != "PASS") continue;
            if (!best || r.ms < best->ms) best = &r;
            if (r.kernel == "clusterHistBest") rule = &r;
        }
        if (best) std::printf("fastest cluster kernel here: %s, %.2f x CUB\n", best->kernel.c_str(), cub_ms / best->ms);
        if (rule) {
            const double x_cub = cub_ms / rule->ms, x_atom = atomics_ms > 0 ? atomics_ms / rule->ms : -1;
            std::printf("clusterHistBest: %.2f x CUB, %.2f x histGlobalAtomics; goal: ", x_cub, x_atom);
            const int64_t one_block = int64_t(caps.smem_optin / 4);
            if (pb.bins > one_block)
                std::printf(">= 3 x atomics and >= 1.5 x CUB (bins beyond one block): %s\n",
                            x_atom >= 3 && x_cub >= 1.5 ? "met" : "NOT met");
            else if (pb.bins >= 4096)
                std::printf(">= 2 x CUB (4096..65536 bins): %s\n", x_cub >= 2 ? "met" : "NOT met");
            else
                std::printf(">= 1 x CUB: %s\n", x_cub >= 1 ? "met" : "NOT met");
        }
    }
    return ok;
}

// --cluster-sweep: for bins from 256 to the largest a 16-block cluster holds,
// the seed's kernel and the fast ones at every cluster size.
bool cluster_sweep(const common::CommonOptions& opt, const Caps& caps, common::Report& report, int64_t n) {
    std::vector<int64_t> bins = {256, 1024, 4096, 16384, 32768, 65536, 131072, 262144, 524288};
    const int64_t largest = largest_cluster_bins(caps);
    while (!bins.empty() && bins.back() > largest) bins.pop_back();
    if (largest > bins.back()) bins.push_back(largest);
    bool ok = true;
    const std::vector<Variant> sweep = {kernels()[3], kernels()[8], kernels()[9], kernels()[10]};  // seed, Vec4, Vec4Agg, Sliced
    for (int64_t b : bins) {
        const Problem pb{n, b, false};
        std::vector<int> in;
        std::vector<unsigned> ref, got;
        make_samples(in, size_t(n), b, false, 0.0, uint64_t(opt.seed));
        histogram_cpu(in.data(), size_t(n), int(b), ref);
        common::DeviceBuffer<int> d_in{size_t(n)};
        common::DeviceBuffer<unsigned> d_out{size_t(b)};
        d_in.upload(in);
        const std::string problem = "bins=" + std::to_string(b);
        report.section(pb.name() + ": every cluster size");
        Cub cub;
        const double cub_ms = timed([&] { cub.run(d_in.get(), d_out.get(), n, b); }, opt);
        d_out.download(got);
        bool pass = common::compare(got.data(), ref.data(), size_t(b)).pass();
        report.add({problem, double(b), "cub::DeviceHistogram", "HistogramEven", cub_ms, gbps(n, cub_ms), 100.0, 0,
                    pass ? "PASS" : "FAIL", {std::to_string(b), "0"}});
        ok &= pass;
        for (const Variant& v : sweep)
            for (int c = 1; c <= 16; c *= 2) {
                const Plan p = make_plan(v, b, caps, c);
                if (!p.ok) continue;
                d_out.poison();
                const double ms = timed([&] { launch(p, d_in.get(), size_t(n), d_out.get(), int(b)); }, opt);
                d_out.download(got);
                const common::Comparison cmp = common::compare(got.data(), ref.data(), size_t(b));
                report.add({problem, double(b), v.name == std::string("clusterHist_c1") ? "clusterHist" : v.name,
                            p.describe(), ms, gbps(n, ms), 100.0 * cub_ms / ms, cmp.max_abs_err,
                            cmp.pass() ? "PASS" : "FAIL", {std::to_string(b), std::to_string(c)}});
                ok &= cmp.pass();
            }
    }
    return ok;
}

// --micro: what DSMEM costs next to local shared memory, the L2 and DRAM.
bool micro_benchmarks(const common::DeviceInfo& dev, const common::CommonOptions& opt, const std::string& cmd) {
    using namespace distributed_smem::micro;
    struct M { std::string what; int cluster; double value; std::string unit, h100; };
    std::vector<M> rows;
    common::DeviceBuffer<long long> d_cycles(1);
    common::DeviceBuffer<unsigned> d_sink(1);
    long long cyc = 0;
    auto cluster_cfg = [](int c, int blocks, size_t smem, cudaLaunchAttribute* attr) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(kThreads);
        cfg.dynamicSmemBytes = smem;
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = c;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        return cfg;
    };
    auto allow16 = [](const void* k) { CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1)); };

    // Latency: dependent loads, cycles per load.
    const int steps = 1 << 14;
    allow16(reinterpret_cast<const void*>(chaseSmem));
    auto chase = [&](int c, int target) {
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t cfg = cluster_cfg(c, c, kChainWords * 4, attr);
        CHECK(cudaLaunchKernelEx(&cfg, chaseSmem, target, steps, d_cycles.get(), d_sink.get()));
        CHECK(cudaMemcpy(&cyc, d_cycles.get(), 8, cudaMemcpyDeviceToHost));
        return double(cyc) / steps;
    };
    rows.push_back({"latency: local shared memory (LDS)", 1, chase(1, -1), "cycles", "~30"});
    rows.push_back({"latency: DSMEM, neighbour block (rank 1)", 2, chase(2, 1), "cycles", "~180-190"});
    rows.push_back({"latency: DSMEM, neighbour block (rank 1)", 16, chase(16, 1), "cycles", "-"});
    rows.push_back({"latency: DSMEM, farthest rank (15)", 16, chase(16, 15), "cycles", "-"});
    rows.push_back({"latency: own block via map_shared_rank (generic)", 2, chase(2, 0), "cycles", "-"});
    {   // L2: a random cycle through 65536 lines of 128 bytes (8 MiB: past the L1, inside the L2), second pass timed.
        const int lines = 65536;
        std::vector<unsigned> perm(lines), pos(lines);
        for (int i = 0; i < lines; ++i) perm[i] = i;
        common::SplitMix64 g(uint64_t(opt.seed));
        for (int i = lines - 1; i > 0; --i) std::swap(perm[i], perm[g.next() % (i + 1)]);
        for (int i = 0; i < lines; ++i) pos[i] = perm[i] * 32;
        common::DeviceBuffer<unsigned> next(size_t(lines) * 32), d_pos(lines);
        CHECK(cudaMemset(next.get(), 0, next.bytes()));
        d_pos.upload(pos);
        scatterChain<<<(lines + 255) / 256, 256>>>(next.get(), d_pos.get(), lines);
        CHECK_LAUNCH();
        chaseGlobal<<<1, 1>>>(next.get(), pos[0], lines, d_cycles.get(), d_sink.get());
        chaseGlobal<<<1, 1>>>(next.get(), pos[0], lines, d_cycles.get(), d_sink.get());
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(&cyc, d_cycles.get(), 8, cudaMemcpyDeviceToHost));
        rows.push_back({"latency: L2 hit (8 MiB random chain, ld.global.cg)", 0, double(cyc) / lines, "cycles", "~260"});
    }
    {   // DRAM: 32768 random lines of a 2 GiB buffer, each visited once, the L2 flushed by a 512 MiB memset.
        const int count = 32768;
        const size_t words = size_t(1) << 29;
        common::DeviceBuffer<unsigned> next(words), d_pos(count), scratch(size_t(1) << 27);
        std::vector<unsigned> pos(count);
        common::SplitMix64 g(uint64_t(opt.seed) + 1);
        for (int i = 0; i < count; ++i) pos[i] = unsigned((g.next() % (words / 32)) * 32);
        d_pos.upload(pos);
        scatterChain<<<(count + 255) / 256, 256>>>(next.get(), d_pos.get(), count);
        CHECK_LAUNCH();
        CHECK(cudaMemset(scratch.get(), 1, scratch.bytes()));
        chaseGlobal<<<1, 1>>>(next.get(), pos[0], count - 1, d_cycles.get(), d_sink.get());
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(&cyc, d_cycles.get(), 8, cudaMemcpyDeviceToHost));
        rows.push_back({"latency: DRAM (2 GiB random chain, TLB misses included)", 0, double(cyc) / (count - 1),
                        "cycles", "-"});
    }

    // Bandwidth and atomics: a full wave of clusters, every block on its neighbour (or itself at C = 1).
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    auto time_cfg = [&](auto launch_fn) {
        return common::time_median_ms(launch_fn, 1, int(std::min<int64_t>(opt.reps, 10)));
    };
    const int words4 = 2048;  // 32 KB of int4 per block
    const int passes = 256;
    for (int c = 1; c <= 16; c *= 2) {
        const void* k = c == 1 ? reinterpret_cast<const void*>(dsmemRead<false>) : reinterpret_cast<const void*>(dsmemRead<true>);
        allow16(k);
        CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, words4 * 16));
        const int clusters = active_clusters(c == 1 ? dsmemRead<false> : dsmemRead<true>, c, words4 * 16);
        if (clusters < 1) continue;
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t cfg = cluster_cfg(c, clusters * c, words4 * 16, attr);
        const double ms = time_cfg([&] {
            if (c == 1) CHECK(cudaLaunchKernelEx(&cfg, dsmemRead<false>, words4, passes, d_sink.get()));
            else CHECK(cudaLaunchKernelEx(&cfg, dsmemRead<true>, words4, passes, d_sink.get()));
        });
        const double bytes = double(clusters) * c * words4 * 16.0 * passes;
        rows.push_back({c == 1 ? "bandwidth: local shared memory reads (all SMs)" : "bandwidth: DSMEM reads, neighbour block (all SMs)",
                        c, bytes / (ms * 1e6), "GB/s", c == 2 ? "~3300" : "-"});
    }
    const int awords = 8192, iters = 4096;
    for (int c = 1; c <= 16; c *= 2) {
        const void* k = c == 1 ? reinterpret_cast<const void*>(dsmemAtomics<false>) : reinterpret_cast<const void*>(dsmemAtomics<true>);
        allow16(k);
        const int clusters = active_clusters(c == 1 ? dsmemAtomics<false> : dsmemAtomics<true>, c, awords * 4);
        if (clusters < 1) continue;
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t cfg = cluster_cfg(c, clusters * c, awords * 4, attr);
        const double ms = time_cfg([&] {
            if (c == 1) CHECK(cudaLaunchKernelEx(&cfg, dsmemAtomics<false>, awords, iters));
            else CHECK(cudaLaunchKernelEx(&cfg, dsmemAtomics<true>, awords, iters));
        });
        const double ops = double(clusters) * c * kThreads * iters;
        rows.push_back({c == 1 ? "atomics: local shared memory (all SMs)" : "atomics: DSMEM, neighbour block (all SMs)", c,
                        ops / (ms * 1e6), "Gatomic/s", "-"});
    }
    // Barriers: one cluster alone, 1000 in a row.
    const int sync_iters = 1000;
    allow16(reinterpret_cast<const void*>(syncCost<true>));
    for (int c = 1; c <= 16; c *= 2) {
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t cfg = cluster_cfg(c, c, 0, attr);
        CHECK(cudaLaunchKernelEx(&cfg, syncCost<true>, sync_iters, d_cycles.get()));
        CHECK(cudaMemcpy(&cyc, d_cycles.get(), 8, cudaMemcpyDeviceToHost));
        rows.push_back({"cluster.sync() (one cluster alone)", c, double(cyc) / sync_iters, "cycles", c > 1 ? "~850" : "-"});
    }
    {
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t cfg = cluster_cfg(1, 1, 0, attr);
        CHECK(cudaLaunchKernelEx(&cfg, syncCost<false>, sync_iters, d_cycles.get()));
        CHECK(cudaMemcpy(&cyc, d_cycles.get(), 8, cudaMemcpyDeviceToHost));
        rows.push_back({"__syncthreads() (512 threads)", 1, double(cyc) / sync_iters, "cycles", "-"});
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));

    std::printf("\nWhat remote shared memory costs (%s; H100 figures: ANCHORS.md)\n", dev.name.c_str());
    std::printf("%-56s %8s %12s %-10s %s\n", "measure", "cluster", "value", "unit", "H100 published");
    for (const M& m : rows)
        std::printf("%-56s %8s %12.1f %-10s %s\n", m.what.c_str(), m.cluster ? std::to_string(m.cluster).c_str() : "-",
                    m.value, m.unit.c_str(), m.h100.c_str());
    if (!opt.csv.empty()) {
        std::string s;
        for (const auto& kv : common::run_metadata(dev, cmd)) s += "# " + kv.first + ": " + kv.second + "\n";
        s += "measure,cluster,value,unit,h100_published\n";
        for (const M& m : rows)
            s += common::csv_field(m.what) + "," + (m.cluster ? std::to_string(m.cluster) : "-") + "," +
                 common::fmt("%.1f", m.value) + "," + m.unit + "," + m.h100 + "\n";
        FILE* f = std::fopen(opt.csv.c_str(), "w");
        if (!f || std::fwrite(s.data(), 1, s.size(), f) != s.size() || std::fclose(f) != 0) {
            std::fprintf(stderr, "cannot write %s\n", opt.csv.c_str());
            return false;
        }
        std::printf("\nwrote %s (%zu rows)\n", opt.csv.c_str(), rows.size());
    }
    return true;
}

// --pitfalls: clusterHist without its second cluster.sync(), repeated: how often are the counts wrong?
// Its result is printed, never part of the exit code.
void run_pitfalls(const common::CommonOptions& opt, const Caps& caps) {
    std::printf("\nPitfall: clusterHistNoFinalSync (the seed's second cluster.sync() left out), 20 runs each\n");
    const int64_t n = int64_t(1) << 24;
    for (int64_t bins : {int64_t(4096), int64_t(1) << 17}) {
        for (bool skewed : {false, true}) {
            std::vector<int> in;
            std::vector<unsigned> ref, got;
            make_samples(in, size_t(n), bins, skewed, 0.0, uint64_t(opt.seed));
            histogram_cpu(in.data(), size_t(n), int(bins), ref);
            common::DeviceBuffer<int> d_in{size_t(n)};
            common::DeviceBuffer<unsigned> d_out{size_t(bins)};
            d_in.upload(in);
            for (const Variant& v : pitfalls()) {
                if (opt.kernel.rfind("clusterHistNoFinalSync", 0) == 0 && opt.kernel != v.name) continue;
                const Plan p = make_plan(v, bins, caps);
                if (!p.ok) { std::printf("  %s: %s\n", v.name, p.why_not.c_str()); continue; }
                int wrong = 0;
                double lost = 0;
                const int trials = 20;
                for (int t = 0; t < trials; ++t) {
                    d_out.poison();
                    launch(p, d_in.get(), size_t(n), d_out.get(), int(bins));
                    CHECK(cudaDeviceSynchronize());
                    d_out.download(got);
                    const common::Comparison cmp = common::compare(got.data(), ref.data(), size_t(bins));
                    wrong += !cmp.pass();
                    double sum = 0;
                    for (unsigned x : got) sum += x;
                    lost += double(n) - sum;
                }
                std::printf("  %-28s n=2^24 bins %7lld %-7s: %2d of %d runs wrong, %.1f samples lost per run on average\n",
                            v.name, (long long)bins, skewed ? "skewed" : "uniform", wrong, trials, lost / trials);
            }
        }
    }
    std::printf("(clusterHist, with both cluster.sync() calls, runs in every default run and test: always exact)\n");
}

}  // namespace

int main(int argc, char** argv) {
    int64_t n = int64_t(1) << 28, bins = int64_t(1) << 17;
    std::string dist = "uniform";
    bool micro = false, csweep = false, show_pitfalls = false, sync_part = false;
    common::CommonOptions opt;
    std::vector<std::string> names;
    std::string summary =
        "Histogram of n int samples into `bins` counters (out-of-range samples clamped to the first/last bin,\n"
        "as seed 000 does), every kernel checked against the CPU (exact counts) and timed against\n"
        "cub::DeviceHistogram::HistogramEven in the same run. GB/s = n * 4 bytes / median time.\n"
        "The timed samples lie in [0, bins), where CUB (which drops out-of-range samples) and the seed's\n"
        "clamp agree; each kernel's clamping is checked separately on 100003 samples, 1% out of range.\n"
        "Kernels, in teaching order:";
    for (const Variant& v : kernels()) {
        names.push_back(v.name);
        const std::string name = v.name;
        summary += "\n  " + name + std::string(name.size() < 24 ? 24 - name.size() : 1, ' ') + v.what;
    }
    summary += "\nPitfalls (only with --pitfalls; their results never set the exit code):";
    for (const Variant& v : pitfalls()) {
        names.push_back(v.name);
        summary += "\n  " + std::string(v.name) + "  " + v.what;
    }
    common::Cli cli("distributed_smem", summary);
    cli.option("n", &n, "samples (int32; at most 2^32 - 1 so a 32-bit count cannot wrap)", 1, kMaxSamples)
        .option("bins", &bins, "histogram bins (at most what a 16-block cluster holds: 929792 on an H200)", 1,
                int64_t(1) << 30)
        .option("dist", &dist, "sample distribution: uniform, or skewed (90% in 8 bins)", {"uniform", "skewed"})
        .flag("cluster-sweep", &csweep, "every cluster size for bins 256 .. the largest (n = --n, default 2^26 there)")
        .flag("micro", &micro, "micro-benchmarks: DSMEM latency, bandwidth, atomics, cluster.sync()")
        .flag("pitfalls", &show_pitfalls, "run the seed's pitfall: clusterHist without the second cluster.sync()")
        .flag("sync", &sync_part, "part 2: synchronization beyond one block (barriers, fences, volatile)");
    common::add_common_options(cli, opt, names);
    cli.parse_or_exit(argc, argv);
    for (const Variant& v : pitfalls())
        if (opt.kernel == v.name && !show_pitfalls) {
            std::fprintf(stderr, "distributed_smem: --kernel %s is a pitfall: add --pitfalls\n\n%s", v.name,
                         cli.usage().c_str());
            return 2;
        }
    bool n_given = false;
    for (int i = 1; i < argc; ++i) n_given |= std::string(argv[i]) == "--n" || std::string(argv[i]).rfind("--n=", 0) == 0;

    if (show_pitfalls && !sync_part) {
        // A pitfall may kill its CUDA context (a write into an exited block's shared memory faults,
        // and such an error is sticky): each runs in a child process, so none sets our exit code.
        for (const Variant& v : pitfalls()) {
            if (opt.kernel.rfind("clusterHistNoFinalSync", 0) == 0 && opt.kernel != v.name) continue;
            std::fflush(stdout);
            const pid_t pid = fork();
            if (pid == 0) {
                common::CommonOptions one = opt;
                one.kernel = v.name;
                const common::DeviceInfo d = common::require_device(int(opt.device));
                const Caps c = device_caps(d.id);
                if (c.clusters()) run_pitfalls(one, c);
                else std::printf("\n%s: WAIVED (thread-block clusters need compute capability 9.0)\n", v.name);
                std::fflush(stdout);
                std::_Exit(0);
            }
            int status = 0;
            if (pid > 0 && waitpid(pid, &status, 0) == pid &&
                !(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == common::kExitWaived)))
                std::printf("  %s: the process ended with %s %d (the CUDA error above is how it fails)\n", v.name,
                            WIFEXITED(status) ? "exit status" : "signal",
                            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        }
    }
    const common::DeviceInfo dev = common::require_device(int(opt.device));
    common::print_device_header(dev);
    if (sync_part) return distributed_smem::sync::run_sync_part(dev, opt, show_pitfalls) ? 0 : 1;
    const Caps caps = device_caps(dev.id);
    const int64_t largest = largest_cluster_bins(caps);
    if (largest > 0 && bins > largest) {
        std::fprintf(stderr, "distributed_smem: --bins %lld: the largest cluster this device runs (%lld blocks of %zu KB) "
                     "holds at most %lld bins\n", (long long)bins, (long long)(largest / (caps.smem_optin / 4)),
                     caps.smem_optin / 1024, (long long)largest);
        return 2;
    }
    if (!caps.clusters())
        std::printf("note: %s is cc %d.%d: the cluster kernels print WAIVED (clusters need 9.0)\n", dev.name.c_str(),
                    dev.cc_major, dev.cc_minor);

    if (micro) {
        if (!caps.clusters()) { std::printf("WAIVED: --micro measures thread-block clusters (cc 9.0)\n"); return 77; }
        return micro_benchmarks(dev, opt, cli.command_line()) ? 0 : 1;
    }

    std::vector<Problem> problems;
    if (opt.sweep) {
        for (int64_t b : {int64_t(256), int64_t(4096), int64_t(16384), int64_t(65536), int64_t(1) << 17,
                          int64_t(1) << 19})
            for (bool s : {false, true}) problems.push_back({int64_t(1) << 28, b, s});
        problems.push_back({99999989, 65537, false});  // odd n, one bin past a power of two
        if (largest > 0) problems.push_back({int64_t(1) << 28, largest, false});
    } else if (!csweep) {
        problems.push_back({n, bins, dist == "skewed"});
    }
    const int64_t sweep_n = n_given ? n : int64_t(1) << 26;
    int64_t most = csweep ? sweep_n : 0;
    for (const Problem& p : problems) most = std::max(most, p.n);
    common::require_device_memory("distributed_smem", 4.0 * double(most) + 64.0 * double(bins) * 4.0 + (64 << 20));

    common::Report report("GB/s", "cub", {"bins", "dist", "cluster"});
    bool ok = true;
    if (csweep) {
        common::Report cr("GB/s", "cub", {"bins", "cluster"});
        if (!caps.clusters()) { std::printf("WAIVED: --cluster-sweep needs thread-block clusters (cc 9.0)\n"); return 77; }
        ok &= cluster_sweep(opt, caps, cr, sweep_n);
        if (!opt.csv.empty()) {
            common::Metadata meta = common::run_metadata(dev, cli.command_line());
            meta.push_back({"bytes_model", "n * 4 (each sample read once)"});
            meta.push_back({"peer", "cub::DeviceHistogram::HistogramEven in the same run"});
            cr.write_csv(opt.csv, meta);
        }
        std::printf("\n%s\n", ok ? "PASS" : "FAIL");
        return ok ? 0 : 1;
    }
    for (const Problem& p : problems) ok &= run_problem(p, opt, caps, report);
    if (!opt.sweep && opt.kernel.empty()) {
        common::CommonOptions quick = opt;
        quick.csv.clear();  // the histogram's CSV is written below
        ok &= distributed_smem::sync::run_sync_quick(dev, quick);
    }
    if (!opt.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, cli.command_line());
        meta.push_back({"default_problem", Problem{int64_t(1) << 28, int64_t(1) << 17, false}.name()});
        meta.push_back({"bytes_model", "n * 4 (each sample read once)"});
        meta.push_back({"peer", "cub::DeviceHistogram::HistogramEven in the same run (pct_of_cub = CUB time / kernel time)"});
        report.write_csv(opt.csv, meta);
    }
    std::printf("\n%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
