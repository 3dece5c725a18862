// bank_conflicts.cuh - shared-memory bank conflicts: the seeds' square and
// rectangular tiles, padding, an XOR swizzle, 8- and 16-byte accesses, a
// broadcast, and a stride sweep that measures what each extra wavefront costs.
//
// Every kernel (kernels.cuh) comes with its trace (traces.cuh): the
// shared-memory instructions one block executes, with each lane's byte
// address. bank_model.cuh turns a trace into predicted requests, wavefronts
// and bank conflicts, and `make profile` checks the prediction against the
// GPU's own counters (Nsight Compute), kernel by kernel.
//
// This file: the launchers, the kernel list (the chapter's steps are its
// rows: each tile kernel differs from the next by one index expression), the
// expected output of each kernel, and the command line's limits.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "03_bank_conflicts/bank_model.cuh"
#include "03_bank_conflicts/kernels.cuh"
#include "03_bank_conflicts/traces.cuh"
#include "common/check.cuh"
#include "common/kernel_list.hpp"
#include "common/launch.cuh"

namespace bank_conflicts {

// "<<<grid,block,dynamic bytes>>>", as written at the launch (the results
// table's launch column: the dynamic shared memory is part of the lesson).
inline std::string launch_brackets(dim3 g, dim3 b, size_t dyn = 0) {
    char blk[32], s[96];
    if (b.y == 1) std::snprintf(blk, sizeof blk, "%u", b.x);
    else std::snprintf(blk, sizeof blk, "(%u,%u)", b.x, b.y);
    if (dyn) std::snprintf(s, sizeof s, "<<<%u,%s,%zu>>>", g.x, blk, dyn);
    else std::snprintf(s, sizeof s, "<<<%u,%s>>>", g.x, blk);
    return s;
}

// What `out` must hold: out element e of a tile is in element src(e).
enum class Perm { Identity, RowCol, ColRow, RowFirst, Reverse };

inline size_t perm_source(Perm p, size_t e, int bx, int by, size_t n) {
    switch (p) {
        case Perm::Identity: return e;
        case Perm::RowCol: return (e % by) * bx + e / by;   // out viewed as bx x by = in (by x bx) transposed
        case Perm::ColRow: return (e % bx) * by + e / bx;   // out (by x bx) = in viewed as bx x by, transposed
        case Perm::RowFirst: return (e / bx) * bx;          // every element of a row = the row's first
        case Perm::Reverse: return n - 1 - e;
    }
    return e;
}

using LaunchFn = std::string (*)(const void* in, void* out, int blocks);

struct TileKernel {
    const char* name;       // as printed and as --kernel takes it
    const char* peer;       // its conflict-free counterpart ("% of peer")
    int bx, by;             // block (= tile) shape; bx*by threads
    int elem_bytes;         // 4, 8 or 16
    int tile_elems;         // elements one block moves
    int tiles_per_block;    // how many of the program's tiles one block stands for (1; the opt-in kernel: 24, in 32x32-int units)
    Perm perm;
    LaunchFn launch;
    std::vector<Request> (*trace)();
    const char* what;

    // Blocks for `tiles` tiles: the 96 KB kernel moves 24 tiles' worth per block.
    int blocks(int tiles) const { return common::ceil_div(tiles, tiles_per_block); }
    size_t elements(int tiles) const { return size_t(blocks(tiles)) * tile_elems; }
    size_t bytes(int tiles) const { return elements(tiles) * elem_bytes; }
};

template <int BX, int BY, void (*K)(const int*, int*), size_t kDynBytes = 0>
std::string launch_tile(const void* in, void* out, int blocks) {
    const dim3 grid(blocks), block(BX, BY);
    K<<<grid, block, kDynBytes>>>(static_cast<const int*>(in), static_cast<int*>(out));
    CHECK_LAUNCH();
    return launch_brackets(grid, block, kDynBytes);
}

template <class T, int PAD>
std::string launch_wide(const void* in, void* out, int blocks) {
    const dim3 grid(blocks), block(BDIMX, BDIMY);
    writeRowReadColWide<T, PAD><<<grid, block>>>(static_cast<const T*>(in), static_cast<T*>(out));
    CHECK_LAUNCH();
    return launch_brackets(grid, block);
}

// Opts in to 96 KB of dynamic shared memory, then launches. Where this GPU (or GPU_PROFILE)
// allows less, it launches nothing and returns "" (a launch description is never empty);
// waiver() says why, and the program and the tests ask it first.
inline std::string launch_opt_in(const void* in, void* out, int blocks) {
    if (!common::request_dynamic_smem(reverseBlockOptIn, kOptInBytes).empty()) return "";
    const dim3 grid(blocks), block(kOptInThreads);
    reverseBlockOptIn<<<grid, block, kOptInBytes>>>(static_cast<const int*>(in), static_cast<int*>(out));
    CHECK_LAUNCH();
    return launch_brackets(grid, block, kOptInBytes);
}

constexpr int SQ = BDIMY, RE = BDIMY_RECT;  // tile rows: square, rectangular
constexpr size_t dyn_bytes(int by, int pad) { return size_t(by) * (BDIMX + pad) * sizeof(int); }
// A row of the table below for a 4-byte tile kernel K of 32 x BY threads:
// the trace stores at ST and loads from LD in rows padded by PAD words;
// kDynamic: the tile is dynamic shared memory, asked for (padding included)
// at the launch.
template <int BY, int PAD, At ST, At LD, void (*K)(const int*, int*), bool kDynamic = false>
TileKernel tile_entry(const char* name, const char* peer, Perm perm, const char* what) {
    return {name, peer, BDIMX, BY, 4, BDIMX * BY, 1, perm, launch_tile<BDIMX, BY, K, kDynamic ? dyn_bytes(BY, PAD) : 0>,
            trace_tile<BDIMX, BY, PAD, 4, ST, LD>, what};
}

// The square writeRowReadCol with elements of type T (8 or 16 bytes), padded by PAD elements.
template <class T, int PAD>
TileKernel wide_entry(const char* name, const char* peer, const char* what) {
    constexpr int EB = int(sizeof(T));
    return {name, peer, BDIMX, SQ, EB, BDIMX * SQ, 1, Perm::RowCol, launch_wide<T, PAD>,
            trace_tile<BDIMX, SQ, PAD, EB, At::Row, At::Col>, what};
}

// Every tile kernel, in teaching order: the seeds' square set, their
// rectangular set ("Rect": the same code with 16 rows), then beyond the seeds.
inline const std::vector<TileKernel>& tile_kernels() {
    using A = At;
    static const std::vector<TileKernel> k = {
        tile_entry<SQ, 0, A::Row, A::Row, writeRowReadRow<BDIMX, SQ>>(
            "writeRowReadRow", "writeRowReadRow", Perm::Identity, "rows both ways: conflict-free"),
        tile_entry<SQ, 0, A::Col, A::Col, writeColReadCol<BDIMX, SQ>>(
            "writeColReadCol", "writeRowReadRow", Perm::Identity, "columns both ways: 32-way conflicts on both sides"),
        tile_entry<SQ, 0, A::Col, A::Row, writeColReadRow<BDIMX, SQ>>(
            "writeColReadRow", "writeRowReadRow", Perm::ColRow, "column store (32-way), row load"),
        tile_entry<SQ, 0, A::Row, A::Col, writeRowReadCol<BDIMX, SQ>>(
            "writeRowReadCol", "writeRowReadRow", Perm::RowCol, "row store, column load (32-way)"),
        tile_entry<SQ, 0, A::Row, A::Col, writeRowReadColDynamic<BDIMX, SQ>, true>(
            "writeRowReadColDynamic", "writeRowReadRow", Perm::RowCol, "the same in dynamic shared memory"),
        tile_entry<SQ, 1, A::Row, A::Col, writeRowReadColPadding<BDIMX, SQ, 1>>(
            "writeRowReadColPadding", "writeRowReadRow", Perm::RowCol, "rows padded by 1 word: conflict-free"),
        tile_entry<SQ, 1, A::Row, A::Col, writeRowReadColDynPad<BDIMX, SQ, 1>, true>(
            "writeRowReadColDynPad", "writeRowReadRow", Perm::RowCol, "padding in dynamic shared memory"),

        tile_entry<RE, 0, A::Row, A::Row, writeRowReadRow<BDIMX, RE>>(
            "writeRowReadRowRect", "writeRowReadRowRect", Perm::Identity, "32x16 tile, rows both ways"),
        tile_entry<RE, 0, A::Col, A::Col, writeColReadCol<BDIMX, RE>>(
            "writeColReadColRect", "writeRowReadRowRect", Perm::Identity, "columns both ways: 16-way"),
        tile_entry<RE, 0, A::Col, A::Row, writeColReadRow<BDIMX, RE>>(
            "writeColReadRowRect", "writeRowReadRowRect", Perm::ColRow, "column store (16-way), row load"),
        tile_entry<RE, 0, A::Row, A::Col, writeRowReadCol<BDIMX, RE>>(
            "writeRowReadColRect", "writeRowReadRowRect", Perm::RowCol, "row store, column load (16-way)"),
        tile_entry<RE, 0, A::Row, A::Col, writeRowReadColDynamic<BDIMX, RE>, true>(
            "writeRowReadColDynamicRect", "writeRowReadRowRect", Perm::RowCol, "the same in dynamic shared memory"),
        tile_entry<RE, 1, A::Row, A::Col, writeRowReadColPadding<BDIMX, RE, 1>>(
            "writeRowReadColPad1Rect", "writeRowReadRowRect", Perm::RowCol, "padded by 1 word: still 2-way"),
        tile_entry<RE, 2, A::Row, A::Col, writeRowReadColPadding<BDIMX, RE, 2>>(
            "writeRowReadColPaddingRect", "writeRowReadRowRect", Perm::RowCol, "padded by 2 words: conflict-free"),
        tile_entry<RE, 2, A::Row, A::Col, writeRowReadColDynPad<BDIMX, RE, 2>, true>(
            "writeRowReadColDynPadRect", "writeRowReadRowRect", Perm::RowCol, "dynamic, padded by 2 words"),

        tile_entry<SQ, 0, A::RowSwizzle, A::ColSwizzle, writeRowReadColSwizzle<BDIMX, SQ>>(
            "writeRowReadColSwizzle", "writeRowReadRow", Perm::RowCol, "XOR swizzle: conflict-free, no padding"),
        tile_entry<RE, 0, A::RowSwizzle, A::ColSwizzle, writeRowReadColSwizzle<BDIMX, RE>>(
            "writeRowReadColSwizzleRect", "writeRowReadRowRect", Perm::RowCol, "XOR swizzle for 32x16 (key 2r)"),
        tile_entry<SQ, 0, A::Row, A::RowFirst, writeRowReadBroadcast<BDIMX, SQ>>(
            "writeRowReadBroadcast", "writeRowReadRow", Perm::RowFirst, "all lanes read one word: a broadcast"),
        wide_entry<double, 0>("writeRowReadColDouble", "writeRowReadColDoublePad", "8-byte elements, column load"),
        wide_entry<double, 1>("writeRowReadColDoublePad", "writeRowReadColDoublePad", "8-byte, padded by one double"),
        wide_entry<int4, 0>("writeRowReadColVec4", "writeRowReadColVec4Pad", "16-byte elements, column load"),
        wide_entry<int4, 1>("writeRowReadColVec4Pad", "writeRowReadColVec4Pad", "16-byte, padded by one int4"),
        {"reverseBlockOptIn", "reverseBlockOptIn", kOptInThreads, 1, 4, kOptInElems, kOptInElems / (BDIMX * BDIMY),
         Perm::Reverse, launch_opt_in, trace_reverse, "96 KB dynamic shared memory (opt-in)"},
    };
    return k;
}

// "" where kernel k runs under g's limits, else why not: the opt-in kernel's
// 96 KB is more than a T4 (64 KB) allows.
inline std::string waiver(const TileKernel& k, const common::Gpu& g = common::gpu()) {
    return k.launch == launch_opt_in ? common::smem_refusal(kOptInBytes, g) : std::string();
}

// The stride sweep's two kernels (run by the program's own loop, not launched through a list).
struct SweepKernel {
    const char* name;
    const char* what;
};

inline const std::vector<SweepKernel>& sweep_kernels() {
    static const std::vector<SweepKernel> k = {
        {"readStrideThroughput", "stride 1..32, 65: cycles per warp request, one block of 32 warps per SM"},
        {"readStrideLatency", "the same as a dependent chain in one warp: latency per request"},
    };
    return k;
}

// Every name --kernel accepts: the tile kernels, then the sweep's.
inline std::vector<std::string> all_kernel_names() {
    std::vector<std::string> names = common::kernel_names(tile_kernels());
    for (const std::string& n : common::kernel_names(sweep_kernels())) names.push_back(n);
    return names;
}

// The words a tile kernel's output must hold, given its input (both as 4-byte
// words; an element of elem_bytes is elem_bytes / 4 words moved together).
inline void expected_output(const TileKernel& k, const uint32_t* in, uint32_t* out, int blocks) {
    const size_t wpe = size_t(k.elem_bytes) / 4, n = size_t(k.tile_elems);
    for (size_t t = 0; t < size_t(blocks); ++t)
        for (size_t e = 0; e < n; ++e) {
            const size_t s = perm_source(k.perm, e, k.bx, k.by, n);
            for (size_t w = 0; w < wpe; ++w) out[(t * n + e) * wpe + w] = in[(t * n + s) * wpe + w];
        }
}

// What the sweep kernels must leave in sink (checked exactly).
inline uint32_t expected_throughput_sum(int lane, int stride, int iters) {
    return uint32_t(iters) * sweep_value(uint32_t(lane * stride % kSweepWords));
}
inline uint32_t expected_latency_end(int lane, int stride, int iters) {
    return uint32_t((int64_t(lane) * stride + int64_t(iters) * kChainStep) % kSweepWords);
}

// Limits of the command line (checked before any GPU work): at 2^17 tiles
// the 16-byte kernels move 2 GiB each way, and the host holds three copies.
constexpr int64_t kMaxTiles = int64_t(1) << 17;
constexpr int64_t kMaxIters = int64_t(1) << 24;

}  // namespace bank_conflicts
