// bank_conflicts.cuh - shared-memory bank conflicts: the seeds' square and
// rectangular tiles, padding, an XOR swizzle, 8- and 16-byte accesses, a
// broadcast, and a stride sweep that measures what each extra wavefront costs.
//
// Every kernel comes with its trace: the shared-memory instructions one block
// executes, with each lane's byte address. bank_model.cuh turns a trace into
// predicted requests, wavefronts and bank conflicts, and `make profile` checks
// the prediction against the GPU's own counters (Nsight Compute), kernel by
// kernel. The kernels are written so that the trace is exactly what runs: the
// shared accesses are plain, the compiler cannot merge or drop them (checked
// in the SASS), and nothing else touches shared memory.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "03_bank_conflicts/bank_model.cuh"
#include "common/check.cuh"

namespace bank_conflicts {

// ===========================================================================
// Part 1: tiles. One block of BX x BY threads moves one tile of BX*BY
// elements through shared memory: it stores its slice of `in` into the tile in
// one order, waits, and reads the tile back in another order into `out`. With
// `tiles` blocks, block b moves elements [b*BX*BY, (b+1)*BX*BY): the seeds
// launch one block; many blocks make the cost visible in the time.
//
// Thread (tx, ty) has idx = ty*BX + tx, and BX = 32, so warp w is row ty = w.
//   row access    tile[ty][tx]        a warp walks one tile row: 32 consecutive
//                                     words, 32 different banks.
//   column access tile[icol][irow]    with irow = idx / BY, icol = idx % BY:
//                                     the block seen as the transposed BX x BY
//                                     tile. For the square tile it is simply
//                                     tile[tx][ty]: consecutive lanes are a
//                                     whole row (32 words = 128 bytes) apart,
//                                     so all 32 lanes hit one bank.
// A tile row of 32 4-byte words is exactly one pass over the 32 banks; that
// is why a column of a 32-wide tile is the worst case, and why one word of
// padding per row (33 words) rotates each row to the next bank.
// ===========================================================================

constexpr int BDIMX = 32;   // the seeds' tile width: one warp per tile row
constexpr int BDIMY = 32;   // square tile
constexpr int BDIMY_RECT = 16;  // the seeds' rectangular tile: 32 x 16

template <int BX, int BY>
__device__ __forceinline__ void tile_coords(int& idx, int& irow, int& icol) {
    static_assert(BX == 32 && 32 % BY == 0, "tiles are 32 wide, with 1..32 rows dividing 32");
    idx = threadIdx.y * BX + threadIdx.x;
    irow = idx / BY;
    icol = idx % BY;
}

__device__ __forceinline__ size_t tile_base(int elems) { return size_t(blockIdx.x) * elems; }

// writeRowReadRow: both sides walk rows. Conflict-free: one wavefront per
// request, 32 load + 32 store wavefronts for the square tile (16 + 16 for
// the 32 x 16 one). Every other kernel's "% of peer" is relative to this.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadRow(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[threadIdx.y][threadIdx.x];
}

// writeColReadCol: both sides walk columns: a 32-way conflict on each side of
// the square tile (1024 + 1024 wavefronts). In the 32 x 16 tile a warp's
// column access covers two columns of 16 rows: 16 lanes on each of two
// banks, a 16-way conflict (256 + 256). The output is a copy: what a thread
// writes is what it reads back.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeColReadCol(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[icol][irow] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][irow];
}

// writeColReadRow: conflicts on the store side only (seed: 32 loads, 1024
// stores). The tile now holds the transpose, so `out` is `in` transposed.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeColReadRow(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[icol][irow] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[threadIdx.y][threadIdx.x];
}

// writeRowReadCol: conflicts on the load side only (seed: 1024 loads, 32
// stores). The shape of every shared-memory transpose; the kernels below fix
// its load side three ways.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadCol(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][irow];
}

// writeRowReadColDynamic: the same with dynamic shared memory (size given at
// launch, a 1-D array indexed by hand). Same addresses, same counters: where
// the array is declared makes no difference to the banks.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadColDynamic(const int* __restrict__ in, int* __restrict__ out) {
    extern __shared__ __align__(128) int dtile[];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    dtile[threadIdx.y * BX + threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = dtile[icol * BX + irow];
}

// writeRowReadColPadding<PAD>: each tile row padded by PAD words, so row r
// starts PAD*r banks further on. Square tile: PAD = 1 makes the column read
// conflict-free. 32 x 16 tile: a warp's column read covers two tile columns
// (irow and irow + 1) of 16 rows; with PAD = 1 row r of the first starts at
// bank r and row r of the second at bank r + 1, so the halves overlap on 15
// banks: still 2-way. PAD = 2 spreads the first half over the even banks and
// the second over the odd ones: conflict-free (seed 003: "the padding should
// be 2"). The cost: PAD*BY wasted words.
template <int BX, int BY, int PAD>
__global__ void __launch_bounds__(BX * BY) writeRowReadColPadding(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX + PAD];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][irow];
}

// writeRowReadColDynPad<PAD>: padding with dynamic shared memory; the launch
// must ask for the padded size, BY * (BX + PAD) words.
template <int BX, int BY, int PAD>
__global__ void __launch_bounds__(BX * BY) writeRowReadColDynPad(const int* __restrict__ in, int* __restrict__ out) {
    extern __shared__ __align__(128) int dtile[];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    dtile[threadIdx.y * (BX + PAD) + threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = dtile[icol * (BX + PAD) + irow];
}

// writeRowReadColSwizzle (beyond the seeds): no padding; instead element
// (r, c) is stored in column c ^ key(r) of row r. XOR with a per-row constant
// permutes a row's 32 columns, so row accesses stay conflict-free; the key
// moves each row's column c to a different bank, so column reads are too.
// Square: key(r) = r. 32 x 16: key(r) = 2r, so the two tile columns a warp
// reads (irow even and odd) land on the even and the odd banks. Conflict-free
// both ways with no wasted word; the price is one XOR per index.
template <int BX, int BY>
__host__ __device__ __forceinline__ int swizzle_key(int row) { return (row * (BX / BY)) % BX; }

template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadColSwizzle(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x ^ swizzle_key<BX, BY>(threadIdx.y)] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][irow ^ swizzle_key<BX, BY>(icol)];
}

// writeRowReadBroadcast (beyond the seeds): every lane of a warp reads the
// same word, tile[ty][0]. One bank, one word: a broadcast, one wavefront,
// no conflict. "Same bank" only hurts when the words differ.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadBroadcast(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[threadIdx.y][0];
}

// writeRowReadColWide<T, PAD> (beyond the seeds): the square writeRowReadCol
// with 8-byte (double) or 16-byte (int4) elements. A warp's request is then
// 256 or 512 bytes: 2 or 4 wavefronts even without conflicts, one per half-
// or quarter-warp. Unpadded, a column's 16 (or 8) lanes per phase hit the same
// 2 (or 4) banks: 16 x 2 = 32 and 8 x 4 = 32 wavefronts, like the 4-byte case.
// Padding by one *element* (8 or 16 bytes, not 4) fixes both.
template <class T, int PAD>
__global__ void __launch_bounds__(BDIMX * BDIMY) writeRowReadColWide(const T* __restrict__ in, T* __restrict__ out) {
    __shared__ __align__(128) T tile[BDIMY][BDIMX + PAD];
    const int idx = threadIdx.y * BDIMX + threadIdx.x;
    const size_t base = tile_base(BDIMX * BDIMY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[threadIdx.x][threadIdx.y];
}

// reverseBlockOptIn: more than 48 KB of shared memory per block. 1024
// threads stage 24576 ints (96 KB of dynamic shared memory) and write them
// back reversed. A launch asking for more than 48 KB of dynamic shared memory
// fails (cudaErrorInvalidValue) until the kernel opts in with
// cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
// bytes); the launcher does so. Consecutive lanes, consecutive words (the
// reverse read descends): conflict-free both ways.
constexpr int kOptInThreads = 1024;
constexpr int kOptInPerThread = 24;
constexpr int kOptInElems = kOptInThreads * kOptInPerThread;
constexpr size_t kOptInBytes = size_t(kOptInElems) * sizeof(int);  // 96 KB

__global__ void __launch_bounds__(kOptInThreads) reverseBlockOptIn(const int* __restrict__ in, int* __restrict__ out) {
    extern __shared__ __align__(128) int big[];
    const size_t base = tile_base(kOptInElems);
#pragma unroll
    for (int k = 0; k < kOptInPerThread; ++k) big[k * kOptInThreads + threadIdx.x] = in[base + k * kOptInThreads + threadIdx.x];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kOptInPerThread; ++k) {
        const int i = k * kOptInThreads + threadIdx.x;
        out[base + i] = big[kOptInElems - 1 - i];
    }
}

// ===========================================================================
// Part 2: the stride sweep. Lane l reads word l * stride, so the 32 lanes hit
// 32 / gcd(stride, 32) banks: a gcd(stride, 32)-way conflict (stride 1: none;
// 2: 2-way; 32: all lanes on bank 0). Each kernel loops over the same
// read `iters` times so that the cost of one request can be measured.
// The loads are `ld.volatile.shared`: the compiler must issue every one of
// them (a plain load of an unchanged address would be hoisted out of the loop).
// ===========================================================================

constexpr int kSweepWords = 2048;  // 8 KB: room for lane 31 at stride 65
constexpr int kSweepThreads = 1024;

__host__ __device__ inline uint32_t sweep_value(uint32_t word) { return word * 2654435761u + 12345u; }

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ uint32_t ld_volatile_shared(uint32_t addr) {
    uint32_t v;
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

// readStrideThroughput: one block of 32 warps per SM, every warp issuing
// `iters` independent strided reads. The shared-memory pipe delivers one
// wavefront per cycle per SM, so the SM needs about `degree` cycles per
// request: cycles per request vs conflict degree is a line of slope 1.
// cycles[b] = clock64 cycles block b spent in the loop (between two barriers);
// sink[thread] = the sum of what it read, checked by the CPU.
__global__ void __launch_bounds__(kSweepThreads)
readStrideThroughput(int stride, int iters, uint32_t* __restrict__ sink, long long* __restrict__ cycles) {
    __shared__ __align__(128) uint32_t buf[kSweepWords];
    for (int i = threadIdx.x; i < kSweepWords; i += kSweepThreads) buf[i] = sweep_value(i);
    const uint32_t addr = smem_addr(buf) + 4u * uint32_t((threadIdx.x % 32) * stride % kSweepWords);
    __syncthreads();
    const long long start = clock64();
    uint32_t sum = 0;
#pragma unroll 16
    for (int i = 0; i < iters; ++i) sum += ld_volatile_shared(addr);
    __syncthreads();
    if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - start;
    sink[size_t(blockIdx.x) * kSweepThreads + threadIdx.x] = sum;
}

// readStrideLatency: one warp, a dependent chain. Each word holds the shared
// address of the word 32 further on (mod 2048), so lane l keeps reading at
// l * stride + 32k words: same banks, same conflict degree, and every load
// must wait for the previous one. cycles / iters = the latency of one
// request; its growth with the degree is the time each extra wavefront adds
// to a single request.
constexpr int kChainStep = 32;  // words; a multiple of 32 keeps every lane on its bank

__global__ void __launch_bounds__(32)
readStrideLatency(int stride, int iters, uint32_t* __restrict__ sink, long long* __restrict__ cycles) {
    __shared__ __align__(128) uint32_t buf[kSweepWords];
    const uint32_t base = smem_addr(buf);
    for (int i = threadIdx.x; i < kSweepWords; i += 32) buf[i] = base + 4u * uint32_t((i + kChainStep) % kSweepWords);
    uint32_t a = base + 4u * uint32_t(threadIdx.x * stride % kSweepWords);
    __syncwarp();
    const long long start = clock64();
#pragma unroll 16
    for (int i = 0; i < iters; ++i) a = ld_volatile_shared(a);
    __syncwarp();
    const long long stop = clock64();
    if (threadIdx.x == 0) cycles[0] = stop - start;
    sink[threadIdx.x] = (a - base) / 4u;  // the word index the chain ended on
}

// ===========================================================================
// Part 3: probe. One warp, one access of width W at per-lane byte offsets
// given by the host, with only the lanes in `mask` active. `make profile`
// launches it on random patterns and compares every launch's counters with
// the model; for loads the warp first fills the 16 KB buffer (128 requests).
// ===========================================================================

constexpr int kProbeWords = 4096;  // 16 KB

template <int W, bool kStore>
__global__ void __launch_bounds__(32) probeAccess(const uint32_t* __restrict__ offsets, uint32_t mask, uint32_t* __restrict__ out) {
    __shared__ __align__(128) uint32_t buf[kProbeWords];
    const int lane = threadIdx.x;
    const uint32_t a = smem_addr(buf) + offsets[lane];
    uint32_t v[4] = {sweep_value(lane), sweep_value(lane + 32), sweep_value(lane + 64), sweep_value(lane + 96)};
    if (!kStore) {  // a fixed trip count: exactly kProbeWords / 32 store instructions
        for (int k = 0; k < kProbeWords / 32; ++k) buf[k * 32 + lane] = sweep_value(k * 32 + lane);
        __syncwarp();
    }
    if (mask >> lane & 1u) {
        if constexpr (kStore) {
            if constexpr (W == 4) asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(a), "r"(v[0]) : "memory");
            if constexpr (W == 8) asm volatile("st.volatile.shared.v2.u32 [%0], {%1, %2};" ::"r"(a), "r"(v[0]), "r"(v[1]) : "memory");
            if constexpr (W == 16)
                asm volatile("st.volatile.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]) : "memory");
        } else {
            if constexpr (W == 4) asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v[0]) : "r"(a) : "memory");
            if constexpr (W == 8) asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v[0]), "=r"(v[1]) : "r"(a) : "memory");
            if constexpr (W == 16)
                asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "r"(a) : "memory");
        }
    }
    for (int k = 0; k < W / 4; ++k) out[lane * 4 + k] = v[k];
}

// ===========================================================================
// Host side: traces (what the model predicts each kernel executes), the
// expected output of each tile kernel, launchers, and the kernel list.
// ===========================================================================

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// "<<<grid, block, dynamic bytes>>>", as written at the launch.
inline std::string launch_string(dim3 g, dim3 b, size_t dyn = 0) {
    char blk[32], s[96];
    if (b.y == 1) std::snprintf(blk, sizeof blk, "%u", b.x);
    else std::snprintf(blk, sizeof blk, "(%u,%u)", b.x, b.y);
    if (dyn) std::snprintf(s, sizeof s, "<<<%u,%s,%zu>>>", g.x, blk, dyn);
    else std::snprintf(s, sizeof s, "<<<%u,%s>>>", g.x, blk);
    return s;
}

// Where a thread's element sits in the tile, in words (the model restates each
// kernel's index arithmetic here; ncu is the judge of whether they agree).
enum class At { Row, Col, RowSwizzle, ColSwizzle, RowFirst };

inline uint32_t tile_word(At at, int idx, int bx, int by, int pad) {
    const int tx = idx % bx, ty = idx / bx, irow = idx / by, icol = idx % by;
    const int ld = bx + pad;  // words per tile row
    const auto key = [&](int r) { return (r * (bx / by)) % bx; };
    switch (at) {
        case At::Row: return uint32_t(ty * ld + tx);
        case At::Col: return uint32_t(icol * ld + irow);
        case At::RowSwizzle: return uint32_t(ty * ld + (tx ^ key(ty)));
        case At::ColSwizzle: return uint32_t(icol * ld + (irow ^ key(icol)));
        case At::RowFirst: return uint32_t(ty * ld);
    }
    return 0;
}

// One tile's trace: per warp, its store then its load (element size eb bytes).
template <int BX, int BY, int PAD, int EB, At ST, At LD>
std::vector<Request> trace_tile() {
    std::vector<Request> t;
    for (int w = 0; w < BX * BY / kWarpSize; ++w)
        for (bool store : {true, false}) {
            Request r;
            r.store = store;
            r.width = EB;
            for (int l = 0; l < kWarpSize; ++l)
                r.addr[l] = uint32_t(EB) * tile_word(store ? ST : LD, w * kWarpSize + l, BX, BY, PAD);
            t.push_back(r);
        }
    return t;
}

inline std::vector<Request> trace_reverse() {
    std::vector<Request> t;
    for (int w = 0; w < kOptInThreads / kWarpSize; ++w)
        for (bool store : {true, false})
            for (int k = 0; k < kOptInPerThread; ++k) {
                Request r;
                r.store = store;
                for (int l = 0; l < kWarpSize; ++l) {
                    const int i = k * kOptInThreads + w * kWarpSize + l;
                    r.addr[l] = 4u * uint32_t(store ? i : kOptInElems - 1 - i);
                }
                t.push_back(r);
            }
    return t;
}

// What `out` must hold: out element e of a tile is in element src(e).
enum class Perm { Identity, RowCol, ColRow, RowFirst, Reverse };

inline size_t perm_source(Perm p, size_t e, int bx, int by, size_t n) {
    switch (p) {
        case Perm::Identity: return e;
        case Perm::RowCol: return (e % by) * bx + e / by;   // out viewed as bx x by = in (by x bx) transposed
        case Perm::ColRow: return (e % bx) * by + e / bx;   // out (by x bx) = in viewed as bx x by, transposed
        case Perm::RowFirst: return (e / bx) * bx;          // every element of a row = the row's first
        case Perm::Reverse: return n - 1 - e;
    }
    return e;
}

using LaunchFn = std::string (*)(const void* in, void* out, int blocks);

struct TileKernel {
    const char* name;       // as printed and as --kernel takes it
    const char* peer;       // its conflict-free counterpart ("% of peer")
    int bx, by;             // block (= tile) shape; bx*by threads
    int elem_bytes;         // 4, 8 or 16
    int tile_elems;         // elements one block moves
    int tiles_per_block;    // how many of the program's tiles (32x32 words) one block stands for
    Perm perm;
    LaunchFn launch;
    std::vector<Request> (*trace)();
    const char* what;

    // Blocks for `tiles` tiles: the 96 KB kernel moves 24 tiles' worth per block.
    int blocks(int tiles) const { return ceil_div(tiles, tiles_per_block); }
    size_t elements(int tiles) const { return size_t(blocks(tiles)) * tile_elems; }
    size_t bytes(int tiles) const { return elements(tiles) * elem_bytes; }
};

template <int BX, int BY, void (*K)(const int*, int*), size_t kDynBytes = 0>
std::string launch_tile(const void* in, void* out, int blocks) {
    const dim3 grid(blocks), block(BX, BY);
    K<<<grid, block, kDynBytes>>>(static_cast<const int*>(in), static_cast<int*>(out));
    CHECK_LAUNCH();
    return launch_string(grid, block, kDynBytes);
}

template <class T, int PAD>
std::string launch_wide(const void* in, void* out, int blocks) {
    const dim3 grid(blocks), block(BDIMX, BDIMY);
    writeRowReadColWide<T, PAD><<<grid, block>>>(static_cast<const T*>(in), static_cast<T*>(out));
    CHECK_LAUNCH();
    return launch_string(grid, block);
}

// Opts in to 96 KB of dynamic shared memory, then launches.
inline std::string launch_opt_in(const void* in, void* out, int blocks) {
    CHECK(cudaFuncSetAttribute(reverseBlockOptIn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kOptInBytes)));
    const dim3 grid(blocks), block(kOptInThreads);
    reverseBlockOptIn<<<grid, block, kOptInBytes>>>(static_cast<const int*>(in), static_cast<int*>(out));
    CHECK_LAUNCH();
    return launch_string(grid, block, kOptInBytes);
}

constexpr int SQ = BDIMY, RE = BDIMY_RECT;  // tile rows: square, rectangular
constexpr size_t dyn_bytes(int by, int pad) { return size_t(by) * (BDIMX + pad) * sizeof(int); }

// Every tile kernel, in teaching order: the seeds' square set, their
// rectangular set ("Rect": the same code with 16 rows), then beyond the seeds.
inline const std::vector<TileKernel>& tile_kernels() {
    static const std::vector<TileKernel> k = {
        {"writeRowReadRow", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::Identity,
         launch_tile<BDIMX, SQ, writeRowReadRow<BDIMX, SQ>>, trace_tile<BDIMX, SQ, 0, 4, At::Row, At::Row>,
         "rows both ways: conflict-free"},
        {"writeColReadCol", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::Identity,
         launch_tile<BDIMX, SQ, writeColReadCol<BDIMX, SQ>>, trace_tile<BDIMX, SQ, 0, 4, At::Col, At::Col>,
         "columns both ways: 32-way conflicts on both sides"},
        {"writeColReadRow", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::ColRow,
         launch_tile<BDIMX, SQ, writeColReadRow<BDIMX, SQ>>, trace_tile<BDIMX, SQ, 0, 4, At::Col, At::Row>,
         "column store (32-way), row load"},
        {"writeRowReadCol", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::RowCol,
         launch_tile<BDIMX, SQ, writeRowReadCol<BDIMX, SQ>>, trace_tile<BDIMX, SQ, 0, 4, At::Row, At::Col>,
         "row store, column load (32-way)"},
        {"writeRowReadColDynamic", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::RowCol,
         launch_tile<BDIMX, SQ, writeRowReadColDynamic<BDIMX, SQ>, dyn_bytes(SQ, 0)>,
         trace_tile<BDIMX, SQ, 0, 4, At::Row, At::Col>, "the same in dynamic shared memory"},
        {"writeRowReadColPadding", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::RowCol,
         launch_tile<BDIMX, SQ, writeRowReadColPadding<BDIMX, SQ, 1>>, trace_tile<BDIMX, SQ, 1, 4, At::Row, At::Col>,
         "rows padded by 1 word: conflict-free"},
        {"writeRowReadColDynPad", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::RowCol,
         launch_tile<BDIMX, SQ, writeRowReadColDynPad<BDIMX, SQ, 1>, dyn_bytes(SQ, 1)>,
         trace_tile<BDIMX, SQ, 1, 4, At::Row, At::Col>, "padding in dynamic shared memory"},

        {"writeRowReadRowRect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::Identity,
         launch_tile<BDIMX, RE, writeRowReadRow<BDIMX, RE>>, trace_tile<BDIMX, RE, 0, 4, At::Row, At::Row>,
         "32x16 tile, rows both ways"},
        {"writeColReadColRect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::Identity,
         launch_tile<BDIMX, RE, writeColReadCol<BDIMX, RE>>, trace_tile<BDIMX, RE, 0, 4, At::Col, At::Col>,
         "columns both ways: 16-way"},
        {"writeColReadRowRect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::ColRow,
         launch_tile<BDIMX, RE, writeColReadRow<BDIMX, RE>>, trace_tile<BDIMX, RE, 0, 4, At::Col, At::Row>,
         "column store (16-way), row load"},
        {"writeRowReadColRect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::RowCol,
         launch_tile<BDIMX, RE, writeRowReadCol<BDIMX, RE>>, trace_tile<BDIMX, RE, 0, 4, At::Row, At::Col>,
         "row store, column load (16-way)"},
        {"writeRowReadColDynamicRect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::RowCol,
         launch_tile<BDIMX, RE, writeRowReadColDynamic<BDIMX, RE>, dyn_bytes(RE, 0)>,
         trace_tile<BDIMX, RE, 0, 4, At::Row, At::Col>, "the same in dynamic shared memory"},
        {"writeRowReadColPad1Rect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::RowCol,
         launch_tile<BDIMX, RE, writeRowReadColPadding<BDIMX, RE, 1>>, trace_tile<BDIMX, RE, 1, 4, At::Row, At::Col>,
         "padded by 1 word: still 2-way"},
        {"writeRowReadColPaddingRect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::RowCol,
         launch_tile<BDIMX, RE, writeRowReadColPadding<BDIMX, RE, 2>>, trace_tile<BDIMX, RE, 2, 4, At::Row, At::Col>,
         "padded by 2 words: conflict-free"},
        {"writeRowReadColDynPadRect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::RowCol,
         launch_tile<BDIMX, RE, writeRowReadColDynPad<BDIMX, RE, 2>, dyn_bytes(RE, 2)>,
         trace_tile<BDIMX, RE, 2, 4, At::Row, At::Col>, "dynamic, padded by 2 words"},

        {"writeRowReadColSwizzle", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::RowCol,
         launch_tile<BDIMX, SQ, writeRowReadColSwizzle<BDIMX, SQ>>,
         trace_tile<BDIMX, SQ, 0, 4, At::RowSwizzle, At::ColSwizzle>, "XOR swizzle: conflict-free, no padding"},
        {"writeRowReadColSwizzleRect", "writeRowReadRowRect", BDIMX, RE, 4, BDIMX * RE, 1, Perm::RowCol,
         launch_tile<BDIMX, RE, writeRowReadColSwizzle<BDIMX, RE>>,
         trace_tile<BDIMX, RE, 0, 4, At::RowSwizzle, At::ColSwizzle>, "XOR swizzle for 32x16 (key 2r)"},
        {"writeRowReadBroadcast", "writeRowReadRow", BDIMX, SQ, 4, BDIMX * SQ, 1, Perm::RowFirst,
         launch_tile<BDIMX, SQ, writeRowReadBroadcast<BDIMX, SQ>>, trace_tile<BDIMX, SQ, 0, 4, At::Row, At::RowFirst>,
         "all lanes read one word: a broadcast"},
        {"writeRowReadColDouble", "writeRowReadColDoublePad", BDIMX, SQ, 8, BDIMX * SQ, 1, Perm::RowCol,
         launch_wide<double, 0>, trace_tile<BDIMX, SQ, 0, 8, At::Row, At::Col>, "8-byte elements, column load"},
        {"writeRowReadColDoublePad", "writeRowReadColDoublePad", BDIMX, SQ, 8, BDIMX * SQ, 1, Perm::RowCol,
         launch_wide<double, 1>, trace_tile<BDIMX, SQ, 1, 8, At::Row, At::Col>, "8-byte, padded by one double"},
        {"writeRowReadColVec4", "writeRowReadColVec4Pad", BDIMX, SQ, 16, BDIMX * SQ, 1, Perm::RowCol,
         launch_wide<int4, 0>, trace_tile<BDIMX, SQ, 0, 16, At::Row, At::Col>, "16-byte elements, column load"},
        {"writeRowReadColVec4Pad", "writeRowReadColVec4Pad", BDIMX, SQ, 16, BDIMX * SQ, 1, Perm::RowCol,
         launch_wide<int4, 1>, trace_tile<BDIMX, SQ, 1, 16, At::Row, At::Col>, "16-byte, padded by one int4"},
        {"reverseBlockOptIn", "reverseBlockOptIn", kOptInThreads, 1, 4, kOptInElems, kOptInElems / (BDIMX * BDIMY), Perm::Reverse,
         launch_opt_in, trace_reverse, "96 KB dynamic shared memory (opt-in)"},
    };
    return k;
}

inline const TileKernel* find_tile_kernel(const std::string& name) {
    for (const TileKernel& k : tile_kernels()) if (name == k.name) return &k;
    return nullptr;
}

// The words a tile kernel's output must hold, given its input (both as 4-byte
// words; an element of elem_bytes is elem_bytes / 4 words moved together).
inline void expected_output(const TileKernel& k, const uint32_t* in, uint32_t* out, int blocks) {
    const size_t wpe = size_t(k.elem_bytes) / 4, n = size_t(k.tile_elems);
    for (size_t t = 0; t < size_t(blocks); ++t)
        for (size_t e = 0; e < n; ++e) {
            const size_t s = perm_source(k.perm, e, k.bx, k.by, n);
            for (size_t w = 0; w < wpe; ++w) out[(t * n + e) * wpe + w] = in[(t * n + s) * wpe + w];
        }
}

// --- the sweep -------------------------------------------------------------

inline int conflict_degree(int stride) {  // gcd(stride, 32)
    int a = stride, b = kBanks;
    while (b) { const int t = a % b; a = b; b = t; }
    return a;
}

inline Addresses stride_addresses(int stride, int first_word = 0) {
    Addresses a{};
    for (int l = 0; l < kWarpSize; ++l) a[l] = 4u * uint32_t((first_word + l * stride) % kSweepWords);
    return a;
}

// Fill: kSweepWords / (threads) stores per thread, consecutive lanes on consecutive words.
inline void trace_fill(std::vector<Request>& t, int threads, int words) {
    for (int w = 0; w < threads / kWarpSize; ++w)
        for (int i = 0; i < words / threads; ++i) {
            Request r;
            r.store = true;
            for (int l = 0; l < kWarpSize; ++l) r.addr[l] = 4u * uint32_t(i * threads + w * kWarpSize + l);
            t.push_back(r);
        }
}

inline Tally tally_throughput(int stride, int iters, int blocks) {
    std::vector<Request> t;
    trace_fill(t, kSweepThreads, kSweepWords);
    for (int w = 0; w < kSweepThreads / kWarpSize; ++w) {
        Request r;
        r.addr = stride_addresses(stride);
        r.repeat = uint64_t(iters);
        t.push_back(r);
    }
    return tally(t).scale(uint64_t(blocks));
}

inline Tally tally_latency(int stride, int iters) {
    std::vector<Request> t;
    trace_fill(t, kWarpSize, kSweepWords);
    for (int i = 0; i < iters; ++i) {  // hop i reads words l*stride + 32i (mod 2048)
        Request r;
        r.addr = stride_addresses(stride, (i * kChainStep) % kSweepWords);
        t.push_back(r);
    }
    return tally(t);
}

// What the sweep kernels must leave in sink (checked exactly).
inline uint32_t expected_throughput_sum(int lane, int stride, int iters) {
    return uint32_t(iters) * sweep_value(uint32_t(lane * stride % kSweepWords));
}
inline uint32_t expected_latency_end(int lane, int stride, int iters) {
    return uint32_t((int64_t(lane) * stride + int64_t(iters) * kChainStep) % kSweepWords);
}

// Limits of the command line (checked before any GPU work): at 2^17 tiles
// the 16-byte kernels move 2 GiB each way, and the host holds three copies.
constexpr int64_t kMaxTiles = int64_t(1) << 17;
constexpr int64_t kMaxIters = int64_t(1) << 24;

}  // namespace bank_conflicts
