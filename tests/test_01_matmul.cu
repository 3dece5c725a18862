// Every 01_matmul kernel against the CPU reference, at shapes chosen to break
// edge handling: 1 x 1 x 1, a single row or column, K = 1, primes, one more
// and one less than the tiles, K not a multiple of 4, and two large shapes.
//
// Two kinds of data:
//  - integers in [-15, 15]: every product and partial sum (at most K * 225 <
//    2^24) is exactly representable in fp32, so every kernel must match the
//    double reference EXACTLY, whatever its summation order. One lost,
//    doubled or wrong term fails.
//  - uniform floats in [-1, 1): compared with the chapter's tolerance
//    (4 sqrt(K) 2^-24 sum|a b|), which must still catch one dropped term;
//    the TF32 tensor-core kernels with the TF32 tolerance (matmul.cuh), which
//    must still catch one dropped k-step.
// Integers in [-15, 15] are exact in TF32 too (11 significant bits), so the
// tensor-core kernels must also be exact on them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>
#include <gtest/gtest.h>
#include "01_matmul/matmul.cuh"
#include "common/buffer.cuh"
#include "common/data.hpp"
#include "common/kernel_list.hpp"
#include "tests/gpu_test.hpp"

namespace {

using matmul::Shape;
using matmul::name_of;

const std::vector<std::string> kKernelNames = common::kernel_names(matmul::kernels());
std::vector<std::string> config_names() {
    std::vector<std::string> v;
    for (const matmul::Config& c : matmul::configs()) v.push_back(c.name);
    return v;
}

const std::vector<Shape> kShapes = {
    {1, 1, 1},       {1, 77, 1},      {1, 1, 300},      {77, 1, 5},        {17, 19, 23},
    {64, 64, 64},    {127, 129, 65},  {128, 128, 128},  {129, 127, 9},     {33, 64, 1},
    {1000, 333, 77}, {513, 1025, 257}, {260, 132, 36},  {1024, 1024, 1024}, {2047, 1025, 1031}};

struct Data {
    std::vector<float> A, B;
    std::vector<double> ref, scale, sq;  // exact, S and Q (matmul.cuh)
};

Data make_data(const Shape& s, uint64_t seed, bool integers) {
    Data d;
    d.A.resize(size_t(s.m) * s.k);
    d.B.resize(size_t(s.k) * s.n);
    if (integers) {
        std::vector<int> a(d.A.size()), b(d.B.size());
        common::fill_uniform(a.data(), a.size(), seed, -15, 15);
        common::fill_uniform(b.data(), b.size(), seed + 1, -15, 15);
        for (size_t i = 0; i < a.size(); ++i) d.A[i] = float(a[i]);
        for (size_t i = 0; i < b.size(); ++i) d.B[i] = float(b[i]);
    } else {
        common::fill_uniform(d.A.data(), d.A.size(), seed, -1.0f, 1.0f);
        common::fill_uniform(d.B.data(), d.B.size(), seed + 1, -1.0f, 1.0f);
    }
    d.ref.resize(size_t(s.m) * s.n);
    d.scale.resize(d.ref.size());
    d.sq.resize(d.ref.size());
    matmul::matmul_cpu(d.A.data(), d.B.data(), d.ref.data(), d.scale.data(), s.m, s.n, s.k, d.sq.data());
    return d;
}

// The integer data of a shape, made once (the large references take seconds on the CPU).
const Data& integer_data(const Shape& s) {
    static std::map<std::tuple<int, int, int>, Data> cache;
    const auto key = std::make_tuple(s.m, s.n, s.k);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, make_data(s, 1000003ull * s.m + 1009ull * s.n + s.k, true)).first;
    return it->second;
}

// Where A, B and C start inside their device buffers, in floats: 0 is
// 256-byte aligned (cudaMalloc), 1..3 is an offset sub-matrix that no 16-byte
// access may touch.
struct Offsets { size_t a = 0, b = 0, c = 0; };

// Runs `launch` on poisoned C and returns C.
template <class Launch>
std::vector<float> run(const Data& d, const Shape& s, Launch&& launch, Offsets o = {}) {
    const size_t nc = size_t(s.m) * s.n;
    common::DeviceBuffer<float> dA(d.A.size() + o.a), dB(d.B.size() + o.b), dC(nc + o.c);
    CHECK(cudaMemcpy(dA.get() + o.a, d.A.data(), d.A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB.get() + o.b, d.B.data(), d.B.size() * sizeof(float), cudaMemcpyHostToDevice));
    dC.poison();  // NaN: an element nobody writes fails
    launch(dA.get() + o.a, dB.get() + o.b, dC.get() + o.c);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> got(nc);
    CHECK(cudaMemcpy(got.data(), dC.get() + o.c, nc * sizeof(float), cudaMemcpyDeviceToHost));
    return got;
}

// Elements outside the tolerance (exact: tolerance_factor 0). NaN never passes.
struct Result { size_t bad = 0, first = 0; float got = 0; double want = 0; };
Result compare(const std::vector<float>& got, const Data& d, double factor) {
    Result r;
    for (size_t i = 0; i < got.size(); ++i) {
        const double err = std::fabs(double(got[i]) - d.ref[i]);
        if (std::isnan(got[i]) || !(err <= factor * d.scale[i])) {
            if (r.bad++ == 0) { r.first = i; r.got = got[i]; r.want = d.ref[i]; }
        }
    }
    return r;
}

// The same with the tolerance of a kernel of kind `math` (matmul.cuh: tolerance_of).
Result compare_math(const std::vector<float>& got, const Data& d, int K, matmul::Math math) {
    Result r;
    for (size_t i = 0; i < got.size(); ++i) {
        const double err = std::fabs(double(got[i]) - d.ref[i]);
        if (std::isnan(got[i]) || !(err <= matmul::tolerance_of(math, K, d.ref[i], d.scale[i], d.sq[i]))) {
            if (r.bad++ == 0) { r.first = i; r.got = got[i]; r.want = d.ref[i]; }
        }
    }
    return r;
}
Result compare_tf32(const std::vector<float>& got, const Data& d, int K) {
    return compare_math(got, d, K, matmul::Math::Tf32);
}
Result compare_for(const matmul::Kernel& k, const std::vector<float>& got, const Data& d, int K) {
    return compare_math(got, d, K, k.math);
}

// Skips the current test where kernel k cannot run here (an older GPU, or a
// build without its code), saying why; a GPU of compute capability 9.0 runs
// every kernel, so there, with REQUIRE_GPU=1, a waiver is a failure (a build
// without sm_90a code, say).
#define SKIP_IF_WAIVED(k)                                                                               \
    do {                                                                                                \
        const std::string why_ = matmul::waiver(k);                                                     \
        if (!why_.empty()) {                                                                            \
            if (testing_gpu::gpu_required() && testing_gpu::compute_capability() == 90)                 \
                FAIL() << (k).name << " is waived on this 9.0 GPU: " << why_;                           \
            GTEST_SKIP() << (k).name << ": " << why_;                                                   \
        }                                                                                               \
    } while (0)

// The same inside a loop over kernels: false (and, where it must run, a failure) where k is waived.
bool runs_here(const matmul::Kernel& k) {
    const std::string why = matmul::waiver(k);
    if (why.empty()) return true;
    if (testing_gpu::gpu_required() && testing_gpu::compute_capability() == 90)
        ADD_FAILURE() << k.name << " is waived on this 9.0 GPU: " << why;
    return false;
}

std::string describe(const Result& r, const Shape& s) {
    return std::to_string(r.bad) + " wrong, first C[" + std::to_string(r.first / s.n) + "][" +
           std::to_string(r.first % s.n) + "] = " + std::to_string(r.got) + ", expected " + std::to_string(r.want);
}

// ---- Every kernel x every shape, exact on integer data --------------------
class MatmulKernel : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(MatmulKernel, ExactOnIntegers) {
    SKIP_WITHOUT_GPU();
    const matmul::Kernel& k = common::kernel_named(matmul::kernels(), std::get<0>(GetParam()));
    SKIP_IF_WAIVED(k);
    const Shape s = std::get<1>(GetParam());
    const Data& d = integer_data(s);
    std::string what;
    const std::vector<float> got =
        run(d, s, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, s.m, s.n, s.k); });
    const Result r = compare(got, d, 0.0);
    EXPECT_EQ(r.bad, 0u) << k.name << " (" << what << ") on " << name_of(s) << ": " << describe(r, s);
}

INSTANTIATE_TEST_SUITE_P(
    AllKernelsAllShapes, MatmulKernel,
    ::testing::Combine(::testing::ValuesIn(kKernelNames), ::testing::ValuesIn(kShapes)),
    [](const ::testing::TestParamInfo<MatmulKernel::ParamType>& p) {
        return std::get<0>(p.param) + "_" + name_of(std::get<1>(p.param));
    });

// ---- Every kernel on random floats, within the stated tolerance ------------
class MatmulKernelFloat : public ::testing::TestWithParam<std::string> {};

TEST_P(MatmulKernelFloat, WithinToleranceOnRandomFloats) {
    SKIP_WITHOUT_GPU();
    const matmul::Kernel& k = common::kernel_named(matmul::kernels(), GetParam());
    SKIP_IF_WAIVED(k);
    const uint64_t seed = 77 + uint64_t(&k - matmul::kernels().data());  // each kernel its own data
    for (Shape s : {Shape{127, 129, 65}, Shape{513, 1025, 257}, Shape{64, 256, 1024}}) {
        const Data d = make_data(s, seed, false);
        const std::vector<float> got =
            run(d, s, [&](const float* A, const float* B, float* C) { k.launch(A, B, C, s.m, s.n, s.k); });
        const Result r = compare_for(k, got, d, s.k);
        EXPECT_EQ(r.bad, 0u) << k.name << " on " << name_of(s) << ": " << describe(r, s);
    }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, MatmulKernelFloat, ::testing::ValuesIn(kKernelNames),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// ---- Every configuration x split-K and x stream-K split, not only the launchers' picks
// One configuration's launch on integer data must be exact; `label` says which variant.
template <class Launch>
void expect_exact(const Shape& s, const std::string& label, Launch&& launch) {
    const Data& d = integer_data(s);
    std::string what;
    const std::vector<float> got =
        run(d, s, [&](const float* A, const float* B, float* C) { what = launch(A, B, C); });
    const Result r = compare(got, d, 0.0);
    EXPECT_EQ(r.bad, 0u) << label << " (" << what << ") on " << name_of(s) << ": " << describe(r, s);
}
std::string config_test_name(const ::testing::TestParamInfo<std::string>& p) {
    std::string n = p.param;
    for (char& c : n) if (c == ' ') c = '_';
    return n;
}

class CpAsyncConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(CpAsyncConfig, ExactOnIntegersAtEverySplit) {
    SKIP_WITHOUT_GPU();
    const matmul::Config& cfg = common::kernel_named(matmul::configs(), GetParam());
    for (Shape s : {Shape{1, 1, 1}, Shape{17, 19, 23}, Shape{127, 129, 65}, Shape{260, 132, 300},
                    Shape{257, 131, 1000}, Shape{64, 64, 64}, Shape{300, 516, 33}})
        for (int splits : {1, 2, 3, 5, 16})
            for (bool pad : {true, false})
                expect_exact(s, std::string(cfg.name) + " splitK " + std::to_string(splits),
                             [&](const float* A, const float* B, float* C) {
                                 return cfg.launch(A, B, C, s.m, s.n, s.k, splits, pad);
                             });
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, CpAsyncConfig, ::testing::ValuesIn(config_names()), config_test_name);

// sgemmStreamK: `slots` (the resident blocks planned for) is made small so
// that small shapes take every branch of plan_streamk(): everything whole, a
// partial last wave split with one full wave, fewer tiles than blocks (a tile
// split over many blocks), K not a multiple of BK (the last k-tile computes
// K % BK columns).
class StreamKConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamKConfig, ExactOnIntegersAtEveryKindOfSplit) {
    SKIP_WITHOUT_GPU();
    const matmul::Config& cfg = common::kernel_named(matmul::configs(), GetParam());
    for (Shape s : {Shape{1, 1, 1}, Shape{17, 19, 23}, Shape{127, 129, 65}, Shape{260, 132, 300},
                    Shape{257, 131, 1000}, Shape{300, 516, 33}, Shape{513, 1025, 257}})
        for (int slots : {1, 2, 3, 5, 7, 16, 0})
            for (bool pad : {true, false})
                expect_exact(s, std::string(cfg.name) + " streamK slots " + std::to_string(slots),
                             [&](const float* A, const float* B, float* C) {
                                 return cfg.streamk(A, B, C, s.m, s.n, s.k, pad, slots);
                             });
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, StreamKConfig, ::testing::ValuesIn(config_names()), config_test_name);

// The same launch twice gives the same bits: the owner adds the partial sums
// in a fixed order (no atomics).
TEST(StreamK, SplitTilesAreBitReproducible) {
    SKIP_WITHOUT_GPU();
    const Shape s{515, 517, 1999};
    const Data d = make_data(s, 9, false);
    const matmul::Config& cfg = common::kernel_named(matmul::configs(), "128x256x32 s3");  // 15 tiles over 7 slots
    const auto launch = [&](const float* A, const float* B, float* C) { cfg.streamk(A, B, C, s.m, s.n, s.k, true, 7); };
    const std::vector<float> a = run(d, s, launch), b = run(d, s, launch);
    EXPECT_EQ(compare(a, d, matmul::tolerance_factor(s.k)).bad, 0u);
    EXPECT_TRUE(a == b);
}

// ---- Misaligned pointers: the 16-byte paths must notice and fall back ------
// An offset sub-matrix (A + 1, ...) is float-aligned but not 16-byte aligned:
// a float4 or 16-byte cp.async access to it would fault. Every launcher must
// still give the exact result, at shapes where N % 4 == 0 and K % 4 == 0 (so
// only the alignment stops the 16-byte paths) and at odd ones.
const std::vector<Offsets> kMisaligned = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 2, 3}};
std::string offsets_name(const Offsets& o) {
    return "offsets A+" + std::to_string(o.a) + " B+" + std::to_string(o.b) + " C+" + std::to_string(o.c);
}

TEST(MatmulAlignment, EveryKernelIsExactOnMisalignedPointers) {
    SKIP_WITHOUT_GPU();
    for (Shape s : {Shape{17, 19, 23}, Shape{128, 128, 128}, Shape{260, 132, 36}, Shape{129, 256, 64}})
        for (const Offsets& o : kMisaligned)
            for (const std::string& name : kKernelNames) {
                const matmul::Kernel& k = common::kernel_named(matmul::kernels(), name);
                if (!runs_here(k)) continue;
                const Data& d = integer_data(s);
                std::string what;
                const std::vector<float> got = run(
                    d, s, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, s.m, s.n, s.k); }, o);
                const Result r = compare(got, d, 0.0);
                EXPECT_EQ(r.bad, 0u) << name << " (" << what << ") on " << name_of(s) << ", " << offsets_name(o) << ": "
                                     << describe(r, s);
            }
}

TEST(MatmulAlignment, TheLaunchColumnSaysWhatRan) {
    SKIP_WITHOUT_GPU();
    const Shape s{128, 128, 128};
    const Data& d = integer_data(s);
    for (const char* name : {"sgemmVectorize", "sgemmWarptiling"}) {
        const matmul::Kernel& k = common::kernel_named(matmul::kernels(), name);
        std::string what;
        run(d, s, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, s.m, s.n, s.k); }, {1, 0, 0});
        EXPECT_NE(what.find("ran 2D: A, B or C not 16-byte aligned"), std::string::npos) << name << ": " << what;
    }
    const matmul::Config& cfg = common::kernel_named(matmul::configs(), "128x128x16 s3");
    std::string what;
    run(d, s, [&](const float* A, const float* B, float* C) { what = cfg.launch(A, B, C, s.m, s.n, s.k, 1, false); },
        {0, 1, 1});
    EXPECT_NE(what.find("B:4-byte (B not 16-byte aligned)"), std::string::npos) << what;
    EXPECT_NE(what.find("C:4-byte (not 16-byte aligned)"), std::string::npos) << what;
    run(d, s, [&](const float* A, const float* B, float* C) { what = cfg.launch(A, B, C, s.m, s.n, s.k, 1, true); },
        {0, 1, 0});
    EXPECT_NE(what.find("B padded (B not 16-byte aligned)"), std::string::npos) << what;
}

TEST(MatmulAlignment, EveryConfigIsExactOnMisalignedPointers) {
    SKIP_WITHOUT_GPU();
    for (const matmul::Config& cfg : matmul::configs())
        for (Shape s : {Shape{127, 132, 65}, Shape{260, 132, 300}})
            for (const Offsets& o : kMisaligned)
                for (bool pad : {true, false}) {
                    const std::string where = std::string(cfg.name) + (pad ? " pad, " : " no pad, ") + offsets_name(o);
                    for (int splits : {1, 3}) {
                        const Data& d = integer_data(s);
                        std::string what;
                        const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
                            what = cfg.launch(A, B, C, s.m, s.n, s.k, splits, pad);
                        }, o);
                        EXPECT_EQ(compare(got, d, 0.0).bad, 0u) << where << " splitK " << splits << " (" << what << ")";
                    }
                    for (int slots : {0, 5}) {
                        const Data& d = integer_data(s);
                        std::string what;
                        const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
                            what = cfg.streamk(A, B, C, s.m, s.n, s.k, pad, slots);
                        }, o);
                        EXPECT_EQ(compare(got, d, 0.0).bad, 0u) << where << " streamK slots " << slots << " (" << what << ")";
                    }
                }
}

// ---- The split-K scratch stays under its bound -------------------------------
// At 4096 x 4096 one split's partials are 64 MiB: 16 splits (or the
// autotuner's 8) would need 1 GiB (512 MiB); the launcher runs at most
// kSplitKScratchMaxBytes worth of them, and the results stay exact (checked
// on sampled elements: the full CPU reference would take a minute).
TEST(MatmulScratch, SplitKPartialsStayUnderTheBound) {
    SKIP_WITHOUT_GPU();
    const Shape s{4096, 4096, 256};
    std::vector<int> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n);
    common::fill_uniform(a.data(), a.size(), 11, -15, 15);
    common::fill_uniform(b.data(), b.size(), 12, -15, 15);
    Data d;
    d.A.assign(a.begin(), a.end());
    d.B.assign(b.begin(), b.end());
    auto expect_exact_samples = [&](const std::vector<float>& got, const std::string& label) {
        common::SplitMix64 g(13);
        int bad = 0;
        for (int t = 0; t < 2000; ++t) {
            const int i = int(g.next() % s.m), j = int(g.next() % s.n);
            double c, sc;
            matmul::matmul_cpu_element(d.A.data(), d.B.data(), s.n, s.k, i, j, &c, &sc);
            bad += double(got[size_t(i) * s.n + j]) != c;
        }
        EXPECT_EQ(bad, 0) << label;
    };
    const matmul::Config& cfg = common::kernel_named(matmul::configs(), "128x128x32 s3");
    std::string what;
    const std::vector<float> split = run(d, s, [&](const float* A, const float* B, float* C) {
        what = cfg.launch(A, B, C, s.m, s.n, s.k, 16, true);
    });
    expect_exact_samples(split, what);
    EXPECT_NE(what.find("splitK" + std::to_string(matmul::max_splits_in_scratch(s.m, s.n))), std::string::npos) << what;
    EXPECT_LE(matmul::scratch_bytes(matmul::kSplitKPartials), matmul::kSplitKScratchMaxBytes);
    const matmul::Kernel& tuned = common::kernel_named(matmul::kernels(), "sgemmAutotuned");
    const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
        what = tuned.launch(A, B, C, s.m, s.n, s.k);
    });
    expect_exact_samples(got, what);
    EXPECT_LE(matmul::scratch_bytes(matmul::kSplitKPartials), matmul::kSplitKScratchMaxBytes) << what;
}

// ---- Deliberately wrong kernels must be caught -----------------------------
// dropLastK: the classic off-by-one, `k < K - 1`. missOneTerm: a single
// element of C loses a single term of its sum, the smallest error a tiling
// bug can make.
__global__ void dropLastK(const float* A, const float* B, float* C, int M, int N, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float t = 0;
    for (int k = 0; k < K - 1; ++k) t += A[size_t(row) * K + k] * B[size_t(k) * N + col];
    C[size_t(row) * N + col] = t;
}
__global__ void missOneTerm(const float* A, const float* B, float* C, int M, int N, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float t = 0;
    for (int k = 0; k < K; ++k)
        if (!(row == M / 2 && col == N / 3 && k == K / 2)) t += A[size_t(row) * K + k] * B[size_t(k) * N + col];
    C[size_t(row) * N + col] = t;
}
template <void (*Kern)(const float*, const float*, float*, int, int, int)>
void launch_broken(const float* A, const float* B, float* C, const Shape& s) {
    const dim3 block(16, 16), grid(common::ceil_div(s.n, 16), common::ceil_div(s.m, 16));
    Kern<<<grid, block>>>(A, B, C, s.m, s.n, s.k);
    CHECK_LAUNCH();
}

TEST(MatmulBroken, DroppedLastTermIsCaughtByBothChecks) {
    SKIP_WITHOUT_GPU();
    for (Shape s : {Shape{17, 19, 23}, Shape{127, 129, 65}, Shape{513, 1025, 257}}) {
        for (bool integers : {true, false}) {
            const Data d = integers ? integer_data(s) : make_data(s, 5, false);
            const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
                launch_broken<dropLastK>(A, B, C, s);
            });
            const Result r = compare(got, d, integers ? 0.0 : matmul::tolerance_factor(s.k));
            // Nearly every element: only those whose last product is tiny can slip through.
            EXPECT_GT(r.bad, got.size() / 2) << name_of(s) << (integers ? " integers" : " floats");
        }
    }
}

TEST(MatmulBroken, OneMissingTermInOneElementIsCaught) {
    SKIP_WITHOUT_GPU();
    int checked = 0;
    for (Shape s : {Shape{17, 19, 23}, Shape{127, 129, 65}, Shape{513, 1025, 257}, Shape{64, 256, 1024}}) {
        for (bool integers : {true, false}) {
            const Data d = integers ? integer_data(s) : make_data(s, 5, false);
            const size_t bad = size_t(s.m / 2) * s.n + s.n / 3;
            const double tol = integers ? 0.0 : matmul::tolerance_factor(s.k);
            const double term = double(d.A[size_t(s.m / 2) * s.k + s.k / 2]) * d.B[size_t(s.k / 2) * s.n + s.n / 3];
            if (std::fabs(term) <= tol * d.scale[bad]) continue;  // a term within the tolerance is admissible
            const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
                launch_broken<missOneTerm>(A, B, C, s);
            });
            const Result r = compare(got, d, tol);
            EXPECT_EQ(r.bad, 1u) << name_of(s) << (integers ? " integers" : " floats") << ", term " << term;
            EXPECT_EQ(r.first, bad) << name_of(s);
            ++checked;
        }
    }
    EXPECT_GE(checked, 6) << "too few cases had a term above the tolerance";
}

// ---- The TF32 tensor-core kernels ---------------------------------------------
// Random floats at shapes that break tiling: the TF32 tolerance, every element.
const std::vector<Shape> kTf32Shapes = {
    {1, 1, 1},     {1, 1, 300},     {77, 1, 5},      {17, 19, 23},      {127, 129, 65},     {129, 127, 9},
    {33, 64, 1},   {4099, 7, 129},  {7, 4099, 129},  {257, 383, 1000},  {1000, 333, 77},    {1024, 1024, 1024}};

std::vector<std::string> tf32_kernel_names() {
    std::vector<std::string> v;
    for (const matmul::Kernel& k : matmul::kernels())
        if (k.math != matmul::Math::Fp32) v.push_back(k.name);
    return v;
}

class Tf32Kernel : public ::testing::TestWithParam<std::string> {};

TEST_P(Tf32Kernel, WithinTheTf32ToleranceAtEveryShape) {
    SKIP_WITHOUT_GPU();
    const matmul::Kernel& k = common::kernel_named(matmul::kernels(), GetParam());
    SKIP_IF_WAIVED(k);
    for (const Shape& s : kTf32Shapes) {
        const Data d = make_data(s, 2024 + s.k, false);
        std::string what;
        const std::vector<float> got =
            run(d, s, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, s.m, s.n, s.k); });
        const Result r = compare_for(k, got, d, s.k);
        EXPECT_EQ(r.bad, 0u) << k.name << " (" << what << ") on " << name_of(s) << ": " << describe(r, s);
    }
}

INSTANTIATE_TEST_SUITE_P(TensorCores, Tf32Kernel, ::testing::ValuesIn(tf32_kernel_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The planted bug: sgemmTmaWgmma without the last k8 step of the last
// k-tile (8 of the K terms of every element: a pipeline that stops one step
// early). Both checks must catch it in nearly every element.
TEST(MatmulBroken, TmaWgmmaWithoutItsLastKStepIsCaught) {
    SKIP_WITHOUT_GPU();
    const matmul::Kernel& k = common::kernel_named(matmul::kernels(), "sgemmTmaWgmma");
    SKIP_IF_WAIVED(k);
    for (Shape s : {Shape{128, 128, 64}, Shape{257, 131, 96}, Shape{512, 512, 1024}}) {
        for (bool integers : {true, false}) {
            const Data d = integers ? integer_data(s) : make_data(s, 9, false);
            const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
                matmul::launch_sgemmTmaWgmma_with<matmul::WgmmaTile128, true>(A, B, C, s.m, s.n, s.k);
            });
            const Result r = integers ? compare(got, d, 0.0) : compare_tf32(got, d, s.k);
            EXPECT_GT(r.bad, got.size() / 2) << name_of(s) << (integers ? " integers" : " floats");
        }
    }
}

// Both tiles of the TMA + wgmma kernel at every split-K factor (step 13's
// plan picks among them), with a block per tile and with a few blocks that
// walk all the tiles (step 15; 1 and 3 blocks make every ring phase and
// tile change happen at small shapes), exact on integers.
TEST(TmaWgmmaSplitK, ExactOnIntegersAtEveryTileAndSplit) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(common::kernel_named(matmul::kernels(), "sgemmTmaWgmmaWide"));
    for (Shape s : {Shape{1, 1, 1}, Shape{17, 19, 23}, Shape{127, 129, 65}, Shape{260, 132, 300},
                    Shape{257, 131, 1000}, Shape{300, 516, 33}})
        for (int splits : {1, 2, 3, 5, 16})
            for (int blocks : {0, 1, 3}) {  // 0: a block per tile; else that many blocks walk the tiles (step 15)
                const std::string what = " splitK " + std::to_string(splits) + " blocks " + std::to_string(blocks);
                expect_exact(s, "128-row tiles" + what, [&](const float* A, const float* B, float* C) {
                    return matmul::launch_sgemmTmaWgmma_with<matmul::WgmmaTile128>(A, B, C, s.m, s.n, s.k, splits, blocks);
                });
                expect_exact(s, "256-row tiles" + what, [&](const float* A, const float* B, float* C) {
                    return matmul::launch_sgemmTmaWgmma_with<matmul::WgmmaTile256>(A, B, C, s.m, s.n, s.k, splits, blocks);
                });
            }
}

// What the TF32 launchers say they ran where the TMA's rules (16-byte aligned
// bases, pitches a multiple of 16 bytes) need a padded copy.
TEST(MatmulAlignment, TheTensorCoreLaunchersSayWhatTheyPadded) {
    SKIP_WITHOUT_GPU();
    for (const std::string& name : tf32_kernel_names()) {
        const matmul::Kernel& k = common::kernel_named(matmul::kernels(), name);
        if (k.math != matmul::Math::Tf32 || !runs_here(k)) continue;  // sgemm3xTf32 splits A into a copy anyway
        std::string what;
        const Shape odd_k{64, 64, 63}, odd_n{64, 63, 64}, even{64, 64, 64};
        run(integer_data(odd_k), odd_k, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, 64, 64, 63); });
        EXPECT_NE(what.find(" A padded"), std::string::npos) << name << ": " << what;
        run(integer_data(odd_n), odd_n, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, 64, 63, 64); });
        EXPECT_NE(what.find(" B padded"), std::string::npos) << name << ": " << what;
        run(integer_data(even), even, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, 64, 64, 64); },
            {1, 0, 0});
        EXPECT_NE(what.find(" A padded (A not 16-byte aligned)"), std::string::npos) << name << ": " << what;
        run(integer_data(even), even, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, 64, 64, 64); });
        EXPECT_EQ(what.find("padded"), std::string::npos) << name << ": " << what;
    }
}

// ---- The seed's pitfall: the unguarded grid of seed 000 --------------------
TEST(MatmulPitfall, SeedGridIsRightOnMultiplesOf16Only) {
    SKIP_WITHOUT_GPU();
    const matmul::Kernel& seed = common::kernel_named(matmul::pitfalls(), "MatMulKernelSeedGrid");
    const matmul::Kernel& tiled = common::kernel_named(matmul::kernels(), "MatMulKernelTiled");
    for (Shape s : {Shape{64, 64, 64}, Shape{128, 32, 48}}) {
        const Data& d = integer_data(s);
        const std::vector<float> got =
            run(d, s, [&](const float* A, const float* B, float* C) { seed.launch(A, B, C, s.m, s.n, s.k); });
        EXPECT_EQ(compare(got, d, 0.0).bad, 0u) << "on multiples of 16 the seed's kernel is right: " << name_of(s);
    }
    // Not multiples: the last row / column is never written (NaN stays), or
    // the last K % 16 terms are dropped; the guarded MatMulKernelTiled is right.
    for (Shape s : {Shape{65, 64, 64}, Shape{64, 65, 64}, Shape{64, 64, 65}, Shape{1000, 333, 77}, Shape{15, 15, 15}}) {
        const Data& d = integer_data(s);
        const std::vector<float> bad =
            run(d, s, [&](const float* A, const float* B, float* C) { seed.launch(A, B, C, s.m, s.n, s.k); });
        EXPECT_GT(compare(bad, d, 0.0).bad, 0u) << "the seed's grid went unnoticed at " << name_of(s);
        const std::vector<float> good = run(d, s, [&](const float* A, const float* B, float* C) {
            tiled.launch(A, B, C, s.m, s.n, s.k);
        });
        EXPECT_EQ(compare(good, d, 0.0).bad, 0u) << "MatMulKernelTiled at " << name_of(s);
    }
}

// ---- CPU-only: the reference, the tolerance, the size checks ----------------
TEST(MatmulCpu, ReferenceOnASmallProduct) {
    const float A[2 * 3] = {1, 2, 3, 4, 5, 6};     // 2 x 3
    const float B[3 * 2] = {7, 8, 9, 10, 11, -12};  // 3 x 2
    double C[4], S[4];
    matmul::matmul_cpu(A, B, C, S, 2, 2, 3);
    const double want[4] = {58, -8, 139, 10}, want_s[4] = {58, 64, 139, 154};
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(C[i], want[i]) << i;
        EXPECT_EQ(S[i], want_s[i]) << i;
    }
    double c, s;
    matmul::matmul_cpu_element(A, B, 2, 3, 1, 1, &c, &s);
    EXPECT_EQ(c, 10);
    EXPECT_EQ(s, 154);
}

TEST(MatmulCpu, IntegerDataIsExactInFloatInAnyOrder) {
    // The premise of the exact tests: K products of integers in [-15, 15]
    // summed in fp32, forwards or backwards, equal the double sum.
    const int K = 4099;
    std::vector<int> a(K), b(K);
    common::fill_uniform(a.data(), K, 1, -15, 15);
    common::fill_uniform(b.data(), K, 2, -15, 15);
    float fwd = 0, bwd = 0;
    double exact = 0;
    for (int k = 0; k < K; ++k) { fwd += float(a[k]) * float(b[k]); exact += double(a[k]) * b[k]; }
    for (int k = K - 1; k >= 0; --k) bwd += float(a[k]) * float(b[k]);
    EXPECT_EQ(double(fwd), exact);
    EXPECT_EQ(double(bwd), exact);
    EXPECT_LT(double(K) * 225, 16777216.0);
}

TEST(MatmulCpu, ToleranceAdmitsRoundingButNotADroppedTerm) {
    // Random floats summed in fp32 sequentially (the order with the largest
    // partial sums) pass; dropping any single term must fail for most terms
    // (all but those smaller than the tolerance) up to K = 4096.
    for (int K : {1, 65, 1024, 4096, 65536}) {
        std::vector<float> a(K), b(K);
        common::fill_uniform(a.data(), K, 3, -1.0f, 1.0f);
        common::fill_uniform(b.data(), K, 4, -1.0f, 1.0f);
        float f = 0;
        double exact = 0, s = 0;
        for (int k = 0; k < K; ++k) {
            f += a[k] * b[k];
            exact += double(a[k]) * b[k];
            s += std::fabs(double(a[k]) * b[k]);
        }
        const double tol = matmul::tolerance_factor(K) * s;
        EXPECT_LE(std::fabs(f - exact), tol) << "K " << K;
        int caught = 0;
        for (int k = 0; k < K; ++k) caught += std::fabs(double(a[k]) * b[k]) > tol;
        if (K <= 4096) EXPECT_GE(caught, 0.85 * K) << "K " << K << ": tolerance " << tol;
    }
}

// TF32 emulated on the CPU: inputs rounded to 10 mantissa bits (to nearest,
// or truncated as the tensor cores do with fp32 bits they are handed), the
// products summed in fp32. Both must pass the TF32 tolerance; dropping 8
// consecutive products (one k-step) must fail at most positions up to K = 4096.
float tf32_round(float x, bool nearest) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if (nearest) u += 0x1000u;  // half of the dropped 13 bits: ties away from zero, as cvt.rna
    u &= ~0x1FFFu;
    float r;
    std::memcpy(&r, &u, 4);
    return r;
}

TEST(MatmulCpu, Tf32ToleranceAdmitsTf32ButNotADroppedKStep) {
    for (bool nearest : {true, false})
        for (int K : {1, 8, 65, 1024, 4096, 65536}) {
            std::vector<float> a(K), b(K);
            common::fill_uniform(a.data(), K, 3 + K, -1.0f, 1.0f);
            common::fill_uniform(b.data(), K, 4 + K, -1.0f, 1.0f);
            float f = 0;
            double exact = 0, S = 0, Q = 0;
            for (int k = 0; k < K; ++k) {
                f += tf32_round(a[k], nearest) * tf32_round(b[k], nearest);
                const double p = double(a[k]) * b[k];
                exact += p;
                S += std::fabs(p);
                Q += p * p;
            }
            Q = std::sqrt(Q);
            const double tol = matmul::tf32_tolerance(K, exact, S, Q);
            EXPECT_LE(std::fabs(f - exact), tol) << "K " << K << (nearest ? " nearest" : " truncated");
            if (K < 8 || K > 4096) continue;
            int caught = 0, steps = 0;
            for (int k0 = 0; k0 + 8 <= K; k0 += 8, ++steps) {
                double dropped = 0;
                for (int k = k0; k < k0 + 8; ++k) dropped += double(a[k]) * b[k];
                caught += std::fabs(dropped) > tol;
            }
            EXPECT_GE(caught, 0.75 * steps) << "K " << K << ": tolerance " << tol;
        }
}

// plan_streamk() on the CPU, for many tile counts, k-tiles and slots: every
// k-tile of every tile is computed by exactly one block; every block has
// work; a split tile's owner (the block with its first k-tile) finishes with
// it, and the blocks the kernel waits for are exactly the others that hold a
// piece of it, each as their first split piece.
TEST(StreamKPlan, EveryKTileOnceAndOwnersWaitForTheRightBlocks) {
    int plans = 0, split_plans = 0;
    for (int m : {1, 100, 128, 129, 1000, 2049, 4097})
        for (int n : {1, 256, 257, 2047, 4095})
            for (int k : {1, 31, 32, 33, 257, 2051})
                for (int slots : {1, 2, 7, 132, 264}) {
                    const matmul::StreamKLaunch L = matmul::plan_streamk(m, n, k, 128, 256, 32, slots);
                    const matmul::StreamK& p = L.plan;
                    const int tiles = p.tiles_m * p.tiles_n;
                    ASSERT_GE(L.blocks, 1);
                    ASSERT_LE(L.blocks, slots);
                    std::vector<int> done(size_t(tiles) * p.iters, 0);
                    std::vector<std::vector<int>> holders(tiles);  // blocks with a piece not starting the tile
                    std::vector<int> owner(tiles, -1);
                    for (int c = 0; c < L.blocks; ++c) {
                        const int total = matmul::block_iters(p, c, L.blocks);
                        const int first_split = p.dp_count(c, L.blocks) * p.iters;
                        ASSERT_GT(total, 0) << "block " << c << " has no work";
                        int piece_first = 0;  // j of the current piece's first k-tile
                        for (int j = 0; j < total; ++j) {  // the kernel's loop
                            const matmul::Step st = matmul::locate(p, c, L.blocks, j);
                            ASSERT_TRUE(st.t >= 0 && st.t < tiles && st.kb >= 0 && st.kb <= st.kt && st.kt < p.iters);
                            ++done[size_t(st.t) * p.iters + st.kt];
                            if (j == piece_first) EXPECT_EQ(st.kb, st.kt) << "kb is the piece's first k-tile";
                            if (st.kt + 1 < p.iters && j + 1 < total) continue;
                            if (st.kb > 0) {  // parks a partial sum
                                EXPECT_GE(st.t, p.dp_tiles);
                                EXPECT_EQ(piece_first, first_split) << "a partial must be the first split piece";
                                holders[st.t].push_back(c);
                            } else if (st.kt + 1 < p.iters) {
                                owner[st.t] = c;  // the last piece of the block, by the loop's construction
                            }
                            piece_first = j + 1;
                        }
                    }
                    for (int v : done) ASSERT_EQ(v, 1) << m << "x" << n << "x" << k << " slots " << slots;
                    bool split = false;
                    for (int t = 0; t < tiles; ++t) {
                        if (holders[t].empty()) continue;
                        split = true;
                        ASSERT_GE(owner[t], 0);
                        std::vector<int> waited;  // what the kernel's owner loop waits for
                        const int tile_end = (t - p.dp_tiles + 1) * p.iters;
                        for (int c = owner[t] + 1; c < L.blocks && p.sk_begin(c) < tile_end; ++c) waited.push_back(c);
                        EXPECT_EQ(waited, holders[t]);
                        if (p.dp_tiles > 0) EXPECT_EQ(p.dp_tiles % L.blocks, 0);
                    }
                    ++plans;
                    split_plans += split;
                }
    EXPECT_GT(split_plans, plans / 8) << "too few plans split any tile";
}

// ---- CPU-only: the launchers' decisions (plan_for and friends) ---------------
// On 132 SMs (an H200) the plans are those the bench CSV's launch column
// shows (results/h200.csv).
TEST(MatmulPlan, PicksOfTheBenchRun) {
    const int sms = 132;
    auto config_of = [](const matmul::Plan& p) { return std::string(matmul::configs()[p.config].name); };
    const matmul::Plan p1024 = matmul::choose_sgemmCpAsync(1024, 1024, 1024, sms);
    EXPECT_EQ(config_of(p1024), "128x128x32 s3");
    EXPECT_EQ(p1024.splits, 4);
    const matmul::Plan p4096 = matmul::plan_for(4096, 4096, 4096, sms);
    EXPECT_FALSE(p4096.streamk);
    EXPECT_EQ(config_of(p4096), "128x256x32 s3");
    EXPECT_EQ(p4096.splits, 1);
    const matmul::Plan odd = matmul::plan_for(2049, 2047, 2051, sms);
    EXPECT_TRUE(odd.streamk);
    EXPECT_EQ(config_of(odd), "128x256x32 s3");
    EXPECT_TRUE(odd.pad_b);
    const matmul::Plan small = matmul::plan_for(1000, 333, 77, sms);
    EXPECT_FALSE(small.streamk);
    EXPECT_EQ(config_of(small), "64x64x16 s4");
    EXPECT_FALSE(small.pad_b);
}

// Step 13's plan: wide tiles and no split where the tiles fill the GPU,
// split-K where C has few tiles and K is long, narrow tiles in between.
TEST(MatmulPlan, Tf32PlanFillsTheGpu) {
    for (Shape s : {Shape{4096, 4096, 4096}, Shape{8192, 8192, 8192}, Shape{8191, 8193, 127}}) {
        const matmul::Tf32Plan p = matmul::plan_tf32(s.m, s.n, s.k, 132);
        EXPECT_TRUE(p.wide) << name_of(s);
        EXPECT_EQ(p.splits, 1) << name_of(s);
    }
    const matmul::Tf32Plan skinny = matmul::plan_tf32(1024, 1024, 8192, 132);
    EXPECT_GT(skinny.splits, 1);
    EXPECT_GT(skinny.score, 0.5);
    for (Shape s : {Shape{1, 1, 1}, Shape{1000, 333, 77}, Shape{2049, 2047, 2051}, Shape{128, 8192, 8192}}) {
        const matmul::Tf32Plan p = matmul::plan_tf32(s.m, s.n, s.k, 132);
        EXPECT_GT(p.score, 0.0) << name_of(s);
        EXPECT_GE(p.splits, 1) << name_of(s);
        EXPECT_LE(p.splits, std::max(1, matmul::max_splits_in_scratch(s.m, s.n))) << name_of(s);
    }
}

TEST(MatmulPlan, PadAndSplitsFollowTheirRules) {
    for (int m : {1, 128, 1000, 2049, 4096, 8192})
        for (int n : {1, 127, 1024, 4095, 8192})
            for (int k : {1, 77, 257, 4096, 8192})
                for (int sms : {1, 16, 132}) {
                    const matmul::Plan dp = matmul::choose_sgemmCpAsync(m, n, k, sms), both = matmul::plan_for(m, n, k, sms);
                    const bool big = double(m) * n * k >= matmul::kPadBMinMacs;
                    EXPECT_EQ(dp.pad_b, big);
                    EXPECT_EQ(both.pad_b, big);
                    EXPECT_GE(dp.config, 0);
                    EXPECT_LT(dp.config, int(matmul::configs().size()));
                    EXPECT_GT(dp.score, 0);
                    EXPECT_NE(std::find(matmul::kSplitFactors.begin(), matmul::kSplitFactors.end(), dp.splits),
                              matmul::kSplitFactors.end());
                    EXPECT_LE(dp.splits, matmul::max_splits_in_scratch(m, n));
                    if (dp.splits > 1) EXPECT_GE(k / dp.splits, matmul::kMinSplitK);
                    EXPECT_GE(both.score, dp.score);
                    if (both.streamk) {
                        EXPECT_GE(matmul::configs()[both.config].bm, matmul::kStreamKMinTile);
                        EXPECT_GE(matmul::configs()[both.config].bn, matmul::kStreamKMinTile);
                    } else {
                        EXPECT_EQ(both.config, dp.config);
                        EXPECT_EQ(both.splits, dp.splits);
                    }
                }
}

TEST(MatmulPlan, SplitKScratchBound) {
    EXPECT_EQ(matmul::max_splits_in_scratch(8192, 8192), 1);  // one slice: 256 MiB, no partials
    EXPECT_EQ(matmul::max_splits_in_scratch(4096, 4096), 4);
    EXPECT_GE(matmul::max_splits_in_scratch(1024, 1024), 16);
    EXPECT_GE(matmul::max_splits_in_scratch(1, 1), 16);
    for (int mn : {1, 1000, 4096, 5000, 8192, 46340}) {
        const int s = matmul::max_splits_in_scratch(mn, mn);
        EXPECT_GE(s, 1);
        if (s > 1) EXPECT_LE(double(s) * mn * mn * sizeof(float), double(matmul::kSplitKScratchMaxBytes));
    }
}

TEST(MatmulPlan, AutotunerCandidatesStayUnderTheScratchBound) {
    // 7 configurations x (stream-K + split-K {1, 2, 3, 4, 6, 8}) where the scratch allows it.
    EXPECT_EQ(matmul::autotune_candidates(1024, 1024, 1024).size(), 49u);
    EXPECT_EQ(matmul::autotune_candidates(8192, 8192, 8192).size(), 14u);  // stream-K and one slice only
    for (int mn : {512, 4096, 8192})
        for (const matmul::Plan& p : matmul::autotune_candidates(mn, mn, 1024)) {
            EXPECT_LE(p.splits, matmul::kAutotuneMaxSplits);
            if (!p.streamk && p.splits > 1)
                EXPECT_LE(double(p.splits) * mn * mn * sizeof(float), double(matmul::kSplitKScratchMaxBytes));
        }
}

TEST(MatmulPlan, SixteenByteRule) {
    const float* p = reinterpret_cast<const float*>(uintptr_t(1) << 20);  // 16-byte aligned (never dereferenced)
    EXPECT_EQ(matmul::why_not_16_bytes(p, p, p, 128, 64), "");
    EXPECT_EQ(matmul::why_not_16_bytes(p, p, p, 130, 64), "K or N % 4 != 0");
    EXPECT_EQ(matmul::why_not_16_bytes(p, p, p, 128, 66), "K or N % 4 != 0");
    EXPECT_EQ(matmul::why_not_16_bytes(p + 1, p, p, 128, 64), "A, B or C not 16-byte aligned");
    EXPECT_EQ(matmul::why_not_16_bytes(p, p + 2, p, 128, 64), "A, B or C not 16-byte aligned");
    EXPECT_EQ(matmul::why_not_16_bytes(p, p, p + 3, 128, 64), "A, B or C not 16-byte aligned");
    EXPECT_EQ(matmul::why_not_16_bytes(p + 4, p + 8, p + 12, 128, 64), "");
}

TEST(MatmulCpu, ShapeLimits) {
    EXPECT_EQ(matmul::check_shape(1, 1, 1), "");
    EXPECT_EQ(matmul::check_shape(4096, 4096, 4096), "");
    EXPECT_EQ(matmul::check_shape(8192, 128, 8192), "");
    EXPECT_NE(matmul::check_shape(0, 5, 5), "");
    EXPECT_NE(matmul::check_shape(5, -1, 5), "");
    EXPECT_NE(matmul::check_shape(5, 5, 0), "");
    EXPECT_NE(matmul::check_shape(matmul::kMaxDim + 1, 1, 1), "");
    EXPECT_NE(matmul::check_shape(65536, 65537, 1), "");   // C > 2^31 elements
    EXPECT_NE(matmul::check_shape(1, 70000, 70000), "");   // B > 2^31 elements
    EXPECT_EQ(matmul::check_shape(46340, 46340, 8), "");   // just under 2^31 each
}

}  // namespace
