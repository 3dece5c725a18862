// stats.hpp - tiny host-side helpers with no CUDA dependency (unit-tested on the CPU).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace common {

// Median of a sample (the mean of the two middle values for an even count).
// Timings are skewed by the odd slow repetition (a clock ramp, another
// process): the median ignores it, the mean does not.
inline double median(std::vector<double> v) {
    if (v.empty()) throw std::invalid_argument("median of an empty sample");
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// a * b, or false if it does not fit in 64 bits (sizes come from the command line).
inline bool mul_fits(uint64_t a, uint64_t b, uint64_t* out) {
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return false;
    *out = a * b;
    return true;
}

// 1536 -> "1.5 KiB"; used in messages about sizes and memory.
inline std::string human_bytes(double bytes) {
    const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) { bytes /= 1024.0; ++u; }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, unit[u]);
    return buf;
}

}  // namespace common
