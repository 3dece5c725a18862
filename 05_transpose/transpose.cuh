// transpose.cuh - matrix transpose, from the naive kernel to one at copy speed.
//
// in is rows x cols, out is cols x rows, both row-major float:
//     out[c * rows + r] = in[r * cols + c]
// A transpose moves the same bytes as a copy (each element read once and
// written once), so a copy kernel is its ceiling. The only difficulty is that
// one side of it walks memory by columns; shared memory turns that side into
// rows. The kernels below are in teaching order; every one handles any
// rows x cols, including 1 x N, N x 1 and sizes that are not tile multiples.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/cluster.cuh"
#include "common/gpu.cuh"
#include "common/launch.cuh"

namespace transpose {

// The seeds' thread block for the 2D kernels: 32 x 16 threads.
constexpr int BDIMX = 32;
constexpr int BDIMY = 16;

__host__ __device__ inline size_t at(int row, int col, int ld) { return size_t(row) * ld + col; }

// ---------------------------------------------------------------------------
// Copies: the ceiling a transpose is measured against.
// ---------------------------------------------------------------------------

// copyGmem: the seed's upper bound. Same 32 x 16 grid as the transposes, but
// reads and writes rows, so both sides are coalesced: every warp reads and
// writes 32 consecutive floats = one 128-byte line.
__global__ void copyGmem(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) out[at(row, col, cols)] = in[at(row, col, cols)];
}

// copyVec4: the ceiling every row's "% of copy" is relative to. One float4
// (16 bytes) per thread: a quarter of the instructions of a 4-byte copy, and
// every warp moves 512 contiguous bytes. It must itself reach >= 95% of
// cudaMemcpy, or the ceiling flatters (unrolling it to 2, 4 or 8 float4 per
// thread measured slower, not faster: WORKLOG.md, step 1). in and out
// must start on 16 bytes (the launcher checks; copyGmem runs otherwise).
constexpr int kCopyThreads = 256;
__global__ void __launch_bounds__(kCopyThreads)
copyVec4(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const size_t i = size_t(blockIdx.x) * kCopyThreads + threadIdx.x;
    if (i < n / 4) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in)[i];
    // The last n % 4 floats, which no float4 covers.
    if (blockIdx.x == 0 && threadIdx.x < n % 4) out[n / 4 * 4 + threadIdx.x] = in[n / 4 * 4 + threadIdx.x];
}

// ---------------------------------------------------------------------------
// Global memory only: one side of every transpose is strided.
// ---------------------------------------------------------------------------

// naiveGmem: reads rows (coalesced), writes columns. Consecutive threads
// write floats `rows` apart: every warp store touches 32 different 32-byte
// sectors to use 4 bytes of each. ncu: 4 sectors per load request, 32 per store.
__global__ void naiveGmem(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) out[at(col, row, rows)] = in[at(row, col, cols)];
}

// naiveGmemStridedRead: the opposite trade (seed 002's transpose_global1):
// threads are laid out over the OUTPUT, so writes are coalesced and reads are
// strided. A strided read wastes most of each sector it fetches, but the rest
// of that sector is often still in L1/L2 when the neighbouring column's warp
// asks for it; a strided write has no such second chance.
// The pointers are deliberately not __restrict__: the compiler must then
// assume `out` may alias `in` and uses ordinary (coherent) global loads.
__global__ void naiveGmemStridedRead(const float* in, float* out, int rows, int cols) {
    const int ocol = blockIdx.x * blockDim.x + threadIdx.x;  // = input row
    const int orow = blockIdx.y * blockDim.y + threadIdx.y;  // = input column
    if (orow < cols && ocol < rows) out[at(orow, ocol, rows)] = in[at(ocol, orow, cols)];
}

// naiveGmemStridedReadLdg: the same with __ldg(), the read-only data path
// (LDG.E.CONSTANT in SASS). With `const __restrict__` pointers the compiler
// picks it by itself; here it is explicit. Compare its time with the one above.
__global__ void naiveGmemStridedReadLdg(const float* in, float* out, int rows, int cols) {
    const int ocol = blockIdx.x * blockDim.x + threadIdx.x;
    const int orow = blockIdx.y * blockDim.y + threadIdx.y;
    if (orow < cols && ocol < rows) out[at(orow, ocol, rows)] = __ldg(&in[at(ocol, orow, cols)]);
}

// ---------------------------------------------------------------------------
// Shared memory: read a tile by rows, write it out by rows of the output.
// ---------------------------------------------------------------------------

// transposeSmem: a 16 x 32 tile (one element per thread). The block reads 16
// input rows of 32 floats (coalesced), then each thread takes a new position
// (irow, icol) in the 32 x 16 output tile, so the block writes 32 output rows
// of 16 floats (coalesced too). Reading tile[icol][irow] walks a column of the
// tile: 16 lanes hit one bank, a 16-way conflict (ncu: ~16x the shared load
// wavefronts of the store side).
// Note the barrier is reached by every thread: only the global accesses are
// guarded, never the __syncthreads().
__global__ void transposeSmem(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[BDIMY][BDIMX];
    int col = blockIdx.x * BDIMX + threadIdx.x;
    int row = blockIdx.y * BDIMY + threadIdx.y;
    if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = in[at(row, col, cols)];

    // The thread's place in the transposed 32 x 16 tile.
    const int bidx = threadIdx.y * BDIMX + threadIdx.x;
    const int irow = bidx / BDIMY, icol = bidx % BDIMY;
    row = blockIdx.x * BDIMX + irow;  // output row = input column
    col = blockIdx.y * BDIMY + icol;  // output column = input row
    __syncthreads();
    if (row < cols && col < rows) out[at(row, col, rows)] = tile[icol][irow];
}

// transposeSmemPad: the same with each tile row padded by PAD floats, which
// shifts consecutive rows to different banks. For this 16-row tile one float
// is not enough: the two half-warps (irow and irow + 1) would still share
// banks pairwise, a 2-way conflict. Two floats give 32 distinct banks.
constexpr int PAD = 2;
__global__ void transposeSmemPad(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[BDIMY][BDIMX + PAD];
    int col = blockIdx.x * BDIMX + threadIdx.x;
    int row = blockIdx.y * BDIMY + threadIdx.y;
    if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = in[at(row, col, cols)];

    const int bidx = threadIdx.y * BDIMX + threadIdx.x;
    const int irow = bidx / BDIMY, icol = bidx % BDIMY;
    row = blockIdx.x * BDIMX + irow;
    col = blockIdx.y * BDIMY + icol;
    __syncthreads();
    if (row < cols && col < rows) out[at(row, col, rows)] = tile[icol][irow];
}

// transposeSmemUnrollPad: two elements per thread, a 16 x 64 tile. Twice the
// bytes in flight per thread, half the blocks. Each of the two elements has
// its own bounds check: the seed's version tests `col + blockDim.x < cols` for
// both, which silently drops the right edge when cols is not a multiple of 64
// (tests/test_05_transpose.cu keeps that bug as a pitfall and catches it).
__global__ void transposeSmemUnrollPad(const float* __restrict__ in, float* __restrict__ out, int rows,
                                       int cols) {
    __shared__ float tile[BDIMY][2 * BDIMX + PAD];
    const int col = 2 * blockIdx.x * BDIMX + threadIdx.x;
    const int row = blockIdx.y * BDIMY + threadIdx.y;
    if (row < rows) {
        if (col < cols) tile[threadIdx.y][threadIdx.x] = in[at(row, col, cols)];
        if (col + BDIMX < cols) tile[threadIdx.y][threadIdx.x + BDIMX] = in[at(row, col + BDIMX, cols)];
    }
    const int bidx = threadIdx.y * BDIMX + threadIdx.x;
    const int irow = bidx / BDIMY, icol = bidx % BDIMY;
    const int orow = 2 * blockIdx.x * BDIMX + irow;
    const int ocol = blockIdx.y * BDIMY + icol;
    __syncthreads();
    if (ocol < rows) {
        if (orow < cols) out[at(orow, ocol, rows)] = tile[icol][irow];
        if (orow + BDIMX < cols) out[at(orow + BDIMX, ocol, rows)] = tile[icol][irow + BDIMX];
    }
}

// ---------------------------------------------------------------------------
// Beyond the seeds.
// ---------------------------------------------------------------------------

// transposeSmemPadCoarse: the classic square tile with thread coarsening. A
// 32 x 32 tile (padded by one float: with 32 rows, one is enough) and a
// 32 x 8 block, so each thread moves 4 elements and issues 4 loads before the
// barrier. Still 4-byte accesses.
constexpr int kCoarseTile = 32, kCoarseRows = 8;
__global__ void __launch_bounds__(kCoarseTile * kCoarseRows)
transposeSmemPadCoarse(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[kCoarseTile][kCoarseTile + 1];
    const int c = blockIdx.x * kCoarseTile + threadIdx.x;
    const int r0 = blockIdx.y * kCoarseTile + threadIdx.y;
#pragma unroll
    for (int k = 0; k < kCoarseTile; k += kCoarseRows)
        if (r0 + k < rows && c < cols) tile[threadIdx.y + k][threadIdx.x] = in[at(r0 + k, c, cols)];
    __syncthreads();
    const int oc = blockIdx.y * kCoarseTile + threadIdx.x;  // output column = input row
    const int or0 = blockIdx.x * kCoarseTile + threadIdx.y; // output row = input column
#pragma unroll
    for (int k = 0; k < kCoarseTile; k += kCoarseRows)
        if (or0 + k < cols && oc < rows) out[at(or0 + k, oc, rows)] = tile[threadIdx.x][threadIdx.y + k];
}

// transposeSwizzleVec4: 16-byte accesses on both sides of a 64 x 64 tile.
//
// Load: each thread reads float4s along input rows and stores them whole into
// the tile (16 lanes cover one 256-byte row). Store: each thread gathers four
// floats down a tile column (4 consecutive input rows = 4 consecutive output
// columns) and writes them as one float4 along an output row (8 lanes cover
// 128 contiguous bytes).
//
// Banks. Padding cannot serve both sides: a float4 store needs rows that are
// a multiple of 16 bytes apart, and with such a stride the column gather of
// rows 4t+k (t = 0..7) lands on only two banks. Instead the float4 slot q of
// tile row r is stored at slot q ^ ((r / 4) % 8), an XOR swizzle: a row's
// eight float4s of one quarter-warp still go to eight different slots, and the
// gather's 8 rows x 4 columns land on 32 different banks. No conflicts, no
// wasted shared memory (see 03_bank_conflicts for the general rule).
//
// 16-byte accesses need 16-byte aligned rows: in and out on 16 bytes,
// cols % 4 == 0 for the input and rows % 4 == 0 for the output; the launcher
// runs transposeSmemPadCoarse otherwise (vec4_refusal). Then every float4 of
// an edge tile (one partly outside the matrix) is wholly inside or wholly
// outside it, so edge tiles keep the float4s and test each one; tiles wholly
// inside skip the tests (the test is uniform across the block). Edge tiles
// that took scalar accesses instead wrote their output sectors in four pieces
// and cost 7-13 points of the copy at 2072^2-2104^2 (WORKLOG.md, step 42).
//
// kColumnGrid picks the order in which blocks are launched, and so which
// tiles are in flight together. Row order (blockIdx.x along a tile row, as in
// every kernel above): the ~500 resident blocks cover a few tile rows, so
// reads stream along whole input rows but each output row receives only a few
// 256-byte pieces at a time. Column order (blockIdx.x down a tile column):
// the reverse, whole output rows are written together. Same bytes, same
// instructions; the column order is the faster one (WORKLOG.md, step 4; our
// reading, not measured: scattered writes cost DRAM more than scattered reads).
constexpr int kVecTile = 64, kVecThreads = 512;
constexpr int kSlotsPerRow = kVecTile / 4;  // float4 slots in a tile row

// Tile row r keeps its float4 slot q at position q ^ ((r / 4) % 8).
__host__ __device__ __forceinline__ int swizzled_slot(int r, int q) {
    return r * kSlotsPerRow + (q ^ ((r >> 2) & 7));
}

template <bool kColumnGrid>
__global__ void __launch_bounds__(kVecThreads)
transposeSwizzleVec4(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    constexpr int T = kVecTile, S = kSlotsPerRow;
    constexpr int LOAD_ROWS = kVecThreads / S;  // 32 tile rows per load pass: 2 passes
    constexpr int WARPS = kVecThreads / 32;
    constexpr int UNITS = 2 * S;                // 32 units of 4 output rows x 32 output columns: 2 passes
    __shared__ float4 tile4[T * S];
    const float* tile = reinterpret_cast<const float*>(tile4);
    const int r0 = (kColumnGrid ? blockIdx.x : blockIdx.y) * T;
    const int c0 = (kColumnGrid ? blockIdx.y : blockIdx.x) * T;
    const bool full = r0 + T <= rows && c0 + T <= cols;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    // Load: 16 consecutive threads read one tile row, float4 by float4;
    // both loads are issued before either is stored.
    float4 v[T / LOAD_ROWS];
    const int q = threadIdx.x % S, rr = threadIdx.x / S;
#pragma unroll
    for (int i = 0; i < T / LOAD_ROWS; ++i) {
        const int r = r0 + i * LOAD_ROWS + rr, c = c0 + 4 * q;
        if (full || (r < rows && c < cols))
            v[i] = *reinterpret_cast<const float4*>(in + at(r, c, cols));
        else
            v[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int i = 0; i < T / LOAD_ROWS; ++i) tile4[swizzled_slot(i * LOAD_ROWS + rr, q)] = v[i];
    __syncthreads();

    // Store: unit u is 4 output rows (tile columns 4g .. 4g+3) x 32 output
    // columns (tile rows 32h .. 32h+31); lane = 8j + t takes tile column
    // 4g + j and tile rows 32h + 4t .. 32h + 4t + 3, whose swizzle key is t.
    // Lanes 8j .. 8j + 7 thus write one output row's 128 bytes. L1 moves a
    // 16-byte store's data a quarter-warp (8 lanes) at a time through its 32
    // banks, by our reading of ncu's counts: lane = 4t + j put 4 rows' 32-byte
    // pieces on the same 8 banks and took 3.3x the store wavefronts
    // (WORKLOG.md, step 28).
    const int t = lane % 8, j = lane / 8;
#pragma unroll
    for (int i = 0; i < UNITS / WARPS; ++i) {
        const int u = i * WARPS + warp, g = u / 2, h = u % 2;
        const int rb = 32 * h + 4 * t;  // first of 4 tile rows = 4 output columns
        float e[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) e[k] = tile[(rb + k) * T + 4 * (g ^ t) + j];
        const int orow = c0 + 4 * g + j, ocol = r0 + rb;
        if (full || (orow < cols && ocol < rows))
            *reinterpret_cast<float4*>(out + at(orow, ocol, rows)) = make_float4(e[0], e[1], e[2], e[3]);
    }
}

}  // namespace transpose

// transposeSectorAligned, any shape at the copy's speed but a few percent, is
// in sector_aligned.cuh; transposeBulkCopy (Hopper, sm_90), the same tiles
// moved by the copy engine, in bulk_copy.cuh; and transposeTensorMap (sm_90),
// the input tiles brought in by tensor maps and stored by
// transposeSectorAligned's store_sector_windows, in tensor_map.cuh: the
// kernels, their shared-memory layouts and what they measured. Their plans,
// launchers and waivers are below.
#include "05_transpose/sector_aligned.cuh"  // transposeSectorAligned
#include "05_transpose/bulk_copy.cuh"       // transposeBulkCopy
#include "05_transpose/tensor_map.cuh"      // the last kernel, transposeTensorMap

namespace transpose {

// ---------------------------------------------------------------------------
// Host side: launch wrappers, the kernel list, the CPU reference.
// ---------------------------------------------------------------------------

using LaunchFn = std::string (*)(const float* in, float* out, int rows, int cols);
using WaiverFn = std::string (*)(const common::Gpu& g);

struct Kernel {
    const char* name;
    bool is_copy;    // out is a copy of in (else its transpose)
    LaunchFn launch; // launches on the default stream, returns the configuration
    const char* what;
    WaiverFn waiver = nullptr;  // "" where it runs on g, else why not (nullptr: runs everywhere)
};

// The reason kernel k cannot run on g, or "".
inline std::string waived(const Kernel& k, const common::Gpu& g = common::gpu()) {
    return k.waiver ? k.waiver(g) : "";
}

// The seeds' 32 x 16 launch; `over_output` lays the grid over the cols x rows output.
template <void (*K)(const float*, float*, int, int), bool over_output = false>
std::string launch_2d(const float* in, float* out, int rows, int cols) {
    const int nx = over_output ? rows : cols, ny = over_output ? cols : rows;
    const dim3 block(BDIMX, BDIMY), grid(common::ceil_div(nx, BDIMX), common::ceil_div(ny, BDIMY));
    K<<<grid, block>>>(in, out, rows, cols);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

// Float4 accesses need 16-byte aligned addresses. cudaMalloc'd buffers start
// on 256 bytes; a pointer into the middle of one (in + 1) need not: each
// launcher below checks what its kernel relies on before launching it.
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// "" if in and out both start on 16 bytes, else why not: what copyVec4 and
// transposeSectorAligned rely on (they find every row's float4s from the
// index alone, whatever the shape).
inline std::string pointer_refusal(const float* in, const float* out) {
    return aligned16(in) && aligned16(out) ? "" : "in or out not 16-byte aligned";
}

// "" if transposeSwizzleVec4 can run, else why not: besides aligned pointers,
// every row of in (cols floats) and of out (rows floats) must be a whole
// number of float4s, so that each row starts on 16 bytes too.
inline std::string vec4_refusal(const float* in, const float* out, int rows, int cols) {
    const std::string why = pointer_refusal(in, out);
    if (!why.empty()) return why;
    return rows % 4 != 0 || cols % 4 != 0 ? "rows, cols % 4 != 0" : "";
}

// Unaligned pointers: the seeds' copyGmem (4 bytes a thread), and the launch column says so.
inline std::string launch_copyVec4(const float* in, float* out, int rows, int cols) {
    const std::string why = pointer_refusal(in, out);
    if (!why.empty()) return launch_2d<copyGmem>(in, out, rows, cols) + " (copyGmem: " + why + ")";
    const size_t n = size_t(rows) * cols, per_block = size_t(kCopyThreads) * 4;
    const dim3 grid(unsigned(common::ceil_div(n, per_block))), block(kCopyThreads);
    copyVec4<<<grid, block>>>(in, out, n);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

inline std::string launch_unroll(const float* in, float* out, int rows, int cols) {
    const dim3 block(BDIMX, BDIMY), grid(common::ceil_div(cols, 2 * BDIMX), common::ceil_div(rows, BDIMY));
    transposeSmemUnrollPad<<<grid, block>>>(in, out, rows, cols);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

inline std::string launch_coarse(const float* in, float* out, int rows, int cols) {
    const dim3 block(kCoarseTile, kCoarseRows), grid(common::ceil_div(cols, kCoarseTile), common::ceil_div(rows, kCoarseTile));
    transposeSmemPadCoarse<<<grid, block>>>(in, out, rows, cols);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

// Where vec4_refusal says no (a row or a pointer off 16 bytes), this runs
// transposeSmemPadCoarse instead, and the launch column says why.
template <bool kColumnGrid>
std::string launch_vec4(const float* in, float* out, int rows, int cols) {
    const std::string why = vec4_refusal(in, out, rows, cols);
    if (!why.empty()) return launch_coarse(in, out, rows, cols) + " (coarse: " + why + ")";
    const int tr = common::ceil_div(rows, kVecTile), tc = common::ceil_div(cols, kVecTile);
    const dim3 block(kVecThreads), grid(kColumnGrid ? tr : tc, kColumnGrid ? tc : tr);
    transposeSwizzleVec4<kColumnGrid><<<grid, block>>>(in, out, rows, cols);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

// The grid of the sector-aligned tiles (transposeSectorAligned, and the bulk
// copy and tensor map kernels after it): down tile columns, with one more tile
// row when the windows start up to halo - 1 rows early (rows % 8 != 0).
inline dim3 sector_aligned_grid(int rows, int cols, int tile, int halo) {
    const int span = rows + ((rows & 7) ? halo - 1 : 0);
    return dim3(unsigned(common::ceil_div(span, tile)), unsigned(common::ceil_div(cols, tile)));
}

// transposeSectorAligned's plan (WORKLOG.md, step 12): 256 or 512 threads
// a tile, for a grid of `tiles` on a GPU that holds `resident` blocks of 256
// threads at once (its SMs x blocks an SM). A grid that the GPU holds all at
// once waits on latency: every tile's loads are in flight together, and an SM
// holding eight tiles of 256 threads instead of four of 512 has twice the
// bytes in flight: 7-9% faster at 2048^2 and 2050 x 2046 on the H100 (one
// wave). A grid of many waves streams tiles through each SM, and there 512
// threads are up to 2% faster (8193^2). Measured between: +0.3% to +2.9% at
// 1.03-1.26 waves, -1.7% to +1.3% at 1.5-2.9. So 256 up to 5/4 of a wave.
inline int sector_aligned_threads(int64_t tiles, int64_t resident) { return 4 * tiles <= 5 * resident ? 256 : 512; }

// transposeSectorAligned's other choice (WORKLOG.md, step 21): where
// cols % 4 != 0 each row's 17th float4 shares its sectors with the tile to
// the right, and two horizontally adjacent tiles launched as one cluster of 2
// (one GPC, so one half of the L2) read those sectors across the L2's two
// halves once, not twice: 0.4-1.9% faster at such shapes on the H200, but
// 0.7% slower there at 16384 x 16383 (worklog step 23). On the H100, whose L2
// fabric has room, no faster and up to 1.7% slower (16384 x 16383); the
// limits a plan reads are the same on both, so both take them.
// Clusters need compute capability 9.0 (common::cluster_refusal, GPU_PROFILE's limits).
inline bool sector_aligned_pairs(int cols, const common::Gpu& g) {
    return cols % 4 != 0 && common::cluster_refusal(2, g).empty();
}

// transposeSectorAligned's third choice (WORKLOG.md, steps 31 and 32): the
// split of an SM's L1 and shared memory, one array (256 KiB on Hopper) that
// the driver divides per kernel. For eight tiles of 256 threads it keeps 164
// KiB of shared memory, which leaves L1 92 KiB. Where cols % 32 != 0 most
// input rows start inside a 128-byte line, and a tile's loads touch three
// lines a row for two lines' bytes. Asked for the split that holds 3/4 of the
// tiles (six: 132 KiB, L1 124 KiB), the H200 ran 2047 x 2049, 2049 x 2051 and
// 2050 x 2046 0.2-0.6 us faster, and 2048^2 0.2 us slower; the 512-thread
// kernel, whose four tiles the driver already leaves 124 KiB of L1, gained
// nothing from more. Measured on the H200 only; the rule reads the limits
// that every GPU has. kAlignedSmem: the tile's shared memory.
constexpr size_t kAlignedSmem = size_t(kAlignedRows) * kAlignedStride * sizeof(float);
inline int sector_aligned_l1_tiles(const common::Gpu& g) {
    return 3 * common::cap_by_sm_slots(common::blocks_per_sm_by_smem(g, kAlignedSmem), 256, g) / 4;
}
inline bool sector_aligned_more_l1(int cols, const common::Gpu& g) {
    return cols % 32 != 0 && sector_aligned_l1_tiles(g) > 0;
}
// The carveout (cudaFuncAttributePreferredSharedMemoryCarveout: percent of
// the SM's shared memory, a preference the driver rounds up to a split it
// has) that holds `tiles` blocks of `smem` bytes each on GPU g.
inline int carveout_percent(int tiles, size_t smem, const common::Gpu& g) {
    const size_t need = size_t(tiles) * (smem + common::reserved_smem_per_block(g));
    return int(std::min<size_t>(100, (100 * need + g.smem_per_sm - 1) / g.smem_per_sm));
}

// Pointers off 16 bytes: transposeSmemPadCoarse, and the launch column says
// so. kPairs: tile columns in clusters of 2 where the GPU has clusters; kMoreL1:
// the split of sector_aligned_l1_tiles, set on that kernel at its first launch
// (the tests force every combination at every shape; the plan asks
// sector_aligned_pairs and sector_aligned_more_l1).
template <int kThreads, bool kPairs = false, bool kMoreL1 = false>
std::string launch_sector_aligned_as(const float* in, float* out, int rows, int cols) {
    const std::string why = pointer_refusal(in, out);
    if (!why.empty()) return launch_coarse(in, out, rows, cols) + " (coarse: " + why + ")";
    const auto kernel = transposeSectorAligned<kThreads, kMoreL1>;
    std::string split;
    if constexpr (kMoreL1) {
        static const int tiles = [] {  // the split of the GPU the program plans for, asked of the real one
            const int t = sector_aligned_l1_tiles(common::gpu());
            const common::Gpu real = common::real_gpu(common::gpu().device);
            CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(transposeSectorAligned<kThreads, true>),
                                       cudaFuncAttributePreferredSharedMemoryCarveout,
                                       carveout_percent(t, kAlignedSmem, real)));
            return t;
        }();
        split = " (shared memory for " + std::to_string(tiles) + " tiles an SM)";
    }
    const dim3 block(kThreads), grid = sector_aligned_grid(rows, cols, kAlignedTile, kAlignedHalo);
    if (!kPairs || !common::cluster_refusal(2).empty()) {
        kernel<<<grid, block>>>(in, out, rows, cols);
        CHECK_LAUNCH();
        return common::launch_string(grid, block) + split;
    }
    const dim3 paired(grid.x, unsigned(common::ceil_div(int(grid.y), 2) * 2));  // whole pairs of tile columns
    const common::ClusterLaunch l(paired, block, 0, dim3(1, 2, 1));
    CHECK(cudaLaunchKernelEx(&l.cfg, kernel, in, out, rows, cols));
    CHECK_LAUNCH();
    return common::launch_string(paired, block, 0, 2) + split;
}

// The block by sector_aligned_threads, the pairs by sector_aligned_pairs, and
// with 256 threads the split by sector_aligned_more_l1; the launch column shows
// all three.
inline std::string launch_sector_aligned(const float* in, float* out, int rows, int cols) {
    static const int64_t resident =  // asked once: the launch is timed
        int64_t(common::gpu().sms) *
        common::resident_blocks(reinterpret_cast<const void*>(transposeSectorAligned<256>), 256, 0);
    const dim3 grid = sector_aligned_grid(rows, cols, kAlignedTile, kAlignedHalo);
    const bool pairs = sector_aligned_pairs(cols, common::gpu());
    if (sector_aligned_threads(int64_t(grid.x) * grid.y, resident) == 512)
        return pairs ? launch_sector_aligned_as<512, true>(in, out, rows, cols)
                     : launch_sector_aligned_as<512>(in, out, rows, cols);
    if (sector_aligned_more_l1(cols, common::gpu()))
        return pairs ? launch_sector_aligned_as<256, true, true>(in, out, rows, cols)
                     : launch_sector_aligned_as<256, false, true>(in, out, rows, cols);
    return pairs ? launch_sector_aligned_as<256, true>(in, out, rows, cols)
                 : launch_sector_aligned_as<256>(in, out, rows, cols);
}

// "" where g's limits allow transposeBulkCopy: compute capability 9.0+ (the
// bulk copy engine) and a block with both tiles; else why not. No CUDA call:
// a test asks it for every preset without a GPU.
inline std::string bulk_copy_refusal(const common::Gpu& g) {
    std::string why = common::cc_refusal(90, "the bulk copy engine: cp.async.bulk and mbarriers", g);
    if (why.empty()) why = common::smem_refusal(kBulkSmem, g);
    return why;
}
// The waiver: bulk_copy_refusal, then this build's code (a build for sm_80
// JIT-compiled on a Hopper GPU has the empty kernel: its ptxVersion says so).
inline std::string waived_bulk_copy(const common::Gpu& g) {
    std::string why = bulk_copy_refusal(g);
    if (why.empty()) why = common::code_refusal(reinterpret_cast<const void*>(transposeBulkCopy<true>), 90);
    return why;
}
// transposeSectorAligned's tile is the largest static one before it (20 KiB).
inline std::string waived_sector_aligned(const common::Gpu& g) {
    return common::smem_refusal(kAlignedSmem, g);
}

// Grid as for transposeSectorAligned. Pointers off 16 bytes (the copies need
// 16-byte addresses): transposeSmemPadCoarse, and the launch column says so.
template <bool kEdges = true>
std::string launch_bulk_copy(const float* in, float* out, int rows, int cols) {
    const std::string why = pointer_refusal(in, out);
    if (!why.empty()) return launch_coarse(in, out, rows, cols) + " (coarse: " + why + ")";
    const dim3 block(kBulkThreads), grid = sector_aligned_grid(rows, cols, kBulkTile, kBulkHalo);
    transposeBulkCopy<kEdges><<<grid, block>>>(in, out, rows, cols);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

// "" where g's limits allow transposeTensorMap: compute capability 9.0+
// (tensor maps) and a block with its four boxes; else why not. No CUDA call.
inline std::string tensor_map_refusal(const common::Gpu& g) {
    std::string why = common::cc_refusal(90, "the Tensor Memory Accelerator: tensor maps and mbarriers", g);
    if (why.empty()) why = common::smem_refusal(kMapSmem, g);
    return why;
}
inline std::string waived_tensor_map(const common::Gpu& g) {
    std::string why = tensor_map_refusal(g);
    if (why.empty()) why = common::code_refusal(reinterpret_cast<const void*>(transposeTensorMap<true>), 90);
    return why;
}

// Grid as for transposeSectorAligned; the four maps are made for every
// launch (0.2-0.4 us of host time, measured on the H200's host). Pointers off
// 16 bytes (a map's base and the float4 stores need them):
// transposeSmemPadCoarse, and the launch column says so.
template <bool kShift = true>
std::string launch_tensor_map(const float* in, float* out, int rows, int cols) {
    std::string why = pointer_refusal(in, out);
    if (!why.empty()) return launch_coarse(in, out, rows, cols) + " (coarse: " + why + ")";
    InputRowClasses maps;
    why = input_row_classes(&maps, in, rows, cols);
    if (!why.empty()) return "not launched: " + why;  // the output stays poisoned: the check fails
    const dim3 block(kMapThreads), grid = sector_aligned_grid(rows, cols, kMapTile, kMapHalo);
    transposeTensorMap<kShift><<<grid, block>>>(maps, out, rows, cols);
    CHECK_LAUNCH();
    return common::launch_string(grid, block) + " + 4 tensor maps";
}

// Every kernel of the chapter, in teaching order (the copies first: they are the ceiling).
inline const std::vector<Kernel>& kernels() {
    static const std::vector<Kernel> k = {
        {"copyVec4", true, launch_copyVec4, "16-byte copy, one per thread: the ceiling (% of copy)"},
        {"copyGmem", true, launch_2d<copyGmem>, "the seeds' copy on the transposes' 32x16 grid"},
        {"naiveGmem", false, launch_2d<naiveGmem>, "coalesced read, strided write"},
        {"naiveGmemStridedRead", false, launch_2d<naiveGmemStridedRead, true>, "strided read, coalesced write"},
        {"naiveGmemStridedReadLdg", false, launch_2d<naiveGmemStridedReadLdg, true>, "the same through __ldg"},
        {"transposeSmem", false, launch_2d<transposeSmem>, "shared-memory tile, 16-way bank conflicts"},
        {"transposeSmemPad", false, launch_2d<transposeSmemPad>, "tile rows padded by 2 floats"},
        {"transposeSmemUnrollPad", false, launch_unroll, "two elements per thread, 16x64 tile"},
        {"transposeSmemPadCoarse", false, launch_coarse, "32x32 tile, 4 elements per thread"},
        {"transposeSwizzleVec4", false, launch_vec4<false>, "64x64 tile, float4 both ways, XOR swizzle"},
        {"transposeSwizzleVec4ColGrid", false, launch_vec4<true>, "the same, blocks launched down tile columns"},
        {"transposeSectorAligned", false, launch_sector_aligned, "tiles cut on 32-byte sectors of each output row: any shape",
         waived_sector_aligned},
        {"transposeBulkCopy", false, launch_bulk_copy<true>, "sm_90: the same tiles moved by the bulk copy engine",
         waived_bulk_copy},
        {"transposeTensorMap", false, launch_tensor_map<true>, "sm_90: input tiles by tensor maps, one per row mod 4",
         waived_tensor_map},
    };
    return k;
}

// CPU reference, in 32 x 32 blocks so that neither side thrashes the cache.
inline void transpose_cpu(const float* in, float* out, int rows, int cols) {
    constexpr int B = 32;
    for (int r0 = 0; r0 < rows; r0 += B)
        for (int c0 = 0; c0 < cols; c0 += B)
            for (int r = r0; r < rows && r < r0 + B; ++r)
                for (int c = c0; c < cols && c < c0 + B; ++c) out[at(c, r, rows)] = in[at(r, c, cols)];
}

// Limits of the command line: grid.y is at most 65535 blocks of 16 rows, and
// one matrix at most 2^31 floats (8 GiB; the program holds two on the GPU).
constexpr int64_t kMaxDim = 65535LL * BDIMY;
constexpr int64_t kMaxElements = int64_t(1) << 31;

// "" if rows x cols can run, else why not (checked before any GPU work).
inline std::string check_shape(int64_t rows, int64_t cols) {
    if (rows < 1 || cols < 1 || rows > kMaxDim || cols > kMaxDim)
        return "rows and cols must be in [1, " + std::to_string(kMaxDim) + "]";
    if (rows * cols > kMaxElements)
        return std::to_string(rows) + " x " + std::to_string(cols) + " is more than 2^31 elements";
    return "";
}

}  // namespace transpose
