// 01_matmul's fp32 kernels (steps 1-10) against the CPU reference, at shapes
// chosen to break edge handling: 1 x 1 x 1, a single row or column, K = 1,
// primes, one more and one less than the tiles, K not a multiple of 4, and
// two large shapes; every configuration x split-K and stream-K split;
// misaligned pointers; the split-K scratch bound; planted broken kernels and
// the seed's pitfall. (Every kernel of the list, tensor cores included, runs
// the exact-on-integers test here.)
#include "tests/matmul_test.hpp"

namespace {

using matmul::Shape;
using matmul::name_of;

// ---- Every kernel x every shape, exact on integer data --------------------
class MatmulKernel : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(MatmulKernel, ExactOnIntegers) {
    SKIP_WITHOUT_GPU();
    const matmul::Kernel& k = common::kernel_named(matmul::kernels(), std::get<0>(GetParam()));
    SKIP_IF_WAIVED(matmul::waiver(k));
    const Shape s = std::get<1>(GetParam());
    const Data& d = integer_data(s);
    std::string what;
    const std::vector<float> got =
        run(d, s, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, s.m, s.n, s.k); });
    const Result r = compare(got, d, exact());
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
    SKIP_IF_WAIVED(matmul::waiver(k));
    const uint64_t seed = 77 + uint64_t(&k - matmul::kernels().data());  // each kernel its own data
    for (Shape s : {Shape{127, 129, 65}, Shape{513, 1025, 257}, Shape{64, 256, 1024}}) {
        const Data d = make_data(s, seed, false);
        const std::vector<float> got =
            run(d, s, [&](const float* A, const float* B, float* C) { k.launch(A, B, C, s.m, s.n, s.k); });
        const Result r = compare(got, d, within(k.math, s.k));
        EXPECT_EQ(r.bad, 0u) << k.name << " on " << name_of(s) << ": " << describe(r, s);
    }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, MatmulKernelFloat, ::testing::ValuesIn(kKernelNames),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// ---- Every configuration x split-K and x stream-K split, not only the launchers' picks
// One configuration's launch on integer data must be exact; `label` says which variant.
std::string config_test_name(const ::testing::TestParamInfo<std::string>& p) {
    std::string n = p.param;
    for (char& c : n) if (c == ' ') c = '_';
    return n;
}

class CpAsyncConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(CpAsyncConfig, ExactOnIntegersAtEverySplit) {
    SKIP_WITHOUT_GPU();
    const matmul::Config& cfg = common::kernel_named(matmul::configs(), GetParam());
    SKIP_IF_WAIVED(config_refusal(cfg));
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
    SKIP_IF_WAIVED(config_refusal(cfg));
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
    SKIP_IF_WAIVED(config_refusal(cfg));
    const auto launch = [&](const float* A, const float* B, float* C) { cfg.streamk(A, B, C, s.m, s.n, s.k, true, 7); };
    const std::vector<float> a = run(d, s, launch), b = run(d, s, launch);
    EXPECT_EQ(compare(a, d, within(matmul::Math::Fp32, s.k)).bad, 0u);
    EXPECT_TRUE(a == b);
}

// ---- Misaligned pointers: the 16-byte paths must notice and fall back ------
// An offset sub-matrix (A + 1, ...; kMisaligned) is float-aligned but not
// 16-byte aligned: a float4 or 16-byte cp.async access to it would fault.
// Every launcher must still give the exact result, at shapes where N % 4 == 0
// and K % 4 == 0 (so only the alignment stops the 16-byte paths) and at odd ones.

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
                const Result r = compare(got, d, exact());
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
    EXPECT_NE(what.find("C:staged (not 16-byte aligned)"), std::string::npos) << what;
    run(d, s, [&](const float* A, const float* B, float* C) { what = cfg.launch(A, B, C, s.m, s.n, s.k, 1, true); },
        {0, 1, 0});
    EXPECT_NE(what.find("B padded (B not 16-byte aligned)"), std::string::npos) << what;
    // Odd N: sgemmStreamK stages C past its ring where the GPU gives a block the room (this
    // configuration's 62 KB fit every preset), not 4-byte stores from the registers.
    const Shape odd{128, 129, 128};
    const Data& e = integer_data(odd);
    const std::vector<float> got = run(e, odd, [&](const float* A, const float* B, float* C) {
        what = cfg.streamk(A, B, C, odd.m, odd.n, odd.k, true, 0);
    });
    EXPECT_EQ(compare(got, e, exact()).bad, 0u) << what;
    EXPECT_EQ(what.find("C:4-byte"), std::string::npos) << what;
}

TEST(MatmulAlignment, EveryConfigIsExactOnMisalignedPointers) {
    SKIP_WITHOUT_GPU();
    for (const matmul::Config& cfg : matmul::configs()) {
        if (!runs_here(cfg)) continue;  // the GPU (or GPU_PROFILE) has too little shared memory
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
                        EXPECT_EQ(compare(got, d, exact()).bad, 0u) << where << " splitK " << splits << " (" << what << ")";
                    }
                    for (int slots : {0, 5}) {
                        const Data& d = integer_data(s);
                        std::string what;
                        const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
                            what = cfg.streamk(A, B, C, s.m, s.n, s.k, pad, slots);
                        }, o);
                        EXPECT_EQ(compare(got, d, exact()).bad, 0u) << where << " streamK slots " << slots << " (" << what << ")";
                    }
                }
    }
}

// ---- Row strips (row_strip.cuh) ----------------------------------------------
// The strip kernel alone on 1..16 rows: one slice of K (written to C) or
// several (added by the last block of each column), one stage of 64 rows of
// k per slice or several, N below, past and not a multiple of a block's 128
// columns, misaligned pointers. Then every configuration with the last 1, 7
// or 16 rows of C as a strip, as sgemmAutotuned may run it.
TEST(RowStrip, ExactOnIntegersAtEveryRowCount) {
    SKIP_WITHOUT_GPU();
    for (int r = 1; r <= matmul::kStripMaxRows; ++r)
        for (Shape s : {Shape{r, 1031, 300}, Shape{r, 7, 2999}, Shape{r, 2049, 17}})
            for (const Offsets& o : {Offsets{}, Offsets{1, 2, 3}})
                expect_exact(s, "row strip, " + offsets_name(o), [&](const float* A, const float* B, float* C) {
                    return matmul::launch_row_strip(A, B, C, s.m, s.n, s.k);
                }, o);
}

// The last block of each column adds the slices in order: the same bits on
// every launch (and its counter is back at 0 for the next one).
TEST(RowStrip, SlicedStripsAreBitReproducible) {
    SKIP_WITHOUT_GPU();
    const Shape s{3, 1031, 4099};
    const Data d = make_data(s, 5, false);
    const auto launch = [&](const float* A, const float* B, float* C) {
        matmul::launch_row_strip(A, B, C, s.m, s.n, s.k);
    };
    const std::vector<float> a = run(d, s, launch), b = run(d, s, launch);
    EXPECT_EQ(compare(a, d, within(matmul::Math::Fp32, s.k)).bad, 0u);
    EXPECT_TRUE(a == b);
}

TEST(RowStrip, EveryConfigIsExactWithItsLastRowsAsAStrip) {
    SKIP_WITHOUT_GPU();
    for (size_t c = 0; c < matmul::configs().size(); ++c) {
        if (!runs_here(matmul::configs()[c])) continue;
        for (Shape s : {Shape{129, 131, 65}, Shape{263, 516, 300}, Shape{144, 33, 1000}})
            for (bool streamk : {false, true}) {
                matmul::Plan p;
                p.config = int(c);
                p.streamk = streamk;
                p.splits = 2;
                p.pad_b = true;
                p.strip = matmul::strip_rows(s.m);
                ASSERT_GT(p.strip, 0) << name_of(s);
                expect_exact(s, std::string(matmul::configs()[c].name) + (streamk ? " streamK" : " splitK 2"),
                             [&](const float* A, const float* B, float* C) {
                                 return matmul::run_plan(p, A, B, C, s.m, s.n, s.k);
                             });
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
    const matmul::Config& cfg = common::kernel_named(matmul::configs(), "128x128x16 s3");  // 49 KB: fits every preset
    SKIP_IF_WAIVED(config_refusal(cfg));
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
            const Result r = compare(got, d, integers ? exact() : within(matmul::Math::Fp32, s.k));
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
            const Result r = compare(got, d, integers ? exact() : within(matmul::Math::Fp32, s.k));
            EXPECT_EQ(r.bad, 1u) << name_of(s) << (integers ? " integers" : " floats") << ", term " << term;
            EXPECT_EQ(r.first, bad) << name_of(s);
            ++checked;
        }
    }
    EXPECT_GE(checked, 6) << "too few cases had a term above the tolerance";
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
        EXPECT_EQ(compare(got, d, exact()).bad, 0u) << "on multiples of 16 the seed's kernel is right: " << name_of(s);
    }
    // Not multiples: the last row / column is never written (NaN stays), or
    // the last K % 16 terms are dropped; the guarded MatMulKernelTiled is right.
    for (Shape s : {Shape{65, 64, 64}, Shape{64, 65, 64}, Shape{64, 64, 65}, Shape{1000, 333, 77}, Shape{15, 15, 15}}) {
        const Data& d = integer_data(s);
        const std::vector<float> bad =
            run(d, s, [&](const float* A, const float* B, float* C) { seed.launch(A, B, C, s.m, s.n, s.k); });
        EXPECT_GT(compare(bad, d, exact()).bad, 0u) << "the seed's grid went unnoticed at " << name_of(s);
        const std::vector<float> good = run(d, s, [&](const float* A, const float* B, float* C) {
            tiled.launch(A, B, C, s.m, s.n, s.k);
        });
        EXPECT_EQ(compare(good, d, exact()).bad, 0u) << "MatMulKernelTiled at " << name_of(s);
    }
}

}  // namespace
