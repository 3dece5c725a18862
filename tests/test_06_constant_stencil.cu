// Every 06_constant_stencil kernel against the double-precision CPU stencil,
// at sizes chosen to break edge handling: fewer outputs than a float4, a
// block or a tile, one less and one more than each, primes, and large ones;
// the grid-stride kernels also with so few blocks that each one loops. Then:
// new coefficients take effect, the seed's missing barrier is caught, an
// unwritten tail is caught, and the constant-cache experiment sums exactly.
// Also on binary-grid data, where the float stencil is exact: every kernel
// compared with tolerance 0, broken kernels (one term dropped, one doubled,
// at a single output) caught at the largest tested size by the program's own
// tolerance and by the exact check, and every kernel at the largest n the
// program admits (2^30), where a 32-bit index would be near its limit. And
// every kernel with in and out pointing into the middle of their arrays.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>
#include <gtest/gtest.h>
#include "06_constant_stencil/constant_stencil.cuh"
#include "common/buffer.cuh"
#include "common/data.hpp"
#include "common/kernel_list.hpp"
#include "common/launch.cuh"
#include "common/verify.hpp"
#include "tests/gpu_test.hpp"

namespace {

namespace cs = constant_stencil;

// Block of the scalar kernels, tiles of stencil1DSmemVec4 and stencil1DL1Vec4 (outputs per block).
constexpr size_t B = cs::kBlock, S = 4 * cs::kVec4Block, T = 4 * cs::kBlock;
const std::vector<size_t> kSizes = {1,     2,     3,     4,     5,     7,     8,     9,     B - 1, B,
                                    B + 1, S - 1, S,     S + 1, T - 1, T,     T + 1, 4099,  65537, 1000003,
                                    size_t(1) << 24, (size_t(1) << 26) + 3};

// A different coefficient set from derivative8(): random, of both signs.
cs::Coefficients random_coefficients(uint64_t seed) {
    cs::Coefficients c;
    common::fill_uniform(c.c, cs::RADIUS, seed, -2.0f, 2.0f);
    return c;
}

// One launch through `launch` on `in` (n + 2*RADIUS floats; the output
// poisoned first), compared with the CPU: exactly for a copy, within `atol`
// for the stencil (0: exact).
template <class Launch>
common::Comparison run_on(Launch&& launch, bool is_copy, const std::vector<float>& in, const cs::Coefficients& c,
                          double atol) {
    const size_t n_in = in.size(), n = n_in - 2 * cs::RADIUS;
    std::vector<float> got;
    common::DeviceBuffer<float> d_in(n_in), d_out(n), d_coef(cs::RADIUS);
    cs::set_coefficients(c, d_coef.get());
    d_in.upload(in);
    d_out.poison();
    launch(cs::Args{d_in.get(), d_out.get(), n, d_coef.get()});
    CHECK(cudaDeviceSynchronize());
    d_out.download(got);
    if (is_copy) return common::compare(got.data(), in.data() + cs::RADIUS, n);
    std::vector<double> ref(n);
    cs::stencil_cpu(in.data(), ref.data(), n, c);
    return common::compare(got.data(), ref.data(), n, atol, 0.0);
}

// Fresh random input in [-1, 1), within cs::tolerance for the stencil.
template <class Launch>
common::Comparison run(Launch&& launch, bool is_copy, size_t n, uint64_t seed, const cs::Coefficients& c) {
    std::vector<float> in(n + 2 * cs::RADIUS);
    common::fill_uniform(in.data(), in.size(), seed, -1.0f, 1.0f);
    return run_on(launch, is_copy, in, c, cs::tolerance(c, 1.0));
}

common::Comparison run(const cs::Kernel& k, size_t n, uint64_t seed, const cs::Coefficients& c) {
    return run(k.launch, k.is_copy, n, seed, c);
}

std::string why(const common::Comparison& c) {
    return std::to_string(c.mismatches) + " of " + std::to_string(c.n) + " wrong, first at " +
           std::to_string(c.first_bad) + ", max err " + std::to_string(c.max_abs_err);
}

// Every kernel the program runs by default (the pitfall is in cs::pitfalls()),
// by name, not by its place in the list.
class StencilKernel : public ::testing::TestWithParam<std::tuple<std::string, size_t>> {};

TEST_P(StencilKernel, MatchesCpu) {
    SKIP_WITHOUT_GPU();
    const cs::Kernel& k = common::kernel_named(cs::kernels(), std::get<0>(GetParam()));
    const size_t n = std::get<1>(GetParam());
    const uint64_t salt = uint64_t(&k - cs::kernels().data());  // a different input for each kernel
    const uint64_t seed = 1000003ull * n + 7919ull * salt;
    const common::Comparison c = run(k, n, seed, cs::derivative8());
    EXPECT_TRUE(c.pass()) << k.name << " at n = " << n << ": " << why(c);
}

INSTANTIATE_TEST_SUITE_P(AllKernelsAllSizes, StencilKernel,
                         ::testing::Combine(::testing::ValuesIn(common::kernel_names(cs::kernels())),
                                            ::testing::ValuesIn(kSizes)),
                         [](const ::testing::TestParamInfo<StencilKernel::ParamType>& p) {
                             return std::get<0>(p.param) + "_n" + std::to_string(std::get<1>(p.param));
                         });

// The one-wave grid of the program makes the grid-stride loop turn only for
// large n; with 1 and 3 blocks every block loops, and ends on a partial tile.
TEST(StencilGridStride, EveryBlockLoops) {
    SKIP_WITHOUT_GPU();
    for (unsigned grid : {1u, 3u})
        for (size_t n : {B + 1, 5 * B + 17, 37 * B - 1, size_t(100003)}) {
            const uint64_t seed = n * 31 + grid;
            const common::Comparison g = run([&](const cs::Args& a) { return cs::launch_global(a, grid); }, false, n, seed, cs::derivative8());
            const common::Comparison c = run([&](const cs::Args& a) { return cs::launch_constant(a, grid); }, false, n, seed, cs::derivative8());
            const common::Comparison r = run([&](const cs::Args& a) { return cs::launch_read_only(a, grid); }, false, n, seed, cs::derivative8());
            EXPECT_TRUE(g.pass()) << "stencil1DGlobal, grid " << grid << ", n = " << n << ": " << why(g);
            EXPECT_TRUE(c.pass()) << "stencil1DConstant, grid " << grid << ", n = " << n << ": " << why(c);
            EXPECT_TRUE(r.pass()) << "stencil1DReadOnly, grid " << grid << ", n = " << n << ": " << why(r);
        }
}

// cudaMemcpyToSymbol between launches takes effect: the same kernels, the
// same input, two coefficient sets, each result matches its own set and not
// the other one.
TEST(StencilCoefficients, NewCoefficientsTakeEffect) {
    SKIP_WITHOUT_GPU();
    const size_t n = 100003;
    const cs::Coefficients c1 = cs::derivative8(), c2 = random_coefficients(42);
    const size_t n_in = n + 2 * cs::RADIUS;
    std::vector<float> in(n_in), got;
    std::vector<double> ref1(n), ref2(n);
    common::fill_uniform(in.data(), n_in, 5, -1.0f, 1.0f);
    cs::stencil_cpu(in.data(), ref1.data(), n, c1);
    cs::stencil_cpu(in.data(), ref2.data(), n, c2);
    common::DeviceBuffer<float> d_in(n_in), d_out(n), d_coef(cs::RADIUS);
    d_in.upload(in);
    for (const cs::Kernel& k : cs::kernels()) {
        if (k.is_copy) continue;
        for (int round = 0; round < 2; ++round) {  // c1, c2, c1, c2: each set replaces the other
            for (int which = 1; which <= 2; ++which) {
                const cs::Coefficients& c = which == 1 ? c1 : c2;
                const std::vector<double>& want = which == 1 ? ref1 : ref2;
                const std::vector<double>& other = which == 1 ? ref2 : ref1;
                cs::set_coefficients(c, d_coef.get());
                d_out.poison();
                k.launch({d_in.get(), d_out.get(), n, d_coef.get()});
                CHECK(cudaDeviceSynchronize());
                d_out.download(got);
                const common::Comparison ok = common::compare(got.data(), want.data(), n, cs::tolerance(c, 1.0), 0.0);
                const common::Comparison stale = common::compare(got.data(), other.data(), n, cs::tolerance(c, 1.0), 0.0);
                EXPECT_TRUE(ok.pass()) << k.name << " with coefficient set " << which << ": " << why(ok);
                EXPECT_GT(stale.mismatches, n / 2) << k.name << " still computes with the previous coefficients";
            }
        }
    }
}

// ---- The seed's missing barrier ------------------------------------------
// With warp 1 made to sleep between the barrier and its reads of the tile,
// its neighbours finish, start the next pass and overwrite warp 1's halo
// before it reads it: the racy kernel computes wrong values at the warp's
// edges, the fixed kernel (second barrier) is right under the same schedule.
// compute-sanitizer racecheck reports the same hazard without the sleep.
TEST(StencilPitfall, MissingBarrierIsCaught) {
    SKIP_WITHOUT_GPU();
    const size_t n = 8 * B + 77;  // 9 passes of 2 blocks
    const unsigned grid = 2;
    const common::Comparison race =
        run([&](const cs::Args& a) { return cs::launch_race<true>(a, grid); }, false, n, 11, cs::derivative8());
    const common::Comparison fixed =
        run([&](const cs::Args& a) { return cs::launch_constant<true>(a, grid); }, false, n, 11, cs::derivative8());
    EXPECT_FALSE(race.pass()) << "the overwritten halo went unnoticed";
    EXPECT_GT(race.mismatches, 0u);
    EXPECT_TRUE(fixed.pass()) << "the fixed kernel under the same schedule: " << why(fixed);
}

// ---- A kernel that forgets the tail must be caught ------------------------
// stencil1DL1Vec4 without its scalar tail: the last n % 4 outputs stay
// unwritten. Right whenever n % 4 == 0; the NaN poison catches it otherwise.
__global__ void stencil1DL1Vec4NoTail(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const size_t t = size_t(blockIdx.x) * cs::kBlock + threadIdx.x;
    if (4 * t + 3 < n) {
        const float4* in4 = reinterpret_cast<const float4*>(in) + t;
        float x[4 * cs::kTile4];
#pragma unroll
        for (int q = 0; q < cs::kTile4; ++q) {
            const float4 v = in4[q];
            x[4 * q] = v.x; x[4 * q + 1] = v.y; x[4 * q + 2] = v.z; x[4 * q + 3] = v.w;
        }
        reinterpret_cast<float4*>(out)[t] = cs::apply4(x);
    }
}

TEST(StencilPitfall, UnwrittenTailIsCaught) {
    SKIP_WITHOUT_GPU();
    auto launch = [](const cs::Args& a) {
        stencil1DL1Vec4NoTail<<<unsigned(common::ceil_div(a.n, T)), cs::kBlock>>>(a.in, a.out, a.n);
        CHECK_LAUNCH();
        return std::string();
    };
    EXPECT_TRUE(run(launch, false, 4096, 1, cs::derivative8()).pass()) << "right when n % 4 == 0";
    for (size_t n : {size_t(1), size_t(7), size_t(1000003)}) {
        const common::Comparison c = run(launch, false, n, 2, cs::derivative8());
        EXPECT_FALSE(c.pass()) << "the unwritten tail at n = " << n << " went unnoticed";
        EXPECT_EQ(c.mismatches, n % 4);
    }
}

// ---- Pointers into the middle of an array ----------------------------------
// The float4 kernels need in and out on 16 bytes. A cudaMalloc'd buffer
// starts on 256 bytes, so base + 1 float is 4 bytes off, base + 4 floats
// aligned again. Their launchers check and compute the same outputs 4 bytes
// at a time instead, saying so in the launch column; the other kernels take
// any float pointer as it is.
struct OffsetRun {
    common::Comparison c;
    size_t outside = 0;  // floats written outside out (before it or after it)
    std::string launch;
};

// run() with in and out starting in_off and out_off floats into their buffers;
// out's buffer has 4 more floats after it. Everything outside out must stay poisoned.
OffsetRun run_at(const cs::Kernel& k, size_t n, int in_off, int out_off, uint64_t seed) {
    constexpr size_t kAfter = 4;
    const cs::Coefficients c = cs::derivative8();
    const size_t n_in = n + 2 * cs::RADIUS;
    std::vector<float> in(n_in), got;
    common::fill_uniform(in.data(), n_in, seed, -1.0f, 1.0f);
    common::DeviceBuffer<float> d_in(in_off + n_in), d_out(out_off + n + kAfter), d_coef(cs::RADIUS);
    cs::set_coefficients(c, d_coef.get());
    CHECK(cudaMemcpy(d_in.get() + in_off, in.data(), n_in * sizeof(float), cudaMemcpyHostToDevice));
    d_out.poison();
    OffsetRun r;
    r.launch = k.launch({d_in.get() + in_off, d_out.get() + out_off, n, d_coef.get()});
    CHECK(cudaDeviceSynchronize());
    d_out.download(got);
    if (k.is_copy) {
        r.c = common::compare(got.data() + out_off, in.data() + cs::RADIUS, n);
    } else {
        std::vector<double> ref(n);
        cs::stencil_cpu(in.data(), ref.data(), n, c);
        r.c = common::compare(got.data() + out_off, ref.data(), n, cs::tolerance(c, 1.0), 0.0);
    }
    r.outside = common::written_outside(got, size_t(out_off), out_off + n);
    return r;
}

TEST(StencilAlignment, PointersIntoAnArrayMatchCpu) {
    SKIP_WITHOUT_GPU();
    const std::vector<std::pair<int, int>> offsets = {{1, 0}, {0, 1}, {1, 1}, {2, 3}, {4, 4}};  // floats: in, out
    for (const cs::Kernel& k : cs::kernels())
        for (size_t n : {size_t(1), size_t(7), S + 1, T, T + 1, size_t(65537), size_t(1000003)})
            for (const auto& off : offsets) {
                const OffsetRun r = run_at(k, n, off.first, off.second, 29 * n + 7 * off.first + off.second);
                const std::string where = std::string(k.name) + " at n = " + std::to_string(n) + ", in + " +
                                          std::to_string(off.first) + ", out + " + std::to_string(off.second) +
                                          " (" + r.launch + ")";
                EXPECT_TRUE(r.c.pass()) << where << ": " << why(r.c);
                EXPECT_EQ(r.outside, 0u) << where << ": floats written outside out";
                const bool aligned = off.first % 4 == 0 && off.second % 4 == 0;
                const bool float4 = std::strstr(k.name, "Vec4") != nullptr;
                const bool fell_back = r.launch.find("not 16-byte aligned") != std::string::npos;
                EXPECT_EQ(fell_back, float4 && !aligned) << where;
            }
}

// ---- Binary-grid data: an exact float stencil ----------------------------
// Inputs j * 2^-8 with j odd in [-255, 255] (never 0, |x| >= 2^-8) and
// coefficients on a binary grid too (3/4, -3/16, 1/32, -1/256). Every
// product c_k (x[i+k] - x[i-k]) is a multiple of 2^-16 and every partial sum
// is below 2 in magnitude: fewer than 18 significant bits, exact in float
// whatever the order (FFMA included). So the GPU must match the double
// reference EXACTLY, and one dropped, doubled or wrong term at one output fails.
cs::Coefficients grid_coefficients() { return {{0.75f, -0.1875f, 0.03125f, -0.00390625f}}; }

void fill_grid(float* x, size_t n, uint64_t seed) {
    common::SplitMix64 g(seed);
    for (size_t i = 0; i < n; ++i) x[i] = float(2 * int(g.next() % 256) - 255) * 0x1p-8f;
}

// One launch on grid data; compared with `atol` (0: exact).
template <class Launch>
common::Comparison run_grid(Launch&& launch, bool is_copy, size_t n, uint64_t seed, const cs::Coefficients& c,
                            double atol) {
    std::vector<float> in(n + 2 * cs::RADIUS);
    fill_grid(in.data(), in.size(), seed);
    return run_on(launch, is_copy, in, c, atol);
}

const std::vector<size_t> kGridSizes = {1, 7, B + 1, S + 1, T + 1, 1000003, (size_t(1) << 26) + 3};
constexpr size_t kLargestTested = (size_t(1) << 26) + 3;

TEST(StencilGrid, EveryKernelIsExact) {
    SKIP_WITHOUT_GPU();
    for (const cs::Kernel& k : cs::kernels())
        for (size_t n : kGridSizes) {
            const common::Comparison c = run_grid(k.launch, k.is_copy, n, 17 * n + 3, grid_coefficients(), 0.0);
            EXPECT_TRUE(c.pass()) << k.name << " at n = " << n << " (exact): " << why(c);
        }
}

// ---- Deliberately broken kernels: the tolerance must catch them -----------
// stencil1DL1 with one output wrong: output `bad` drops its x[+RADIUS] term
// (a tile one float short on the right), or adds its x[+1] term twice.
enum class Bug { DropTerm, DoubleTerm };
template <Bug B>
__global__ void stencil1DL1Broken(const float* __restrict__ in, float* __restrict__ out, size_t n, size_t bad) {
    const size_t i = size_t(blockIdx.x) * cs::kBlock + threadIdx.x;
    if (i >= n) return;
    const float* x = in + i + cs::RADIUS;
    float acc = cs::apply(x);
    if (i == bad) {
        if (B == Bug::DropTerm) acc -= cs::c_coef[cs::RADIUS - 1] * x[cs::RADIUS];  // BUG: as if x[+4] were 0
        else acc += cs::c_coef[0] * x[1];                                           // BUG: x[+1] counted twice
    }
    out[i] = acc;
}

template <Bug B>
auto broken_launch(size_t bad) {
    return [bad](const cs::Args& a) {
        stencil1DL1Broken<B><<<unsigned(common::ceil_div(a.n, size_t(cs::kBlock))), cs::kBlock>>>(a.in, a.out, a.n, bad);
        CHECK_LAUNCH();
        return std::string();
    };
}

// At the largest tested size, the broken output is the last one (the edge a
// tile bug hits) or one in the middle. On grid data (|x| >= 2^-8) the error
// is at least |c_4| 2^-8 = 1.4e-5 with the program's derivative8 and its
// tolerance (1.0e-6): caught with certainty; exactly one mismatch. Random
// data: printed (caught unless the dropped x is below ~3e-4 in magnitude).
TEST(StencilBroken, OneWrongOutputIsCaughtAtTheLargestTestedSize) {
    SKIP_WITHOUT_GPU();
    const size_t n = kLargestTested;
    const cs::Coefficients d8 = cs::derivative8();
    const double tol = cs::tolerance(d8, 1.0);
    for (size_t bad : {n - 1, n / 2}) {
        const common::Comparison drop = run_grid(broken_launch<Bug::DropTerm>(bad), false, n, 5, d8, tol);
        const common::Comparison twice = run_grid(broken_launch<Bug::DoubleTerm>(bad), false, n, 6, d8, tol);
        const common::Comparison drop_exact = run_grid(broken_launch<Bug::DropTerm>(bad), false, n, 7, grid_coefficients(), 0.0);
        const common::Comparison drop_random = run(broken_launch<Bug::DropTerm>(bad), false, n, 8, d8);
        EXPECT_EQ(drop.mismatches, 1u) << "dropped term at output " << bad << ": " << why(drop);
        EXPECT_EQ(drop.first_bad, bad);
        EXPECT_EQ(twice.mismatches, 1u) << "doubled term at output " << bad << ": " << why(twice);
        EXPECT_EQ(drop_exact.mismatches, 1u) << "exact check, dropped term at output " << bad << ": " << why(drop_exact);
        std::printf("[ broken ] stencil1DL1Broken n=%zu output %zu: dropped x[+4] term: grid data error %.3g vs "
                    "tolerance %.3g (%s), exact grid check error %.3g (%s), random data error %.3g (%s); "
                    "doubled x[+1] term: error %.3g (%s)\n",
                    n, bad, drop.max_abs_err, tol, drop.pass() ? "MISSED" : "caught", drop_exact.max_abs_err,
                    drop_exact.pass() ? "MISSED" : "caught", drop_random.max_abs_err,
                    drop_random.pass() ? "missed" : "caught", twice.max_abs_err, twice.pass() ? "MISSED" : "caught");
    }
}

// ---- The largest n the program admits (kMaxN = 2^30 outputs) --------------
// Every index is size_t; this runs every kernel there on grid data (exact),
// and the broken kernel, whose single bad output must be found. 8 GiB of
// device memory, ~16 GiB of host memory; skipped, saying so, where short.
TEST(StencilLargestN, EveryKernelExactAtMaxN) {
    SKIP_WITHOUT_GPU();
    const size_t n = size_t(cs::kMaxN), n_in = n + 2 * cs::RADIUS;
    SKIP_UNLESS_MEMORY("n = 2^30", double(cs::device_bytes(n)) + double(256 << 20), double(n) * 18);
    // Allocated right after the check, before the CPU reference.
    common::DeviceBuffer<float> d_in(n_in), d_out(n), d_coef(cs::RADIUS);
    const cs::Coefficients c = grid_coefficients();
    std::vector<float> in(n_in), got;
    fill_grid(in.data(), n_in, 2026);
    std::vector<double> ref(n);
    cs::stencil_cpu(in.data(), ref.data(), n, c);
    cs::set_coefficients(c, d_coef.get());
    d_in.upload(in);
    const cs::Args a{d_in.get(), d_out.get(), n, d_coef.get()};
    auto check = [&](auto&& launch, bool is_copy) {
        d_out.poison();
        launch(a);
        CHECK(cudaDeviceSynchronize());
        d_out.download(got);
        return is_copy ? common::compare(got.data(), in.data() + cs::RADIUS, n) : common::compare(got.data(), ref.data(), n);
    };
    for (const cs::Kernel& k : cs::kernels()) {
        const common::Comparison r = check(k.launch, k.is_copy);
        EXPECT_TRUE(r.pass()) << k.name << " at n = 2^30: " << why(r);
    }
    const common::Comparison b = check(broken_launch<Bug::DropTerm>(n - 1), false);
    EXPECT_EQ(b.mismatches, 1u) << "the broken kernel at n = 2^30: " << why(b);
    std::printf("[ broken ] stencil1DL1Broken n=%zu (largest admitted), dropped term at the last output: %zu mismatch, "
                "at %zu, error %.3g (exact check)\n",
                n, b.mismatches, b.first_bad, b.max_abs_err);
}

// ---- The constant-cache experiment computes what it claims ----------------
TEST(ConstantCache, WarpReadsSumExactly) {
    SKIP_WITHOUT_GPU();
    const int iters = 1000;
    const size_t threads = 2 * cs::kBlock;
    std::vector<int> ti(cs::kTableSize);
    common::fill_uniform(ti.data(), ti.size(), 9, 1, 15);
    const std::vector<float> table(ti.begin(), ti.end());
    common::DeviceBuffer<float> d_table(cs::kTableSize), d_out(threads);
    cs::set_table(table, d_table.get());
    for (bool constant : {true, false})
        for (int d : {1, 2, 8, 32}) {
            d_out.poison();
            cs::launch_warp_reads(constant, d_table.get(), d_out.get(), threads, iters, d);
            CHECK(cudaDeviceSynchronize());
            std::vector<float> got;
            d_out.download(got);
            for (size_t t = 0; t < threads; ++t)
                ASSERT_EQ(double(got[t]), cs::warp_reads_cpu(table, iters, d, int(t % 32)))
                    << (constant ? "__constant__" : "__ldg") << " d = " << d << " thread " << t;
        }
}

// ---- CPU-only -------------------------------------------------------------

// The 8th-order derivative is exact on polynomials of degree <= 8: on
// x(j) = j^3 it gives 3 j^2 (up to the float rounding of the coefficients).
TEST(StencilCpu, ReferenceDifferentiatesACubic) {
    const size_t n = 50;
    std::vector<float> in(n + 2 * cs::RADIUS);
    for (size_t j = 0; j < in.size(); ++j) {
        const double x = double(j) - cs::RADIUS - 20.0;  // x = i - 20 at output i
        in[j] = float(x * x * x);                        // small integers: exact in float
    }
    std::vector<double> out(n);
    cs::stencil_cpu(in.data(), out.data(), n, cs::derivative8());
    for (size_t i = 0; i < n; ++i) {
        const double x = double(i) - 20.0;
        EXPECT_NEAR(out[i], 3 * x * x, 1e-6 * (1 + 3 * x * x)) << i;
    }
}

TEST(StencilCpu, ReferenceOnAHandExample) {
    // One output: x = in[0..8], weights c_k on x[4+k] - x[4-k].
    const float in[9] = {1, 2, 3, 4, 5, 7, 11, 13, 17};
    const cs::Coefficients c{{1, 10, 100, 1000}};
    double out = 0;
    cs::stencil_cpu(in, &out, 1, c);
    EXPECT_EQ(out, 1 * (7 - 4) + 10 * (11 - 3) + 100 * (13 - 2) + 1000 * (17 - 1));
}

TEST(StencilCpu, ToleranceIsSmallAndScales) {
    const double t = cs::tolerance(cs::derivative8(), 1.0);
    EXPECT_GT(t, 0.0);
    EXPECT_LT(t, 1e-5);  // about 1e-6: far below any indexing error on data in [-1, 1)
    EXPECT_DOUBLE_EQ(cs::tolerance(cs::derivative8(), 4.0), 4 * t);
}

TEST(StencilCpu, SizeLimits) {
    EXPECT_EQ(cs::check_n(1), "");
    EXPECT_EQ(cs::check_n(int64_t(1) << 28), "");
    EXPECT_EQ(cs::check_n(cs::kMaxN), "");
    EXPECT_NE(cs::check_n(0), "");
    EXPECT_NE(cs::check_n(-5), "");
    EXPECT_NE(cs::check_n(cs::kMaxN + 1), "");
    EXPECT_EQ(cs::device_bytes(cs::kMaxN), (2 * size_t(cs::kMaxN) + 3 * cs::RADIUS) * sizeof(float));
}

// What the float4 launchers check before launching (host logic: the made-up
// addresses below are never dereferenced).
TEST(StencilCpu, Float4LaunchersCheckPointers) {
    float* base = reinterpret_cast<float*>(uintptr_t(1) << 20);  // 256-byte aligned, like cudaMalloc
    EXPECT_EQ(cs::vec4_refusal({base, base + 1024, 1000, nullptr}), "");
    EXPECT_EQ(cs::vec4_refusal({base + 4, base + 8, 1, nullptr}), "");
    EXPECT_EQ(cs::vec4_refusal({base + 1, base, 1000, nullptr}), "in or out not 16-byte aligned");
    EXPECT_EQ(cs::vec4_refusal({base, base + 2, 1000, nullptr}), "in or out not 16-byte aligned");
    EXPECT_EQ(cs::vec4_refusal({base + 3, base + 3, 1000, nullptr}), "in or out not 16-byte aligned");
}

TEST(StencilCpu, KernelListIsInTeachingOrder) {
    const auto& k = cs::kernels();
    ASSERT_GE(k.size(), 7u);
    EXPECT_STREQ(k.front().name, "copyVec4");
    EXPECT_TRUE(k.front().is_copy);
    for (const cs::Kernel& ki : k) {
        EXPECT_EQ(common::find_kernel(k, ki.name), &ki);
        EXPECT_EQ(common::find_kernel(cs::pitfalls(), ki.name), nullptr);
        if (&ki != &k.front()) EXPECT_EQ(std::strncmp(ki.name, "stencil1D", 9), 0) << ki.name;
    }
    EXPECT_EQ(common::find_kernel(k, "nope"), nullptr);
}

// The pitfall is in its own list, never in kernels(): a loop over kernels()
// cannot run racy code.
TEST(StencilCpu, PitfallsAreASeparateList) {
    ASSERT_EQ(cs::pitfalls().size(), 1u);
    EXPECT_EQ(common::kernel_names(cs::pitfalls()), std::vector<std::string>{"stencil1DConstantRace"});
    EXPECT_EQ(common::find_kernel(cs::kernels(), "stencil1DConstantRace"), nullptr);
    EXPECT_EQ(common::find_kernel(cs::pitfalls(), "stencil1DConstantRace"), &cs::pitfalls().front());
}

TEST(ConstantCacheCpu, ReferenceCountsDistinctAddresses) {
    std::vector<float> t(cs::kTableSize);
    for (int i = 0; i < cs::kTableSize; ++i) t[i] = float(i);
    // d = 1: every lane reads table[32 * it % 256]; d = 32: lane l reads table[32 * it % 256 + l].
    EXPECT_EQ(cs::warp_reads_cpu(t, 8, 1, 5), 0 + 32 + 64 + 96 + 128 + 160 + 192 + 224);
    EXPECT_EQ(cs::warp_reads_cpu(t, 8, 32, 5), 0 + 32 + 64 + 96 + 128 + 160 + 192 + 224 + 8 * 5);
    EXPECT_EQ(cs::warp_reads_cpu(t, 8, 4, 5), cs::warp_reads_cpu(t, 8, 4, 1));  // lanes 5 and 1 share 5 & 3
}

}  // namespace
