// matmul.cuh - single-precision matrix multiply, from the seeds' naive kernel to
// a multi-stage cp.async SGEMM at cuBLAS speed, a persistent stream-K kernel for
// the shapes whose tiles leave a wave idle, and a launcher that picks the
// fastest configuration per shape by measuring it.
//
// C (M x N) = A (M x K) * B (K x N), all row-major float:
//     C[i * N + j] = sum_k A[i * K + k] * B[k * N + j]
// 2 M N K flops on 4 (M K + K N + M N) bytes: at 4096^3 that is 683 flops per
// byte, far above what HBM needs (the H200 does ~67 TFLOP/s fp32 FMA on
// ~4.8 TB/s), so every kernel below is limited by how often it goes back to
// memory (global, then shared, then registers) per FMA. Each step moves the
// data one level closer to the FMA units and reuses it more.
//
// Every kernel is correct for any M, N, K >= 1 (1 x 1 x 1, K = 1, primes, tall
// and skinny, not tile multiples). The kernels are in teaching order; the
// seeds' pitfall (an unguarded grid) is in pitfalls(), never in the default run.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cuda/atomic>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/timer.cuh"

namespace matmul {

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

inline std::string launch_string(dim3 g, dim3 b, size_t smem = 0) {
    char s[96];
    if (g.z > 1)
        std::snprintf(s, sizeof s, "grid(%u,%u,%u) block(%u)", g.x, g.y, g.z, b.x * b.y);
    else if (g.y == 1 && b.y == 1)
        std::snprintf(s, sizeof s, "grid(%u) block(%u)", g.x, b.x);
    else
        std::snprintf(s, sizeof s, "grid(%u,%u) block(%u,%u)", g.x, g.y, b.x, b.y);
    std::string r = s;
    if (smem) r += " smem " + std::to_string(smem / 1024) + "K";
    return r;
}

inline int sm_count() {
    static int sms = 0;
    if (!sms) {
        int dev = 0;
        CHECK(cudaGetDevice(&dev));
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    return sms;
}

// ===========================================================================
// 1. The seeds: one thread per element of C, everything from global memory.
// ===========================================================================

// MatMulKernelNaive (seed 004, question 3): threadIdx.x walks the ROWS of C.
// The 32 threads of a warp read A at 32 different rows (K floats apart: 32
// sectors per request), all read the same B element (one broadcast), and
// write C 32 rows apart. "Neither A nor B is coalesced: how to improve?"
// Look for: the slowest row, and ncu's ~32 global sectors per load request.
__global__ void MatMulKernelNaive(float* C, const float* A, const float* B, int M, int N, int K) {
    const unsigned ix = blockIdx.x * blockDim.x + threadIdx.x;  // row of C
    const unsigned iy = blockIdx.y * blockDim.y + threadIdx.y;  // column of C
    if (ix < unsigned(M) && iy < unsigned(N)) {
        float t = 0;
        for (int k = 0; k < K; ++k) t += A[size_t(ix) * K + k] * B[size_t(k) * N + iy];
        C[size_t(ix) * N + iy] = t;
    }
}

// Seed 000's row-major matrix: M(row, col) = *(M.elements + row * M.stride + col).
// (The seed's first version has no stride: stride == width.)
struct Matrix {
    int width;
    int height;
    int stride;
    float* elements;
};

// MatMulKernel (seed 000, no shared memory): threadIdx.x walks the COLUMNS,
// so a warp reads 16 consecutive B elements per row (coalesced), one A
// element per row (a broadcast) and writes consecutive C. A is read from
// global memory N times and B M times: every FMA needs 8 bytes from L1/L2.
// Look for: 5-20x faster than MatMulKernelNaive with the same arithmetic.
constexpr int BLOCK_SIZE = 16;
__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < C.height && col < C.width) {  // the seed has no guard: see pitfalls()
        float Cvalue = 0;
        for (int e = 0; e < A.width; ++e)
            Cvalue += A.elements[size_t(row) * A.stride + e] * B.elements[size_t(e) * B.stride + col];
        C.elements[size_t(row) * C.stride + col] = Cvalue;
    }
}

// Seed 000's helpers for the tiled kernel, kept recognisable. One change: a
// sub-matrix knows how much of it lies inside its parent (width/height less
// than BLOCK_SIZE at the right and bottom edges), and GetElement reads 0
// outside it, so the tiled kernel is correct for any size.
__device__ float GetElement(const Matrix A, int row, int col) {
    return (row < A.height && col < A.width) ? A.elements[size_t(row) * A.stride + col] : 0.0f;
}
__device__ void SetElement(Matrix A, int row, int col, float value) {
    if (row < A.height && col < A.width) A.elements[size_t(row) * A.stride + col] = value;
}
// The BLOCK_SIZE x BLOCK_SIZE sub-matrix of A at block (row, col), clipped to A.
__device__ Matrix GetSubMatrix(Matrix A, int row, int col) {
    Matrix Asub;
    Asub.width = min(BLOCK_SIZE, A.width - BLOCK_SIZE * col);
    Asub.height = min(BLOCK_SIZE, A.height - BLOCK_SIZE * row);
    Asub.stride = A.stride;
    Asub.elements = &A.elements[size_t(A.stride) * BLOCK_SIZE * row + size_t(BLOCK_SIZE) * col];
    return Asub;
}

// MatMulKernelTiled (seed 000, shared memory): each block stages a 16 x 16
// tile of A and of B in shared memory and every thread reuses each loaded
// element 16 times. A is now read N / 16 times and B M / 16 times from global
// memory. Look for: global load bytes / 16 in ncu; the kernel is now bound by
// shared-memory loads (two LDS per FMA), which is what the next steps cut.
__global__ void MatMulKernelTiled(Matrix A, Matrix B, Matrix C) {
    const int blockRow = blockIdx.y, blockCol = blockIdx.x;
    Matrix Csub = GetSubMatrix(C, blockRow, blockCol);
    float Cvalue = 0;
    const int row = threadIdx.y, col = threadIdx.x;
    // Every thread runs every iteration (no early return): the barriers below
    // must be reached by the whole block.
    for (int m = 0; m < (A.width + BLOCK_SIZE - 1) / BLOCK_SIZE; ++m) {
        Matrix Asub = GetSubMatrix(A, blockRow, m);
        Matrix Bsub = GetSubMatrix(B, m, blockCol);
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[row][col] = GetElement(Asub, row, col);  // 0 outside A: adds nothing
        Bs[row][col] = GetElement(Bsub, row, col);
        __syncthreads();  // the tiles are complete
        for (int e = 0; e < BLOCK_SIZE; ++e) Cvalue += As[row][e] * Bs[e][col];
        __syncthreads();  // nobody still reads them when the next ones are stored
    }
    SetElement(Csub, row, col, Cvalue);
}

// ===========================================================================
// 2. More work per thread: register blocking.
// ===========================================================================

// sgemm1DBlocktiling: a 64 x 64 block tile, BK = 8, and each of 512 threads
// computes a column of TM = 8 results. One B value loaded from shared memory
// now feeds 8 FMAs: shared loads per FMA fall from 2 to 9/8.
// Look for: ~2-3x over MatMulKernelTiled; ncu's shared wavefronts per FMA.
namespace t1d {
constexpr int BM = 64, BN = 64, BK = 8, TM = 8, THREADS = BM * BN / TM;
}
__global__ void __launch_bounds__(t1d::THREADS)
sgemm1DBlocktiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                   int K) {
    using namespace t1d;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int tid = threadIdx.x;
    const int threadCol = tid % BN, threadRow = tid / BN;            // 64 columns x 8 row groups of TM
    const int aRow = tid / BK, aCol = tid % BK, bRow = tid / BN, bCol = tid % BN;  // one load of each
    float acc[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int ar = bm + aRow, ak = k0 + aCol, bk = k0 + bRow, bc = bn + bCol;
        As[aRow * BK + aCol] = (ar < M && ak < K) ? A[size_t(ar) * K + ak] : 0.0f;
        Bs[bRow * BN + bCol] = (bk < K && bc < N) ? B[size_t(bk) * N + bc] : 0.0f;
        __syncthreads();
        for (int dot = 0; dot < BK; ++dot) {
            const float b = Bs[dot * BN + threadCol];
#pragma unroll
            for (int r = 0; r < TM; ++r) acc[r] += As[(threadRow * TM + r) * BK + dot] * b;
        }
        __syncthreads();
    }
    const int col = bn + threadCol;
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int row = bm + threadRow * TM + r;
        if (row < M && col < N) C[size_t(row) * N + col] = acc[r];
    }
}

// sgemm2DBlocktiling: a 128 x 128 tile, 256 threads, each computing an 8 x 8
// outer product per k from 8 A and 8 B values in registers: 16 shared loads
// for 64 FMAs. Loads are still 4 bytes and A is kept m-major, so reading a
// column of it is 8 separate LDS.32.
// Look for: the big jump of the worklog; ncu: shared ld wavefronts drop again.
namespace t2d {
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, THREADS = (BM / TM) * (BN / TN);
}
__global__ void __launch_bounds__(t2d::THREADS)
sgemm2DBlocktiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                   int K) {
    using namespace t2d;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN, tid = threadIdx.x;
    const int threadCol = tid % (BN / TN), threadRow = tid / (BN / TN);
    float acc[TM][TN] = {};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < BM * BK / THREADS; ++i) {  // 4 elements of A, 4 of B per thread
            const int idx = i * THREADS + tid;
            const int ar = idx / BK, ak = idx % BK, br = idx / BN, bc = idx % BN;
            const int gr = bm + ar, gk = k0 + ak, gkb = k0 + br, gc = bn + bc;
            As[ar * BK + ak] = (gr < M && gk < K) ? A[size_t(gr) * K + gk] : 0.0f;
            Bs[br * BN + bc] = (gkb < K && gc < N) ? B[size_t(gkb) * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int dot = 0; dot < BK; ++dot) {
#pragma unroll
            for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dot];
#pragma unroll
            for (int j = 0; j < TN; ++j) regN[j] = Bs[dot * BN + threadCol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int row = bm + threadRow * TM + i, col = bn + threadCol * TN + j;
            if (row < M && col < N) C[size_t(row) * N + col] = acc[i][j];
        }
}

// sgemmVectorize: the same tiles with 16-byte accesses everywhere. A is
// stored TRANSPOSED (k-major) in shared memory so that a thread's 8 A values
// for one k are contiguous: 2 LDS.128 + 2 LDS.128 instead of 16 LDS.32.
// Needs K % 4 == 0 and N % 4 == 0 (16-byte aligned rows); the launcher runs
// sgemm2DBlocktiling otherwise and says so.
// Look for: fewer instructions per FMA (SASS: LDS.128), but still bank
// conflicts on B (16 threads read float4s 32 bytes apart) that warp tiling removes.
__global__ void __launch_bounds__(t2d::THREADS)
sgemmVectorize(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace t2d;
    __shared__ __align__(16) float As[BK * BM];  // As[k][m]
    __shared__ __align__(16) float Bs[BK * BN];  // Bs[k][n]
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN, tid = threadIdx.x;
    const int threadCol = tid % (BN / TN), threadRow = tid / (BN / TN);
    const int aRow = tid / (BK / 4), aK = (tid % (BK / 4)) * 4;  // one float4 of A per thread
    const int bK = tid / (BN / 4), bCol = (tid % (BN / 4)) * 4;  // one float4 of B per thread
    float acc[TM][TN] = {};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int gr = bm + aRow, gk = k0 + aK;  // K % 4 == 0: gk < K means all 4 are inside
        const float4 a = (gr < M && gk < K) ? *reinterpret_cast<const float4*>(&A[size_t(gr) * K + gk])
                                            : make_float4(0, 0, 0, 0);
        As[(aK + 0) * BM + aRow] = a.x;
        As[(aK + 1) * BM + aRow] = a.y;
        As[(aK + 2) * BM + aRow] = a.z;
        As[(aK + 3) * BM + aRow] = a.w;
        const int gkb = k0 + bK, gc = bn + bCol;  // N % 4 == 0: likewise
        *reinterpret_cast<float4*>(&Bs[bK * BN + bCol]) =
            (gkb < K && gc < N) ? *reinterpret_cast<const float4*>(&B[size_t(gkb) * N + gc]) : make_float4(0, 0, 0, 0);
        __syncthreads();
#pragma unroll
        for (int dot = 0; dot < BK; ++dot) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&regM[i]) =
                    *reinterpret_cast<const float4*>(&As[dot * BM + threadRow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&regN[j]) =
                    *reinterpret_cast<const float4*>(&Bs[dot * BN + threadCol * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = bm + threadRow * TM + i;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = bn + threadCol * TN + j;
            if (col < N)  // N % 4 == 0: all four are inside
                *reinterpret_cast<float4*>(&C[size_t(row) * N + col]) =
                    make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
        }
    }
}

// ===========================================================================
// 3. Warp tiling, then a multi-stage cp.async pipeline.
// ===========================================================================
//
// The thread layout both kernels below share. A block of BM x BN is split
// into warp tiles of WM x WN; inside a warp the 32 lanes form 8 (m) x 4 (n),
// and each lane owns (WM / 32) x (WN / 16) sub-tiles of 4 x 4, placed 32 rows
// and 16 columns apart:
//     rows  warp_m * WM + i * 32 + lane_m * 4 + 0..3    (i < WM / 32)
//     cols  warp_n * WN + j * 16 + lane_n * 4 + 0..3    (j < WN / 16)
// For one k a warp then reads 8 distinct float4 of A (128 contiguous bytes)
// and 4 distinct float4 of B (64 bytes; lanes with equal lane_n broadcast):
// every LDS.128 is one conflict-free wavefront. A 64 x 32 warp tile gives
// each thread 8 x 8 results: 4 LDS.128 per 64 FFMA.

// sgemmWarptiling: the layout above with register-staged 16-byte loads (A
// transposed on its way into shared memory), one shared buffer, two barriers
// per k-tile. Needs K % 4 == 0 and N % 4 == 0 (else sgemm2DBlocktiling runs).
// Look for: zero shared bank conflicts in ncu; the remaining gap is latency:
// while a tile is loaded nobody computes.
namespace wt {
constexpr int BM = 128, BN = 128, BK = 16, WM = 64, WN = 32;
constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * (BN / WN) * 32;
constexpr int WMI = WM / 32, WNI = WN / 16, TM = 4 * WMI, TN = 4 * WNI;
constexpr int LDA = BM + 4;  // As[k][m], rows padded: the transposing stores conflict less
}
__global__ void __launch_bounds__(wt::THREADS, 2)
sgemmWarptiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace wt;
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

// --- cp.async (sm_80+): global -> shared without passing through registers.
// With src_size 0 the destination is zero-filled and nothing is read: that is
// how edge tiles are padded. On older GPUs the same helpers load synchronously.
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
    static_assert(THREADS % BK == 0 && BM % (THREADS / BK) == 0, "A copies must divide evenly");
    static_assert(THREADS % BN == 0 && BK % (THREADS / BN) == 0, "4-byte B copies must divide evenly");
    static_assert(THREADS % (BN / 4) == 0 && BK % (THREADS / (BN / 4)) == 0, "16-byte B copies must divide evenly");
};

// The pieces sgemmCpAsync and sgemmStreamK share.
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

    // Issues the copies of the next k-tile into one stage's buffers.
    __device__ __forceinline__ void load(float* as, float* bs, int K, int ldb) {
        const bool a_k_ok = a_k + next_k < k_span;
#pragma unroll
        for (int it = 0; it < A_IT; ++it)
            cp_async4(as + a_k * T::LDA + a_m + it * A_ROWS, a_src + size_t(it) * A_ROWS * K,
                      a_k_ok && ((a_rows_ok >> it) & 1));
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
};

// One k of the warp-tiled outer product: WMI + WNI conflict-free LDS.128 of
// this lane's A and B values (as, bs: the stage's buffers at the lane's first
// row and column), then TM x TN FFMA.
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
        for (int j = 0; j < T::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

// This lane's results, rows row0 + 32 (i / 4) + i % 4 and columns col0 + 16 j
// + 0..3 of the M x N row-major `out`, guarded at the edges.
template <class T>
__device__ __forceinline__ void store_acc(float* out, const float (&acc)[T::TM][T::TN], int row0, int col0, int M,
                                          int N) {
    const bool vec = (N % 4) == 0;
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

// Grouped tile order: tile t of tiles_m x tiles_n goes down groups of GROUP_M
// tile rows, so tiles that run at the same time share A and B panels in L2.
constexpr int GROUP_M = 8;
template <class T>
__device__ __forceinline__ void tile_origin(int t, int tiles_m, int tiles_n, int* bm, int* bn) {
    const int per_group = GROUP_M * tiles_n, first_m = (t / per_group) * GROUP_M;
    const int group_m = min(tiles_m - first_m, GROUP_M);
    *bm = (first_m + (t % per_group) % group_m) * T::BM;
    *bn = ((t % per_group) / group_m) * T::BN;
}

// sgemmCpAsync: the warp-tiled kernel fed by a STAGES-deep cp.async pipeline
// in dynamic shared memory (up to 227 KB with cudaFuncAttributeMaxDynamicSharedMemorySize).
// While the warps compute on k-tile kt, k-tiles kt+1 .. kt+STAGES-1 are in
// flight: one barrier per k-tile and no registers spent on staging.
//  - The copies follow CopyPlan (above). For N % 4 != 0 the launcher first
//    copies B into a buffer with ldb = N rounded up to 4 (zero-padded), which
//    costs one pass over B and measured faster than 4-byte copies of B.
//  - Edge tiles are zero-filled (src_size 0), the epilogue guards the stores.
//  - Blocks take tiles in the grouped order of tile_origin().
//  - Split-K (gridDim.z > 1): block z sums k in [z * k_split, (z+1) * k_split)
//    and writes its partial result to `partial` (gridDim.z x M x N); a second
//    kernel adds them. Used where M x N has too few tiles to fill the GPU.
// Look for: SASS (sass_ops.py) with LDGSTS, LDS.128, 88-93% FFMA in the main
// loop and no LDL/STL (local memory spills).
template <class T, bool B16>
__global__ void __launch_bounds__(T::THREADS, T::MINB)
sgemmCpAsync(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K,
             int ldb, int k_split, float* __restrict__ partial) {
    extern __shared__ __align__(16) float smem[];
    float* As = smem;
    float* Bs = smem + T::STAGES * T::A_STAGE;

    int bm, bn;
    tile_origin<T>(blockIdx.x, (M + T::BM - 1) / T::BM, (N + T::BN - 1) / T::BN, &bm, &bn);
    const int k_begin = blockIdx.z * k_split, k_span = min(K - k_begin, k_split);
    const int num_tiles = (k_span + T::BK - 1) / T::BK;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm0 = (warp / T::WARPS_N) * T::WM + (lane / 4) * 4;
    const int wn0 = (warp % T::WARPS_N) * T::WN + (lane % 4) * 4;

    CopyPlan<T, B16> copy(tid);
    copy.start(A, B, M, K, ldb, bm, bn, k_begin);

    // Prologue: STAGES - 1 tiles in flight (an empty group where there are fewer).
#pragma unroll
    for (int s = 0; s < T::STAGES - 1; ++s) {
        if (s < num_tiles) copy.load(As + s * T::A_STAGE, Bs + s * T::B_STAGE, K, ldb);
        cp_async_commit();
    }

    float acc[T::TM][T::TN] = {};
    int read_stage = 0, write_stage = T::STAGES - 1;
    for (int kt = 0; kt < num_tiles; ++kt) {
        cp_async_wait<T::STAGES - 2>();  // tile kt has landed (for this thread's copies) ...
        __syncthreads();                 // ... for everybody's, and tile kt-1's buffer is free
        if (kt + T::STAGES - 1 < num_tiles)
            copy.load(As + write_stage * T::A_STAGE, Bs + write_stage * T::B_STAGE, K, ldb);
        cp_async_commit();
        const float* as = As + read_stage * T::A_STAGE + wm0;
        const float* bs = Bs + read_stage * T::B_STAGE + wn0;
#pragma unroll
        for (int kk = 0; kk < T::BK; ++kk) mma_k<T>(as, bs, kk, acc);
        read_stage = read_stage + 1 == T::STAGES ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == T::STAGES ? 0 : write_stage + 1;
    }
    cp_async_wait<0>();  // no copy may still target shared memory when the block exits

    store_acc<T>(partial ? partial + size_t(blockIdx.z) * M * N : C, acc, bm + wm0, bn + wn0, M, N);
}

// sgemmStreamK: the same tiles and pipeline in a persistent kernel. The grid
// is one wave (P = SMs x blocks per SM), and the work is counted in k-tiles
// ("iterations"), not output tiles, so every block gets the same share of it
// whatever the number of tiles (Osama et al., "Stream-K", PPoPP 2023):
//  - tiles [0, dp_tiles) are whole: block c computes tiles c, c + P, ...
//    (where tiles are split, dp_tiles is a multiple of P: every block gets as
//    many whole tiles, and then its split range);
//  - the k-iterations of the remaining tiles (a last wave at most half full,
//    and one full wave) are cut into P equal, contiguous ranges, one per
//    block. A tile cut between blocks is finished by the block that did its
//    first k-tile (its "owner", for which it is the last piece of work): the
//    others park their partial sums in `partials` and raise a flag; the owner
//    waits for the flags, adds the partials in block order (deterministic)
//    and writes C.
// The cp.async pipeline runs across tile boundaries: the first k-tiles of the
// next tile are loaded while the last ones of the current tile are computed
// and written. A last k-tile of K % BK columns computes only those columns.
// The owner's wait needs every block of the grid resident at once: the
// launcher sizes P from cudaOccupancyMaxActiveBlocksPerMultiprocessor, and a
// wait that takes ~seconds traps instead of hanging.
// Look for: the shapes where sgemmCpAsync loses most of a wave (2049 x 2047 x
// 2051: 272 tiles of 128 x 128 for 264 slots); and the ~6% the persistent
// loop costs where nothing is split (why the launcher then runs sgemmCpAsync).
struct StreamK {
    int tiles_m, tiles_n;  // output tiles
    int iters;             // k-tiles per output tile: ceil(K / BK)
    int dp_tiles;          // whole tiles (a multiple of the grid where any are split)
    int sk_base, sk_extra; // split part: block c gets sk_base + (c < sk_extra) iterations
    __host__ __device__ int sk_begin(int c) const { return c * sk_base + (c < sk_extra ? c : sk_extra); }
    __host__ __device__ int dp_count(int c, int blocks) const { return c < dp_tiles ? (dp_tiles - 1 - c) / blocks + 1 : 0; }
};

// Where local iteration j of block c (of `blocks`) falls: tile t, its k-tile
// kt, and kb, the first k-tile of the piece of t that this block computes
// (the kernel takes kb from the piece's first iteration; the tests check
// that the two agree).
// Stateless (a few integer divisions per k-tile), so the kernel's main loop
// keeps no walker in registers.
struct Step { int t, kt, kb; };
__host__ __device__ __forceinline__ Step locate(const StreamK& p, int c, int blocks, int j) {
    const int dp_iters = p.dp_count(c, blocks) * p.iters;
    if (j < dp_iters) return {c + (j / p.iters) * blocks, j % p.iters, 0};
    const int g0 = p.sk_begin(c), g = g0 + (j - dp_iters), base = (g / p.iters) * p.iters;
    return {p.dp_tiles + g / p.iters, g - base, g0 > base ? g0 - base : 0};
}
__host__ __device__ __forceinline__ int block_iters(const StreamK& p, int c, int blocks) {
    return p.dp_count(c, blocks) * p.iters + p.sk_begin(c + 1) - p.sk_begin(c);
}

__device__ __forceinline__ void flag_raise(int* flag) {
    cuda::atomic_ref<int, cuda::thread_scope_device>(*flag).store(1, cuda::memory_order_release);
}
// Waits (bounded) for *flag == 1, then clears it for the next launch.
__device__ __forceinline__ void flag_wait_and_clear(int* flag) {
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    for (long long spins = 0; f.load(cuda::memory_order_acquire) == 0; ++spins) {
        if (spins > (1ll << 25)) __trap();  // ~seconds: a block of the grid is not resident
        __nanosleep(64);
    }
    f.store(0, cuda::memory_order_relaxed);
}

template <class T, bool B16>
__global__ void __launch_bounds__(T::THREADS, T::MINB)
sgemmStreamK(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K,
             int ldb, const StreamK plan, float* __restrict__ partials, int* __restrict__ flags) {
    extern __shared__ __align__(16) float smem[];
    float* As = smem;
    float* Bs = smem + T::STAGES * T::A_STAGE;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm0 = (warp / T::WARPS_N) * T::WM + (lane / 4) * 4;
    const int wn0 = (warp % T::WARPS_N) * T::WN + (lane % 4) * 4;
    const int c = blockIdx.x, blocks = gridDim.x;
    const int total = block_iters(plan, c, blocks);  // k-tiles of this block
    const int first_split = plan.dp_count(c, blocks) * plan.iters;

    // The loads run STAGES - 1 iterations ahead of the computation; a piece
    // of work starts at k-tile 0 of a tile or at the first split iteration.
    CopyPlan<T, B16> copy(tid);
    auto load = [&](int j, int stage) {
        const Step st = locate(plan, c, blocks, j);
        if (st.kt == 0 || j == first_split) {
            int bm, bn;
            tile_origin<T>(st.t, plan.tiles_m, plan.tiles_n, &bm, &bn);
            copy.start(A, B, M, K, ldb, bm, bn, st.kt * T::BK);
        }
        copy.load(As + stage * T::A_STAGE, Bs + stage * T::B_STAGE, K, ldb);
    };
#pragma unroll
    for (int s = 0; s < T::STAGES - 1; ++s) {
        if (s < total) load(s, s);
        cp_async_commit();
    }

    float acc[T::TM][T::TN] = {};
    int read_stage = 0, write_stage = T::STAGES - 1;
    int it = 0;  // k-tiles of this block done
    // One k-tile: wait for its copies, start the copies STAGES - 1 ahead, and
    // return this k-tile's stage; the caller computes on it.
    auto next_stage = [&]() {
        cp_async_wait<T::STAGES - 2>();
        __syncthreads();
        if (it + T::STAGES - 1 < total) load(it + T::STAGES - 1, write_stage);
        cp_async_commit();
        const int stage = read_stage;
        read_stage = read_stage + 1 == T::STAGES ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == T::STAGES ? 0 : write_stage + 1;
        ++it;
        return stage;
    };
    while (it < total) {
        // A piece: k-tiles kb .. ke - 1 of one tile. The inner loop is sgemmCpAsync's;
        // a last k-tile of K % BK columns computes only those, after it.
        const Step st = locate(plan, c, blocks, it);
        const int tile = st.t, kb = st.kt, ke = min(plan.iters, kb + (total - it));
        const int kk_last = K - (plan.iters - 1) * T::BK;  // columns of the tile's last k-tile
        const int full_end = (ke == plan.iters && kk_last < T::BK) ? ke - 1 : ke;
        for (int kt = kb; kt < full_end; ++kt) {
            const int stage = next_stage();
            const float* as = As + stage * T::A_STAGE + wm0;
            const float* bs = Bs + stage * T::B_STAGE + wn0;
#pragma unroll
            for (int kk = 0; kk < T::BK; ++kk) mma_k<T>(as, bs, kk, acc);
        }
        if (full_end < ke) {
            const int stage = next_stage();
            const float* as = As + stage * T::A_STAGE + wm0;
            const float* bs = Bs + stage * T::B_STAGE + wn0;
#pragma unroll 1
            for (int kk = 0; kk < kk_last; ++kk) mma_k<T>(as, bs, kk, acc);
        }

        // The piece is done.
        int bm, bn;
        tile_origin<T>(tile, plan.tiles_m, plan.tiles_n, &bm, &bn);
        float4* mine = reinterpret_cast<float4*>(partials + size_t(c) * T::BM * T::BN) + tid;
        if (kb > 0) {  // not the tile's first k-tile: park the partial sum for the owner
#pragma unroll
            for (int i = 0; i < T::TM; ++i)
#pragma unroll
                for (int j = 0; j < T::WNI; ++j)
                    __stcg(mine + (i * T::WNI + j) * T::THREADS,
                           make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]));
            __threadfence();
            __syncthreads();
            if (tid == 0) flag_raise(&flags[c]);
        } else {
            if (ke < plan.iters) {  // the owner of a split tile: add the later blocks' partial sums
                const int tile_end = (tile - plan.dp_tiles + 1) * plan.iters;
                for (int o = c + 1; o < blocks && plan.sk_begin(o) < tile_end; ++o) {
                    if (tid == 0) flag_wait_and_clear(&flags[o]);
                    __syncthreads();
                    const float4* theirs =
                        reinterpret_cast<const float4*>(partials + size_t(o) * T::BM * T::BN) + tid;
#pragma unroll
                    for (int i = 0; i < T::TM; ++i)
#pragma unroll
                        for (int j = 0; j < T::WNI; ++j) {
                            const float4 v = __ldcg(theirs + (i * T::WNI + j) * T::THREADS);
                            acc[i][4 * j] += v.x;
                            acc[i][4 * j + 1] += v.y;
                            acc[i][4 * j + 2] += v.z;
                            acc[i][4 * j + 3] += v.w;
                        }
                }
            }
            store_acc<T>(C, acc, bm + wm0, bn + wn0, M, N);
        }
#pragma unroll
        for (int i = 0; i < T::TM; ++i)
#pragma unroll
            for (int j = 0; j < T::TN; ++j) acc[i][j] = 0;
    }
    cp_async_wait<0>();
}

// Split-K's second step: C = sum over the splits of their partial results.
__global__ void splitKReduce(const float* __restrict__ partial, float* __restrict__ C, size_t mn, int splits) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += size_t(gridDim.x) * blockDim.x) {
        float s = partial[i];
        for (int z = 1; z < splits; ++z) s += partial[size_t(z) * mn + i];
        C[i] = s;
    }
}

// ===========================================================================
// Host side: launchers, the kernel lists, the CPU reference, size checks.
// ===========================================================================

using LaunchFn = std::string (*)(const float* A, const float* B, float* C, int M, int N, int K);

struct Kernel {
    const char* name;
    LaunchFn launch;  // launches on the default stream, returns what ran
    const char* what;
};

inline Matrix make_matrix(const float* p, int height, int width) {
    return Matrix{width, height, width, const_cast<float*>(p)};
}

inline std::string launch_naive004(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(32, 8), grid(ceil_div(M, 32), ceil_div(N, 8));  // x over rows, as in the seed
    MatMulKernelNaive<<<grid, block>>>(C, A, B, M, N, K);
    CHECK_LAUNCH();
    return launch_string(grid, block);
}

inline std::string launch_naive000(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(BLOCK_SIZE, BLOCK_SIZE), grid(ceil_div(N, BLOCK_SIZE), ceil_div(M, BLOCK_SIZE));
    MatMulKernel<<<grid, block>>>(make_matrix(A, M, K), make_matrix(B, K, N), make_matrix(C, M, N));
    CHECK_LAUNCH();
    return launch_string(grid, block);
}

inline std::string launch_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(BLOCK_SIZE, BLOCK_SIZE), grid(ceil_div(N, BLOCK_SIZE), ceil_div(M, BLOCK_SIZE));
    MatMulKernelTiled<<<grid, block>>>(make_matrix(A, M, K), make_matrix(B, K, N), make_matrix(C, M, N));
    CHECK_LAUNCH();
    return launch_string(grid, block);
}

inline std::string launch_1d(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(t1d::THREADS), grid(ceil_div(N, t1d::BN), ceil_div(M, t1d::BM));
    sgemm1DBlocktiling<<<grid, block>>>(A, B, C, M, N, K);
    CHECK_LAUNCH();
    return launch_string(grid, block);
}

inline std::string launch_2d(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(t2d::THREADS), grid(ceil_div(N, t2d::BN), ceil_div(M, t2d::BM));
    sgemm2DBlocktiling<<<grid, block>>>(A, B, C, M, N, K);
    CHECK_LAUNCH();
    return launch_string(grid, block);
}

inline std::string launch_vectorize(const float* A, const float* B, float* C, int M, int N, int K) {
    if (K % 4 != 0 || N % 4 != 0) return launch_2d(A, B, C, M, N, K) + " (ran 2D: K or N % 4 != 0)";
    const dim3 block(t2d::THREADS), grid(ceil_div(N, t2d::BN), ceil_div(M, t2d::BM));
    sgemmVectorize<<<grid, block>>>(A, B, C, M, N, K);
    CHECK_LAUNCH();
    return launch_string(grid, block);
}

inline std::string launch_warptiling(const float* A, const float* B, float* C, int M, int N, int K) {
    if (K % 4 != 0 || N % 4 != 0) return launch_2d(A, B, C, M, N, K) + " (ran 2D: K or N % 4 != 0)";
    const dim3 block(wt::THREADS), grid(ceil_div(N, wt::BN), ceil_div(M, wt::BM));
    sgemmWarptiling<<<grid, block>>>(A, B, C, M, N, K);
    CHECK_LAUNCH();
    return launch_string(grid, block);
}

// B copied into rows of ldb floats (ldb = N rounded up to 4), zero-padded.
__global__ void padColumns(const float* __restrict__ B, float* __restrict__ Bp, int K, int N, int ldb) {
    const size_t total = size_t(K) * ldb;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
        const int r = int(i / ldb), c = int(i % ldb);
        Bp[i] = c < N ? B[size_t(r) * N + c] : 0.0f;
    }
}

// A grow-only device buffer (the launchers' scratch: split-K partials, padded
// B, stream-K partials). Allocated on the first (checked, untimed) launch,
// kept: a launcher that allocated inside the timed region would time cudaMalloc.
enum Scratch { kSplitKPartials, kPaddedB, kStreamKPartials, kScratchKinds };
inline float* scratch(Scratch which, size_t floats) {
    static float* p[kScratchKinds] = {};
    static size_t have[kScratchKinds] = {};
    if (floats > have[which]) {
        if (p[which]) CHECK(cudaFree(p[which]));
        CHECK(cudaMalloc(&p[which], floats * sizeof(float)));
        have[which] = floats;
    }
    return p[which];
}
// Stream-K's flags, one per block: zero between launches (each owner clears
// the flags it consumed), so they are cleared only when allocated.
inline int* streamk_flags(size_t n) {
    static int* p = nullptr;
    static size_t have = 0;
    if (n > have) {
        if (p) CHECK(cudaFree(p));
        CHECK(cudaMalloc(&p, n * sizeof(int)));
        CHECK(cudaMemset(p, 0, n * sizeof(int)));
        have = n;
    }
    return p;
}

// The B that sgemmCpAsync and sgemmStreamK read: B itself when N % 4 == 0
// (16-byte copies), else with pad a copy with rows of ldb = N rounded up to 4
// floats (one pass over B), else B with 4-byte copies. Sets *ldb, *b16, *what.
inline const float* prepare_b(const float* B, int N, int K, bool pad, int* ldb, bool* b16, std::string* what) {
    pad = pad && N % 4 != 0;
    *b16 = N % 4 == 0 || pad;
    *ldb = N;
    *what = pad ? " B padded" : *b16 ? "" : " B:4-byte";
    if (!pad) return B;
    *ldb = (N + 3) / 4 * 4;
    float* bp = scratch(kPaddedB, size_t(K) * *ldb);
    const size_t total = size_t(K) * *ldb;
    const int blocks = int(std::min<size_t>((total + 255) / 256, 8 * size_t(sm_count())));
    padColumns<<<blocks, 256>>>(B, bp, K, N, *ldb);
    CHECK_LAUNCH();
    return bp;
}

// > 48 KB of dynamic shared memory must be asked for, once per kernel.
template <class Kernel>
void allow_dynamic_smem(Kernel kernel, size_t bytes) {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               int(cudaSharedmemCarveoutMaxShared)));
}

template <class T>
std::string tile_name() {
    char s[64];
    std::snprintf(s, sizeof s, "%dx%dx%d w%dx%d s%d", T::BM, T::BN, T::BK, T::WM, T::WN, T::STAGES);
    return s;
}

// Runs sgemmCpAsync<T> with `splits` slices of K (1: no split). pad_b: for
// N % 4 != 0, copy B to a 16-byte-aligned pitch first (else 4-byte copies of B).
template <class T>
std::string launch_cpasync_cfg(const float* A, const float* B, float* C, int M, int N, int K, int splits,
                               bool pad_b = true) {
    int ldb;
    bool b16;
    std::string b_what;
    const float* b = prepare_b(B, N, K, pad_b, &ldb, &b16, &b_what);
    auto kernel = b16 ? sgemmCpAsync<T, true> : sgemmCpAsync<T, false>;
    static bool configured[2] = {false, false};
    if (!configured[b16]) {
        allow_dynamic_smem(kernel, T::SMEM);
        configured[b16] = true;
    }
    const int k_tiles = ceil_div(K, T::BK);
    splits = std::max(1, std::min(splits, k_tiles));
    const int k_split = ceil_div(k_tiles, splits) * T::BK;
    splits = ceil_div(K, k_split);  // no empty slice
    const size_t mn = size_t(M) * N;
    float* partial = splits > 1 ? scratch(kSplitKPartials, mn * splits) : nullptr;
    const dim3 block(T::THREADS), grid(ceil_div(M, T::BM) * ceil_div(N, T::BN), 1, splits);
    kernel<<<grid, block, T::SMEM>>>(A, b, C, M, N, K, ldb, k_split, partial);
    CHECK_LAUNCH();
    if (splits > 1) {
        const int threads = 256, blocks = int(std::min<size_t>((mn + threads - 1) / threads, 8 * size_t(sm_count())));
        splitKReduce<<<blocks, threads>>>(partial, C, mn, splits);
        CHECK_LAUNCH();
    }
    return tile_name<T>() + (splits > 1 ? " splitK" + std::to_string(splits) : "") + b_what;
}

// How sgemmStreamK splits the work of M x N x K over `slots` resident blocks.
// Only a last wave at most half full is worth splitting; it is split together
// with one full wave, so that every block gets one to two tiles' worth of
// k-tiles and a tile is cut between at most two blocks. The waves before
// stay whole. Measured on the H200 at 2049 x 2047 x 2051 (128 x 128 x 32,
// 272 tiles for 264 slots): 81% of cuBLAS split this way; 77% when only the
// 8 tiles of the last wave were shared out over all 264 blocks (every tile
// in ~33 pieces, which its owner adds one by one); 75% for sgemmCpAsync.
// With no whole wave (fewer tiles than slots / 2) every tile is split.
struct StreamKLaunch {
    StreamK plan;
    int blocks;
    bool split() const { return plan.sk_base + plan.sk_extra > 0; }
};
inline StreamKLaunch plan_streamk(int M, int N, int K, int bm, int bn, int bk, int slots) {
    StreamK p{};
    p.tiles_m = ceil_div(M, bm);
    p.tiles_n = ceil_div(N, bn);
    p.iters = ceil_div(K, bk);
    const long long tiles = 1ll * p.tiles_m * p.tiles_n, full = tiles / slots, rest = tiles % slots;
    long long blocks = slots, sk_iters = 0;
    if (rest == 0 || 2 * rest > slots) {  // the waves come out (nearly) even: nothing split
        p.dp_tiles = int(tiles);
        blocks = std::min<long long>(slots, tiles);
    } else {
        p.dp_tiles = int(full > 0 ? (full - 1) * slots : 0);
        sk_iters = (tiles - p.dp_tiles) * p.iters;
        // No whole wave: at least ~4 k-tiles per block, at most one block per k-tile
        // (an empty range would leave its tile's owner waiting forever).
        if (full == 0) blocks = std::min(std::min<long long>(slots, sk_iters), std::max(rest, (sk_iters + 3) / 4));
    }
    p.sk_base = int(sk_iters / blocks);
    p.sk_extra = int(sk_iters % blocks);
    return {p, int(blocks)};
}

// Runs sgemmStreamK<T>: one wave of persistent blocks.
// slots: resident blocks to plan for (0: SMs x what fits one SM; the tests
// pass small numbers to force every kind of split at small sizes).
template <class T>
std::string launch_streamk_cfg(const float* A, const float* B, float* C, int M, int N, int K, bool pad_b = true,
                               int slots = 0) {
    int ldb;
    bool b16;
    std::string b_what;
    const float* b = prepare_b(B, N, K, pad_b, &ldb, &b16, &b_what);
    auto kernel = b16 ? sgemmStreamK<T, true> : sgemmStreamK<T, false>;
    static int per_sm[2] = {0, 0};
    if (!per_sm[b16]) {
        allow_dynamic_smem(kernel, T::SMEM);
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm[b16], kernel, T::THREADS, T::SMEM));
        if (per_sm[b16] < 1) {
            std::fprintf(stderr, "sgemmStreamK %s: no block fits an SM\n", tile_name<T>().c_str());
            std::exit(1);
        }
    }
    const int resident = sm_count() * per_sm[b16];
    const StreamKLaunch L = plan_streamk(M, N, K, T::BM, T::BN, T::BK, slots > 0 ? std::min(slots, resident) : resident);
    float* partials = scratch(kStreamKPartials, size_t(L.blocks) * T::BM * T::BN);
    int* flags = streamk_flags(L.blocks);
    kernel<<<L.blocks, T::THREADS, T::SMEM>>>(A, b, C, M, N, K, ldb, L.plan, partials, flags);
    CHECK_LAUNCH();
    const long long tiles = 1ll * L.plan.tiles_m * L.plan.tiles_n;
    char s[128];
    std::snprintf(s, sizeof s, " P%d tiles %lld = %d whole + %lld split", L.blocks, tiles, L.plan.dp_tiles,
                  tiles - L.plan.dp_tiles);
    return tile_name<T>() + s + b_what;
}

// The configurations `--tune` compares; the launcher below picks among them.
using Tile128 = Tile<128, 128, 16, 64, 32, 3, 2>;        // 8 warps, 8 x 8 per thread, 2 blocks per SM
using Tile128k32 = Tile<128, 128, 32, 64, 32, 3, 2>;     // BK 32: half the barriers per FMA (100 KB)
using Tile128x256 = Tile<128, 256, 16, 64, 64, 3, 1>;    // 8 x 16 per thread: 6 LDS.128 per 128 FFMA
using Tile128x256k32 = Tile<128, 256, 32, 64, 64, 3, 1>; // the same, BK 32 (149 KB)
using Tile256x128 = Tile<256, 128, 16, 64, 64, 3, 1>;    // 8 x 16 per thread, tall
using Tile128x64 = Tile<128, 64, 16, 64, 32, 4, 3>;      // 4 warps, for grids with few large tiles
using Tile64 = Tile<64, 64, 16, 32, 32, 4, 4>;           // 4 warps, 4 x 8 per thread

struct Config {
    const char* name;
    std::string (*launch)(const float*, const float*, float*, int, int, int, int splits, bool pad_b);
    std::string (*streamk)(const float*, const float*, float*, int, int, int, bool pad_b, int slots);
    int bm, bn, bk, blocks_per_sm;
    double rate;   // fraction of cuBLAS measured with --tune on the H200 at 4096^3 and 8192^3 (see choose())
    double fixed;  // per-block cost of filling and draining the pipeline, in units of k (see choose())
};
#define MATMUL_CONFIG(T) launch_cpasync_cfg<T>, launch_streamk_cfg<T>, T::BM, T::BN, T::BK
inline const std::vector<Config>& configs() {
    static const std::vector<Config> c = {
        {"128x128x16 s3", MATMUL_CONFIG(Tile128), 2, 0.87, 20},
        {"128x128x32 s3", MATMUL_CONFIG(Tile128k32), 2, 0.90, 20},
        {"128x256x16 s3", MATMUL_CONFIG(Tile128x256), 1, 0.92, 50},
        {"128x256x32 s3", MATMUL_CONFIG(Tile128x256k32), 1, 0.93, 50},
        {"256x128x16 s3", MATMUL_CONFIG(Tile256x128), 1, 0.83, 50},
        {"128x64x16 s4", MATMUL_CONFIG(Tile128x64), 3, 0.84, 15},
        {"64x64x16 s4", MATMUL_CONFIG(Tile64), 4, 0.80, 10},
    };
    return c;
}
#undef MATMUL_CONFIG

// What the launcher runs for M x N x K: the configuration and split-K factor
// with the best modelled rate,
//     rate x used x (blocks / (waves x slots)) x k / (k rounded up to BK + fixed) x (0.95 if split),
// i.e. the measured rate at large sizes, times the part of the tiles inside
// C (M x N over the tiles' area), times the fraction of the last wave
// that has work (132 SMs x blocks per SM slots per wave), times the share of
// a block's time spent on useful k (short K slices pay the pipeline's fill
// and drain, which overlaps less the fewer blocks share an SM), less the
// extra pass over C that split-K costs. Split slices keep >= 256 of K.
struct Choice { int config; int splits; double score; };
inline Choice choose_for(int M, int N, int K, int sms) {
    Choice best{0, 1, -1};
    for (size_t c = 0; c < configs().size(); ++c) {
        const Config& cfg = configs()[c];
        const double tiles = double(ceil_div(M, cfg.bm)) * ceil_div(N, cfg.bn), slots = double(sms) * cfg.blocks_per_sm;
        for (int s : {1, 2, 3, 4, 6, 8, 16}) {
            if (s > 1 && K / s < 256) break;
            const int k_slice = ceil_div(ceil_div(K, cfg.bk), s) * cfg.bk;
            const double blocks = tiles * s, waves = std::ceil(blocks / slots);
            const double k_used = double(K) / s;
            const double used = double(M) * N / (tiles * cfg.bm * cfg.bn);  // edge tiles' idle part
            const double score =
                cfg.rate * used * (blocks / (waves * slots)) * k_used / (k_slice + cfg.fixed) * (s > 1 ? 0.95 : 1.0);
            if (score > best.score) best = {int(c), s, score};
        }
    }
    return best;
}
inline Choice choose(int M, int N, int K) { return choose_for(M, N, K, sm_count()); }

inline std::string launch_cpasync(const float* A, const float* B, float* C, int M, int N, int K) {
    const Choice c = choose(M, N, K);
    // Padding B costs a pass over it and a launch: only worth it where the product is large.
    const bool pad = double(M) * N * K >= double(1 << 30);
    return configs()[c.config].launch(A, B, C, M, N, K, c.splits, pad);
}

// Where stream-K pays: wave quantization. Among the configurations with tiles
// of at least 128 x 128 (the smaller tiles' persistent loop measured 3-15%
// slower than sgemmCpAsync's at 4096^3 on the H200, against 6% for these)
// whose plan_streamk() splits a last wave at most half full (or fewer tiles
// than half the slots), the one with the best modelled rate,
//     rate x used x (mean k-tiles per slot) / (k-tiles of the busiest block + fixed / BK),
// with choose()'s measured rate and fixed cost (columns of k); score -1 if
// none qualifies. At 2049 x 2047 x 2051 this gives 0.85 for 128 x 256 x 32,
// which measured 0.820 of cuBLAS in --tune (sgemmCpAsync's best: 0.752).
inline Choice choose_streamk_for(int M, int N, int K, int sms) {
    Choice best{-1, 1, -1};
    for (size_t c = 0; c < configs().size(); ++c) {
        const Config& cfg = configs()[c];
        if (cfg.bm < 128 || cfg.bn < 128) continue;
        const int slots = sms * cfg.blocks_per_sm;
        const StreamKLaunch L = plan_streamk(M, N, K, cfg.bm, cfg.bn, cfg.bk, slots);
        const StreamK& p = L.plan;
        const double tiles = double(p.tiles_m) * p.tiles_n;
        if (!L.split()) continue;
        const double busiest = double(p.dp_count(0, L.blocks)) * p.iters + p.sk_base + (p.sk_extra > 0);
        const double used = double(M) * N / (tiles * cfg.bm * cfg.bn);
        const double score = cfg.rate * used * (tiles * p.iters / slots) / (busiest + double(cfg.fixed) / cfg.bk);
        if (score > best.score) best = {int(c), 1, score};
    }
    return best;
}

// sgemmStreamK where it pays (a mostly idle last wave), else sgemmCpAsync's
// own choice; the launch column says which ran.
inline bool prefer_streamk(const Choice& sk, const Choice& dp) { return sk.score > dp.score; }
inline std::string launch_streamk(const float* A, const float* B, float* C, int M, int N, int K) {
    const Choice sk = choose_streamk_for(M, N, K, sm_count()), dp = choose(M, N, K);
    const bool pad = double(M) * N * K >= double(1 << 30);
    if (prefer_streamk(sk, dp)) return configs()[sk.config].streamk(A, B, C, M, N, K, pad, 0);
    return configs()[dp.config].launch(A, B, C, M, N, K, dp.splits, pad) + " (ran sgemmCpAsync: no idle wave)";
}

// sgemmAutotuned: no new kernel, a launcher that measures instead of
// modelling. The first call for a shape times every configuration of
// sgemmCpAsync x split-K {1, 2, 3, 4, 6, 8} and of sgemmStreamK (a warm-up
// and the median of 3 each) and keeps the fastest for that shape; later calls
// run it. (cuBLASLt's algorithm search and Triton's autotune do the same.)
// Below kAutotuneMinFlops a launch takes microseconds and the models of
// sgemmCpAsync and sgemmStreamK decide; so they do with MATMUL_AUTOTUNE=model
// in the environment (profile.sh: under ncu every trial launch would be
// replayed and profiled). The launch column says what ran.
// Look for: the row that is never below the two before it, and where it
// differs from their model-based choices.
constexpr double kAutotuneMinFlops = double(1 << 27);
struct Tuned { int config, splits; };  // splits 0: sgemmStreamK
inline std::string launch_tuned(const Tuned& t, const float* A, const float* B, float* C, int M, int N, int K) {
    const bool pad = double(M) * N * K >= double(1 << 30);
    const Config& cfg = configs()[t.config];
    return t.splits > 0 ? cfg.launch(A, B, C, M, N, K, t.splits, pad) : cfg.streamk(A, B, C, M, N, K, pad, 0);
}
inline std::string launch_autotuned(const float* A, const float* B, float* C, int M, int N, int K) {
    static std::map<std::array<int, 3>, Tuned> cache;
    const std::array<int, 3> key = {M, N, K};
    static const bool model_only = [] {
        const char* e = std::getenv("MATMUL_AUTOTUNE");
        return e && std::string(e) == "model";
    }();
    const bool measure = !model_only && 2.0 * M * N * K >= kAutotuneMinFlops;
    auto it = cache.find(key);
    if (it == cache.end()) {
        Tuned best{0, 1};
        if (!measure) {
            const Choice sk = choose_streamk_for(M, N, K, sm_count()), dp = choose(M, N, K);
            best = prefer_streamk(sk, dp) ? Tuned{sk.config, 0} : Tuned{dp.config, dp.splits};
        } else {
            double best_ms = std::numeric_limits<double>::infinity();
            for (int c = 0; c < int(configs().size()); ++c)
                for (int splits : {0, 1, 2, 3, 4, 6, 8}) {
                    const Tuned t{c, splits};
                    const double ms = common::time_median_ms([&] { launch_tuned(t, A, B, C, M, N, K); }, 1, 3);
                    if (ms < best_ms) { best_ms = ms; best = t; }
                }
        }
        it = cache.emplace(key, best).first;
    }
    return launch_tuned(it->second, A, B, C, M, N, K) + (it->second.splits == 0 ? " streamK" : "") +
           (measure ? " (autotuned)" : model_only ? " (model: MATMUL_AUTOTUNE=model)" : " (model: tiny)");
}

// Every kernel of the chapter, in teaching order.
inline const std::vector<Kernel>& kernels() {
    static const std::vector<Kernel> k = {
        {"MatMulKernelNaive", launch_naive004, "seed 004: threadIdx.x walks rows, nothing coalesced"},
        {"MatMulKernel", launch_naive000, "seed 000: one thread per C element, coalesced B"},
        {"MatMulKernelTiled", launch_tiled, "seed 000: 16x16 shared-memory tiles (Matrix, GetSubMatrix)"},
        {"sgemm1DBlocktiling", launch_1d, "64x64 tile, 8 results per thread (a column)"},
        {"sgemm2DBlocktiling", launch_2d, "128x128 tile, 8x8 results per thread"},
        {"sgemmVectorize", launch_vectorize, "16-byte loads, A transposed in smem, LDS.128"},
        {"sgemmWarptiling", launch_warptiling, "warp tiles 64x32, conflict-free LDS.128"},
        {"sgemmCpAsync", launch_cpasync, "multi-stage cp.async pipeline, grouped blocks, split-K"},
        {"sgemmStreamK", launch_streamk, "persistent blocks, equal shares of k-tiles (stream-K)"},
        {"sgemmAutotuned", launch_autotuned, "the fastest configuration, measured once per shape"},
    };
    return k;
}

// PITFALL (never in the default run; --pitfalls and the tests): seed 000's
// tiled kernel as written. Its host code sizes the grid as B.width /
// BLOCK_SIZE and A.height / BLOCK_SIZE, and the kernel loops A.width /
// BLOCK_SIZE times without guards: it assumes every size is a multiple of 16.
// Elsewhere the last rows and columns of C are never written, and the last
// A.width % 16 terms of every sum are dropped. (It reads nothing out of
// bounds: the rounded-down grid only touches whole tiles.)
__device__ Matrix GetSubMatrixSeed(Matrix A, int row, int col) {
    Matrix Asub;
    Asub.width = BLOCK_SIZE;
    Asub.height = BLOCK_SIZE;
    Asub.stride = A.stride;
    Asub.elements = &A.elements[size_t(A.stride) * BLOCK_SIZE * row + size_t(BLOCK_SIZE) * col];
    return Asub;
}
__global__ void MatMulKernelSeedGrid(Matrix A, Matrix B, Matrix C) {
    Matrix Csub = GetSubMatrixSeed(C, blockIdx.y, blockIdx.x);
    float Cvalue = 0;
    const int row = threadIdx.y, col = threadIdx.x;
    for (int m = 0; m < (A.width / BLOCK_SIZE); ++m) {
        Matrix Asub = GetSubMatrixSeed(A, blockIdx.y, m);
        Matrix Bsub = GetSubMatrixSeed(B, m, blockIdx.x);
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[row][col] = Asub.elements[size_t(row) * Asub.stride + col];
        Bs[row][col] = Bsub.elements[size_t(row) * Bsub.stride + col];
        __syncthreads();
        for (int e = 0; e < BLOCK_SIZE; ++e) Cvalue += As[row][e] * Bs[e][col];
        __syncthreads();
    }
    Csub.elements[size_t(row) * Csub.stride + col] = Cvalue;
}

inline std::string launch_seed_grid(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(BLOCK_SIZE, BLOCK_SIZE), grid(N / BLOCK_SIZE, M / BLOCK_SIZE);  // the seed's grid
    if (grid.x == 0 || grid.y == 0) return "grid(0) (nothing launched: a side < 16)";
    MatMulKernelSeedGrid<<<grid, block>>>(make_matrix(A, M, K), make_matrix(B, K, N), make_matrix(C, M, N));
    CHECK_LAUNCH();
    return launch_string(grid, block) + " (seed: sizes / 16)";
}

inline const std::vector<Kernel>& pitfalls() {
    static const std::vector<Kernel> k = {
        {"MatMulKernelSeedGrid", launch_seed_grid, "PITFALL seed 000's grid B.width/16: edges unwritten"},
    };
    return k;
}

inline const Kernel* find_kernel(const std::string& name) {
    for (const Kernel& k : kernels()) if (name == k.name) return &k;
    for (const Kernel& k : pitfalls()) if (name == k.name) return &k;
    return nullptr;
}

// ---------------------------------------------------------------------------
// CPU reference (double) and the tolerance.
// ---------------------------------------------------------------------------

// C[i][j] = sum_k A[i][k] B[k][j] in double, and S[i][j] = sum_k |A[i][k] B[k][j]|
// (the scale of the rounding error), for all i, j. i-k-j order: rows of B and
// C are walked contiguously.
inline void matmul_cpu(const float* A, const float* B, double* C, double* S, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        double* c = C + size_t(i) * N;
        double* s = S + size_t(i) * N;
        for (int j = 0; j < N; ++j) c[j] = s[j] = 0;
        for (int k = 0; k < K; ++k) {
            const double a = A[size_t(i) * K + k];
            const float* b = B + size_t(k) * N;
            for (int j = 0; j < N; ++j) {
                c[j] += a * b[j];
                s[j] += std::fabs(a * b[j]);
            }
        }
    }
}

// One element of the same.
inline void matmul_cpu_element(const float* A, const float* B, int N, int K, int i, int j, double* c, double* s) {
    double acc = 0, abs_acc = 0;
    for (int k = 0; k < K; ++k) {
        const double p = double(A[size_t(i) * K + k]) * B[size_t(k) * N + j];
        acc += p;
        abs_acc += std::fabs(p);
    }
    *c = acc;
    *s = abs_acc;
}

// The tolerance of one element: |c - exact| <= tolerance_factor(K) * S with
// S = sum_k |a_ik b_kj|. Each of the K fp32 additions rounds by at most
// u/2 (u = 2^-24) of a partial sum, and no partial sum exceeds S; with
// rounding errors of random sign they add like a random walk, standard
// deviation <= sqrt(K / 12) u S. 4 sqrt(K) u S is 14 of those standard
// deviations, for any summation order (tiles, split-K, cuBLAS's own). The
// worst case, K u S, is never reached and would let a dropped term through at
// large K; even so, at K >= ~16000 a typical term (|a b| ~ 0.25 for inputs in
// [-1, 1)) falls under 4 sqrt(K) u S. Where the exact result matters the
// tests use integer inputs, for which every kernel must be exact.
inline double tolerance_factor(int K) { return 4.0 * std::sqrt(double(K)) * std::ldexp(1.0, -24); }

// ---------------------------------------------------------------------------
// Sizes the program accepts.
// ---------------------------------------------------------------------------

// grid.y of the seed kernels is at most 65535 blocks of 16 (or 8) rows;
// each matrix at most 2^31 floats (8 GiB), so every element index fits an
// int64 and the CPU side stays sane. Index products (row * ld) are size_t.
constexpr int64_t kMaxDim = 65535LL * 8;
constexpr int64_t kMaxElements = int64_t(1) << 31;

// "" if M x N x K can run, else why not (checked before any GPU work).
inline std::string check_shape(int64_t M, int64_t N, int64_t K) {
    if (M < 1 || N < 1 || K < 1 || M > kMaxDim || N > kMaxDim || K > kMaxDim)
        return "M, N and K must be in [1, " + std::to_string(kMaxDim) + "]";
    if (M * K > kMaxElements || K * N > kMaxElements || M * N > kMaxElements)
        return "each matrix must hold at most 2^31 elements (got A " + std::to_string(M) + "x" + std::to_string(K) +
               ", B " + std::to_string(K) + "x" + std::to_string(N) + ", C " + std::to_string(M) + "x" +
               std::to_string(N) + ")";
    return "";
}

}  // namespace matmul
