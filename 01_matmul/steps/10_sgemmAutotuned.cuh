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
// warm-up and the median of 3 each) and keeps the fastest for that shape;
// later calls run it. (cuBLASLt's algorithm search and Triton's autotune do
// the same.) Below kAutotuneMinFlops a launch takes microseconds and the
// model (plan_for) decides; so it does with MATMUL_AUTOTUNE=model in the
// environment (profile.sh: under ncu every trial launch would be replayed and
// profiled). The launch column says what ran.
// Look for: the row that is never below the two before it, and where it
// differs from their model-based choices.
constexpr double kAutotuneMinFlops = double(1 << 27);
constexpr int kAutotuneWarmup = 1, kAutotuneReps = 3;
inline std::string launch_sgemmAutotuned(const float* A, const float* B, float* C, int M, int N, int K) {
    static std::map<std::array<int, 4>, Plan> cache;  // per device and shape: another GPU, another answer
    const common::Gpu& g = common::gpu();
    const std::array<int, 4> key = {g.device, M, N, K};
    static const bool model_only = [] {
        const char* e = std::getenv("MATMUL_AUTOTUNE");
        return e && std::string(e) == "model";
    }();
    const bool measure = !model_only && 2.0 * M * N * K >= kAutotuneMinFlops;
    auto it = cache.find(key);
    if (it == cache.end()) {
        Plan best = plan_for(M, N, K, g);
        if (measure) {
            double best_ms = std::numeric_limits<double>::infinity();
            for (const Plan& p : autotune_candidates(M, N, K, g)) {
                const double ms = common::time_median_ms([&] { run_plan(p, A, B, C, M, N, K); }, kAutotuneWarmup,
                                                         kAutotuneReps);
                if (ms < best_ms) {
                    best_ms = ms;
                    best = p;
                }
            }
        }
        it = cache.emplace(key, best).first;
    }
    const Plan& p = it->second;
    Plan tiles = p;  // the tiled part, named before the strip
    tiles.strip = 0;
    return with_row_strip(p.strip, A, B, C, M, N, K, [&](int m) {
               return run_plan(tiles, A, B, C, m, N, K) + (p.streamk ? " streamK" : "");
           }) +
           (measure ? " (autotuned)" : model_only ? " (model: MATMUL_AUTOTUNE=model)" : " (model: tiny)");
}

}  // namespace matmul
