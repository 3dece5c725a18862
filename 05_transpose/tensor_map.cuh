// tensor_map.cuh - transposeTensorMap (Hopper, sm_90): transposeSectorAligned
// with its input tiles brought in by the Tensor Memory Accelerator (TMA).
//
// The load side of transposeSectorAligned is 512 threads (or 256) each issuing
// three (five) 16-byte loads, testing bounds and shifting every row by a_r floats. Here
// one thread asks the copy engine for the whole 72 x 64 input tile, in four
// instructions, and the rest wait on an mbarrier; the store side (a window
// of 64 output floats that starts on a 32-byte sector in every output row,
// float4 stores from registers) is transposeSectorAligned's, unchanged: the
// same store_sector_windows (sector_aligned.cuh), told where each input row
// starts in this tile.
//
// Four maps, because a tensor map's row pitch must be a multiple of 16 bytes
// and an odd number of columns has none. Rows r, r + 4, r + 8, ... are
// 4 * cols floats apart, a multiple of 16 bytes whatever cols is, and they
// all start at the same offset a_k = (k * cols) mod 4 past a 16-byte
// boundary (k = r mod 4). So map k describes the matrix of input rows
// k, k + 4, k + 8, ...: its base is the 16-byte boundary at or before row k,
// its rows are a_k + cols floats wide (a_k floats of the row before, then
// row k), its pitch 16 * cols bytes. Box k of a tile is that map's rows
// inside the tile (18 of them: R0 - 8 .. R0 + 63, every fourth; 16 where
// rows % 8 == 0 and the windows start at R0); the copy engine fills
// whatever lies outside the map (beyond the last row or column, above row 0)
// with zeros, so the kernel tests no bounds on the load side.
//
// The copy engine reads a box from a 16-byte boundary only (boxes that
// started a_k floats past one stopped the kernel with an illegal instruction
// at every shape with cols % 4 != 0, on the H200), so box k starts at column
// c0 of map k, which is column c0 - a_k of its rows, and is 68 floats wide
// (a multiple of 16 bytes, as a box's rows must be) to reach column c0 + 63
// whatever a_k is.
//
// Shared memory: the four boxes one after another, each starting on 128
// bytes (as TMA tiles are everywhere in this repository); input row top + 4i + k, column c0 + c
// is at tile[box k][i][c + a_k]. The store side reads 4 floats down a
// column: for one output row jj, its lanes t = 0..7 read 8 consecutive
// rows of one box, 68 floats = 4 banks apart, 8 different banks. Where
// cols % 4 == 0 (every a_k = 0) the 4 jj's add 0..3: 32 lanes, 32 banks.
// Otherwise a_k shifts the lanes of some jj onto those of another: the
// conflicts depend on the shape (ncu at 8193^2: ~3 extra wavefronts a load;
// the odd row stride that spreads transposeSectorAligned's is not allowed).
//
// Measured, it is SLOWER than transposeSectorAligned at every shape of the
// sweep, by 1.1-6.1% from 4096^2 up (H200, the sweep of 2026-11-29: 0.945 of
// copy at 8192^2 against 0.973; README, the kernel table and "Tensor maps").
// It executes 20-24% fewer instructions, but asks L2 for 8-30% more sectors
// (the 68-float boxes, the 256-byte L2 promotion), and on the H200 the link
// between the two halves of the L2 is 92-96% busy in both kernels, as in the
// copy itself.
#pragma once
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/mbarrier.cuh"
#include "common/tensor_map.cuh"
#include "05_transpose/sector_aligned.cuh"  // store_sector_windows

namespace transpose {

constexpr int kMapTile = 64, kMapThreads = 512, kMapHalo = 8;
static_assert(kMapTile == kAlignedTile, "store_sector_windows' tile");
constexpr int kMapBoxRows = (kMapTile + kMapHalo) / 4;       // 18: rows of one class in a tile, halo included
constexpr int kMapBoxCols = kMapTile + 4;                    // 68 floats: column c0 .. c0 + 63 after any a_k
constexpr int kMapBoxFloats = (kMapBoxRows * kMapBoxCols + 31) / 32 * 32;  // 1248: each box on 128 bytes
constexpr size_t kMapSmem = 4 * kMapBoxFloats * sizeof(float) + sizeof(uint64_t);

// The four maps of the input: map k = input rows k, k + 4, k + 8, ...
struct InputRowClasses {
    CUtensorMap map[4];
};

// kShift = false forgets a_k (reads column c0 + c at tile[box k][i][c]):
// right wherever cols % 4 == 0 (every a_k = 0), wrong elsewhere. It is the
// planted bug of the tests, never in the kernel list.
template <bool kShift = true>
__global__ void __launch_bounds__(kMapThreads)
transposeTensorMap(const __grid_constant__ InputRowClasses maps, float* __restrict__ out, int rows, int cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int T = kMapTile;
    __shared__ __align__(128) float tile[4 * kMapBoxFloats];
    __shared__ uint64_t landed;  // completes when the four boxes are in
    const int R0 = blockIdx.x * T;  // output columns R0 - m_j .. (= input rows)
    const int c0 = blockIdx.y * T;  // output rows c0 .. c0 + 63 (= input columns)
    // Rows above R0 are needed only when output rows are not sector-aligned.
    const int halo = (rows & 7) == 0 ? 0 : kMapHalo;
    const int top = R0 - halo;  // the tile's first input row: a multiple of 4
    const int ncols = min(T, cols - c0);

    // Fewer than 4 rows: the maps of the missing classes do not exist, so their boxes are zeroed
    // here instead (the store side reads every class's rows around the matrix's, and stores none).
    const int classes = min(rows, 4);
    for (int i = classes * kMapBoxFloats + int(threadIdx.x); i < 4 * kMapBoxFloats; i += kMapThreads) tile[i] = 0.0f;
    if (threadIdx.x == 0) {
        common::mbarrier_init(&landed, 1);
        common::fence_mbarrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {  // the boxes' bytes count whole, zero-filled parts included
        const unsigned box_bytes = unsigned((T + halo) / 4 * kMapBoxCols * sizeof(float));
        common::mbarrier_arrive_expect_tx(&landed, unsigned(classes) * box_bytes);
#pragma unroll  // constant k: each map's address is a fixed offset into the kernel's parameters
        for (int k = 0; k < 4; ++k)
            if (k < classes) common::tma_load_2d(tile + k * kMapBoxFloats, &maps.map[k], c0, top / 4, &landed);
    }
    common::mbarrier_wait(&landed, 0);

    // Store, as in transposeSectorAligned; only where a float sits differs.
    store_sector_windows<kMapThreads>(out, rows, R0, c0, ncols, tile, [&](int r) {
        const int k = r & 3, a = kShift ? int((unsigned(k) * unsigned(cols)) & 3u) : 0;  // row r's class, its shift
        return k * kMapBoxFloats + ((r - top) >> 2) * kMapBoxCols + a;
    });
#else
    (void)maps, (void)out, (void)rows, (void)cols;  // never launched below sm_90 (waiver)
#endif
}

// The maps of `in` (16-byte aligned) for boxes of 68 x (64 + halo) / 4
// floats; "" or why the driver refused one.
inline std::string input_row_classes(InputRowClasses* maps, const float* in, int rows, int cols) {
    if (!common::tensor_map_encoder()) return "cuTensorMapEncodeTiled not found in the driver (it needs CUDA 12.0+)";
    const int halo = (rows & 7) == 0 ? 0 : kMapHalo;
    for (int k = 0; k < 4 && k < rows; ++k) {
        const size_t first = size_t(k) * cols, a = first & 3;  // row k starts a floats past a 16-byte boundary
        const cuuint64_t dims[2] = {cuuint64_t(a + cols), cuuint64_t((rows - k + 3) / 4)};  // innermost first
        const cuuint64_t strides[1] = {cuuint64_t(cols) * 4 * sizeof(float)};               // 4 rows apart
        const cuuint32_t box[2] = {cuuint32_t(kMapBoxCols), cuuint32_t((kMapTile + halo) / 4)};
        const cuuint32_t element_strides[2] = {1, 1};
        const CUresult r = common::tensor_map_encoder()(
            &maps->map[k], CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(in + (first - a)), dims, strides, box,
            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS)
            return "cuTensorMapEncodeTiled failed (" + std::to_string(int(r)) + ") for row class " + std::to_string(k) +
                   " of a " + std::to_string(rows) + "x" + std::to_string(cols) + " matrix";
    }
    return "";
}

}  // namespace transpose
