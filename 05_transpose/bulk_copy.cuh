// bulk_copy.cuh - transposeBulkCopy (Hopper, sm_90), 05_transpose's
// next-to-last kernel: transposeSectorAligned's tiles moved by the copy engine. Device code
// only; its launcher, waiver and place in the kernel list are in transpose.cuh,
// which includes this file.
#pragma once
#include <cstdint>
#include <cuda_runtime.h>
#include "common/mbarrier.cuh"
#include "05_transpose/sector_aligned.cuh"  // input_row_shift

namespace transpose {

// transposeBulkCopy (Hopper, sm_90): transposeSectorAligned's tiles and
// windows, with both global sides moved by the copy engine (cp.async.bulk,
// the TMA unit's plain form, as in 04_reduction's step 14). The threads never
// touch global memory: they only read the input tile and write the output
// tile in shared memory.
//
//   load       72 threads each ask for one input row's piece (the 16-byte
//              boundary at or before column c0, up to 272 bytes) into row i
//              of `tin`; the bytes complete an mbarrier's transaction count
//   transpose  every thread waits on the mbarrier, then gathers 4 floats down
//              a column of `tin` and writes them as one float4 into `tout`
//   store      64 threads each send one output row's window (256 bytes that
//              start on a 32-byte sector, as in transposeSectorAligned) from
//              `tout` to global memory; only the pieces where an output row
//              begins or ends (not 16-byte aligned) take ordinary stores
//
// Why not tensor maps (cp.async.bulk.tensor, what 01_matmul's steps use)? A
// tensor map needs a row pitch that is a multiple of 16 bytes, which a column
// count that is not a multiple of 4 does not give (transposeTensorMap, in
// tensor_map.cuh, reads the input through four maps, one per input row mod 4,
// each with a pitch of four rows). And on the output side a 2D box writes
// every one of its rows at the same column, while the sector-aligned windows
// start m_j floats early in output row j, a different shift in every row. One
// bulk copy per row does both.
//
// Shared memory: rows of 68 floats (272 bytes: a copy's destination must be
// 16-byte aligned, so the odd stride of transposeSectorAligned is not
// allowed). In the gather, a warp's 32 lanes take 32 consecutive output rows
// (input columns) of ONE input row where the rows are sector-aligned (rows %
// 8 == 0): 32 consecutive floats, no conflict; otherwise each lane's window
// starts m_j rows earlier, and the lanes' rows differ (ncu counts the
// conflicts). The float4 writes into `tout` (stride 68 floats: 17 float4s,
// odd) hit 8 different 16-byte bank groups per quarter-warp: no conflict.
// 36 KiB a block, 256 threads: six blocks an SM, each with its own copies in
// flight while others transpose.
//
// Measured, it is SLOWER than transposeSectorAligned at every shape of the
// H200's sweep (2026-11-29: 0.909 of copy at 8192^2 against 0.973; three runs
// of 2026-11-25, 0.88-0.89 against 0.96: README, "The copy engine: tried, and slower"). Handing the global side to the copy engine
// leaves the threads with the part that limits these kernels: gathering
// from shared memory, which needs many warps in flight.
//
// kEdges = false leaves out the ordinary stores at the ends of output rows,
// keeping only the bulk copies: right wherever rows % 4 == 0 (every output
// row then starts and ends on 16 bytes), wrong elsewhere. It is the planted
// bug of the tests, never in the kernel list.
constexpr int kBulkTile = 64, kBulkThreads = 256, kBulkHalo = 8;
constexpr int kBulkInRows = kBulkTile + kBulkHalo;  // input rows R0 - 8 .. R0 + 63
constexpr int kBulkStride = kBulkTile + 4;          // floats: 64 columns from any 16-byte boundary, and odd in float4s
constexpr size_t kBulkSmem = (size_t(kBulkInRows) + kBulkTile) * kBulkStride * sizeof(float) + sizeof(uint64_t);

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The load of transposeBulkCopy: thread i < 72 asks for input row r = R0 - 8
// + i, columns c0 .. c0 + ncols - 1, from the 16-byte boundary at or before
// c0 (like transposeSectorAligned's float4s: a_r floats early), into row i of
// tin. The array's last float4 may stick out of it: those floats (at most 3)
// are read with ordinary loads, written before the arrival, which releases
// them. `landed` completes when every piece is in.
__device__ __forceinline__ void bulk_load_tile(const float* __restrict__ in, int rows, int cols, int R0, int c0,
                                               float* tin, uint64_t* landed) {
    constexpr int H = kBulkHalo, S = kBulkStride;
    const size_t n = size_t(rows) * cols;
    const int ncols = min(kBulkTile, cols - c0);
    const int tid = threadIdx.x;
    if (tid < kBulkInRows) {
        const int r = R0 - H + tid;
        unsigned bytes = 0;
        const bool needed = (rows & 7) == 0 ? tid >= H : tid >= 1;  // rows above R0 only for shifted windows
        if (needed && r >= 0 && r < rows) {
            const size_t first = size_t(r) * cols + c0, end = first + ncols;
            const size_t g = first & ~size_t(3);                        // a 16-byte boundary
            const size_t whole = min((end + 3) & ~size_t(3), n & ~size_t(3));  // float4s inside the array
            float* d = tin + tid * S;
            for (size_t e = whole; e < end; ++e) d[e - g] = in[e];
            bytes = unsigned(whole - g) * sizeof(float);
        }
        if (bytes) {  // expect the bytes, then ask for them: the phase cannot complete in between
            common::mbarrier_arrive_expect_tx(landed, bytes);
            common::bulk_copy_to_shared(tin + tid * S, in + ((size_t(r) * cols + c0) & ~size_t(3)), bytes, landed);
        } else {
            common::mbarrier_arrive(landed);
        }
    }
}
#endif

template <bool kEdges = true>
__global__ void __launch_bounds__(kBulkThreads)
transposeBulkCopy(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int T = kBulkTile, H = kBulkHalo, S = kBulkStride;
    __shared__ __align__(128) float tin[kBulkInRows * S];
    __shared__ __align__(128) float tout[T * S];
    __shared__ uint64_t landed;  // completes when every input row piece is in tin
    const int R0 = blockIdx.x * T;  // output columns R0 - m_j .. (= input rows)
    const int c0 = blockIdx.y * T;  // output rows c0 .. c0 + 63 (= input columns)
    const int ncols = min(T, cols - c0);
    const int tid = threadIdx.x;
    if (tid == 0) {
        common::mbarrier_init(&landed, kBulkInRows);  // one arrival per input row
        common::fence_mbarrier_init();
    }
    __syncthreads();

    bulk_load_tile(in, rows, cols, R0, c0, tin, &landed);
    common::mbarrier_wait(&landed, 0);

    // Transpose. Unit = output row jl (the lane) x 4 window positions; a
    // warp takes 32 rows, the block 64 rows x 16 float4s in 4 passes.
    const int lane = tid % 32, warp = tid / 32;
#pragma unroll
    for (int p = 0; p < T * T / 4 / kBulkThreads; ++p) {
        const int unit = p * (kBulkThreads / 32) + warp;  // 0..31
        const int jl = 32 * (unit % 2) + lane, u = unit / 2;
        const int j = c0 + jl;
        const int m = int((unsigned(j) * unsigned(rows)) & 7u);  // window of output row j starts at R0 - m
        float w[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int r = R0 - m + 4 * u + q;  // input row = output column
            const int a = input_row_shift(r, cols, c0);
            w[q] = r >= 0 && r < rows && jl < ncols ? tin[(r - R0 + H) * S + jl + a] : 0.f;
        }
        *reinterpret_cast<float4*>(tout + jl * S + 4 * u) = make_float4(w[0], w[1], w[2], w[3]);
    }
    common::fence_proxy_async();  // my writes of tout visible to the copy engine ...
    __syncthreads();               // ... and everyone's before any copy starts

    // Store. Thread jl < 64 sends output row j's part of the window
    // [R0 - m, R0 - m + 64) that lies inside the row: its 16-byte aligned
    // middle by the copy engine, the unaligned floats at a row's ends directly.
    if (tid < T && tid < ncols) {
        const int jl = tid, j = c0 + jl;
        const int start = R0 - int((unsigned(j) * unsigned(rows)) & 7u);
        const int lo = max(start, 0), hi = min(start + T, rows);  // columns of the window inside the row
        float* row = out + size_t(j) * rows;
        const float* src = tout + jl * S;                         // src[c - start]: output column c
        // 16-byte boundaries of the absolute address inside [lo, hi).
        const size_t base = size_t(j) * rows;
        const int a_lo = int(((base + lo + 3) & ~size_t(3)) - base), a_hi = int(((base + hi) & ~size_t(3)) - base);
        if (a_lo < a_hi) {
            if (kEdges) {
                for (int c = lo; c < a_lo; ++c) row[c] = src[c - start];
                for (int c = a_hi; c < hi; ++c) row[c] = src[c - start];
            }
            common::bulk_copy_to_global(row + a_lo, src + (a_lo - start), unsigned(a_hi - a_lo) * sizeof(float));
            common::bulk_commit_and_wait_read();  // tout must outlive the copy's reads
        } else if (kEdges) {
            for (int c = lo; c < hi; ++c) row[c] = src[c - start];
        }
    }
#else
    (void)in, (void)out, (void)rows, (void)cols;  // never launched below sm_90 (waiver)
#endif
}

}  // namespace transpose
