// timer.cuh - time a launch with CUDA events: warm-up first, then the median.
#pragma once
#include <functional>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/stats.hpp"

namespace common {

// Two events around one launch; time() records them, waits for the stop event
// and returns the milliseconds.
class EventTimer {
  public:
    EventTimer() {
        CHECK(cudaEventCreate(&start_));
        CHECK(cudaEventCreate(&stop_));
    }
    ~EventTimer() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;

    template <class Launch>
    float time(Launch&& launch) {
        CHECK(cudaEventRecord(start_));
        launch();
        CHECK_LAUNCH();
        CHECK(cudaEventRecord(stop_));
        CHECK(cudaEventSynchronize(stop_));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

  private:
    cudaEvent_t start_, stop_;
};

// Calls launch() `warmup` times untimed, then `reps` times, each between two
// events on the default stream, and returns the median in milliseconds.
// The events bracket the launch as the GPU sees it: the start event is
// recorded on an idle GPU, so the interval holds the launch latency and any
// host work inside launch() (a launcher's checks, an attribute it sets), but
// no copy made before it. Each repetition is synchronized, so one launch's
// tail never overlaps the next.
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
    EventTimer timer;
    std::vector<double> ms(reps);
    for (int i = 0; i < reps; ++i) {
        prepare();
        CHECK(cudaDeviceSynchronize());
        ms[i] = timer.time(launch);
    }
    return median(ms);
}

template <class Launch>
double time_median_ms(Launch&& launch, int warmup, int reps) {
    return time_median_ms(launch, warmup, reps, [] {});
}

// time_median_ms for several launches compared with each other (a kernel and
// its peer): `warmup` untimed launches of each, then `reps` rounds, each
// round one timed launch of each in turn; each gets the median of its
// launches. Whatever changes while they are timed (clocks, the launch latency
// that is half of a 10-us kernel's time) then falls on all of them alike,
// instead of on whichever was being timed at that moment. Each timed launch
// follows an untimed one of its own, so that it finds the caches as it left
// them, as when it is timed alone (after another kernel, a matrix a little
// larger than L2 would find in it what that kernel left: up to 3% faster or
// slower, by the order of the list): each gets warmup + 2 reps launches, which a
// caller's common::plan_reps must count. Not for kernels held at the GPU's power
// cap: there each inherits the power state the one before leaves (01_matmul
// times its kernels alone; 01_matmul/WORKLOG.md, "Under sustained load, measured").
inline std::vector<double> time_interleaved_ms(const std::vector<std::function<void()>>& launches, int warmup,
                                               int reps) {
    for (const auto& launch : launches)
        for (int i = 0; i < warmup; ++i) {
            launch();
            CHECK_LAUNCH();
        }
    CHECK(cudaDeviceSynchronize());
    EventTimer timer;
    std::vector<std::vector<double>> ms(launches.size(), std::vector<double>(reps));
    for (int r = 0; r < reps; ++r)
        for (size_t i = 0; i < launches.size(); ++i) {
            launches[i]();
            CHECK_LAUNCH();
            CHECK(cudaDeviceSynchronize());  // the timed launch starts from an idle GPU, as in time_median_ms
            ms[i][r] = timer.time(launches[i]);
        }
    std::vector<double> medians;
    for (const auto& m : ms) medians.push_back(median(m));
    return medians;
}

// One launch between two events, in ms (no warm-up): how long a first,
// checked launch took, which decides how many repetitions a slow kernel gets.
template <class Launch>
float time_once_ms(Launch&& launch) {
    EventTimer timer;
    return timer.time(launch);
}

// The one rule for slow kernels, in every chapter: a kernel is timed
// `reps` times after `warmup` launches, unless those launches would take
// longer than kRepsBudgetMs. Then the warm-up goes first (its first, checked
// launch warmed it up): the repetitions keep what fits. Where even they do
// not fit, it gets as many as fit (at least one), and the results table says
// so ("[reps N]" in the launch column, reps_note()).
constexpr double kRepsBudgetMs = 1500;

struct RepsPlan {
    int warmup, reps;
    bool reduced;  // fewer repetitions than asked
};

inline RepsPlan plan_reps(double one_launch_ms, int warmup, int reps) {
    if (one_launch_ms * (double(warmup) + reps) <= kRepsBudgetMs) return {warmup, reps, false};
    const int fit = int(kRepsBudgetMs / one_launch_ms);  // launches that fit (one_launch_ms > 0 here)
    if (fit >= reps) return {fit - reps, reps, false};
    return {0, fit < 1 ? 1 : fit, true};
}

inline std::string reps_note(const RepsPlan& p) { return p.reduced ? " [reps " + std::to_string(p.reps) + "]" : ""; }

// plan_reps from a first timed call that may hold one-time work (the module's
// lazy load, 01's autotuning search): where it alone would cut the
// repetitions, time_again() times one more call, and that decides.
template <class TimeAgain>
RepsPlan plan_reps_after_first(double first_ms, int warmup, int reps, TimeAgain&& time_again) {
    if (plan_reps(first_ms, warmup, reps).reduced) first_ms = time_again();
    return plan_reps(first_ms, warmup, reps);
}

struct Timing {
    double ms;      // median
    RepsPlan plan;  // how it was timed
};

// time_median_ms under the rule above; `one_launch_ms` is a launch already
// timed (time_once_ms of the checked launch), so nothing runs twice for it
// (plan_reps_after_first: a second launch only where the first would cut
// the repetitions).
template <class Launch, class Prepare>
Timing time_kernel(Launch&& launch, double one_launch_ms, int warmup, int reps, Prepare&& prepare) {
    const RepsPlan p = plan_reps_after_first(one_launch_ms, warmup, reps, [&] {
        prepare();
        CHECK(cudaDeviceSynchronize());
        return time_once_ms(launch);
    });
    return {time_median_ms(launch, p.warmup, p.reps, prepare), p};
}

template <class Launch>
Timing time_kernel(Launch&& launch, double one_launch_ms, int warmup, int reps) {
    return time_kernel(launch, one_launch_ms, warmup, reps, [] {});
}

}  // namespace common
