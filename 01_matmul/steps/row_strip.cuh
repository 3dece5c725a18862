// The last few rows of C as a product of their own (steps 10 and 16), and the
// last few columns (step 16e: sgemmColStrip, below). Where M
// is a few rows past a multiple of the tile height (2049 = 16 x 128 + 1), the
// tiled kernels spend a whole tile row, 1/16 of the product at 2048, on those
// rows. A product of r <= kStripMaxRows rows reads B once and does r
// multiply-adds per element of B: it is bound by reading B, which costs less
// than a tile row wherever r is small against the tile height. So the
// launchers run the tiled kernel on the first M - r rows (a multiple of 128)
// and sgemmRowStrip on the rest (plans.cuh decides where).
#pragma once
#include <algorithm>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/operands.cuh"

namespace matmul {

constexpr int kStripMaxRows = 16;
constexpr int kStripTile = 128;   // a strip takes the rows past a multiple of this
constexpr int kStripWarps = 8;    // a block's warps split each stage's rows of k among them ...
constexpr int kStripCols = 128;   // ... and share its columns: 4 per lane, 32 apart
constexpr int kStripLoads = 8;    // rows of k per warp and stage: 32 loads a lane issues at once
constexpr int kStripKStage = kStripLoads * kStripWarps;  // 64 rows of k per stage
constexpr int kStripMaxSlices = 32;                      // slices of K (blocks along y)
constexpr int kStripRowsPerPass = 4;                     // rows of C whose warps' sums are added at once

// After a block has written its partial sums: true in every thread of the
// last of the ny blocks counted by arrived[x] to get here (it then adds the
// slices and sets arrived[x] back to 0), false in the others. `last` is a
// shared-memory flag of the block.
__device__ __forceinline__ bool last_to_arrive(bool& last, int* arrived, int x, int ny) {
    __threadfence();  // this block's partial sums are seen before its arrival is
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&arrived[x], 1) == ny - 1;
    __syncthreads();
    if (last) __threadfence();  // ... and the others' before this block reads them
    return last;
}

// Rows of M that a strip takes: M % 128 where that is 1..kStripMaxRows and
// something is left for the tiles, else 0.
inline int strip_rows(int M) {
    const int r = M % kStripTile;
    return M > kStripTile && r <= kStripMaxRows ? r : 0;
}

// C (r x N, pitch N) = A (r x K, pitch K) B (K x N, pitch N), any alignment.
// Block (x, y) owns columns [x kStripCols, (x + 1) kStripCols) and k in
// [y kc, (y + 1) kc). Lane l of every warp owns columns l, l + 32, l + 64,
// l + 96 of the block's (each warp load reads 128 contiguous bytes of B),
// with R sums each (R >= r, a power of two; A's rows past r are zero). Per
// stage of 64 rows of k, warp w loads rows w, w + 8, ..., w + 56 of B (all 32
// loads issued before the first multiply-add waits), while the block stages
// those rows of A in shared memory. The warps' sums are added through shared
// memory. With one slice (ny == 1) the block writes C; else it writes
// its partial sums to partial + y r N, and the last block of its column to
// arrive (a counter per column, back to 0 after) adds the slices in order:
// the same bits on every run.
//
// The body is a device function of the block's place (x, y) in a grid of ny
// slices, so that step 16j can run it as some of the blocks of a launch that
// does other things too; sgemmRowStrip is the launch of its own.
template <int R>
struct RowStripSmem {
    float a[R][kStripKStage];
    float sums[kStripWarps][kStripRowsPerPass][kStripCols];  // the warps' sums, a few rows of C at a time
    bool last;
};
template <int R>
__device__ __forceinline__ void row_strip_block(RowStripSmem<R>& sm, const float* __restrict__ A,
                                                const float* __restrict__ B, float* __restrict__ C,
                                                float* __restrict__ partial, int* __restrict__ arrived, int r, int N,
                                                int K, int kc, int x, int y, int ny) {
    constexpr int kThreads = kStripWarps * 32, kRowsPerPass = kStripRowsPerPass;
    auto& a = sm.a;
    auto& sums = sm.sums;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int k_begin = y * kc, k_end = min(K, k_begin + kc);
    const int c0 = x * kStripCols;
    // Every load is made, from a clamped address where its column is past N
    // or its row past the slice (its value then dropped): loads under a
    // branch would not be issued together.
    int col[4];
    bool in[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        in[j] = c0 + lane + 32 * j < N;
        col[j] = min(c0 + lane + 32 * j, N - 1);
    }
    float acc[R][4] = {};
    for (int k0 = k_begin; k0 < k_end; k0 += kStripKStage) {
        const int kn = min(kStripKStage, k_end - k0);
        float bv[kStripLoads][4];
#pragma unroll
        for (int u = 0; u < kStripLoads; ++u) {
            const int k = warp + u * kStripWarps;
            const float* b = B + size_t(k0 + (k < kn ? k : 0)) * N;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float v = __ldg(b + col[j]);
                bv[u][j] = k < kn && in[j] ? v : 0.0f;
            }
        }
        __syncthreads();  // the previous stage's A is read
        for (int i = threadIdx.x; i < R * kStripKStage; i += kThreads) {
            const int row = i / kStripKStage, k = i % kStripKStage;
            a[row][k] = row < r && k < kn ? A[size_t(row) * K + k0 + k] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int u = 0; u < kStripLoads; ++u)
#pragma unroll
            for (int i = 0; i < R; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i][warp + u * kStripWarps], bv[u][j], acc[i][j]);
    }
    // The warps' sums, kRowsPerPass rows of C at a time, added in warp order.
    const bool sliced = ny > 1;
    float* out = sliced ? partial + size_t(y) * r * N : C;
#pragma unroll
    for (int i0 = 0; i0 < R; i0 += kRowsPerPass) {
        __syncthreads();  // the previous pass is read
#pragma unroll
        for (int i = 0; i < kRowsPerPass && i0 + i < R; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) sums[warp][i][lane + 32 * j] = acc[i0 + i][j];
        __syncthreads();
        for (int e = threadIdx.x; e < kRowsPerPass * kStripCols; e += kThreads) {
            const int i = e / kStripCols, c = e % kStripCols;
            if (i0 + i >= r || c0 + c >= N) continue;
            float sum = sums[0][i][c];
#pragma unroll
            for (int w = 1; w < kStripWarps; ++w) sum += sums[w][i][c];
            out[size_t(i0 + i) * N + c0 + c] = sum;
        }
    }
    if (!sliced) return;
    if (!last_to_arrive(sm.last, arrived, x, ny)) return;
    for (int e = threadIdx.x; e < r * kStripCols; e += kThreads) {
        const int i = e / kStripCols, c = c0 + e % kStripCols;
        if (c >= N) continue;
        const float* p = partial + size_t(i) * N + c;
        float sum = __ldcg(p);  // L2: the other blocks wrote it from other SMs
#pragma unroll 8
        for (int z = 1; z < ny; ++z) sum += __ldcg(p + size_t(z) * r * N);
        C[size_t(i) * N + c] = sum;
    }
    if (threadIdx.x == 0) arrived[x] = 0;  // for the next launch
}
template <int R>
__global__ void __launch_bounds__(kStripWarps * 32, R <= 4 ? 3 : R == 8 ? 2 : 1)  // blocks an SM
    sgemmRowStrip(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  float* __restrict__ partial, int* __restrict__ arrived, int r, int N, int K, int kc) {
    __shared__ RowStripSmem<R> sm;
    common::pdl_wait();  // launched programmatically (step 16h): before any global memory access
    common::pdl_launch_dependents();
    row_strip_block<R>(sm, A, B, C, partial, arrived, r, N, K, kc, blockIdx.x, blockIdx.y, gridDim.y);
}

// The strip's grid: as many slices of K as one wave of blocks holds (a
// second, mostly empty wave would double the time), at most kStripMaxSlices
// and at least 8 r rows of k each (the partial sums stay small beside B),
// each a whole number of stages; `resident`: blocks an SM of the kernel that
// runs it. grid.y slices of kc rows of k.
struct StripGrid {
    dim3 grid;
    int kc;
};
inline StripGrid row_strip_grid(int r, int N, int K, int resident) {
    const int cols = common::ceil_div(N, kStripCols);
    const int slices = std::max(1, std::min({resident * common::sm_count() / cols, kStripMaxSlices, K / (8 * r)}));
    const int kc = common::ceil_div(common::ceil_div(K, kStripKStage), slices) * kStripKStage;
    return {dim3(cols, common::ceil_div(K, kc)), kc};
}
inline std::string launch_row_strip(const float* A, const float* B, float* C, int r, int N, int K) {
    const auto kernel = r == 1 ? sgemmRowStrip<1> : r == 2 ? sgemmRowStrip<2> : r <= 4 ? sgemmRowStrip<4>
                      : r <= 8 ? sgemmRowStrip<8> : sgemmRowStrip<16>;
    const StripGrid g = row_strip_grid(
        r, N, K, common::resident_blocks(reinterpret_cast<const void*>(kernel), kStripWarps * 32, 0));
    float* partial = g.grid.y > 1 ? scratch(kStripPartials, size_t(g.grid.y) * r * N) : nullptr;
    int* arrived = zeroed_counters(kStripArrivals, g.grid.x);
    common::launch_programmatic(kernel, g.grid, kStripWarps * 32, A, B, C, partial, arrived, r, N, K, g.kc);
    CHECK_LAUNCH();
    return " + " + std::to_string(r) + "-row strip";
}

// body(m) runs the tiled product on the first m rows and returns its launch
// column; with strip > 0 the last `strip` rows go to sgemmRowStrip.
template <class Body>
std::string with_row_strip(int strip, const float* A, const float* B, float* C, int M, int N, int K, Body&& body) {
    if (strip == 0) return body(M);
    const int m = M - strip;
    const std::string what = body(m);
    return what + launch_row_strip(A + size_t(m) * K, B, C + size_t(m) * N, strip, N, K);
}

// ---- The last few columns (step 16e) ----------------------------------------
// Where N is a few columns past a multiple of the tile width (1025 = 8 x 128
// + 1), the tiled kernels spend a whole tile column on them. A product of
// c <= kStripMaxRows columns reads A once and does c multiply-adds per
// element of A: C (M x c, pitch ldc) = A (M x K, pitch K) B (K x c, pitch ldb).
// Step 16 runs strips of 1 or 2 columns among the blocks of its operands'
// pass (16j), wider ones in a launch of their own.
constexpr int kColStripWarps = 8;  // a block's warps take one row of A each ...
constexpr int kColStripK = 512;    // ... over one slice of k, whose rows of B the block stages

// Columns of N that a strip takes: the rule of strip_rows, on N.
inline int strip_cols(int N) { return strip_rows(N); }

// Block (x, y) of a grid of ny slices takes rows x kColStripWarps + w (warp
// w) and k in [y kColStripK, (y + 1) kColStripK); lane l loads k = l, l + 32,
// ... of its row (16 loads at once) and multiplies them, in that order, by the
// slice's c columns of B (staged as b[j][k]: the lanes read consecutive k, 32
// banks); then the warp adds its lanes' sums (shuffles). One slice writes C;
// more write partial sums (M x c each), and the last block of each row of
// blocks to arrive (a counter per row of blocks, back to 0 after, as in
// sgemmRowStrip) adds them in slice order: the same bits on every run. (Until
// step 16j a second launch, splitKReduce, added them: the same sums.)
template <int R>
struct ColStripSmem {
    float b[R][kColStripK + 1];  // +1: the staging writes (c floats of a row, then the next row) spread
    bool last;
};
inline dim3 col_strip_grid(int M, int K) {
    return dim3(common::ceil_div(M, kColStripWarps), common::ceil_div(K, kColStripK));
}
template <int R>
__device__ __forceinline__ void col_strip_block(ColStripSmem<R>& sm, const float* __restrict__ A,
                                                const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc,
                                                float* __restrict__ partial, int* __restrict__ arrived, int M, int c,
                                                int K, int x, int y, int ny) {
    auto& b = sm.b;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int k0 = y * kColStripK, kn = min(kColStripK, K - k0);
    for (int i = threadIdx.x; i < R * kColStripK; i += kColStripWarps * 32) {
        const int k = i / R, j = i % R;
        b[j][k] = k < kn && j < c ? B[size_t(k0 + k) * ldb + j] : 0.0f;
    }
    __syncthreads();
    const int m = x * kColStripWarps + warp;
    const bool writes = m < M && lane < c;  // lane j holds column j's sum of row m
    float mine = 0.0f;
    if (m < M) {
        const float* a = A + size_t(m) * K + k0;
        constexpr int kLoads = kColStripK / 32;  // every load of the slice issued before the first multiply-add
        float v[kLoads];
#pragma unroll
        for (int u = 0; u < kLoads; ++u) v[u] = lane + 32 * u < kn ? __ldg(a + lane + 32 * u) : 0.0f;
        float acc[R] = {};
#pragma unroll
        for (int u = 0; u < kLoads; ++u)
#pragma unroll
            for (int j = 0; j < R; ++j) acc[j] = fmaf(v[u], b[j][lane + 32 * u], acc[j]);  // b is 0 past kn
#pragma unroll
        for (int j = 0; j < R; ++j) {  // a constant index keeps acc in registers
#pragma unroll
            for (int o = 16; o > 0; o /= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], o);
            if (lane == j) mine = acc[j];
        }
    }
    if (ny == 1) {
        if (writes) C[size_t(m) * ldc + lane] = mine;
        return;
    }
    if (writes) partial[(size_t(y) * M + m) * c + lane] = mine;
    if (!last_to_arrive(sm.last, arrived, x, ny)) return;
    if (writes) {
        const float* p = partial + size_t(m) * c + lane;
        float sum = __ldcg(p);  // L2: the other blocks wrote it from other SMs
        for (int z = 1; z < ny; ++z) sum += __ldcg(p + size_t(z) * M * c);
        C[size_t(m) * ldc + lane] = sum;
    }
    if (threadIdx.x == 0) arrived[x] = 0;  // for the next launch
}
template <int R>
__global__ void __launch_bounds__(kColStripWarps * 32)
    sgemmColStrip(const float* __restrict__ A, const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc,
                  float* __restrict__ partial, int* __restrict__ arrived, int M, int c, int K) {
    __shared__ ColStripSmem<R> sm;
    common::pdl_wait();  // launched programmatically (step 16h): before any global memory access
    common::pdl_launch_dependents();
    col_strip_block<R>(sm, A, B, ldb, C, ldc, partial, arrived, M, c, K, blockIdx.x, blockIdx.y, gridDim.y);
}
// C's last c columns (pitch N) = A (M x K) times B's last c columns (pitch N).
inline std::string launch_col_strip(const float* A, const float* B, float* C, int M, int N, int K, int c) {
    const auto kernel = c == 1 ? sgemmColStrip<1> : c == 2 ? sgemmColStrip<2> : c <= 4 ? sgemmColStrip<4>
                      : c <= 8 ? sgemmColStrip<8> : sgemmColStrip<16>;
    const dim3 grid = col_strip_grid(M, K);
    float* partial = grid.y > 1 ? scratch(kColStripPartials, size_t(grid.y) * M * c) : nullptr;
    int* arrived = zeroed_counters(kColStripArrivals, grid.x);
    common::launch_programmatic(kernel, grid, kColStripWarps * 32, A, B + (N - c), N, C + (N - c), N, partial, arrived,
                                M, c, K);
    CHECK_LAUNCH();
    return " + " + std::to_string(c) + "-column strip";
}

}  // namespace matmul
