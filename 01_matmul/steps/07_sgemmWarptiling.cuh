// Step 7 of 01_matmul: the 16-byte accesses of step 6 in a warp-tiled thread
// layout, so that no shared-memory load conflicts.
#pragma once
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/06_sgemmVectorize.cuh"

namespace matmul {

// ---- The warp-tile layout (the cp.async kernels of steps 8 and 9 keep it) --
// A block of BM x BN is split into warp tiles of WM x WN; inside a warp the
// 32 lanes form 8 (m) x 4 (n), and each lane owns (WM / 32) x (WN / 16)
// sub-tiles of 4 x 4, placed 32 rows and 16 columns apart:
//     rows  warp_m * WM + i * 32 + lane_m * 4 + 0..3    (i < WM / 32)
//     cols  warp_n * WN + j * 16 + lane_n * 4 + 0..3    (j < WN / 16)
// For one k a warp then reads 8 distinct float4 of A (128 contiguous bytes)
// and 4 distinct float4 of B (64 bytes; lanes with equal lane_n broadcast):
// no LDS.128 has a bank conflict. A 16-byte load is still served in more
// than one wavefront: 2 for each of A's, 4 for each of B's (chapter 03's
// model), 12 a warp per k; ncu counts exactly that, 402.65 M at 4096^3
// (README's ncu table). A 64 x 32 warp tile gives each thread 8 x 8 results:
// 4 LDS.128 per 64 FFMA.

// ---- The kernel ------------------------------------------------------------
// sgemmWarptiling: the layout above with register-staged 16-byte loads (A
// transposed on its way into shared memory), one shared buffer, two barriers
// per k-tile. Needs 16-byte-aligned matrices and rows (why_not_16_bytes); the
// launcher runs sgemm2DBlocktiling otherwise and says so.
// Look for: zero bank conflicts on the shared loads in ncu (the stores that
// transpose A still have some: 19.34 M at 4096^3); the remaining gap is
// latency: while a tile is loaded nobody computes.
namespace warptiling {
constexpr int BM = 128, BN = 128, BK = 16, WM = 64, WN = 32;
constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * (BN / WN) * 32;
constexpr int WMI = WM / 32, WNI = WN / 16, TM = 4 * WMI, TN = 4 * WNI;
constexpr int LDA = BM + 4;  // As[k][m], rows padded: the transposing stores conflict less
}
__global__ void __launch_bounds__(warptiling::THREADS, 2)
sgemmWarptiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace warptiling;
    __shared__ __align__(16) float As[BK * LDA];
    __shared__ __align__(16) float Bs[BK * BN];
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN, tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wm0 = (warp / WARPS_N) * WM + (lane / 4) * 4;  // this lane's first row in the tile
    const int wn0 = (warp % WARPS_N) * WN + (lane % 4) * 4;  // and first column
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int it = 0; it < BM * BK / 4 / THREADS; ++it) {  // A: 2 float4 per thread
            const int idx = it * THREADS + tid, r = idx / (BK / 4), kq = (idx % (BK / 4)) * 4;
            const int gr = bm + r, gk = k0 + kq;
            const float4 a = (gr < M && gk < K) ? *reinterpret_cast<const float4*>(&A[size_t(gr) * K + gk])
                                                : make_float4(0, 0, 0, 0);
            As[(kq + 0) * LDA + r] = a.x;
            As[(kq + 1) * LDA + r] = a.y;
            As[(kq + 2) * LDA + r] = a.z;
            As[(kq + 3) * LDA + r] = a.w;
        }
#pragma unroll
        for (int it = 0; it < BK * BN / 4 / THREADS; ++it) {  // B: 2 float4 per thread
            const int idx = it * THREADS + tid, kr = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
            const int gk = k0 + kr, gc = bn + c;
            *reinterpret_cast<float4*>(&Bs[kr * BN + c]) =
                (gk < K && gc < N) ? *reinterpret_cast<const float4*>(&B[size_t(gk) * N + gc]) : make_float4(0, 0, 0, 0);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < WMI; ++i)
                *reinterpret_cast<float4*>(&a[4 * i]) = *reinterpret_cast<const float4*>(&As[kk * LDA + wm0 + 32 * i]);
#pragma unroll
            for (int j = 0; j < WNI; ++j)
                *reinterpret_cast<float4*>(&b[4 * j]) = *reinterpret_cast<const float4*>(&Bs[kk * BN + wn0 + 16 * j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = bm + wm0 + 32 * (i / 4) + i % 4;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < WNI; ++j) {
            const int col = bn + wn0 + 16 * j;
            if (col < N)
                *reinterpret_cast<float4*>(&C[size_t(row) * N + col]) =
                    make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
        }
    }
}

// ---- The launcher ----------------------------------------------------------
inline std::string launch_sgemmWarptiling(const float* A, const float* B, float* C, int M, int N, int K) {
    const std::string why = why_not_16_bytes(A, B, C, N, K);
    if (!why.empty()) return launch_sgemm2DBlocktiling(A, B, C, M, N, K) + " (ran 2D: " + why + ")";
    using namespace warptiling;
    const dim3 block(THREADS), grid(common::ceil_div(N, BN), common::ceil_div(M, BM));
    sgemmWarptiling<<<grid, block>>>(A, B, C, M, N, K);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

}  // namespace matmul
