// device.cuh - pick the GPU, print what it is, or waive the run (exit 77);
// refuse a size that device or host memory cannot hold (exit 2).
// Its limits are common/gpu.cuh's (GPU_PROFILE: common/gpu_profile.cuh): this file reads only
// what the header line names.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/gpu_profile.cuh"
#include "common/report.hpp"
#include "common/stats.hpp"

namespace common {

constexpr int kExitWaived = 77;  // the automake/ctest convention for "skipped"

struct DeviceInfo {
    int id = 0;
    std::string name;
    int sms = 0;                  // gpu().sms: GPU_PROFILE's where one is set
    int driver = 0, runtime = 0;  // CUDA versions the driver supports / the runtime is, 13000 = 13.0
    std::string driver_release;   // the kernel module's version, e.g. "580.159.04" (Linux)
    int real_sms = 0;             // the header's figures: the GPU's own
    size_t global_mem = 0, real_l2 = 0;
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

#if defined(__CUDACC__)  // (test_common.cpp includes this file as host C++)
namespace detail {
// Does nothing: whether this binary holds code the current GPU runs.
__global__ void image_probe() {}
}  // namespace detail

// "" if this binary holds code the current device runs; else what and why.
// A binary built for another GPU (`make ARCH=sm_90`, run on an 8.6 card)
// would fail at its first launch with a bare "no kernel image".
inline std::string image_refusal() {
    cudaFuncAttributes a;
    const cudaError_t e = cudaFuncGetAttributes(&a, detail::image_probe);
    if (e == cudaSuccess) return "";
    (void)cudaGetLastError();  // not sticky: clear it
    int dev = 0;
    cudaDeviceProp p;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaGetDeviceProperties(&p, dev));
    return "device " + std::to_string(dev) + " (" + p.name + ", compute capability " + std::to_string(p.major) + "." +
           std::to_string(p.minor) + ") cannot run this build (" + cudaGetErrorName(e) +
           "): it was compiled for another GPU. Rebuild it on this machine: make clean && make";
}
#endif

// Whether cudaGetDeviceCount's answer means there is no GPU to run on: none,
// or no driver fit for this runtime (what a machine without any driver gets
// too). Any other error is a GPU setup that is broken (the driver's library
// and kernel module of different versions, an HGX's fabric manager not
// running, ...): that is an error to report, not a reason to skip.
inline bool no_cuda_device(cudaError_t err, int count) {
    return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || (err == cudaSuccess && count == 0);
}

// The end of a program's run: the last line and the exit code. FAIL (1) if a
// check failed; WAIVED (77) where --kernel asked for one kernel and this GPU
// cannot run it (note_waived, and never note_ran: nothing that was asked for
// ran, so the run is no PASS); else PASS (0). A program whose kernel may be
// waived at one size and run at another (02's, by the bins) notes the runs. A
// mode that measures and checks nothing (04's --accuracy) ends with
// asked_kernel_waived alone: WAIVED (77), else 0.
inline std::set<std::string>& waived_kernels() {
    static std::set<std::string> names;
    return names;
}
inline std::set<std::string>& ran_kernels() {
    static std::set<std::string> names;
    return names;
}
inline void note_waived(const std::string& kernel) { waived_kernels().insert(kernel); }
inline void note_ran(const std::string& kernel) { ran_kernels().insert(kernel); }
inline bool asked_kernel_waived(const std::string& asked_kernel) {  // prints the WAIVED line when it is
    if (asked_kernel.empty() || !waived_kernels().count(asked_kernel) || ran_kernels().count(asked_kernel))
        return false;
    std::printf("\nWAIVED: --kernel %s cannot run on this GPU (why: above)\n", asked_kernel.c_str());
    return true;
}
inline int finish(bool ok, const std::string& asked_kernel) {
    if (ok && asked_kernel_waived(asked_kernel)) return kExitWaived;
    std::printf("\n%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

// Selects device `id` or exits: 77 when there is no CUDA device to run on
// (no_cuda_device: no GPU, no driver, a container without one), 1 when CUDA
// cannot start on the one there is (any other error) or the binary has no code
// for this GPU (built with another ARCH), 2 when `id` is out of range. A
// program on a laptop without a GPU says so instead of crashing.
inline DeviceInfo require_device(int id) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess && !no_cuda_device(err, count)) {
        std::fprintf(stderr, "CUDA cannot start: %s (%s). A driver or GPU problem, not a missing GPU: "
                     "nvidia-smi should say more\n", cudaGetErrorString(err), cudaGetErrorName(err));
        std::exit(1);
    }
    if (no_cuda_device(err, count)) {
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
        else
            std::printf("WAIVED: no CUDA device (the driver sees no GPU)\n");
        std::exit(kExitWaived);
    }
    if (id >= count) {
        std::fprintf(stderr, "--device %d: only %d CUDA device(s) present\n", id, count);
        std::exit(2);
    }
    CHECK(cudaSetDevice(id));
#if defined(__CUDACC__)
    if (const std::string why = image_refusal(); !why.empty()) {
        std::fprintf(stderr, "%s\n", why.c_str());
        std::exit(1);
    }
#endif
    const Gpu& g = gpu();
    if (!g.error.empty()) {  // a profile this GPU cannot play: a bad command line, in effect
        std::fprintf(stderr, "%s\n", g.error.c_str());
        std::exit(2);
    }
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, id));
    DeviceInfo d;
    d.id = id;
    d.name = p.name;
    d.sms = g.sms;
    d.real_sms = p.multiProcessorCount;
    d.global_mem = p.totalGlobalMem;
    d.real_l2 = p.l2CacheSize;
    CHECK(cudaDriverGetVersion(&d.driver));
    CHECK(cudaRuntimeGetVersion(&d.runtime));
    d.driver_release = read_driver_release();
    return d;
}

inline std::string cc_string(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// "" without GPU_PROFILE; else what the program plans for instead of this GPU's
// limits, what was capped, and that the timings are still this GPU's.
inline std::string emulation_note(const Gpu& g = gpu()) {
    if (g.profile.empty()) return "";
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "GPU_PROFILE=%s: limits emulated (cc %s, %d SMs, %s shared memory per block, %s per SM, L2 %.0f MiB, "
                  "cluster %d, %d threads and %d blocks per SM)%s%s; timings are this GPU's",
                  g.profile.c_str(), cc_string(g.cc).c_str(), g.sms, kib(g.smem_per_block).c_str(),
                  kib(g.smem_per_sm).c_str(), g.l2_bytes / 1048576.0, g.max_cluster, g.threads_per_sm, g.blocks_per_sm,
                  g.capped.empty() ? "" : ", capped at this GPU's: ", g.capped.c_str());
    return buf;
}

// The GPU's own figures (a profile changes what is planned for, not what the GPU is).
inline std::string describe(const DeviceInfo& d) {
    const Gpu& g = gpu();
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s (cc %s, %d SMs, %.0f GiB, L2 %.0f MiB), driver %s, runtime %s", d.name.c_str(),
                  cc_string(g.real_cc).c_str(), d.real_sms, d.global_mem / 1073741824.0, d.real_l2 / 1048576.0,
                  driver_string(d).c_str(), version_string(d.runtime).c_str());
    const std::string note = emulation_note(g);
    return note.empty() ? std::string(buf) : std::string(buf) + "; " + note;
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
    Metadata m = {{"gpu", d.name},
                  {"compute_capability", cc_string(gpu().real_cc)},
                  {"sms", std::to_string(d.real_sms)},
                  {"driver", driver_string(d)},
                  {"cuda_runtime", version_string(d.runtime)},
                  {"date", utc_now()},
                  {"command", command_line}};
    if (const std::string note = emulation_note(); !note.empty()) m.push_back({"gpu_profile", note});
    return m;
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

// Bytes of host memory the system can give this process without swapping:
// MemAvailable in /proc/meminfo (Linux); 0 where that is not known.
inline size_t available_host_memory() {
    std::FILE* f = std::fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kib = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    std::fclose(f);
    return size_t(kib) * 1024;
}

// The same for the host copies (inputs, CPU reference, downloaded results):
// exits 2 where `bytes` are more than the system has available, rather than
// letting the kernel's out-of-memory killer end the program half way. No
// check where the available memory is not known.
inline void require_host_memory(const char* program, double bytes) {
    const size_t avail = available_host_memory();
    if (avail > 0 && bytes > double(avail)) {
        std::fprintf(stderr, "%s: needs %s of host memory, %s is available\n", program, human_bytes(bytes).c_str(),
                     human_bytes(double(avail)).c_str());
        std::exit(2);
    }
}

}  // namespace common
