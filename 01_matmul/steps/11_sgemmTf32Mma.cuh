// Step 11 of 01_matmul: tensor cores. The same multi-stage cp.async pipeline
// as step 8 feeds `mma.sync.m16n8k8` in TF32 instead of FFMA: one warp-wide
// instruction multiplies a 16 x 8 tile of A by an 8 x 8 tile of B into a
// 16 x 8 fp32 accumulator (1024 multiply-adds, against 32 for one FFMA
// instruction). sm_80 and newer.
//
// TF32 ("tensor float 32") keeps fp32's 8-bit exponent and only 10 of its 23
// mantissa bits: each input is rounded to 11 significant bits (relative error
// up to 2^-11), products are exact and accumulated in fp32. A TF32 result is
// therefore NOT an fp32 result: matmul.cuh states the error model and the
// tolerance these kernels are checked with, and the program prints how far
// each kernel is from the exact product.
//
// The fragments (PTX ISA, "Matrix fragments for mma.m16n8k8", .tf32): lane
// (g = lane / 4, t = lane % 4) of a warp holds
//     A (16 x 8, row-major):  a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]
//     B (8 x 8, "col"):       b0 = B[t][g], b1 = B[t+4][g]
//     C (16 x 8):             c0, c1 = C[g][2t], C[g][2t+1]; c2, c3 = C[g+8][2t], C[g+8][2t+1]
// Each value is loaded from shared memory by the lane that needs it (the
// 32 lanes of one load read 8 rows x 4 columns of A, or 4 rows x 8 columns
// of B). The padding makes those loads conflict-free, chapter 03's lesson:
//  - A is kept row-major, As[m][k] with a pitch of BK + 4 = 36 floats: lane
//    (g, t) reads bank (36 g + t) % 32 = 4 g + t, all 32 different;
//  - B is kept as it is in memory, Bs[k][n] with a pitch of BN + 8 = 136:
//    bank (136 t + g) % 32 = 8 t + g, all different.
// Both are copied with 16-byte cp.async (A needs K % 4 == 0 and 16-byte
// alignment for that: the launcher pads a copy of A otherwise, as step 8 does
// for B). Padding costs a pass and a launch each, which at small products is
// most of the time (129 x 65 x 33: 21 us, against 14 for cuBLAS TF32, when
// this rule was made; 8.9 against 12.5 us in the sweep of 2026-11-27): there
// the launcher reads A and B as they are, with 4-byte copies (V16 = false),
// by the rule step 8's plans use for B (plans.cuh, pad_b_pays). Each value
// is rounded to TF32 (cvt.rna) as it is loaded.
// Look for: HMMA instructions in the SASS (sass_ops.py), and how far this
// is from cuBLAS's TF32 (the peer of the tensor-core rows): the warps issue
// the loads, the conversions and the MMAs themselves, and every value is
// read from shared memory by the lane that uses it. Steps 12-16 hand
// that work to Hopper's copy engine and asynchronous tensor-core instructions.
#pragma once
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/pipeline.cuh"
#include "01_matmul/steps/tf32.cuh"

namespace matmul {

// d += a * b, one m16n8k8 TF32 tile (the fragments above).
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d, (void)a, (void)b;
#endif
}

// The tile: block BM x BN x BK, warp tile WM x WN (MI x NI mma tiles),
// STAGES buffers, MINB blocks per SM.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MINB_>
struct MmaTile {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_, MINB = MINB_;
    static constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * (BN / WN) * 32;
    static constexpr int MI = WM / 16, NI = WN / 8;
    static constexpr int LDA = BK + 4, LDB = BN + 8;  // As[m][k], Bs[k][n]: conflict-free fragment loads
    static constexpr int A_STAGE = BM * LDA, B_STAGE = BK * LDB;
    static constexpr size_t SMEM = size_t(STAGES) * (A_STAGE + B_STAGE) * sizeof(float);
    static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0 && BM % WM == 0 && BN % WN == 0, "tile layout");
};
// plans.cuh's: 4 warps of 64 x 64 (4 x 8 mma tiles, 128 accumulators per
// thread), 3 stages of 35 KB (two blocks per SM), 2 where that does not fit;
// small products: 4 warps of 32 x 32 (MmaTile64, step 11c).

// ROWS x COLS floats of a row-major matrix (pitch ld) from src into shared
// memory (pitch LDS) with cp.async, zero-filling rows >= rows_left and
// columns >= cols_left: V16, one 16-byte copy per 4 floats (ld and cols_left
// multiples of 4, so a vector is either inside or outside); else four 4-byte
// copies, each checked on its own column (any ld, any alignment).
template <int ROWS, int COLS, int LDS, int THREADS, bool V16>
__device__ __forceinline__ void copy_tile(float* dst, const float* src, size_t ld, int rows_left, int cols_left,
                                          int tid) {
    constexpr int PER_ROW = COLS / 4, ROW_STEP = THREADS / PER_ROW;
    static_assert(THREADS % PER_ROW == 0 && ROWS % ROW_STEP == 0, "the copies must divide evenly");
    const int c = (tid % PER_ROW) * 4;
#pragma unroll
    for (int r = tid / PER_ROW; r < ROWS; r += ROW_STEP) {
        float* d = dst + r * LDS + c;
        const float* s = src + size_t(r) * ld + c;
        if constexpr (V16) {
            cp_async16(d, s, r < rows_left && c < cols_left);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) cp_async4(d + e, s + e, r < rows_left && c + e < cols_left);
        }
    }
}

// ---- The kernel ------------------------------------------------------------
// A (pitch lda) and B (pitch ldb): with V16 16-byte aligned, pitches
// multiples of 4 (the launcher's prepare_b); else any. Edge tiles are
// zero-filled, stores guarded.
template <class T, bool V16>
__global__ void __launch_bounds__(T::THREADS, T::MINB)
sgemmTf32Mma(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K,
             int lda, int ldb) {
    extern __shared__ __align__(16) float smem[];
    float* As = smem;
    float* Bs = smem + T::STAGES * T::A_STAGE;

    int bm, bn;
    tile_origin<T>(blockIdx.x, (M + T::BM - 1) / T::BM, (N + T::BN - 1) / T::BN, &bm, &bn);
    const int k_tiles = (K + T::BK - 1) / T::BK;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int wm = (warp / T::WARPS_N) * T::WM, wn = (warp % T::WARPS_N) * T::WN;

    const float* a_src = A + size_t(bm) * lda;
    const float* b_src = B + bn;
    auto load = [&](int kt, int s) {  // k-tile kt into stage s
        copy_tile<T::BM, T::BK, T::LDA, T::THREADS, V16>(As + s * T::A_STAGE, a_src + kt * T::BK, lda, M - bm,
                                                         lda - kt * T::BK, tid);
        copy_tile<T::BK, T::BN, T::LDB, T::THREADS, V16>(Bs + s * T::B_STAGE, b_src + size_t(kt) * T::BK * ldb, ldb,
                                                         K - kt * T::BK, ldb - bn, tid);
    };
#pragma unroll
    for (int s = 0; s < T::STAGES - 1; ++s) {
        if (s < k_tiles) load(s, s);
        cp_async_commit();
    }

    float acc[T::MI][T::NI][4] = {};
    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<T::STAGES - 2>();  // k-tile kt has landed (this thread's copies) ...
        __syncthreads();                 // ... everybody's, and k-tile kt-1's stage is free
        if (kt + T::STAGES - 1 < k_tiles) load(kt + T::STAGES - 1, (kt + T::STAGES - 1) % T::STAGES);
        cp_async_commit();
        const float* as = As + (kt % T::STAGES) * T::A_STAGE + (wm + g) * T::LDA + t;
        const float* bs = Bs + (kt % T::STAGES) * T::B_STAGE + t * T::LDB + wn + g;
#pragma unroll
        for (int kk = 0; kk < T::BK; kk += 8) {
            uint32_t a[T::MI][4], b[T::NI][2];
#pragma unroll
            for (int i = 0; i < T::MI; ++i) {
                a[i][0] = to_tf32(as[(16 * i) * T::LDA + kk]);
                a[i][1] = to_tf32(as[(16 * i + 8) * T::LDA + kk]);
                a[i][2] = to_tf32(as[(16 * i) * T::LDA + kk + 4]);
                a[i][3] = to_tf32(as[(16 * i + 8) * T::LDA + kk + 4]);
            }
#pragma unroll
            for (int j = 0; j < T::NI; ++j) {
                b[j][0] = to_tf32(bs[kk * T::LDB + 8 * j]);
                b[j][1] = to_tf32(bs[(kk + 4) * T::LDB + 8 * j]);
            }
#pragma unroll
            for (int i = 0; i < T::MI; ++i)
#pragma unroll
                for (int j = 0; j < T::NI; ++j) mma_m16n8k8_tf32(acc[i][j], a[i], b[j]);
        }
    }
    cp_async_wait<0>();  // no copy may still target shared memory when the block exits

    // C fragment: rows g and g + 8, columns 2t and 2t + 1 of each 16 x 8 tile.
    const bool pairs = N % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;  // 8-byte stores
#pragma unroll
    for (int i = 0; i < T::MI; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = bm + wm + 16 * i + g + 8 * h;
            if (row >= M) continue;
#pragma unroll
            for (int j = 0; j < T::NI; ++j) {
                const int col = bn + wn + 8 * j + 2 * t;
                float* p = C + size_t(row) * N + col;
                if (pairs) {
                    if (col < N) *reinterpret_cast<float2*>(p) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    if (col < N) p[0] = acc[i][j][2 * h];
                    if (col + 1 < N) p[1] = acc[i][j][2 * h + 1];
                }
            }
        }
}

// ---- The launcher ----------------------------------------------------------
// pad: copy A or B to a 16-byte pitch where 16-byte copies cannot read it
// as it is; else read both with 4-byte copies (the launch column says
// "A:4-byte" or "B:4-byte" for the one that needed it).
template <class T>
std::string launch_sgemmTf32Mma_with(const float* A, const float* B, float* C, int M, int N, int K, bool pad) {
    const PreparedB pa = prepare_b(A, K, M, pad, kPaddedA, "A");
    const PreparedB pb = prepare_b(B, N, K, pad);
    const bool v16 = pa.b16 && pb.b16;
    const auto kernel = v16 ? sgemmTf32Mma<T, true> : sgemmTf32Mma<T, false>;
    const std::string refused = common::request_dynamic_smem(kernel, T::SMEM, true);
    if (!refused.empty()) return "not launched: " + refused;
    const int grid = common::ceil_div(M, T::BM) * common::ceil_div(N, T::BN);
    kernel<<<grid, T::THREADS, T::SMEM>>>(pa.b, pb.b, C, M, N, K, pa.ldb, pb.ldb);
    CHECK_LAUNCH();
    return tile_name<T>() + c_pairs_what(C, N) + pa.what + pb.what;
}

}  // namespace matmul
