// Every 04_reduction kernel, for int, float and double, against the CPU at
// sizes chosen to break edge handling: 1, 2, one less / equal / one more than
// a warp and than the 128-thread block, a prime, 2^24 + 7, and one large n.
//
// int: exact (the 32-bit wrap of the int64 sum). float and double, twice:
//  - integer-valued data in [-100, 100]: every partial sum of such data stays
//    far below 2^24, so every float add is exact in ANY order and the result
//    must equal the exact sum: a single dropped or doubled element fails;
//  - random data in [-1, 1): within reduction::tolerance (see reduction.cuh).
// The result and the partial sums are poisoned (0xFF bytes: NaN, or -1 for
// int) before every run, so a result nobody wrote cannot pass.
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>
#include <gtest/gtest.h>
#include "04_reduction/reduction.cuh"
#include "common/buffer.cuh"
#include "common/data.hpp"
#include "tests/gpu_test.hpp"

namespace {

using namespace reduction;

const std::vector<size_t> kSizes = {1,   2,   31,  32,      33,  127,
                                    128, 129, 1000003, (size_t(1) << 24) + 7, (size_t(1) << 26) + 3};

enum class Data { Integers, Random };

struct Outcome {
    double got = 0, want = 0, tol = 0;
    bool ok = false;
};

// Runs kernel k once on fresh data and compares with the CPU.
template <class T>
Outcome run(const Kernel<T>& k, size_t n, uint64_t seed, Data data) {
    std::vector<T> x(n);
    Outcome o;
    if (data == Data::Integers) {
        std::vector<int> xi(n);
        common::fill_uniform(xi.data(), n, seed, -100, 100);
        int64_t exact = 0;
        for (size_t i = 0; i < n; ++i) { x[i] = T(xi[i]); exact += xi[i]; }
        if (exact == -1) {  // the int poison: a result nobody wrote would pass
            x[0] = T(xi[0] == 100 ? 99 : xi[0] + 1);
            ++exact;
        }
        // For int the GPU's adds wrap at 32 bits; these sums never get near that.
        o.want = double(exact);
    } else {
        common::fill_uniform(x.data(), n, seed, T(-1), T(1));
        const Reference r = reference_float(x.data(), n);
        o.want = double(r.sum);
        o.tol = tolerance<T>(n, r.sum_abs);
    }
    common::DeviceBuffer<T> d_in(n);
    d_in.upload(x);
    Workspace<T> ws(n);
    CHECK(cudaMemset(ws.out, 0xFF, sizeof(T)));
    CHECK(cudaMemset(ws.partial, 0xFF, ws.max_partials * sizeof(T)));
    if (k.in_place) restore_work(d_in.get(), n, ws);
    k.launch(d_in.get(), n, ws);
    CHECK(cudaDeviceSynchronize());
    T got;
    CHECK(cudaMemcpy(&got, ws.out, sizeof(T), cudaMemcpyDeviceToHost));
    o.got = double(got);
    o.ok = !std::isnan(o.got) && std::fabs(o.got - o.want) <= o.tol;
    // The input must be left alone (the in-place kernels work on a copy).
    std::vector<T> after;
    d_in.download(after);
    if (after != x) o.ok = false;
    return o;
}

template <class T>
void check_kernel(const Kernel<T>& k, size_t n, uint64_t seed) {
    const Outcome a = run(k, n, seed, Data::Integers);
    EXPECT_TRUE(a.ok) << k.name << " n=" << n << " integer data: got " << a.got << ", exact " << a.want;
    if constexpr (!std::is_integral_v<T>) {
        const Outcome b = run(k, n, seed + 1, Data::Random);
        EXPECT_TRUE(b.ok) << k.name << " n=" << n << " random data: got " << b.got << ", reference " << b.want
                          << ", |error| " << std::fabs(b.got - b.want) << " > tolerance " << b.tol;
    }
}

// (type 0 int / 1 float / 2 double, kernel index, size)
class ReductionKernel : public ::testing::TestWithParam<std::tuple<int, int, size_t>> {};

TEST_P(ReductionKernel, MatchesCpu) {
    SKIP_WITHOUT_GPU();
    const auto [type, ki, n] = GetParam();
    const uint64_t seed = 7919ull * n + 104729ull * ki + type;
    if (type == 0) check_kernel(kernels<int>()[ki], n, seed);
    else if (type == 1) check_kernel(kernels<float>()[ki], n, seed);
    else check_kernel(kernels<double>()[ki], n, seed);
}

const char* kTypeNames[] = {"int", "float", "double"};

INSTANTIATE_TEST_SUITE_P(
    AllKernelsAllTypesAllSizes, ReductionKernel,
    ::testing::Combine(::testing::Range(0, 3), ::testing::Range(0, int(kernels<int>().size())), ::testing::ValuesIn(kSizes)),
    [](const ::testing::TestParamInfo<ReductionKernel::ParamType>& p) {
        return std::string(kernels<int>()[std::get<1>(p.param)].name) + "_" + kTypeNames[std::get<0>(p.param)] + "_" +
               std::to_string(std::get<2>(p.param));
    });

// reduceVec4 from a pointer that is not 16-byte aligned (a sub-array): the
// head before the first aligned vector and the tail after the last one.
TEST(ReductionVec4, MisalignedStartAndOddLengths) {
    SKIP_WITHOUT_GPU();
    const size_t total = 100003;
    std::vector<int> x(total);
    common::fill_uniform(x.data(), total, 5, -100, 100);
    common::DeviceBuffer<int> d(total);
    d.upload(x);
    Workspace<int> ws(total);
    for (size_t offset : {0, 1, 2, 3})
        for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(5), size_t(17), size_t(4099), total - 3}) {
            CHECK(cudaMemset(ws.out, 0xFF, sizeof(int)));
            launch_vec4<int>(d.get() + offset, n, ws);
            int got;
            CHECK(cudaMemcpy(&got, ws.out, sizeof(int), cudaMemcpyDeviceToHost));
            EXPECT_EQ(got, reference_int(x.data() + offset, n)) << "offset " << offset << " n " << n;
        }
}

// The three ways reduceVec4 can finish give the same (exact) int sum, and the
// last-block counter is back at 0 after each launch (the next one relies on it).
TEST(ReductionVec4, EveryFinishAndTheTicketResets) {
    SKIP_WITHOUT_GPU();
    const size_t n = (size_t(1) << 22) + 1;
    std::vector<int> x(n);
    common::fill_uniform(x.data(), n, 11, -100, 100);
    common::DeviceBuffer<int> d(n);
    d.upload(x);
    Workspace<int> ws(n);
    const int want = reference_int(x.data(), n);
    for (int rep = 0; rep < 3; ++rep) {
        int got = 0;
        unsigned ticket = 1;
        launch_vec4<int, Finish::Partials>(d.get(), n, ws);
        CHECK(cudaMemcpy(&got, ws.out, sizeof(int), cudaMemcpyDeviceToHost));
        EXPECT_EQ(got, want) << "Partials";
        launch_vec4<int, Finish::Atomic>(d.get(), n, ws);
        CHECK(cudaMemcpy(&got, ws.out, sizeof(int), cudaMemcpyDeviceToHost));
        EXPECT_EQ(got, want) << "Atomic";
        launch_vec4<int, Finish::LastBlock>(d.get(), n, ws);
        CHECK(cudaMemcpy(&got, ws.out, sizeof(int), cudaMemcpyDeviceToHost));
        EXPECT_EQ(got, want) << "LastBlock";
        CHECK(cudaMemcpy(&ticket, ws.ticket, sizeof(unsigned), cudaMemcpyDeviceToHost));
        EXPECT_EQ(ticket, 0u);
    }
}

// The single-pass kernels give bit-identical float sums run after run.
TEST(ReductionDeterminism, LastBlockKernelsAreBitIdentical) {
    SKIP_WITHOUT_GPU();
    const size_t n = 10000019;
    std::vector<float> x(n);
    common::fill_uniform(x.data(), n, 3, 0.0f, 1.0f);
    common::DeviceBuffer<float> d(n);
    d.upload(x);
    Workspace<float> ws(n);
    for (const auto& k : kernels<float>()) {
        if (std::string(k.name) == "reduceGridStrideAtomic") continue;  // atomics: order varies
        std::vector<float> got(5);
        for (float& g : got) {
            if (k.in_place) restore_work(d.get(), n, ws);
            k.launch(d.get(), n, ws);
            CHECK(cudaMemcpy(&g, ws.out, sizeof(float), cudaMemcpyDeviceToHost));
        }
        for (float g : got) EXPECT_EQ(std::memcmp(&g, &got[0], 4), 0) << k.name;
    }
}

// ---- The seeds' pitfalls: the deterministic ones must be caught ----------
template <class T>
const Kernel<T>& pitfall(const char* name) {
    for (const auto& k : pitfalls<T>())
        if (std::string(k.name) == name) return k;
    throw std::runtime_error(name);
}

// `if (idx >= n) return;` before __syncthreads: right on whole blocks, wrong
// on a partial last block (its tree adds shared memory nobody wrote).
TEST(ReductionPitfall, EarlyReturnIsWrongOnAPartialBlock) {
    SKIP_WITHOUT_GPU();
    EXPECT_TRUE(run(pitfall<int>("reduceSmemEarlyReturn"), 1024, 1, Data::Integers).ok)
        << "on whole blocks the seed's kernel is right";
    // Shared memory is not cleared between blocks or kernels: scribble on it
    // first, so the partial block finds stale non-zero values (on a fresh
    // context it may find zeros and come out right by luck).
    for (size_t n : {size_t(129), size_t(1000003), (size_t(1) << 20) + 1}) {
        scribble_shared<int>();
        EXPECT_FALSE(run(pitfall<int>("reduceSmemEarlyReturn"), n, 3, Data::Integers).ok) << n;
    }
}

// The global thread id in block-local conditions: right with one block only.
TEST(ReductionPitfall, GlobalThreadIdIsWrongWithTwoBlocks) {
    SKIP_WITHOUT_GPU();
    const auto& k = pitfall<int>("reduceGlobalTid");
    EXPECT_TRUE(run(k, 100, 1, Data::Integers).ok) << "one block: the seed's kernel is right";
    // n = 129 would pass: block 1 holds one element, at thread 0, so skipping
    // its tree loses nothing. From two elements in a second block on it fails.
    for (size_t n : {size_t(130), size_t(1000), size_t(1000003)}) EXPECT_FALSE(run(k, n, 2, Data::Integers).ok) << n;
    EXPECT_FALSE(run(pitfall<float>("reduceGlobalTid"), 1000, 2, Data::Integers).ok);
}

// A deliberately broken kernel is caught: reduceSmem launched on one block too
// few misses the last partial block's elements (an off-by-one grid).
TEST(ReductionPitfall, OffByOneGridIsCaught) {
    SKIP_WITHOUT_GPU();
    const Kernel<float> broken{"reduceSmemShortGrid", false,
                               [](const float* in, size_t n, Workspace<float>& ws) {
                                   const size_t grid = n / kBlock;  // should round up
                                   if (grid) reduceSmem<float><<<grid, kBlock>>>(in, n, ws.partial);
                                   CHECK_LAUNCH();
                                   return grid_string(grid, kBlock) + launch_final(grid, ws);
                               },
                               ""};
    EXPECT_TRUE(run(broken, 1024, 1, Data::Integers).ok) << "right on whole blocks";
    for (size_t n : {size_t(129), size_t(1000003), (size_t(1) << 24) + 7})
        EXPECT_FALSE(run(broken, n, 2, Data::Integers).ok) << n << ": the dropped tail went unnoticed";
}

// ---- CPU only ------------------------------------------------------------
TEST(ReductionCpu, ToyStepsAreTheSeeds) {
    const auto steps = toy_steps_cpu(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(std::vector<int>(steps[0].begin(), steps[0].begin() + 4), (std::vector<int>{6, 8, 10, 12}));
    EXPECT_EQ(std::vector<int>(steps[1].begin(), steps[1].begin() + 2), (std::vector<int>{16, 20}));
    EXPECT_EQ(steps[2][0], 36);
}

TEST(ReductionCpu, IntReferenceWrapsLikeTheGpu) {
    const int x[3] = {INT32_MAX, 1, 5};
    EXPECT_EQ(reference_int(x, 3), int(uint32_t(uint64_t(int64_t(INT32_MAX) + 6))));
    const int y[4] = {-100, 100, 7, -3};
    EXPECT_EQ(reference_int(y, 4), 4);
}

TEST(ReductionCpu, FloatReferenceIsCompensated) {
    // 1 + 1e-20 + ... - 1: a plain double loop loses the small terms entirely.
    std::vector<double> x = {1.0, 1e-20, 1e-20, 1e-20, -1.0};
    const Reference r = reference_float(x.data(), x.size());
    EXPECT_NEAR(double(r.sum), 3e-20, 1e-30);
    EXPECT_DOUBLE_EQ(double(r.sum_abs), 2.0 + 3e-20);
}

TEST(ReductionCpu, FloatSummationMethods) {
    // 2^25 ones: a sequential float loop sticks at 2^24 (1 is below half an
    // ulp there); Kahan and pairwise are exact.
    const size_t n = size_t(1) << 25;
    std::vector<float> ones(n, 1.0f);
    EXPECT_EQ(sum_sequential(ones.data(), n), 16777216.0f);
    EXPECT_EQ(sum_kahan(ones.data(), n), float(n));
    EXPECT_EQ(sum_pairwise(ones.data(), n), float(n));
}

TEST(ReductionCpu, ToleranceScalesWithSizeAndType) {
    EXPECT_GT(tolerance<float>(1 << 20, 1000.0L), tolerance<float>(1 << 10, 1000.0L));
    EXPECT_GT(tolerance<float>(1 << 20, 1000.0L), 1e6 * tolerance<double>(1 << 20, 1000.0L));
    // A float sum of 2^28 values in [-1, 1): well under one element's size per 10^5 elements.
    EXPECT_LT(tolerance<float>(size_t(1) << 28, 134217728.0L), 1000.0);
}

TEST(ReductionCpu, SizeLimits) {
    EXPECT_EQ(check_n(1), "");
    EXPECT_EQ(check_n(int64_t(1) << 28), "");
    EXPECT_EQ(check_n(kMaxN), "");
    EXPECT_NE(check_n(0), "");
    EXPECT_NE(check_n(-5), "");
    EXPECT_NE(check_n(kMaxN + 1), "");
}

TEST(ReductionCpu, KernelNamesAreUniqueAndPitfallsSeparate) {
    const auto all = kernel_names(true), main = kernel_names(false);
    EXPECT_EQ(all.size(), main.size() + pitfalls<int>().size());
    for (size_t i = 0; i < all.size(); ++i)
        for (size_t j = i + 1; j < all.size(); ++j) EXPECT_NE(all[i], all[j]);
    for (size_t i = 0; i < kernels<int>().size(); ++i)
        EXPECT_STREQ(kernels<int>()[i].name, kernels<double>()[i].name);
}

}  // namespace
