// row_loop.cuh - what the y = A x steps share (steps 10 to 17).
//
// y = A x, A rows x cols row-major double (seed 004, the top README's Sources
// section). Each element of A is used once: the least traffic is reading A
// and x once and writing y once, (rows * cols + cols + rows) * 8 bytes - the
// byte model. (x matters for few long rows: at 1 x N it is half the bytes; y
// for many short ones: at 2^24 x 8 it is 1/9.) The peer is
// cub::DeviceReduce::Sum, a reduction that reads as much and computes as
// little, compared by GB/s.
//
// Here: the block size, the warp-per-row loop of steps 10 to 12 (one lane's
// share of a row, the grid of at most one full GPU of blocks, its launcher),
// the scratch array's size, the launchers' common signature, and the
// alignment test of the 16-byte steps (13 to 17).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/gpu.cuh"
#include "common/launch.cuh"
#include "07_shuffle/steps/lane_emulator.cuh"

namespace shuffle {

constexpr int kMatvecBlock = 256;  // 8 warps
// Blocks of kMatvecBlock threads an SM holds by its thread and block limits: 8 on
// 8.0 and 9.0 (2048 threads), 6 on 8.6, 8.9 and 12.0, 4 on 7.5 (GPU_PROFILE's where set).
// (A Gpu that does not know its threads an SM gets 1, as before the block cap.)
inline int blocks_per_sm() {
    const common::Gpu& g = common::gpu();
    return std::max(1, common::cap_by_sm_slots(g.threads_per_sm / kMatvecBlock, kMatvecBlock, g));
}

__device__ __forceinline__ size_t global_thread() { return size_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t total_warps() { return size_t(gridDim.x) * blockDim.x / kWarp; }

// One lane's share of row r's dot product: columns lane, lane + 32, ...
// Consecutive lanes read consecutive doubles: 256 coalesced bytes per warp.
// 64-bit indices: the seed's int row * N overflows past 2^31 elements, and an
// int column index wraps negative on a row of nearly 2^31 columns (c + 32
// passes INT_MAX when cols > 2^31 - 33, which check_shape admits).
__device__ __forceinline__ double row_partial(const double* __restrict__ A, const double* __restrict__ x, size_t r,
                                              int cols, int lane) {
    const double* a = A + r * size_t(cols);
    double t = 0.0;
    for (int64_t c = lane; c < cols; c += kWarp) t = fma(a[c], x[c], t);
    return t;
}

// Every y = A x launcher: launches on the default stream and returns what ran
// (the results table's launch column). `scratch` holds scratch_doubles().
using MatvecLaunch = std::string (*)(const double* A, const double* x, double* y, int rows, int cols, double* scratch);

// The warp-per-row kernels loop over rows with at most one full GPU of
// blocks; matvecGmemCache needs one scratch double per thread of that grid.
inline unsigned row_loop_grid(int rows) {
    const size_t want = common::ceil_div(size_t(rows) * kWarp, kMatvecBlock);
    const size_t cap = size_t(common::sm_count()) * blocks_per_sm();
    return unsigned(want < cap ? want : cap);
}
inline size_t scratch_doubles() { return size_t(common::sm_count()) * blocks_per_sm() * kMatvecBlock; }

// Steps 13 to 17 load A (and x, or store y) 16 bytes at a time, and a 16-byte
// access to an address off 16 bytes faults. cudaMalloc'd arrays start on 256
// bytes; a pointer into the middle of one (A + 1) need not: their launchers check.
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Launches a warp-per-row kernel (A, x, y, rows, cols, then any `extra`
// arguments) on row_loop_grid(rows) blocks.
template <class... Extra>
std::string launch_row_loop(void (*kernel)(const double*, const double*, double*, int, int, Extra...), const double* A,
                            const double* x, double* y, int rows, int cols, Extra... extra) {
    const unsigned g = row_loop_grid(rows);
    kernel<<<g, kMatvecBlock>>>(A, x, y, rows, cols, extra...);
    CHECK_LAUNCH();
    return common::launch_string(g, kMatvecBlock);
}

}  // namespace shuffle
