// 03_bank_conflicts: the bank model against the seeds' tables and a brute-force
// simulation (CPU, always run), and every kernel's output against the CPU (GPU),
// also at the largest tile count the program admits (kMaxTiles).
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include "03_bank_conflicts/bank_conflicts.cuh"
#include "common/buffer.cuh"
#include "common/data.hpp"
#include "common/kernel_list.hpp"
#include "common/verify.hpp"
#include "tests/gpu_test.hpp"

namespace {

using namespace bank_conflicts;

// ---- the model: the seeds' tables ------------------------------------------

Tally one_block(const char* name) {
    const TileKernel* k = common::find_kernel(tile_kernels(), name);
    EXPECT_NE(k, nullptr) << name;
    return k ? tally(k->trace()) : Tally{};
}

// Seed 000's ncu table for one 32x32 block: load / store transactions.
TEST(BankModel, SeedSquareTable) {
    const struct { const char* name; uint64_t ld, st; } want[] = {
        {"writeRowReadRow", 32, 32},        {"writeColReadCol", 1024, 1024},   {"writeColReadRow", 32, 1024},
        {"writeRowReadCol", 1024, 32},      {"writeRowReadColDynamic", 1024, 32}, {"writeRowReadColPadding", 32, 32},
        {"writeRowReadColDynPad", 32, 32}};
    for (const auto& w : want) {
        const Tally t = one_block(w.name);
        EXPECT_EQ(t.ld_wavefronts, w.ld) << w.name;
        EXPECT_EQ(t.st_wavefronts, w.st) << w.name;
        EXPECT_EQ(t.ld_requests, 32u) << w.name;
        EXPECT_EQ(t.st_requests, 32u) << w.name;
        EXPECT_EQ(t.ld_conflicts, w.ld - 32) << w.name;
        EXPECT_EQ(t.st_conflicts, w.st - 32) << w.name;
    }
}

// Seed 000's rectangular table (one 32x16 block), padding 2 as seed 003 says;
// padding 1 leaves a 2-way conflict.
TEST(BankModel, SeedRectangularTable) {
    const struct { const char* name; uint64_t ld, st; } want[] = {
        {"writeRowReadRowRect", 16, 16},         {"writeColReadColRect", 256, 256},
        {"writeColReadRowRect", 16, 256},        {"writeRowReadColRect", 256, 16},
        {"writeRowReadColDynamicRect", 256, 16}, {"writeRowReadColPaddingRect", 16, 16},
        {"writeRowReadColDynPadRect", 16, 16},   {"writeRowReadColPad1Rect", 32, 16}};
    for (const auto& w : want) {
        const Tally t = one_block(w.name);
        EXPECT_EQ(t.ld_wavefronts, w.ld) << w.name;
        EXPECT_EQ(t.st_wavefronts, w.st) << w.name;
    }
}

TEST(BankModel, BeyondTheSeeds) {
    for (const char* n : {"writeRowReadColSwizzle", "writeRowReadColSwizzleRect", "writeRowReadBroadcast"}) {
        const Tally t = one_block(n);
        EXPECT_EQ(t.ld_conflicts + t.st_conflicts, 0u) << n;
        EXPECT_EQ(t.ld_wavefronts, t.ld_requests) << n;
    }
    // Wide: 2 (8-byte) or 4 (16-byte) wavefronts per conflict-free request; unpadded columns 32.
    EXPECT_EQ(one_block("writeRowReadColDouble").ld_per_request(), 32.0);
    EXPECT_EQ(one_block("writeRowReadColDoublePad").ld_per_request(), 2.0);
    EXPECT_EQ(one_block("writeRowReadColDoublePad").st_per_request(), 2.0);
    EXPECT_EQ(one_block("writeRowReadColVec4").ld_per_request(), 32.0);
    EXPECT_EQ(one_block("writeRowReadColVec4Pad").ld_per_request(), 4.0);
    EXPECT_EQ(one_block("writeRowReadColVec4Pad").st_per_request(), 4.0);
    const Tally big = one_block("reverseBlockOptIn");
    EXPECT_EQ(big.ld_requests, 32u * 24u);
    EXPECT_EQ(big.ld_wavefronts, big.ld_requests);
}

TEST(BankModel, StrideGivesGcdWayConflicts) {
    for (int s = 1; s <= 65; ++s) {
        Addresses a{};
        for (int l = 0; l < 32; ++l) a[l] = 4u * uint32_t(l * s);
        EXPECT_EQ(wavefronts(a, 4), std::gcd(s, 32)) << "stride " << s;
        EXPECT_EQ(wavefronts(a, 4), conflict_degree(s));
    }
}

TEST(BankModel, BroadcastAndWideBasics) {
    Addresses same{}, consecutive{};
    for (int l = 0; l < 32; ++l) { same[l] = 64; consecutive[l] = 0; }
    EXPECT_EQ(wavefronts(same, 4), 1);
    for (int w : {4, 8, 16}) {
        for (int l = 0; l < 32; ++l) consecutive[l] = uint32_t(l * w);
        EXPECT_EQ(wavefronts(consecutive, w), w / 4) << w;
        EXPECT_EQ(ideal_wavefronts(consecutive, w), w / 4);
    }
    // Only the active lanes count; a phase without active lanes costs nothing.
    Addresses col{};
    for (int l = 0; l < 32; ++l) col[l] = 128u * l;  // all on bank 0
    EXPECT_EQ(wavefronts(col, 4, 0x0000000fu), 4);
    EXPECT_EQ(wavefronts(col, 4, 0u), 0);
    for (int l = 0; l < 32; ++l) consecutive[l] = uint32_t(l * 16);
    EXPECT_EQ(wavefronts(consecutive, 16, 0x000000ffu), 1);  // one quarter-warp
    EXPECT_EQ(ideal_wavefronts(consecutive, 16, 0x01010101u, Op::Store), 4);  // one lane in each quarter-warp
    // A load with no two active partners counts as paired (inactive lanes do not
    // break a pair): two half-warp phases. `make profile` probes this (family 15).
    EXPECT_EQ(ideal_wavefronts(consecutive, 16, 0x01010101u, Op::Load), 2);
    EXPECT_EQ(ideal_wavefronts(consecutive, 8, 0x0000ffffu), 1);
    EXPECT_THROW(wavefronts(col, 12), std::invalid_argument);
    Addresses odd = consecutive;
    odd[3] = 4;
    EXPECT_THROW(wavefronts(odd, 8), std::invalid_argument);  // misaligned 8-byte access
}

// Wide loads whose lanes pair up (n and n^1, or n and n^2, same address) are
// served twice as many lanes per phase; stores are not. Found on the H200 by
// the random probes of `make profile` (ncu: an 8-byte broadcast load is 1
// wavefront, a 16-byte one 2; the same stores 2 and 4).
TEST(BankModel, PairedWideLoadsMerge) {
    Addresses same{};
    for (int l = 0; l < 32; ++l) same[l] = 256;
    EXPECT_EQ(wavefronts(same, 8, kFullMask, Op::Load), 1);
    EXPECT_EQ(wavefronts(same, 16, kFullMask, Op::Load), 2);
    EXPECT_EQ(wavefronts(same, 8, kFullMask, Op::Store), 2);
    EXPECT_EQ(wavefronts(same, 16, kFullMask, Op::Store), 4);
    EXPECT_EQ(ideal_wavefronts(same, 16, kFullMask, Op::Load), 2);
    Addresses pairs{}, quads4{};
    for (int l = 0; l < 32; ++l) {
        pairs[l] = 16u * uint32_t(l / 2);              // n and n^1 share: 16 addresses, 256 bytes
        quads4[l] = 16u * uint32_t((l & ~4) % 16);     // n and n^4 share: no merge
    }
    EXPECT_EQ(wavefronts(pairs, 16), 2);               // two half-warp phases, no conflict
    EXPECT_EQ(wavefronts(pairs, 16, kFullMask, Op::Store), 4);
    EXPECT_FALSE(lanes_paired(quads4.data(), kFullMask, 1));
    EXPECT_FALSE(lanes_paired(quads4.data(), kFullMask, 2));
    EXPECT_EQ(ideal_wavefronts(quads4, 16), 4);
    // 4-byte accesses have one phase either way.
    EXPECT_EQ(wavefronts(same, 4), 1);
}

// Seed 004: int cache[1024]; cache[0] and cache[65] are in banks 0 and 1 with
// 4-byte banks, both in bank 0 with 8-byte banks (65 / 2 = 32 -> bank 0).
TEST(BankModel, Seed004EightByteMode) {
    Addresses a{};
    a[0] = 0;
    a[1] = 65 * 4;
    EXPECT_EQ(wavefronts(a, 4, 0x3u), 1);
    EXPECT_EQ(wavefronts_8byte_banks(a, 4, 0x3u), 2);
    // Neighbouring ints share an 8-byte word: no conflict in 8-byte mode either.
    a[1] = 4;
    EXPECT_EQ(wavefronts_8byte_banks(a, 4, 0x3u), 1);
    // 32 consecutive doubles: one pass of 8-byte banks, two wavefronts of 4-byte banks.
    for (int l = 0; l < 32; ++l) a[l] = 8u * l;
    EXPECT_EQ(wavefronts_8byte_banks(a, 8), 1);
    EXPECT_EQ(wavefronts(a, 8), 2);
    // The square tile's one-word padding, conflict-free today, is not in 8-byte
    // mode: on odd rows lanes 0 and 31 meet in one bank (2-way), even rows are
    // fine: 16 x 2 + 16 x 1 = 48 wavefronts. Padding is tied to the bank width.
    EXPECT_EQ(one_block("writeRowReadColPadding").ld_wavefronts, 32u);
    EXPECT_EQ(one_block("writeRowReadColPadding").ld_8byte_mode, 48u);
}

// Brute force: serve the requests round by round, each round giving every
// bank one of its pending words (and every lane that wants that word). It
// checks the model's counting within a phase, not how lanes are cut into
// phases: the paired-lane rule (twice the lanes a phase for wide loads whose
// lanes pair up) is the model's own, copied; only `make profile` on a GPU
// checks that rule (ncu's wavefronts against the model's, README).
int brute_force(const Addresses& addr, int width, uint32_t mask, bool store) {
    int n = 128 / width;
    if (!store && width > 4)
        for (int x : {1, 2}) {
            bool all = true;
            for (int l = 0; l < 32; ++l)
                if ((mask >> l & 1u) && (mask >> (l ^ x) & 1u)) all = all && addr[l] == addr[l ^ x];
            if (all) { n = 256 / width; break; }
        }
    int rounds = 0;
    for (int first = 0; first < 32; first += n) {
        std::vector<uint32_t> pending;
        for (int l = first; l < first + n; ++l)
            if (mask >> l & 1u)
                for (int k = 0; k < width / 4; ++k) pending.push_back(addr[l] / 4 + k);
        while (!pending.empty()) {
            std::vector<bool> bank_busy(32, false);
            std::vector<uint32_t> served;
            for (uint32_t w : pending)
                if (!bank_busy[w % 32]) { bank_busy[w % 32] = true; served.push_back(w); }
            std::vector<uint32_t> rest;
            for (uint32_t w : pending)
                if (std::find(served.begin(), served.end(), w) == served.end()) rest.push_back(w);
            pending.swap(rest);
            ++rounds;
        }
    }
    return rounds;
}

TEST(BankModel, MatchesBruteForceOnRandomPatterns) {
    common::SplitMix64 g(2024);
    int checked = 0;
    for (int width : {4, 8, 16})
        for (int range : {128, 256, 1024, 4096, 65536})
            for (int rep = 0; rep < 300; ++rep) {
                Addresses a{};
                const uint32_t slots = uint32_t(range / width);
                for (int l = 0; l < 32; ++l) a[l] = uint32_t(g.next() % slots) * width;
                if (rep % 5 == 1) for (int l = 0; l < 32; ++l) a[l] = a[l & ~1];  // pairs: n, n^1
                if (rep % 5 == 2) for (int l = 0; l < 32; ++l) a[l] = a[l & ~2];  // pairs: n, n^2
                const uint32_t mask = rep % 3 == 0 ? kFullMask : uint32_t(g.next());
                for (bool store : {false, true}) {
                    ASSERT_EQ(wavefronts(a, width, mask, store ? Op::Store : Op::Load), brute_force(a, width, mask, store))
                        << "width " << width << " range " << range << " rep " << rep << " store " << store;
                    ++checked;
                }
            }
    EXPECT_EQ(checked, 3 * 5 * 300 * 2);
}

TEST(BankModel, SwizzleKeysPermuteEveryRow) {
    for (int by : {32, 16})
        for (int r = 0; r < by; ++r) {
            std::vector<int> seen(32, 0);
            for (int c = 0; c < 32; ++c) ++seen[c ^ (by == 32 ? swizzle_key<32, 32>(r) : swizzle_key<32, 16>(r))];
            for (int s : seen) EXPECT_EQ(s, 1) << "rows " << by << " row " << r;
        }
}

TEST(BankModel, SweepTallies) {
    const Tally t = tally_throughput(32, 10, 2);
    EXPECT_EQ(t.ld_requests, 2u * 32 * 10);
    EXPECT_EQ(t.ld_wavefronts, 2u * 32 * 10 * 32);
    EXPECT_EQ(t.st_requests, 2u * 64);
    EXPECT_EQ(t.st_wavefronts, 2u * 64);
    const Tally l = tally_latency(6, 100);
    EXPECT_EQ(l.ld_wavefronts, 200u);  // gcd(6, 32) = 2 on every hop
    EXPECT_EQ(l.st_requests, 64u);
}

// ---- CPU references ------------------------------------------------------

TEST(TileReference, PermutationsOnASmallTile) {
    EXPECT_EQ(perm_source(Perm::RowCol, 1, 32, 16, 512), 32u);   // out[0][1] = in[1][0]
    EXPECT_EQ(perm_source(Perm::RowCol, 16, 32, 16, 512), 1u);   // out[1][0] = in[0][1]
    EXPECT_EQ(perm_source(Perm::ColRow, 1, 32, 16, 512), 16u);
    EXPECT_EQ(perm_source(Perm::RowFirst, 37, 32, 32, 1024), 32u);
    EXPECT_EQ(perm_source(Perm::Reverse, 0, 1, 1, 10), 9u);
    for (const TileKernel& k : tile_kernels()) {  // every expected output is a permutation of its tile
        std::vector<int> seen(size_t(k.tile_elems), 0);
        for (int e = 0; e < k.tile_elems; ++e) ++seen[perm_source(k.perm, e, k.bx, k.by, k.tile_elems)];
        if (k.perm == Perm::RowFirst) continue;
        for (int s : seen) ASSERT_EQ(s, 1) << k.name;
    }
}

// ---- GPU: every tile kernel, many tile counts ------------------------------

const std::vector<int> kTiles = {1, 2, 7, 31, 32, 33, 131, 1000, 4099};

// A launcher's "" (it refused: nothing ran) is a test failure, and the poisoned output is not
// compared: every word counts as wrong.
common::Comparison refused(const TileKernel& k, size_t words) {
    ADD_FAILURE() << k.name << ": the launcher refused (nothing launched)";
    common::Comparison c;
    c.n = c.mismatches = words;
    return c;
}

common::Comparison run_tile(const TileKernel& k, int tiles, uint64_t seed) {
    const size_t words = k.bytes(tiles) / 4;
    std::vector<uint32_t> in(words), ref(words), got;
    common::fill_uniform<uint32_t>(in.data(), words, seed, 0u, 0x7fffffffu);
    expected_output(k, in.data(), ref.data(), k.blocks(tiles));
    common::DeviceBuffer<uint32_t> d_in(words), d_out(words);
    d_in.upload(in);
    d_out.poison();
    if (k.launch(d_in.get(), d_out.get(), k.blocks(tiles)).empty()) return refused(k, words);
    CHECK(cudaDeviceSynchronize());
    d_out.download(got);
    return common::compare(got.data(), ref.data(), words);
}

// Parameterised by the kernel's name, not its place in the list.
class TileKernelTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(TileKernelTest, MatchesCpu) {
    SKIP_WITHOUT_GPU();
    const TileKernel& k = common::kernel_named(tile_kernels(), std::get<0>(GetParam()));
    const int tiles = std::get<1>(GetParam());
    SKIP_IF_WAIVED(waiver(k));
    const uint64_t salt = uint64_t(&k - tile_kernels().data());  // a different input for each kernel
    const common::Comparison c = run_tile(k, tiles, 7919ull * tiles + salt);
    EXPECT_TRUE(c.pass()) << k.name << " at " << tiles << " tiles: " << c.mismatches << " of " << c.n
                          << " words wrong, first at " << c.first_bad;
}

INSTANTIATE_TEST_SUITE_P(AllKernels, TileKernelTest,
                         ::testing::Combine(::testing::ValuesIn(common::kernel_names(tile_kernels())),
                                            ::testing::ValuesIn(kTiles)),
                         [](const ::testing::TestParamInfo<TileKernelTest::ParamType>& p) {
                             return std::get<0>(p.param) + "_" + std::to_string(std::get<1>(p.param)) + "tiles";
                         });

// ---- a deliberately wrong kernel must be caught ----------------------------
// writeRowReadCol with one index broken: the load reads the next column
// (irow + 1), an off-by-one that keeps every access in bounds and even keeps
// the bank pattern, so only the output check can see it.
template <int BX, int BY>
__global__ void writeRowReadColOffByOne(const int* in, int* out) {
    __shared__ int tile[BY][BX];
    const int idx = threadIdx.y * BX + threadIdx.x, irow = idx / BY, icol = idx % BY;
    const size_t base = size_t(blockIdx.x) * BX * BY;
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][(irow + 1) % BX];
}

// ---- GPU: the largest size the program admits -----------------------------
// --tiles is capped at kMaxTiles = 2^17: the int4 kernels then move 2^27
// elements (2 GiB) each way. Every global index is size_t (tile_base), so no
// 32-bit product is formed; this runs every tile kernel there, and the
// broken kernel below, which must still be caught. One input of the largest
// kernel's size is filled once and reused. Skipped, saying so, where the
// device or the host has too little memory.
TEST(TileKernelLargest, EveryKernelAtMaxTiles) {
    SKIP_WITHOUT_GPU();
    const int tiles = int(kMaxTiles);
    size_t words = 0;
    for (const TileKernel& k : tile_kernels()) words = std::max(words, k.bytes(tiles) / 4);
    SKIP_UNLESS_MEMORY(std::to_string(kMaxTiles) + " tiles", 2.0 * words * 4 + (256 << 20), 3.0 * words * 4);
    std::vector<uint32_t> in(words), ref(words), got;
    common::fill_uniform<uint32_t>(in.data(), words, 2026, 0u, 0x7fffffffu);
    common::DeviceBuffer<uint32_t> d_in(words), d_out(words);
    d_in.upload(in);
    auto check = [&](const TileKernel& k) {
        const size_t w = k.bytes(tiles) / 4;
        expected_output(k, in.data(), ref.data(), k.blocks(tiles));
        d_out.poison();
        if (k.launch(d_in.get(), d_out.get(), k.blocks(tiles)).empty()) return refused(k, w);
        CHECK(cudaDeviceSynchronize());
        d_out.download(got);
        return common::compare(got.data(), ref.data(), w);
    };
    for (const TileKernel& k : tile_kernels()) {
        if (!testing_gpu::runs_here(k.name, waiver(k))) continue;  // its own test says why (OptIn)
        const common::Comparison c = check(k);
        EXPECT_TRUE(c.pass()) << k.name << " at " << tiles << " tiles: " << c.mismatches << " of " << c.n
                              << " words wrong, first at " << c.first_bad;
    }
    TileKernel bad = common::kernel_named(tile_kernels(), "writeRowReadColRect");
    bad.launch = launch_tile<BDIMX, BDIMY_RECT, writeRowReadColOffByOne<BDIMX, BDIMY_RECT>>;
    const common::Comparison c = check(bad);
    EXPECT_FALSE(c.pass()) << "the off-by-one index went unnoticed at " << tiles << " tiles";
    std::printf("[ broken ] writeRowReadColOffByOne at %d tiles (largest admitted): %zu of %zu words wrong (%s)\n",
                tiles, c.mismatches, c.n, c.pass() ? "MISSED" : "caught");
}

// ---- GPU: the sweep kernels ------------------------------------------------

TEST(StrideSweep, ThroughputAndLatencyKernelsReadWhatTheyShould) {
    SKIP_WITHOUT_GPU();
    for (int stride : {1, 2, 3, 16, 31, 32, 65})
        for (int iters : {1, 15, 16, 17, 1000}) {
            common::DeviceBuffer<uint32_t> sink(2 * kSweepThreads);
            common::DeviceBuffer<long long> cycles(2);
            sink.poison();
            cycles.poison();  // -1: each kernel must write its own cycle counts
            readStrideThroughput<<<2, kSweepThreads>>>(stride, iters, sink.get(), cycles.get());
            CHECK_LAUNCH();
            std::vector<uint32_t> got;
            sink.download(got);
            for (size_t i = 0; i < got.size(); ++i)
                ASSERT_EQ(got[i], expected_throughput_sum(int(i % 32), stride, iters)) << stride << " " << iters << " " << i;
            std::vector<long long> c;
            cycles.download(c);
            EXPECT_GT(c[0], 0) << stride << " " << iters << ": block 0's cycles";
            EXPECT_GT(c[1], 0) << stride << " " << iters << ": block 1's cycles";
            sink.poison();
            cycles.poison();
            readStrideLatency<<<1, 32>>>(stride, iters, sink.get(), cycles.get());
            CHECK_LAUNCH();
            sink.download(got);
            for (int l = 0; l < 32; ++l)
                ASSERT_EQ(got[l], expected_latency_end(l, stride, iters)) << stride << " " << iters << " lane " << l;
            cycles.download(c);
            EXPECT_GT(c[0], 0) << stride << " " << iters << ": the latency kernel's cycles";
        }
}

// ---- GPU: the >48 KB opt-in ------------------------------------------------

// A kernel of the test's own, which nothing has opted in: its attribute is
// the default here whatever ran before (common::request_dynamic_smem remembers
// what it gave the chapter's kernel and does not ask again).
__global__ void reverseWithoutOptIn(const int* in, int* out) {
    extern __shared__ int big[];
    for (int i = threadIdx.x; i < kOptInElems; i += blockDim.x) big[i] = in[i];
    __syncthreads();
    for (int i = threadIdx.x; i < kOptInElems; i += blockDim.x) out[i] = big[kOptInElems - 1 - i];
}

TEST(OptIn, MoreThan48KBNeedsTheAttribute) {
    SKIP_WITHOUT_GPU();
    SKIP_IF_WAIVED(common::smem_refusal(kOptInBytes));
    common::DeviceBuffer<int> in(kOptInElems), out(kOptInElems);
    reverseWithoutOptIn<<<1, kOptInThreads, kOptInBytes>>>(in.get(), out.get());
    EXPECT_NE(cudaGetLastError(), cudaSuccess) << "a 96 KB launch without opt-in should be refused";
    ASSERT_EQ(common::request_dynamic_smem(reverseWithoutOptIn, kOptInBytes), "");
    reverseWithoutOptIn<<<1, kOptInThreads, kOptInBytes>>>(in.get(), out.get());
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "after request_dynamic_smem it launches";
    CHECK(cudaDeviceSynchronize());
    const TileKernel* k = common::find_kernel(tile_kernels(), "reverseBlockOptIn");
    ASSERT_NE(k, nullptr);
    EXPECT_TRUE(run_tile(*k, 48, 5).pass());  // the launcher opts in
}

// The kernel an entry's launcher runs and the dynamic bytes it passes, found
// by the launcher itself (the template arguments of its instance); nullptr
// for a launcher not listed here.
struct Launcher {
    LaunchFn launch;
    testing_gpu::KernelLaunch kernel;
};
template <int BY, void (*K)(const int*, int*), size_t kDynBytes = 0>
Launcher tile_launcher() {
    return {launch_tile<BDIMX, BY, K, kDynBytes>, testing_gpu::kernel_launch(K, kDynBytes)};
}
template <class T, int PAD>
Launcher wide_launcher() {
    return {launch_wide<T, PAD>, testing_gpu::kernel_launch(writeRowReadColWide<T, PAD>)};
}
const testing_gpu::KernelLaunch* launched_by(const TileKernel& k) {
    static const std::vector<Launcher> all = {
        tile_launcher<SQ, writeRowReadRow<BDIMX, SQ>>(),
        tile_launcher<SQ, writeColReadCol<BDIMX, SQ>>(),
        tile_launcher<SQ, writeColReadRow<BDIMX, SQ>>(),
        tile_launcher<SQ, writeRowReadCol<BDIMX, SQ>>(),
        tile_launcher<SQ, writeRowReadColDynamic<BDIMX, SQ>, dyn_bytes(SQ, 0)>(),
        tile_launcher<SQ, writeRowReadColPadding<BDIMX, SQ, 1>>(),
        tile_launcher<SQ, writeRowReadColDynPad<BDIMX, SQ, 1>, dyn_bytes(SQ, 1)>(),
        tile_launcher<RE, writeRowReadRow<BDIMX, RE>>(),
        tile_launcher<RE, writeColReadCol<BDIMX, RE>>(),
        tile_launcher<RE, writeColReadRow<BDIMX, RE>>(),
        tile_launcher<RE, writeRowReadCol<BDIMX, RE>>(),
        tile_launcher<RE, writeRowReadColDynamic<BDIMX, RE>, dyn_bytes(RE, 0)>(),
        tile_launcher<RE, writeRowReadColPadding<BDIMX, RE, 1>>(),
        tile_launcher<RE, writeRowReadColPadding<BDIMX, RE, 2>>(),
        tile_launcher<RE, writeRowReadColDynPad<BDIMX, RE, 2>, dyn_bytes(RE, 2)>(),
        tile_launcher<SQ, writeRowReadColSwizzle<BDIMX, SQ>>(),
        tile_launcher<RE, writeRowReadColSwizzle<BDIMX, RE>>(),
        tile_launcher<SQ, writeRowReadBroadcast<BDIMX, SQ>>(),
        wide_launcher<double, 0>(),
        wide_launcher<double, 1>(),
        wide_launcher<int4, 0>(),
        wide_launcher<int4, 1>(),
        {launch_opt_in, testing_gpu::kernel_launch(reverseBlockOptIn, kOptInBytes)},
    };
    for (const Launcher& l : all)
        if (l.launch == k.launch) return &l.kernel;
    return nullptr;
}

// No GPU needed: every entry's launcher is one launched_by knows.
TEST(OptIn, EveryLauncherIsListed) {
    for (const TileKernel& k : tile_kernels()) EXPECT_NE(launched_by(k), nullptr) << k.name;
}

// Under every preset, each kernel is waived exactly where its block's shared
// memory (static, as compiled, plus the dynamic bytes its launcher passes)
// is more than the preset allows (the 96 KB kernel on the T4). The static
// size is the compiled code's: a GPU test.
TEST(OptIn, EveryPresetRunsWhatFitsAndWaivesTheRest) {
    SKIP_WITHOUT_GPU();
    for (const TileKernel& k : tile_kernels()) {
        const testing_gpu::KernelLaunch* l = launched_by(k);
        ASSERT_NE(l, nullptr) << k.name << ": add its launcher to launched_by";
        for (const common::Gpu& g : testing_gpu::preset_gpus()) {
            const std::string over = testing_gpu::launch_refusal(*l, g);
            EXPECT_EQ(waiver(k, g).empty(), over.empty()) << g.profile << " " << k.name << ": " << over;
        }
    }
}

// The presets' figures against the 96 KB kernel's: waived on the T4 (64 KB a
// block), not on the 99 KB GPUs. No GPU needed.
TEST(OptIn, OnlyTheT4WaivesThe96KBKernel) {
    const TileKernel& opt_in = common::kernel_named(tile_kernels(), "reverseBlockOptIn");
    for (const common::GpuPreset& p : common::kGpuPresets)
        EXPECT_EQ(waiver(opt_in, common::gpu_of(p)).empty(), std::string(p.name) != "t4") << p.name;
}

TEST(Pitfall, AWrongIndexIsCaught) {
    SKIP_WITHOUT_GPU();
    TileKernel bad = common::kernel_named(tile_kernels(), "writeRowReadColRect");
    bad.launch = launch_tile<BDIMX, BDIMY_RECT, writeRowReadColOffByOne<BDIMX, BDIMY_RECT>>;
    for (int tiles : {1, 33}) {
        const common::Comparison c = run_tile(bad, tiles, 3);
        EXPECT_FALSE(c.pass()) << "the off-by-one index went unnoticed at " << tiles << " tiles";
    }
    EXPECT_TRUE(run_tile(common::kernel_named(tile_kernels(), "writeRowReadColRect"), 33, 3).pass());
}

}  // namespace
