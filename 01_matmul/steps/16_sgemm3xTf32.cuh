// Step 16 of 01_matmul: fp32 accuracy from TF32 tensor cores ("3xTF32").
//
// TF32 keeps 11 significant bits of each input; fp32 has 24. Split each
// input into two TF32 numbers, x = x_big + x_small with x_big = tf32(x) and
// x_small = tf32(x - x_big): together they hold ~22 of x's 24 bits. Then
//     a b = a_big b_big + a_big b_small + a_small b_big + a_small b_small,
// and the last term is ~2^-22 of the first: leaving it out, three TF32
// products give what one fp32 product gives, at a third of the tensor cores'
// rate (still several times the fp32 FMA rate). The products are formed
// smallest first, so the small terms are not lost against a large partial sum.
//
// What changes against step 15 (the same persistent, split-K kernel; plans.cuh
// picks the splits, with 128-row tiles: a 256-row stage would be 80 KB):
//  - A is split into A_big and A_small in one of two places (plans.cuh
//    picks, kSplitInKernel):
//    once, before the product, by a small kernel (operand_passes.cuh) into two
//    matrices with a 16-byte pitch, whose tiles the producer loads with the
//    TMA (FLOAT32: the values are TF32 already) - or, where A's rows are
//    16-byte aligned, into A_small alone, and the TMA rounds A into A_big as
//    it loads it (TFLOAT32, ties to even: step 16m); or tile by tile, inside the
//    product: the producer loads A's tile as it is into the A_big slot, and
//    the producer warpgroup's warps 1-3, idle otherwise, split it in place
//    when it lands (the `full` barrier), write A_small beside it, make their
//    writes visible to the tensor cores (fence.proxy.async: wgmma reads
//    shared memory through the async proxy) and arrive on `split`. The
//    first costs two or three passes over A; the second splits each A tile once for
//    every tile column it meets (WORKLOG.md).
//    A stage is A_big + A_small + B = 48 KB: 4 stages.
//  - B is loaded as it is (FLOAT32: the low bits are needed) and split in
//    registers as each thread loads its fragments: b_big = cvt.rna(b),
//    b_small = cvt.rna(b - b_big).
//  - Three wgmmas per k8 step: b_small^T a_big, b_big^T a_small, b_big^T a_big,
//    into accumulators that the FMA units add to the running sum (the tensor
//    cores' own accumulation is less accurate than fp32 FADD: measured,
//    WORKLOG.md, step 16): the big products every 2 k-tiles (4 where one block
//    sums a long K, step 16n), the small ones, in an
//    accumulator of their own, once a tile (step 16l; where A is split in the
//    kernel, all 12 products of each k-tile into one). That needs wait_group 0
//    every k-tile: the two consumer warpgroups keep the tensor cores busy in turn.
//  - Split-K 2 needs no second pass (step 16d): the two blocks of a tile run
//    as a cluster, and each adds the other's sum of its half of the tile
//    through distributed shared memory (pair_sum) before storing it.
// The accuracy is measured, not assumed: the program's err/S columns give
// this kernel's error against the double reference next to the fp32 SIMT
// kernels' (README, accuracy). Its peer is cuBLAS SGEMM in fp32.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/cluster.cuh"
#include "common/gpu.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "01_matmul/steps/operand_passes.cuh"
#include "01_matmul/steps/operands.cuh"
#include "01_matmul/steps/row_strip.cuh"
#include "01_matmul/steps/hopper.cuh"
#include "01_matmul/steps/tf32.cuh"

namespace matmul {
namespace step16 {

// The block's tile: BM rows of C (wgmma's N) x BN = 128 columns (two
// consumer warpgroups x 64), k-tiles of BK = 32 (one 128-byte box row),
// STAGES buffers of (2 BM + BN) x BK floats: A_big, A_small, B; SPLITTERS:
// the producer warpgroup's threads that split A in the kernel (warps 1-3);
// promote(): k-tiles of big products the tensor cores sum before the FMA
// units add them: PROMOTE (step 16l), or PROMOTE_LONG where one block sums
// all of K and K has at least LONG_K_TILES k-tiles (step 16n). Fewer
// promotions are faster and less accurate: with 4, a shape whose K is split
// came within 4% of cuBLAS SGEMM's error, and short sums went over it.
template <int BM_, int STAGES_>
struct Tile {
    static constexpr int BM = BM_, BN = 128, BK = 32, STAGES = STAGES_, CONSUMERS = 2, SPLITTERS = 96;
    static constexpr int PROMOTE = 2, PROMOTE_LONG = 4, LONG_K_TILES = 64;
    // k_tiles: the block's slice of K in k-tiles; splits: the slices of K (gridDim.y).
    __host__ __device__ static constexpr int promote(int k_tiles, int splits) {
        return splits == 1 && k_tiles >= LONG_K_TILES ? PROMOTE_LONG : PROMOTE;
    }
    static constexpr int THREADS = 128 * (1 + CONSUMERS);  // producer warpgroup + consumers
    static constexpr int A_FLOATS = BM * BK, B_FLOATS = BK * BN, STAGE_FLOATS = 2 * A_FLOATS + B_FLOATS;
    static constexpr unsigned STAGE_BYTES = STAGE_FLOATS * sizeof(float);
    static constexpr unsigned UNSPLIT_BYTES = (A_FLOATS + B_FLOATS) * sizeof(float);  // A as it is, and B
    static constexpr int ACC = BM / 2;  // accumulator registers per consumer thread
    static constexpr size_t SMEM = 1024 + size_t(STAGES) * STAGE_BYTES + 3 * STAGES * sizeof(uint64_t);
    // Split-K 2 summed in a cluster (kPairSum): two more barriers and a buffer
    // for the half of the other block's sum that this block stores (32 KB).
    static constexpr int PAIR_FLOATS = 128 * CONSUMERS * ACC / 2;
    static constexpr size_t PAIR_SMEM = SMEM + 2 * sizeof(uint64_t) + PAIR_FLOATS * sizeof(float);
    static_assert((3 * STAGES + 2) * sizeof(uint64_t) % 16 == 0, "the pair buffer (float4) follows the barriers");
    static_assert(BM == 128, "128-row tiles only: a 256-row stage would be 80 KB");
    // setmaxnreg moves only the registers the block was launched with (65536 / THREADS a thread, in
    // whole units of 8: 168 at 384 threads) between its warpgroups; .inc waits until they are free.
    static constexpr int LAUNCH_REGS = 65536 / THREADS / 8 * 8;
    // The registers a thread each warpgroup asks for with setmaxnreg (step 16l). A split before the
    // product: the consumers hold an accumulator for the small products too (240), the producer
    // keeps the least there is (24). A split in the kernel: the producer's warps 1-3 need 40 for
    // their split loop, which ptxas unrolls (written one float4 at a time, as 24 registers allow,
    // it made the product wait: 7-8% slower, WORKLOG.md step 16l), and the consumers keep one
    // accumulator (232).
    template <bool kSplitInKernel>
    struct Regs {
        static constexpr int PRODUCER = kSplitInKernel ? 40 : 24, CONSUMER = kSplitInKernel ? 232 : 240;
        static_assert(128 * (PRODUCER + CONSUMERS * CONSUMER) <= THREADS * LAUNCH_REGS,
                      "setmaxnreg.inc would wait forever for registers the block does not have");
    };
};

// The B^T rows a consumer thread holds: columns n and n + 1 of the block's
// tile, n = 32 * box + 4 * chunk + 2 * (g % 2). Warps w and w ^ 1 of a
// warpgroup share a 32-column box (4 KB: BK rows of 128 bytes); in it, warp
// w takes the 16-byte chunks 2 (w % 2) + {0, 1, 4, 5}. A half-warp (g < 4
// or g >= 4, t = 0..3) then reads chunks {c, c + 4} ^ (k % 8) with k % 8 =
// t (or t + 4): 8 different chunks x 2 halves = 16 different bank pairs.
struct BtRows {
    int box, chunk, half;
    __device__ BtRows(int consumer, int warp, int g)
        : box(2 * consumer + warp / 2), chunk(2 * (warp % 2) + g / 4 + 4 * ((g / 2) % 2)), half(g % 2) {}
    __device__ int n() const { return 32 * box + 4 * chunk + 2 * half; }
    // Offset in floats of (k, n) inside the box: 128B swizzle, chunk ^ (k % 8).
    __device__ int offset(int k) const { return k * 32 + ((chunk ^ (k & 7)) << 2) + 2 * half; }
};

// Thread c of SPLITTERS splits its share of a landed A tile in place:
// a_big[q] = tf32(x), a_small[q] = tf32(x - a_big[q]), 16 bytes at a time.
// Element for element, so the TMA's 128-byte swizzle is kept: A_small's
// slot has the layout of A_big's, as both wgmma descriptors expect.
template <class T>
__device__ __forceinline__ void split_tile(float* a_big, int c) {
    float4* big = reinterpret_cast<float4*>(a_big);
    float4* small = reinterpret_cast<float4*>(a_big + T::A_FLOATS);
    for (int q = c; q < T::A_FLOATS / 4; q += T::SPLITTERS) {
        const float4 x = big[q];
        const float4 b = make_float4(__uint_as_float(to_tf32(x.x)), __uint_as_float(to_tf32(x.y)),
                                     __uint_as_float(to_tf32(x.z)), __uint_as_float(to_tf32(x.w)));
        big[q] = b;
        small[q] = make_float4(__uint_as_float(to_tf32(x.x - b.x)), __uint_as_float(to_tf32(x.y - b.y)),
                               __uint_as_float(to_tf32(x.z - b.z)), __uint_as_float(to_tf32(x.w - b.w)));
    }
}

// This thread's fragments of one k-tile, split: f[0] = big, f[1] = small.
template <class T>
__device__ __forceinline__ void load_split_fragments(const float* b_box, const BtRows& r, int t,
                                                     uint32_t (&f)[2][T::BK / 8][4]) {
#pragma unroll
    for (int kk = 0; kk < T::BK / 8; ++kk) {
        const float2 lo = *reinterpret_cast<const float2*>(b_box + r.offset(8 * kk + t));
        const float2 hi = *reinterpret_cast<const float2*>(b_box + r.offset(8 * kk + t + 4));
        const float x[4] = {lo.x, lo.y, hi.x, hi.y};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            f[0][kk][i] = to_tf32(x[i]);
            f[1][kk][i] = to_tf32(x[i] - __uint_as_float(f[0][kk][i]));
        }
    }
}

// The accumulator to C: register 4 j + {0, 1, 2, 3} is C^T at rows (n, n,
// n + 1, n + 1), columns (m, m + 1, m, m + 1) with m = 8 j + 2 t: two
// 8-byte pairs (n, n + 1), at rows m and m + 1 of C, whose rows are ldc
// floats apart (N, or more where C's last columns are a strip's). Pairs
// only where N and ldc are even (n is even: a pair never reaches past
// column N - 1) and C is 8-byte aligned. [J0, J1): the j's to store (a
// pair-summing block stores half of them).
template <class T, int J0 = 0, int J1 = T::BM / 8>
__device__ __forceinline__ void store_ct(float* C, const float (&acc)[T::ACC], int m0, int n, int M, int N, int ldc) {
    const bool pairs = N % 2 == 0 && ldc % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
#pragma unroll
    for (int j = J0; j < J1; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int m = m0 + 8 * j + h;
            if (m >= M || n >= N) continue;
            float* p = C + size_t(m) * ldc + n;
            if (pairs) {
                *reinterpret_cast<float2*>(p) = make_float2(acc[4 * j + h], acc[4 * j + 2 + h]);
            } else {
                p[0] = acc[4 * j + h];
                if (n + 1 < N) p[1] = acc[4 * j + 2 + h];
            }
        }
}

// ---- Split-K 2 in a cluster: the two slices' sums meet in shared memory ----
// Blocks y = 0 and 1 of a cluster walk the same tiles, each over half of K.
// Instead of writing both partial sums to global memory for a second pass
// (splitKReduce), block ME keeps the tile's rows 64 ME .. 64 ME + 63 (its
// j = 8 ME .. 8 ME + 7): it stores its sum of the other rows straight into
// the other block's `buf` (distributed shared memory, chapter 02), arrives on
// that block's `full`, waits on its own `full` for what the other block sent,
// adds it and arrives on the other block's `empty` once it has read `buf`.
// Both barriers count the 256 consumer threads of the other block. The sum
// is a + b in one block and b + a in the other, the same float: the result
// is bit for bit that of splitKReduce.
struct PairSum {
    uint64_t* full;   // the other block's sum has landed in buf (phase r: tile r of this block)
    uint64_t* empty;  // the other block has read what this block sent it
    float4* buf;      // [8][256] float4: the other block's 32 accumulators for each consumer thread
};
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
template <class T, int ME>
__device__ __forceinline__ void pair_sum(float (&sum)[T::ACC], const PairSum& p, int round, int c) {
    constexpr int OTHER = 1 - ME, J = T::BM / 16, THREADS = 128 * T::CONSUMERS;
    if (round > 0) common::mbarrier_wait_cluster(p.empty, (round - 1) & 1);  // my last send was read
    const unsigned dst = common::cluster_address(p.buf, OTHER);
#pragma unroll
    for (int jj = 0; jj < J; ++jj) {
        const int j = J * OTHER + jj;
        st_cluster_f4(dst + unsigned(jj * THREADS + c) * 16, sum[4 * j], sum[4 * j + 1], sum[4 * j + 2], sum[4 * j + 3]);
    }
    common::mbarrier_arrive_cluster(common::cluster_address(p.full, OTHER));
    common::mbarrier_wait_cluster(p.full, round & 1);
#pragma unroll
    for (int jj = 0; jj < J; ++jj) {
        const int j = J * ME + jj;
        const float4 v = p.buf[jj * THREADS + c];
        sum[4 * j] += v.x, sum[4 * j + 1] += v.y, sum[4 * j + 2] += v.z, sum[4 * j + 3] += v.w;
    }
    common::mbarrier_arrive_cluster(common::cluster_address(p.empty, OTHER));
}
#endif

// The ring in dynamic shared memory, 1024-byte aligned (the 128-byte
// swizzle repeats every 8 rows of 128 bytes), then the barriers.
template <class T>
__device__ __forceinline__ float* ring_of(uint8_t* smem_raw) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned pad = (1024 - (common::smem_address(smem_raw) & 1023)) & 1023;
    return reinterpret_cast<float*>(smem_raw + pad);
#else
    return reinterpret_cast<float*>(smem_raw);
#endif
}

// ---- The kernel ------------------------------------------------------------
// tma_a_big maps A_big: A itself read as TFLOAT32 (the TMA rounds it, step
// 16m), or the pre-pass's A_big where A's rows are not 16-byte aligned; with
// kSplitInKernel, A (or its padded copy) as FLOAT32;
// tma_a_small maps A_small (unused with kSplitInKernel). kPairSum: launched
// in clusters of 2 along y with two slices of K, summed in the cluster. C:
// M x N, rows ldc floats apart; split-K's partial slices: M x N, contiguous.
template <class T, bool kSplitInKernel, bool kPairSum = false>
__global__ void __launch_bounds__(T::THREADS, 1)
sgemm3xTf32(const __grid_constant__ CUtensorMap tma_a_big, const __grid_constant__ CUtensorMap tma_a_small,
            const __grid_constant__ CUtensorMap tma_b, float* __restrict__ C, int M, int N, int ldc, int K, int k_split,
            float* __restrict__ partial) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t smem_raw[];
    float* ring = ring_of<T>(smem_raw);
    uint64_t* full = reinterpret_cast<uint64_t*>(ring + T::STAGES * T::STAGE_FLOATS);
    uint64_t* empty = full + T::STAGES;
    uint64_t* split = empty + T::STAGES;  // kSplitInKernel: the stage's A is split
    const PairSum pair{split + T::STAGES, split + T::STAGES + 1, reinterpret_cast<float4*>(split + T::STAGES + 2)};

    // Block x computes tiles x, x + gridDim.x, ... The ring's k-tile counter `it` runs on across
    // tiles, so the producer fills the next tile's stages while the consumers store the last one.
    const int tiles_m = (M + T::BM - 1) / T::BM, tiles_n = (N + T::BN - 1) / T::BN, tiles = tiles_m * tiles_n;
    // Split-K (gridDim.y > 1): block y sums k in [y k_split, (y + 1) k_split) into its own slice of `partial`.
    const int k_begin = blockIdx.y * k_split, k_tiles = (min(K - k_begin, k_split) + T::BK - 1) / T::BK;
    const int warpgroup = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < T::STAGES; ++s) {
            common::mbarrier_init(&full[s], 1);                     // the producer's arrive.expect_tx
            common::mbarrier_init(&empty[s], 128 * T::CONSUMERS);  // every consumer thread
            common::mbarrier_init(&split[s], T::SPLITTERS);         // every splitting thread
        }
        if constexpr (kPairSum) {
            common::mbarrier_init(pair.full, 128 * T::CONSUMERS);   // the other block's consumers
            common::mbarrier_init(pair.empty, 128 * T::CONSUMERS);
        }
        common::fence_mbarrier_init();
    }
    if constexpr (kPairSum)
        common::cluster_sync_all();  // both blocks' barriers are ready before either arrives on the other's
    else
        __syncthreads();
    common::pdl_wait();  // the passes before (A's split, B's padding) have written what the TMA reads
    common::pdl_launch_dependents();

    if (warpgroup == 0) {  // the producer: one thread asks for every tile (and warps 1-3 may split A)
        setmaxnreg_dec<T::template Regs<kSplitInKernel>::PRODUCER>();
        if (threadIdx.x == 0) {
            int it = 0;  // k-tiles through the ring so far
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int bm, bn;
                tile_origin<T>(tile, tiles_m, tiles_n, &bm, &bn);
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    const int s = it % T::STAGES;
                    if (it >= T::STAGES) common::mbarrier_wait(&empty[s], (it / T::STAGES - 1) & 1);
                    float* a_big = ring + s * T::STAGE_FLOATS;
                    float* a_small = a_big + T::A_FLOATS;
                    float* bs = a_small + T::A_FLOATS;
                    common::mbarrier_arrive_expect_tx(&full[s], kSplitInKernel ? T::UNSPLIT_BYTES : T::STAGE_BYTES);
                    const int k = k_begin + kt * T::BK;
                    tma_load_2d(a_big, &tma_a_big, k, bm, &full[s]);  // BM rows of A_big (or A), k .. k + 31
                    if constexpr (!kSplitInKernel) tma_load_2d(a_small, &tma_a_small, k, bm, &full[s]);
#pragma unroll
                    for (int j = 0; j < T::BN / 32; ++j)  // BK rows of B, 32 columns a box
                        tma_load_2d(bs + j * 32 * T::BK, &tma_b, bn + 32 * j, k, &full[s]);
                }
            }
        } else if (kSplitInKernel && threadIdx.x >= 32) {  // warps 1-3: the same walk, one split per k-tile
            const int tiles_here = tiles > int(blockIdx.x) ? (tiles - 1 - int(blockIdx.x)) / int(gridDim.x) + 1 : 0;
            for (int it = 0; it < tiles_here * k_tiles; ++it) {
                const int s = it % T::STAGES;
                common::mbarrier_wait(&full[s], (it / T::STAGES) & 1);
                split_tile<T>(ring + s * T::STAGE_FLOATS, threadIdx.x - 32);
                common::fence_proxy_async();  // these generic-proxy writes, before wgmma reads them
                common::mbarrier_arrive(&split[s]);
            }
        }
    } else {  // the consumers: warpgroup c = 1, 2 computes C^T rows bn + 64 (c - 1) .. + 63
        setmaxnreg_inc<T::template Regs<kSplitInKernel>::CONSUMER>();
        const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
        const BtRows rows(warpgroup - 1, warp, g);
        // The tensor cores accumulate into `part`, and the FMA units add it to
        // `sum` in fp32, rounded to nearest: the tensor cores' own adder is less
        // accurate over the whole of K (WORKLOG.md, step 16). `part` must be final
        // before it is added: wait_group 0 every k-tile, and the two consumer
        // warpgroups keep the tensor cores busy in turn.
        // kApart (step 16l, where A is split before the product): the small
        // products b_small a_big and b_big a_small (~2^-11 of the big ones) go
        // into an accumulator of their own, `part_small`, added once a tile, so
        // they are not rounded against a partial sum of big ones; `part` holds
        // the big products of `every` k-tiles (Tile::promote: 2, or 4 where one
        // block sums a long K) and starts from zero by its first wgmma's scale-d
        // (accumulate = false): zeroed by moves at the start of each promotion, ptxas
        // would keep 64 FSELs on every k-tile. Where A is split in
        // the kernel (its splitters need 40 registers: Tile::Regs) all 12 products of a
        // k-tile go into `part`, smallest first, zeroed every k-tile by moves
        // (ptxas makes them the first wgmma's zero input) and added every k-tile.
        constexpr bool kApart = !kSplitInKernel;
        const int every = kApart ? T::promote(k_tiles, int(gridDim.y)) : 1;
        float sum[T::ACC], part[T::ACC], part_small[T::ACC];
        uint32_t frag[2][T::BK / 8][4];  // big, small
        int it = 0, round = 0;  // as the producer's; tiles done
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++round) {
            int bm, bn;
            tile_origin<T>(tile, tiles_m, tiles_n, &bm, &bn);
#pragma unroll
            for (int i = 0; i < T::ACC; ++i) sum[i] = part_small[i] = 0.0f;
            for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                const int s = it % T::STAGES;
                common::mbarrier_wait(&full[s], (it / T::STAGES) & 1);
                if constexpr (kSplitInKernel) common::mbarrier_wait(&split[s], (it / T::STAGES) & 1);
                const float* a_big = ring + s * T::STAGE_FLOATS;
                load_split_fragments<T>(a_big + 2 * T::A_FLOATS + rows.box * 32 * T::BK, rows, t, frag);
                if constexpr (!kApart) {
#pragma unroll
                    for (int i = 0; i < T::ACC; ++i) part[i] = 0.0f;
                }
                const bool fresh = kt % every == 0;  // `part` starts from zero
                wgmma_fence();
                fence_operands(part);
                if constexpr (kApart) fence_operands(part_small);
                const uint64_t big = wgmma_desc_k_sw128(a_big), small = wgmma_desc_k_sw128(a_big + T::A_FLOATS);
#pragma unroll
                for (int kk = 0; kk < T::BK / 8; ++kk) {
                    if constexpr (kApart) {
                        wgmma_m64n128k8_rs(part_small, frag[1][kk], big + 2 * kk);  // b_small a_big
                        wgmma_m64n128k8_rs(part_small, frag[0][kk], small + 2 * kk);  // b_big a_small
                        wgmma_m64n128k8_rs(part, frag[0][kk], big + 2 * kk, kk > 0 || !fresh);  // b_big a_big
                    } else {  // smallest products first
                        wgmma_m64n128k8_rs(part, frag[1][kk], big + 2 * kk);
                        wgmma_m64n128k8_rs(part, frag[0][kk], small + 2 * kk);
                        wgmma_m64n128k8_rs(part, frag[0][kk], big + 2 * kk);
                    }
                }
                wgmma_commit();
                fence_operands(part);
                if constexpr (kApart) fence_operands(part_small);
                wgmma_wait<0>();  // this k-tile's wgmmas are done: its buffer is free, `part` is final
                fence_operands(part);
                if constexpr (kApart) fence_operands(part_small);
                common::mbarrier_arrive(&empty[s]);
                if ((kt + 1) % every == 0 || kt + 1 == k_tiles) {
#pragma unroll
                    for (int i = 0; i < T::ACC; ++i) sum[i] += part[i];
                }
            }
            if constexpr (kApart) {
#pragma unroll
                for (int i = 0; i < T::ACC; ++i) sum[i] += part_small[i];
            }
            if constexpr (kPairSum) {
                const int c = threadIdx.x - 128;  // 0 .. 255: this consumer thread
                if (blockIdx.y == 0) {
                    pair_sum<T, 0>(sum, pair, round, c);
                    store_ct<T, 0, T::BM / 16>(C, sum, bm + 2 * t, bn + rows.n(), M, N, ldc);
                } else {
                    pair_sum<T, 1>(sum, pair, round, c);
                    store_ct<T, T::BM / 16, T::BM / 8>(C, sum, bm + 2 * t, bn + rows.n(), M, N, ldc);
                }
            } else {
                if (partial)
                    store_ct<T>(partial + size_t(blockIdx.y) * M * N, sum, bm + 2 * t, bn + rows.n(), M, N, N);
                else
                    store_ct<T>(C, sum, bm + 2 * t, bn + rows.n(), M, N, ldc);
            }
        }
    }
    // Pair sum: no block exits while the other may still write to its shared memory or arrive
    // on its barriers (every thread of both blocks, producers included, reaches this).
    if constexpr (kPairSum) {
        __syncwarp();  // warp 0 reconverged (its thread 0 ran the producer loop alone)
        common::cluster_sync_all();
    }
#else
    (void)tma_a_big, (void)tma_a_small, (void)tma_b, (void)C, (void)M, (void)N, (void)ldc, (void)K, (void)k_split,
        (void)partial;  // waived
#endif
}

}  // namespace step16

// ---- The launcher ----------------------------------------------------------
// Where split-K 2 is summed in a cluster of 2 (kPairSum): "" or why not (then
// both slices go to global memory and splitKReduce adds them).
template <class T>
std::string pair_sum_refusal(const common::Gpu& g = common::gpu()) {
    const std::string why = common::cluster_refusal(2, g);
    return why.empty() ? common::smem_refusal(T::PAIR_SMEM, g) : why;
}

// C's last rows and last columns (of the other rows) left to the fp32 strips
// (row_strip.cuh; plans.cuh decides): up to kStripMaxRows each.
struct Strips {
    int rows = 0, cols = 0;
};

// C (M x N) = A B, the tiles on the first M - strips.rows rows and N -
// strips.cols columns, the strips (if any) on the rest. `splits` slices of K
// (fewer where K has fewer k-tiles, or where the partials would not fit
// kSplitKScratchMaxBytes), then splitKReduce adds them, or with 2 slices the
// two blocks of a cluster add them (pair_sum, where pair_sum_refusal() is ""
// and `pair_sum` allows it); at most max_blocks blocks along x (one per SM:
// plans.cuh), each walking tiles; A split by a pre-pass, or in the kernel
// (split_a_in_kernel). The passes before the product (A's, B's padded copy,
// the strips) are one launch where there is more than one (16j).
template <class T>
std::string launch_sgemm3xTf32_with(const float* A, const float* B, float* C, int M, int N, int K, int splits,
                                    int max_blocks, bool split_a_in_kernel = false, bool pair_sum = true,
                                    Strips strips = {}) {
    const int m = M - strips.rows, n = N - strips.cols;  // the tiles' part of C
    // FLOAT32 maps: A's halves are TF32 already, and the low bits of A (split in the kernel) and B are needed.
    constexpr CUtensorMapDataType bits = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    const KSlices slices = k_slices(K, T::BK, splits, m, n);
    const int k_split = slices.k_split;
    splits = slices.splits;
    pair_sum = pair_sum && splits == 2 && pair_sum_refusal<T>().empty();
    const auto kernel = split_a_in_kernel ? (pair_sum ? step16::sgemm3xTf32<T, true, true> : step16::sgemm3xTf32<T, true>)
                                          : (pair_sum ? step16::sgemm3xTf32<T, false, true> : step16::sgemm3xTf32<T, false>);
    const size_t smem = pair_sum ? T::PAIR_SMEM : T::SMEM;
    const std::string refused = common::smem_refusal(smem);  // (the kernel is given it after the passes' launch)
    if (!refused.empty()) return "not launched: " + refused;

    // The passes: what each part is given (step16::Passes), 0 blocks where it has nothing to do.
    step16::Passes p{};
    p.A = A, p.B = B, p.C = C, p.M = M, p.N = N, p.K = K, p.m = m, p.n = n;
    const PreparedB pb = prepare_b(B, N, K, true, kPaddedB, "B", false);  // the pass fills the copy, if any
    std::string a_what;
    const float* a_tiles = A;  // what the A_big map reads (pitch a_ld)
    int a_ld = K;
    CUtensorMapDataType a_bits = bits;
    if (split_a_in_kernel) {
        const PreparedB pa = prepare_b(A, K, m, true, kPaddedA, "A", false);  // the tiles' m rows of K
        p.a_big = pa.copy, a_tiles = pa.b, a_ld = p.lda = pa.ldb;
        a_what = " A split in kernel" + pa.what;
    } else if (rows16(A, K)) {  // step 16m: A_big is A, rounded to TF32 by the TMA on its way in
        p.lda = padded_pitch(K);
        p.a_small = scratch(kSplitA, size_t(m) * p.lda);
        a_bits = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
        a_what = " A_small split";
    } else {
        a_ld = p.lda = padded_pitch(K);  // the split A's pitch: whole 128-byte lines (operands.cuh)
        p.a_big = scratch(kSplitA, size_t(2) * m * p.lda);
        p.a_small = p.a_big + size_t(m) * p.lda;
        a_tiles = p.a_big;
        a_what = " A split";
    }
    const bool a_pass = p.a_big || p.a_small;
    p.ga = a_pass ? row_pass_grid(m, p.lda) : dim3(0, 0);
    p.b_copy = pb.copy, p.ldb = pb.ldb;
    p.gb = pb.copy ? row_pass_grid(K, pb.ldb) : dim3(0, 0);
    // The strips join the passes' launch where they are 1 or 2 rows and columns:
    // then their code fits 64 registers a thread (ptxas spills 28-44 bytes of
    // it, CUDA 13.0), and the passes keep 4 blocks of 256 threads an SM (wider
    // strips: 119-167 registers, 1-2 blocks); else they are launches of their
    // own after the product.
    const bool fuse = std::max(strips.rows, strips.cols) <= kStripsInPasses;
    const auto passes = operand_passes_kernel(!split_a_in_kernel, fuse ? std::max(strips.rows, strips.cols) : 0);
    std::string strip_what;
    p.gr = p.gc = dim3(0, 0);
    if (strips.cols && fuse) {
        p.gc = col_strip_grid(m, K);
        p.col_partial = p.gc.y > 1 ? scratch(kColStripPartials, size_t(p.gc.y) * m * strips.cols) : nullptr;
        p.col_arrived = zeroed_counters(kColStripArrivals, p.gc.x);
        strip_what += " + " + std::to_string(strips.cols) + "-column strip";
    }
    if (strips.rows && fuse) {
        const StripGrid g = row_strip_grid(strips.rows, N, K, resident_passes(reinterpret_cast<const void*>(passes)));
        p.gr = g.grid, p.kc = g.kc;
        p.row_partial = g.grid.y > 1 ? scratch(kStripPartials, size_t(g.grid.y) * strips.rows * N) : nullptr;
        p.row_arrived = zeroed_counters(kStripArrivals, g.grid.x);
        strip_what += " + " + std::to_string(strips.rows) + "-row strip";
    }
    if ((fuse && (strips.rows || strips.cols)) || (a_pass && pb.copy)) {
        const int blocks = step16::blocks_of(p.gr) + step16::blocks_of(p.gc) + step16::blocks_of(p.ga) +
                           step16::blocks_of(p.gb);
        common::launch_programmatic(passes, blocks, step16::kPassThreads, p);
    } else if (p.a_small) {  // one part: its own kernel, as before 16j
        common::launch_programmatic(step16::splitTf32, p.ga, row_pass_block(), A, p.a_big, p.a_small, m, K, p.lda);
    } else if (p.a_big) {
        common::launch_programmatic(padColumns, p.ga, row_pass_block(), A, p.a_big, m, K, p.lda);
    } else if (pb.copy) {
        common::launch_programmatic(padColumns, p.gb, row_pass_block(), B, pb.copy, K, N, pb.ldb);
    }
    CHECK_LAUNCH();
    // Host work that can wait until the GPU has the passes (16j).
    const std::string not_given = common::request_dynamic_smem(kernel, smem);
    if (!not_given.empty()) return "not launched: " + not_given;

    CUtensorMap m_big, m_small, mb;
    std::string unmapped = tensor_map_2d(&m_big, a_tiles, m, K, a_ld, T::BM, a_bits);
    if (p.a_small) unmapped += tensor_map_2d(&m_small, p.a_small, m, K, p.lda, T::BM, bits);
    else m_small = m_big;  // not read: the kernel splits A
    unmapped += tensor_map_2d(&mb, pb.b, K, n, pb.ldb, T::BK, bits);
    if (!unmapped.empty()) return "not launched: " + unmapped;
    const size_t mn = size_t(m) * n;
    float* partial = splits > 1 && !pair_sum ? scratch(kSplitKPartials, mn * splits) : nullptr;
    const int tiles = common::ceil_div(m, T::BM) * common::ceil_div(n, T::BN);
    const dim3 grid(std::max(1, std::min(tiles, max_blocks)), splits);
    common::Launch l(grid, T::THREADS, smem);
    if (pair_sum) l.cluster(dim3(1, 2));
    CHECK(cudaLaunchKernelEx(&l.programmatic(kernel).cfg, kernel, m_big, m_small, mb, C, m, n, N, K, k_split, partial));
    CHECK_LAUNCH();
    if (partial) {
        common::launch_programmatic(splitKReduce, grid_stride_blocks(mn, 256), 256, partial, C, mn, splits, n, N);
        CHECK_LAUNCH();
    }
    if (!fuse && strips.cols) strip_what += launch_col_strip(A, B, C, m, N, K, strips.cols);
    if (!fuse && strips.rows) strip_what += launch_row_strip(A + size_t(m) * K, B, C + size_t(m) * N, strips.rows, N, K);
    using Regs = typename T::template Regs<false>;
    using SplittingRegs = typename T::template Regs<true>;
    const std::string tile = split_a_in_kernel ? wgmma_tile_name<T>(SplittingRegs::CONSUMER, SplittingRegs::PRODUCER)
                                               : wgmma_tile_name<T>(Regs::CONSUMER, Regs::PRODUCER);
    return tile + (splits > 1 ? " splitK" + std::to_string(splits) : "") +
           (pair_sum ? " summed in clusters of 2" : "") + " persistent P" + std::to_string(grid.x) + a_what +
           (split_a_in_kernel ? "" : " promote " + std::to_string(T::promote(common::ceil_div(K, T::BK), splits))) +
           c_pairs_what(C, N) + pb.what + strip_what;
}

}  // namespace matmul
