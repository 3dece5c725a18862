// reduction.cuh - sum an array on the GPU, from the seeds' first kernel to one
// that beats cub::DeviceReduce::Sum, and a Hopper kernel fed by the bulk copy
// engine.
//
// A sum reads every input element once and writes one number, so it is bound
// by memory bandwidth: the least it can move is n * sizeof(T) bytes (the
// output is negligible), and every GB/s figure in this chapter counts exactly
// that. The work is in how the n values are combined: in place in global
// memory, in shared memory, in registers across a warp (shuffles), and how
// the per-block partial sums become one (a second kernel, atomics, or the
// last block to finish); and in how many bytes each SM has asked for and not
// yet received.
//
// One step per file, in teaching order (steps/SS_kernelName.cuh: the kernel,
// what to look for, its launcher, and the pitfall that breaks it, if any).
// Shared pieces: steps/block_sum.cuh (warp and block sums), steps/workspace.cuh
// (buffers, the Kernel entry), steps/two_pass.cuh (reduceFinal, steps 1-10),
// steps/resident_grid.cuh (grid sizing, steps 11-14), steps/read_ceiling.cuh
// (the program's yardstick), tolerance.hpp (the checks' tolerance and exact
// binary-grid data). Every kernel is correct for any n >= 1 and for T = int,
// float and double (the seeds' `real`). Seeds 000-004: the top README's
// Sources section.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include "common/buffer.cuh"
#include "common/check.cuh"
#include "common/kernel_list.hpp"
#include "04_reduction/steps/00_reduceToy.cuh"
#include "04_reduction/steps/01_reduceNeighbored.cuh"
#include "04_reduction/steps/02_reduceGmem.cuh"
#include "04_reduction/steps/03_reduceSmem.cuh"
#include "04_reduction/steps/04_reduceSmemDyn.cuh"
#include "04_reduction/steps/05_reduceGmemUnroll.cuh"
#include "04_reduction/steps/06_reduceSmemUnroll.cuh"
#include "04_reduction/steps/07_reduceCompleteUnroll.cuh"
#include "04_reduction/steps/08_reduceLastWarpShfl.cuh"
#include "04_reduction/steps/09_reduceShflDown.cuh"
#include "04_reduction/steps/10_reduceShflXor.cuh"
#include "04_reduction/steps/11_reduceGridStrideAtomic.cuh"
#include "04_reduction/steps/12_reduceSinglePass.cuh"
#include "04_reduction/steps/13_reduceVec4.cuh"
#include "04_reduction/steps/14_reduceBulkCopy.cuh"
#include "04_reduction/steps/read_ceiling.cuh"
#include "04_reduction/tolerance.hpp"

namespace reduction {

// ---------------------------------------------------------------------------
// The kernel lists (looked up by name: common/kernel_list.hpp)
// ---------------------------------------------------------------------------

// Every kernel of the chapter, in teaching order.
template <class T>
const std::vector<Kernel<T>>& kernels() {
    static const std::vector<Kernel<T>> k = {
        {"reduceNeighbored", true, launch_reduceNeighbored<T>,
         "global memory in place, neighbouring pairs (stride 1, 2, 4..)"},
        {"reduceGmem", true, launch_reduceGmem<T>, "global memory in place, halving (seed 002 reduce_global)"},
        {"reduceSmem", false, launch_reduceSmem<T>, "static shared memory"},
        {"reduceSmemDyn", false, launch_reduceSmemDyn<T>, "dynamic shared memory"},
        {"reduceGmemUnroll4", true, launch_reduceGmemUnroll<4, T>, "4 loads per thread, tree in global memory"},
        {"reduceSmemUnroll4", false, launch_reduceSmemUnroll<4, T>, "4 loads per thread, tree in shared memory"},
        {"reduceGmemUnroll8", true, launch_reduceGmemUnroll<8, T>, "8 loads per thread, tree in global memory"},
        {"reduceSmemUnroll8", false, launch_reduceSmemUnroll<8, T>, "8 loads per thread, tree in shared memory"},
        {"reduceCompleteUnroll", false, launch_reduceCompleteUnroll<T>, "template block size, last warp with __syncwarp"},
        {"reduceLastWarpShfl", false, launch_reduceLastWarpShfl<T>, "last warp with __shfl_down_sync"},
        {"reduceShflDown", false, launch_reduceShflDown<T>, "every warp with __shfl_down_sync, 1 barrier"},
        {"reduceShflXor", false, launch_reduceShflXor<T>, "every warp with __shfl_xor_sync (butterfly)"},
        {"reduceGridStrideAtomic", false, launch_reduceGridStrideAtomic<T>,
         "resident grid, grid-stride loop, one atomicAdd per block"},
        {"reduceSinglePass", false, launch_reduceSinglePass<T>,
         "resident grid, __threadfence + last-block ticket, 1 launch"},
        {"reduceVec4", false, launch_reduceVec4<T>, "single pass, 16-byte loads, 4 in flight per thread"},
        {"reduceVec4Unroll8", false, launch_reduceVec4<T, Finish::LastBlock, 8>,
         "reduceVec4 with 8 16-byte loads in flight per thread"},
        {"reduceBulkCopy", false, launch_reduceBulkCopy<T>,
         "sm_90: cp.async.bulk into a 4-stage smem ring, mbarriers", waived_reduceBulkCopy<T>},
    };
    return k;
}

// The seeds' bugs, kept on show (./reduction --pitfalls).
template <class T>
const std::vector<Kernel<T>>& pitfalls() {
    static const std::vector<Kernel<T>> k = {
        {"reduceSmemVolatile", false, launch_reduceSmemVolatile<T>,
         "seeds' volatile last warp without __syncwarp: a race"},
        {"reduceSmemEarlyReturn", false, launch_reduceSmemEarlyReturn<T>,
         "seed 003: `if (idx >= n) return;` before __syncthreads"},
        {"reduceGlobalTid", false, launch_reduceGlobalTid<T>, "seed 004: global thread id in the block's conditions"},
    };
    return k;
}

// ---------------------------------------------------------------------------
// CPU side: references, summation methods for the accuracy table, the toy,
// and the command-line limits (the tolerance: tolerance.hpp).
// ---------------------------------------------------------------------------

// The exact int sum, wrapped to 32 bits as the GPU's int adds wrap.
inline int reference_int(const int* x, size_t n) {
    int64_t s = 0;
    for (size_t i = 0; i < n; ++i) s += x[i];
    return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
}

// A floating-point reference far more accurate than any float or double sum:
// Neumaier's compensated summation in long double (64-bit significand on
// x86), and the sum of |x| that scales the error bound.
struct Reference {
    long double sum = 0, sum_abs = 0;
};
template <class T>
Reference reference_float(const T* x, size_t n) {
    long double s = 0, c = 0, a = 0;
    for (size_t i = 0; i < n; ++i) {
        const long double v = x[i], t = s + v;
        c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
        s = t;
        a += std::fabs(v);
    }
    return {s + c, a};
}

// Summation methods for the accuracy table, in float.
inline float sum_sequential(const float* x, size_t n) {
    float s = 0;
    for (size_t i = 0; i < n; ++i) s += x[i];
    return s;
}
inline float sum_kahan(const float* x, size_t n) {
    // volatile keeps -O3 (or -ffast-math) from simplifying (t - s) - y to 0.
    volatile float s = 0, c = 0;
    for (size_t i = 0; i < n; ++i) {
        const float y = x[i] - c;
        const float t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}
inline float sum_pairwise(const float* x, size_t n) {
    if (n <= 8) {
        float s = 0;
        for (size_t i = 0; i < n; ++i) s += x[i];
        return s;
    }
    return sum_pairwise(x, n / 2) + sum_pairwise(x + n / 2, n - n / 2);
}

// What the toy prints: the seed's halving on the CPU, step by step.
template <class T>
std::vector<std::vector<T>> toy_steps_cpu(std::vector<T> x) {
    std::vector<std::vector<T>> steps;
    for (size_t offset = x.size() / 2; offset > 0; offset /= 2) {
        for (size_t t = 0; t < offset; ++t) x[t] += x[t + offset];
        steps.push_back(x);
    }
    return steps;
}

// What the toy does on the GPU: one block of x.size() / 2 threads (x.size() a
// power of two, 2 to 2048), the whole array after every step, step after step
// (--toy prints it beside toy_steps_cpu; a test compares the two).
template <class T>
std::vector<T> toy_steps_gpu(const std::vector<T>& x) {
    const int n = int(x.size());
    int steps = 0;
    for (int offset = n / 2; offset > 0; offset /= 2) ++steps;
    common::DeviceBuffer<T> d_x(n), d_hist(size_t(n) * steps);
    d_x.upload(x);
    d_hist.poison();
    reduceToy<T><<<1, n / 2>>>(d_x.get(), n, d_hist.get());
    CHECK_LAUNCH();
    std::vector<T> hist;
    d_hist.download(hist);
    return hist;
}

// Limits of --n: at least 1, at most 2^31 - 1 elements (the program holds
// the input and a scratch copy on the GPU, 32 GiB in double).
constexpr int64_t kMaxN = (int64_t(1) << 31) - 1;

inline std::string check_n(int64_t n) {
    if (n < 1 || n > kMaxN) return "--n must be in [1, " + std::to_string(kMaxN) + "]";
    return "";
}

}  // namespace reduction
