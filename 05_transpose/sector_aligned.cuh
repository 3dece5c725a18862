// sector_aligned.cuh - 05_transpose's kernel for every shape,
// transposeSectorAligned (WORKLOG.md, steps 5, 7, 12, 14 and 46), and its store side,
// store_sector_windows, which transposeTensorMap (tensor_map.cuh) shares.
// Device code only; its plan, launcher, waiver and place in the kernel list
// are in transpose.cuh, which includes this file.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>

namespace transpose {

// A 16-byte load that asks L2 to fetch the 256-byte block around it from
// DRAM (PTX `ld.global.nc.L2::256B`, sm_80 and newer; a plain load before).
// A hint about how much L2 brings in on a miss, not what this load returns.
__device__ __forceinline__ float4 load_l2_256(const float* p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float4 v;
    asm("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
#else
    return *reinterpret_cast<const float4*>(p);
#endif
}

// transposeSectorAligned: the same 64-column output tiles, but cut along the
// 32-byte sectors of the OUTPUT rows instead of along tile multiples.
//
// Why: output row j (input column j) starts at float j * rows. With rows a
// multiple of 8 every output row starts on a 32-byte sector and a tile's
// 64 floats of a row are 8 whole sectors. With an odd number of rows the rows
// start at every possible 4-byte offset, so every 64-float piece begins and
// ends inside a sector that a NEIGHBOURING block writes the rest of. Such
// stores cost time in the write path between the SMs and L2: 22% more L2
// write sectors and 52% more time for transposeSmemPadCoarse at 8191 x 8192
// than at 8192^2 (ncu). Not DRAM read-modify-write, or only a little of it:
// L2 merges almost every partial sector before it is written back, and DRAM
// reads grow by 3% (README, "Odd shapes").
//
// So this kernel moves each output row's window: for output row j the block
// of tile row R0 writes elements [R0 - m_j, R0 - m_j + 64), m_j = (j * rows)
// mod 8, which starts exactly on a sector. The windows of consecutive blocks
// still tile each output row without gaps; only the 32 bytes where one output
// row ends and the next begins are shared between two blocks. The block thus
// needs input rows R0 - 7 .. R0 + 63: it loads 71 (64 if rows % 8 == 0).
//
// The input side has the same problem for 16-byte loads when cols % 4 != 0:
// each input row r is read in float4s aligned to the ABSOLUTE address (the
// row's first aligned float4 at or before column c0; a_r = the floats it
// starts early), so 17 float4s cover the 64 columns. Extra columns of a float4
// are simply not used. Both sides issue only aligned 16-byte accesses, and
// every output sector is written whole by one block. ("Absolute" is counted
// from the array's first float: in must start on 16 bytes and out on 32, as
// cudaMalloc'd buffers do; the launcher runs transposeSmemPadCoarse for a
// pointer off 16 bytes, and out on 16 but not 32 is right, only slower.)
//
// Shared memory: a 72 x 69 float tile (odd row stride: the column gather of
// rows 4t + k for t = 0..7 hits 8 different banks per row group; the per-row
// shifts a_r and m_j make some conflicts data-dependent: ncu counts them).
// Blocks are launched down tile columns, as in transposeSwizzleVec4ColGrid.
// A warp stores two rows of 16 float4s into it, float by float, in an order
// that puts each store instruction's 32 floats in 32 banks (below, at the
// stores; worklog step 25).
//
// The loads ask L2 to fetch 256 bytes from DRAM at a time (load_l2_256): the
// same values, bytes and instructions, 1-8% faster at the odd shapes on the
// H100 (WORKLOG.md, step 7).
//
// Where cols % 4 != 0 a row's 17th float4 shares its sectors with the tile to
// the right, and on Hopper the launcher may run the two tiles as one cluster
// of 2 (why and where: sector_aligned_pairs in transpose.cuh). Nothing is
// exchanged; the grid's tile columns are rounded up to pairs, and a block past
// the last tile column returns at once.

// The shift of input row r for a tile whose columns start at c0: how many
// floats before c0 the row's first aligned float4 at or before c0 starts
// (r cols + c0, mod 4; unsigned, so a row above the matrix wraps as it should).
__device__ __forceinline__ int input_row_shift(int r, int cols, int c0) {
    return int((unsigned(r) * unsigned(cols) + unsigned(c0)) & 3u);
}

// Which float of its float4 (0..3: x, y, z, w) the thread holding float4 k
// of a tile row puts into the shared tile in its q-th store (worklog step 25):
// x, y, z, w where k < 8, z, w, x, y where k >= 8 (why: at the stores below).
__host__ __device__ constexpr int aligned_store_float(int k, int q) { return q ^ ((k & 8) ? 2 : 0); }

constexpr int kAlignedTile = 64, kAlignedHalo = 8;
constexpr int kAlignedRows = kAlignedTile + kAlignedHalo;  // tile rows: R0 - 8 .. R0 + 63
constexpr int kAlignedChunks = kAlignedTile / 4 + 1;        // float4s per loaded row
constexpr int kAlignedStride = 4 * kAlignedChunks + 1;      // 69 floats: odd

// The store side of transposeSectorAligned, and of transposeTensorMap
// (tensor_map.cuh), which brings its tile in differently: a warp writes 4
// output rows x 8 float4s (128 aligned bytes = 4 whole sectors per row), 32
// such units per 64 x 64 tile, 2 per warp of 512 threads (4 of 256). Output row j = c0 +
// jl takes the window that starts m_j floats before R0 (m_j = (j * rows) mod 8,
// so the window starts on a sector). Input row r, column c0 + jl sits at
// tile[row_start(r) + jl]: row_start tells where each input row's column c0
// is in the block's shared tile. Only the pieces where an output row begins or
// ends take scalar stores.
//
// Which lane writes what: lanes 8 jj .. 8 jj + 7 write row jj's 8 float4s,
// a quarter-warp's 128 consecutive bytes, as in transposeSwizzleVec4 (why:
// there, and worklog step 28). A thread's units are 2 * warps output rows
// apart (32 or 16), a multiple of 8, so they share m_j, their window and its
// four input rows: the thread finds those once, and each unit is four shared
// loads at fixed offsets and one store (worklog step 46: a third fewer
// instructions, 1-3 points at the small odd shapes).
template <int kThreads, class RowStart>
__device__ __forceinline__ void store_sector_windows(float* __restrict__ out, int rows, int R0, int c0, int ncols,
                                                     const float* tile, RowStart row_start) {
    constexpr int kWarps = kThreads / 32, kUnits = 2 * (kAlignedTile / 4);  // 32 units
    static_assert(kAlignedTile == 64 && kUnits % kWarps == 0, "whole units per warp, 8 float4s a unit");
    static_assert(kWarps % 4 == 0, "a thread's units 2 * kWarps output rows apart: the same m_j");
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int t = lane % 8, jj = lane / 8;
    // Unit u * kWarps + warp: output rows 4 (unit / 2) .. + 3 of the tile, input rows 32 (unit % 2) ..
    // + 31 of the window. This lane's output row in the tile is jl0 + 2 kWarps u.
    const int jl0 = 4 * (warp / 2) + jj;
    const int m = int((unsigned(c0 + jl0) * unsigned(rows)) & 7u);
    const int e = R0 - m + 4 * (8 * (warp % 2) + t);  // first of 4 output columns = input rows e .. e + 3
    int at[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) at[q] = row_start(e + q) + jl0;
    const bool whole = e >= 0 && e + 4 <= rows;
    // Where the 4 floats go: on 16 bytes (the window starts on a sector, e steps 4 floats). An index,
    // not a pointer: in the matrix's first tile e < 0, before the array, where only e + q >= 0 is stored.
    const ptrdiff_t first = ptrdiff_t(c0 + jl0) * rows + e;
#pragma unroll
    for (int u = 0; u < kUnits / kWarps; ++u) {
        const int step = 2 * kWarps * u;  // output rows past jl0
        if (jl0 + step >= ncols) break;
        float w[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) w[q] = tile[at[q] + step];
        const ptrdiff_t i = first + ptrdiff_t(step) * rows;
        if (whole) {
            *reinterpret_cast<float4*>(out + i) = make_float4(w[0], w[1], w[2], w[3]);
        } else {
            for (int q = 0; q < 4; ++q)
                if (e + q >= 0 && e + q < rows) out[i + q] = w[q];
        }
    }
}

// kThreads: 512 (four tiles an SM) or 256 (eight), a plan's choice by the
// size of the grid (sector_aligned_threads below). Where an SM holds 2048
// threads (8.0, 9.0, 10.0, 10.3), __launch_bounds__ asks for 2048 / kThreads blocks
// an SM, which holds the kernel to 32 registers a thread: a full SM with
// either block. Elsewhere (1024 threads an SM on 7.5, 1536 on 8.6, 8.9, 12.0)
// that many blocks would be out of range (ptxas warns and ignores it), and
// 1024 / kThreads fits every GPU. (__maxnreg__(32), the same cap on every
// GPU, measured 0.2-3.2% slower with 256 threads at 2048^2, 2049 x 2051 and
// 2050 x 2046 on the H100: the compiler plans the code differently for it.)
#if defined(__CUDA_ARCH__) && \
    (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030)
constexpr int kSmThreadsForBounds = 2048;
#else
constexpr int kSmThreadsForBounds = 1024;
#endif
// kMoreL1: the same code as a kernel of its own, so that it can carry a split
// of L1 and shared memory of its own (a function attribute, set by the
// launcher: sector_aligned_more_l1 in transpose.cuh, worklog step 32).
template <int kThreads, bool kMoreL1 = false>
__global__ void __launch_bounds__(kThreads, kSmThreadsForBounds / kThreads)
transposeSectorAligned(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    static_assert(kThreads == 256 || kThreads == 512, "the plans' two block sizes");
    constexpr int T = kAlignedTile, H = kAlignedHalo, K = kAlignedChunks, S = kAlignedStride;
    __shared__ float tile[kAlignedRows * S];  // tile row i holds input row R0 - H + i
    const size_t n = size_t(rows) * cols;
    const int R0 = blockIdx.x * T;  // output columns R0 - m_j .. (= input rows)
    const int c0 = blockIdx.y * T;  // output rows c0 .. c0 + 63 (= input columns)
    if (c0 >= cols) return;  // the second block of a cluster pair past the last tile column
    const int ncols = min(T, cols - c0);  // columns of this tile inside the matrix
    // Input row r starts a_r floats past a float4 boundary (as seen from c0).
    auto shift = [&](int r) { return input_row_shift(r, cols, c0); };
    // float4 number k of input row r, zeros where the tile needs none of it.
    auto fetch = [&](int r, int k, int a) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r >= 0 && r < rows && 4 * k - a < ncols) {
            const size_t g = size_t(r) * cols + c0 - a + 4 * k;
            if (g + 4 <= n) {
                v = load_l2_256(in + g);
            } else {  // the array's last float4 may stick out of it
                float e[4];
                for (int q = 0; q < 4; ++q) e[q] = g + q < n ? in[g + q] : 0.f;
                v = make_float4(e[0], e[1], e[2], e[3]);
            }
        }
        return v;
    };
    auto put = [&](int i, int k, float4 v) {  // the odd row stride: four 4-byte stores
        float* d = tile + i * S + 4 * k;
        d[0] = v.x; d[1] = v.y; d[2] = v.z; d[3] = v.w;
    };

    // Load (worklog step 14). Float4s 0..15 of input rows R0 .. R0 + 63: 16
    // threads a row, kThreads / 16 rows a pass. Rows that many apart start at
    // the same shift (16 or 32 rows of cols floats: a multiple of 4 floats
    // apart), so a thread computes a_r once; a tile with every column inside
    // and every row above the last skips the tests (`<=` gained nothing: step 26).
    constexpr int kRowsPerPass = kThreads / 16, PASSES = T / kRowsPerPass;  // 4 of 256 threads, 2 of 512
    const int k = threadIdx.x % 16, i0 = threadIdx.x / 16;
    const int a = shift(R0 + i0);
    float4 v[PASSES];
    if (R0 + T < rows && ncols == T) {
        const float* src = in + (size_t(R0 + i0) * cols + c0 - a + 4 * k);
#pragma unroll
        for (int p = 0; p < PASSES; ++p) v[p] = load_l2_256(src + size_t(p) * kRowsPerPass * cols);
    } else {
#pragma unroll
        for (int p = 0; p < PASSES; ++p) v[p] = fetch(R0 + i0 + p * kRowsPerPass, k, a);
    }
    // One more float4 a thread for the first 183: float4 16 of those 64 rows
    // (it holds a column only where a_r > 0), and the halo rows R0 - 7 ..
    // R0 - 1, 17 float4s each, needed only when output rows are not
    // sector-aligned (rows % 8 != 0).
    static_assert(kThreads >= T + (H - 1) * K, "one extra float4 a thread covers them all");
    const int x = threadIdx.x;
    int xi = -1, xk = K - 1;  // the extra float4's tile row and number
    float4 w = make_float4(0.f, 0.f, 0.f, 0.f);
    if (x < T) {
        xi = H + x;
        w = fetch(R0 + x, xk, shift(R0 + x));
    } else if ((rows & 7) != 0 && x < T + (H - 1) * K) {
        xi = 1 + (x - T) / K;
        xk = (x - T) % K;
        w = fetch(R0 - H + xi, xk, shift(R0 - H + xi));
    }
    // Into the tile (worklog step 25). A warp puts two tile rows, the thread
    // with float4 k of its row writing words 4k .. 4k + 3, one per store
    // instruction. In the order x, y, z, w float4s k and k + 8 would meet on
    // one bank in every instruction (words 4k + q and 4k + 32 + q): 2-way. The
    // threads with k >= 8 store z, w, x, y instead (aligned_store_float), so
    // the warp's four groups of 8 threads (k < 8 or not, in the even row or in
    // the odd one, 69 words = 5 banks on) hit banks q, q + 2, q + 1 and q + 3
    // mod 4: all 32. Same tile, same words, no conflict (a test checks the
    // banks; ncu counts them: README).
    static_assert(S % 4 == 1 && (H + kRowsPerPass) % 2 == 0, "a warp's odd row one bank class after its even one");
    const int o = aligned_store_float(k, 0);  // 0 or 2; the q-th store takes float o ^ q
#pragma unroll
    for (int p = 0; p < PASSES; ++p) {
        float* d = tile + (H + i0 + p * kRowsPerPass) * S + 4 * k;
        const float2 xy = make_float2(v[p].x, v[p].y), zw = make_float2(v[p].z, v[p].w);
        const float2 first = o ? zw : xy, second = o ? xy : zw;  // floats o, o ^ 1, then o ^ 2, o ^ 3
        d[o] = first.x;
        d[o ^ 1] = first.y;
        d[o ^ 2] = second.x;
        d[o ^ 3] = second.y;
    }
    if (xi >= 0) put(xi, xk, w);
    __syncthreads();

    // Store: the windows that start on a sector; input row r's column c0 is
    // at tile row r - R0 + H, shifted by a_r.
    store_sector_windows<kThreads>(out, rows, R0, c0, ncols, tile, [&](int r) { return (r - R0 + H) * S + shift(r); });
}

}  // namespace transpose
