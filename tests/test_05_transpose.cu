// Every 05_transpose kernel against the CPU transpose, at shapes chosen to
// break edge handling: 1 x 1, single rows and columns, primes, one less and
// one more than each tile side, non-square, and one large matrix; then with
// in and out pointing into the middle of their arrays (off 16 bytes).
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>
#include <gtest/gtest.h>
#include "03_bank_conflicts/bank_model.cuh"  // the bank-conflict model of chapter 03
#include "05_transpose/transpose.cuh"
#include "common/buffer.cuh"
#include "common/data.hpp"
#include "common/kernel_list.hpp"
#include "common/launch.cuh"
#include "common/timer.cuh"
#include "common/verify.hpp"
#include "tests/gpu_test.hpp"

namespace {

struct Shape { int rows, cols; };

const std::vector<Shape> kShapes = {
    {1, 1},    {1, 4099}, {4099, 1}, {2, 3},     {15, 31},   {16, 32},   {17, 33},  {33, 31},
    {31, 65},  {63, 64},  {64, 64},  {65, 65},   {8, 4},     {4, 1024},  {252, 260}, {127, 129},
    {1000, 777}, {777, 1000}, {4096, 4096},
    // transposeSectorAligned's cases: rows % 8 = 1..7 (output rows start at every
    // 4-byte offset of a sector), cols % 4 != 0, a window that starts before
    // row 0 and one that needs an extra tile row at the end, odd both ways.
    {9, 130}, {71, 9}, {130, 9}, {257, 129}, {8193, 67}, {67, 8193}, {1030, 1022}, {2051, 2053}};

// Runs kernel k on fresh random data (poisoned output) and compares with the CPU.
common::Comparison run(const transpose::Kernel& k, Shape s, uint64_t seed) {
    const size_t n = size_t(s.rows) * s.cols;
    std::vector<float> in(n), ref(n), got;
    common::fill_uniform(in.data(), n, seed, -100.0f, 100.0f);
    if (k.is_copy) ref = in; else transpose::transpose_cpu(in.data(), ref.data(), s.rows, s.cols);
    common::DeviceBuffer<float> d_in(n), d_out(n);
    d_in.upload(in);
    d_out.poison();
    k.launch(d_in.get(), d_out.get(), s.rows, s.cols);
    CHECK(cudaDeviceSynchronize());
    d_out.download(got);
    return common::compare(got.data(), ref.data(), n);  // exact: a transpose moves bits
}

// Parameterised by the kernel's name, not its place in the list.
class TransposeKernel : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(TransposeKernel, MatchesCpu) {
    SKIP_WITHOUT_GPU();
    const transpose::Kernel& k = common::kernel_named(transpose::kernels(), std::get<0>(GetParam()));
    SKIP_IF_WAIVED(transpose::waived(k));
    const Shape s = std::get<1>(GetParam());
    const uint64_t salt = uint64_t(&k - transpose::kernels().data());  // a different input for each kernel
    const uint64_t seed = 1000003ull * s.rows + s.cols + 7919ull * salt;
    const common::Comparison c = run(k, s, seed);
    EXPECT_TRUE(c.pass()) << k.name << " on " << s.rows << "x" << s.cols << ": " << c.mismatches << " of "
                          << c.n << " wrong, first at " << c.first_bad;
}

INSTANTIATE_TEST_SUITE_P(
    AllKernelsAllShapes, TransposeKernel,
    ::testing::Combine(::testing::ValuesIn(common::kernel_names(transpose::kernels())), ::testing::ValuesIn(kShapes)),
    [](const ::testing::TestParamInfo<TransposeKernel::ParamType>& p) {
        const Shape s = std::get<1>(p.param);
        return std::get<0>(p.param) + "_" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
    });

// transposeSectorAligned's plan picks 256 threads a tile for small grids and
// 512 for large ones, so each shape above tests only one of them: here both
// block sizes run at every shape.
// Every plan at every shape: both blocks, each alone and in cluster pairs of
// tile columns (pairs where the GPU has clusters; a block past the last tile
// column must store nothing: shapes with an odd number of tile columns), and
// the 256-thread kernel with the split of L1 and shared memory of its own.
TEST(TransposeSectorAligned, BothBlockSizesPairsAndSplitsMatchCpu) {
    SKIP_WITHOUT_GPU();
    const transpose::Kernel& k = common::kernel_named(transpose::kernels(), "transposeSectorAligned");
    SKIP_IF_WAIVED(transpose::waived(k));
    struct Plan { int threads; bool pairs, more_l1; transpose::LaunchFn launch; };
    for (const Plan& p : {Plan{256, false, false, transpose::launch_sector_aligned_as<256>},
                          Plan{512, false, false, transpose::launch_sector_aligned_as<512>},
                          Plan{256, true, false, transpose::launch_sector_aligned_as<256, true>},
                          Plan{512, true, false, transpose::launch_sector_aligned_as<512, true>},
                          Plan{256, false, true, transpose::launch_sector_aligned_as<256, false, true>},
                          Plan{256, true, true, transpose::launch_sector_aligned_as<256, true, true>}})
        for (Shape s : kShapes) {
            transpose::Kernel forced = k;
            forced.launch = p.launch;
            const uint64_t seed = 1000003ull * s.rows + s.cols + uint64_t(p.threads) + p.pairs + 2 * p.more_l1;
            const common::Comparison c = run(forced, s, seed);
            EXPECT_TRUE(c.pass()) << p.threads << " threads" << (p.pairs ? " in pairs" : "")
                                  << (p.more_l1 ? " with more L1" : "") << " on " << s.rows << "x" << s.cols << ": "
                                  << c.mismatches << " of " << c.n << " wrong, first at " << c.first_bad;
        }
}

// How ./transpose times its kernels (common::time_interleaved_ms): `warmup`
// untimed launches of each, then per round an untimed and a timed launch of
// each in turn, one median per launch.
TEST(TransposeTiming, KernelsAreTimedInTurn) {
    SKIP_WITHOUT_GPU();
    common::DeviceBuffer<float> buf(1024);
    std::vector<int> order;
    auto launch = [&](int id) {
        return [&, id] {
            order.push_back(id);
            CHECK(cudaMemsetAsync(buf.get(), 0, 1024 * sizeof(float)));
        };
    };
    const std::vector<double> ms = common::time_interleaved_ms({launch(0), launch(1)}, 2, 3);
    ASSERT_EQ(ms.size(), 2u);
    EXPECT_GT(ms[0], 0.0);
    EXPECT_GT(ms[1], 0.0);
    EXPECT_EQ(order, (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1}));
}

// A waived kernel (transposeBulkCopy and transposeTensorMap before sm_90) is left out of the loops
// below, and is a failure where everything must run (REQUIRE_GPU on a 9.0 GPU).
bool runs_here(const transpose::Kernel& k) { return testing_gpu::runs_here(k.name, transpose::waived(k)); }

// ---- Pointers into the middle of an array ----------------------------------
// The float4 kernels (copyVec4, transposeSwizzleVec4*, transposeSectorAligned)
// and transposeBulkCopy and transposeTensorMap need in and out on 16 bytes. A cudaMalloc'd buffer starts on 256 bytes, so
// base + 1 float is 4 bytes off, base + 4 floats aligned again. Their launchers
// check and run copyGmem or transposeSmemPadCoarse instead, saying so in the
// launch column; every other kernel takes any float pointer as it is.
struct OffsetRun {
    common::Comparison c;
    size_t outside = 0;  // floats written outside out (before it or after it)
    std::string launch;
};

// run() with in and out starting in_off and out_off floats into their buffers;
// out's buffer has 4 more floats after it. Everything outside out must stay poisoned.
OffsetRun run_at(const transpose::Kernel& k, Shape s, int in_off, int out_off, uint64_t seed) {
    constexpr size_t kAfter = 4;
    const size_t n = size_t(s.rows) * s.cols;
    std::vector<float> in(n), ref(n), got;
    common::fill_uniform(in.data(), n, seed, -100.0f, 100.0f);
    if (k.is_copy) ref = in; else transpose::transpose_cpu(in.data(), ref.data(), s.rows, s.cols);
    common::DeviceBuffer<float> d_in(in_off + n), d_out(out_off + n + kAfter);
    CHECK(cudaMemcpy(d_in.get() + in_off, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    d_out.poison();
    OffsetRun r;
    r.launch = k.launch(d_in.get() + in_off, d_out.get() + out_off, s.rows, s.cols);
    CHECK(cudaDeviceSynchronize());
    d_out.download(got);
    r.c = common::compare(got.data() + out_off, ref.data(), n);  // exact, as above
    r.outside = common::written_outside(got, size_t(out_off), out_off + n);
    return r;
}

bool uses_float4(const std::string& name) {
    return name == "copyVec4" || name == "transposeSwizzleVec4" || name == "transposeSwizzleVec4ColGrid" ||
           name == "transposeSectorAligned" || name == "transposeBulkCopy" || name == "transposeTensorMap";
}

TEST(TransposeAlignment, PointersIntoAnArrayMatchCpu) {
    SKIP_WITHOUT_GPU();
    // Tile multiples (where the float4 path would run), whole float4s with
    // edge tiles (252 x 260: transposeSwizzleVec4's tested float4s, which must
    // write nothing outside out) and shapes whose rows are not whole float4s
    // (cols or rows % 4 != 0).
    const std::vector<Shape> shapes = {{64, 64}, {1024, 1024}, {252, 260}, {1000, 777}, {63, 65}, {130, 9}, {8193, 67}};
    const std::vector<std::pair<int, int>> offsets = {{1, 0}, {0, 1}, {1, 1}, {2, 3}, {4, 4}};  // floats: in, out
    std::vector<transpose::Kernel> here;
    for (const transpose::Kernel& k : transpose::kernels())
        if (runs_here(k)) here.push_back(k);
    for (const transpose::Kernel& k : here)
        for (Shape s : shapes)
            for (const auto& off : offsets) {
                const uint64_t seed = 31ull * s.rows + s.cols + 7ull * off.first + off.second;
                const OffsetRun r = run_at(k, s, off.first, off.second, seed);
                const std::string where = std::string(k.name) + " on " + std::to_string(s.rows) + "x" +
                                          std::to_string(s.cols) + ", in + " + std::to_string(off.first) +
                                          ", out + " + std::to_string(off.second) + " (" + r.launch + ")";
                EXPECT_TRUE(r.c.pass()) << where << ": " << r.c.mismatches << " of " << r.c.n << " wrong, first at "
                                        << r.c.first_bad;
                EXPECT_EQ(r.outside, 0u) << where << ": floats written outside out";
                const bool aligned = off.first % 4 == 0 && off.second % 4 == 0;
                const bool fell_back = r.launch.find("not 16-byte aligned") != std::string::npos;
                EXPECT_EQ(fell_back, uses_float4(k.name) && !aligned) << where;
            }
}

// ---- A deliberately wrong kernel must be caught -------------------------
// Seed 000's transposeSmemUnrollPad guards both of a thread's elements with
// `col + blockDim.x < cols`: where the second element is out of range the
// first one is dropped too. On tile multiples it is right, which is why tests
// that only use sizes like 1024 x 1024 never see it.
__global__ void transposeSmemUnrollPadSeedBug(const float* in, float* out, int rows, int cols) {
    using namespace transpose;
    __shared__ float tile[BDIMY][2 * BDIMX + PAD];
    unsigned col = 2 * blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col + blockDim.x < cols) {  // the seed's guard
        tile[threadIdx.y][threadIdx.x] = in[at(row, col, cols)];
        tile[threadIdx.y][threadIdx.x + blockDim.x] = in[at(row, col + blockDim.x, cols)];
    }
    unsigned bidx = threadIdx.y * blockDim.x + threadIdx.x, irow = bidx / blockDim.y, icol = bidx % blockDim.y;
    row = 2 * blockIdx.x * blockDim.x + irow;
    col = blockIdx.y * blockDim.y + icol;
    __syncthreads();
    if (row + blockDim.x < cols && col < rows) {
        out[at(row, col, rows)] = tile[icol][irow];
        out[at(row + blockDim.x, col, rows)] = tile[icol][irow + blockDim.x];
    }
}

std::string launch_seed_bug(const float* in, float* out, int rows, int cols) {
    using namespace transpose;
    const dim3 block(BDIMX, BDIMY), grid(common::ceil_div(cols, 2 * BDIMX), common::ceil_div(rows, BDIMY));
    transposeSmemUnrollPadSeedBug<<<grid, block>>>(in, out, rows, cols);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

// A planted bug at shape s must fail the check; the line says what the check saw.
void expect_caught(const transpose::Kernel& bug, Shape s, uint64_t seed, const char* what) {
    const common::Comparison c = run(bug, s, seed);
    EXPECT_FALSE(c.pass()) << what << " at " << s.rows << "x" << s.cols << " went unnoticed";
    std::printf("[ broken ] %s at %dx%d: %zu of %zu elements wrong, first at %zu: %s\n", bug.name, s.rows, s.cols,
                c.mismatches, c.n, c.first_bad, c.pass() ? "MISSED" : "caught");
}

TEST(TransposePitfall, SeedUnrollGuardIsCaughtOffTileMultiples) {
    SKIP_WITHOUT_GPU();
    const transpose::Kernel bug{"seedBug", false, launch_seed_bug, ""};
    EXPECT_TRUE(run(bug, {1024, 1024}, 1).pass()) << "on tile multiples the seed's kernel is right";
    for (Shape s : {Shape{33, 31}, Shape{1000, 777}, Shape{1, 4099}, Shape{4095, 4097}})
        expect_caught(bug, s, 2, "the dropped edge");
}

// transposeBulkCopy without the ordinary stores at the unaligned ends of its
// output rows: every bulk copy is right, and where rows % 4 == 0 there are no
// such ends. Tests at 1024 x 1024 and other multiples of 4 pass it; the odd
// shapes of kShapes must not.
TEST(TransposePitfall, BulkCopyWithoutRowEndsIsCaughtAtOddRows) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(transpose::waived_bulk_copy(common::gpu()));
    const transpose::Kernel bug{"bulkCopyNoEdges", false, transpose::launch_bulk_copy<false>, ""};
    for (Shape s : {Shape{1024, 1024}, Shape{64, 1000}, Shape{8, 4}})
        EXPECT_TRUE(run(bug, s, 3).pass()) << "rows % 4 == 0: " << s.rows << "x" << s.cols << " has no row ends to drop";
    for (Shape s : {Shape{777, 1000}, Shape{1030, 1022}, Shape{9, 130}, Shape{2051, 2053}, Shape{4095, 4097}})
        expect_caught(bug, s, 4, "the dropped row ends");
}

// transposeTensorMap without the shift a_k of its row classes: map k's box
// starts at the 16-byte boundary before column c0 of its rows, a_k floats
// early. Where cols % 4 == 0 every a_k is 0 and the bug is invisible; odd
// column counts must catch it.
TEST(TransposePitfall, TensorMapWithoutRowShiftIsCaughtAtOddCols) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(transpose::waived_tensor_map(common::gpu()));
    const transpose::Kernel bug{"tensorMapNoShift", false, transpose::launch_tensor_map<false>, ""};
    for (Shape s : {Shape{1024, 1024}, Shape{1000, 64}, Shape{9, 4}, Shape{777, 1000}})
        EXPECT_TRUE(run(bug, s, 5).pass()) << "cols % 4 == 0: " << s.rows << "x" << s.cols << " has no shift to forget";
    for (Shape s : {Shape{1000, 777}, Shape{1022, 1030}, Shape{130, 9}, Shape{2053, 2051}, Shape{4097, 4095}})
        expect_caught(bug, s, 6, "the forgotten shift");
}

// ---- The largest shapes check_shape admits ---------------------------------
// 2^31 floats (8 GiB a matrix): every index that could pass INT_MAX must be
// 64-bit. Data made and checked on the GPU, so the test takes seconds: in[i]
// = the top 24 bits of i * 2654435761 mod 2^32, exact in a float, and never
// the same at an index off by a power of two (a 32-bit byte offset wraps at
// 2^30 floats). Skipped with the reason where the GPU has less free memory.
__host__ __device__ inline float index_pattern(size_t i) { return float((uint32_t(i) * 2654435761u) >> 8); }
__global__ void fillIndex(float* p, size_t n) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = index_pattern(i);
}
// Counts output elements that are not in[r][c] (or in[i] for a copy).
__global__ void countWrong(const float* out, int rows, int cols, bool copy, unsigned long long* wrong) {
    const size_t n = size_t(rows) * cols;
    unsigned long long bad = 0;
    for (size_t o = size_t(blockIdx.x) * blockDim.x + threadIdx.x; o < n; o += size_t(gridDim.x) * blockDim.x) {
        const size_t src = copy ? o : size_t(o % size_t(rows)) * cols + o / size_t(rows);  // o = c * rows + r
        if (!(out[o] == index_pattern(src))) ++bad;
    }
    if (bad) atomicAdd(wrong, bad);
}

TEST(TransposeLimits, LargestAdmittedShapesAreExact) {
    SKIP_WITHOUT_GPU();
    for (Shape s : {Shape{32768, 65536}, Shape{46341, 46340}, Shape{2048, int(transpose::kMaxDim)},
                    Shape{int(transpose::kMaxDim), 2048}}) {
        ASSERT_EQ(transpose::check_shape(s.rows, s.cols), "") << s.rows << "x" << s.cols;
        const size_t n = size_t(s.rows) * s.cols;
        ASSERT_GT(n, size_t(INT32_MAX) - 65536);
        SKIP_UNLESS_MEMORY(std::to_string(s.rows) + "x" + std::to_string(s.cols),
                           2.0 * n * sizeof(float) + (64u << 20), 0.0);
        common::DeviceBuffer<float> d_in(n), d_out(n);
        common::DeviceBuffer<unsigned long long> d_wrong(1);
        fillIndex<<<4096, 256>>>(d_in.get(), n);
        CHECK_LAUNCH();
        for (const transpose::Kernel& k : transpose::kernels()) {
            if (!runs_here(k)) continue;
            d_out.poison();
            CHECK(cudaMemset(d_wrong.get(), 0, sizeof(unsigned long long)));
            k.launch(d_in.get(), d_out.get(), s.rows, s.cols);
            countWrong<<<4096, 256>>>(d_out.get(), s.rows, s.cols, k.is_copy, d_wrong.get());
            CHECK_LAUNCH();
            std::vector<unsigned long long> wrong;
            d_wrong.download(wrong);
            EXPECT_EQ(wrong[0], 0u) << k.name << " on " << s.rows << "x" << s.cols;
        }
    }
}

// ---- CPU-only ------------------------------------------------------------
TEST(TransposeCpu, ReferenceOnASmallMatrix) {
    const float in[2 * 3] = {1, 2, 3, 4, 5, 6};  // 2 x 3
    float out[3 * 2] = {};
    transpose::transpose_cpu(in, out, 2, 3);
    const float want[3 * 2] = {1, 4, 2, 5, 3, 6};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]) << i;
}

TEST(TransposeCpu, ReferenceIsAnInvolution) {
    const int rows = 67, cols = 45;
    std::vector<float> a(rows * cols), t(rows * cols), back(rows * cols);
    common::fill_uniform(a.data(), a.size(), 3, -1.0f, 1.0f);
    transpose::transpose_cpu(a.data(), t.data(), rows, cols);
    transpose::transpose_cpu(t.data(), back.data(), cols, rows);
    EXPECT_EQ(a, back);
}

TEST(TransposeCpu, ShapeLimits) {
    EXPECT_EQ(transpose::check_shape(1, 1), "");
    EXPECT_EQ(transpose::check_shape(8192, 8192), "");
    EXPECT_EQ(transpose::check_shape(32768, 65536), "");  // 2^31 elements
    EXPECT_NE(transpose::check_shape(32768, 65537), "");
    EXPECT_NE(transpose::check_shape(0, 5), "");
    EXPECT_NE(transpose::check_shape(5, -1), "");
    EXPECT_NE(transpose::check_shape(transpose::kMaxDim + 1, 1), "");
    EXPECT_NE(transpose::check_shape(1000000, 1000000), "");  // 10^12 elements
}

// transposeBulkCopy's limits, for every preset: 9.0 (the RTX 5090's 12.0 has
// the bulk copy engine too) and its 36 KiB of tiles; transposeSectorAligned's
// 20 KiB tile, which every preset's block holds. No CUDA call.
TEST(TransposeCpu, BulkCopyIsWaivedBelow90) {
    for (const common::Gpu& g : testing_gpu::preset_gpus()) {
        const std::string why = transpose::bulk_copy_refusal(g);
        EXPECT_EQ(why.empty(), g.has(90)) << g.profile << ": " << why;
        if (!g.has(90)) EXPECT_NE(why.find("needs sm_90"), std::string::npos) << g.profile << ": " << why;
        EXPECT_EQ(transpose::waived_sector_aligned(g), "") << g.profile;
    }
    for (const char* older : {"t4", "a100", "rtx3090", "rtx4090"})
        EXPECT_FALSE(transpose::bulk_copy_refusal(common::gpu_of(testing_gpu::preset_named(older))).empty()) << older;
    for (const char* hopper_on : {"rtx5090", "h100"})
        EXPECT_EQ(transpose::bulk_copy_refusal(common::gpu_of(testing_gpu::preset_named(hopper_on))), "") << hopper_on;
    common::Gpu tiny = common::gpu_of(testing_gpu::preset_named("h100"));
    tiny.smem_per_block = 16 * 1024;  // an explicit profile's 16 KiB block
    EXPECT_NE(transpose::bulk_copy_refusal(tiny).find("shared memory"), std::string::npos);
    EXPECT_NE(transpose::waived_sector_aligned(tiny).find("shared memory"), std::string::npos);
}

// transposeSectorAligned's plan: 256 threads a tile while the grid is at most
// 5/4 of what the GPU holds at once, 512 beyond. No CUDA call.
TEST(TransposeCpu, SectorAlignedPlanTakes256ThreadsForSmallGrids) {
    using transpose::sector_aligned_threads;
    const int64_t h100 = 132 * 8;  // 132 SMs, eight 256-thread tiles an SM
    auto tiles = [](int rows, int cols) {
        const dim3 g = transpose::sector_aligned_grid(rows, cols, transpose::kAlignedTile, transpose::kAlignedHalo);
        return int64_t(g.x) * g.y;
    };
    EXPECT_EQ(tiles(2048, 2048), 1024);
    EXPECT_EQ(tiles(2049, 2051), 33 * 33);  // one more tile row: the windows start up to 7 rows early
    EXPECT_EQ(sector_aligned_threads(tiles(2048, 2048), h100), 256);
    EXPECT_EQ(sector_aligned_threads(tiles(2049, 2051), h100), 256);
    EXPECT_EQ(sector_aligned_threads(tiles(2300, 2301), h100), 512);  // 1332 tiles: 1.26 waves, just past
    EXPECT_EQ(sector_aligned_threads(tiles(2500, 2499), h100), 512);  // 1600 tiles: 1.52 waves
    EXPECT_EQ(sector_aligned_threads(tiles(8192, 8192), h100), 512);
    EXPECT_EQ(sector_aligned_threads(5 * h100 / 4, h100), 256);
    EXPECT_EQ(sector_aligned_threads(5 * h100 / 4 + 1, h100), 512);
    EXPECT_EQ(sector_aligned_threads(1, 1), 256);
    EXPECT_EQ(sector_aligned_threads(tiles(2048, 2048), 40 * 3), 512);  // a T4: 40 SMs, three 20 KiB tiles an SM
}

// transposeSectorAligned's split of L1 and shared memory: with 256 threads,
// where rows start inside 128-byte lines (cols % 32 != 0), shared memory for
// 3/4 of the tiles an SM holds (six of eight on Hopper: a carveout of 54%,
// which the driver rounds up to 132 of 228 KiB).
TEST(TransposeCpu, SectorAlignedAsksMoreL1WhereRowsStartInsideLines) {
    const common::Gpu h100 = common::gpu_of(testing_gpu::preset_named("h100"));
    EXPECT_EQ(transpose::sector_aligned_l1_tiles(h100), 6);
    EXPECT_EQ(transpose::carveout_percent(6, transpose::kAlignedSmem, h100), 54);
    EXPECT_TRUE(transpose::sector_aligned_more_l1(2051, h100));
    EXPECT_TRUE(transpose::sector_aligned_more_l1(2046, h100));
    EXPECT_TRUE(transpose::sector_aligned_more_l1(2052, h100));  // cols % 4 == 0, but rows still start inside lines
    EXPECT_FALSE(transpose::sector_aligned_more_l1(2048, h100));
    EXPECT_FALSE(transpose::sector_aligned_more_l1(2080, h100));
    for (const common::Gpu& g : testing_gpu::preset_gpus()) {
        const int tiles = transpose::sector_aligned_l1_tiles(g);
        EXPECT_GE(tiles, 1) << g.profile;  // never a split without room for one tile
        EXPECT_LE(transpose::carveout_percent(tiles, transpose::kAlignedSmem, g), 100) << g.profile;
        EXPECT_GE(size_t(transpose::carveout_percent(tiles, transpose::kAlignedSmem, g)) * g.smem_per_sm,
                  100 * size_t(tiles) * (transpose::kAlignedSmem + common::reserved_smem_per_block(g)))
            << g.profile;
    }
}

// transposeSectorAligned's pairs: tile columns in clusters of 2 where a row's
// 17th float4 shares sectors with the next tile (cols % 4 != 0) and the GPU
// has clusters (9.0 and newer). No CUDA call.
TEST(TransposeCpu, SectorAlignedPairsTileColumnsWhereColumnsAreMisaligned) {
    for (const common::Gpu& g : testing_gpu::preset_gpus()) {
        EXPECT_EQ(transpose::sector_aligned_pairs(8193, g), g.max_cluster >= 2) << g.profile;
        EXPECT_EQ(transpose::sector_aligned_pairs(4099, g), g.max_cluster >= 2) << g.profile;
        EXPECT_FALSE(transpose::sector_aligned_pairs(8192, g)) << g.profile;
        EXPECT_FALSE(transpose::sector_aligned_pairs(2044, g)) << g.profile;
    }
    EXPECT_TRUE(transpose::sector_aligned_pairs(8191, common::gpu_of(testing_gpu::preset_named("h100"))));
    EXPECT_FALSE(transpose::sector_aligned_pairs(8191, common::gpu_of(testing_gpu::preset_named("t4"))));
}

// transposeTensorMap's limits, for every preset: tensor maps from 9.0 on, and
// its 20 KiB of boxes. No CUDA call.
TEST(TransposeCpu, TensorMapIsWaivedBelow90) {
    for (const common::Gpu& g : testing_gpu::preset_gpus()) {
        const std::string why = transpose::tensor_map_refusal(g);
        EXPECT_EQ(why.empty(), g.has(90)) << g.profile << ": " << why;
        if (!g.has(90)) EXPECT_NE(why.find("needs sm_90"), std::string::npos) << g.profile << ": " << why;
    }
    common::Gpu tiny = common::gpu_of(testing_gpu::preset_named("h100"));
    tiny.smem_per_block = 16 * 1024;  // an explicit profile's 16 KiB block
    EXPECT_NE(transpose::tensor_map_refusal(tiny).find("shared memory"), std::string::npos);
}

// What the float4 launchers check before launching (host logic: the made-up
// addresses below are never dereferenced).
TEST(TransposeCpu, Float4LaunchersCheckPointersAndRows) {
    using namespace transpose;
    const float* base = reinterpret_cast<const float*>(uintptr_t(1) << 20);  // 256-byte aligned, like cudaMalloc
    EXPECT_EQ(pointer_refusal(base, base + 1024), "");
    EXPECT_EQ(pointer_refusal(base + 4, base + 8), "");
    EXPECT_NE(pointer_refusal(base + 1, base), "");
    EXPECT_NE(pointer_refusal(base, base + 2), "");
    EXPECT_NE(pointer_refusal(base + 3, base + 3), "");
    EXPECT_EQ(vec4_refusal(base, base, 64, 1024), "");
    EXPECT_EQ(vec4_refusal(base, base, 4, 4), "");
    EXPECT_EQ(vec4_refusal(base, base, 63, 1024), "rows, cols % 4 != 0");  // out's rows: 63 floats
    EXPECT_EQ(vec4_refusal(base, base, 64, 1022), "rows, cols % 4 != 0");  // in's rows: 1022 floats
    EXPECT_EQ(vec4_refusal(base + 1, base, 64, 1024), "in or out not 16-byte aligned");
    EXPECT_EQ(vec4_refusal(base, base + 1, 63, 1023), "in or out not 16-byte aligned");
}

TEST(TransposeCpu, SwizzleIsAPermutationOfEachRow) {
    for (int r = 0; r < transpose::kVecTile; ++r) {
        std::vector<int> seen(transpose::kSlotsPerRow, 0);
        for (int q = 0; q < transpose::kSlotsPerRow; ++q) {
            const int slot = transpose::swizzled_slot(r, q) - r * transpose::kSlotsPerRow;
            ASSERT_GE(slot, 0);
            ASSERT_LT(slot, transpose::kSlotsPerRow);
            ++seen[slot];
        }
        for (int c : seen) EXPECT_EQ(c, 1) << "row " << r;
    }
}

// Bank conflicts as ncu counts them: the wavefronts a warp instruction needs
// (chapter 03's model, checked there against ncu on the H200) minus one a
// phase. Each instruction below is one warp's, its lanes' byte addresses in
// the shared tile.
int conflicts(const bank_conflicts::Addresses& a, int width, bank_conflicts::Op op) {
    return bank_conflicts::wavefronts(a, width, bank_conflicts::kFullMask, op) -
           bank_conflicts::ideal_wavefronts(a, width, bank_conflicts::kFullMask, op);
}

// transposeSwizzleVec4's swizzle: the load phase's 16-byte stores (a warp
// puts tile rows r and r + 1, lane l float4 slot l % 16) and the store phase's
// 4-byte gathers (lane 8j + t reads tile row 32h + 4t + k, column 4g + j) are
// conflict-free for every warp and every g, h, k.
TEST(TransposeCpu, SwizzleGivesConflictFreeBanks) {
    using namespace transpose;
    using bank_conflicts::Op;
    for (int r = 0; r < kVecTile; r += 2) {
        bank_conflicts::Addresses a{};
        for (int lane = 0; lane < 32; ++lane) a[lane] = 16 * swizzled_slot(r + lane / 16, lane % 16);
        EXPECT_EQ(conflicts(a, 16, Op::Store), 0) << "tile rows " << r << ", " << r + 1;
    }
    for (int g = 0; g < kSlotsPerRow; ++g)
        for (int h = 0; h < 2; ++h)
            for (int k = 0; k < 4; ++k) {
                bank_conflicts::Addresses a{};
                for (int lane = 0; lane < 32; ++lane) {
                    const int t = lane % 8, j = lane / 8, row = 32 * h + 4 * t + k;
                    a[lane] = 4 * (4 * swizzled_slot(row, g) + j);
                }
                EXPECT_EQ(conflicts(a, 4, Op::Load), 0) << "gather g=" << g << " h=" << h << " k=" << k;
            }
}

// transposeSectorAligned's stores into its tile: a warp puts two rows (lanes
// 0-15 an even tile row, 16-31 the next), the lane with float4 k of its row
// writing word 4k + aligned_store_float(k, q) of the row in its q-th store.
// Each thread writes its four words once, and each of the four instructions
// is conflict-free, for every even tile row and the one after it (the
// kernel's warps start on even rows).
TEST(TransposeCpu, SectorAlignedStoresGiveConflictFreeBanks) {
    using namespace transpose;
    for (int k = 0; k < 16; ++k) {
        std::vector<int> seen(4, 0);
        for (int q = 0; q < 4; ++q) ++seen[aligned_store_float(k, q)];
        for (int c : seen) EXPECT_EQ(c, 1) << "k " << k;
    }
    for (int row = 0; row + 1 < kAlignedRows; row += 2)
        for (int q = 0; q < 4; ++q) {
            bank_conflicts::Addresses a{};
            for (int lane = 0; lane < 32; ++lane) {
                const int k = lane % 16, r = row + lane / 16;
                a[lane] = 4 * (r * kAlignedStride + 4 * k + aligned_store_float(k, q));
            }
            EXPECT_EQ(conflicts(a, 4, bank_conflicts::Op::Store), 0)
                << "rows " << row << ", " << row + 1 << ", store " << q;
        }
}

}  // namespace
