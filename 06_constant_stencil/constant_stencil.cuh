// constant_stencil.cuh - a 1D 9-point stencil: where its coefficients live
// (__constant__, the read-only cache, plain global memory), and how it reaches
// copy speed.
//
// The stencil is seed 000's first derivative, of 8th order:
//
//     out[i] = sum_{k=1..RADIUS} c_k * (x[i+k] - x[i-k]),   x[j] = in[j + RADIUS],
//
// for i = 0 .. n-1. The input holds n + 2*RADIUS floats (a halo of RADIUS on
// each side), the output n. The seed writes the same sum with its four
// coefficients named c3..c0 and one sign outside; the default values are the
// classic 4/5, -1/5, 4/105, -1/280 (the derivative of a polynomial of degree
// <= 8 comes out exact). The centre point has weight 0 but is still loaded:
// it is its neighbours' neighbour.
//
// Every output reads nine inputs, but each input is shared by nine outputs,
// so the least a kernel can move is each input read once and each output
// written once: (n + 2*RADIUS) * 4 + n * 4 bytes. The stencil is a copy with
// a little arithmetic on the way, and a copy kernel measured in the same run
// is its ceiling.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"

namespace constant_stencil {

constexpr int RADIUS = 4;                     // 9 points: x[i-4] .. x[i+4]
constexpr int kBlock = 256;                   // threads per block (stencil1DSmemVec4: 128)
constexpr int kTile4 = (4 + 2 * RADIUS) / 4;  // float4s a thread of the vec4 kernels reads: 3
static_assert(RADIUS % 2 == 0, "the float4 kernels need a halo of whole float4s (2*RADIUS % 4 == 0)");
static_assert(RADIUS % 4 == 0, "copyVec4 reads in + RADIUS as float4s");

struct Coefficients {
    float c[RADIUS];  // c[k-1] weighs x[i+k] - x[i-k]
};

// 8th-order central first derivative (Fornberg): exact for degree <= 8.
inline Coefficients derivative8() { return {{4.0f / 5.0f, -1.0f / 5.0f, 4.0f / 105.0f, -1.0f / 280.0f}}; }

// The coefficients in constant memory: 16 bytes in the constant bank, set
// from the host with cudaMemcpyToSymbol. (A __constant__ variable defined in a
// header is fine here: each program is one translation unit.)
__constant__ float c_coef[RADIUS];

// What every stencil launch gets. `coef` is a device copy of the same
// coefficients for the kernels that read them from global memory.
struct Args {
    const float* in;    // n + 2*RADIUS floats
    float* out;         // n floats
    size_t n;
    const float* coef;  // RADIUS floats in global memory
};

// ---------------------------------------------------------------------------
// The ceiling: a copy of the same bytes.
// ---------------------------------------------------------------------------

// copyVec4: out[i] = in[i + RADIUS], one float4 per thread (05_transpose's
// copy: unrolling it measured slower there). RADIUS floats = 16 bytes, so
// in + RADIUS is on 16 bytes whenever in is (launch_copy checks in and out).
// It reads n floats where the stencil reads n + 8: the 32-byte difference is
// counted for both, the same bytes model everywhere.
__global__ void __launch_bounds__(kBlock)
copyVec4(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const size_t t = size_t(blockIdx.x) * kBlock + threadIdx.x;
    if (t < n / 4) reinterpret_cast<float4*>(out)[t] = reinterpret_cast<const float4*>(in + RADIUS)[t];
    // The last n % 4 floats, which no float4 covers.
    if (blockIdx.x == 0 && threadIdx.x < n % 4) out[n / 4 * 4 + threadIdx.x] = in[n / 4 * 4 + threadIdx.x + RADIUS];
}

// ---------------------------------------------------------------------------
// Seed 000's kernel: a shared-memory tile with a halo, in a grid-stride loop.
// Three versions that differ ONLY in where the four coefficients come from.
//
// Each pass of the loop stages kBlock + 2*RADIUS inputs (the block's centres
// plus a halo of RADIUS on each side) in shared memory, so every input is
// read from global memory about once instead of nine times. The loop bounds
// are uniform across the block, so every thread reaches both barriers (the
// seed's `while (idx < size)` is per thread: on the last, partial pass some
// threads leave the loop while the others wait at __syncthreads()).
// ---------------------------------------------------------------------------

// Stages in[base .. base + count + 2*RADIUS) in tile[0 .. count + 2*RADIUS),
// where count = min(kBlock, n - base) outputs: each thread its own centre,
// the first RADIUS threads also one float of each halo. The right halo sits
// after the last centre of THIS tile, so a partial last tile is right too.
__device__ __forceinline__ void load_tile(float* tile, const float* __restrict__ in, size_t base, size_t n) {
    const size_t count = n - base < size_t(kBlock) ? n - base : size_t(kBlock);
    if (threadIdx.x < count) tile[threadIdx.x + RADIUS] = in[base + threadIdx.x + RADIUS];
    if (threadIdx.x < RADIUS) {
        tile[threadIdx.x] = in[base + threadIdx.x];                                  // left halo
        tile[count + RADIUS + threadIdx.x] = in[base + count + RADIUS + threadIdx.x];  // right halo
    }
}

// Test hook, compiled out in every kernel the program runs: one warp sleeps
// ~20 us between the barrier and its reads of the tile, the schedule that
// makes a missing barrier visible (tests/test_06_constant_stencil.cu).
template <bool kStall>
__device__ __forceinline__ void stall_warp_1() {
    if constexpr (kStall) {
        if (threadIdx.x / 32 == 1)
            for (int i = 0; i < 20; ++i) __nanosleep(1000);
    }
}

// stencil1DGlobal: the coefficients are an ordinary global array, and the
// compiler loads all four again on every pass: four LDG.E after the barrier
// (not for aliasing: with __restrict__ on every pointer, as in
// stencil1DReadOnly, they stay there too; README), L1 hits (ncu: the same L1 misses as stencil1DConstant), on which
// the FFMAs wait. Look for: slower than stencil1DConstant (README, the
// kernels table). Each pass is one DRAM round trip plus what follows the
// barrier, and these loads add an L1 round trip to every pass.
__global__ void __launch_bounds__(kBlock)
stencil1DGlobal(const float* __restrict__ in, float* out, size_t n, const float* coef) {
    __shared__ float tile[kBlock + 2 * RADIUS];
    for (size_t base = size_t(blockIdx.x) * kBlock; base < n; base += size_t(gridDim.x) * kBlock) {
        load_tile(tile, in, base, n);
        __syncthreads();
        if (base + threadIdx.x < n) {
            const int s = threadIdx.x + RADIUS;
            float acc = 0.0f;
#pragma unroll
            for (int k = 1; k <= RADIUS; ++k) acc += coef[k - 1] * (tile[s + k] - tile[s - k]);
            out[base + threadIdx.x] = acc;
        }
        __syncthreads();  // the next pass overwrites the tile
    }
}

// stencil1DConstant: seed 000's kernel, coefficients in __constant__. Every
// lane of a warp reads the same c_coef[k-1] at the same time, the one pattern
// the constant cache serves in a single broadcast. Better still, the values
// are the same for the whole grid, so the compiler loads them once, before the
// loop, into uniform registers (SASS: ULDC.64 UR12, c[0x3][0x0]; then
// FFMA R0, R0, UR12, RZ): nothing is left between the barrier and the math.
//
// The second barrier is the one the seed lacks. Without it, a warp that has
// finished its outputs starts the next pass and overwrites tile entries that
// a slower neighbouring warp still reads as its halo (stencil1DConstantRace
// below; compute-sanitizer racecheck reports it).
template <bool kStall = false>
__global__ void __launch_bounds__(kBlock)
stencil1DConstant(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    __shared__ float tile[kBlock + 2 * RADIUS];
    for (size_t base = size_t(blockIdx.x) * kBlock; base < n; base += size_t(gridDim.x) * kBlock) {
        load_tile(tile, in, base, n);
        __syncthreads();  // the tile is complete
        stall_warp_1<kStall>();
        if (base + threadIdx.x < n) {
            const int s = threadIdx.x + RADIUS;
            float acc = 0.0f;
#pragma unroll
            for (int k = 1; k <= RADIUS; ++k) acc += c_coef[k - 1] * (tile[s + k] - tile[s - k]);
            out[base + threadIdx.x] = acc;
        }
        __syncthreads();  // everyone is done reading it
    }
}

// stencil1DReadOnly: the coefficients through the read-only data cache,
// `const float* __restrict__` plus __ldg (LDG.E.CONSTANT in SASS: the
// non-coherent path, allowed because nothing the kernel writes can alias
// them). Still four loads per pass after the barrier, now LDG.E.CONSTANT
// (the compiler could hoist them out of the loop but does not). Look for: the
// same time as stencil1DGlobal, behind stencil1DConstant; the seed measured
// read-only and constant equal on an older GPU (README).
__global__ void __launch_bounds__(kBlock)
stencil1DReadOnly(const float* __restrict__ in, float* __restrict__ out, size_t n, const float* __restrict__ coef) {
    __shared__ float tile[kBlock + 2 * RADIUS];
    for (size_t base = size_t(blockIdx.x) * kBlock; base < n; base += size_t(gridDim.x) * kBlock) {
        load_tile(tile, in, base, n);
        __syncthreads();
        if (base + threadIdx.x < n) {
            const int s = threadIdx.x + RADIUS;
            float acc = 0.0f;
#pragma unroll
            for (int k = 1; k <= RADIUS; ++k) acc += __ldg(&coef[k - 1]) * (tile[s + k] - tile[s - k]);
            out[base + threadIdx.x] = acc;
        }
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------
// Without shared memory, and at copy speed.
// ---------------------------------------------------------------------------

// Sum over the 9 points around x[0] (x in registers or shared memory).
__device__ __forceinline__ float apply(const float* x) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 1; k <= RADIUS; ++k) acc += c_coef[k - 1] * (x[k] - x[-k]);
    return acc;
}

// stencil1DL1: no tile, no barrier. Each thread reads its eight neighbours
// straight from global memory; the warp's eight loads overlap by all but a
// few floats, and L1 serves the repeats, so DRAM still sees each input about
// once. One output, 4 bytes, per thread: look at how far this and the three
// above are from the copy, which moves 16 bytes per thread.
__global__ void __launch_bounds__(kBlock)
stencil1DL1(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x;
    if (i < n) out[i] = apply(in + i + RADIUS);
}

// The four outputs whose inputs are x[0 .. 4 + 2*RADIUS), as one float4.
__device__ __forceinline__ float4 apply4(const float* x) {
    return make_float4(apply(x + RADIUS), apply(x + RADIUS + 1), apply(x + RADIUS + 2), apply(x + RADIUS + 3));
}

// Outputs i .. n-1 (fewer than 4) of the last thread, one float at a time.
__device__ __forceinline__ void tail(const float* __restrict__ in, float* __restrict__ out, size_t i, size_t n) {
    for (; i < n; ++i) out[i] = apply(in + i + RADIUS);
}

// stencil1DL1Vec4: four outputs per thread, 16-byte accesses, still no
// shared memory. Thread t needs in[4t .. 4t+12): three float4 loads, the
// second and third the first loads of its two right-hand neighbours. L1
// serves the overlap (ncu: exactly as many sectors come from L2 as for the
// copy), no barrier holds anyone back, and each thread has 16 bytes of its
// own in flight, like the copy. Look for: copy speed. Like every float4
// kernel here it needs in and out on 16 bytes (vec4_refusal, below).
__global__ void __launch_bounds__(kBlock)
stencil1DL1Vec4(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const size_t t = size_t(blockIdx.x) * kBlock + threadIdx.x;
    const size_t i = 4 * t;  // first output (and first input float) of this thread
    if (i + 3 < n) {
        const float4* in4 = reinterpret_cast<const float4*>(in) + t;
        float x[4 * kTile4];
#pragma unroll
        for (int q = 0; q < kTile4; ++q) {
            const float4 v = in4[q];
            x[4 * q] = v.x; x[4 * q + 1] = v.y; x[4 * q + 2] = v.z; x[4 * q + 3] = v.w;
        }
        reinterpret_cast<float4*>(out)[t] = apply4(x);
    } else if (i < n) {
        tail(in, out, i, n);
    }
}

// stencil1DSmemVec4: the seed's tile, 16 bytes at a time. A block stages the
// 4*T + 2*RADIUS inputs of its 4*T outputs (T threads) as T + 2 float4s (one
// per thread, two threads also take the halo), so global memory sees each
// input once and every access is a full 16 bytes. Each thread then reads its
// three float4s from shared memory: consecutive lanes, consecutive 16-byte
// words, 4 wavefronts per warp = no bank conflicts. One tile per block (no
// grid-stride loop): blocks come and go, and while one waits at its barrier
// the other resident blocks keep DRAM busy.
//
// Its block is smaller than the others' on purpose: no thread of a block can
// compute before the block's slowest load has landed, and the fewer warps
// wait for each other, the less time the SM spends with nothing in flight
// (the block sizes measured: README, worklog step 2).
constexpr int kVec4Block = 128;

__global__ void __launch_bounds__(kVec4Block)
stencil1DSmemVec4(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    constexpr int kTileFloats = 4 * kVec4Block + 2 * RADIUS;
    __shared__ float4 tile4[kTileFloats / 4];
    const size_t base = size_t(blockIdx.x) * 4 * kVec4Block;  // first output of the block
    if (base + 4 * kVec4Block <= n) {  // a full tile (the same branch for the whole block)
        const float4* in4 = reinterpret_cast<const float4*>(in + base);
        tile4[threadIdx.x] = in4[threadIdx.x];
        if (threadIdx.x < kTileFloats / 4 - kVec4Block) tile4[kVec4Block + threadIdx.x] = in4[kVec4Block + threadIdx.x];
    } else {  // the last tile: float by float, up to the end of the input
        float* tile = reinterpret_cast<float*>(tile4);
        for (int j = threadIdx.x; j < kTileFloats; j += kVec4Block)
            tile[j] = base + j < n + 2 * RADIUS ? in[base + j] : 0.0f;
    }
    __syncthreads();
    const size_t i = base + 4 * threadIdx.x;
    if (i + 3 < n) {
        float x[4 * kTile4];
#pragma unroll
        for (int q = 0; q < kTile4; ++q) {
            const float4 v = tile4[threadIdx.x + q];
            x[4 * q] = v.x; x[4 * q + 1] = v.y; x[4 * q + 2] = v.z; x[4 * q + 3] = v.w;
        }
        reinterpret_cast<float4*>(out)[i / 4] = apply4(x);
    } else if (i < n) {
        const float* tile = reinterpret_cast<const float*>(tile4);
        for (size_t j = i; j < n; ++j) out[j] = apply(tile + (j - base) + RADIUS);
    }
}

// ---------------------------------------------------------------------------
// Pitfall (never in the default run; `--pitfalls`).
// ---------------------------------------------------------------------------

// stencil1DConstantRace: seed 000's loop as written, with no barrier between
// one pass's reads of the tile and the next pass's writes. Warp w writes tile
// entries that warps w-1 and w+1 read as halo; a warp that runs ahead
// overwrites them before its neighbour has read them. Whether a run shows
// wrong numbers depends on the warps' timing; compute-sanitizer racecheck
// reports the hazard every time, and the test forces the bad schedule.
template <bool kStall = false>
__global__ void __launch_bounds__(kBlock)
stencil1DConstantRace(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    __shared__ float tile[kBlock + 2 * RADIUS];
    for (size_t base = size_t(blockIdx.x) * kBlock; base < n; base += size_t(gridDim.x) * kBlock) {
        load_tile(tile, in, base, n);
        __syncthreads();
        stall_warp_1<kStall>();
        if (base + threadIdx.x < n) {
            const int s = threadIdx.x + RADIUS;
            float acc = 0.0f;
#pragma unroll
            for (int k = 1; k <= RADIUS; ++k) acc += c_coef[k - 1] * (tile[s + k] - tile[s - k]);
            out[base + threadIdx.x] = acc;
        }
        // missing: __syncthreads();
    }
}

// ---------------------------------------------------------------------------
// The constant cache's rule, measured on its own.
//
// Each lane reads table[(step*it + (lane & mask)) % kTableSize] for it = 0 ..
// iters-1: with mask = d-1 a warp's 32 lanes ask for d different words of one
// 128-byte line (d = 1: all the same), and step = 32 moves every read to the
// next line. The table is 1 KB, so every read hits on chip. Look for: the
// constant cache serves one address at a time, so its time grows with d (32
// addresses = 32 serialized reads); the read-only (L1) path serves a whole
// 128-byte line per request, and its time does not move with d. Broadcast
// reads belong in __constant__, per-lane reads do not.
//
// `step` and `mask` are kernel arguments on purpose. With a step fixed at
// compile time the addresses repeat every 256 / step iterations, and the
// compiler (rightly: the table cannot change during the kernel) hoists the
// loads out of the loop, leaving a loop of adds that times nothing.
// ---------------------------------------------------------------------------
constexpr int kTableSize = 256;
__constant__ float c_table[kTableSize];

template <bool kConstant>
__global__ void __launch_bounds__(kBlock)
warpReads(const float* __restrict__ table, float* __restrict__ out, int iters, int mask, int step) {
    const int off = (threadIdx.x % 32) & mask;
    float acc = 0.0f;
    int base = 0;
#pragma unroll 8
    for (int it = 0; it < iters; ++it, base += step) {
        const int idx = (base + off) & (kTableSize - 1);
        acc += kConstant ? c_table[idx] : __ldg(&table[idx]);
    }
    out[size_t(blockIdx.x) * kBlock + threadIdx.x] = acc;  // keeps the loads alive; checked exactly
}

// ---------------------------------------------------------------------------
// Host side: coefficients, launch wrappers, the kernel list, the CPU reference.
// ---------------------------------------------------------------------------

// Sets the coefficients for every kernel: the __constant__ copy and the
// global one (the caller's RADIUS floats on the device).
inline void set_coefficients(const Coefficients& c, float* d_coef) {
    CHECK(cudaMemcpyToSymbol(c_coef, c.c, sizeof c.c));
    CHECK(cudaMemcpy(d_coef, c.c, sizeof c.c, cudaMemcpyHostToDevice));
}

// The grid-stride kernels run one wave: as many blocks as fit on the GPU at
// once (asked once per kernel), fewer when n needs fewer.
template <class Kernel>
unsigned resident_blocks(Kernel kernel) {
    return unsigned(common::sm_count() * common::resident_blocks(reinterpret_cast<const void*>(kernel), kBlock, 0));
}

// Launches the grid-stride kernel K(in, out, n, extra...) of kBlock threads:
// `grid` = 0, one wave; else at most that many blocks (the tests use a few,
// to make every block loop).
template <auto K, class... Extra>
std::string launch_grid_stride(const Args& a, unsigned grid, Extra... extra) {
    static const unsigned resident = resident_blocks(K);  // asked once per kernel
    const unsigned tiles = unsigned(common::ceil_div(a.n, size_t(kBlock)));
    grid = std::min(tiles, grid ? grid : resident);
    K<<<grid, kBlock>>>(a.in, a.out, a.n, extra...);
    CHECK_LAUNCH();
    return common::launch_string(dim3(grid), dim3(kBlock));
}

inline std::string launch_global(const Args& a, unsigned grid = 0) {
    return launch_grid_stride<stencil1DGlobal>(a, grid, a.coef);
}
template <bool kStall = false>
std::string launch_constant(const Args& a, unsigned grid = 0) {
    return launch_grid_stride<stencil1DConstant<kStall>>(a, grid);
}
inline std::string launch_read_only(const Args& a, unsigned grid = 0) {
    return launch_grid_stride<stencil1DReadOnly>(a, grid, a.coef);
}
template <bool kStall = false>
std::string launch_race(const Args& a, unsigned grid = 0) {
    return launch_grid_stride<stencil1DConstantRace<kStall>>(a, grid);
}

// Launches K(in, out, n) with one thread per kOutputs outputs, kThreads a block, enough blocks for n.
template <auto K, int kThreads, int kOutputs>
std::string launch_one_pass(const Args& a) {
    const unsigned grid = unsigned(common::ceil_div(a.n, size_t(kOutputs) * kThreads));
    K<<<grid, kThreads>>>(a.in, a.out, a.n);
    CHECK_LAUNCH();
    return common::launch_string(dim3(grid), dim3(kThreads));
}

// The float4 kernels (copyVec4, stencil1DL1Vec4, stencil1DSmemVec4) load and
// store 16 bytes at a time, so in and out must start on 16 bytes. cudaMalloc'd
// buffers start on 256; a pointer into the middle of one (in + 1) need not.
// There their launchers compute the same outputs 4 bytes at a time, and the
// launch column says so.
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// "" if the float4 kernels can take a's pointers, else why not.
inline std::string vec4_refusal(const Args& a) {
    return aligned16(a.in) && aligned16(a.out) ? "" : "in or out not 16-byte aligned";
}

// copyVec4; where it cannot run, the runtime's copy of the same bytes (it takes any alignment).
inline std::string launch_copy(const Args& a) {
    const std::string why = vec4_refusal(a);
    if (why.empty()) return launch_one_pass<copyVec4, kBlock, 4>(a);
    CHECK(cudaMemcpyAsync(a.out, a.in + RADIUS, a.n * sizeof(float), cudaMemcpyDeviceToDevice));
    return "cudaMemcpyAsync (" + why + ")";
}

// stencil1DL1Vec4; where it cannot run, its one-float step, stencil1DL1.
inline std::string launch_l1_vec4(const Args& a) {
    const std::string why = vec4_refusal(a);
    if (why.empty()) return launch_one_pass<stencil1DL1Vec4, kBlock, 4>(a);
    return launch_one_pass<stencil1DL1, kBlock, 1>(a) + " (stencil1DL1: " + why + ")";
}

// stencil1DSmemVec4; where it cannot run, the seed's tile one float at a time, stencil1DConstant.
inline std::string launch_smem_vec4(const Args& a) {
    const std::string why = vec4_refusal(a);
    if (why.empty()) return launch_one_pass<stencil1DSmemVec4, kVec4Block, 4>(a);
    return launch_constant(a) + " (stencil1DConstant: " + why + ")";
}

using LaunchFn = std::string (*)(const Args&);

struct Kernel {
    const char* name;
    LaunchFn launch;  // launches on the default stream, returns the configuration
    bool is_copy;     // out[i] = in[i + RADIUS] (else the stencil)
    const char* what;
};

// Every kernel of the chapter, in teaching order, the copy first (the
// ceiling). Only correct kernels: a loop over this list never runs racy code.
inline const std::vector<Kernel>& kernels() {
    static const std::vector<Kernel> k = {
        {"copyVec4", launch_copy, true, "copy of the same bytes, one float4 per thread: the ceiling"},
        {"stencil1DGlobal", [](const Args& a) { return launch_global(a); }, false,
         "smem tile + halo, coefficients from a global array"},
        {"stencil1DConstant", [](const Args& a) { return launch_constant(a); }, false,
         "smem tile + halo, coefficients in __constant__ (seed 000)"},
        {"stencil1DReadOnly", [](const Args& a) { return launch_read_only(a); }, false,
         "smem tile + halo, coefficients via const __restrict__ / __ldg"},
        {"stencil1DL1", launch_one_pass<stencil1DL1, kBlock, 1>, false, "no shared memory: 8 loads per output, L1 serves the overlap"},
        {"stencil1DL1Vec4", launch_l1_vec4, false, "no shared memory, 4 outputs per thread, float4 loads"},
        {"stencil1DSmemVec4", launch_smem_vec4, false, "smem tile loaded and stored as float4, 4 outputs per thread"},
    };
    return k;
}

// The seed's bug kept on show, in a list of its own (as 04_reduction's
// pitfalls<T>()): `./constant_stencil --pitfalls` runs it after the kernels
// above, and its result never sets the exit code.
inline const std::vector<Kernel>& pitfalls() {
    static const std::vector<Kernel> k = {
        {"stencil1DConstantRace", [](const Args& a) { return launch_race(a); }, false,
         "PITFALL: the seed's loop, no barrier before the next pass"},
    };
    return k;
}

// The constant-cache experiment: the table on both sides, d addresses per warp.
inline void set_table(const std::vector<float>& t, float* d_table) {
    CHECK(cudaMemcpyToSymbol(c_table, t.data(), kTableSize * sizeof(float)));
    CHECK(cudaMemcpy(d_table, t.data(), kTableSize * sizeof(float), cudaMemcpyHostToDevice));
}

// `threads` must be a multiple of kBlock; d a power of two in [1, 32].
constexpr int kStep = 32;  // words: every read on the next 128-byte line
inline std::string launch_warp_reads(bool constant, const float* d_table, float* out, size_t threads, int iters,
                                     int d) {
    const unsigned grid = unsigned(threads / kBlock);
    if (constant)
        warpReads<true><<<grid, kBlock>>>(d_table, out, iters, d - 1, kStep);
    else
        warpReads<false><<<grid, kBlock>>>(d_table, out, iters, d - 1, kStep);
    CHECK_LAUNCH();
    return common::launch_string(dim3(grid), dim3(kBlock));
}

// What lane `lane` of every warp must have summed (exact: small integers).
inline double warp_reads_cpu(const std::vector<float>& t, int iters, int d, int lane) {
    double acc = 0;
    for (int it = 0; it < iters; ++it) acc += t[(kStep * it + (lane & (d - 1))) & (kTableSize - 1)];
    return acc;
}

// CPU reference in double, from the same float inputs and coefficients.
inline void stencil_cpu(const float* in, double* out, size_t n, const Coefficients& c) {
    for (size_t i = 0; i < n; ++i) {
        const float* x = in + i + RADIUS;
        double acc = 0;
        for (int k = 1; k <= RADIUS; ++k) acc += double(c.c[k - 1]) * (double(x[k]) - double(x[-k]));
        out[i] = acc;
    }
}

// The float result may differ from the double reference by rounding only:
// one subtraction, one multiply and one add per term, each off by at most
// half an ulp of a value bounded by sum_k |c_k| * 2 * max|x|. Eight units of
// 2^-24 of that bound cover them with room to spare; the bound does not grow
// with n, since every output sums the same 9 points whatever the size.
inline double tolerance(const Coefficients& c, double max_abs_in) {
    double s = 0;
    for (float v : c.c) s += std::abs(double(v));
    return 8.0 * 0x1p-24 * s * 2.0 * max_abs_in;
}

// Command-line limit: n outputs, n + 2*RADIUS inputs: 4 GiB of outputs at most (the inputs 32 bytes more).
constexpr int64_t kMaxN = int64_t(1) << 30;

// "" if n outputs can run, else why not (checked before any GPU work).
inline std::string check_n(int64_t n) {
    if (n < 1 || n > kMaxN) return "--n must be in [1, " + std::to_string(kMaxN) + "] (2^30)";
    return "";
}

// Device bytes the program needs for n outputs.
inline size_t device_bytes(size_t n) { return (2 * n + 2 * RADIUS + RADIUS) * sizeof(float); }

}  // namespace constant_stencil
