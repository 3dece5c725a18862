// Step 10 of 01_matmul: no new kernel, a launcher that measures instead of
// modelling.
#pragma once
#include <array>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "common/timer.cuh"
#include "01_matmul/plans.cuh"

namespace matmul {

// ---- The launcher ----------------------------------------------------------
// sgemmAutotuned: the first call for a shape times every candidate (a
// warm-up and the median of 3 each) and keeps the fastest that launched for
// that shape (stream-K refuses where its blocks cannot all be resident; where
// none launched, the model's plan, said in the launch column); later calls
// run it. (cuBLASLt's algorithm search and Triton's autotune do
// the same.) Below kAutotuneMinFlops a launch takes microseconds and
// sgemmCpAsync's model decides (choose_sgemmCpAsync: the stream-K model,
// which has no price for the fix-up, picks stream-K at 256^3 and 384^3, and
// it measured 15-23% slower there on the H200 and the H100). With
// MATMUL_AUTOTUNE=model in the environment steps 8-9's model (plan_for)
// decides at every size (profile.sh: under ncu every trial launch would be
// replayed and profiled). The launch column says what ran.
// Look for: the row that is never below the two before it, and where it
// differs from their model-based choices.
constexpr double kAutotuneMinFlops = double(1 << 27);
constexpr int kAutotuneWarmup = 1, kAutotuneReps = 3;

// The fastest of `candidates` by time(p): its milliseconds, or a negative
// number where p was not launched (a refusal returns at once, so its time
// would be ~0 and win). nullptr where none was launched.
template <class Time>
const Plan* fastest_plan(const std::vector<Plan>& candidates, Time&& time) {
    const Plan* best = nullptr;
    double best_ms = std::numeric_limits<double>::infinity();
    for (const Plan& p : candidates) {
        const double ms = time(p);
        if (ms >= 0 && ms < best_ms) {
            best_ms = ms;
            best = &p;
        }
    }
    return best;
}

inline std::string launch_sgemmAutotuned(const float* A, const float* B, float* C, int M, int N, int K) {
    struct Tuned {
        Plan plan;
        std::string how;  // the launch column's last words
    };
    static std::map<std::array<int, 4>, Tuned> cache;  // per device and shape: another GPU, another answer
    const common::Gpu& g = common::gpu();
    const std::array<int, 4> key = {g.device, M, N, K};
    static const bool model_only = [] {
        const char* e = std::getenv("MATMUL_AUTOTUNE");
        return e && std::string(e) == "model";
    }();
    auto it = cache.find(key);
    if (it == cache.end()) {
        Tuned t = model_only ? Tuned{plan_for(M, N, K, g), " (model: MATMUL_AUTOTUNE=model)"}
                             : Tuned{choose_sgemmCpAsync(M, N, K, g), " (model: tiny)"};
        if (!model_only && 2.0 * M * N * K >= kAutotuneMinFlops) {
            const std::vector<Plan> candidates = autotune_candidates(M, N, K, g);
            const Plan* best = fastest_plan(candidates, [&](const Plan& p) {
                bool launched = true;  // no launch of p said "not launched: ..."
                const double ms = common::time_median_ms(
                    [&] { launched &= run_plan(p, A, B, C, M, N, K).find("not launched") == std::string::npos; },
                    kAutotuneWarmup, kAutotuneReps);
                return launched ? ms : -1.0;
            });
            if (best) t = {*best, " (autotuned)"};
            else t.how = " (autotuned: no candidate launched, the model's plan)";
        }
        it = cache.emplace(key, t).first;
    }
    const Plan& p = it->second.plan;
    Plan tiles = p;  // the tiled part, named before the strip
    tiles.strip = 0;
    return with_row_strip(p.strip, A, B, C, M, N, K, [&](int m) {
               return run_plan(tiles, A, B, C, m, N, K) + (p.streamk ? " streamK" : "");
           }) +
           it->second.how;
}

}  // namespace matmul
