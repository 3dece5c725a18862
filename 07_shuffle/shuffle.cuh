// shuffle.cuh - warp shuffles: what each primitive does (checked against a CPU
// emulator), the warp and block building blocks made from them, and a
// double-precision matrix-vector multiply that runs at memory bandwidth.
//
// One step per file, in teaching order (steps/SS_kernelName.cuh: the kernel,
// what to look for, its launcher, and the pitfall that breaks it, if any):
//   1. The primitives: steps/lane_emulator.cuh emulates them exactly (mask,
//      width, out-of-range lanes); steps 1-4 are seed 001's demos (bcast,
//      scan4, warpReduce) and seed 004's xor table; step 5 probes every
//      primitive for many (width, parameter, mask) triples at once.
//   2. Building blocks (steps 6-9): warp reduce (down vs xor), warp
//      inclusive/exclusive scan, block reduce and block scan, for int,
//      long long, float, double.
//   3. y = A x in double (seed 004; steps/row_loop.cuh holds what the steps
//      share): the seed's three versions (steps 10-12: a global scratch
//      array, shared memory, shuffles), then 16-byte loads (step 13), a block
//      per row (14), several blocks per row (15), two rows a thread (16), and
//      the launcher that picks among them from the shape (17).
// Here: the kernel lists, the CPU references and tolerances, the checks the
// program and the tests share, and check_shape. Seeds 001 and 004: the top
// README's Sources section.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>
#include <cuda_runtime.h>
#include "common/buffer.cuh"
#include "common/check.cuh"
#include "common/data.hpp"
#include "common/launch.cuh"
#include "07_shuffle/steps/lane_emulator.cuh"
#include "07_shuffle/steps/01_bcast.cuh"
#include "07_shuffle/steps/02_scan4.cuh"
#include "07_shuffle/steps/03_warpReduce.cuh"
#include "07_shuffle/steps/04_xorTable.cuh"
#include "07_shuffle/steps/05_shuffleProbe.cuh"
#include "07_shuffle/steps/06_reduceDownVsXor.cuh"
#include "07_shuffle/steps/07_warpScans.cuh"
#include "07_shuffle/steps/08_reduceShuffle.cuh"
#include "07_shuffle/steps/09_scanTiles.cuh"
#include "07_shuffle/steps/row_loop.cuh"
#include "07_shuffle/steps/10_matvecGmemCache.cuh"
#include "07_shuffle/steps/11_matvecSmem.cuh"
#include "07_shuffle/steps/12_matvecShuffle.cuh"
#include "07_shuffle/steps/13_matvecShuffleVec2.cuh"
#include "07_shuffle/steps/14_matvecBlockRow.cuh"
#include "07_shuffle/steps/15_matvecSplitRow.cuh"
#include "07_shuffle/steps/16_matvecThinRows.cuh"
#include "07_shuffle/steps/17_matvecShuffleTuned.cuh"

namespace shuffle {

// ---------------------------------------------------------------------------
// The y = A x kernel lists (looked up by name: common/kernel_list.hpp)
// ---------------------------------------------------------------------------

struct MatvecKernel {
    const char* name;
    MatvecLaunch launch;
    const char* what;
};

// Every matvec kernel, in teaching order: what the program runs and the tests check.
inline const std::vector<MatvecKernel>& kernels() {
    static const std::vector<MatvecKernel> k = {
        {"matvecGmemCache", launch_matvecGmemCache, "warp per row, reduced through a global scratch array"},
        {"matvecSmem", launch_matvecSmem, "warp per row, reduced in shared memory (+__syncwarp)"},
        {"matvecShuffle", launch_matvecShuffle, "warp per row, reduced with __shfl_xor_sync"},
        {"matvecShuffleVec2", launch_matvecShuffleVec2, "warp per row, 16-byte loads, 8 in flight per lane"},
        {"matvecShuffleTuned", launch_matvecShuffleTuned,
         "16-byte loads; lanes per row, rows per warp, a block per row or several blocks per row, from the shape"},
    };
    return k;
}

// The seeds' bugs, kept to show how they fail: a separate list, so that no
// loop over kernels() runs them (the program: only with --pitfalls; step 11).
inline const std::vector<MatvecKernel>& pitfalls() {
    static const std::vector<MatvecKernel> k = {
        {"matvecSmemNoSyncwarp", launch_matvecSmemNoSyncwarp,
         "PITFALL: the seed's volatile reduction, no __syncwarp (racecheck reports it)"},
    };
    return k;
}

// ---------------------------------------------------------------------------
// The CPU reference for y = A x, its tolerance, and the size checks
// ---------------------------------------------------------------------------

// CPU reference in long double (64-bit mantissa on x86: its own error is
// 2^11 times below the tolerance). abs_dot[r] = sum |A[r][c] x[c]|, which
// bounds any summation order's error (see gamma_n).
inline void matvec_cpu(const double* A, const double* x, int rows, int cols, double* y, double* abs_dot) {
    for (int r = 0; r < rows; ++r) {
        const double* a = A + size_t(r) * cols;
        long double s = 0, sa = 0;
        for (int c = 0; c < cols; ++c) {
            const long double p = (long double)a[c] * x[c];
            s += p;
            sa += p < 0 ? -p : p;
        }
        y[r] = double(s);
        if (abs_dot) abs_dot[r] = double(sa);
    }
}

// Any order of n double multiply-adds computes a dot product with error at
// most gamma_n * sum |a_i x_i|, gamma_n = n u / (1 - n u), u = 2^-53 (Higham,
// Accuracy and Stability of Numerical Algorithms, 3.1). The GPU's order (per
// lane strides, then a shuffle tree) is not the CPU's, so this worst-case
// bound is the tolerance: it can never fail a correct kernel. It grows with
// the row and is not below every single term (README, Tolerance: at
// 1 x 33554431 it exceeds one product in seven), so on random data it cannot
// promise that a dropped or doubled element fails; the integer-data tests
// (MatvecExact: every sum exact, y compared exactly) are what catch those.
inline double gamma_n(double n) {
    const double u = 1.0 / 9007199254740992.0;
    return n * u / (1.0 - n * u);
}

// Command-line limits: rows * 32 threads and rows * cols elements in range.
constexpr int64_t kMaxRows = int64_t(1) << 26;
constexpr int64_t kMaxCols = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxElements = int64_t(1) << 31;  // 16 GiB of doubles

inline std::string check_shape(int64_t rows, int64_t cols) {
    if (rows < 1 || rows > kMaxRows) return "rows must be in [1, " + std::to_string(kMaxRows) + "]";
    if (cols < 1 || cols > kMaxCols) return "cols must be in [1, " + std::to_string(kMaxCols) + "]";
    if (rows * cols > kMaxElements)
        return std::to_string(rows) + " x " + std::to_string(cols) + " is more than 2^31 elements (16 GiB)";
    return "";
}

// ---------------------------------------------------------------------------
// Host-side checks shared by the program and the tests
// ---------------------------------------------------------------------------

// The parameters each primitive is probed with: srcLane well outside
// [0, width) on both sides; delta and laneMask over 0..31 and past it (only
// their low 5 bits count), laneMask -1 too.
inline std::vector<int> probe_params(Op op) {
    std::vector<int> v;
    const int lo = op == Op::Idx ? -33 : op == Op::Xor ? -1 : 0, hi = op == Op::Idx ? 65 : 40;
    for (int p = lo; p <= hi; ++p) v.push_back(p);
    return v;
}

// Every valid width times every parameter: one warp each in a probe launch.
inline std::vector<Probe> probe_set(Op op) {
    std::vector<Probe> v;
    for (int w = 1; w <= kWarp; w *= 2)
        for (int p : probe_params(op)) v.push_back({w, p});
    return v;
}

// Full and partial masks: halves (16 active lanes, 0x0000ffff), alternate
// lanes, nibbles, the two end lanes, one lane, and three random ones.
inline std::vector<unsigned> probe_masks(uint64_t seed) {
    std::vector<unsigned> m = {kFullMask, 0x0000ffffu, 0xffff0000u, 0x55555555u, 0xaaaaaaaau,
                               0x0f0f0f0fu, 0x80000001u, 0x00000001u};
    common::SplitMix64 g(seed);
    for (int i = 0; i < 3; ++i) m.push_back(unsigned(g.next()) | 1u << (g.next() % 32));
    return m;
}

// 32 inputs whose bit patterns differ in every lane (the lane is part of
// each value), so a value read from the wrong lane is always noticed.
template <class T>
Warp<T> probe_input(uint64_t seed) {
    common::SplitMix64 g(seed);
    Warp<T> v;
    for (int lane = 0; lane < kWarp; ++lane) {
        if constexpr (std::is_floating_point_v<T>) v[lane] = T(lane) + T(32 * int(g.next() % 4096)) + T(0.25);
        else v[lane] = T((g.next() << 8) | uint64_t(lane));
    }
    return v;
}

struct PrimitiveCheck {
    size_t checked = 0;     // lane results compared bit for bit with the emulator
    size_t undefined = 0;   // lanes reading from outside the mask: not compared
    size_t untouched = 0;   // lanes outside the mask, verified not to have written
    size_t mismatches = 0;
    std::string first;      // the first mismatch, in words
    bool pass() const { return mismatches == 0 && checked > 0; }
    void add(const PrimitiveCheck& o) {
        checked += o.checked; undefined += o.undefined; untouched += o.untouched;
        if (!mismatches && o.mismatches) first = o.first;
        mismatches += o.mismatches;
    }
};

// Runs `op` on the GPU for every probe with `mask` and compares each lane
// with the emulator. emulate_width != 0 makes the emulator use that width
// instead of the probe's: the tests use it to show that a wrong width is caught.
template <class T>
PrimitiveCheck check_primitive(Op op, unsigned mask, const std::vector<Probe>& probes, uint64_t seed,
                               int emulate_width = 0) {
    const Warp<T> in = probe_input<T>(seed);
    const size_t n = probes.size();
    common::DeviceBuffer<T> d_in(kWarp), d_out(n * kWarp);
    common::DeviceBuffer<Probe> d_probes(n);
    d_in.upload(std::vector<T>(in.begin(), in.end()));
    d_probes.upload(probes);
    d_out.poison();
    launch_shuffleProbe<T>(op, d_in.get(), d_out.get(), d_probes.get(), int(n), mask);
    CHECK(cudaDeviceSynchronize());
    std::vector<T> out;
    d_out.download(out);
    T poison;
    std::memset(&poison, common::kPoisonByte, sizeof poison);

    PrimitiveCheck c;
    for (size_t k = 0; k < n; ++k) {
        const Probe& p = probes[k];
        const Shuffled<T> e = emulate(op, mask, in, p.param, emulate_width ? emulate_width : p.width);
        for (int lane = 0; lane < kWarp; ++lane) {
            const T& got = out[k * kWarp + lane];
            const T& want = e.executed[lane] ? e.value[lane] : poison;
            if (e.executed[lane] && !e.defined[lane]) { ++c.undefined; continue; }
            if (std::memcmp(&got, &want, sizeof(T)) == 0) {
                ++(e.executed[lane] ? c.checked : c.untouched);
                continue;
            }
            if (c.mismatches++ == 0) {
                char buf[200];
                std::snprintf(buf, sizeof buf, "%s(mask 0x%08x, %s=%d, width %d): lane %d got %.17g, emulator %.17g",
                              op_name(op), mask, param_name(op), p.param, p.width, lane, double(got), double(want));
                c.first = buf;
            }
        }
    }
    return c;
}

// Reference scans of consecutive segments of `seg` elements (a warp: 32, a
// block: kBlock), in long double, with the running sum of |a| for the bound.
template <class T>
void segmented_scan_cpu(const T* in, size_t n, size_t seg, long double* inc, long double* exc, long double* abs_inc) {
    long double s = 0, sa = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i % seg == 0) s = sa = 0;
        exc[i] = s;
        s += (long double)in[i];
        sa += in[i] < 0 ? -(long double)in[i] : (long double)in[i];
        inc[i] = s;
        abs_inc[i] = sa;
    }
}

// Floating-point tolerances for the building blocks: gamma_k * sum |a| where
// k bounds the number of additions on any path of the summation tree (the
// tree's depth). A scan element: 5 warp steps, 1 shift, 5 + 1 over the warp
// totals, 1 final add. The two-pass reduce: each thread's serial count,
// 5 + 5 in the block (two warp reductions), the same again in the second pass.
template <class T>
double unit_roundoff() { return std::is_same_v<T, float> ? 1.0 / 16777216.0 : 1.0 / 9007199254740992.0; }
template <class T>
double gamma_k(double k) { return k * unit_roundoff<T>() / (1.0 - k * unit_roundoff<T>()); }
constexpr int kScanDepth = 13;
inline int reduce_depth(size_t n) {
    const size_t blocks = std::min<size_t>(kReduceBlocks, common::ceil_div(n, kBlock));
    const size_t per_thread = common::ceil_div(n, blocks * kBlock);
    const size_t per_thread2 = common::ceil_div(blocks, kBlock);
    return int(per_thread + 10 + per_thread2 + 10);
}

// ---- The building blocks on arrays, against the CPU -------------------------
template <class T>
const char* type_name() {
    if constexpr (std::is_same_v<T, int>) return "int";
    else if constexpr (std::is_same_v<T, long long>) return "long long";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else return "double";
}

template <class T>
void fill_random(std::vector<T>& v, uint64_t seed) {
    if constexpr (std::is_integral_v<T>) common::fill_uniform(v.data(), v.size(), seed, T(-1000), T(1000));
    else common::fill_uniform(v.data(), v.size(), seed, T(-1), T(1));
}

// Exact for integers; gamma_depth * sum|a| for floating point.
template <class T>
bool close_enough(T got, long double ref, long double abs_ref, int depth) {
    if constexpr (std::is_integral_v<T>) return (long double)got == ref;
    else return !std::isnan(double(got)) &&
                std::fabs(double(got) - double(ref)) <= gamma_k<T>(depth) * double(abs_ref);
}

template <class T>
bool check_reduce(size_t n, uint64_t seed) {
    std::vector<T> in(n);
    fill_random(in, seed);
    long double ref = 0, abs_ref = 0;
    for (T v : in) { ref += v; abs_ref += v < 0 ? -(long double)v : (long double)v; }
    common::DeviceBuffer<T> d_in(n), d_partial(kReduceBlocks), d_out(1);
    d_in.upload(in);
    d_partial.poison();  // a second pass that reads one partial too many adds a NaN, or -1
    d_out.poison();
    launch_reduceShuffle(d_in.get(), n, d_partial.get(), d_out.get());
    std::vector<T> got;
    d_out.download(got);
    return close_enough(got[0], ref, abs_ref, reduce_depth(n));
}

// Warp scans (segments of 32) or block scans (segments of kBlock). The outputs
// have a block of poisoned guard elements past n, which must stay poisoned (a
// store without its `i < n` test writes up to a block past the end).
template <class T>
bool check_scan(size_t n, bool block, uint64_t seed) {
    std::vector<T> in(n), inc, exc;
    fill_random(in, seed);
    std::vector<long double> ri(n), re(n), ra(n);
    segmented_scan_cpu(in.data(), n, block ? kBlock : kWarp, ri.data(), re.data(), ra.data());
    const size_t guard = kBlock;
    common::DeviceBuffer<T> d_in(n), d_inc(n + guard), d_exc(n + guard);
    d_in.upload(in);
    d_inc.poison();
    d_exc.poison();
    if (block) launch_scanTiles(d_in.get(), d_inc.get(), d_exc.get(), n);
    else launch_warpScans(d_in.get(), d_inc.get(), d_exc.get(), n);
    d_inc.download(inc);
    d_exc.download(exc);
    for (size_t i = 0; i < n; ++i)
        if (!close_enough(inc[i], ri[i], ra[i], kScanDepth) || !close_enough(exc[i], re[i], ra[i], kScanDepth)) return false;
    return common::written_outside(inc, 0, n) == 0 && common::written_outside(exc, 0, n) == 0;
}

}  // namespace shuffle
