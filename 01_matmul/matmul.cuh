// matmul.cuh - single-precision matrix multiply, from the seeds' naive kernel to
// a multi-stage cp.async SGEMM at cuBLAS speed, a persistent stream-K kernel for
// the shapes whose tiles leave a wave idle, and a launcher that picks the
// fastest configuration per shape by measuring it; then the tensor cores:
// TF32 mma.sync (sm_80+), and Hopper's TMA + mbarrier + wgmma pipeline
// (sm_90a) at cuBLAS TF32 speed, 3xTF32 for fp32 accuracy from it, and
// pairs of blocks that share A's tiles through TMA multicast.
//
// C (M x N) = A (M x K) * B (K x N), all row-major float:
//     C[i * N + j] = sum_k A[i * K + k] * B[k * N + j]
// 2 M N K flops on 4 (M K + K N + M N) bytes: at 4096^3 that is 683 flops per
// byte, far above what HBM needs (an H200 does ~67 TFLOP/s fp32 FMA on
// ~4.8 TB/s: NVIDIA's datasheet), so every kernel is limited by how often it goes back to
// memory (global, then shared, then registers) per FMA. Each step moves the
// data one level closer to the FMA units and reuses it more. The tensor-core
// steps (11-17) compute in TF32 (10-bit mantissa inputs, fp32 accumulation):
// a different, less accurate product, with its own tolerance and its own
// peer (cuBLAS in TF32); step 16 buys fp32 accuracy back with three TF32
// products per fp32 one.
//
// One step per file, in teaching order (steps/SS_kernelName.cuh: the kernel,
// what to look for, its launcher, and the pitfall that breaks it, if any);
// helpers the steps include: steps/operands.cuh (tile order, scratch,
// padded operands, split-K's sum), steps/pipeline.cuh (the cp.async pieces of
// steps 8, 9 and 11), steps/tf32.cuh, steps/hopper.cuh and steps/wgmma_n256.cuh
// (the TF32, TMA and wgmma instructions). plans.cuh holds every configuration
// and which one runs for a shape on this GPU. Every
// kernel is correct for any M, N, K >= 1 (1 x 1 x 1, K = 1, primes, tall and
// skinny, not tile multiples) and any float-aligned A, B, C (the 16-byte paths
// check alignment and fall back, or pad a copy). The seeds' pitfall (an unguarded grid) is
// in pitfalls(), never in the default run. Seeds 000 and 004: the top
// README's Sources section.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include "01_matmul/steps/01_MatMulKernelNaive.cuh"
#include "01_matmul/steps/02_MatMulKernel.cuh"
#include "01_matmul/steps/03_MatMulKernelTiled.cuh"
#include "01_matmul/steps/04_sgemm1DBlocktiling.cuh"
#include "01_matmul/steps/05_sgemm2DBlocktiling.cuh"
#include "01_matmul/steps/06_sgemmVectorize.cuh"
#include "01_matmul/steps/07_sgemmWarptiling.cuh"
#include "01_matmul/steps/08_sgemmCpAsync.cuh"
#include "01_matmul/steps/09_sgemmStreamK.cuh"
#include "01_matmul/steps/11_sgemmTf32Mma.cuh"
#include "01_matmul/steps/12_sgemmTmaWgmma.cuh"
#include "01_matmul/steps/13_sgemmTmaWgmmaWide.cuh"
#include "01_matmul/steps/14_sgemmTmaWgmmaPersistent.cuh"
#include "01_matmul/steps/15_sgemmTmaWgmmaSplitK.cuh"
#include "01_matmul/steps/16_sgemm3xTf32.cuh"
#include "01_matmul/steps/17_sgemmTmaWgmmaMulticast.cuh"
#include "01_matmul/plans.cuh"                       // which configuration each launcher runs
#include "01_matmul/steps/10_sgemmAutotuned.cuh"     // a launcher over plans.cuh's candidates

namespace matmul {

// ---------------------------------------------------------------------------
// The kernel lists (looked up by name: common/kernel_list.hpp)
// ---------------------------------------------------------------------------

using LaunchFn = std::string (*)(const float* A, const float* B, float* C, int M, int N, int K);

// What a kernel computes with: fp32 FMA (checked with the fp32 tolerance,
// timed against cuBLAS fp32), TF32 tensor cores (the TF32 tolerance, against
// cuBLAS TF32), or three TF32 products per fp32 one (step 16: its own
// tolerance, against cuBLAS fp32, whose accuracy it aims for).
enum class Math { Fp32, Tf32, Tf32x3 };

struct Kernel {
    const char* name;
    LaunchFn launch;  // launches on the default stream, returns what ran
    const char* what;
    bool seed;        // one of the seeds' kernels (slow: skipped in --sweep at the largest sizes)
    Math math = Math::Fp32;
    std::string (*waived)() = nullptr;  // "" where it can run here, else why not (nullptr: runs anywhere)
};

// "" where kernel k runs on this GPU with this build, else why not.
inline std::string waiver(const Kernel& k) { return k.waived ? k.waived() : std::string(); }

// Every kernel of the chapter, in teaching order.
inline const std::vector<Kernel>& kernels() {
    static const std::vector<Kernel> k = {
        {"MatMulKernelNaive", launch_MatMulKernelNaive, "seed 004: threadIdx.x walks rows, nothing coalesced", true},
        {"MatMulKernel", launch_MatMulKernel, "seed 000: one thread per C element, coalesced B", true},
        {"MatMulKernelTiled", launch_MatMulKernelTiled, "seed 000: 16x16 shared-memory tiles (Matrix, GetSubMatrix)", true},
        {"sgemm1DBlocktiling", launch_sgemm1DBlocktiling, "64x64 tile, 8 results per thread (a column)", false},
        {"sgemm2DBlocktiling", launch_sgemm2DBlocktiling, "128x128 tile, 8x8 results per thread", false},
        {"sgemmVectorize", launch_sgemmVectorize, "16-byte loads, A transposed in smem, LDS.128", false},
        {"sgemmWarptiling", launch_sgemmWarptiling, "warp tiles 64x32, conflict-free LDS.128", false},
        {"sgemmCpAsync", launch_sgemmCpAsync, "multi-stage cp.async pipeline, grouped blocks, split-K", false,
         Math::Fp32, waived_fp32_plans},
        {"sgemmStreamK", launch_sgemmStreamK, "persistent blocks, equal shares of k-tiles (stream-K)", false,
         Math::Fp32, waived_fp32_plans},
        {"sgemmAutotuned", launch_sgemmAutotuned, "the fastest configuration, measured once per shape", false,
         Math::Fp32, waived_fp32_plans},
        {"sgemmTf32Mma", launch_sgemmTf32Mma, "TF32 tensor cores: mma.sync m16n8k8 fed by cp.async", false,
         Math::Tf32, waived_sgemmTf32Mma},
        {"sgemmTmaWgmma", launch_sgemmTmaWgmma, "sm_90a: TMA + mbarrier ring, wgmma from shared memory", false,
         Math::Tf32, waived_sgemmTmaWgmma},
        {"sgemmTmaWgmmaWide", launch_sgemmTmaWgmmaWide, "sm_90a: 256-row tiles (wgmma n256), setmaxnreg", false,
         Math::Tf32, waived_sgemmTmaWgmmaWide},
        {"sgemmTmaWgmmaPersistent", launch_sgemmTmaWgmmaPersistent, "sm_90a: one block per SM walks the tiles",
         false, Math::Tf32, waived_sgemmTmaWgmmaPersistent},
        {"sgemmTmaWgmmaSplitK", launch_sgemmTmaWgmmaSplitK, "sm_90a: K in slices where C has few tiles", false,
         Math::Tf32, waived_sgemmTmaWgmmaSplitK},
        {"sgemm3xTf32", launch_sgemm3xTf32, "sm_90a: x = big + small, 3 TF32 wgmmas: fp32 accuracy", false,
         Math::Tf32x3, waived_sgemm3xTf32},
        {"sgemmTmaWgmmaMulticast", launch_sgemmTmaWgmmaMulticast, "sm_90a: step 15 in clusters of 2 sharing A (multicast)",
         false, Math::Tf32, waived_sgemmTmaWgmmaMulticast},
    };
    return k;
}

// The seeds' broken patterns (--pitfalls and the tests only; steps/03).
inline const std::vector<Kernel>& pitfalls() {
    static const std::vector<Kernel> k = {
        {"MatMulKernelSeedGrid", launch_MatMulKernelSeedGrid, "PITFALL seed 000's grid B.width/16: edges unwritten", true},
    };
    return k;
}

// One problem size, M x N x K (the program's and the tests').
struct Shape { int m, n, k; };

inline std::string name_of(const Shape& s) {
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// ---------------------------------------------------------------------------
// CPU reference (double) and the tolerance.
// ---------------------------------------------------------------------------

// C[i][j] = sum_k A[i][k] B[k][j] in double, S[i][j] = sum_k |A[i][k] B[k][j]|
// (the scale of the rounding error) and, if Q is given, Q[i][j] =
// sqrt(sum_k (A[i][k] B[k][j])^2) (the TF32 tolerance's), for all i, j.
// i-k-j order: rows of B and C are walked contiguously.
inline void matmul_cpu(const float* A, const float* B, double* C, double* S, int M, int N, int K,
                       double* Q = nullptr) {
    for (int i = 0; i < M; ++i) {
        double* c = C + size_t(i) * N;
        double* s = S + size_t(i) * N;
        double* q = Q ? Q + size_t(i) * N : nullptr;
        for (int j = 0; j < N; ++j) c[j] = s[j] = 0;
        if (q) for (int j = 0; j < N; ++j) q[j] = 0;
        for (int k = 0; k < K; ++k) {
            const double a = A[size_t(i) * K + k];
            const float* b = B + size_t(k) * N;
            for (int j = 0; j < N; ++j) {
                c[j] += a * b[j];
                s[j] += std::fabs(a * b[j]);
            }
            if (q) for (int j = 0; j < N; ++j) q[j] += (a * b[j]) * (a * b[j]);
        }
        if (q) for (int j = 0; j < N; ++j) q[j] = std::sqrt(q[j]);
    }
}

// One element of the same (S and Q).
inline void matmul_cpu_element(const float* A, const float* B, int N, int K, int i, int j, double* c, double* s,
                               double* q = nullptr) {
    double acc = 0, abs_acc = 0, sq = 0;
    for (int k = 0; k < K; ++k) {
        const double p = double(A[size_t(i) * K + k]) * B[size_t(k) * N + j];
        acc += p;
        abs_acc += std::fabs(p);
        sq += p * p;
    }
    *c = acc;
    *s = abs_acc;
    if (q) *q = std::sqrt(sq);
}

// The tolerance of one element: |c - exact| <= tolerance_factor(K) * S with
// S = sum_k |a_ik b_kj|. Each of the K fp32 additions rounds by at most half
// an ulp of its partial sum p, i.e. at most u |p| (u = 2^-24), and no partial
// sum exceeds S; with rounding errors of random sign (uniform in at most
// [-u S, u S]) they add like a random walk, standard deviation <=
// sqrt(K / 3) u S. 4 sqrt(K) u S is 4 sqrt(3) ~ 6.9 of those standard
// deviations (of a bound: most partial sums are far below S), for any
// summation order (tiles, split-K, cuBLAS's own). The worst case, K u S, is
// never reached and would let a dropped term through at large K; even so,
// at K >= ~26000 a typical term (|a b| ~ 0.25 for inputs in [-1, 1), S ~ K / 4)
// falls under 4 sqrt(K) u S = K^1.5 u. Where the exact result matters the
// tests use integer inputs, for which every kernel must be exact.
inline double tolerance_factor(int K) { return 4.0 * std::sqrt(double(K)) * std::ldexp(1.0, -24); }

// The TF32 tolerance of one element: |c - exact| <= tf32_tolerance(K, exact, S, Q).
// A TF32 kernel rounds each input to 10 mantissa bits: a = a_t (1 + d),
// |d| <= 2^-11 rounded to nearest (every kernel here: cvt.rna in step 11, a
// TFLOAT32 tensor map that rounds on the way from step 12 on, WORKLOG.md step
// 12b; cuBLAS TF32's measured error is the same), d in (-2^-10, 0] where the
// tensor cores are handed raw fp32 bits and drop the low 13 (a FLOAT32 tensor
// map did, before step 12b; the bound keeps that case as a margin).
// Product k is then off by a_k b_k (d_a + d_b), at most 2^-9 |a_k b_k|:
//  - truncation's mean, -2^-11 per operand, shrinks the result by ~2^-10 c;
//  - the rest is a sum of K independent terms of range <= 2^-9 |a_k b_k|:
//    Hoeffding's inequality bounds it by 3.6 x 2^-9 x Q except with
//    probability 1e-11, Q = sqrt(sum_k (a_k b_k)^2);
//  - plus the fp32 accumulation, as for the fp32 kernels.
// So 2^-10 (|c| + 8 Q) + 4 sqrt(K) 2^-24 S. At K = 4096 on inputs in [-1, 1)
// (Q ~ 21, S ~ 1000) that is ~0.2; one dropped k-step (8 products, ~0.9
// typical) still fails most elements.
inline double tf32_tolerance(int K, double exact, double S, double Q) {
    return std::ldexp(1.0, -10) * (std::fabs(exact) + 8.0 * Q) + tolerance_factor(K) * S;
}

// 3xTF32 (step 16): x = x_big + x_small leaves |x - x_big - x_small| <=
// 2^-23 |x| and the dropped a_small b_small is <= 2^-22 |a b|, so each
// product is off by at most ~2^-21 |a_k b_k|, a range of 2^-20 as TF32's
// 2^-11 is one of 2^-10: the TF32 model above with 2^-20 in place of 2^-10
// (rounded to nearest, no mean), plus fp32's.
inline double tf32x3_tolerance(int K, double exact, double S, double Q) {
    return std::ldexp(1.0, -20) * (std::fabs(exact) + 8.0 * Q) + tolerance_factor(K) * S;
}

// The tolerance of one element of a kernel of kind `math`.
inline double tolerance_of(Math math, int K, double exact, double S, double Q) {
    switch (math) {
        case Math::Tf32: return tf32_tolerance(K, exact, S, Q);
        case Math::Tf32x3: return tf32x3_tolerance(K, exact, S, Q);
        default: return tolerance_factor(K) * S;
    }
}

// ---------------------------------------------------------------------------
// Sizes the program accepts.
// ---------------------------------------------------------------------------

// grid.y of the seed kernels is at most 65535 blocks of 16 rows (steps 2-3) or
// 8 columns (step 1);
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
