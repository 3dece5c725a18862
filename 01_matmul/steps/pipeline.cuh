// The cp.async pipeline of 01_matmul: the pieces that sgemmCpAsync (step 8)
// and sgemmStreamK (step 9) share, device side and host side.
//
//   cp_async4/16, commit, wait  the copies global -> shared (sm_80+)
//   Tile<...>                   one configuration: block, warp tile, stages
//   CopyPlan, mma_k, store_acc  the kernels' building blocks
// (operands.cuh: the tile order, scratch buffers, padded operands, split-K's sum;
// plans.cuh: the configurations and which one runs.)
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/operands.cuh"

namespace matmul {

// ---- cp.async (sm_80+): global -> shared without passing through registers --
// With src_size 0 the destination is zero-filled and nothing is read: that is
// how edge tiles are padded. On older GPUs the same helpers load synchronously.
// In edge tiles such a copy's source lies outside the matrix. Forming that
// pointer is formally undefined in C++ (a pointer is defined only inside its
// array) and harmless here: it only becomes the instruction's operand, and
// nothing is read through it. The same arithmetic on integer addresses (the
// operand PTX takes) made steps 8-10 1.0-1.7% slower, step 11 0.6% slower to
// 0.6% faster (H200, 2026-11-29: two builds at 4096^3, 4095^3 and 2049 x 2047
// x 2051, 3 runs each; the SASS differs, why was not looked into), so these
// kernels keep the pointers.
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool pred) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(pred ? 4 : 0));
#else
    *smem = pred ? *gmem : 0.0f;
#endif
}
__device__ __forceinline__ void cp_async16(float* smem, const float* gmem, bool pred) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(pred ? 16 : 0));
#else
    *reinterpret_cast<float4*>(smem) = pred ? *reinterpret_cast<const float4*>(gmem) : make_float4(0, 0, 0, 0);
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// One configuration of sgemmCpAsync: block tile BM x BN x BK, warp tile WM x
// WN, STAGES shared buffers, MINB blocks per SM asked of the register allocator.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MINB_>
struct Tile {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_, MINB = MINB_;
    static constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * (BN / WN) * 32;
    static constexpr int WMI = WM / 32, WNI = WN / 16, TM = 4 * WMI, TN = 4 * WNI;
    static constexpr int LDA = BM + 4, LDB = BN;  // As[k][m] (padded), Bs[k][n]
    static constexpr int A_STAGE = BK * LDA, B_STAGE = BK * LDB;
    static constexpr size_t SMEM = size_t(STAGES) * (A_STAGE + B_STAGE) * sizeof(float);
    static_assert(WM % 32 == 0 && WN % 16 == 0 && BM % WM == 0 && BN % WN == 0, "warp tile layout");
    static_assert(BK >= 2, "sgemmCpAsync issues a k-tile's copies after its k 0 and k 1");
    static_assert(THREADS % BK == 0 && BM % (THREADS / BK) == 0, "A copies must divide evenly");
    static_assert(THREADS % BN == 0 && BK % (THREADS / BN) == 0, "4-byte B copies must divide evenly");
    static_assert(THREADS % (BN / 4) == 0 && BK % (THREADS / (BN / 4)) == 0, "16-byte B copies must divide evenly");
};

// ---- The copy plan, the inner product, the epilogue, the tile order ---------
//
// The copy plan of one thread, computed once per output tile: every address it
// copies from is a base plus a compile-time offset, the row predicates are a
// bitmask and the k predicate is one compare per k-tile, so a k-tile costs
// little more than its LDGSTS instructions.
//  - A: the thread copies k = a_k of rows a_m + it * A_ROWS (it < A_IT), with
//    4-byte cp.async, transposed to k-major on the way (a 16-byte copy cannot
//    transpose); this also makes any K work.
//  - B: 16-byte copies of columns b_n..b_n+3 (4-byte copies: column b_n) of
//    rows b_k + it * B_ROWS (it < B_IT). 16-byte copies need a row pitch ldb
//    that is a multiple of 4 floats.
// Out-of-range elements are zero-filled (src_size 0) and never read.
template <class T, bool B16>
struct CopyPlan {
    static constexpr int A_ROWS = T::THREADS / T::BK, A_IT = T::BM / A_ROWS;
    static constexpr int B_VEC = B16 ? 4 : 1, B_COLS = T::BN / B_VEC, B_ROWS = T::THREADS / B_COLS,
                         B_IT = T::BK / B_ROWS;
    int a_k, a_m, b_k, b_n;
    unsigned a_rows_ok;  // bit it: row a_m + it * A_ROWS is inside A
    bool b_col_ok;       // ldb % 4 == 0 for 16-byte copies: all four columns or none
    const float* a_src;  // sources of the next k-tile to load
    const float* b_src;
    int next_k, k_span;  // k of the next k-tile relative to the range's start; K left from that start

    __device__ explicit CopyPlan(int tid)
        : a_k(tid % T::BK), a_m(tid / T::BK), b_k(tid / B_COLS), b_n((tid % B_COLS) * B_VEC) {}

    // Copies of the tile at (bm, bn), k from k_begin to K.
    __device__ __forceinline__ void start(const float* A, const float* B, int M, int K, int ldb, int bm, int bn,
                                          int k_begin) {
        a_rows_ok = 0;
#pragma unroll
        for (int it = 0; it < A_IT; ++it) a_rows_ok |= unsigned(bm + a_m + it * A_ROWS < M) << it;
        b_col_ok = bn + b_n < ldb;
        a_src = A + size_t(bm + a_m) * K + k_begin + a_k;
        b_src = B + size_t(k_begin + b_k) * ldb + bn + b_n;
        next_k = 0;
        k_span = K - k_begin;
    }

    // Issues the copies of the next k-tile into one stage's buffers: A's with
    // load_a, then B's with load_b, which moves on to the k-tile after it.
    // sgemmCpAsync issues the two between its first multiply-adds (step 8f);
    // load() issues both at once.
    __device__ __forceinline__ void load_a(float* as, int K) const {
        const bool a_k_ok = a_k + next_k < k_span;
#pragma unroll
        for (int it = 0; it < A_IT; ++it)
            cp_async4(as + a_k * T::LDA + a_m + it * A_ROWS, a_src + size_t(it) * A_ROWS * K,
                      a_k_ok && ((a_rows_ok >> it) & 1));
    }
    __device__ __forceinline__ void load_b(float* bs, int ldb) {
#pragma unroll
        for (int it = 0; it < B_IT; ++it) {
            const bool ok = b_col_ok && b_k + it * B_ROWS + next_k < k_span;
            float* dst = bs + (b_k + it * B_ROWS) * T::LDB + b_n;
            const float* src = b_src + size_t(it) * B_ROWS * ldb;
            if constexpr (B16) cp_async16(dst, src, ok);
            else cp_async4(dst, src, ok);
        }
        a_src += T::BK;
        b_src += size_t(T::BK) * ldb;
        next_k += T::BK;
    }
    __device__ __forceinline__ void load(float* as, float* bs, int K, int ldb) {
        load_a(as, K);
        load_b(bs, ldb);
    }
};

// One k of the warp-tiled outer product: WMI + WNI conflict-free LDS.128 of
// this lane's A and B values (as, bs: the stage's buffers at the lane's first
// row and column), then TM x TN FFMA.
// The FFMA go along row i of the accumulators and back along row i + 1 (a
// zigzag), so that consecutive FFMA share an operand at every step, the turn
// from one row to the next included: b[TN - 1] there, where row order would
// change both. The sums are the same (each accumulator still adds its k in
// order); only the order among the TM x TN independent FFMA changes. Measured
// (H200, step 8f): 0.8-3.5% faster in each of the four configurations timed;
// SASS: more operands marked .reuse (the operand reuse cache); ncu: fewer
// dispatch stalls.
template <class T>
__device__ __forceinline__ void mma_k(const float* as, const float* bs, int kk, float (&acc)[T::TM][T::TN]) {
    float a[T::TM], b[T::TN];
#pragma unroll
    for (int i = 0; i < T::WMI; ++i)
        *reinterpret_cast<float4*>(&a[4 * i]) = *reinterpret_cast<const float4*>(&as[kk * T::LDA + 32 * i]);
#pragma unroll
    for (int j = 0; j < T::WNI; ++j)
        *reinterpret_cast<float4*>(&b[4 * j]) = *reinterpret_cast<const float4*>(&bs[kk * T::LDB + 16 * j]);
#pragma unroll
    for (int i = 0; i < T::TM; ++i)
#pragma unroll
        for (int jj = 0; jj < T::TN; ++jj) {
            const int j = i % 2 == 0 ? jj : T::TN - 1 - jj;
            acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
}

// float4 stores of C need N % 4 == 0 and a 16-byte-aligned C; where they
// cannot, the kernels stage C (store_acc_staged, below).
__host__ __device__ inline bool c_vec4(const float* C, int N) { return rows16(C, N); }

// This lane's results, rows row0 + 32 (i / 4) + i % 4 and columns col0 + 16 j
// + 0..3 of the M x N row-major `out`, guarded at the edges; float4 stores
// where N % 4 == 0 and `out` is 16-byte aligned, 4-byte stores otherwise.
template <class T>
__device__ __forceinline__ void store_acc(float* out, const float (&acc)[T::TM][T::TN], int row0, int col0, int M,
                                          int N) {
    const bool vec = c_vec4(out, N);  // float4 stores
#pragma unroll
    for (int i = 0; i < T::TM; ++i) {
        const int row = row0 + 32 * (i / 4) + i % 4;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < T::WNI; ++j) {
            const int col = col0 + 16 * j;
            float* p = out + size_t(row) * N + col;
            if (vec) {
                if (col < N) *reinterpret_cast<float4*>(p) =
                    make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
            } else {
#pragma unroll
                for (int c = 0; c < 4; ++c)
                    if (col + c < N) p[c] = acc[i][4 * j + c];
            }
        }
    }
}

// Where C cannot take float4 stores, store_acc's 4-byte stores are scattered:
// one store instruction writes 4 floats 16 bytes apart in each of 8 rows, 16
// sectors for 128 bytes. store_acc_staged passes the warp's tile through
// shared memory instead, 8 rows at a time (one row per lane_m, one of the 4 x 4
// sub-tiles' rows), and writes each row with 32 lanes on 32 consecutive
// columns: 4 or 5 sectors per 128 bytes, whatever N. `buf`: this warp's
// kStagedFloats<T> floats. Rows of the buffer are 16 banks apart (pitch WN + 16),
// so a quarter-warp's float4 writes (two rows x 4 lanes) hit 32 different banks.
template <class T>
constexpr int kStagePitch = T::WN + 16;
template <class T>
constexpr int kStagedFloats = 8 * kStagePitch<T>;
template <class T>
__device__ __forceinline__ void store_acc_staged(float* buf, float* out, const float (&acc)[T::TM][T::TN], int row0,
                                                 int col0, int M, int N) {
    constexpr int P = kStagePitch<T>;
    const int lane = threadIdx.x % 32, lane_m = lane / 4, lane_n = lane % 4;
    const int warp_row = row0 - 4 * lane_m, warp_col = col0 - 4 * lane_n;  // the warp tile's corner
#pragma unroll
    for (int i = 0; i < T::TM; ++i) {  // rows warp_row + 32 (i / 4) + 4 r + i % 4, r = 0..7
#pragma unroll
        for (int j = 0; j < T::WNI; ++j)
            *reinterpret_cast<float4*>(&buf[lane_m * P + 16 * j + 4 * lane_n]) =
                make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
        __syncwarp();
#pragma unroll
        for (int r = 0; r < 8; ++r) {
            const int row = warp_row + 32 * (i / 4) + 4 * r + i % 4;
#pragma unroll
            for (int c = lane; c < T::WN; c += 32)
                if (row < M && warp_col + c < N) out[size_t(row) * N + warp_col + c] = buf[r * P + c];
        }
        __syncwarp();  // the buffer is read before the next rows overwrite it
    }
}

// What the epilogue does with C: float4 stores where it can (c_vec4), else rows
// staged through shared memory; the launch column says so where only the
// alignment stops float4 stores.
inline std::string c_what(const float* C, int N) {
    return N % 4 == 0 && !aligned16(C) ? " C:staged (not 16-byte aligned)" : "";
}

template <class T>
std::string tile_name() {
    char s[64];
    std::snprintf(s, sizeof s, "%dx%dx%d w%dx%d s%d", T::BM, T::BN, T::BK, T::WM, T::WN, T::STAGES);
    return s;
}

}  // namespace matmul
