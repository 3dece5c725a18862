// transpose.cu - runs every kernel of the chapter on rows x cols floats,
// checks each against the CPU transpose and times it against the copy kernel.
//
//   ./transpose                         8192 x 8192 floats (256 MiB a matrix)
//   ./transpose --rows 1000 --cols 777  any shape
//   ./transpose --sweep --csv 05_transpose/results/h200.csv
//
// Throughput = 2 * rows * cols * 4 bytes / time: each element read once and
// written once, the least any transpose (or copy) can move.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include "05_transpose/transpose.cuh"
#include "common/buffer.cuh"
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/kernel_list.hpp"
#include "common/report.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"

namespace {

struct Shape { int rows, cols; };

// `make bench`: squares from 1024^2 (fits in L2: watch the numbers jump) to
// 16384^2, then shapes a learner might try: odd rows, odd columns, both odd,
// primes, sides not multiples of 4 or of any tile, tall and wide (every
// shape from 2048^2 up is one the chapter's goal covers).
const std::vector<Shape> kSweep = {
    {1024, 1024},  {2048, 2048},   {4096, 4096},   {8192, 8192},   {16384, 16384}, {8191, 8193},
    {8193, 8193},  {8191, 8192},   {8192, 8191},   {12289, 4097},  {4097, 12289},  {10007, 10009},
    {16384, 16383}, {2050, 2046},  {6002, 5998},   {2049, 2051},   {4093, 4099}};

double gbps(const Shape& s, double ms) { return 2.0 * s.rows * s.cols * sizeof(float) / (ms * 1e6); }

// Runs every selected kernel on one shape; returns false if any failed.
bool run_shape(const Shape& s, const common::CommonOptions& opt, common::Report& report) {
    using namespace transpose;
    const size_t n = size_t(s.rows) * s.cols;
    const std::string problem = std::to_string(s.rows) + "x" + std::to_string(s.cols);
    std::vector<float> in(n), ref(n), got(n);
    common::fill_uniform(in.data(), n, opt.seed, -1.0f, 1.0f);
    transpose_cpu(in.data(), ref.data(), s.rows, s.cols);
    common::DeviceBuffer<float> d_in(n), d_out(n);
    d_in.upload(in);

    report.section(problem + " float (" + common::human_bytes(2.0 * n * sizeof(float)) +
                   " moved per kernel), median of " + std::to_string(opt.reps));

    auto add_row = [&](const char* name, const std::string& launch, bool is_copy, double ms, double peer_ms) {
        d_out.download(got);
        const common::Comparison c = common::compare(got.data(), is_copy ? in.data() : ref.data(), n);
        if (!c.pass()) std::printf("  %s: %s\n", name, common::describe(c, got.data(), is_copy ? in.data() : ref.data()).c_str());
        report.add({problem, double(n), name, launch, ms, gbps(s, ms), peer_ms > 0 ? 100.0 * peer_ms / ms : -1,
                    c.max_abs_err, c.pass() ? "PASS" : "FAIL", {}});
        return c.pass();
    };

    // cudaMemcpy device-to-device: the runtime's own copy, what copyVec4 must come close to.
    d_out.poison();
    const double memcpy_ms = common::time_median_ms(
        [&] { CHECK(cudaMemcpyAsync(d_out.get(), d_in.get(), n * sizeof(float), cudaMemcpyDeviceToDevice)); },
        int(opt.warmup), int(opt.reps));
    bool ok = add_row("cudaMemcpyDeviceToDevice", "-", true, memcpy_ms, -1);

    double copy_ms = -1;  // copyVec4, the ceiling of the "% of copy" column
    for (const Kernel& k : kernels()) {
        const bool baseline = std::string(k.name) == "copyVec4";
        if (!opt.kernel.empty() && opt.kernel != k.name && !baseline) continue;
        if (const std::string why = waived(k); !why.empty()) {
            std::printf("  %s: WAIVED: %s\n", k.name, why.c_str());
            continue;
        }
        d_out.poison();  // NaN everywhere: an element the kernel misses fails the check
        const std::string launch = k.launch(d_in.get(), d_out.get(), s.rows, s.cols);
        CHECK(cudaDeviceSynchronize());
        const double ms = common::time_median_ms([&] { k.launch(d_in.get(), d_out.get(), s.rows, s.cols); },
                                                 int(opt.warmup), int(opt.reps));
        if (baseline) copy_ms = ms;
        ok &= add_row(k.name, launch, k.is_copy, ms, copy_ms);
    }

    // The two ratios this chapter is judged by.
    double best_ms = 0;
    const char* best = nullptr;
    for (const common::Row& r : report.rows())
        if (r.problem == problem && r.kernel.rfind("transpose", 0) == 0 && (!best || r.ms < best_ms)) {
            best_ms = r.ms;
            best = r.kernel.c_str();
        }
    std::printf("copyVec4 / cudaMemcpy: %.3f (a fair ceiling needs >= 0.95)\n", memcpy_ms / copy_ms);
    if (best) std::printf("best transpose %s / copyVec4: %.3f\n", best, copy_ms / best_ms);
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t rows = 8192, cols = 8192;
    common::CommonOptions opt;
    std::string summary =
        "Matrix transpose: out (cols x rows) = in (rows x cols)^T, float, row-major.\n"
        "Each kernel runs once to be checked against the CPU (exact match), then is timed.\n"
        "GB/s = 2 * rows * cols * 4 bytes / median time. Kernels, in teaching order:" +
        common::kernel_list_text(transpose::kernels(), {}, 30);
    common::Cli cli("transpose", summary);
    cli.option("rows", &rows, "rows of the input matrix", 1, transpose::kMaxDim)
        .option("cols", &cols, "columns of the input matrix", 1, transpose::kMaxDim);
    common::add_common_options(cli, opt, common::kernel_names(transpose::kernels()));
    cli.mode("", common::timed_options({"rows", "cols"})).mode("sweep", common::timed_options());
    cli.parse_or_exit(argc, argv);
    cli.fail_if(transpose::check_shape(rows, cols));

    std::vector<Shape> shapes = opt.sweep ? kSweep : std::vector<Shape>{{int(rows), int(cols)}};
    const common::DeviceInfo dev = common::require_device(int(opt.device));
    common::print_device_header(dev);
    size_t largest = 0;
    for (const Shape& s : shapes) largest = std::max(largest, size_t(s.rows) * s.cols);
    common::require_device_memory("transpose", 2.0 * largest * sizeof(float));

    common::Report report("GB/s", "copy");
    bool ok = true;
    for (const Shape& s : shapes) ok &= run_shape(s, opt, report);
    if (!opt.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, cli.command_line());
        meta.push_back({"default_problem", std::to_string(rows) + "x" + std::to_string(cols)});
        meta.push_back({"bytes_model", "2 * rows * cols * 4 (each element read once, written once)"});
        meta.push_back({"peer", "copyVec4 in the same run (pct_of_copy = copyVec4 time / kernel time)"});
        report.write_csv(opt.csv, meta);
    }
    std::printf("\n%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
