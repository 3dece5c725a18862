// The cp.async pipeline of 01_matmul: the pieces that sgemmCpAsync (step 8)
// and sgemmStreamK (step 9) share, device side and host side.
//
//   cp_async4/16, commit, wait  the copies global -> shared (sm_80+)
//   Tile<...>                   one configuration: block, warp tile, stages
//   CopyPlan, mma_k, store_acc, tile_origin   the kernels' building blocks
//   scratch(), prepare_b()      the launchers' buffers and the B they read
//   configs(), Plan, run_plan   the configurations and what a launcher runs
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/07_sgemmWarptiling.cuh"

namespace matmul {

// ---- cp.async (sm_80+): global -> shared without passing through registers --
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
// + 0..3 of the M x N row-major `out`, guarded at the edges; float4 stores
// where N % 4 == 0 and `out` is 16-byte aligned, 4-byte stores otherwise.
template <class T>
__device__ __forceinline__ void store_acc(float* out, const float (&acc)[T::TM][T::TN], int row0, int col0, int M,
                                          int N) {
    const bool vec = (N % 4) == 0 && (reinterpret_cast<uintptr_t>(out) % 16) == 0;  // float4 stores
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

// ---- Host side: scratch buffers, the B the kernels read ---------------------

// Blocks of a grid-stride loop over n elements: enough to fill the GPU
// (kGridStrideBlocksPerSm per SM), no more than there is work for.
constexpr int kGridStrideBlocksPerSm = 8;
inline int grid_stride_blocks(size_t n, int threads) {
    return int(std::min<size_t>(common::ceil_div(n, size_t(threads)), size_t(kGridStrideBlocksPerSm) * common::sm_count()));
}

// A grow-only device buffer (the launchers' scratch: split-K partials, padded
// B, stream-K partials). Allocated on the first (checked, untimed) launch,
// kept: a launcher that allocated inside the timed region would time cudaMalloc.
// The split-K partials are bounded: a launcher never asks for more than
// kSplitKScratchMaxBytes of them (it runs fewer splits instead; see
// max_splits_in_scratch), so the autotuner's search cannot grow them to
// 8 x M x N floats (2 GiB at 8192^2) and keep that for the whole run.
enum Scratch { kSplitKPartials, kPaddedB, kStreamKPartials, kPaddedA, kSplitA, kScratchKinds };
constexpr size_t kSplitKScratchMaxBytes = size_t(256) << 20;  // 256 MiB: 4 slices of a 4096^2 C
struct ScratchBuffers {
    float* p[kScratchKinds] = {};
    size_t floats[kScratchKinds] = {};
};
inline ScratchBuffers& scratch_buffers() {
    static ScratchBuffers s;
    return s;
}
inline float* scratch(Scratch which, size_t floats) {
    ScratchBuffers& s = scratch_buffers();
    if (floats > s.floats[which]) {
        if (s.p[which]) CHECK(cudaFree(s.p[which]));
        CHECK(cudaMalloc(&s.p[which], floats * sizeof(float)));
        s.floats[which] = floats;
    }
    return s.p[which];
}
// Bytes held now by one kind of scratch (the tests check the split-K bound).
inline size_t scratch_bytes(Scratch which) { return scratch_buffers().floats[which] * sizeof(float); }

// The most split-K slices whose partial results (splits x M x N floats) fit
// in kSplitKScratchMaxBytes; at least 1 (one slice needs no partials).
inline int max_splits_in_scratch(int M, int N) {
    const size_t per_split = size_t(M) * N * sizeof(float);
    return int(std::max<size_t>(1, std::min<size_t>(kSplitKScratchMaxBytes / per_split, 1 << 20)));
}

// B copied into rows of ldb floats (ldb = N rounded up to 4), zero-padded.
__global__ void padColumns(const float* __restrict__ B, float* __restrict__ Bp, int K, int N, int ldb) {
    const size_t total = size_t(K) * ldb;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
        const int r = int(i / ldb), c = int(i % ldb);
        Bp[i] = c < N ? B[size_t(r) * N + c] : 0.0f;
    }
}

// The B that sgemmCpAsync and sgemmStreamK read: B itself where it can be
// read with 16-byte copies (N % 4 == 0 and B 16-byte aligned), else with
// `pad` a copy with rows of ldb = N rounded up to 4 floats in an aligned
// buffer (one pass over B), else B with 4-byte copies. The tensor-core steps
// pad A the same way (`which` = kPaddedA, `name` "A": A is M rows of K).
struct PreparedB {
    const float* b;    // what the kernel reads
    int ldb;           // its row pitch in floats
    bool b16;          // 16-byte copies (the kernel's B16)
    std::string what;  // for the launch column
};
inline PreparedB prepare_b(const float* B, int N, int K, bool pad, Scratch which = kPaddedB, const char* name = "B") {
    const bool direct16 = N % 4 == 0 && aligned16(B);
    const std::string why = N % 4 != 0 || direct16 ? "" : std::string(" (") + name + " not 16-byte aligned)";
    pad = pad && !direct16;
    const bool b16 = direct16 || pad;
    if (!pad) return {B, N, b16, b16 ? "" : std::string(" ") + name + ":4-byte" + why};
    const int ldb = common::ceil_div(N, 4) * 4;
    const size_t total = size_t(K) * ldb;
    float* bp = scratch(which, total);
    padColumns<<<grid_stride_blocks(total, 256), 256>>>(B, bp, K, N, ldb);
    CHECK_LAUNCH();
    return {bp, ldb, true, std::string(" ") + name + " padded" + why};
}

// What the epilogue does with C: store_acc writes float4 where N % 4 == 0
// and C is 16-byte aligned, 4-byte stores otherwise; the launch column says
// so where only the alignment stops it.
inline std::string c_what(const float* C, int N) {
    return N % 4 == 0 && !aligned16(C) ? " C:4-byte (not 16-byte aligned)" : "";
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

// ---- The configurations, and what a launcher runs ---------------------------

// One configuration's launchers (defined in steps 8 and 9): sgemmCpAsync with
// `splits` slices of K (1: no split), and sgemmStreamK planned for `slots`
// resident blocks (0: what fits the GPU). pad_b: where B cannot be read with
// 16-byte copies, copy it to a 16-byte pitch first (else 4-byte copies of B).
template <class T>
std::string launch_sgemmCpAsync_with(const float* A, const float* B, float* C, int M, int N, int K, int splits,
                                     bool pad_b = true);
template <class T>
std::string launch_sgemmStreamK_with(const float* A, const float* B, float* C, int M, int N, int K, bool pad_b = true,
                                     int slots = 0);

// The configurations `--tune` compares; the launchers pick among them.
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
    double rate;   // the models' rate: fraction of cuBLAS at 4096^3 and 8192^3 from --tune (step 8's model)
    double fixed;  // per-block cost of filling and draining the pipeline, in units of k (step 8's model)
};
#define MATMUL_CONFIG(T) launch_sgemmCpAsync_with<T>, launch_sgemmStreamK_with<T>, T::BM, T::BN, T::BK
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

// What a launcher runs for one shape: the decision of steps 8-10, in one
// place (plan_sgemmCpAsync, plan_for, the autotuner's pick), and what
// `--tune` marks with a `*`.
struct Plan {
    int config = 0;       // index into configs()
    int splits = 1;       // sgemmCpAsync's split-K slices (1: none); unused for stream-K
    bool streamk = false; // sgemmStreamK instead of sgemmCpAsync
    bool pad_b = false;   // where B cannot be read with 16-byte copies, copy it to a 16-byte pitch first
    double score = -1;    // the model's rate (fraction of cuBLAS); -1: nothing qualifies
};

// Padding B costs a pass over it and a launch: only worth it where the
// product is large (kPadBMinMacs multiply-adds and more).
constexpr double kPadBMinMacs = double(1 << 30);
inline bool pad_b_pays(int M, int N, int K) { return double(M) * N * K >= kPadBMinMacs; }

inline std::string run_plan(const Plan& p, const float* A, const float* B, float* C, int M, int N, int K) {
    const Config& cfg = configs()[p.config];
    return p.streamk ? cfg.streamk(A, B, C, M, N, K, p.pad_b, 0) : cfg.launch(A, B, C, M, N, K, p.splits, p.pad_b);
}

}  // namespace matmul
