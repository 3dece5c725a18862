// constant_stencil.cu - runs every kernel of the chapter on n outputs, checks
// each against the CPU reference and times it against a copy of the same
// bytes; then measures the constant cache's broadcast rule on its own.
//
//   ./constant_stencil                    n = 2^28 outputs (1 GiB in, 1 GiB out)
//   ./constant_stencil --n 1000003        any n >= 1
//   ./constant_stencil --pitfalls         also the seed's racy loop
//   ./constant_stencil --sweep --csv 06_constant_stencil/results/h200.csv
//
// GB/s = ((n + 2*RADIUS) * 4 + n * 4) bytes / time: each input read once,
// each output written once, the least any version can move.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include "06_constant_stencil/constant_stencil.cuh"
#include "common/buffer.cuh"
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/kernel_list.hpp"
#include "common/report.hpp"
#include "common/stats.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"

namespace {

namespace cs = constant_stencil;

// `make bench`: from 4 MiB (fits in the 60 MB L2: watch the numbers jump) to
// 1 GiB an array, plus one n that is no multiple of 4 or of any tile.
const std::vector<size_t> kSweep = {size_t(1) << 20, size_t(1) << 22, size_t(1) << 24,
                                    size_t(1) << 26, size_t(1) << 28, 300000007};

double bytes_moved(size_t n) { return (double(n) + 2 * cs::RADIUS) * sizeof(float) + double(n) * sizeof(float); }
double gbps(size_t n, double ms) { return bytes_moved(n) / (ms * 1e6); }

// "2^28" for powers of two, else the number.
std::string problem_name(size_t n) {
    for (int k = 0; k < 63; ++k)
        if (n == size_t(1) << k) return "2^" + std::to_string(k);
    return std::to_string(n);
}

struct Options {
    common::CommonOptions common;
    bool pitfalls = false;
    int64_t cache_iters = 1 << 16;  // reads per thread in the constant-cache experiment
};

// Runs every selected kernel on n outputs; returns false if any non-pitfall kernel failed.
bool run_size(size_t n, const Options& opt, const cs::Coefficients& coef, const float* d_coef,
              common::Report& report) {
    const size_t n_in = n + 2 * cs::RADIUS;
    const std::string problem = problem_name(n);
    std::vector<float> in(n_in), got;
    std::vector<double> ref(n);
    common::fill_uniform(in.data(), n_in, opt.common.seed, -1.0f, 1.0f);
    cs::stencil_cpu(in.data(), ref.data(), n, coef);
    const double atol = cs::tolerance(coef, 1.0);
    common::DeviceBuffer<float> d_in(n_in), d_out(n);
    d_in.upload(in);
    const cs::Args args{d_in.get(), d_out.get(), n, d_coef};

    report.section("n = " + problem + " outputs, float (" + common::human_bytes(bytes_moved(n)) +
                   " moved per kernel), median of " + std::to_string(opt.common.reps));

    double copy_ms = -1;  // copyVec4: the ceiling of the "% of copy" column
    bool ok = true;
    auto add_row = [&](const std::string& name, const std::string& launch, bool is_copy, bool pitfall, double ms) {
        d_out.download(got);
        // A copy must match bit for bit; the stencil within the stated tolerance.
        const common::Comparison c = is_copy ? common::compare(got.data(), in.data() + cs::RADIUS, n)
                                             : common::compare(got.data(), ref.data(), n, atol, 0.0);
        if (!c.pass())
            std::printf("  %s: %s\n", name.c_str(),
                        is_copy ? common::describe(c, got.data(), in.data() + cs::RADIUS).c_str()
                                : common::describe(c, got.data(), ref.data()).c_str());
        report.add({problem, double(n), name, launch, ms, gbps(n, ms), copy_ms > 0 ? 100.0 * copy_ms / ms : -1,
                    c.max_abs_err, c.pass() ? "PASS" : "FAIL", {}});
        if (!pitfall) ok &= c.pass();
    };

    double memcpy_ms = -1;
    auto run_kernel = [&](const cs::Kernel& k, bool pitfall) {
        d_out.poison();  // NaN everywhere: an element the kernel misses fails the check
        std::string launch;
        const double once = common::time_once_ms([&] { launch = k.launch(args); });
        const common::Timing t =
            common::time_kernel([&] { k.launch(args); }, once, int(opt.common.warmup), int(opt.common.reps));
        const bool baseline = std::string(k.name) == "copyVec4";
        if (baseline) copy_ms = t.ms;
        add_row(k.name, launch + common::reps_note(t.plan), k.is_copy, pitfall, t.ms);

        if (baseline) {  // cudaMemcpy device-to-device of the same bytes: what copyVec4 must come close to
            d_out.poison();
            auto d2d = [&] {
                CHECK(cudaMemcpyAsync(d_out.get(), d_in.get() + cs::RADIUS, n * sizeof(float), cudaMemcpyDeviceToDevice));
            };
            const common::Timing m =
                common::time_kernel(d2d, common::time_once_ms(d2d), int(opt.common.warmup), int(opt.common.reps));
            memcpy_ms = m.ms;
            add_row("cudaMemcpyDeviceToDevice", "-" + common::reps_note(m.plan), true, false, memcpy_ms);
        }
    };
    const auto selected = [&](const cs::Kernel& k) {
        return opt.common.kernel.empty() || opt.common.kernel == k.name;
    };
    for (const cs::Kernel& k : cs::kernels())  // copyVec4 always: the ceiling
        if (selected(k) || std::string(k.name) == "copyVec4") run_kernel(k, false);
    if (opt.pitfalls)  // a separate list: never reached by the loop above
        for (const cs::Kernel& k : cs::pitfalls())
            if (selected(k)) run_kernel(k, true);

    // The two ratios this chapter is judged by.
    const common::Row* best = nullptr;
    for (const common::Row& r : report.rows())
        if (r.problem == problem && r.kernel.rfind("stencil1D", 0) == 0 && common::find_kernel(cs::kernels(), r.kernel) &&
            (!best || r.ms < best->ms))
            best = &r;
    std::printf("copyVec4 / cudaMemcpy: %.3f (a fair ceiling needs >= 0.95)\n", memcpy_ms / copy_ms);
    if (best) std::printf("best stencil %s / copyVec4: %.3f (goal >= 0.95)\n", best->kernel.c_str(), copy_ms / best->ms);
    return ok;
}

// The constant cache's rule: d = 1 .. 32 different addresses per warp-wide
// read, from __constant__ and through __ldg. One full wave of blocks, each
// thread --cache-iters reads of a 1 KB table of small integers from 1 to 15
// (sums below 2^24: exact in float).
bool run_constant_cache(const common::DeviceInfo& dev, const Options& opt, common::Report& report) {
    const int iters = int(opt.cache_iters);
    const size_t threads = size_t(cs::resident_blocks(cs::warpReads<true>)) * cs::kBlock;
    const double warp_loads = double(threads / 32) * iters;
    std::vector<int> ti(cs::kTableSize);
    common::fill_uniform(ti.data(), ti.size(), uint64_t(opt.common.seed) + 1, 1, 15);
    const std::vector<float> table(ti.begin(), ti.end());
    common::DeviceBuffer<float> d_table(cs::kTableSize), d_out(threads);
    cs::set_table(table, d_table.get());

    report.section("constant cache: " + std::to_string(threads / 32) + " warps x " + std::to_string(iters) +
                   " warp-wide reads of a 1 KB table, d different addresses per read, median of " +
                   std::to_string(opt.common.reps));
    bool ok = true;
    double broadcast_ms[2] = {0, 0}, last_ratio[2] = {0, 0};
    for (int d = 1; d <= 32; d *= 2) {
        const std::string problem = std::to_string(d) + (d == 1 ? " address" : " addresses");
        for (int constant = 1; constant >= 0; --constant) {
            d_out.poison();
            std::string launch;
            auto run = [&] { launch = cs::launch_warp_reads(constant, d_table.get(), d_out.get(), threads, iters, d); };
            const common::Timing tm =
                common::time_kernel(run, common::time_once_ms(run), int(opt.common.warmup), int(opt.common.reps));
            launch += common::reps_note(tm.plan);
            const double ms = tm.ms;
            if (d == 1) broadcast_ms[constant] = ms;
            last_ratio[constant] = ms / broadcast_ms[constant];
            std::vector<float> got;
            d_out.download(got);
            double lane_sum[32];  // every warp sums the same 32 values
            for (int lane = 0; lane < 32; ++lane) lane_sum[lane] = cs::warp_reads_cpu(table, iters, d, lane);
            std::vector<double> ref(threads);
            for (size_t t = 0; t < threads; ++t) ref[t] = lane_sum[t % 32];
            const common::Comparison c = common::compare(got.data(), ref.data(), threads);  // exact
            ok &= c.pass();
            const double rate = warp_loads / (ms * 1e6);  // G warp-loads / s, whole GPU
            report.add({problem, double(d), constant ? "warpReads<__constant__>" : "warpReads<__ldg>", launch, ms,
                        rate, 100.0 * broadcast_ms[constant] / ms, c.max_abs_err, c.pass() ? "PASS" : "FAIL",
                        {common::fmt("%.3f", dev.sms / rate)}});
        }
    }
    std::printf("32 addresses per warp vs 1: __constant__ %.1fx the time, __ldg %.2fx\n", last_ratio[1],
                last_ratio[0]);
    return ok;
}

// results/h200.csv -> results/h200_constant_cache.csv
std::string cache_csv_path(const std::string& csv) {
    const std::string ext = ".csv";
    if (csv.size() > ext.size() && csv.compare(csv.size() - ext.size(), ext.size(), ext) == 0)
        return csv.substr(0, csv.size() - ext.size()) + "_constant_cache.csv";
    return csv + "_constant_cache.csv";
}

}  // namespace

int main(int argc, char** argv) {
    int64_t n = int64_t(1) << 28;
    Options opt;
    const std::string summary =
        "1D 9-point stencil (seed 000's 8th-order first derivative, RADIUS 4), float:\n"
        "  out[i] = sum_{k=1..4} c_k * (in[i+4+k] - in[i+4-k]),  i = 0 .. N-1\n"
        "The input has N + 2*RADIUS = N + 8 elements (a halo of 4 on both sides), the output N.\n"
        "Each kernel is checked against a double-precision CPU reference (tolerance 8 * 2^-24 *\n"
        "sum|c_k| * 2 max|in|), then timed. GB/s = ((N + 8) * 4 + N * 4) bytes / median time;\n"
        "% of copy = copyVec4's time (same bytes, same run) / the kernel's time. Then the constant\n"
        "cache's broadcast rule: warp-wide reads of 1 .. 32 different addresses, __constant__ vs __ldg.\n"
        "Kernels, in teaching order:" +
        common::kernel_list_text(constant_stencil::kernels(), constant_stencil::pitfalls());
    common::Cli cli("constant_stencil", summary);
    cli.option("n", &n, "outputs N (the input has N + 8 floats)", 1, constant_stencil::kMaxN)
        .flag("pitfalls", &opt.pitfalls, "also run the pitfall kernel (the seed's loop without its second barrier)")
        .option("cache-iters", &opt.cache_iters, "reads per thread in the constant-cache experiment", 1, 1 << 20);
    common::add_common_options(cli, opt.common,
                               common::kernel_names(constant_stencil::kernels(), constant_stencil::pitfalls()));
    cli.mode("", common::timed_options({"n", "pitfalls", "cache-iters"}))
        .mode("sweep", common::timed_options({"pitfalls", "cache-iters"}));
    cli.parse_or_exit(argc, argv);
    cli.fail_if(constant_stencil::check_n(n));
    cli.fail_if(common::pitfall_refusal(opt.common.kernel, constant_stencil::pitfalls(), opt.pitfalls));
    // The second results file (below, after the constant-cache experiment) is checked now too.
    if (!opt.common.csv.empty() && opt.common.kernel.empty())
        if (const std::string why = common::output_file_problem(cache_csv_path(opt.common.csv)); !why.empty())
            cli.fail("--csv: its second file, " + why);

    const std::vector<size_t> sizes = opt.common.sweep ? kSweep : std::vector<size_t>{size_t(n)};
    const common::DeviceInfo dev = common::require_device(int(opt.common.device));
    common::print_device_header(dev);
    const size_t largest = *std::max_element(sizes.begin(), sizes.end());
    common::require_host_memory("constant_stencil", 16.0 * double(largest));  // input, result (float), reference (double)
    common::require_device_memory("constant_stencil", double(constant_stencil::device_bytes(largest)));

    const constant_stencil::Coefficients coef = constant_stencil::derivative8();
    common::DeviceBuffer<float> d_coef(constant_stencil::RADIUS);
    constant_stencil::set_coefficients(coef, d_coef.get());

    common::Report report("GB/s", "copy");
    bool ok = true;
    for (size_t s : sizes) ok &= run_size(s, opt, coef, d_coef.get(), report);
    if (opt.pitfalls)
        std::printf("(the pitfall's row does not count towards PASS/FAIL: run it under compute-sanitizer "
                    "--tool racecheck to see the hazard)\n");

    common::Report cache("Gloads/s", "broadcast", {"ns/load/SM"});
    if (opt.common.kernel.empty()) ok &= run_constant_cache(dev, opt, cache);

    if (!opt.common.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, cli.command_line());
        meta.push_back({"default_problem", problem_name(size_t(n))});
        meta.push_back({"bytes_model", "(n + 2*RADIUS) * 4 read + n * 4 written (RADIUS = 4; each input read once, "
                                       "each output written once)"});
        meta.push_back({"peer", "copyVec4 in the same run (pct_of_copy = copyVec4 time / kernel time); "
                                "cudaMemcpyDeviceToDevice moves the same bytes"});
        report.write_csv(opt.common.csv, meta);
        if (!cache.rows().empty()) {
            common::Metadata cmeta = common::run_metadata(dev, cli.command_line());
            cmeta.push_back({"default_problem", "32 addresses"});
            cmeta.push_back({"model", "a load = one warp-wide load instruction (32 lanes); Gloads/s = warps * " +
                                      std::to_string(opt.cache_iters) +
                                      " / time; ns/load/SM = SMs / (loads per ns), the time an SM spends per load"});
            cmeta.push_back({"peer", "the same path with 1 address per warp (pct_of_broadcast = its time / this time)"});
            cache.write_csv(cache_csv_path(opt.common.csv), cmeta);
        }
    }
    return common::finish(ok, opt.common.kernel);
}
