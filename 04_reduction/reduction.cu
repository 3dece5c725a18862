// reduction.cu - sums n values with every kernel of the chapter, checks each
// against the CPU and times it against cub::DeviceReduce::Sum.
//
//   ./reduction                          2^28 ints (1 GiB), every kernel and CUB
//   ./reduction --type float --n 1048576 any type (int, float, double) and size
//   ./reduction --toy                    the seeds' 8-element example, step by step
//   ./reduction --accuracy --n 100000000 float accuracy and determinism table
//   ./reduction --final                  where the final sum happens, and its cost
//   ./reduction --pitfalls --n 100003    the seeds' bugs, and how they fail
//   ./reduction --sweep --csv 04_reduction/results/h200.csv
//
// Under each table: the read ceiling (steps/read_ceiling.cuh: plain 16-byte
// loads, timed in the same run), best / CUB and best / read ceiling.
//
// Throughput = n * sizeof(T) / time: every element read once; the one-value
// output is negligible. Each time covers the whole operation, from the input
// to the sum in device memory (both launches of a two-kernel reduction, the
// memset an atomic one needs), exactly as CUB's is timed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>
#include <cub/cub.cuh>
#include "04_reduction/reduction.cuh"
#include "common/buffer.cuh"
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/kernel_list.hpp"
#include "common/launch.cuh"
#include "common/report.hpp"
#include "common/stats.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"

namespace {

using namespace reduction;

// cub::DeviceReduce::Sum with its temporary storage sized once, outside the timing.
template <class T>
struct Cub {
    size_t temp_bytes = 0;
    void* temp = nullptr;
    const T* in;
    size_t n;
    T* out;
    Cub(const T* in_, size_t n_, T* out_) : in(in_), n(n_), out(out_) {
        run(nullptr);  // size query
        CHECK(cudaMalloc(&temp, temp_bytes ? temp_bytes : 1));
    }
    ~Cub() { cudaFree(temp); }
    Cub(const Cub&) = delete;  // one owner of `temp`
    Cub& operator=(const Cub&) = delete;
    void run(void* t) {
        if (n <= size_t(INT32_MAX))  // 32-bit offsets where they fit, as a user would call it
            CHECK(cub::DeviceReduce::Sum(t, temp_bytes, in, out, int(n)));
        else
            CHECK(cub::DeviceReduce::Sum(t, temp_bytes, in, out, int64_t(n)));
    }
    void operator()() { run(temp); }
};

template <class T> const char* type_name();
template <> const char* type_name<int>() { return "int"; }
template <> const char* type_name<float>() { return "float"; }
template <> const char* type_name<double>() { return "double"; }

std::string size_label(size_t n) {
    for (int k = 0; k < 63; ++k)
        if (n == size_t(1) << k) return "2^" + std::to_string(k);
    return std::to_string(n);
}

// Seeded input: ints in [-100, 100] (their sum is exact in int64 and its
// 32-bit wrap is what the GPU computes), floats and doubles in [-1, 1).
template <class T>
std::vector<T> make_input(size_t n, uint64_t seed) {
    std::vector<T> x(n);
    if constexpr (std::is_integral_v<T>) common::fill_uniform(x.data(), n, seed, T(-100), T(100));
    else common::fill_uniform(x.data(), n, seed, T(-1), T(1));
    return x;
}

// The expected sum and the allowed error (0 for int).
template <class T>
struct Expected {
    double value = 0;
    double tol = 0;
};
template <class T>
Expected<T> expected_sum(const std::vector<T>& x) {
    if constexpr (std::is_integral_v<T>) {
        return {double(reference_int(x.data(), x.size())), 0.0};
    } else {
        const Reference r = reference_float(x.data(), x.size());
        return {double(r.sum), tolerance<T>(x.size(), r.sum_abs)};
    }
}

template <class T>
T download_out(const Workspace<T>& ws) {
    T v;
    CHECK(cudaMemcpy(&v, ws.out, sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}

// Poison the result and the partial sums, run once, return the result; the
// launch configuration and the launch's time (events) if asked for. Callers
// ask waiver() first; a launcher that still refuses (returns "": nothing ran)
// has no result to check or time, so the program stops there (exit 1).
template <class T>
T run_once(const Kernel<T>& k, const T* in, size_t n, Workspace<T>& ws, std::string* launch,
           double* once_ms = nullptr) {
    ws.poison();
    if (k.in_place) restore_work(in, n, ws);
    CHECK(cudaDeviceSynchronize());
    std::string l;
    const double ms = common::time_once_ms([&] { l = k.launch(in, n, ws); });
    if (l.empty()) {
        std::fprintf(stderr, "%s: the launcher refused n = %zu where waiver() did not (nothing launched)\n", k.name, n);
        std::exit(1);
    }
    if (launch) *launch = l;
    if (once_ms) *once_ms = ms;
    CHECK(cudaDeviceSynchronize());
    return download_out(ws);
}

template <class T>
bool within(T got, const Expected<T>& e) {
    if constexpr (std::is_integral_v<T>) return double(got) == e.value;
    else return !std::isnan(got) && std::fabs(double(got) - e.value) <= e.tol;
}

// Every selected kernel and CUB on one n; false if any failed.
template <class T>
bool run_size(size_t n, const common::CommonOptions& opt, common::Report& report) {
    const std::string problem = std::string(type_name<T>()) + " " + size_label(n);
    const std::vector<T> x = make_input<T>(n, uint64_t(opt.seed));
    const Expected<T> e = expected_sum(x);
    common::DeviceBuffer<T> d_in(n);
    d_in.upload(x);
    Workspace<T> ws(n);
    report.section(problem + " (" + common::human_bytes(double(n) * sizeof(T)) + " read), median of " +
                   std::to_string(opt.reps) + (std::is_integral_v<T> ? ", exact" : ", tolerance " +
                   common::fmt("%.3g", e.tol)));

    auto add_row = [&](const char* name, const std::string& launch, T got, double ms, double cub_ms) {
        const bool ok = within(got, e);
        const double err = std::fabs(double(got) - e.value);
        if (!ok) std::printf("  %s: got %.17g, expected %.17g\n", name, double(got), e.value);
        report.add({problem, double(n), name, launch, ms, double(n) * sizeof(T) / (ms * 1e6),
                    cub_ms > 0 ? 100.0 * cub_ms / ms : -1, std::isnan(err) ? INFINITY : err, ok ? "PASS" : "FAIL", {}});
        return ok;
    };

    // Every timing follows the common rule (common/timer.cuh): the checked
    // launch is timed once, and a kernel whose --reps launches would take
    // over 1.5 s gets as many as fit, no warm-up, and " [reps N]" in its
    // launch column. The peer is timed before the kernels and again after
    // them, and the faster of the two medians is the baseline: the first
    // timing can catch the GPU still raising its clocks, and that must not
    // flatter the kernels.
    Cub<T> cub(d_in.get(), n, ws.out);
    ws.poison_result();
    const double cub_once = common::time_once_ms(cub);
    CHECK(cudaDeviceSynchronize());
    const T cub_got = download_out(ws);
    const common::Timing cub_first = common::time_kernel(cub, cub_once, int(opt.warmup), int(opt.reps));

    struct Timed { const char* name; std::string launch; T got; double ms; };
    std::vector<Timed> timed;
    std::vector<std::string> waived;
    for (const Kernel<T>& k : kernels<T>()) {
        if (!opt.kernel.empty() && opt.kernel != k.name) continue;
        const std::string why = waiver(k);
        if (!why.empty()) {
            waived.push_back(std::string(k.name) + ": WAIVED: " + why);
            common::note_waived(k.name);
            continue;
        }
        std::string launch;
        double once_ms = 0;
        const T got = run_once(k, d_in.get(), n, ws, &launch, &once_ms);
        const common::Timing t = common::time_kernel([&] { k.launch(d_in.get(), n, ws); }, once_ms, int(opt.warmup),
                                                     int(opt.reps), [&] { if (k.in_place) restore_work(d_in.get(), n, ws); });
        timed.push_back({k.name, launch + common::reps_note(t.plan), got, t.ms});
    }
    // The read ceiling: plain 16-byte loads over the same input (steps/read_ceiling.cuh).
    std::string ceiling_launch;
    const double ceiling_once = common::time_once_ms([&] { ceiling_launch = launch_read_ceiling(d_in.get(), n, ws); });
    const common::Timing ceiling =
        common::time_kernel([&] { launch_read_ceiling(d_in.get(), n, ws); }, ceiling_once, int(opt.warmup), int(opt.reps));
    const common::Timing cub_again = common::time_kernel(cub, cub_once, int(opt.warmup), int(opt.reps));
    const common::Timing& cub_t = cub_again.ms < cub_first.ms ? cub_again : cub_first;
    const double cub_ms = cub_t.ms;
    bool ok = add_row("cub::DeviceReduce::Sum", "2 kernels" + common::reps_note(cub_t.plan), cub_got, cub_ms, cub_ms);
    const Timed* best = nullptr;
    for (const Timed& t : timed) {
        ok &= add_row(t.name, t.launch, t.got, t.ms, cub_ms);
        if (!best || t.ms < best->ms) best = &t;
    }
    for (const std::string& w : waived) std::printf("%s\n", w.c_str());
    const double ceiling_gbs = double(ceiling_bytes<T>(n)) / (ceiling.ms * 1e6);
    std::printf("read ceiling (16-byte loads, %d in flight per thread, %s%s): %.1f GB/s\n", kCeilingUnroll,
                ceiling_launch.c_str(), common::reps_note(ceiling.plan).c_str(), ceiling_gbs);
    if (best) {
        const double best_gbs = double(n) * sizeof(T) / (best->ms * 1e6);
        std::printf("best %s / CUB at %s: %.3f (goal >= 1.00)\n", best->name, problem.c_str(), cub_ms / best->ms);
        if (ceiling_gbs > 0)  // under 16 bytes of input the ceiling reads nothing
            std::printf("best %s / read ceiling at %s: %.3f\n", best->name, problem.c_str(), best_gbs / ceiling_gbs);
    }
    return ok;
}

// --toy: seed 002's 8 numbers, one block of 4 threads, each halving step.
template <class T>
bool run_toy() {
    const int n = 8;
    std::vector<T> x(n);
    for (int i = 0; i < n; ++i) x[i] = T(i + 1);
    const auto want = toy_steps_cpu(x);
    const std::vector<T> hist = toy_steps_gpu(x);
    std::printf("\ntoy (seed 002): %d %s values, one block of %d threads, in place; step k adds x[t + offset] into x[t]\n",
                n, type_name<T>(), n / 2);
    auto show = [&](const char* label, const T* v, int live) {
        std::printf("  %-11s", label);
        for (int i = 0; i < n; ++i) std::printf(i < live ? " %6g" : "  (%g)", double(v[i]));
        std::printf("\n");
    };
    show("start", x.data(), n);
    bool ok = true;
    int live = n;
    for (size_t s = 0; s < want.size(); ++s) {
        live /= 2;
        const std::string label = "offset " + std::to_string(live);
        show(label.c_str(), &hist[s * n], live);
        ok &= std::equal(want[s].begin(), want[s].end(), hist.begin() + s * n);
    }
    std::printf("  the values in parentheses are stale: no thread reads them again. x[0] = %g (%s)\n",
                double(hist[(want.size() - 1) * n]), ok ? "matches the CPU" : "DIFFERS from the CPU");
    return ok;
}

// --pitfalls: the seeds' bugs at --n; each is shown as right or wrong.
template <class T>
void run_pitfalls(size_t n, const common::CommonOptions& opt) {
    const std::vector<T> x = make_input<T>(n, uint64_t(opt.seed));
    const Expected<T> e = expected_sum(x);
    common::DeviceBuffer<T> d_in(n);
    d_in.upload(x);
    Workspace<T> ws(n);
    std::printf("\npitfalls at %s %s (never in the default run; these results do not set the exit code)\n",
                type_name<T>(), size_label(n).c_str());
    for (const Kernel<T>& k : pitfalls<T>()) {
        if (!opt.kernel.empty() && opt.kernel != k.name) continue;
        const std::string why = waiver(k);
        if (!why.empty()) {
            std::printf("  %-22s WAIVED: %s\n", k.name, why.c_str());
            continue;
        }
        std::string launch;
        scribble_shared<T>();  // stale, non-zero shared memory, as a long-running program would leave it
        const T got = run_once(k, d_in.get(), n, ws, &launch);
        std::printf("  %-22s %-26s got %-14.8g expected %-14.8g %s\n    %s\n", k.name, launch.c_str(), double(got),
                    e.value, within(got, e) ? "right this time" : "WRONG", k.what);
    }
}

// --accuracy: float sums (1.23 repeated, uniform [0, 1)), relative error
// against the long-double reference, and bit-identity over repeated runs.
struct AccRow { std::string method; double err_const, err_uniform; std::string identical; };

void run_accuracy(size_t n, const common::CommonOptions& opt, const common::DeviceInfo& dev,
                  const std::string& command_line) {
    const int runs = 10;
    std::vector<float> data[2] = {std::vector<float>(n, 1.23f), std::vector<float>(n)};
    common::fill_uniform(data[1].data(), n, uint64_t(opt.seed), 0.0f, 1.0f);
    long double ref[2];
    for (int d = 0; d < 2; ++d) ref[d] = reference_float(data[d].data(), n).sum;
    auto rel = [&](double got, int d) { return std::fabs(got - double(ref[d])) / std::fabs(double(ref[d])); };

    std::vector<AccRow> rows;
    auto cpu = [&](const char* name, float (*f)(const float*, size_t)) {
        rows.push_back({name, rel(f(data[0].data(), n), 0), rel(f(data[1].data(), n), 1), "yes (one order)"});
    };
    cpu("CPU float, sequential loop", sum_sequential);
    cpu("CPU float, Kahan", sum_kahan);
    cpu("CPU float, pairwise", sum_pairwise);
    {
        double s[2] = {0, 0};
        for (int d = 0; d < 2; ++d) for (float v : data[d]) s[d] += v;
        rows.push_back({"CPU double, sequential loop", rel(s[0], 0), rel(s[1], 1), "yes (one order)"});
    }

    common::DeviceBuffer<float> d_in[2] = {common::DeviceBuffer<float>(n), common::DeviceBuffer<float>(n)};
    for (int d = 0; d < 2; ++d) d_in[d].upload(data[d]);
    Workspace<float> ws(n);
    // Runs `launch` `runs` times on each data set: error of the first, distinct bit patterns.
    auto gpu = [&](const std::string& name, auto&& launch_once) {
        double err[2];
        std::set<uint32_t> distinct[2];
        for (int d = 0; d < 2; ++d)
            for (int r = 0; r < runs; ++r) {
                const float got = launch_once(d_in[d].get());
                uint32_t bits;
                std::memcpy(&bits, &got, 4);
                distinct[d].insert(bits);
                if (r == 0) err[d] = rel(got, d);
            }
        const size_t most = std::max(distinct[0].size(), distinct[1].size());
        rows.push_back({name, err[0], err[1],
                        most == 1 ? "yes" : "no: " + std::to_string(most) + " different sums in " + std::to_string(runs) + " runs"});
    };
    std::vector<std::string> waived;
    for (const Kernel<float>& k : kernels<float>()) {
        if (!opt.kernel.empty() && opt.kernel != k.name) continue;
        const std::string why = waiver(k);
        if (!why.empty()) {
            waived.push_back(std::string(k.name) + ": WAIVED: " + why);
            common::note_waived(k.name);
            continue;
        }
        gpu(k.name, [&](const float* in) { return run_once(k, in, n, ws, nullptr); });
    }
    gpu("cub::DeviceReduce::Sum", [&](const float* in) {
        Cub<float> c(in, n, ws.out);
        ws.poison_result();
        c();
        CHECK(cudaDeviceSynchronize());
        return download_out(ws);
    });

    std::printf("\naccuracy: float sums of %s values; relative error |sum - exact| / |exact| (exact: long double,\n"
                "compensated); bit-identical: the same float bits in each of %d runs on both inputs\n\n",
                size_label(n).c_str(), runs);
    const std::string h_const = "rel. error, all 1.23", h_uni = "rel. error, uniform [0,1)";
    std::printf("| method | %s | %s | bit-identical |\n|---|---:|---:|---|\n", h_const.c_str(), h_uni.c_str());
    for (const AccRow& r : rows)
        std::printf("| %s | %.2e | %.2e | %s |\n", r.method.c_str(), r.err_const, r.err_uniform, r.identical.c_str());
    std::printf("exact sums: %.10Lg (1.23 x n in float: each 1.23f is %.10g) and %.10Lg\n", ref[0], double(1.23f), ref[1]);
    for (const std::string& w : waived) std::printf("%s\n", w.c_str());
    if (!opt.csv.empty()) {
        std::string s = common::csv_comments(common::run_metadata(dev, command_line));
        s += "method," + common::csv_field(h_const) + "," + common::csv_field(h_uni) + ",bit-identical\n";
        for (const AccRow& r : rows)
            s += common::csv_field(r.method) + "," + common::fmt("%.2e", r.err_const) + "," +
                 common::fmt("%.2e", r.err_uniform) + "," + common::csv_field(r.identical) + "\n";
        common::write_file_or_exit(opt.csv, s);
        std::printf("\nwrote %s\n", opt.csv.c_str());
    }
}

// --final: the same streaming kernel (reduceVec4's loads), five ways to turn
// its block sums into one number, plus the many-partials case of the
// block-per-chunk kernels. Times are medians; "device" is events around the
// GPU work, "to host" is the wall clock until the sum is in a host variable.
template <class T>
bool run_final(size_t n, const common::CommonOptions& opt, const common::DeviceInfo& dev,
               const std::string& command_line) {
    const std::vector<T> x = make_input<T>(n, uint64_t(opt.seed));
    const Expected<T> e = expected_sum(x);
    common::DeviceBuffer<T> d_in(n);
    d_in.upload(x);
    Workspace<T> ws(n);
    std::vector<T> h_partial(ws.max_partials);
    const int reps = int(opt.reps), warmup = int(opt.warmup);

    struct Way { std::string where, launches; size_t partials; std::function<T()> to_host; std::function<void()> device; };
    const size_t g = vec4_grid<T, Finish::Partials>(n), g_chunks = common::ceil_div(n, size_t(8) * kBlock);
    auto host_sum = [&](size_t m) {
        CHECK(cudaMemcpy(h_partial.data(), ws.partial, m * sizeof(T), cudaMemcpyDeviceToHost));
        if constexpr (std::is_same_v<T, int>) {
            return reference_int(h_partial.data(), m);  // wrapped to 32 bits, as the GPU's int adds wrap
        } else {
            T s = 0;
            for (size_t i = 0; i < m; ++i) s += h_partial[i];
            return s;
        }
    };
    auto vec4_partials = [&] {
        reduceVec4<T, Finish::Partials><<<g, kVecThreads>>>(d_in.get(), n, ws.partial, ws.ticket, ws.out);
        CHECK_LAUNCH();
    };
    auto chunks_partials = [&] {
        reduceShflDown<T><<<g_chunks, kBlock>>>(d_in.get(), n, ws.partial);
        CHECK_LAUNCH();
    };
    const std::vector<Way> ways = {
        {"host: copy the partials back, add them on the CPU", "1 + memcpy", g,
         [&] { vec4_partials(); return host_sum(g); }, nullptr},
        {"second kernel: one block adds the partials", "2", g,
         [&] { launch_reduceVec4<T, Finish::Partials>(d_in.get(), n, ws); return download_out(ws); },
         [&] { launch_reduceVec4<T, Finish::Partials>(d_in.get(), n, ws); }},
        {"atomics: one atomicAdd per block (result zeroed first)", "memset + 1", g,
         [&] { launch_reduceVec4<T, Finish::Atomic>(d_in.get(), n, ws); return download_out(ws); },
         [&] { launch_reduceVec4<T, Finish::Atomic>(d_in.get(), n, ws); }},
        {"last block: __threadfence + ticket (reduceVec4)", "1", g,
         [&] { launch_reduceVec4<T, Finish::LastBlock>(d_in.get(), n, ws); return download_out(ws); },
         [&] { launch_reduceVec4<T, Finish::LastBlock>(d_in.get(), n, ws); }},
        {"last block: one acq_rel fetch_add as the ticket (no fences)", "1", g,
         [&] { launch_reduceVec4<T, Finish::LastBlockAcqRel>(d_in.get(), n, ws); return download_out(ws); },
         [&] { launch_reduceVec4<T, Finish::LastBlockAcqRel>(d_in.get(), n, ws); }},
        {"host, one partial per 1024 elements (reduceShflDown)", "1 + memcpy", g_chunks,
         [&] { chunks_partials(); return host_sum(g_chunks); }, nullptr},
        {"second kernel, one partial per 1024 elements (reduceShflDown)", "2", g_chunks,
         [&] { chunks_partials(); launch_final(g_chunks, ws); return download_out(ws); },
         [&] { chunks_partials(); launch_final(g_chunks, ws); }},
        {"(an empty kernel: the cost of one launch, for scale)", "1", 0,
         [&] { emptyKernel<<<1, 32>>>(); CHECK_LAUNCH(); return download_out(ws); },
         [&] { emptyKernel<<<1, 32>>>(); CHECK_LAUNCH(); }},
    };

    std::printf("\nwhere the final sum happens: %s %s (%s), median of %d\n\n", type_name<T>(), size_label(n).c_str(),
                common::human_bytes(double(n) * sizeof(T)).c_str(), reps);
    std::printf("| where the final sum happens | launches | partial sums | device ms | to host ms | result |\n"
                "|---|---|---:|---:|---:|---|\n");
    std::string csv = "where the final sum happens,launches,partial sums,device ms,to host ms,result\n";
    bool ok = true;
    for (const Way& w : ways) {
        ws.poison_result();
        const bool scale_only = w.partials == 0;  // the empty kernel computes nothing
        auto timed_call = [&](T* result) {
            CHECK(cudaDeviceSynchronize());
            const auto t0 = std::chrono::steady_clock::now();
            *result = w.to_host();
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        };
        T first;
        const double once_ms = timed_call(&first);
        const T got = scale_only ? T(0) : first;
        const bool pass = scale_only || within(got, e);
        ok &= pass;
        // The one rule for slow kernels (common::plan_reps), from that first, checked call.
        const common::RepsPlan plan =
            common::plan_reps_after_first(once_ms, warmup, reps, [&] { return timed_call(&first); });
        const std::string launches = w.launches + common::reps_note(plan);
        std::vector<double> wall(plan.reps);
        for (int i = 0; i < plan.warmup; ++i) w.to_host();
        for (int i = 0; i < plan.reps; ++i) {
            CHECK(cudaDeviceSynchronize());
            const auto t0 = std::chrono::steady_clock::now();
            volatile T sink = w.to_host();
            (void)sink;
            wall[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        }
        const double host_ms = common::median(wall);
        const std::string dev_ms =
            w.device ? common::fmt("%.4f", common::time_median_ms(w.device, plan.warmup, plan.reps)) : "-";
        const std::string line = w.where + "," + launches + "," + std::to_string(w.partials) + "," + dev_ms + "," +
                                 common::fmt("%.4f", host_ms) + "," + (scale_only ? "-" : pass ? "PASS" : "FAIL");
        std::printf("| %s | %s | %zu | %s | %.4f | %s |\n", w.where.c_str(), launches.c_str(), w.partials,
                    dev_ms.c_str(), host_ms, scale_only ? "-" : pass ? "PASS" : "FAIL");
        csv += common::csv_field(w.where) + line.substr(w.where.size()) + "\n";
    }
    if (!opt.csv.empty()) {
        const std::string s = common::csv_comments(common::run_metadata(dev, command_line)) + csv;
        common::write_file_or_exit(opt.csv, s);
        std::printf("\nwrote %s\n", opt.csv.c_str());
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t n = int64_t(1) << 28;
    std::string type = "int";
    bool toy = false, accuracy = false, final_sum = false, show_pitfalls = false;
    common::CommonOptions opt;
    std::string summary =
        "Sum of n values: every kernel of the chapter against cub::DeviceReduce::Sum in the same run.\n"
        "Each kernel runs once to be checked against the CPU (int: exact; float/double: within\n"
        "2 (log2 n + 1) eps sum|x|), then is timed from input to sum in device memory (all its launches).\n"
        "GB/s = n * sizeof(T) / median time (each element read once). Kernels, in teaching order:";
    summary += common::kernel_list_text(reduction::kernels<int>(), reduction::pitfalls<int>());
    summary += "\n--sweep runs int and float at n = 2^10 .. 2^28 (what `make bench` records).";
    common::Cli cli("reduction", summary);
    cli.option("n", &n, "number of elements (2^K accepted)", 1, reduction::kMaxN)
        .option("type", &type, "element type, the seeds' `real`", {"int", "float", "double"})
        .flag("toy", &toy, "print each halving step of the seeds' 8-element example")
        .flag("accuracy", &accuracy, "float accuracy and determinism table at --n (--csv writes it)")
        .flag("final", &final_sum, "cost of each place the final sum can happen, at --n and --type")
        .flag("pitfalls", &show_pitfalls, "run the seeds' buggy kernels at --n and --type (only those)");
    common::add_common_options(cli, opt, common::kernel_names(reduction::kernels<int>(), reduction::pitfalls<int>()));
    cli.mode("", common::timed_options({"n", "type"}))
        .mode("sweep", common::timed_options())
        .mode("toy", {"type", "device"})
        .mode("accuracy", {"n", "seed", "device", "csv", "kernel"})
        .mode("final", {"n", "type", "reps", "warmup", "seed", "device", "csv"})
        .mode("pitfalls", {"n", "type", "seed", "device", "kernel"});
    cli.parse_or_exit(argc, argv);
    cli.fail_if(reduction::check_n(n));
    cli.fail_if(common::pitfall_refusal(opt.kernel, reduction::pitfalls<int>(), show_pitfalls));
    if (show_pitfalls && !opt.kernel.empty() && !common::find_kernel(reduction::pitfalls<int>(), opt.kernel))
        cli.fail("--pitfalls runs only the pitfall kernels; --kernel " + opt.kernel + " is not one of them");

    const common::DeviceInfo dev = common::require_device(int(opt.device));
    common::print_device_header(dev);
    if (toy) {
        const bool ok = type == "int" ? run_toy<int>() : type == "float" ? run_toy<float>() : run_toy<double>();
        return ok ? 0 : 1;
    }

    // Memory: the input, a scratch copy, the partials (x2 for --accuracy's two inputs).
    const size_t elem = accuracy ? sizeof(float) : opt.sweep ? sizeof(float) : type == "double" ? 8 : 4;
    const size_t largest = opt.sweep ? size_t(1) << 28 : size_t(n);
    const double need = double(largest) * elem * (accuracy ? 4.2 : 2.2) + 64.0 * 1048576;
    common::require_host_memory("reduction", double(largest) * elem * (accuracy ? 2.0 : 1.0));  // the inputs
    common::require_device_memory("reduction", double(need));

    if (accuracy) {  // a measured table, nothing checked: no PASS line
        run_accuracy(size_t(n), opt, dev, cli.command_line());
        return common::asked_kernel_waived(opt.kernel) ? common::kExitWaived : 0;
    }
    if (final_sum) {
        const bool ok = type == "int"   ? run_final<int>(size_t(n), opt, dev, cli.command_line())
                        : type == "float" ? run_final<float>(size_t(n), opt, dev, cli.command_line())
                                          : run_final<double>(size_t(n), opt, dev, cli.command_line());
        return ok ? 0 : 1;
    }
    if (show_pitfalls) {
        if (type == "int") run_pitfalls<int>(size_t(n), opt);
        else if (type == "float") run_pitfalls<float>(size_t(n), opt);
        else run_pitfalls<double>(size_t(n), opt);
        return 0;
    }

    common::Report report("GB/s", "CUB");
    bool ok = true;
    std::string default_problem;
    if (opt.sweep) {
        default_problem = "int 2^28";
        for (int k = 10; k <= 28; ++k) ok &= run_size<int>(size_t(1) << k, opt, report);
        for (int k = 10; k <= 28; ++k) ok &= run_size<float>(size_t(1) << k, opt, report);
    } else {
        default_problem = type + " " + size_label(size_t(n));
        if (type == "int") ok = run_size<int>(size_t(n), opt, report);
        else if (type == "float") ok = run_size<float>(size_t(n), opt, report);
        else ok = run_size<double>(size_t(n), opt, report);
    }
    if (!opt.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, cli.command_line());
        meta.push_back({"default_problem", default_problem});
        meta.push_back({"bytes_model", "n * sizeof(T): each element read once (the one-value output is negligible)"});
        meta.push_back({"peer", "cub::DeviceReduce::Sum in the same run (pct_of_CUB = CUB time / kernel time)"});
        meta.push_back({"timing", "events around the whole operation (all launches, a memset where needed), median of "
                                  "--reps launches, except where those would take over 1.5 s: as many as fit, "
                                  "no warm-up, [reps N] in the launch column"});
        meta.push_back({"read_ceiling", "printed, not a row: plain 16-byte loads of the same input (steps/read_ceiling.cuh)"});
        report.write_csv(opt.csv, meta);
    }
    return common::finish(ok, opt.kernel);
}
