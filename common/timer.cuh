// timer.cuh - time a launch with CUDA events: warm-up first, then the median.
#pragma once
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/stats.hpp"

namespace common {

// Calls launch() `warmup` times untimed, then `reps` times, each between two
// events on the default stream, and returns the median in milliseconds.
// Events time the GPU work only: no host overhead, no PCIe copies. Each
// repetition is synchronized, so one launch's tail never overlaps the next.
template <class Launch>
double time_median_ms(Launch&& launch, int warmup, int reps) {
    for (int i = 0; i < warmup; ++i) {
        launch();
        CHECK_LAUNCH();
    }
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<double> ms(reps);
    for (int i = 0; i < reps; ++i) {
        CHECK(cudaEventRecord(start));
        launch();
        CHECK_LAUNCH();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start, stop));
        ms[i] = t;
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return median(ms);
}

}  // namespace common
