// The operands of 01_matmul's faster steps (8-17), host and device pieces
// that are not a lesson of their own:
//   aligned16(), tile_origin()    16-byte alignment; the grouped order of the output tiles
//   scratch()                     grow-only device buffers the launchers reuse
//   zeroed_counters()             grow-only counters the kernels leave at 0 (stream-K, row strip)
//   prepare_b()                   a matrix the kernels can read with 16-byte copies (padded if needed)
//   for_each_row_float4()         the padding passes' walk: a float4 of each destination row per thread
//   splitKReduce                  split-K's second pass: C = the sum of the slices' partial results
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"

namespace matmul {

// A float4 access needs a 16-byte-aligned address: the matrices must start
// on 16 bytes (an offset sub-matrix such as A + 1 does not) and every row
// must too (K % 4 == 0 for A, N % 4 == 0 for B and C).
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }
// Every row of a row-major matrix at p with a pitch of ld floats starts on 16
// bytes: what float4 accesses, 16-byte cp.async and the TMA need.
__host__ __device__ inline bool rows16(const float* p, int ld) {
    return ld % 4 == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0;
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

// Grow-only device buffers (the launchers' scratch), allocated on the first
// (checked, untimed) launch and kept, so no timed launch calls cudaMalloc.
// Split-K partials stay under kSplitKScratchMaxBytes (max_splits_in_scratch):
// the autotuner cannot grow them to 8 x M x N floats and keep that all run.
enum Scratch { kSplitKPartials, kPaddedB, kStreamKPartials, kPaddedA, kSplitA, kStripPartials, kColStripPartials,
               kScratchKinds };
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

// Grow-only device counters, zeroed when allocated: the kernels that use them
// leave them at 0 (each consumer clears what it consumed), so they are never
// cleared between launches. Stream-K's flags (one per block, step 9) and the
// strips' arrivals (one per column, or row, of blocks: row_strip.cuh).
enum Counters { kStreamKFlags, kStripArrivals, kColStripArrivals, kCounterKinds };
inline int* zeroed_counters(Counters which, size_t n) {
    static int* p[kCounterKinds] = {};
    static size_t have[kCounterKinds] = {};
    if (n > have[which]) {
        if (p[which]) CHECK(cudaFree(p[which]));
        CHECK(cudaMalloc(&p[which], n * sizeof(int)));
        CHECK(cudaMemset(p[which], 0, n * sizeof(int)));
        have[which] = n;
    }
    return p[which];
}

// The most split-K slices whose partial results (splits x M x N floats) fit
// in kSplitKScratchMaxBytes; at least 1 (one slice needs no partials).
inline int max_splits_in_scratch(int M, int N) {
    const size_t per_split = size_t(M) * N * sizeof(float);
    return int(std::max<size_t>(1, std::min<size_t>(kSplitKScratchMaxBytes / per_split, 1 << 20)));
}

// How split-K cuts K (steps 8, 15, 16): slices of whole k-tiles of bk floats,
// each k_split long but the last, at most one per k-tile and as many as the
// scratch holds for M x N partials. `splits` is what is left once no slice
// would be empty: 3 asked of 4 k-tiles gives 2 slices of 2.
struct KSlices {
    int splits, k_split;
};
inline int k_slice_length(int K, int bk, int splits) { return common::ceil_div(common::ceil_div(K, bk), splits) * bk; }
inline KSlices k_slices(int K, int bk, int splits, int M, int N) {
    splits = std::max(1, std::min({splits, common::ceil_div(K, bk), max_splits_in_scratch(M, N)}));
    const int k_split = k_slice_length(K, bk, splits);
    return {common::ceil_div(K, k_split), k_split};
}

// A padded copy's rows are whole 128-byte lines: its pitch is N rounded up
// to 32 floats. 16 bytes (4 floats) would do for 16-byte copies and the TMA,
// but then a 128-byte piece of a row (a TMA box row, a warp's copies) spans
// two lines wherever the pitch is not a multiple of 128 bytes. Measured on
// the H100 at 4999 x 5003 x 5009: the TF32 kernels 1.56 -> 2.43 x cuBLAS TF32,
// 3xTF32 1.81 -> 2.41 x SGEMM (WORKLOG.md, step 16b).
constexpr int kPadFloats = 32;
inline int padded_pitch(int n) { return common::ceil_div(n, kPadFloats) * kPadFloats; }

// The passes that copy a matrix (rows x cols, pitch cols) into rows of ld
// floats (ld % 4 == 0, the copy 16-byte aligned: padColumns below, step 16's
// splitTf32) go row by row: thread x of a block row takes float4 q = x of
// each row it visits, reads its 4 floats one by one (a source row may start
// anywhere) and writes them with one 16-byte store. Blocks of 64 x 4
// threads, a grid-stride loop down the rows.
constexpr int kRowPassThreads = 64, kRowPassRows = 4;
inline dim3 row_pass_grid(int rows, int ld) {
    const int x = common::ceil_div(ld / 4, kRowPassThreads);
    const int y = std::min({common::ceil_div(kGridStrideBlocksPerSm * common::sm_count(), x),
                            common::ceil_div(rows, kRowPassRows), 65535});
    return dim3(unsigned(x), unsigned(std::max(1, y)));
}
inline dim3 row_pass_block() { return dim3(kRowPassThreads, kRowPassRows); }
// f(r, q) for every row r and float4 q of the destination that this thread
// takes, the block being block (x, y) of a grid of ny block rows: its own
// launch's blockIdx and gridDim.y, unless the pass is part of a launch that
// does more (step 16's operandPasses, whose blocks are one row of 256 threads).
template <class F>
__device__ __forceinline__ void for_each_row_float4(int rows, int ld, F&& f, int x, int y, int ny) {
    const int t = threadIdx.y * blockDim.x + threadIdx.x;  // 0 .. kRowPassThreads * kRowPassRows - 1
    const int q = x * kRowPassThreads + t % kRowPassThreads;
    if (4 * q >= ld) return;
    for (int r = y * kRowPassRows + t / kRowPassThreads; r < rows; r += ny * kRowPassRows) f(r, q);
}

// B copied into rows of ldb floats (ldb = padded_pitch(N)), zero-padded: the
// part of block (x, y) of a grid of ny block rows.
__device__ __forceinline__ void pad_rows(const float* __restrict__ B, float* __restrict__ Bp, int K, int N, int ldb,
                                         int x, int y, int ny) {
    for_each_row_float4(K, ldb, [&](int r, int q) {
        const float* b = B + size_t(r) * N + 4 * q;
        float v[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) v[e] = 4 * q + e < N ? b[e] : 0.0f;
        reinterpret_cast<float4*>(Bp + size_t(r) * ldb)[q] = make_float4(v[0], v[1], v[2], v[3]);
    }, x, y, ny);
}
__global__ void padColumns(const float* __restrict__ B, float* __restrict__ Bp, int K, int N, int ldb) {
    common::pdl_wait();  // launched programmatically (step 16h): before any global memory access
    common::pdl_launch_dependents();
    pad_rows(B, Bp, K, N, ldb, blockIdx.x, blockIdx.y, gridDim.y);
}

// The B the kernels read: B itself where 16-byte copies can read it (N % 4
// == 0, B 16-byte aligned), else with `pad` an aligned copy with rows of
// ldb = padded_pitch(N) (one pass over B), else B with 4-byte copies.
// The tensor-core steps pad A the same way (kPaddedA, "A": M rows of K).
struct PreparedB {
    const float* b;    // what the kernel reads
    int ldb;           // its row pitch in floats
    bool b16;          // 16-byte copies (the kernel's B16)
    std::string what;  // for the launch column
    float* copy = nullptr;  // the padded copy (= b) where there is one, else nullptr
};
// launch = false: the copy's buffer is returned but not filled (the caller's
// own pass fills it: step 16j's operandPasses).
inline PreparedB prepare_b(const float* B, int N, int K, bool pad, Scratch which = kPaddedB, const char* name = "B",
                           bool launch = true) {
    const bool direct16 = rows16(B, N);
    const std::string why = N % 4 != 0 || direct16 ? "" : std::string(" (") + name + " not 16-byte aligned)";
    pad = pad && !direct16;
    const bool b16 = direct16 || pad;
    if (!pad) return {B, N, b16, b16 ? "" : std::string(" ") + name + ":4-byte" + why};
    const int ldb = padded_pitch(N);
    const size_t total = size_t(K) * ldb;
    float* bp = scratch(which, total);
    if (launch) {
        common::launch_programmatic(padColumns, row_pass_grid(K, ldb), row_pass_block(), B, bp, K, N, ldb);
        CHECK_LAUNCH();
    }
    return {bp, ldb, true, std::string(" ") + name + " padded" + why, bp};
}

// Split-K's second step: C = sum over the splits of their partial results.
// The slices hold m x n results each, contiguous; C's rows are ldc floats
// apart (ldc = n but where C's last columns are a strip's: 16_sgemm3xTf32).
__global__ void splitKReduce(const float* __restrict__ partial, float* __restrict__ C, size_t mn, int splits,
                             int n = 0, int ldc = 0) {
    common::pdl_wait();  // launched programmatically (step 16h): before any global memory access
    common::pdl_launch_dependents();
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += size_t(gridDim.x) * blockDim.x) {
        float s = partial[i];
        for (int z = 1; z < splits; ++z) s += partial[size_t(z) * mn + i];
        C[n == ldc ? i : i / n * ldc + i % n] = s;
    }
}

// " C:4-byte" where the epilogue cannot store pairs (N odd or C not 8-byte aligned).
inline std::string c_pairs_what(const float* C, int N) {
    return N % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0 ? "" : " C:4-byte";
}

// The launch column of a TMA + wgmma tile: "256x128x32 s4 2 consumer WGs regs 232/40" (the
// registers a consumer / producer thread asks for with setmaxnreg; 0: none asked for).
template <class T>
std::string wgmma_tile_name(int consumer_regs = T::CONSUMER_REGS, int producer_regs = T::PRODUCER_REGS) {
    return std::to_string(T::BM) + "x" + std::to_string(T::BN) + "x" + std::to_string(T::BK) + " s" +
           std::to_string(T::STAGES) + " 2 consumer WGs" +
           (consumer_regs ? " regs " + std::to_string(consumer_regs) + "/" + std::to_string(producer_regs) : "");
}

}  // namespace matmul
