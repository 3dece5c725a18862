// Step 16's passes before the product (01_matmul): A's split into A_big and
// A_small, or A_small alone (step 16m), by `splitTf32`; and since step 16j
// everything of the call but the product in one launch, `operandPasses`: A's
// split or padded copy, B's padded copy and strips of 1-2 rows or columns.
// 16_sgemm3xTf32.cuh's launcher fills `Passes` and launches them.
#pragma once
#include <map>
#include <cuda_runtime.h>
#include "common/gpu.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/operands.cuh"
#include "01_matmul/steps/row_strip.cuh"
#include "01_matmul/steps/tf32.cuh"

namespace matmul {
namespace step16 {


// A (rows x cols, pitch cols) -> big, small (pitch ld >= cols, a multiple of
// 4, zero-padded), a float4 of each at a time (operands.cuh's row pass): the
// part of block (x, y) of a grid of ny block rows. big = nullptr: small only,
// x - big with big rounded as the TMA will round A on its way in (step 16m).
__device__ __forceinline__ void split_rows(const float* __restrict__ A, float* __restrict__ big,
                                           float* __restrict__ small, int rows, int cols, int ld, int x, int y, int ny) {
    for_each_row_float4(rows, ld, [&](int r, int q) {
        const float* a = A + size_t(r) * cols + 4 * q;
        float hi[4], lo[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const float x = 4 * q + e < cols ? a[e] : 0.0f;
            hi[e] = __uint_as_float(big ? to_tf32(x) : to_tf32_as_tma(x));  // without big: the TMA's rounding
            lo[e] = __uint_as_float(to_tf32(x - hi[e]));
        }
        const size_t at = size_t(r) * ld + 4 * q;
        if (big) *reinterpret_cast<float4*>(big + at) = make_float4(hi[0], hi[1], hi[2], hi[3]);
        *reinterpret_cast<float4*>(small + at) = make_float4(lo[0], lo[1], lo[2], lo[3]);
    }, x, y, ny);
}
__global__ void splitTf32(const float* __restrict__ A, float* __restrict__ big, float* __restrict__ small, int rows,
                          int cols, int ld) {
    common::pdl_wait();  // launched programmatically (step 16h): before any global memory access
    common::pdl_launch_dependents();
    split_rows(A, big, small, rows, cols, ld, blockIdx.x, blockIdx.y, gridDim.y);
}

// Step 16j: everything of the call but the product, in one launch. Each
// launch costs the host a few microseconds (3-4 us on the H100's host,
// measured), and at the small shapes the GPU waits for them: at 1025^3 the
// call was six launches. The parts, each a number of 256-thread blocks (0:
// none), in this order in one row of blocks (the longest first):
//  - the row strip (row_strip.cuh): C's last M - m rows, all N columns;
//  - the column strip: C's last N - n columns of its first m rows;
//  - A's pass: its split into a_big and a_small, or a_small alone (SPLIT),
//    or its padded copy into a_big (the product splits it);
//  - B's padded copy.
// The strips read A and B as they are and write only their own parts of C,
// which the product's tiles (m x n) do not touch: none needs another's
// result. Each part's blocks run its own code with their place in its own
// grid; the shared memory is the larger of the strips' (a union).
struct Passes {
    const float* A;  // M x K
    const float* B;  // K x N
    float* C;        // M x N
    int M, N, K, m, n;
    float* a_big;    // A's pass: where it writes A_big or the padded A (pitch lda); nullptr: neither
    float* a_small;  // A_small, where the pass splits A (with or without A_big)
    int lda;
    dim3 ga;         // the pass's grid (row_pass_grid)
    float* b_copy;   // B's padded copy (pitch ldb), or nullptr: none
    int ldb;
    dim3 gb;
    float* row_partial;  // the row strip's slices (row_strip_grid: grid gr, kc rows of k each)
    int* row_arrived;
    dim3 gr;
    int kc;
    float* col_partial;  // the column strip's slices (col_strip_grid: gc)
    int* col_arrived;
    dim3 gc;
};
__host__ __device__ inline int blocks_of(dim3 g) { return int(g.x * g.y); }
constexpr int kPassThreads = kRowPassThreads * kRowPassRows;
static_assert(kPassThreads == kStripWarps * 32 && kPassThreads == kColStripWarps * 32, "one block size for every part");
template <int S>
union StripsSmem {
    RowStripSmem<S> row;
    ColStripSmem<S> col;
};
template <>
union StripsSmem<0> {};
template <bool SPLIT, int S>
__global__ void __launch_bounds__(kPassThreads, 4) operandPasses(const Passes p) {  // 4 blocks an SM: 64 registers
    __shared__ StripsSmem<S> sm;
    common::pdl_wait();  // launched programmatically (step 16h): before any global memory access
    common::pdl_launch_dependents();
    int i = blockIdx.x;
    if constexpr (S > 0) {  // S = 0: no strip (its code would cost the passes registers)
        if (i < blocks_of(p.gr)) {
            row_strip_block<S>(sm.row, p.A + size_t(p.m) * p.K, p.B, p.C + size_t(p.m) * p.N, p.row_partial,
                               p.row_arrived, p.M - p.m, p.N, p.K, p.kc, i % p.gr.x, i / p.gr.x, p.gr.y);
            return;
        }
        i -= blocks_of(p.gr);
        if (i < blocks_of(p.gc)) {
            col_strip_block<S>(sm.col, p.A, p.B + p.n, p.N, p.C + p.n, p.N, p.col_partial, p.col_arrived, p.m,
                               p.N - p.n, p.K, i % p.gc.x, i / p.gc.x, p.gc.y);
            return;
        }
        i -= blocks_of(p.gc);
    }
    if (i < blocks_of(p.ga)) {
        if (SPLIT) split_rows(p.A, p.a_big, p.a_small, p.m, p.K, p.lda, i % p.ga.x, i / p.ga.x, p.ga.y);
        else pad_rows(p.A, p.a_big, p.m, p.K, p.lda, i % p.ga.x, i / p.ga.x, p.ga.y);
        return;
    }
    i -= blocks_of(p.ga);
    pad_rows(p.B, p.b_copy, p.K, p.N, p.ldb, i % p.gb.x, i / p.gb.x, p.gb.y);
}

}  // namespace step16

// The kernel of operandPasses for `split` and strips of up to s <= kStripsInPasses rows or columns (0: none).
template <bool SPLIT>
auto operand_passes_kernel(int s) {
    return s == 0 ? step16::operandPasses<SPLIT, 0> : s == 1 ? step16::operandPasses<SPLIT, 1>
                                                             : step16::operandPasses<SPLIT, 2>;
}
inline auto operand_passes_kernel(bool split, int s) {
    return split ? operand_passes_kernel<true>(s) : operand_passes_kernel<false>(s);
}

constexpr int kStripsInPasses = 2;

// Blocks of an operandPasses kernel an SM holds (common::resident_blocks),
// asked once per kernel: the two driver calls cost microseconds of host time
// on every launch, before the first kernel of the call is launched (16j).
inline int resident_passes(const void* kernel) {
    static std::map<const void*, int> known;
    auto it = known.find(kernel);
    if (it == known.end()) it = known.emplace(kernel, common::resident_blocks(kernel, step16::kPassThreads, 0)).first;
    return it->second;
}

}  // namespace matmul
