// shuffle.cu - warp shuffles, from their exact semantics to a matrix-vector
// multiply at memory bandwidth.
//
//   ./shuffle                              everything; y = A x with A 16384 x 8192 doubles (1 GiB)
//   ./shuffle --rows 1000 --cols 333       any shape
//   ./shuffle --tune                       also time every (lanes per row, rows per segment) variant
//   ./shuffle --pitfalls                   also run the seed's race (matvecSmemNoSyncwarp)
//   ./shuffle --sweep --csv 07_shuffle/results/h200.csv
//
// In order (seeds: the top README's Sources section; the kernels: steps/,
// one file per step): seed 001's demos; seed 004's xor table; every primitive x width x
// parameter x mask against the CPU emulator; the warp/block building blocks
// at odd sizes; then y = A x, every kernel checked against the CPU and timed
// against cub::DeviceReduce::Sum (GB/s against GB/s, measured in the same run).
// GB/s = (rows * cols + cols + rows) * 8 bytes (A and x read once, y written
// once) / median time. A pitfall kernel's result is shown but never sets the
// exit code.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include <cub/cub.cuh>
#include "07_shuffle/shuffle.cuh"
#include "common/buffer.cuh"
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/kernel_list.hpp"
#include "common/report.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"

namespace {

using namespace shuffle;

const char* verdict(bool ok) { return ok ? "PASS" : "FAIL"; }

std::string lanes_string(const Warp<int>& v) {
    std::string s;
    for (int l = 0; l < kWarp; ++l) s += (l ? " " : "") + std::to_string(v[l]);
    return s;
}

Warp<int> download_warp(const common::DeviceBuffer<int>& d) {
    std::vector<int> h;
    d.download(h);
    Warp<int> w;
    std::copy(h.begin(), h.begin() + kWarp, w.begin());
    return w;
}

// ---- Seed 001's three examples -------------------------------------------
bool run_demos() {
    std::printf("\n== seed 001 demos (one warp; every lane's result)\n");
    common::DeviceBuffer<int> d(kWarp);
    bool ok = true;
    auto show = [&](const char* name, const Warp<int>& got, const Warp<int>& want) {
        const bool pass = got == want;
        std::printf("%-11s %s  %s\n", name, lanes_string(got).c_str(), verdict(pass));
        ok &= pass;
    };
    d.poison();
    bcast<<<1, kWarp>>>(1234, d.get());
    CHECK_LAUNCH();
    Warp<int> want;
    want.fill(1234);
    show("bcast", download_warp(d), want);

    d.poison();
    scan4<<<1, kWarp>>>(d.get());
    CHECK_LAUNCH();
    show("scan4", download_warp(d), emulate_scan4(8));

    d.poison();
    warpReduce<<<1, kWarp>>>(d.get());
    CHECK_LAUNCH();
    want.fill(496);
    show("warpReduce", download_warp(d), want);
    return ok;
}

// ---- Seed 004's xor table, read from the GPU -------------------------------
bool run_xor_table() {
    std::printf("\n== __shfl_xor_sync(0xffffffff, lane, laneMask): the lane each lane reads (seed 004)\n");
    common::DeviceBuffer<int> d(5 * kWarp);
    d.poison();
    xorTable<<<1, kWarp>>>(d.get());
    CHECK_LAUNCH();
    std::vector<int> h;
    d.download(h);
    bool ok = true;
    std::printf("lane        ");
    for (int l = 0; l < kWarp; ++l) std::printf("%3d", l);
    std::printf("\n");
    for (int m = 0; m < 5; ++m) {
        std::printf("laneMask %2d ", 1 << m);
        for (int l = 0; l < kWarp; ++l) {
            std::printf("%3d", h[m * kWarp + l]);
            ok &= h[m * kWarp + l] == source_lane(Op::Xor, l, 1 << m, kWarp);
        }
        std::printf("\n");
    }
    std::printf("xor table vs emulator: %s\n", verdict(ok));
    return ok;
}

// ---- Every primitive x width x parameter x mask x type ----------------------
template <class T>
PrimitiveCheck check_all_masks(Op op, uint64_t seed) {
    PrimitiveCheck c;
    const std::vector<Probe> probes = probe_set(op);
    for (unsigned mask : probe_masks(seed)) c.add(check_primitive<T>(op, mask, probes, seed + mask));
    return c;
}

bool run_primitives(uint64_t seed) {
    std::printf("\n== every primitive vs the CPU emulator: widths 1 2 4 8 16 32, %zu masks (full, 0x0000ffff, "
                "0xffff0000, 0x55555555, ...)\n", probe_masks(seed).size());
    std::printf("%-18s %-14s %-20s %12s %10s %10s %6s\n", "primitive", "type", "parameter", "lanes equal",
                "undefined", "untouched", "result");
    bool ok = true;
    for (Op op : {Op::Idx, Op::Up, Op::Down, Op::Xor}) {
        const std::vector<int> params = probe_params(op);
        const std::string range = std::string(param_name(op)) + " " + std::to_string(params.front()) + ".." +
                                  std::to_string(params.back());
        auto row = [&](const char* type, const PrimitiveCheck& c) {
            std::printf("%-18s %-14s %-20s %12zu %10zu %10zu %6s\n", op_name(op), type, range.c_str(), c.checked,
                        c.undefined, c.untouched, verdict(c.pass()));
            if (!c.pass()) std::printf("  first mismatch: %s\n", c.first.c_str());
            ok &= c.pass();
        };
        row("int", check_all_masks<int>(op, seed));
        row("unsigned long long", check_all_masks<unsigned long long>(op, seed));
        row("float", check_all_masks<float>(op, seed));
        row("double", check_all_masks<double>(op, seed));
    }
    std::printf("(undefined: lanes whose source lane is not in the mask, never compared; untouched: lanes\n"
                " outside the mask, which do not call the shuffle, checked to have written nothing)\n");
    return ok;
}

// ---- Building blocks ----------------------------------------------------------
template <class T>
bool run_blocks_for_type(uint64_t seed) {
    const std::vector<size_t> sizes = {1, 31, 255, 256, 257, 100003};
    bool r = true, ws = true, bs = true;
    for (size_t n : sizes) {
        r &= check_reduce<T>(n, seed + n);
        ws &= check_scan<T>(n, false, seed + n);
        bs &= check_scan<T>(n, true, seed + n);
    }
    std::printf("%-10s blockReduce (two passes) %s   warp scans %s   block scans (inclusive + exclusive) %s\n",
                type_name<T>(), verdict(r), verdict(ws), verdict(bs));
    return r && ws && bs;
}

bool run_building_blocks(uint64_t seed) {
    std::printf("\n== warp reduce: who holds the sum of 31 - laneId (= 496)?\n");
    common::DeviceBuffer<int> d_down(kWarp), d_xor(kWarp);
    d_down.poison();
    d_xor.poison();
    reduceDownVsXor<<<1, kWarp>>>(d_down.get(), d_xor.get());
    CHECK_LAUNCH();
    Warp<int> start;
    for (int l = 0; l < kWarp; ++l) start[l] = 31 - l;
    const Warp<int> down = download_warp(d_down), xr = download_warp(d_xor);
    const bool ok_down = down == emulate_reduce_down(start), ok_xor = xr == emulate_reduce_xor(start);
    std::printf("down  %s  %s (only lane 0 holds 496; = emulator)\n", lanes_string(down).c_str(), verdict(ok_down));
    std::printf("xor   %s  %s (every lane holds 496; = emulator)\n", lanes_string(xr).c_str(), verdict(ok_xor));

    std::printf("\n== building blocks vs the CPU at n = 1, 31, 255, 256, 257, 100003 (exact for integers;\n"
                "   floating point within gamma_depth * sum|a|, see README)\n");
    bool ok = ok_down && ok_xor;
    ok &= run_blocks_for_type<int>(seed);
    ok &= run_blocks_for_type<long long>(seed);
    ok &= run_blocks_for_type<float>(seed);
    ok &= run_blocks_for_type<double>(seed);
    return ok;
}

// ---- y = A x ---------------------------------------------------------------------
struct Shape { int rows, cols; };

// `make bench`: 1 GiB matrices from wide to skinny, one with odd sides; the
// few-long-rows and many-short-rows shapes from 1 x 2^24 to 2^24 x 1, odd ones
// too (>= 2^24 elements: all past the L2); and a small shape (2.7 MB: it
// lives in L2, launch-bound).
const std::vector<Shape> kSweep = {
    {2048, 65536}, {8192, 16384}, {16384, 8192}, {16383, 8191}, {131072, 1024}, {1048576, 128},
    {4194304, 32}, {16777216, 8}, {1, 16777216}, {1, 33554431}, {3, 10000019}, {8, 4000000},
    {1000, 33333}, {1048576, 17}, {16777216, 1}, {1000, 333}};

// The byte model: A and x read once, y written once.
double model_bytes(const Shape& s) { return (double(s.rows) * s.cols + s.cols + s.rows) * sizeof(double); }
double gbps(const Shape& s, double ms) { return model_bytes(s) / (ms * 1e6); }

bool run_matvec(const Shape& s, const common::CommonOptions& opt, bool pitfalls, bool tune, common::Report& report) {
    const size_t n = size_t(s.rows) * s.cols;
    const std::string problem = std::to_string(s.rows) + "x" + std::to_string(s.cols);
    std::vector<double> A(n), x(s.cols), ref(s.rows), abs_dot(s.rows), got;
    common::fill_uniform(A.data(), n, opt.seed, -1.0, 1.0);
    common::fill_uniform(x.data(), x.size(), uint64_t(opt.seed) + 1, -1.0, 1.0);
    matvec_cpu(A.data(), x.data(), s.rows, s.cols, ref.data(), abs_dot.data());
    const double tol = gamma_n(s.cols + 1.0) * *std::max_element(abs_dot.begin(), abs_dot.end());

    common::DeviceBuffer<double> d_A(n), d_x(s.cols), d_y(s.rows), d_scratch(scratch_doubles()), d_sum(1);
    d_A.upload(A);
    d_x.upload(x);
    report.section("y = A x, A " + problem + " double (" + common::human_bytes(model_bytes(s)) +
                   " moved per kernel: A, x, y), tolerance " + common::fmt("%.2g", tol) + ", median of " +
                   std::to_string(opt.reps));

    // The peer: cub::DeviceReduce::Sum over A itself. Its GB/s counts the
    // bytes it reads (A); a kernel's % of cub is its GB/s over CUB's.
    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_A.get(), d_sum.get(), int64_t(n)));
    common::DeviceBuffer<char> d_temp(temp_bytes);
    auto cub_sum = [&] { CHECK(cub::DeviceReduce::Sum(d_temp.get(), temp_bytes, d_A.get(), d_sum.get(), int64_t(n))); };
    d_sum.poison();
    const double cub_once = common::time_once_ms(cub_sum);
    std::vector<double> sum;
    d_sum.download(sum);
    long double ref_sum = 0, abs_sum = 0;
    for (double v : A) { ref_sum += v; abs_sum += std::fabs(v); }
    const double sum_err = std::fabs(sum[0] - double(ref_sum));
    const bool sum_ok = !std::isnan(sum[0]) && sum_err <= gamma_n(double(n)) * double(abs_sum);
    const common::Timing cub_t = common::time_kernel(cub_sum, cub_once, int(opt.warmup), int(opt.reps));
    const double cub_ms = cub_t.ms;
    const double cub_gbps = n * sizeof(double) / (cub_ms * 1e6);
    report.add({problem, double(n), "cub::DeviceReduce::Sum", "-" + common::reps_note(cub_t.plan), cub_ms, cub_gbps, 100.0, sum_err,
                verdict(sum_ok), {}});
    bool ok = sum_ok;

    auto check_y = [&](const char* name) {
        d_y.download(got);
        const common::Comparison c = common::compare(got.data(), ref.data(), s.rows, tol, 0.0);
        if (!c.pass()) std::printf("  %s: %s\n", name, common::describe(c, got.data(), ref.data()).c_str());
        return c;
    };
    double best_ms = 0;
    std::string best;
    std::vector<MatvecKernel> run = kernels();
    if (pitfalls) for (const MatvecKernel& k : shuffle::pitfalls()) run.push_back(k);
    for (const MatvecKernel& k : run) {
        const bool pitfall = common::find_kernel(shuffle::pitfalls(), k.name) != nullptr;
        if (!opt.kernel.empty() && opt.kernel != k.name) continue;
        d_y.poison();  // NaN: a row the kernel does not write fails
        auto run = [&] { return k.launch(d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols, d_scratch.get()); };
        std::string launch;
        const double once = common::time_once_ms([&] { launch = run(); });
        if (launch.empty()) {  // refused: nothing ran, so nothing to check or time; every listed kernel must take
                               // every shape check_shape admits
            std::printf("%-28s refused %s: nothing launched%s\n", k.name, problem.c_str(), pitfall ? "" : " (FAIL)");
            if (!pitfall) ok = false;
            continue;
        }
        CHECK(cudaDeviceSynchronize());
        const common::Comparison c = check_y(k.name);
        const common::Timing t = common::time_kernel(run, once, int(opt.warmup), int(opt.reps));
        const double ms = t.ms;
        report.add({problem, double(n), k.name, launch + common::reps_note(t.plan), ms, gbps(s, ms),
                    100.0 * gbps(s, ms) / cub_gbps,
                    c.max_abs_err, verdict(c.pass()), {}});
        if (pitfall) continue;  // shown, never sets the exit code or the best
        ok &= c.pass();
        if (best.empty() || ms < best_ms) { best_ms = ms; best = k.name; }
    }
    if (!best.empty())
        std::printf("best matvec %s GB/s / cub::DeviceReduce::Sum GB/s: %.3f (goal >= 0.90)\n", best.c_str(),
                    gbps(s, best_ms) / cub_gbps);

    if (tune) {
        // One variant: launched and checked (a wrong y fails the run), then
        // timed (common::time_kernel: a slow variant gets fewer repetitions;
        // the table has no launch column to say so); its GB/s. A launcher that
        // refuses (returns "") ran nothing: -1, neither checked nor timed, and
        // the line says "refused".
        auto check_and_time = [&](const char* name, auto launch, bool& pass) {
            d_y.poison();
            pass = false;
            std::string l;
            const double once = common::time_once_ms([&] { l = launch(); });
            if (l.empty()) return -1.0;
            CHECK(cudaDeviceSynchronize());
            pass = check_y(name).pass();
            ok &= pass;
            return gbps(s, common::time_kernel(launch, once, int(opt.warmup), int(opt.reps)).ms);
        };
        auto variant_line = [&](const char* what, double rate, bool pass, bool picked) {
            if (rate < 0) std::printf("%s: refused at %s (nothing launched)\n", what, problem.c_str());
            else std::printf("%s: %.0f GB/s%s%s\n", what, rate, pass ? "" : " FAIL", picked ? " *" : "");
        };
        const Vec2Shape pick = tuned_shape(s.rows, s.cols);
        std::printf("tuning matvecVec2 at %s: GB/s per (lanes per row) x (rows per segment); * = tuned_shape()\n",
                    problem.c_str());
        std::printf("%-10s", "lanes\\rows");
        for (int r : kRowChoices) std::printf(" %10d", r);
        std::printf("\n");
        for (int l : kLaneChoices) {
            std::printf("%-10d", l);
            for (int r : kRowChoices) {
                bool pass = false;
                const double rate = check_and_time(
                    "matvecVec2",
                    [&] { return launch_shape({l, r}, d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols); }, pass);
                const bool picked = !pick.block_per_row && !pick.split_rows && !pick.thin_rows && l == pick.lanes &&
                                    r == pick.rows_per_segment;
                if (rate < 0) std::printf(" %10s", "refused");
                else std::printf(" %9.0f%s", rate, !pass ? "!" : picked ? "*" : " ");
            }
            std::printf("\n");
        }
        bool pass = false;
        double rate = check_and_time(
            "matvecBlockRow", [&] { return launch_matvecBlockRow(d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols); },
            pass);
        variant_line("block per row (matvecBlockRow)", rate, pass, pick.block_per_row);
        if (s.cols <= kMaxThinCols) {  // its only shapes: not tried on others
            rate = check_and_time(
                "matvecThinRows",
                [&] { return launch_matvecThinRows(d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols); }, pass);
            variant_line("two rows a thread (matvecThinRows)", rate, pass, pick.thin_rows);
        }
        rate = check_and_time("matvecSplitRow", [&] {
            return launch_matvecSplitRow(d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols, d_scratch.get());
        }, pass);
        const std::string split = "rows split across blocks (matvecSplitRow + sum, " +
                                  std::to_string(split_chunk_pairs(s.rows, s.cols)) + " pairs a block)";
        variant_line(split.c_str(), rate, pass, pick.split_rows);
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t rows = 16384, cols = 8192;
    bool pitfalls = false, tune = false;
    common::CommonOptions opt;
    const std::string summary =
        "Warp shuffles: seed 001's demos, every __shfl_*_sync x width x parameter x mask checked against a\n"
        "CPU emulator, warp/block reduce and scan, then y = A x (double, A rows x cols row-major) timed\n"
        "against cub::DeviceReduce::Sum (GB/s vs GB/s). GB/s = (rows * cols + cols + rows) * 8 / median\n"
        "time (A and x read once, y written once). Matrix-vector kernels, in teaching order:" +
        common::kernel_list_text(shuffle::kernels(), shuffle::pitfalls());
    common::Cli cli("shuffle", summary);
    cli.option("rows", &rows, "rows of A", 1, shuffle::kMaxRows)
        .option("cols", &cols, "columns of A (= length of x)", 1, shuffle::kMaxCols)
        .flag("pitfalls", &pitfalls, "also run the seed's racy kernel (matvecSmemNoSyncwarp; see README)")
        .flag("tune", &tune, "also time every lanes-per-row x rows-per-segment variant of matvecVec2");
    common::add_common_options(cli, opt, common::kernel_names(shuffle::kernels(), shuffle::pitfalls()));
    cli.mode("", common::timed_options({"rows", "cols", "pitfalls", "tune"}))
        .mode("sweep", common::timed_options({"pitfalls", "tune"}));
    cli.parse_or_exit(argc, argv);
    cli.fail_if(shuffle::check_shape(rows, cols));
    cli.fail_if(common::pitfall_refusal(opt.kernel, shuffle::pitfalls(), pitfalls));

    const std::vector<Shape> shapes = opt.sweep ? kSweep : std::vector<Shape>{{int(rows), int(cols)}};
    const common::DeviceInfo dev = common::require_device(int(opt.device));
    common::print_device_header(dev);
    size_t largest = 0, host_largest = 0;  // doubles: A, x and y on the GPU; A, x, ref, abs_dot, got on the host
    for (const Shape& s : shapes) {
        largest = std::max(largest, size_t(s.rows) * s.cols + s.rows + s.cols);
        host_largest = std::max(host_largest, size_t(s.rows) * s.cols + 3 * size_t(s.rows) + s.cols);
    }
    const size_t need = largest * sizeof(double) + (64u << 20);  // + scratch, CUB's temporaries
    common::require_host_memory("shuffle", double(host_largest) * sizeof(double));
    common::require_device_memory("shuffle", double(need));

    bool ok = run_demos();
    ok &= run_xor_table();
    ok &= run_primitives(uint64_t(opt.seed));
    ok &= run_building_blocks(uint64_t(opt.seed));

    common::Report report("GB/s", "cub");
    for (const Shape& s : shapes) ok &= run_matvec(s, opt, pitfalls, tune, report);
    if (!opt.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, cli.command_line());
        meta.push_back({"default_problem", std::to_string(rows) + "x" + std::to_string(cols)});
        meta.push_back({"bytes_model", "(rows * cols + cols + rows) * 8 (A and x read once, y written once; "
                                       "until 2026-11-22: rows * cols * 8, A only)"});
        meta.push_back({"peer", "cub::DeviceReduce::Sum over the rows * cols doubles of A, same run "
                                "(its GB/s counts A; pct_of_cub = kernel GB/s / cub GB/s)"});
        report.write_csv(opt.csv, meta);
    }
    return common::finish(ok, opt.kernel);
}
