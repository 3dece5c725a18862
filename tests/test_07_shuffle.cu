// 07_shuffle: the CPU emulator against the documented semantics (CPU only),
// the GPU against the emulator for every primitive x width x parameter x
// mask x type, the building blocks at odd sizes, and y = A x at many shapes
// against a long-double CPU reference. Plus: a wrong width, a wrong mask and
// a wrong matvec kernel are each caught; every matvec kernel with A, x and y
// pointing into the middle of their arrays; launchers refuse what they cannot
// take. Kernels are looked up by name. (The seeds 001, 003 and 004 quoted
// below: the top README's Sources section.)
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <gtest/gtest.h>
#include "07_shuffle/shuffle.cuh"
#include "common/buffer.cuh"
#include "common/data.hpp"
#include "common/kernel_list.hpp"
#include "common/verify.hpp"
#include "tests/gpu_test.hpp"

namespace {

using namespace shuffle;

Warp<int> lane_ids() {
    Warp<int> v;
    for (int l = 0; l < kWarp; ++l) v[l] = l;
    return v;
}

// The lane each lane reads (mask full, all defined).
Warp<int> sources(Op op, int param, int width) {
    const Shuffled<int> s = emulate(op, kFullMask, lane_ids(), param, width);
    for (int l = 0; l < kWarp; ++l) EXPECT_TRUE(s.defined[l]);
    return s.value;
}

// ---- CPU only: the emulator says what the guide and the seeds say ---------------
TEST(ShuffleEmulator, IdxBroadcastsWithinEachSegment) {
    // seed 003: __shfl_sync(0xffffffff, x, 3, 16): lanes 0..15 get lane 3, lanes 16..31 lane 19.
    const Warp<int> s = sources(Op::Idx, 3, 16);
    for (int l = 0; l < kWarp; ++l) EXPECT_EQ(s[l], l < 16 ? 3 : 19) << l;
    // srcLane outside [0, width): srcLane % width, the non-negative residue.
    for (int l = 0; l < kWarp; ++l) {
        EXPECT_EQ(sources(Op::Idx, 35, 32)[l], 3);
        EXPECT_EQ(sources(Op::Idx, 10, 8)[l], l / 8 * 8 + 2);
        EXPECT_EQ(sources(Op::Idx, -1, 8)[l], l / 8 * 8 + 7);
        EXPECT_EQ(sources(Op::Idx, 5, 1)[l], l);  // width 1: every lane is its own segment
    }
}

TEST(ShuffleEmulator, UpAndDownDoNotWrapAroundTheSegment) {
    // seed 001: __shfl_up_sync(mask, x, 2, 16): lanes 2..15 read 0..13, 18..31 read 16..29, the rest keep theirs.
    const Warp<int> up = sources(Op::Up, 2, 16), down = sources(Op::Down, 2, 16);
    for (int l = 0; l < kWarp; ++l) {
        EXPECT_EQ(up[l], l % 16 >= 2 ? l - 2 : l) << l;
        EXPECT_EQ(down[l], l % 16 <= 13 ? l + 2 : l) << l;
    }
    for (int l = 0; l < kWarp; ++l) EXPECT_EQ(sources(Op::Up, 0, 32)[l], l);
}

TEST(ShuffleEmulator, XorTableOfSeed004) {
    // The first 19 lanes of seed 004's table, laneMask 1, 2, 4, 8, 16.
    const int table[5][19] = {
        {1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 17, 16, 19},
        {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 18, 19, 16},
        {4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11, 20, 21, 22},
        {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 24, 25, 26},
        {16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 0, 1, 2}};
    for (int m = 0; m < 5; ++m) {
        const Warp<int> s = sources(Op::Xor, 1 << m, 32);
        for (int l = 0; l < 19; ++l) EXPECT_EQ(s[l], table[m][l]) << "laneMask " << (1 << m) << " lane " << l;
    }
}

TEST(ShuffleEmulator, XorReadsEarlierSegmentsButNotLaterOnes) {
    // Programming Guide: with width < 32 a lane may read from an earlier
    // group; reading from a later group returns its own value.
    const Warp<int> s = sources(Op::Xor, 16, 16);
    for (int l = 0; l < kWarp; ++l) EXPECT_EQ(s[l], l < 16 ? l : l - 16) << l;
}

TEST(ShuffleEmulator, OnlyTheLowFiveBitsOfTheParameterCount) {
    for (int l = 0; l < kWarp; ++l) {
        EXPECT_EQ(sources(Op::Down, 33, 32)[l], sources(Op::Down, 1, 32)[l]);
        EXPECT_EQ(sources(Op::Xor, -1, 32)[l], 31 - l);
    }
}

TEST(ShuffleEmulator, SeedDemosAndWhoHoldsTheSum) {
    const Warp<int> s = emulate_scan4(8);
    EXPECT_EQ(s[0], 31);
    EXPECT_EQ(s[7], 31 + 30 + 29 + 28 + 27 + 26 + 25 + 24);
    EXPECT_EQ(s[8], 23);
    Warp<int> v;
    for (int l = 0; l < kWarp; ++l) v[l] = 31 - l;
    const Warp<int> down = emulate_reduce_down(v), xr = emulate_reduce_xor(v);
    EXPECT_EQ(down[0], 496);
    for (int l = 0; l < kWarp; ++l) EXPECT_EQ(xr[l], 496);
    int others_with_total = 0;
    for (int l = 1; l < kWarp; ++l) others_with_total += down[l] == 496;
    EXPECT_EQ(others_with_total, 0) << "shfl_down leaves the total in lane 0 only";
}

// ---- A wrong mask is caught (CPU only: the GPU result would be undefined) ----------
TEST(ShuffleMisuse, WrongMasksAndWidthsAreReported) {
    // Correct uses.
    EXPECT_EQ(misuse(Op::Xor, kFullMask, kFullMask, 16, 32), "");
    EXPECT_EQ(misuse(Op::Down, 0x0000ffffu, 0x0000ffffu, 8, 16), "");  // 16 active lanes, offsets < 16
    EXPECT_EQ(misuse(Op::Xor, 0x0000ffffu, 0x0000ffffu, 8, 32), "");
    // The seeds' 0xffff meant as "the whole warp": lanes 16..31 call without being in the mask.
    EXPECT_NE(misuse(Op::Down, 0xffffu, kFullMask, 16, 32), "");
    // 16 active lanes reading 16 lanes away: the sources are outside the mask.
    EXPECT_NE(misuse(Op::Down, 0x0000ffffu, 0x0000ffffu, 16, 32), "");
    EXPECT_NE(misuse(Op::Xor, 0x0000ffffu, 0x0000ffffu, 16, 32), "");
    // A full mask when only half the warp reaches the call.
    EXPECT_NE(misuse(Op::Idx, kFullMask, 0x0000ffffu, 0, 32), "");
    // Widths that are not powers of two.
    EXPECT_NE(misuse(Op::Idx, kFullMask, kFullMask, 0, 3), "");
    EXPECT_NE(misuse(Op::Idx, kFullMask, kFullMask, 0, 64), "");
    // The emulator marks the undefined lanes, and only those.
    const Shuffled<int> s = emulate(Op::Down, 0x0000ffffu, lane_ids(), 8, 32);
    for (int l = 0; l < kWarp; ++l) {
        EXPECT_EQ(s.executed[l], l < 16);
        if (l < 16) EXPECT_EQ(s.defined[l], l + 8 > 15 ? false : true) << l;
    }
}

TEST(ShuffleCpu, MatvecReferenceAndLimits) {
    const double A[2 * 3] = {1, 2, 3, -4, 5, -6}, x[3] = {1, 10, 100};
    double y[2], a[2];
    matvec_cpu(A, x, 2, 3, y, a);
    EXPECT_EQ(y[0], 321);
    EXPECT_EQ(y[1], -4 + 50 - 600);
    EXPECT_EQ(a[1], 4 + 50 + 600);
    EXPECT_EQ(check_shape(1, 1), "");
    EXPECT_EQ(check_shape(16384, 8192), "");
    EXPECT_NE(check_shape(0, 5), "");
    EXPECT_NE(check_shape(5, 0), "");
    EXPECT_NE(check_shape(kMaxRows + 1, 1), "");
    EXPECT_NE(check_shape(1 << 20, 1 << 20), "");
    EXPECT_GT(gamma_n(8192), 8192 * 1.1e-16);
    EXPECT_LT(gamma_n(8192), 8192 * 1.2e-16);
}

// ---- GPU: every primitive x width x parameter x mask x type vs the emulator --------
class Primitive : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

template <class T>
void check_width(Op op, int width, uint64_t seed) {
    std::vector<Probe> probes;
    for (int p : probe_params(op)) probes.push_back({width, p});
    for (unsigned mask : probe_masks(seed)) {
        const PrimitiveCheck c = check_primitive<T>(op, mask, probes, seed ^ mask);
        EXPECT_TRUE(c.pass()) << c.first;
        EXPECT_GT(c.checked, 0u);
        if (mask != kFullMask) EXPECT_GT(c.untouched, 0u);
    }
}

TEST_P(Primitive, MatchesEmulator) {
    SKIP_WITHOUT_GPU();
    const Op op = Op(std::get<0>(GetParam()));
    const int width = 1 << std::get<1>(GetParam());
    const uint64_t seed = 977 * std::get<0>(GetParam()) + 31 * width + std::get<2>(GetParam());
    switch (std::get<2>(GetParam())) {
        case 0: check_width<int>(op, width, seed); break;
        case 1: check_width<unsigned long long>(op, width, seed); break;
        case 2: check_width<float>(op, width, seed); break;
        default: check_width<double>(op, width, seed); break;
    }
}

std::string primitive_test_name(const ::testing::TestParamInfo<Primitive::ParamType>& p) {
    const char* types[] = {"int", "u64", "float", "double"};
    return std::string(op_name(Op(std::get<0>(p.param))) + 2) + "_width" + std::to_string(1 << std::get<1>(p.param)) +
           "_" + types[std::get<2>(p.param)];
}
INSTANTIATE_TEST_SUITE_P(OpsWidthsTypes, Primitive,
                         ::testing::Combine(::testing::Range(0, 4), ::testing::Range(0, 6), ::testing::Range(0, 4)),
                         primitive_test_name);

// ---- A wrong width is caught ------------------------------------------------------
TEST(ShuffleMisuse, WrongWidthIsCaughtByTheEmulatorComparison) {
    SKIP_WITHOUT_GPU();
    for (Op op : {Op::Idx, Op::Up, Op::Down, Op::Xor})
        for (int w = 2; w <= 32; w *= 2) {
            std::vector<Probe> probes;
            for (int p : probe_params(op)) probes.push_back({w, p});
            EXPECT_TRUE(check_primitive<int>(op, kFullMask, probes, 5).pass());
            const PrimitiveCheck wrong = check_primitive<int>(op, kFullMask, probes, 5, w / 2);
            EXPECT_FALSE(wrong.pass()) << op_name(op) << " width " << w << " vs " << w / 2 << " went unnoticed";
        }
}

Warp<int> run_warp_kernel(void (*k)(int*, int), int width) {
    common::DeviceBuffer<int> d(kWarp);
    std::vector<int> h;
    d.poison();
    k<<<1, kWarp>>>(d.get(), width);
    CHECK_LAUNCH();
    d.download(h);
    Warp<int> w;
    std::copy(h.begin(), h.end(), w.begin());
    return w;
}

TEST(ShuffleMisuse, GroupBroadcastWithTheWrongWidthIsCaught) {
    SKIP_WITHOUT_GPU();
    Warp<int> v;
    for (int l = 0; l < kWarp; ++l) v[l] = 100 + l;
    const Warp<int> want = emulate(Op::Idx, kFullMask, v, 0, 8).value;  // the intended 8-lane groups
    EXPECT_EQ(run_warp_kernel(groupBcast, 8), want);
    const Warp<int> wrong = run_warp_kernel(groupBcast, 32);  // width forgotten: the default 32
    EXPECT_NE(wrong, want) << "the wrong width went unnoticed";
    EXPECT_EQ(wrong, emulate(Op::Idx, kFullMask, v, 0, 32).value);
}

TEST(ShuffleDemos, Scan4DoesNotDependOnItsWidth) {
    SKIP_WITHOUT_GPU();
    // Its (laneId & 7) >= i guard keeps every add inside an 8-lane group.
    EXPECT_EQ(run_warp_kernel(scan4Width, 8), emulate_scan4(8));
    EXPECT_EQ(run_warp_kernel(scan4Width, 32), emulate_scan4(8));
    EXPECT_EQ(emulate_scan4(32), emulate_scan4(8));
}

// ---- GPU: the seed demos and the xor table ---------------------------------------
TEST(ShuffleDemos, BcastScan4WarpReduceXorTable) {
    SKIP_WITHOUT_GPU();
    common::DeviceBuffer<int> d(5 * kWarp), d2(kWarp);
    std::vector<int> h, h2;
    d.poison();
    bcast<<<1, kWarp>>>(-77, d.get());
    CHECK_LAUNCH();
    d.download(h);
    for (int l = 0; l < kWarp; ++l) EXPECT_EQ(h[l], -77);
    scan4<<<1, kWarp>>>(d.get());
    CHECK_LAUNCH();
    d.download(h);
    const Warp<int> s = emulate_scan4(8);
    for (int l = 0; l < kWarp; ++l) EXPECT_EQ(h[l], s[l]) << l;
    warpReduce<<<1, kWarp>>>(d.get());
    CHECK_LAUNCH();
    d.download(h);
    for (int l = 0; l < kWarp; ++l) EXPECT_EQ(h[l], 496) << l;
    xorTable<<<1, kWarp>>>(d.get());
    CHECK_LAUNCH();
    d.download(h);
    for (int m = 0; m < 5; ++m)
        for (int l = 0; l < kWarp; ++l) EXPECT_EQ(h[m * kWarp + l], l ^ (1 << m));
    d.poison();
    d2.poison();
    reduceDownVsXor<<<1, kWarp>>>(d.get(), d2.get());
    CHECK_LAUNCH();
    d.download(h);
    d2.download(h2);
    Warp<int> v;
    for (int l = 0; l < kWarp; ++l) v[l] = 31 - l;
    const Warp<int> down = emulate_reduce_down(v), xr = emulate_reduce_xor(v);
    for (int l = 0; l < kWarp; ++l) {
        EXPECT_EQ(h[l], down[l]) << l;
        EXPECT_EQ(h2[l], xr[l]) << l;
    }
}

// ---- GPU: reduce and scans at odd sizes, four types --------------------------------
const std::vector<size_t> kSizes = {1, 2, 31, 32, 33, 255, 256, 257, 1000, 4099, 65537, 1000003};

class Blocks : public ::testing::TestWithParam<std::tuple<int, size_t>> {};

template <class T>
void check_blocks(size_t n, uint64_t seed) {
    EXPECT_TRUE(check_reduce<T>(n, seed)) << type_name<T>() << " reduce, n = " << n;
    EXPECT_TRUE(check_scan<T>(n, false, seed + 1)) << type_name<T>() << " warp scans, n = " << n;
    EXPECT_TRUE(check_scan<T>(n, true, seed + 2)) << type_name<T>() << " block scans, n = " << n;
}

TEST_P(Blocks, MatchCpu) {
    SKIP_WITHOUT_GPU();
    const size_t n = std::get<1>(GetParam());
    switch (std::get<0>(GetParam())) {
        case 0: check_blocks<int>(n, n); break;
        case 1: check_blocks<long long>(n, n + 1); break;
        case 2: check_blocks<float>(n, n + 2); break;
        default: check_blocks<double>(n, n + 3); break;
    }
}

std::string blocks_test_name(const ::testing::TestParamInfo<Blocks::ParamType>& p) {
    const char* types[] = {"int", "longlong", "float", "double"};
    return std::string(types[std::get<0>(p.param)]) + "_n" + std::to_string(std::get<1>(p.param));
}
INSTANTIATE_TEST_SUITE_P(TypesSizes, Blocks, ::testing::Combine(::testing::Range(0, 4), ::testing::ValuesIn(kSizes)),
                         blocks_test_name);

// ---- GPU: y = A x -----------------------------------------------------------------
struct Shape { int rows, cols; };

// "matvecShuffle_1000x333": a kernel x shape test's name.
std::string kernel_shape_test_name(const std::string& kernel, Shape s) {
    return kernel + "_" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

// One row, one column, cols < 32, odd and even cols (16-byte alignment of
// every other row), primes, and shapes past a full GPU of warps.
// Few long rows (split across blocks): 1 x 1000001, 3 x 100003, 2 x 65537, 257 x 8191.
const std::vector<Shape> kShapes = {{1, 1},     {1, 1000},  {1000, 1},  {2, 2},     {7, 31},    {33, 33},
                                    {129, 64},  {100, 333}, {1000, 333}, {3, 100003}, {257, 8191}, {4096, 1024},
                                    {65537, 3}, {40000, 96}, {1, 1000001}, {2, 65537}, {5000, 4099}};

// A launcher's "" (it refused: nothing ran) is a test failure, and the poisoned y is not
// compared: every row counts as wrong.
common::Comparison refused(Shape s) {
    ADD_FAILURE() << "the launcher refused " << s.rows << "x" << s.cols << ": nothing launched";
    common::Comparison c;
    c.n = c.mismatches = size_t(s.rows);
    return c;
}

// Runs `launch` and compares y with the CPU within gamma_{cols+1} * max_r sum_c |A x|.
template <class Launch>
common::Comparison run_matvec(Launch launch, Shape s, uint64_t seed, double* tol_out = nullptr) {
    const size_t n = size_t(s.rows) * s.cols;
    std::vector<double> A(n), x(s.cols), ref(s.rows), abs_dot(s.rows), got;
    common::fill_uniform(A.data(), n, seed, -1.0, 1.0);
    common::fill_uniform(x.data(), x.size(), seed + 1, -1.0, 1.0);
    matvec_cpu(A.data(), x.data(), s.rows, s.cols, ref.data(), abs_dot.data());
    double tol = 0;
    for (double a : abs_dot) tol = std::max(tol, a);
    tol *= gamma_n(s.cols + 1.0);
    if (tol_out) *tol_out = tol;
    common::DeviceBuffer<double> d_A(n), d_x(s.cols), d_y(s.rows), d_scratch(scratch_doubles());
    d_A.upload(A);
    d_x.upload(x);
    d_y.poison();
    if (launch(d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols, d_scratch.get()).empty()) return refused(s);
    CHECK(cudaDeviceSynchronize());
    d_y.download(got);
    return common::compare(got.data(), ref.data(), s.rows, tol, 0.0);
}

class Matvec : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(Matvec, MatchesCpu) {
    SKIP_WITHOUT_GPU();
    const MatvecKernel& k = common::kernel_named(kernels(), std::get<0>(GetParam()));
    const Shape s = std::get<1>(GetParam());
    const common::Comparison c = run_matvec(k.launch, s, 7919ull * s.rows + s.cols);
    EXPECT_TRUE(c.pass()) << k.name << " on " << s.rows << "x" << s.cols << ": " << c.mismatches << " of " << c.n
                          << " rows wrong, first " << c.first_bad << ", max err " << c.max_abs_err;
}

INSTANTIATE_TEST_SUITE_P(AllKernelsAllShapes, Matvec,
                         ::testing::Combine(::testing::ValuesIn(common::kernel_names(kernels())),
                                            ::testing::ValuesIn(kShapes)),
                         [](const ::testing::TestParamInfo<Matvec::ParamType>& p) {
                             return kernel_shape_test_name(std::get<0>(p.param), std::get<1>(p.param));
                         });

// Every (lanes per row, rows per segment) variant the tuner may pick, odd and even cols.
TEST(MatvecVariants, EveryLanesRowsCombination) {
    SKIP_WITHOUT_GPU();
    for (int l : kLaneChoices)
        for (int r : kRowChoices)
            for (Shape s : std::vector<Shape>{{1, 1}, {5, 7}, {37, 64}, {33, 333}, {130, 1}, {9, 1024}, {1000, 3}, {300, 17}}) {
                auto launch = [&](const double* A, const double* x, double* y, int rows, int cols, double*) {
                    return launch_shape({l, r}, A, x, y, rows, cols);
                };
                const common::Comparison c = run_matvec(launch, s, 11ull * l + r + s.cols);
                EXPECT_TRUE(c.pass()) << "lanes " << l << " rows " << r << " on " << s.rows << "x" << s.cols
                                      << ": first bad row " << c.first_bad;
            }
}

TEST(MatvecVariants, BlockPerRow) {
    SKIP_WITHOUT_GPU();
    for (Shape s : std::vector<Shape>{{1, 1}, {3, 2}, {2, 7}, {5, 4097}, {17, 4096}, {4, 100003}, {3, 65536}}) {
        auto launch = [&](const double* A, const double* x, double* y, int rows, int cols, double*) {
            return launch_shape({32, 1, true}, A, x, y, rows, cols);
        };
        const common::Comparison c = run_matvec(launch, s, 13ull * s.rows + s.cols);
        EXPECT_TRUE(c.pass()) << "block per row on " << s.rows << "x" << s.cols << ": first bad row " << c.first_bad;
    }
}

TEST(MatvecVariants, SplitRows) {
    SKIP_WITHOUT_GPU();
    for (Shape s : std::vector<Shape>{{1, 1}, {1, 2}, {2, 7}, {1, 4097}, {3, 100003}, {2, 65537}, {7, 1000001},
                                      {1000, 4099}, {4200, 4096}}) {
        auto launch = [&](const double* A, const double* x, double* y, int rows, int cols, double* scratch) {
            return launch_matvecSplitRow(A, x, y, rows, cols, scratch);
        };
        const common::Comparison c = run_matvec(launch, s, 17ull * s.rows + s.cols);
        EXPECT_TRUE(c.pass()) << "split rows on " << s.rows << "x" << s.cols << ": first bad row " << c.first_bad;
    }
}

// A shape a launcher cannot take is refused where it is entered: nothing launched, "" returned,
// the process goes on (no GPU needed: nothing reaches the device).
TEST(MatvecVariants, LaunchersRefuseShapesTheyCannotTake) {
    EXPECT_EQ(launch_matvecThinRows(nullptr, nullptr, nullptr, 100, kMaxThinCols + 1), "");
    EXPECT_EQ(launch_matvecThinRows(nullptr, nullptr, nullptr, 0, 1), "");
    EXPECT_EQ(launch_matvecSplitRow(nullptr, nullptr, nullptr, 4, 4, nullptr), "") << "no scratch array";
}

// Pointers off 16 bytes (host logic: the made-up addresses are never dereferenced). The
// building blocks of steps 13 to 16 refuse them ("", nothing launched); matvecShuffleVec2 and
// matvecShuffleTuned run step 12's matvecShuffle instead (MatvecAlignment, below).
TEST(MatvecVariants, LaunchersRefusePointersOffSixteenBytes) {
    double* base = reinterpret_cast<double*>(uintptr_t(1) << 20);  // 256-byte aligned, like cudaMalloc
    EXPECT_EQ(vec2_refusal(base, base + 1024), "");
    EXPECT_EQ(vec2_refusal(base + 2, base + 4), "");
    EXPECT_EQ(vec2_refusal(base + 1, base), "A or x not 16-byte aligned");
    EXPECT_EQ(vec2_refusal(base, base + 3), "A or x not 16-byte aligned");
    const Vec2Shape warp_rows{8, 1}, thin{1, 1, false, false, true};
    EXPECT_EQ(tuned_refusal(warp_rows, base, base + 2, base + 4), "");
    EXPECT_EQ(tuned_refusal(warp_rows, base, base, base + 1), "") << "y is stored as scalars";
    EXPECT_EQ(tuned_refusal(warp_rows, base + 1, base, base), "A or x not 16-byte aligned");
    EXPECT_EQ(tuned_refusal(warp_rows, base, base + 1, base), "A or x not 16-byte aligned");
    EXPECT_EQ(tuned_refusal(thin, base, base + 1, base), "") << "x is read as scalars";
    EXPECT_EQ(tuned_refusal(thin, base, base, base + 1), "A or y not 16-byte aligned (matvecThinRows)");
    EXPECT_EQ(tuned_refusal(thin, base + 1, base, base), "A or y not 16-byte aligned (matvecThinRows)");
    EXPECT_EQ((launch_matvecVec2<32, 1>(base + 1, base, base, 100, 64)), "");
    EXPECT_EQ((launch_matvecVec2<4, 2>(base, base + 1, base, 100, 63)), "");
    EXPECT_EQ(launch_shape({8, 1}, base + 1, base, base, 100, 64), "");
    EXPECT_EQ(launch_matvecBlockRow(base + 1, base, base, 4, 100000), "");
    EXPECT_EQ(launch_shape({32, 1, true}, base, base + 1, base, 4, 100000), "");
    EXPECT_EQ(launch_matvecSplitRow(base + 1, base, base, 2, 1000000, base), "");
    EXPECT_EQ(launch_matvecThinRows(base + 1, base, base, 100, 3), "") << "A off 16 bytes";
    EXPECT_EQ(launch_matvecThinRows(base, base, base + 1, 100, 3), "") << "y off 16 bytes";
}

TEST(MatvecVariants, SplitRowRefusesPartialsPastTheScratchArray) {
    SKIP_WITHOUT_GPU();  // the chunk count depends on the device's SMs
    int rows = 1 << 10;
    while (rows < (1 << 30) && split_fits_scratch(rows, 1 << 20)) rows *= 2;
    ASSERT_FALSE(split_fits_scratch(rows, 1 << 20));
    EXPECT_EQ(launch_matvecSplitRow(nullptr, nullptr, nullptr, rows, 1 << 20, reinterpret_cast<double*>(16)), "");
}

TEST(MatvecVariants, ThinRows) {
    SKIP_WITHOUT_GPU();
    for (int c = 1; c <= kMaxThinCols; ++c)
        for (int rows : {1, 2, 3, 255, 256, 513, 100001}) {
            const Shape s{rows, c};
            auto launch = [](const double* A, const double* x, double* y, int r, int cc, double*) {
                return launch_matvecThinRows(A, x, y, r, cc);
            };
            const common::Comparison cmp = run_matvec(launch, s, 19ull * rows + c);
            EXPECT_TRUE(cmp.pass()) << "thin rows on " << rows << "x" << c << ": first bad row " << cmp.first_bad;
        }
    EXPECT_TRUE(tuned_shape(16777216, 1).thin_rows);
    EXPECT_FALSE(tuned_shape(16777216, 4).thin_rows);
}

// The launcher's choice for few long rows, and its promise: no atomics, the
// same bits every run. The first run is checked against the CPU too (y is
// poisoned before each run: a launch that writes nothing fails).
TEST(MatvecVariants, SplitRowsArePickedForFewLongRowsAndAreBitReproducible) {
    SKIP_WITHOUT_GPU();
    EXPECT_TRUE(tuned_shape(1, 33554431).split_rows);
    EXPECT_TRUE(tuned_shape(8, 4000000).split_rows);
    EXPECT_FALSE(tuned_shape(16384, 8192).split_rows);
    EXPECT_TRUE(tuned_shape(16384, 8192).block_per_row);
    EXPECT_FALSE(tuned_shape(1048576, 17).split_rows);
    const Shape s{3, 1000003};
    const size_t n = size_t(s.rows) * s.cols;
    std::vector<double> A(n), x(s.cols), ref(s.rows), abs_dot(s.rows), y1, y2;
    common::fill_uniform(A.data(), n, 5, -1.0, 1.0);
    common::fill_uniform(x.data(), x.size(), 6, -1.0, 1.0);
    matvec_cpu(A.data(), x.data(), s.rows, s.cols, ref.data(), abs_dot.data());
    const double tol = gamma_n(s.cols + 1.0) * *std::max_element(abs_dot.begin(), abs_dot.end());
    common::DeviceBuffer<double> d_A(n), d_x(s.cols), d_y(s.rows), d_scratch(scratch_doubles());
    d_A.upload(A);
    d_x.upload(x);
    d_y.poison();
    const std::string what = launch_matvecShuffleTuned(d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols, d_scratch.get());
    ASSERT_NE(what.find("split rows"), std::string::npos) << what;
    CHECK(cudaDeviceSynchronize());
    d_y.download(y1);
    const common::Comparison c = common::compare(y1.data(), ref.data(), s.rows, tol, 0.0);
    EXPECT_TRUE(c.pass()) << "split rows on " << s.rows << "x" << s.cols << ": first bad row " << c.first_bad;
    for (int rep = 0; rep < 5; ++rep) {
        d_y.poison();
        ASSERT_NE(launch_matvecShuffleTuned(d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols, d_scratch.get()), "");
        d_y.download(y2);
        EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(double))) << "run " << rep;
    }
}

// ---- Pointers into the middle of an array ----------------------------------------------
// A cudaMalloc'd array starts on 256 bytes, so base + 1 double is 8 bytes off
// 16-byte alignment, base + 2 aligned again. matvecShuffleVec2 needs A and x on
// 16 bytes, matvecShuffleTuned A, x and y; where they are not, both run step
// 12's matvecShuffle and say so in the launch column. The other kernels take
// any double pointer as it is. Odd and even cols (rows 8 bytes apart), thin
// rows, and few long rows (where the tuned launcher would split them).
struct OffsetRun {
    common::Comparison c;
    size_t outside = 0;  // doubles written outside y (before it or after it)
    std::string launch;
};

// run_matvec() with A, x and y starting a_off, x_off and y_off doubles into
// their arrays; y's array has 2 more doubles after it. Everything outside y must stay poisoned.
OffsetRun run_matvec_at(const MatvecKernel& k, Shape s, int a_off, int x_off, int y_off, uint64_t seed) {
    constexpr size_t kAfter = 2;
    const size_t n = size_t(s.rows) * s.cols;
    std::vector<double> A(n), x(s.cols), ref(s.rows), abs_dot(s.rows), got;
    common::fill_uniform(A.data(), n, seed, -1.0, 1.0);
    common::fill_uniform(x.data(), x.size(), seed + 1, -1.0, 1.0);
    matvec_cpu(A.data(), x.data(), s.rows, s.cols, ref.data(), abs_dot.data());
    const double tol = gamma_n(s.cols + 1.0) * *std::max_element(abs_dot.begin(), abs_dot.end());
    common::DeviceBuffer<double> d_A(a_off + n), d_x(x_off + size_t(s.cols)), d_y(y_off + size_t(s.rows) + kAfter),
        d_scratch(scratch_doubles());
    CHECK(cudaMemcpy(d_A.get() + a_off, A.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_x.get() + x_off, x.data(), x.size() * sizeof(double), cudaMemcpyHostToDevice));
    d_y.poison();
    OffsetRun r;
    r.launch = k.launch(d_A.get() + a_off, d_x.get() + x_off, d_y.get() + y_off, s.rows, s.cols, d_scratch.get());
    if (r.launch.empty()) {
        r.c = refused(s);
        return r;
    }
    CHECK(cudaDeviceSynchronize());
    d_y.download(got);
    r.c = common::compare(got.data() + y_off, ref.data(), s.rows, tol, 0.0);
    r.outside = common::written_outside(got, size_t(y_off), y_off + size_t(s.rows));
    return r;
}

TEST(MatvecAlignment, PointersIntoAnArrayMatchCpu) {
    SKIP_WITHOUT_GPU();
    const std::vector<Shape> shapes = {{1, 1},     {7, 31},    {33, 33},     {129, 64},   {100, 333},
                                       {65537, 3}, {1000, 2},  {3, 100003},  {2, 65536},  {5000, 4099}};
    struct Off { int a, x, y; };
    const std::vector<Off> offsets = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {2, 2, 2}};  // doubles
    for (const MatvecKernel& k : kernels())
        for (Shape s : shapes)
            for (const Off& off : offsets) {
                const OffsetRun r = run_matvec_at(k, s, off.a, off.x, off.y, 7919ull * s.rows + s.cols + off.a);
                const std::string where = std::string(k.name) + " on " + std::to_string(s.rows) + "x" +
                                          std::to_string(s.cols) + ", A + " + std::to_string(off.a) + ", x + " +
                                          std::to_string(off.x) + ", y + " + std::to_string(off.y) + " (" +
                                          r.launch + ")";
                EXPECT_TRUE(r.c.pass()) << where << ": " << r.c.mismatches << " of " << r.c.n << " rows wrong, first "
                                        << r.c.first_bad << ", max err " << r.c.max_abs_err;
                EXPECT_EQ(r.outside, 0u) << where << ": doubles written outside y";
                const bool ax_off = off.a % 2 != 0 || off.x % 2 != 0;
                const bool ay_off = off.a % 2 != 0 || off.y % 2 != 0;  // matvecThinRows's pointers
                const std::string name = k.name;
                const bool thin = tuned_shape(s.rows, s.cols).thin_rows;
                const bool should_fall_back = (name == "matvecShuffleVec2" && ax_off) ||
                                              (name == "matvecShuffleTuned" && (thin ? ay_off : ax_off));
                EXPECT_EQ(r.launch.find("not 16-byte aligned") != std::string::npos, should_fall_back) << where;
            }
}

// ---- Exact checks: integer-valued data -----------------------------------------------
// A and x hold nonzero integers in [-16, 16]: every product and every partial
// sum (< 2^53) is exact in double, in any order. So y must equal the integer
// reference exactly, and one dropped, doubled or wrong product (never 0)
// changes it by at least 1. This is what catches a lost element at sizes where
// the random-data tolerance (gamma_n sum |a x|) is larger than a term.
__host__ __device__ inline double grid_value(uint64_t i, uint64_t seed) {
    uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    const double v = double(1 + (h >> 60));  // 1..16
    return (h >> 59) & 1 ? -v : v;
}

__global__ void fillGrid(double* p, size_t n, uint64_t seed) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = grid_value(i, seed);
}

// y[r] = sum_c A[r][c] x[c] in int64, A and x given by grid_value (threads:
// the largest shapes have 2^31 elements).
std::vector<int64_t> grid_reference(Shape s, uint64_t seed_a, uint64_t seed_x) {
    std::vector<int64_t> y(s.rows, 0);
    const int nt = int(std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
    const size_t cols = size_t(s.cols);
    auto dot = [&](size_t r, size_t c0, size_t c1) {
        int64_t t = 0;
        for (size_t c = c0; c < c1; ++c) t += int64_t(grid_value(r * cols + c, seed_a)) * int64_t(grid_value(c, seed_x));
        return t;
    };
    std::vector<std::thread> pool;
    if (s.rows >= nt) {  // threads take whole rows
        for (int t = 0; t < nt; ++t)
            pool.emplace_back([&, t] {
                for (size_t r = size_t(s.rows) * t / nt; r < size_t(s.rows) * (t + 1) / nt; ++r) y[r] = dot(r, 0, cols);
            });
        for (std::thread& th : pool) th.join();
    } else {  // few long rows: threads take column ranges
        std::vector<std::vector<int64_t>> part(nt, std::vector<int64_t>(s.rows, 0));
        for (int t = 0; t < nt; ++t)
            pool.emplace_back([&, t] {
                for (int r = 0; r < s.rows; ++r) part[t][r] = dot(r, cols * t / nt, cols * (t + 1) / nt);
            });
        for (std::thread& th : pool) th.join();
        for (int t = 0; t < nt; ++t)
            for (int r = 0; r < s.rows; ++r) y[r] += part[t][r];
    }
    return y;
}

struct Exact { size_t wrong = 0, first = 0; double got = 0, want = 0; };

// Fills A and x on the GPU, runs `launch`, compares y exactly.
template <class Launch>
Exact run_exact(Launch launch, Shape s, const std::vector<int64_t>& want, common::DeviceBuffer<double>& d_A,
                common::DeviceBuffer<double>& d_x, uint64_t seed_a, uint64_t seed_x) {
    const size_t n = size_t(s.rows) * s.cols;
    fillGrid<<<4096, 256>>>(d_A.get(), n, seed_a);
    fillGrid<<<4096, 256>>>(d_x.get(), size_t(s.cols), seed_x);
    CHECK_LAUNCH();
    common::DeviceBuffer<double> d_y(s.rows), d_scratch(scratch_doubles());
    d_y.poison();
    Exact e;
    if (launch(d_A.get(), d_x.get(), d_y.get(), s.rows, s.cols, d_scratch.get()).empty()) {
        ADD_FAILURE() << "the launcher refused " << s.rows << "x" << s.cols << ": nothing launched";
        e.wrong = size_t(s.rows);  // not compared: nothing ran
        return e;
    }
    CHECK(cudaDeviceSynchronize());
    std::vector<double> got;
    d_y.download(got);
    for (int r = 0; r < s.rows; ++r)
        if (!(got[r] == double(want[r]))) {  // NaN (never written) fails too
            if (e.wrong++ == 0) { e.first = r; e.got = got[r]; e.want = double(want[r]); }
        }
    return e;
}

class MatvecExact : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

// The largest is 8 x 4000000 (32 M elements), the size the bench runs.
const std::vector<Shape> kExactShapes = {{1, 1}, {3, 5}, {1000, 333}, {257, 8191}, {65537, 3}, {1, 1000001},
                                         {100001, 1}, {8, 4000000}};

TEST_P(MatvecExact, MatchesTheIntegerReferenceExactly) {
    SKIP_WITHOUT_GPU();
    const MatvecKernel& k = common::kernel_named(kernels(), std::get<0>(GetParam()));
    const Shape s = std::get<1>(GetParam());
    const size_t n = size_t(s.rows) * s.cols;
    common::DeviceBuffer<double> d_A(n), d_x(s.cols);
    const Exact e = run_exact(k.launch, s, grid_reference(s, 11, 12), d_A, d_x, 11, 12);
    EXPECT_EQ(e.wrong, 0u) << k.name << " on " << s.rows << "x" << s.cols << ": row " << e.first << " got "
                           << e.got << ", exact " << e.want;
}

INSTANTIATE_TEST_SUITE_P(AllKernels, MatvecExact,
                         ::testing::Combine(::testing::ValuesIn(common::kernel_names(kernels())),
                                            ::testing::ValuesIn(kExactShapes)),
                         [](const ::testing::TestParamInfo<MatvecExact::ParamType>& p) {
                             return kernel_shape_test_name(std::get<0>(p.param), std::get<1>(p.param));
                         });

// ---- Broken kernels: one product dropped, doubled or wrong must fail ---------------
enum class Bug { DropOne, DoubleOne, WrongOne };

// matvecShuffle with one deliberate error, in row rows / 2 at column cols / 2.
template <Bug B>
__global__ void matvecBroken(const double* A, const double* x, double* y, int rows, int cols) {
    const int lane = threadIdx.x % kWarp;
    const size_t br = size_t(rows) / 2;
    const int64_t bc = cols / 2;
    for (size_t r = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp; r < size_t(rows);
         r += size_t(gridDim.x) * blockDim.x / kWarp) {
        double t = 0;
        for (int64_t c = lane; c < cols; c += kWarp) {
            double p = A[r * cols + c] * x[c];
            if (r == br && c == bc) p = B == Bug::DropOne ? 0.0 : B == Bug::DoubleOne ? 2 * p : -p;
            t += p;
        }
        for (int m = 16; m > 0; m /= 2) t += __shfl_xor_sync(kFullMask, t, m);
        if (lane == 0) y[r] = t;
    }
}

template <Bug B>
std::string launch_matvecBroken(const double* A, const double* x, double* y, int rows, int cols, double*) {
    return launch_row_loop(matvecBroken<B>, A, x, y, rows, cols);
}

TEST(MatvecPitfall, ASingleDroppedDoubledOrWrongElementIsCaughtAtTheLargestTestedSize) {
    SKIP_WITHOUT_GPU();
    for (Shape s : std::vector<Shape>{{1000, 333}, {8, 4000000}}) {
        const size_t n = size_t(s.rows) * s.cols;
        common::DeviceBuffer<double> d_A(n), d_x(s.cols);
        const std::vector<int64_t> want = grid_reference(s, 21, 22);
        const Exact drop = run_exact(launch_matvecBroken<Bug::DropOne>, s, want, d_A, d_x, 21, 22);
        const Exact twice = run_exact(launch_matvecBroken<Bug::DoubleOne>, s, want, d_A, d_x, 21, 22);
        const Exact wrong = run_exact(launch_matvecBroken<Bug::WrongOne>, s, want, d_A, d_x, 21, 22);
        for (const Exact* e : {&drop, &twice, &wrong}) {
            EXPECT_EQ(e->wrong, 1u) << s.rows << "x" << s.cols << ": exactly the broken row must differ";
            EXPECT_EQ(e->first, size_t(s.rows) / 2);
        }
        std::printf("[ broken   ] %dx%d: dropped -> row %zu got %.0f, exact %.0f; doubled -> %.0f; negated -> %.0f\n",
                    s.rows, s.cols, drop.first, drop.got, drop.want, twice.got, wrong.got);
    }
}

// ---- Index overflow at the largest shapes check_shape admits ---------------------------
// One row of 2^31 - 1 doubles (16 GiB: an int column index would wrap past
// INT_MAX - 32) and 2^26 rows of 32 (2^31 elements, the most rows). Skipped
// with the reason where the GPU has less free memory than that.
TEST(MatvecLimits, LargestAdmittedShapesAreExact) {
    SKIP_WITHOUT_GPU();
    for (Shape s : std::vector<Shape>{{1, int(kMaxCols)}, {int(kMaxRows), 32}}) {
        ASSERT_EQ(check_shape(s.rows, s.cols), "");
        const size_t n = size_t(s.rows) * s.cols;
        const double need = double(n + s.cols + 2 * size_t(s.rows)) * sizeof(double) + (256u << 20);
        SKIP_UNLESS_MEMORY(std::to_string(s.rows) + "x" + std::to_string(s.cols), need, 0.0);
        common::DeviceBuffer<double> d_A(n), d_x(s.cols);
        const std::vector<int64_t> want = grid_reference(s, 31, 32);
        std::vector<std::pair<std::string, MatvecLaunch>> run;
        if (s.rows == 1) {
            // One warp per row reads 16 GiB alone: matvecShuffle stands for the
            // three row_partial kernels (they share that loop).
            for (const char* name : {"matvecShuffle", "matvecShuffleVec2", "matvecShuffleTuned"})
                run.push_back({name, common::kernel_named(kernels(), name).launch});
            run.push_back({"matvecBlockRow", [](const double* A, const double* x, double* y, int r, int c, double*) {
                               return launch_matvecBlockRow(A, x, y, r, c);
                           }});
        } else {
            for (const MatvecKernel& k : kernels()) run.push_back({k.name, k.launch});
        }
        for (const auto& k : run) {
            const Exact e = run_exact(k.second, s, want, d_A, d_x, 31, 32);
            EXPECT_EQ(e.wrong, 0u) << k.first << " on " << s.rows << "x" << s.cols << ": row " << e.first << " got "
                                   << e.got << ", exact " << e.want;
        }
    }
}

TEST(ShuffleCpu, PitfallsAreInTheirOwnList) {
    for (const MatvecKernel& p : pitfalls())
        for (const MatvecKernel& k : kernels()) EXPECT_STRNE(p.name, k.name);
    EXPECT_FALSE(pitfalls().empty());
}

// A kernel that drops the last column, on random data: at these shapes the
// tolerance is below the dropped terms of this seed's data, so the check fails
// it. The tolerance is not below every term (07's README, Tolerance): that a
// dropped or doubled element fails at any size rests on the integer-data
// tests (MatvecExact, and the broken kernels above).
__global__ void matvecDropsLastColumn(const double* A, const double* x, double* y, int rows, int cols) {
    const int lane = threadIdx.x % kWarp;
    for (size_t r = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp; r < size_t(rows);
         r += size_t(gridDim.x) * blockDim.x / kWarp) {
        double t = 0;
        for (int c = lane; c < cols - 1; c += kWarp) t = fma(A[r * cols + c], x[c], t);
        for (int m = 16; m > 0; m /= 2) t += __shfl_xor_sync(kFullMask, t, m);
        if (lane == 0) y[r] = t;
    }
}

TEST(MatvecPitfall, ADroppedColumnIsCaught) {
    SKIP_WITHOUT_GPU();
    auto launch = [](const double* A, const double* x, double* y, int rows, int cols, double*) {
        return launch_row_loop(matvecDropsLastColumn, A, x, y, rows, cols);
    };
    for (Shape s : std::vector<Shape>{{1000, 333}, {16, 8192}, {1, 2}}) {
        double tol = 0;
        const common::Comparison c = run_matvec(launch, s, 3, &tol);
        EXPECT_FALSE(c.pass()) << s.rows << "x" << s.cols << ": a dropped column went unnoticed (tol " << tol << ")";
    }
}

}  // namespace
