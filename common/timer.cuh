// timer.cuh - time a launch with CUDA events: warm-up first, then the median.
#pragma once
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/stats.hpp"

namespace common {

// Calls launch() `warmup` times untimed, then `reps` times, each between two
// events on the default stream, and returns the median in milliseconds.
// Events time the GPU work only: no PCIe copies. Each repetition is
// synchronized, so one launch's tail never overlaps the next.
//
// prepare() runs untimed before every launch (e.g. restoring an input that
// the kernel overwrites), and the GPU finishes it before the start event is
// recorded: every repetition then starts from an idle GPU, like those with
// nothing to prepare. (Without that synchronization the kernel would be
// queued behind the preparation and its launch latency hidden from the
// timing, flattering exactly the kernels that need preparing.)
template <class Launch, class Prepare>
double time_median_ms(Launch&& launch, int warmup, int reps, Prepare&& prepare) {
    for (int i = 0; i < warmup; ++i) {
        prepare();
        launch();
        CHECK_LAUNCH();
    }
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<double> ms(reps);
    for (int i = 0; i < reps; ++i) {
        prepare();
        CHECK(cudaDeviceSynchronize());
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

template <class Launch>
double time_median_ms(Launch&& launch, int warmup, int reps) {
    return time_median_ms(launch, warmup, reps, [] {});
}

}  // namespace common
