// Step 9 of 01_matmul: the tiles and pipeline of step 8 in a persistent
// kernel (stream-K) for the shapes whose tiles leave the last wave mostly
// idle, and the model that decides between it and sgemmCpAsync.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <cuda/atomic>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/08_sgemmCpAsync.cuh"

namespace matmul {

// ---- The kernel ------------------------------------------------------------
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
// Where C cannot take float4 stores, the rows go through shared memory as in
// step 8, but past the ring (which is loading the next tile by then): the
// launcher asks for that much more where the GPU gives it (stage_c).
// The owner's wait needs every block of the grid resident at once, so the
// launcher sizes P to what the SMs hold and launches cooperatively: the
// runtime then either runs every block at once or refuses the launch (the
// launcher reports that), so the wait cannot hang on a block that never
// starts. The wait is bounded all the same: a bug that leaves a flag unraised
// traps (the launch fails) after ~seconds instead of hanging.
// Look for: the shapes where sgemmCpAsync loses most of a wave (2049 x 2047 x
// 2051: 272 tiles of 128 x 128 for two blocks on each of 132 SMs); and what
// the persistent loop costs where nothing is split (why the launcher then
// runs sgemmCpAsync; WORKLOG.md, step 9, has the numbers).
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
             int ldb, const StreamK plan, float* __restrict__ partials, int* __restrict__ flags, bool stage_c) {
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
        // A piece: k-tiles kb .. ke - 1 of one tile. The inner loop is sgemmCpAsync's
        // (with the copies issued before k 0: step 8f's split is not applied here);
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
            if (stage_c)
                store_acc_staged<T>(smem + T::SMEM / sizeof(float) + warp * kStagedFloats<T>, C, acc, bm + wm0,
                                    bn + wn0, M, N);
            else
                store_acc<T>(C, acc, bm + wm0, bn + wn0, M, N);
        }
#pragma unroll
        for (int i = 0; i < T::TM; ++i)
#pragma unroll
            for (int j = 0; j < T::TN; ++j) acc[i][j] = 0;
    }
    cp_async_wait<0>();
}

// ---- How the work is split --------------------------------------------------
// How sgemmStreamK splits the work of M x N x K over `slots` resident blocks.
// Only a last wave at most half full is worth splitting; it is split together
// with one full wave, so that every block gets one to two tiles' worth of
// k-tiles and a tile is cut between at most two blocks. The waves before
// stay whole. (Sharing out only the last wave's tiles over all blocks cuts
// every tile into many pieces, which its owner adds one by one: slower, see
// WORKLOG.md, step 9.) With no whole wave (fewer tiles than
// slots / 2) the tiles' k-tiles are shared over about sk_iters /
// kStreamKMinItersPerBlock blocks, never fewer than one a tile (with fewer
// than 4 k-tiles a tile, each block takes one whole tile).
constexpr long long kStreamKMinItersPerBlock = 4;
struct StreamKLaunch {
    StreamK plan;
    int blocks;
    bool split() const { return plan.sk_base + plan.sk_extra > 0; }
};
inline StreamKLaunch plan_streamk(int M, int N, int K, int bm, int bn, int bk, int slots) {
    StreamK p{};
    p.tiles_m = common::ceil_div(M, bm);
    p.tiles_n = common::ceil_div(N, bn);
    p.iters = common::ceil_div(K, bk);
    const long long tiles = 1ll * p.tiles_m * p.tiles_n, full = tiles / slots, rest = tiles % slots;
    long long blocks = slots, sk_iters = 0;
    if (rest == 0 || 2 * rest > slots) {  // the waves come out (nearly) even: nothing split
        p.dp_tiles = int(tiles);
        blocks = std::min<long long>(slots, tiles);
    } else {
        p.dp_tiles = int(full > 0 ? (full - 1) * slots : 0);
        sk_iters = (tiles - p.dp_tiles) * p.iters;
        // No whole wave: at least ~kStreamKMinItersPerBlock k-tiles per block, at most one
        // block per k-tile (an empty range would leave its tile's owner waiting forever).
        if (full == 0)
            blocks = std::min(std::min<long long>(slots, sk_iters),
                              std::max(rest, common::ceil_div(sk_iters, kStreamKMinItersPerBlock)));
    }
    p.sk_base = int(sk_iters / blocks);
    p.sk_extra = int(sk_iters % blocks);
    return {p, int(blocks)};
}

// ---- The launcher of one configuration --------------------------------------
// sgemmStreamK<T>: one wave of persistent blocks.
// slots: resident blocks to plan for (0: SMs x what fits one SM; the tests
// pass small numbers to force every kind of split at small sizes).
template <class T>
std::string launch_sgemmStreamK_with(const float* A, const float* B, float* C, int M, int N, int K, bool pad_b,
                                     int slots) {
    const PreparedB pb = prepare_b(B, N, K, pad_b);
    const bool b16 = pb.b16;
    auto kernel = b16 ? sgemmStreamK<T, true> : sgemmStreamK<T, false>;
    // C staged past the ring where float4 stores cannot write it, if the GPU gives a block that much.
    const size_t staged = T::SMEM + size_t(T::THREADS / 32) * kStagedFloats<T> * sizeof(float);
    const bool stage_c = !c_vec4(C, N) && common::smem_refusal(staged).empty();
    const size_t smem = stage_c ? staged : T::SMEM;
    const std::string refused = common::request_dynamic_smem(kernel, smem, true);
    if (!refused.empty()) return "not launched: " + refused;
    // Every block must be resident at once (owners wait for the blocks that share their tile).
    const int per_sm = common::resident_blocks(reinterpret_cast<const void*>(kernel), T::THREADS, smem);
    if (per_sm < 1) return "not launched: no block of " + tile_name<T>() + " fits an SM";
    const int resident = common::sm_count() * per_sm;
    const StreamKLaunch L = plan_streamk(M, N, K, T::BM, T::BN, T::BK, slots > 0 ? std::min(slots, resident) : resident);
    float* partials = scratch(kStreamKPartials, size_t(L.blocks) * T::BM * T::BN);
    int* flags = zeroed_counters(kStreamKFlags, L.blocks);  // each owner clears the flags it consumed
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(L.blocks);
    cfg.blockDim = dim3(T::THREADS);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute cooperative = {};  // all blocks at once, or no launch
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    cfg.attrs = &cooperative;
    cfg.numAttrs = 1;
    const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, A, pb.b, C, M, N, K, pb.ldb, L.plan, partials, flags,
                                             stage_c);
    if (e == cudaErrorCooperativeLaunchTooLarge) {
        (void)cudaGetLastError();
        return "not launched: " + std::to_string(L.blocks) + " blocks cannot all be resident at once";
    }
    CHECK(e);
    const long long tiles = 1ll * L.plan.tiles_m * L.plan.tiles_n;
    char s[128];
    std::snprintf(s, sizeof s, " P%d tiles %lld = %d whole + %lld split", L.blocks, tiles, L.plan.dp_tiles,
                  tiles - L.plan.dp_tiles);
    return tile_name<T>() + s + (stage_c ? c_what(C, N) : "") + (c_vec4(C, N) || stage_c ? "" : " C:4-byte") + pb.what;
}

}  // namespace matmul
