// Step 5 of 07_shuffle: every primitive, for many (width, parameter) pairs
// and one mask per launch, so that the program and the tests can compare
// every lane with the emulator; and beside it the pitfall no run can show,
// a mask that does not match the lanes that call (the seeds' 0xffff "for the
// whole warp"), stated as rules by misuse(). (Seeds: the top README's
// Sources section.)
#pragma once
#include <cstdio>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "07_shuffle/steps/lane_emulator.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// The primitive as a template on Op, so one probe kernel serves all four.
template <Op OP, class T>
__device__ __forceinline__ T shfl(unsigned mask, T v, int param, int width) {
    if constexpr (OP == Op::Idx) return __shfl_sync(mask, v, param, width);
    else if constexpr (OP == Op::Up) return __shfl_up_sync(mask, v, unsigned(param), width);
    else if constexpr (OP == Op::Down) return __shfl_down_sync(mask, v, unsigned(param), width);
    else return __shfl_xor_sync(mask, v, param, width);
}

// shuffleProbe: one warp (block) per (width, parameter) pair, one primitive
// and one mask per launch. Lanes outside `mask` do not call the shuffle (all
// lanes named in mask must, and no other may) and leave their output
// untouched. What to look for: every lane equal to the emulator, bit for bit.
struct Probe { int width, param; };

template <Op OP, class T>
__global__ void shuffleProbe(const T* __restrict__ in, T* __restrict__ out, const Probe* __restrict__ probes,
                             unsigned mask) {
    const int lane = threadIdx.x;
    const Probe p = probes[blockIdx.x];
    const T v = in[lane];
    if ((mask >> lane) & 1u) out[blockIdx.x * kWarp + lane] = shfl<OP>(mask, v, p.param, p.width);
}

// ---- The launcher --------------------------------------------------------------
template <class T>
void launch_shuffleProbe(Op op, const T* in, T* out, const Probe* probes, int n, unsigned mask) {
    switch (op) {
        case Op::Idx: shuffleProbe<Op::Idx><<<n, kWarp>>>(in, out, probes, mask); break;
        case Op::Up: shuffleProbe<Op::Up><<<n, kWarp>>>(in, out, probes, mask); break;
        case Op::Down: shuffleProbe<Op::Down><<<n, kWarp>>>(in, out, probes, mask); break;
        case Op::Xor: shuffleProbe<Op::Xor><<<n, kWarp>>>(in, out, probes, mask); break;
    }
    CHECK_LAUNCH();
}

// ---- The pitfall: a mask that does not match the lanes that call ---------------
// Undefined behaviour, so it is never run on the GPU: misuse() states the
// rules instead. "" if the call is well defined, else what is wrong with it.
// `executing`: the lanes that reach the call. The rules (Programming Guide,
// warp shuffle functions): width a power of two <= 32; every lane that calls
// must be in mask and every lane in mask must call; a lane may only read from
// a lane in mask. Seed-style code such as __shfl_down_sync(0xffff, v, 16) run
// by lanes 0..15 breaks the last rule: the sources 16..31 are not in the mask.
inline std::string misuse(Op op, unsigned mask, unsigned executing, int param, int width) {
    char buf[160];
    if (!valid_width(width)) {
        std::snprintf(buf, sizeof buf, "width %d is not a power of two in [1, 32]", width);
        return buf;
    }
    if (executing & ~mask) {
        std::snprintf(buf, sizeof buf, "lanes 0x%08x call %s but are not in mask 0x%08x", executing & ~mask,
                      op_name(op), mask);
        return buf;
    }
    if (mask & ~executing) {
        std::snprintf(buf, sizeof buf, "lanes 0x%08x are named in mask but do not call %s", mask & ~executing,
                      op_name(op));
        return buf;
    }
    unsigned bad = 0;
    for (int lane = 0; lane < kWarp; ++lane)
        if ((mask >> lane) & 1u)
            if (!((mask >> source_lane(op, lane, param, width)) & 1u)) bad |= 1u << lane;
    if (bad) {
        std::snprintf(buf, sizeof buf, "lanes 0x%08x read from lanes outside mask 0x%08x (%s=%d, width %d)", bad,
                      mask, param_name(op), param, width);
        return buf;
    }
    return "";
}

}  // namespace shuffle
