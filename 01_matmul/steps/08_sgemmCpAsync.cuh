// Step 8 of 01_matmul: the warp-tiled kernel fed by a multi-stage cp.async
// pipeline (pipeline.cuh), split-K for grids with too few tiles, and the
// model that picks a configuration and a split-K factor per shape.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/pipeline.cuh"

namespace matmul {

// ---- The kernel ------------------------------------------------------------
// sgemmCpAsync: the warp-tiled kernel fed by a STAGES-deep cp.async pipeline
// in dynamic shared memory (up to 227 KB with cudaFuncAttributeMaxDynamicSharedMemorySize).
// While the warps compute on k-tile kt, k-tiles kt+1 .. kt+STAGES-1 are in
// flight: one barrier per k-tile and no registers spent on staging.
//  - The copies follow CopyPlan (pipeline.cuh). Where B cannot be read with
//    16-byte copies (N % 4 != 0, or B not 16-byte aligned) the launcher, where
//    the product is large enough to pay for it (plans.cuh, pad_b_pays), first
//    copies it into a buffer with ldb = N rounded up to 32 (zero-padded), which
//    costs one pass over B and measured faster than 4-byte copies of B
//    (WORKLOG.md, step 8d); smaller products read B with 4-byte copies.
//  - Edge tiles are zero-filled (src_size 0).
//  - The epilogue stores float4 where C allows it (N % 4 == 0, 16-byte
//    aligned); otherwise each warp passes its results through shared memory
//    (free once the pipeline has drained) and writes whole rows, 32 lanes on
//    32 consecutive columns (store_acc_staged, pipeline.cuh): 4-byte stores
//    straight from the registers would touch 16 sectors per 128 bytes.
//  - Blocks take tiles in the grouped order of tile_origin().
//  - Split-K (gridDim.z > 1): block z sums k in [z * k_split, (z+1) * k_split)
//    and writes its partial result to `partial` (gridDim.z x M x N); a second
//    kernel adds them. Used where M x N has too few tiles to fill the GPU.
// Look for: SASS (sass_ops.py) with LDGSTS, LDS.128, a main loop that is
// nearly all FFMA, and few LDL/STL (local memory spills: with CUDA 13.0,
// `-Xptxas -v` reports 40 bytes stored and 60 loaded in one configuration,
// 128x128x16 s3 with 16-byte copies of B, and none in the others).
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
        const float* as = As + read_stage * T::A_STAGE + wm0;
        const float* bs = Bs + read_stage * T::B_STAGE + wn0;
        // The copies of tile kt + STAGES - 1 go between the first multiply-adds:
        // A's after k 0, B's after k 1. Issued in one burst before k 0, they
        // stalled the warps (ncu: fixed-latency waits on the LDGSTS); 128 x 256
        // x 16 measured 2-3% faster this way, the BK = 32 tiles up to 3%
        // slower at 4096^3 (WORKLOG.md, step 8f; README exercise 20).
        const bool copy_next = kt + T::STAGES - 1 < num_tiles;
        mma_k<T>(as, bs, 0, acc);
        if (copy_next) copy.load_a(As + write_stage * T::A_STAGE, K);
        mma_k<T>(as, bs, 1, acc);
        if (copy_next) copy.load_b(Bs + write_stage * T::B_STAGE, ldb);
        cp_async_commit();
#pragma unroll
        for (int kk = 2; kk < T::BK; ++kk) mma_k<T>(as, bs, kk, acc);
        read_stage = read_stage + 1 == T::STAGES ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == T::STAGES ? 0 : write_stage + 1;
    }
    cp_async_wait<0>();  // no copy may still target shared memory when the block exits

    float* out = partial ? partial + size_t(blockIdx.z) * M * N : C;
    if (c_vec4(out, N)) {
        store_acc<T>(out, acc, bm + wm0, bn + wn0, M, N);
    } else {
        static_assert(T::THREADS / 32 * kStagedFloats<T> * sizeof(float) <= T::SMEM, "C is staged in the ring");
        __syncthreads();  // every warp is done with the ring
        store_acc_staged<T>(smem + warp * kStagedFloats<T>, out, acc, bm + wm0, bn + wn0, M, N);
    }
}

// ---- The launcher of one configuration --------------------------------------
// sgemmCpAsync<T> with `splits` slices of K (1: no split; fewer where there
// are fewer k-tiles, or where the partials would exceed kSplitKScratchMaxBytes).
template <class T>
std::string launch_sgemmCpAsync_with(const float* A, const float* B, float* C, int M, int N, int K, int splits,
                                     bool pad_b) {
    const PreparedB pb = prepare_b(B, N, K, pad_b);
    const bool b16 = pb.b16;
    auto kernel = b16 ? sgemmCpAsync<T, true> : sgemmCpAsync<T, false>;
    const std::string refused = common::request_dynamic_smem(kernel, T::SMEM, true);
    if (!refused.empty()) return "not launched: " + refused;
    const KSlices slices = k_slices(K, T::BK, splits, M, N);
    const int k_split = slices.k_split;
    splits = slices.splits;
    const size_t mn = size_t(M) * N;
    float* partial = splits > 1 ? scratch(kSplitKPartials, mn * splits) : nullptr;
    const dim3 block(T::THREADS), grid(common::ceil_div(M, T::BM) * common::ceil_div(N, T::BN), 1, splits);
    kernel<<<grid, block, T::SMEM>>>(A, pb.b, C, M, N, K, pb.ldb, k_split, partial);
    CHECK_LAUNCH();
    if (splits > 1) {
        const int threads = 256;
        splitKReduce<<<grid_stride_blocks(mn, threads), threads>>>(partial, C, mn, splits);
        CHECK_LAUNCH();
    }
    return tile_name<T>() + (splits > 1 ? " splitK" + std::to_string(splits) : c_what(C, N)) + pb.what;
}

}  // namespace matmul
