// device.cuh - pick the GPU, print what it is, or waive the run (exit 77).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/report.hpp"
#include "common/stats.hpp"

namespace common {

constexpr int kExitWaived = 77;  // the automake/ctest convention for "skipped"

struct DeviceInfo {
    int id = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0, sms = 0;
    int driver = 0, runtime = 0;  // CUDA versions the driver supports / the runtime is, 13000 = 13.0
    std::string driver_release;   // the kernel module's version, e.g. "580.159.04" (Linux)
    size_t global_mem = 0, l2_bytes = 0, smem_per_block_optin = 0;
};

inline std::string version_string(int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// The first "N.N.N" word of /proc/driver/nvidia/version, e.g. "NVRM version: NVIDIA UNIX
// Open Kernel Module for x86_64  580.159.04  Release Build ..." -> "580.159.04"; "" elsewhere.
inline std::string read_driver_release() {
    FILE* f = std::fopen("/proc/driver/nvidia/version", "r");
    if (!f) return "";
    char line[512] = {};
    const bool ok = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    for (char* w = ok ? std::strtok(line, " \t\n") : nullptr; w; w = std::strtok(nullptr, " \t\n")) {
        unsigned a, b, c;
        char rest;
        if (std::sscanf(w, "%u.%u.%u%c", &a, &b, &c, &rest) == 3) return w;
    }
    return "";
}

inline std::string driver_string(const DeviceInfo& d) {
    const std::string cuda = "CUDA " + version_string(d.driver);
    return d.driver_release.empty() ? cuda : d.driver_release + " (" + cuda + ")";
}

// Selects device `id` or exits: 77 when there is no usable CUDA device at
// all (a missing driver, no GPU, a container without one), 2 when `id` is out
// of range. A program on a laptop without a GPU says so instead of crashing.
inline DeviceInfo require_device(int id) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        // cudaErrorInsufficientDriver is also what a machine without any driver gets: say so
        // first, so that nobody goes looking for a driver to upgrade where there is none.
        const bool nvidia_module = !read_driver_release().empty();  // /proc/driver/nvidia/version
        const std::string runtime = version_string(CUDART_VERSION);
        if (err == cudaErrorInsufficientDriver && !nvidia_module)
            std::printf("WAIVED: no CUDA driver found (or it is older than this CUDA %s runtime needs)\n",
                        runtime.c_str());
        else if (err == cudaErrorInsufficientDriver)
            std::printf("WAIVED: the NVIDIA driver is older than this CUDA %s runtime needs: update the driver\n",
                        runtime.c_str());
        else if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0))
            std::printf("WAIVED: no CUDA device (the driver sees no GPU)\n");
        else
            std::printf("WAIVED: no CUDA device available (%s)\n", cudaGetErrorString(err));
        std::exit(kExitWaived);
    }
    if (id >= count) {
        std::fprintf(stderr, "--device %d: only %d CUDA device(s) present\n", id, count);
        std::exit(2);
    }
    CHECK(cudaSetDevice(id));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, id));
    DeviceInfo d;
    d.id = id;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sms = p.multiProcessorCount;
    d.global_mem = p.totalGlobalMem;
    d.l2_bytes = p.l2CacheSize;
    d.smem_per_block_optin = p.sharedMemPerBlockOptin;
    CHECK(cudaDriverGetVersion(&d.driver));
    CHECK(cudaRuntimeGetVersion(&d.runtime));
    d.driver_release = read_driver_release();
    return d;
}

// Exits 77 unless the device has compute capability >= major.minor.
inline void require_compute_capability(const DeviceInfo& d, int major, int minor, const char* feature) {
    if (d.cc_major * 10 + d.cc_minor < major * 10 + minor) {
        std::printf("WAIVED: %s needs compute capability %d.%d, %s is %d.%d\n", feature, major, minor,
                    d.name.c_str(), d.cc_major, d.cc_minor);
        std::exit(kExitWaived);
    }
}

inline std::string describe(const DeviceInfo& d) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s (cc %d.%d, %d SMs, %.0f GiB, L2 %.0f MiB), driver %s, runtime %s",
                  d.name.c_str(), d.cc_major, d.cc_minor, d.sms, d.global_mem / 1073741824.0,
                  d.l2_bytes / 1048576.0, driver_string(d).c_str(), version_string(d.runtime).c_str());
    return buf;
}

inline std::string utc_now() {
    char buf[32];
    const std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

// The header line every program prints first.
inline void print_device_header(const DeviceInfo& d) {
    std::printf("device %d: %s\n", d.id, describe(d).c_str());
}

// The comment header of a results CSV: where and how the numbers were made.
inline Metadata run_metadata(const DeviceInfo& d, const std::string& command_line) {
    return {{"gpu", d.name},
            {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
            {"sms", std::to_string(d.sms)},
            {"driver", driver_string(d)},
            {"cuda_runtime", version_string(d.runtime)},
            {"date", utc_now()},
            {"command", command_line}};
}

// Bytes of device memory free now (to refuse a size before allocating it).
inline size_t free_device_memory() {
    size_t free_b = 0, total_b = 0;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    return free_b;
}

// Exits 2 (a size the command line asked for) when `bytes` of device memory
// are not free, before anything is allocated.
inline void require_device_memory(const char* program, double bytes) {
    const size_t free_b = free_device_memory();
    if (bytes > double(free_b)) {
        std::fprintf(stderr, "%s: needs %s of device memory, %s is free\n", program, human_bytes(bytes).c_str(),
                     human_bytes(double(free_b)).c_str());
        std::exit(2);
    }
}

}  // namespace common
