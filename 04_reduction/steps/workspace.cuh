// What every step of 04_reduction launches with: the device buffers of one
// reduction (Workspace), the launcher's signature (LaunchFn) and the entry of
// the kernel lists (Kernel).
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/buffer.cuh"
#include "common/check.cuh"
#include "common/gpu.cuh"
#include "common/launch.cuh"

namespace reduction {

// The seeds' thread block for the block-per-chunk kernels (seed 000 launches
// <<<n / 128, 128>>>); it also sizes the partial sums: at most one per kBlock
// elements.
constexpr int kBlock = 128;

// Device buffers one reduction needs, sized for n elements.
template <class T>
struct Workspace {
    size_t n = 0;
    T* work = nullptr;          // scratch copy of the input for the in-place kernels
    T* partial = nullptr;       // one per block
    unsigned* ticket = nullptr; // the last-block counter, zero between launches
    T* out = nullptr;           // the result
    size_t max_partials = 0;
    explicit Workspace(size_t n_) : n(n_) {
        max_partials = common::ceil_div(n, kBlock) + 1;
        CHECK(cudaMalloc(&work, n * sizeof(T)));
        CHECK(cudaMalloc(&partial, max_partials * sizeof(T)));
        CHECK(cudaMalloc(&ticket, sizeof(unsigned)));
        CHECK(cudaMalloc(&out, sizeof(T)));
        CHECK(cudaMemset(ticket, 0, sizeof(unsigned)));
    }
    ~Workspace() { cudaFree(work); cudaFree(partial); cudaFree(ticket); cudaFree(out); }
    // The result poisoned (NaN, or -1 for int), and with poison() the partial
    // sums too: a kernel that leaves either unwritten cannot pass.
    void poison_result() { common::poison(out, sizeof(T)); }
    void poison() {
        poison_result();
        common::poison(partial, max_partials * sizeof(T));
    }
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;
    // Bytes of device memory a Workspace for n elements of T takes.
    static size_t bytes(size_t n) { return n * sizeof(T) + (common::ceil_div(n, kBlock) + 1) * sizeof(T) + 64; }
};

// Launches the whole reduction of in[0..n) into ws.out on the default stream
// and returns the launch configuration. In-place kernels reduce ws.work,
// which the caller must have filled with the input (restore_work).
template <class T>
using LaunchFn = std::string (*)(const T* in, size_t n, Workspace<T>& ws);

template <class T>
struct Kernel {
    const char* name;
    bool in_place;     // destroys ws.work: restore it before each run
    LaunchFn<T> launch;
    const char* what;
    // "" where the kernel runs under g's limits (common/gpu.cuh: GPU_PROFILE
    // applied) and in this build, else why not (a Hopper kernel on an older
    // GPU); nullptr: runs everywhere.
    std::string (*waived)(const common::Gpu& g) = nullptr;
};

// "" or the reason kernel k cannot run here (the program skips its row and
// says why; the tests skip). A test passes each preset's limits as g.
template <class T>
std::string waiver(const Kernel<T>& k, const common::Gpu& g = common::gpu()) {
    return k.waived ? k.waived(g) : std::string();
}

template <class T>
void restore_work(const T* in, size_t n, Workspace<T>& ws) {
    CHECK(cudaMemcpyAsync(ws.work, in, n * sizeof(T), cudaMemcpyDeviceToDevice));
}

}  // namespace reduction
