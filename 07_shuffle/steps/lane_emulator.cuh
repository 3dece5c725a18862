// lane_emulator.cuh - what every __shfl_*_sync call does, lane by lane, on the
// CPU: the four primitives (Op), the lane each lane reads (source_lane, the
// PTX ISA's definition of shfl.sync), and emulate(), which applies one call to
// a whole warp's registers. Every step checks the GPU against it; the steps
// that mirror a whole warp algorithm on the host (emulate_scan4,
// emulate_reduce_down, ...) are built from emulate().
#pragma once
#include <array>
#include <cuda_runtime.h>

namespace shuffle {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;

enum class Op { Idx, Up, Down, Xor };

inline const char* op_name(Op op) {
    switch (op) {
        case Op::Idx: return "__shfl_sync";
        case Op::Up: return "__shfl_up_sync";
        case Op::Down: return "__shfl_down_sync";
        default: return "__shfl_xor_sync";
    }
}
inline const char* param_name(Op op) {
    return op == Op::Idx ? "srcLane" : op == Op::Xor ? "laneMask" : "delta";
}

// width must be a power of two in [1, 32]; anything else is undefined.
__host__ __device__ constexpr bool valid_width(int w) { return w >= 1 && w <= 32 && (w & (w - 1)) == 0; }

// The lane whose `var` lane `lane` receives. This is the PTX ISA's definition
// of shfl.sync, which the CUDA intrinsics compile to with the clamp operand
// c = ((32 - width) << 8) | (Up ? 0 : 31), and which the Programming Guide
// describes in words:
//   - only the low 5 bits of srcLane / delta / laneMask are used;
//   - the warp is cut into segments of `width` lanes; segmask = 32 - width
//     keeps the bits that pick the segment;
//   - Idx:  the lane srcLane % width of the caller's segment (for a negative
//           srcLane the non-negative residue: -1 is the segment's last lane);
//   - Up:   lane - delta, unless that leaves the segment downwards: own value;
//   - Down: lane + delta, unless that passes the segment's last lane: own value;
//   - Xor:  lane ^ laneMask, unless that is above the segment's last lane: own
//           value. A lane in an EARLIER segment is read: with width 16,
//           lane 20 ^ 16 = lane 4 is returned (the guide: "able to access
//           elements from earlier groups ... later groups return their own").
__host__ __device__ constexpr int source_lane(Op op, int lane, int param, int width) {
    const int b = param & 31;
    const int segmask = 32 - width;
    const int first = lane & segmask;                           // segment's first lane
    const int last = first | (31 & ~segmask);                   // segment's last lane
    switch (op) {
        case Op::Idx: return first | (b & ~segmask);
        case Op::Up: return lane - b >= first ? lane - b : lane;
        case Op::Down: return lane + b <= last ? lane + b : lane;
        default: return (lane ^ b) <= last ? lane ^ b : lane;
    }
}

// One warp's registers, lane by lane.
template <class T>
using Warp = std::array<T, kWarp>;

// What each lane gets from one shuffle. Lanes not in `mask` do not call it
// (they keep their value, executed[] false). A lane whose source is not in
// `mask` gets an undefined value (defined[] false): the emulator refuses to
// guess it, and the checks never compare it.
template <class T>
struct Shuffled {
    Warp<T> value{};
    std::array<bool, kWarp> executed{}, defined{};
};

template <class T>
Shuffled<T> emulate(Op op, unsigned mask, const Warp<T>& v, int param, int width) {
    Shuffled<T> r;
    for (int lane = 0; lane < kWarp; ++lane) {
        r.executed[lane] = (mask >> lane) & 1u;
        if (!r.executed[lane]) { r.value[lane] = v[lane]; continue; }
        const int src = source_lane(op, lane, param, width);
        r.defined[lane] = (mask >> src) & 1u;
        r.value[lane] = v[src];
    }
    return r;
}

}  // namespace shuffle
