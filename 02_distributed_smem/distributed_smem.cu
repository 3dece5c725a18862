// distributed_smem.cu - a histogram from global atomics to thread-block
// clusters, checked against the CPU and timed against cub::DeviceHistogram.
// (Seed 000, whose kernel it starts from: the top README's Sources section.)
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
// or small next to the samples). Each kernel's first launch is checked and
// timed once; the median of --reps follows, fewer when they would take over
// 1.5 s (the common rule, common/timer.cuh; "[reps N]" in the launch column).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>
#include <cub/device/device_histogram.cuh>
#include "02_distributed_smem/distributed_smem.cuh"
#include "02_distributed_smem/micro.cuh"
#include "02_distributed_smem/sync.cuh"
#include "common/buffer.cuh"
#include "common/cli.hpp"
#include "common/device.cuh"
#include "common/kernel_list.hpp"
#include "common/launch.cuh"
#include "common/report.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"

namespace {

using namespace distributed_smem;

struct Problem {
    int64_t n;
    int num_bins;
    bool skewed;
    std::string name() const {
        std::string ns = std::to_string(n);
        for (int k = 10; k < 40; ++k) if (n == (int64_t(1) << k)) ns = "2^" + std::to_string(k);
        return "n=" + ns + " bins=" + std::to_string(num_bins) + (skewed ? " skewed" : " uniform");
    }
};

double gbps(int64_t n, double ms) { return double(n) * 4.0 / (ms * 1e6); }

// The median of opt.reps launches after the first (already timed, `once_ms`),
// under the common rule; `timing` receives how it was timed.
template <class F>
double timed(F&& f, double once_ms, const common::CommonOptions& opt, common::RepsPlan* timing) {
    const common::Timing t = common::time_kernel(f, once_ms, int(opt.warmup), int(opt.reps));
    *timing = t.plan;
    return t.ms;
}

// cub::DeviceHistogram::HistogramEven with levels 0..num_bins, its temporary storage allocated
// once, before anything is timed.
struct Cub {
    size_t bytes = 0;
    void* temp = nullptr;
    const int* in;
    unsigned* hist;
    int64_t n;
    int num_bins;
    Cub(const int* in_, unsigned* hist_, int64_t n_, int num_bins_) : in(in_), hist(hist_), n(n_), num_bins(num_bins_) {
        CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, in, hist, num_bins + 1, 0, num_bins, n));
        CHECK(cudaMalloc(&temp, bytes));
    }
    ~Cub() { cudaFree(temp); }
    Cub(const Cub&) = delete;
    Cub& operator=(const Cub&) = delete;
    void run() { CHECK(cub::DeviceHistogram::HistogramEven(temp, bytes, in, hist, num_bins + 1, 0, num_bins, n)); }
};

// Checks the kernel on a small input with 1% of its samples out of range: the timed inputs are
// all in range (where CUB, which drops such samples, computes the same thing), this is the clamp.
bool clamp_check(const Plan& p, int num_bins, bool skewed, uint64_t seed) {
    const size_t n = 100003;
    std::vector<int> in;
    std::vector<unsigned> ref, got;
    make_samples(in, n, num_bins, skewed, 0.01, seed + 17);
    histogram_cpu(in.data(), n, num_bins, ref);
    common::DeviceBuffer<int> d_in(n);
    common::DeviceBuffer<unsigned> d_out{size_t(num_bins)};
    d_in.upload(in);
    d_out.poison();
    CHECK(launch(p, d_in.get(), n, d_out.get(), num_bins));
    CHECK(cudaDeviceSynchronize());
    d_out.download(got);
    return common::compare(got.data(), ref.data(), size_t(num_bins)).pass();
}

// The goal lines printed under a problem, from its rows (the ratios the chapter
// is judged by: README, "Against the goals").
void print_goal(const common::Report& report, const std::string& problem, int num_bins, double cub_ms,
                double atomics_ms, const common::Gpu& g) {
    const common::Row* best = nullptr;
    const common::Row* rule = nullptr;
    for (const common::Row& r : report.rows()) {
        if (r.problem != problem || r.kernel.rfind("cluster", 0) != 0 || r.result != "PASS") continue;
        if (!best || r.ms < best->ms) best = &r;
        if (r.kernel == "clusterHistBest") rule = &r;
    }
    if (best) std::printf("fastest clusterHist* kernel here: %s, %.2f x CUB\n", best->kernel.c_str(), cub_ms / best->ms);
    if (!rule) return;
    const double x_cub = cub_ms / rule->ms;
    const bool atomics_ran = atomics_ms > 0;  // not with --kernel clusterHistBest
    const double x_atom = atomics_ran ? atomics_ms / rule->ms : 0;
    if (atomics_ran) std::printf("clusterHistBest: %.2f x CUB, %.2f x histGlobalAtomics; goal: ", x_cub, x_atom);
    else std::printf("clusterHistBest: %.2f x CUB, histGlobalAtomics not run; goal: ", x_cub);
    if (num_bins > bins_per_block(g)) {
        std::printf(">= 3 x atomics and >= 1.5 x CUB (bins beyond one block): %s\n",
                    !atomics_ran ? "not judged (histGlobalAtomics not run)"
                                 : x_atom >= 3 && x_cub >= 1.5 ? "met" : "NOT met");
    } else if (num_bins >= 4096) {
        std::printf(">= 2 x CUB (4096..65536 bins): %s\n", x_cub >= 2 ? "met" : "NOT met");
    } else {
        std::printf(">= 1 x CUB: %s\n", x_cub >= 1 ? "met" : "NOT met");
    }
}

// One problem: CUB, then every selected kernel, each checked on its first
// (timed) launch and on the clamp, then timed.
bool run_problem(const Problem& pb, const common::CommonOptions& opt, const common::Gpu& g, common::Report& report) {
    const size_t n = size_t(pb.n);
    const int num_bins = pb.num_bins;
    std::vector<int> in;
    std::vector<unsigned> ref, got;
    make_samples(in, n, num_bins, pb.skewed, 0.0, uint64_t(opt.seed));
    histogram_cpu(in.data(), n, num_bins, ref);
    common::DeviceBuffer<int> d_in(n);
    common::DeviceBuffer<unsigned> d_out{size_t(num_bins)};
    d_in.upload(in);
    const std::string problem = pb.name();
    report.section(problem + " (" + common::human_bytes(4.0 * n) + " of samples), median of " +
                   std::to_string(opt.reps));

    auto check = [&](const std::string& name) {
        d_out.download(got);
        const common::Comparison c = common::compare(got.data(), ref.data(), size_t(num_bins));
        if (!c.pass()) std::printf("  %s: %s\n", name.c_str(), common::describe(c, got.data(), ref.data()).c_str());
        return c;
    };
    auto extra = [&](int cluster) {
        return std::vector<std::string>{std::to_string(num_bins), pb.skewed ? "skewed" : "uniform",
                                        std::to_string(cluster)};
    };

    Cub cub(d_in.get(), d_out.get(), pb.n, num_bins);
    d_out.poison();
    const double cub_once = common::time_once_ms([&] { cub.run(); });
    common::Comparison c = check("cub::DeviceHistogram");
    common::RepsPlan timing;
    const double cub_ms = timed([&] { cub.run(); }, cub_once, opt, &timing);
    report.add({problem, double(num_bins), "cub::DeviceHistogram", "HistogramEven" + common::reps_note(timing), cub_ms,
                gbps(pb.n, cub_ms), 100.0, c.max_abs_err, c.pass() ? "PASS" : "FAIL", extra(0)});
    bool ok = c.pass();

    double atomics_ms = -1;
    for (const Variant& v : kernels()) {
        if (!opt.kernel.empty() && opt.kernel != v.name) continue;
        const Plan p = make_plan(v, num_bins, g);
        if (!p.ok) {
            std::printf("%-28s %s\n", v.name, p.why_not.c_str());
            if (p.why_not.rfind("WAIVED", 0) == 0) common::note_waived(v.name);
            continue;
        }
        auto run = [&] { CHECK(launch(p, d_in.get(), n, d_out.get(), num_bins)); };
        common::note_ran(v.name);  // (a fast kernel below 9.0 runs where the bins fit one block, not past it)
        d_out.poison();
        const double once = common::time_once_ms(run);
        c = check(v.name);
        const bool clamp_ok = clamp_check(p, num_bins, pb.skewed, uint64_t(opt.seed));
        if (!clamp_ok) std::printf("  %s: wrong counts with out-of-range samples (clamping)\n", v.name);
        const double ms = timed(run, once, opt, &timing);
        if (v.algo == Algo::Global) atomics_ms = ms;
        report.add({problem, double(num_bins), v.name, p.describe() + common::reps_note(timing), ms, gbps(pb.n, ms),
                    100.0 * cub_ms / ms, c.max_abs_err, c.pass() && clamp_ok ? "PASS" : "FAIL", extra(p.cluster)});
        ok &= c.pass() && clamp_ok;
    }
    print_goal(report, problem, num_bins, cub_ms, atomics_ms, g);
    return ok;
}

// --cluster-sweep: for bins from 256 to the largest a 16-block cluster holds,
// the seed's kernel and the fast ones at every cluster size.
bool cluster_sweep(const common::CommonOptions& opt, const common::Gpu& g, common::Report& report, int64_t n) {
    std::vector<int> bin_counts = {256, 1024, 4096, 16384, 32768, 65536, 131072, 262144, 524288};
    const int largest = largest_cluster_bins(g);
    while (!bin_counts.empty() && bin_counts.back() > largest) bin_counts.pop_back();
    if (largest > bin_counts.back()) bin_counts.push_back(largest);
    bool ok = true;
    std::vector<Variant> sweep;
    for (const char* name : {"clusterHist_c1", "clusterHistVec4", "clusterHistVec4Agg", "clusterHistSliced",
                             "clusterHistExchange"})
        sweep.push_back(common::kernel_named(kernels(), name));
    for (int num_bins : bin_counts) {
        const Problem pb{n, num_bins, false};
        std::vector<int> in;
        std::vector<unsigned> ref, got;
        make_samples(in, size_t(n), num_bins, false, 0.0, uint64_t(opt.seed));
        histogram_cpu(in.data(), size_t(n), num_bins, ref);
        common::DeviceBuffer<int> d_in{size_t(n)};
        common::DeviceBuffer<unsigned> d_out{size_t(num_bins)};
        d_in.upload(in);
        auto check = [&] {
            d_out.download(got);
            return common::compare(got.data(), ref.data(), size_t(num_bins));
        };
        const std::string problem = "bins=" + std::to_string(num_bins);
        report.section(pb.name() + ": every cluster size");
        Cub cub(d_in.get(), d_out.get(), n, num_bins);
        d_out.poison();
        const double cub_once = common::time_once_ms([&] { cub.run(); });
        const common::Comparison cub_cmp = check();
        common::RepsPlan timing;
        const double cub_ms = timed([&] { cub.run(); }, cub_once, opt, &timing);
        report.add({problem, double(num_bins), "cub::DeviceHistogram", "HistogramEven" + common::reps_note(timing),
                    cub_ms, gbps(n, cub_ms), 100.0, cub_cmp.max_abs_err, cub_cmp.pass() ? "PASS" : "FAIL",
                    {std::to_string(num_bins), "0"}});
        ok &= cub_cmp.pass();
        for (const Variant& v : sweep)
            for (int c = 1; c <= 16; c *= 2) {
                const Plan p = make_plan(v, num_bins, g, c);
                if (!p.ok) continue;
                auto run = [&] { CHECK(launch(p, d_in.get(), size_t(n), d_out.get(), num_bins)); };
                d_out.poison();
                const double once = common::time_once_ms(run);
                const common::Comparison cmp = check();
                const double ms = timed(run, once, opt, &timing);
                report.add({problem, double(num_bins), v.name == std::string("clusterHist_c1") ? "clusterHist" : v.name,
                            p.describe() + common::reps_note(timing), ms, gbps(n, ms), 100.0 * cub_ms / ms,
                            cmp.max_abs_err, cmp.pass() ? "PASS" : "FAIL", {std::to_string(num_bins), std::to_string(c)}});
                ok &= cmp.pass();
            }
    }
    return ok;
}

// --pitfalls: clusterHist without its second cluster.sync(), repeated: how often are the counts wrong?
// Its result is printed, never part of the exit code.
void run_pitfalls(const common::CommonOptions& opt, const common::Gpu& g) {
    std::printf("\nPitfall: clusterHistNoFinalSync (the seed's second cluster.sync() left out), 20 runs each\n");
    const int64_t n = int64_t(1) << 24;
    for (int num_bins : {4096, 1 << 17}) {
        for (bool skewed : {false, true}) {
            std::vector<int> in;
            std::vector<unsigned> ref, got;
            make_samples(in, size_t(n), num_bins, skewed, 0.0, uint64_t(opt.seed));
            histogram_cpu(in.data(), size_t(n), num_bins, ref);
            common::DeviceBuffer<int> d_in{size_t(n)};
            common::DeviceBuffer<unsigned> d_out{size_t(num_bins)};
            d_in.upload(in);
            for (const Variant& v : pitfalls()) {
                if (opt.kernel.rfind("clusterHistNoFinalSync", 0) == 0 && opt.kernel != v.name) continue;
                const Plan p = make_plan(v, num_bins, g);
                if (!p.ok) { std::printf("  %s: %s\n", v.name, p.why_not.c_str()); continue; }
                int wrong = 0;
                double lost = 0;
                const int trials = 20;
                for (int t = 0; t < trials; ++t) {
                    d_out.poison();
                    CHECK(launch(p, d_in.get(), size_t(n), d_out.get(), num_bins));
                    CHECK(cudaDeviceSynchronize());
                    d_out.download(got);
                    const common::Comparison cmp = common::compare(got.data(), ref.data(), size_t(num_bins));
                    wrong += !cmp.pass();
                    double sum = 0;
                    for (unsigned x : got) sum += x;
                    lost += double(n) - sum;
                }
                std::printf("  %-28s n=2^24 bins %7d %-7s: %2d of %d runs wrong, %.1f samples lost per run on average\n",
                            v.name, num_bins, skewed ? "skewed" : "uniform", wrong, trials, lost / trials);
            }
        }
    }
    std::printf("(clusterHist, with both cluster.sync() calls, runs in every default run and test: always exact)\n");
}

// Runs `child` in a forked process and returns its exit status (or 128 + the
// signal that ended it). Called before this process makes any CUDA call: a
// CUDA context does not survive fork(), so every CUDA call happens in a child.
template <class F>
int in_child_process(F&& child) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        child();
        std::fflush(stdout);
        std::_Exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// --pitfalls (without --sync): each pitfall in a child process of its own, since a pitfall may kill
// its CUDA context (a write into an exited block's shared memory faults, and such an error is
// sticky): none of them sets this process's exit code. A first child checks the device, so that a
// machine without one prints WAIVED once (and this process exits 77, or 2 for a bad --device),
// and runs `refusals`, the command line's checks against this device (exit 2 before any GPU work).
template <class Refusals>
void run_pitfalls_in_children(const common::CommonOptions& opt, Refusals&& refusals) {
    constexpr int kNoClusters = 3;  // the first child's answer: a device, but no clusters here
    const int probe = in_child_process([&] {
        common::require_device(int(opt.device));  // exits 77 or 2 itself
        refusals(common::gpu());                   // exits 2 itself
        if (const std::string why = cluster_refusal(common::gpu()); !why.empty()) {
            std::printf("\npitfalls: WAIVED (%s)\n", why.c_str());
            std::fflush(stdout);
            std::_Exit(kNoClusters);
        }
    });
    if (probe == common::kExitWaived || probe == 2) std::exit(probe);
    if (probe == kNoClusters) return;
    for (const Variant& v : pitfalls()) {
        if (opt.kernel.rfind("clusterHistNoFinalSync", 0) == 0 && opt.kernel != v.name) continue;
        const int status = in_child_process([&] {
            common::CommonOptions one = opt;
            one.kernel = v.name;
            common::require_device(int(opt.device));
            run_pitfalls(one, common::gpu());
        });
        if (status != 0)
            std::printf("  %s: the process ended with %s %d (the CUDA error above is how it fails)\n", v.name,
                        status > 128 ? "signal" : "exit status", status > 128 ? status - 128 : status);
    }
}

}  // namespace

int main(int argc, char** argv) {
    int64_t n = int64_t(1) << 28, bins_option = int64_t(1) << 17;
    std::string dist = "uniform";
    bool micro = false, cluster_sweep_mode = false, show_pitfalls = false, sync_part = false;
    common::CommonOptions opt;
    const std::string summary =
        "Histogram of n int samples into `bins` counters (out-of-range samples clamped to the first/last bin,\n"
        "as seed 000 does), every kernel checked against the CPU (exact counts) and timed against\n"
        "cub::DeviceHistogram::HistogramEven in the same run. GB/s = n * 4 bytes / median time.\n"
        "The timed samples lie in [0, bins), where CUB (which drops out-of-range samples) and the seed's\n"
        "clamp agree; each kernel's clamping is checked separately on 100003 samples, 1% out of range.\n"
        "Kernels, in teaching order:" +
        common::kernel_list_text(kernels(), pitfalls());
    common::Cli cli("distributed_smem", summary);
    cli.option("n", &n, "samples (int32; at most 2^32 - 1 so a 32-bit count cannot wrap)", 1, kMaxSamples)
        .option("bins", &bins_option, "histogram bins (at most what one pass of a cluster counts: 2^20 on an H200)", 1,
                kMaxBins)
        .option("dist", &dist, "sample distribution: uniform, or skewed (90% in 8 bins)", {"uniform", "skewed"})
        .flag("cluster-sweep", &cluster_sweep_mode,
              "every cluster size for bins 256 .. the largest (n = --n, default 2^26 there)")
        .flag("micro", &micro, "micro-benchmarks: DSMEM latency, bandwidth, atomics, cluster.sync()")
        .flag("pitfalls", &show_pitfalls, "run the seed's pitfall: clusterHist without the second cluster.sync()")
        .flag("sync", &sync_part, "part 2: synchronization beyond one block (barriers, fences, volatile)");
    common::add_common_options(cli, opt, common::kernel_names(kernels(), pitfalls()));
    cli.mode("", common::timed_options({"n", "bins", "dist", "pitfalls"}))
        .mode("sweep", common::timed_options({"pitfalls"}))
        .mode("cluster-sweep", {"n", "reps", "warmup", "seed", "device", "csv"})
        .mode("micro", {"reps", "warmup", "seed", "device", "csv"})
        .mode("sync", {"pitfalls", "reps", "seed", "device", "csv"});
    cli.parse_or_exit(argc, argv);
    cli.fail_if(common::pitfall_refusal(opt.kernel, pitfalls(), show_pitfalls));
    cli.fail_if(bins_problem(bins_option));
    const int num_bins = int(bins_option);  // checked: the one conversion of the bin count

    const int64_t sweep_n = cli.given("n") ? n : int64_t(1) << 26;
    // The problems this command line asks of GPU g, or exit 2 where g cannot take them: --bins
    // past what one pass of its largest cluster counts, more memory than it (or this host) has.
    auto plan = [&](const common::Gpu& g) {
        const int largest = largest_cluster_bins(g), one_pass = largest_one_pass_bins(g);
        if (one_pass > 0 && num_bins > one_pass)
            cli.fail("--bins " + std::to_string(num_bins) + ": one pass of the largest cluster this device runs (" +
                     std::to_string(largest / bins_per_block(g)) + " blocks of " +
                     std::to_string(g.smem_per_block / 1024) + " KB) counts at most " + std::to_string(one_pass) +
                     " bins");
        std::vector<Problem> problems;
        if (opt.sweep) {
            for (int b : {256, 4096, 16384, 65536, 1 << 17, 1 << 19})
                for (bool s : {false, true}) problems.push_back({int64_t(1) << 28, b, s});
            problems.push_back({99999989, 65537, false});  // odd n, one bin past a power of two
            // The top: clusterHist's largest cluster, an odd count, 2^20 (16-bit counters on the H200).
            for (int b : {largest, 1000003, 1 << 20})
                if (largest > 0 && b <= one_pass)
                    for (bool s : {false, true}) problems.push_back({int64_t(1) << 28, b, s});
        } else if (!cluster_sweep_mode && !micro) {
            problems.push_back({n, num_bins, dist == "skewed"});
        }
        int64_t most = cluster_sweep_mode ? sweep_n : 0;
        for (const Problem& p : problems) most = std::max(most, p.n);
        if (!micro) {
            common::require_host_memory("distributed_smem", 4.0 * double(most) + 8.0 * double(num_bins));  // input, ref, result
            common::require_device_memory("distributed_smem",
                                          4.0 * double(most) + 64.0 * double(num_bins) * 4.0 + (64 << 20));
        }
        return problems;
    };

    if (show_pitfalls && !sync_part) run_pitfalls_in_children(opt, plan);
    const common::DeviceInfo dev = common::require_device(int(opt.device));
    common::print_device_header(dev);
    if (sync_part) return distributed_smem::sync::run_sync_part(dev, opt, show_pitfalls, cli.command_line()) ? 0 : 1;
    const common::Gpu& g = common::gpu();
    const std::vector<Problem> problems = plan(g);
    const std::string no_clusters = cluster_refusal(g);
    if (!no_clusters.empty())
        std::printf("note: the cluster launches print WAIVED: %s (the fast kernels still run where the bins fit one "
                    "block: C = 1, a plain launch)\n", no_clusters.c_str());

    if (micro) {
        if (!no_clusters.empty()) { std::printf("WAIVED: --micro measures thread-block clusters: %s\n", no_clusters.c_str()); return 77; }
        return distributed_smem::micro::run_micro_benchmarks(dev, opt, cli.command_line()) ? 0 : 1;
    }

    common::Report report("GB/s", "cub", {"bins", "dist", "cluster"});
    bool ok = true;
    if (cluster_sweep_mode) {
        common::Report cr("GB/s", "cub", {"bins", "cluster"});
        if (!no_clusters.empty()) { std::printf("WAIVED: --cluster-sweep: %s\n", no_clusters.c_str()); return 77; }
        ok &= cluster_sweep(opt, g, cr, sweep_n);
        if (!opt.csv.empty()) {
            common::Metadata meta = common::run_metadata(dev, cli.command_line());
            meta.push_back({"bytes_model", "n * 4 (each sample read once)"});
            meta.push_back({"peer", "cub::DeviceHistogram::HistogramEven in the same run"});
            cr.write_csv(opt.csv, meta);
        }
        std::printf("\n%s\n", ok ? "PASS" : "FAIL");
        return ok ? 0 : 1;
    }
    for (const Problem& p : problems) ok &= run_problem(p, opt, g, report);
    if (!opt.sweep && opt.kernel.empty()) {
        common::CommonOptions quick = opt;
        quick.csv.clear();  // the histogram's CSV is written below
        ok &= distributed_smem::sync::run_sync_quick(dev, quick);
    }
    if (!opt.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, cli.command_line());
        meta.push_back({"default_problem", Problem{int64_t(1) << 28, 1 << 17, false}.name()});
        meta.push_back({"bytes_model", "n * 4 (each sample read once)"});
        meta.push_back({"peer", "cub::DeviceHistogram::HistogramEven in the same run (pct_of_cub = CUB time / kernel time)"});
        report.write_csv(opt.csv, meta);
    }
    return common::finish(ok, opt.kernel);
}
