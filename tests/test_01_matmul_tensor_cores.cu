// 01_matmul's tensor-core steps (11-17): every kernel within its tolerance
// at shapes that break tiling; each TMA + wgmma step's configurations (both
// tiles, a block per tile or a few walking all tiles, every split-K factor)
// exact on integers; the planted dropped k-step; what the launchers padded;
// the TF32 rounding (the TMA's, every kernel's, 3xTF32's pre-pass).
#include <type_traits>
#include "tests/matmul_test.hpp"

namespace {

using matmul::Shape;
using matmul::name_of;

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
    SKIP_IF_WAIVED(matmul::waiver(k));
    for (const Shape& s : kTf32Shapes) {
        const Data d = make_data(s, 2024 + s.k, false);
        std::string what;
        const std::vector<float> got =
            run(d, s, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, s.m, s.n, s.k); });
        const Result r = compare(got, d, within(k.math, s.k));
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
    SKIP_IF_WAIVED(matmul::waiver(k));
    for (Shape s : {Shape{128, 128, 64}, Shape{257, 131, 96}, Shape{512, 512, 1024}}) {
        for (bool integers : {true, false}) {
            const Data d = integers ? integer_data(s) : make_data(s, 9, false);
            const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
                matmul::launch_sgemmTmaWgmma_with<true>(A, B, C, s.m, s.n, s.k);
            });
            const Result r = integers ? compare(got, d, exact()) : compare(got, d, within(matmul::Math::Tf32, s.k));
            EXPECT_GT(r.bad, got.size() / 2) << name_of(s) << (integers ? " integers" : " floats");
        }
    }
}

// Each TMA + wgmma step with every configuration its plan picks from (both
// tiles; a block per tile, or 1 and 3 blocks walking all the tiles, which
// makes every ring phase and tile change happen at small shapes; every
// split-K factor), exact on integers.
const std::vector<Shape> kStepShapes = {{1, 1, 1},       {17, 19, 23},    {127, 129, 65},
                                        {260, 132, 300}, {257, 131, 1000}, {300, 516, 33}};

template <template <int, int, int, int> class Tile, class Launch>
void for_both_tiles(Launch&& launch) {
    launch(typename matmul::WgmmaTiles<Tile>::Narrow{}, "128-row tiles");
    launch(typename matmul::WgmmaTiles<Tile>::Wide{}, "256-row tiles");
}

TEST(TmaWgmmaSteps, WideExactOnIntegersAtBothTiles) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemmTmaWgmmaWide")));
    for (const Shape& s : kStepShapes)
        for_both_tiles<matmul::step13::Tile>([&](auto tile, const std::string& what) {
            expect_exact(s, what, [&](const float* A, const float* B, float* C) {
                return matmul::launch_sgemmTmaWgmmaWide_with<decltype(tile)>(A, B, C, s.m, s.n, s.k);
            });
        });
}

TEST(TmaWgmmaSteps, PersistentExactOnIntegersAtEveryGrid) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemmTmaWgmmaPersistent")));
    for (const Shape& s : kStepShapes)
        for (int blocks : {1, 3, 1 << 20})  // 1 << 20: a block per tile
            for_both_tiles<matmul::step14::Tile>([&](auto tile, const std::string& what) {
                expect_exact(s, what + " blocks " + std::to_string(blocks), [&](const float* A, const float* B, float* C) {
                    return matmul::launch_sgemmTmaWgmmaPersistent_with<decltype(tile)>(A, B, C, s.m, s.n, s.k, blocks);
                });
            });
}

TEST(TmaWgmmaSteps, SplitKExactOnIntegersAtEveryTileGridAndSplit) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemmTmaWgmmaSplitK")));
    for (const Shape& s : kStepShapes)
        for (int splits : {1, 2, 3, 5, 16})
            for (int blocks : {1, 3, 1 << 20})
                for_both_tiles<matmul::step15::Tile>([&](auto tile, const std::string& what) {
                    const std::string label = what + " splitK " + std::to_string(splits) + " blocks " + std::to_string(blocks);
                    expect_exact(s, label, [&](const float* A, const float* B, float* C) {
                        return matmul::launch_sgemmTmaWgmmaSplitK_with<decltype(tile)>(A, B, C, s.m, s.n, s.k, splits,
                                                                                       blocks);
                    });
                });
}

// Step 17: step 15's tiles in clusters of 2 that multicast A. Exact on
// integers at every tile, number of clusters (1 and 3 walk all the pairs; a
// cluster per pair) and split; the shapes have 1, 2 and 5 tile columns, so the
// last pair of a row may have one tile (its second block only multicasts).
TEST(TmaWgmmaSteps, MulticastExactOnIntegersAtEveryTileGridAndSplit) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemmTmaWgmmaMulticast")));
    for (const Shape& s : kStepShapes)
        for (int splits : {1, 2, 5})
            for (int clusters : {1, 3, 1 << 20})
                for_both_tiles<matmul::step17::Tile>([&](auto tile, const std::string& what) {
                    const std::string label = what + " splitK " + std::to_string(splits) + " clusters " +
                                              std::to_string(clusters);
                    expect_exact(s, label, [&](const float* A, const float* B, float* C) {
                        return matmul::launch_sgemmTmaWgmmaMulticast_with<decltype(tile)>(A, B, C, s.m, s.n, s.k,
                                                                                          splits, clusters);
                    });
                });
}

// Step 17 on offset sub-matrices (kMisaligned): the TMA needs 16-byte aligned
// bases, so A and B are read from padded copies and C is written 4 bytes at a
// time where its pointer is odd; exact on integers (K and N multiples of 4:
// only the pointers stop the direct paths), and the launch column says so.
TEST(TmaWgmmaSteps, MulticastExactOnMisalignedPointers) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemmTmaWgmmaMulticast")));
    for (Shape s : {Shape{127, 132, 64}, Shape{260, 516, 300}})
        for (const Offsets& o : kMisaligned)
            for (int splits : {1, 2})
                for (int clusters : {1, 1 << 20})
                    for_both_tiles<matmul::step17::Tile>([&](auto tile, const std::string& tiles) {
                        const std::string label = tiles + " splitK " + std::to_string(splits) + " clusters " +
                                                  std::to_string(clusters) + ", " + offsets_name(o);
                        std::string what;
                        expect_exact(s, label, [&](const float* A, const float* B, float* C) {
                            what = matmul::launch_sgemmTmaWgmmaMulticast_with<decltype(tile)>(A, B, C, s.m, s.n, s.k,
                                                                                              splits, clusters);
                            return what;
                        }, o);
                        EXPECT_NE(what.find("multicast A in clusters of 2"), std::string::npos) << label << ": " << what;
                        EXPECT_EQ(what.find(" A padded (A not 16-byte aligned)") != std::string::npos, o.a % 4 != 0)
                            << label << ": " << what;
                        EXPECT_EQ(what.find(" B padded (B not 16-byte aligned)") != std::string::npos, o.b % 4 != 0)
                            << label << ": " << what;
                        EXPECT_EQ(what.find(" C:4-byte") != std::string::npos, o.c % 2 != 0) << label << ": " << what;
                    });
}

// Each tile is the same wgmmas in the same order as in step 15, whichever
// block loaded which half of A: the same bits on random floats.
template <bool kWide>
void expect_multicast_is_step15(const Shape& s, int splits) {
    using T15 = std::conditional_t<kWide, matmul::WgmmaTiles<matmul::step15::Tile>::Wide,
                                   matmul::WgmmaTiles<matmul::step15::Tile>::Narrow>;
    using T17 = std::conditional_t<kWide, matmul::WgmmaTiles<matmul::step17::Tile>::Wide,
                                   matmul::WgmmaTiles<matmul::step17::Tile>::Narrow>;
    const Data d = make_data(s, 17, false);
    std::string multicast;
    const std::vector<float> a = run(d, s, [&](const float* A, const float* B, float* C) {
        matmul::launch_sgemmTmaWgmmaSplitK_with<T15>(A, B, C, s.m, s.n, s.k, splits, 1 << 20);
    });
    const std::vector<float> b = run(d, s, [&](const float* A, const float* B, float* C) {
        multicast = matmul::launch_sgemmTmaWgmmaMulticast_with<T17>(A, B, C, s.m, s.n, s.k, splits, 3);
    });
    EXPECT_NE(multicast.find("multicast A in clusters of 2"), std::string::npos) << multicast;
    EXPECT_TRUE(a == b) << name_of(s) << (kWide ? " 256-row tiles" : " 128-row tiles") << " splitK " << splits;
}

TEST(TmaWgmmaSteps, MulticastIsBitForBitStep15) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemmTmaWgmmaMulticast")));
    for (Shape s : {Shape{1000, 1100, 520}, Shape{517, 640, 300}, Shape{260, 900, 2000}})
        for (int splits : {1, 3}) {
            expect_multicast_is_step15<false>(s, splits);
            expect_multicast_is_step15<true>(s, splits);
        }
}

TEST(TmaWgmmaSteps, ThreeTf32ExactOnIntegersAtEveryGridSplitAndWayToSplitA) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")));
    for (const Shape& s : kStepShapes)
        for (int splits : {1, 2, 5})
            for (int blocks : {1, 3, 1 << 20})
                for (bool in_kernel : {false, true})
                    for (bool pair_sum : {true, false}) {  // 2 slices: summed in clusters of 2, or by splitKReduce
                        if (!pair_sum && splits != 2) continue;
                        expect_exact(s,
                                     "splitK " + std::to_string(splits) + " blocks " + std::to_string(blocks) +
                                         (in_kernel ? " A split in kernel" : " A split by a pre-pass") +
                                         (pair_sum ? "" : " no pair sum"),
                                     [&](const float* A, const float* B, float* C) {
                                         return matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(
                                             A, B, C, s.m, s.n, s.k, splits, blocks, in_kernel, pair_sum);
                                     });
                    }
}

// On integers the small halves (x - tf32(x)) are 0: the test above cannot see
// a wrong A_small split in the kernel. Random floats, with 3xTF32's tolerance,
// which a lost A_small product exceeds at most elements where K is a few
// hundred or less (at a larger K the fp32 part of the tolerance grows past
// it); A split in the kernel: split-K 2 summed in clusters of 2, split-K 3 by
// splitKReduce, one block or 3 walking all the tiles; K of 2-10 k-tiles, one
// not a multiple of 4 (A padded first).
TEST(TmaWgmmaSteps, ThreeTf32SplitInKernelWithinItsToleranceOnRandomFloats) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")));
    for (Shape s : {Shape{127, 129, 65}, Shape{260, 132, 300}, Shape{300, 516, 33}}) {
        const Data d = make_data(s, 16, false);
        for (int splits : {2, 3})
            for (int blocks : {1, 3}) {
                std::string what;
                const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
                    what = matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(A, B, C, s.m, s.n, s.k, splits, blocks,
                                                                              true, splits == 2);
                });
                const std::string at = name_of(s) + " splitK " + std::to_string(splits) + " blocks " +
                                       std::to_string(blocks) + " (" + what + ")";
                const Result r = compare(got, d, within(matmul::Math::Tf32x3, s.k));
                EXPECT_EQ(r.bad, 0u) << at << ": " << describe(r, s);
                EXPECT_NE(what.find(" A split in kernel"), std::string::npos) << at;
                if (splits == 2 && matmul::pair_sum_refusal<matmul::Split3Tile>().empty())
                    EXPECT_NE(what.find("summed in clusters of 2"), std::string::npos) << at;
            }
    }
}

// Split-K 2 summed in a cluster (step 16d) gives the bits splitKReduce gives
// (a + b in one block, b + a in the other), on data where the order of the sum
// shows: random floats, several tiles per cluster, an odd N (unpaired stores).
TEST(TmaWgmmaSteps, ThreeTf32PairSumIsBitForBitSplitKReduce) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")));
    SKIP_IF_WAIVED(matmul::pair_sum_refusal<matmul::Split3Tile>());
    for (Shape s : {Shape{515, 517, 1999}, Shape{256, 256, 1024}})
        for (int blocks : {2, 1 << 20}) {
            const Data d = make_data(s, 11, false);
            std::string with, without;
            const std::vector<float> a = run(d, s, [&](const float* A, const float* B, float* C) {
                with = matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(A, B, C, s.m, s.n, s.k, 2, blocks, false, true);
            });
            const std::vector<float> b = run(d, s, [&](const float* A, const float* B, float* C) {
                without = matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(A, B, C, s.m, s.n, s.k, 2, blocks, false, false);
            });
            EXPECT_NE(with.find("summed in clusters of 2"), std::string::npos) << with;
            EXPECT_EQ(without.find("summed in clusters"), std::string::npos) << without;
            EXPECT_EQ(compare(a, d, within(matmul::Math::Fp32, s.k)).bad, 0u) << name_of(s);
            EXPECT_TRUE(a == b) << name_of(s) << " blocks " << blocks;
        }
}

// Step 16n: the big products are promoted every 4 k-tiles where one block sums
// all of K in at least 64 k-tiles, else every 2; the launch column says which.
// Random floats within the fp32 tolerance on both sides of the boundary (63
// and 64 k-tiles), with a last promotion of 4, 1 or 2 k-tiles (K = 2017,
// 2051, 3000), one block walking all the tiles (each tile starts a promotion
// afresh) or a block a tile; and exact on integers.
TEST(TmaWgmmaSteps, ThreeTf32PromotesEveryFourKTilesOnlyWhereOneBlockSumsALongK) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")));
    using T = matmul::Split3Tile;
    for (Shape s : {Shape{131, 260, 2016}, Shape{131, 260, 2017}, Shape{257, 128, 2051}, Shape{128, 129, 3000}})
        for (int splits : {1, 2})
            for (int blocks : {1, 1 << 20}) {
                const int every = splits == 1 && common::ceil_div(s.k, T::BK) >= 64 ? 4 : 2;
                EXPECT_EQ(T::promote(common::ceil_div(s.k, T::BK), splits), every) << name_of(s);
                const Data d = make_data(s, 31, false);
                std::string what;
                const auto launch = [&](const float* A, const float* B, float* C) {
                    what = matmul::launch_sgemm3xTf32_with<T>(A, B, C, s.m, s.n, s.k, splits, blocks);
                    return what;
                };
                const std::string at = name_of(s) + " splitK " + std::to_string(splits) + " blocks " +
                                       std::to_string(blocks);
                EXPECT_EQ(compare(run(d, s, launch), d, within(matmul::Math::Fp32, s.k)).bad, 0u) << at << ": " << what;
                EXPECT_NE(what.find(" promote " + std::to_string(every)), std::string::npos) << at << ": " << what;
                expect_exact(s, at, launch);
            }
}

// 3xTF32 with the last rows of C as a fp32 strip (launch_sgemm3xTf32's pick
// where the model says the strip costs less than a tile row).
TEST(TmaWgmmaSteps, ThreeTf32ExactOnIntegersWithItsLastRowsAsAStrip) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")));
    for (Shape s : {Shape{129, 131, 65}, Shape{263, 516, 300}, Shape{144, 33, 1000}})
        for (int splits : {1, 2})
            for (bool in_kernel : {false, true})
                expect_exact(s, "splitK " + std::to_string(splits) + (in_kernel ? " A split in kernel" : ""),
                             [&](const float* A, const float* B, float* C) {
                                 return matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(
                                     A, B, C, s.m, s.n, s.k, splits, 1 << 20, in_kernel, true,
                                     {matmul::strip_rows(s.m), 0});
                             });
}

// 3xTF32 with the last columns of C as a fp32 strip (step 16e), and with both
// strips: the tiles on the first m rows and n columns, the strips on the rest,
// computed by blocks of the operands' pass (step 16j; the column strip sliced
// along K where K > 512, its slices added by its last block), A split by the
// pass or in the kernel; every way to sum split-K. The launch column names
// each strip.
TEST(TmaWgmmaSteps, ThreeTf32ExactOnIntegersWithItsLastColumnsAsAStrip) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")));
    for (Shape s : {Shape{64, 131, 65}, Shape{300, 261, 1000}, Shape{33, 144, 700}, Shape{263, 257, 300},
                    Shape{129, 129, 2051}})
        for (int splits : {1, 2, 3})
            for (bool pair_sum : {true, false}) {
                if (!pair_sum && splits != 2) continue;
                for (bool in_kernel : {false, true}) {
                    const matmul::Strips strips{matmul::strip_rows(s.m), matmul::strip_cols(s.n)};
                    std::string what;
                    expect_exact(s,
                                 "splitK " + std::to_string(splits) + (pair_sum ? "" : " no pair sum") +
                                     (in_kernel ? " A split in kernel" : ""),
                                 [&](const float* A, const float* B, float* C) {
                                     what = matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(
                                         A, B, C, s.m, s.n, s.k, splits, 1 << 20, in_kernel, pair_sum, strips);
                                     return what;
                                 });
                    EXPECT_NE(what.find(" + " + std::to_string(strips.cols) + "-column strip"), std::string::npos)
                        << name_of(s) << ": " << what;
                    EXPECT_EQ(what.find("-row strip") != std::string::npos, strips.rows > 0) << name_of(s) << ": " << what;
                }
            }
}

// Step 16j's one launch for the passes (operandPasses): A's split or padded
// copy and B's padded copy, alone or together (K and N not multiples of 4),
// with strips (of 1 or 2: in that launch; 3: after the product) or without;
// exact on integers, and the launch column names what was padded. The column
// strip's slices, added by its last block, give the same bits on every launch.
TEST(TmaWgmmaSteps, ThreeTf32OperandPassesInOneLaunchAreExact) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")));
    for (Shape s : {Shape{257, 131, 65}, Shape{129, 255, 1001}, Shape{1000, 333, 77}, Shape{128, 128, 128},
                    Shape{130, 64, 63}, Shape{64, 130, 64}})
        for (bool in_kernel : {false, true})
            for (bool with_strip : {false, true}) {
                const matmul::Strips strips =
                    with_strip ? matmul::Strips{matmul::strip_rows(s.m), matmul::strip_cols(s.n)} : matmul::Strips{};
                std::string what;
                expect_exact(s, std::string(in_kernel ? "A split in kernel" : "A split by the pass") +
                                    (with_strip ? " with its strips" : ""),
                             [&](const float* A, const float* B, float* C) {
                                 what = matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(
                                     A, B, C, s.m, s.n, s.k, 1, 1 << 20, in_kernel, true, strips);
                                 return what;
                             });
                EXPECT_EQ(what.find(" B padded") != std::string::npos, s.n % 4 != 0) << name_of(s) << ": " << what;
                if (in_kernel)
                    EXPECT_EQ(what.find(" A padded") != std::string::npos, s.k % 4 != 0) << name_of(s) << ": " << what;
            }
    // Column strips of 2 (in the passes' launch) and 3 (a launch of its own), 9 slices of K each.
    for (Shape s : {Shape{1031, 130, 4099}, Shape{1031, 131, 4099}}) {
        const Data d = make_data(s, 5, false);
        const auto launch = [&](const float* A, const float* B, float* C) {
            matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(A, B, C, s.m, s.n, s.k, 1, 1 << 20, false, true,
                                                               {0, matmul::strip_cols(s.n)});
        };
        const std::vector<float> a = run(d, s, launch), b = run(d, s, launch);
        EXPECT_EQ(compare(a, d, within(matmul::Math::Fp32, s.k)).bad, 0u) << name_of(s);
        EXPECT_TRUE(a == b) << name_of(s);
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
        // sgemmTf32Mma (no TMA) reads small products as they are, with 4-byte copies: padding would cost more.
        const std::string how = name == "sgemmTf32Mma" ? ":4-byte" : " padded";
        const Shape odd_k{64, 64, 63}, odd_n{64, 63, 64}, even{64, 64, 64};
        run(integer_data(odd_k), odd_k, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, 64, 64, 63); });
        EXPECT_NE(what.find(" A" + how), std::string::npos) << name << ": " << what;
        run(integer_data(odd_n), odd_n, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, 64, 63, 64); });
        EXPECT_NE(what.find(" B" + how), std::string::npos) << name << ": " << what;
        run(integer_data(even), even, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, 64, 64, 64); },
            {1, 0, 0});
        EXPECT_NE(what.find(" A" + how + " (A not 16-byte aligned)"), std::string::npos) << name << ": " << what;
        run(integer_data(even), even, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, 64, 64, 64); });
        EXPECT_EQ(what.find("padded"), std::string::npos) << name << ": " << what;
        EXPECT_EQ(what.find("4-byte"), std::string::npos) << name << ": " << what;
    }
}

// sgemmTf32Mma's two ways to read operands whose rows are off 16 bytes, each
// forced at shapes where the plan would pick the other: a padded copy (16-byte
// copies) and 4-byte copies straight from A and B. Exact on integers, and the
// launch column names the way taken.
TEST(MatmulAlignment, Tf32MmaPaddedAndFourByteCopiesAreBothExact) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemmTf32Mma")));
    for (const Shape& s : {Shape{129, 127, 9}, Shape{1000, 333, 77}, Shape{257, 384, 1001}, Shape{64, 64, 64}})
        for (bool pad : {true, false})
            for (const std::string tile : {"64x64", "128x128 s3", "128x128 s2"}) {  // step 11c's; 3 stages or 2
                if (tile == "128x128 s3" && !common::smem_refusal(matmul::MmaTile128::SMEM).empty()) continue;
                std::string what;
                expect_exact(s, std::string(pad ? "padded " : "4-byte ") + tile,
                             [&](const float* A, const float* B, float* C) {
                                 what = tile == "64x64" ? matmul::launch_sgemmTf32Mma_with<matmul::MmaTile64>(
                                                              A, B, C, s.m, s.n, s.k, pad)
                                        : tile == "128x128 s3"
                                            ? matmul::launch_sgemmTf32Mma_with<matmul::MmaTile128>(A, B, C, s.m, s.n,
                                                                                                   s.k, pad)
                                            : matmul::launch_sgemmTf32Mma_with<matmul::MmaTile128s2>(A, B, C, s.m,
                                                                                                     s.n, s.k, pad);
                                 return what;
                             });
                const bool a_off = s.k % 4 != 0, b_off = s.n % 4 != 0;
                EXPECT_EQ(what.find(" A padded") != std::string::npos, pad && a_off) << name_of(s) << ": " << what;
                EXPECT_EQ(what.find(" B padded") != std::string::npos, pad && b_off) << name_of(s) << ": " << what;
                EXPECT_EQ(what.find(" A:4-byte") != std::string::npos, !pad && a_off) << name_of(s) << ": " << what;
                EXPECT_EQ(what.find(" B:4-byte") != std::string::npos, !pad && b_off) << name_of(s) << ": " << what;
            }
}

// ---- Step 16h's rule: pdl_wait() is what orders a programmatic launch --------
// The writer lets the next grid launch at once, spins ~100 us, then writes 1.
// A reader launched programmatically after it that calls pdl_wait() must see
// the 1; the planted broken reader, without the wait, runs beside the writer
// and reads the 0 before it (at least once in five tries: the proof that the
// launch overlapped, so that the first check means something).
__global__ void slowWriter(int* flag) {
    common::pdl_launch_dependents();
    const long long t0 = clock64();
    while (clock64() - t0 < 200000) {}  // ~100 us at 2 GHz
    *flag = 1;
}
template <bool kWait>
__global__ void flagReader(const int* flag, int* seen) {
    if (kWait) common::pdl_wait();
    *seen = *static_cast<const volatile int*>(flag);
}

TEST(ProgrammaticLaunch, OnlyPdlWaitOrdersAKernelAfterTheOneBefore) {
    SKIP_WITHOUT_CC(90, "programmatic dependent launch");
    // Without 9.0 code (a build for sm_80 JIT-compiled here) pdl_wait() is empty and the
    // launch is a plain one (common::programmatic_waits): nothing to test.
    SKIP_IF_WAIVED(common::code_refusal(reinterpret_cast<const void*>(flagReader<true>), 90));
    common::DeviceBuffer<int> flag(1), seen(1);
    int early = 0;
    for (int t = 0; t < 5; ++t) {
        for (bool wait : {true, false}) {
            CHECK(cudaMemset(flag.get(), 0, sizeof(int)));
            seen.poison();
            slowWriter<<<1, 1>>>(flag.get());
            CHECK_LAUNCH();
            common::launch_programmatic(wait ? flagReader<true> : flagReader<false>, 1, 1,
                                        static_cast<const int*>(flag.get()), seen.get());
            CHECK(cudaDeviceSynchronize());
            std::vector<int> h;
            seen.download(h);
            if (wait) EXPECT_EQ(h[0], 1) << "try " << t << ": the reader ran before the writer had finished";
            else early += h[0] == 0;
        }
    }
    EXPECT_GT(early, 0) << "the reader without pdl_wait() never ran beside the writer: no overlap to test";
}

// ---- Step 16m's premise: how the TMA rounds fp32 into TF32 ---------------------
// The pass before 3xTF32's product writes only A_small = tf32(x - big) and the
// TMA rounds A into A_big as it loads it (a TFLOAT32 map), so the pass must
// round big exactly as the TMA does (to_tf32_as_tma), or big + small misses x
// by a TF32 step at every tie. One 32 x 32 box through the TMA against
// to_tf32_as_tma and to_tf32 in registers: exact ties of both parities, and
// values just below and above one. (A 128-byte swizzle: in row r, the 16-byte
// chunk c lands at c ^ (r % 8).)
constexpr int kBox = 32;
__global__ void tmaRoundTrip(const __grid_constant__ CUtensorMap map, const float* in, uint32_t* via_tma, uint32_t* rn,
                             uint32_t* rna) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ alignas(1024) float box[kBox * kBox];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        common::mbarrier_init(&bar, 1);
        common::fence_mbarrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        common::mbarrier_arrive_expect_tx(&bar, sizeof(box));
        matmul::tma_load_2d(box, &map, 0, 0, &bar);
    }
    common::mbarrier_wait(&bar, 0);
    for (int i = threadIdx.x; i < kBox * kBox; i += blockDim.x) {
        const int r = i / kBox, c = i % kBox;
        via_tma[i] = __float_as_uint(box[r * kBox + (((c / 4) ^ (r % 8)) * 4 + c % 4)]);
        rn[i] = matmul::to_tf32_as_tma(in[i]);
        rna[i] = matmul::to_tf32(in[i]);
    }
#else
    (void)map, (void)in, (void)via_tma, (void)rn, (void)rna;
#endif
}

TEST(Tf32Rounding, TheTmaRoundsAsToTf32AsTmaTiesToEven) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waived_sgemm3xTf32());
    constexpr int n = kBox * kBox;
    std::vector<float> x(n);
    std::vector<int> kind(n);  // 0: a tie, 1: just below one, 2: just above one
    uint32_t seed = 12345;
    for (int i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        kind[i] = i % 3;
        const uint32_t low = kind[i] == 0 ? 0x1000u : kind[i] == 1 ? 0x0fffu : 0x1001u;  // the 13 bits TF32 drops
        const uint32_t u = (seed & 0x807fe000u) | (uint32_t(100 + i % 50) << 23) | low;  // normal, either sign
        std::memcpy(&x[i], &u, 4);
    }
    common::DeviceBuffer<float> d_in(n);
    common::DeviceBuffer<uint32_t> d_tma(n), d_rn(n), d_rna(n);
    d_in.upload(x);
    CUtensorMap map;
    ASSERT_EQ(matmul::tensor_map_2d(&map, d_in.get(), kBox, kBox, kBox, kBox, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32), "");
    tmaRoundTrip<<<1, 128>>>(map, d_in.get(), d_tma.get(), d_rn.get(), d_rna.get());
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    std::vector<uint32_t> tma, rn, rna;
    d_tma.download(tma);
    d_rn.download(rn);
    d_rna.download(rna);
    int differ = 0, first = -1, ties_rna_differs = 0;
    for (int i = 0; i < n; ++i) {
        if (tma[i] != rn[i] && differ++ == 0) first = i;
        if (kind[i] == 0 && rn[i] != rna[i]) ++ties_rna_differs;  // ties whose TF32 neighbour below is even
    }
    EXPECT_EQ(differ, 0) << "the first at element " << first << " (" << (first >= 0 && kind[first] == 0 ? "a tie" : "not a tie")
                         << "): TMA " << std::hex << (first >= 0 ? tma[first] : 0) << ", cvt.rn " << (first >= 0 ? rn[first] : 0);
    EXPECT_GT(ties_rna_differs, 0) << "no tie where rounding away and to even differ: the test proves nothing";
}

// Every TF32 kernel rounds its operands to nearest, A's and B's. The tolerance
// admits truncation (matmul.cuh keeps it as a margin), so this is an exact
// check on data where the two differ: a = 1 + 0.75 x 2^-10 is 1 + 2^-10 to
// nearest and 1 truncated (no tie), and C = A B with A all a and B all 1 (or
// the other way round) is K (1 + 2^-10) to nearest, exact in fp32 at every
// partial sum (K <= 256: 11 to 13 significant bits). A TFLOAT32 map that
// became FLOAT32 (the TMA then truncates), or step 11 without its cvt.rna,
// gives K.
TEST(Tf32Rounding, EveryTf32KernelRoundsItsOperandsToNearest) {
    SKIP_WITHOUT_GPU();
    const float a = 1.0f + 0.75f * std::ldexp(1.0f, -10), b = 1.0f;
    for (const matmul::Kernel& k : matmul::kernels()) {
        if (k.math != matmul::Math::Tf32 || !testing_gpu::runs_here(k.name, matmul::waiver(k))) continue;
        for (const Shape& s : {Shape{128, 128, 64}, Shape{129, 67, 40}, Shape{257, 260, 256}}) {
            const float want = float(s.k) * (1.0f + std::ldexp(1.0f, -10));
            for (bool a_side : {true, false}) {
                Data d;
                d.A.assign(size_t(s.m) * s.k, a_side ? a : b);
                d.B.assign(size_t(s.k) * s.n, a_side ? b : a);
                std::string what;
                const std::vector<float> got =
                    run(d, s, [&](const float* A, const float* B, float* C) { what = k.launch(A, B, C, s.m, s.n, s.k); });
                size_t bad = 0, first = 0;
                for (size_t i = 0; i < got.size(); ++i)
                    if (got[i] != want && bad++ == 0) first = i;
                EXPECT_EQ(bad, 0u) << k.name << " (" << what << ") on " << name_of(s) << ", " << (a_side ? "A" : "B")
                                   << " rounded: element " << first << " is " << got[first] << ", to nearest "
                                   << want << ", truncated " << float(s.k);
            }
        }
    }
}

// Step 16m: where K % 4 == 0 the pre-pass writes only A_small = a - A_big,
// with A_big as the TFLOAT32 map rounds it (ties to even, to_tf32_as_tma),
// not as cvt.rna would (ties away). On random floats ties are 1 in 8192 and
// the difference hides in the tolerance; here every element of A is a tie
// (the 13 dropped bits 0x1000), half of them with an odd last kept bit, where
// the two roundings differ. A pre-pass that rounded the other way would leave
// A_big + A_small one TF32 step off a at every such element.
TEST(Tf32Rounding, ThreeTf32PrePassSplitsTiesAsItsMapRoundsThem) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")));
    for (const Shape& s : {Shape{64, 64, 64}, Shape{129, 67, 256}}) {
        Data d;
        d.A.resize(size_t(s.m) * s.k);
        uint32_t seed = 777;
        for (float& x : d.A) {
            seed = seed * 1664525u + 1013904223u;
            const uint32_t u = (seed & 0x807fe000u) | (126u << 23) | 0x1000u;  // in [0.5, 1), either sign: a tie
            std::memcpy(&x, &u, 4);
        }
        d.B.resize(size_t(s.k) * s.n);
        common::fill_uniform(d.B.data(), d.B.size(), 778, -1.0f, 1.0f);
        d.ref.resize(size_t(s.m) * s.n);
        d.scale.resize(d.ref.size());
        d.sq.resize(d.ref.size());
        matmul::matmul_cpu(d.A.data(), d.B.data(), d.ref.data(), d.scale.data(), s.m, s.n, s.k, d.sq.data());
        std::string what;
        const std::vector<float> got = run(d, s, [&](const float* A, const float* B, float* C) {
            what = matmul::launch_sgemm3xTf32_with<matmul::Split3Tile>(A, B, C, s.m, s.n, s.k, 1, 1 << 20, false);
        });
        EXPECT_NE(what.find(" A_small split"), std::string::npos) << name_of(s) << ": " << what;
        const Result r = compare(got, d, within(matmul::Math::Tf32x3, s.k));
        EXPECT_EQ(r.bad, 0u) << name_of(s) << " (" << what << "): " << describe(r, s);
    }
}

}  // namespace
