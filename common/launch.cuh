// launch.cuh - the small launch helpers every chapter used to write for itself.
//
//   ceil_div(a, b)            blocks needed to cover a items, b per block
//   sm_count()                multiprocessors of the current device (common/gpu.cuh)
//   request_dynamic_smem()    more than 48 KB of dynamic shared memory, or why not
//   launch_string()           the launch column of every results table (grid, block, smem, cluster)
//   Launch                    a cudaLaunchKernelEx configuration: clusters, programmatic launch
//   launch_programmatic()     a plain launch, programmatic
//   programmatic_waits(k)     whether kernel k waits in pdl_wait() (its code is 9.0's)
//   pdl_wait(), pdl_launch_dependents()   the kernel's side of a programmatic launch
//
// Cluster launches (Hopper): common/cluster.cuh.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/gpu.cuh"

namespace common {

// ceil(a / b) for positive integers; the type of a (int for 2D grids, size_t for element counts).
template <class A, class B>
constexpr A ceil_div(A a, B b) {
    static_assert(std::is_integral_v<A> && std::is_integral_v<B>, "ceil_div takes integers");
    return A((a + A(b) - 1) / A(b));
}

// Multiprocessors of the current device (GPU_PROFILE's where one is set: common/gpu.cuh).
inline int sm_count() { return gpu().sms; }

// Lets `kernel` launch with `bytes` of dynamic shared memory (above 48 KB a
// kernel must ask). Returns "" or, where this GPU (or GPU_PROFILE) allows
// less, why not: the caller waives that kernel or picks a smaller plan; no
// abort. The attribute only grows, so a plan made earlier for more still
// launches. prefer_shared: also ask for the largest shared-memory carveout
// (several such blocks per SM rather than more L1).
//
// Launchers call it before every launch, inside the timed interval, so it
// remembers what each kernel was given and asks the runtime only for more:
// asking every time took 0.66 us a call on the H200 (the carveout another
// 0.4 us), remembering 0.09-0.13 us, against ~4 us for a whole small launch
// (10^4 calls in a loop). The memory is this process's: code that sets the
// attribute itself, behind this function's back, must not rely on it.
// Programs launch from one thread; this is not meant to be called from several.
template <class... Params>
std::string request_dynamic_smem(void (*kernel)(Params...), size_t bytes, bool prefer_shared = false) {
    const std::string why = smem_refusal(bytes);
    if (!why.empty()) return why;
    struct Given { size_t bytes = 0; bool carveout = false; };
    static std::map<std::pair<int, const void*>, Given> given;  // per device and kernel
    const void* k = reinterpret_cast<const void*>(kernel);
    int device = 0;
    CHECK(cudaGetDevice(&device));
    Given& g = given[{device, k}];
    if (bytes > g.bytes) {
        cudaFuncAttributes a;
        CHECK(cudaFuncGetAttributes(&a, k));
        // The limit is on static + dynamic (cudaFuncSetAttribute refuses more).
        const std::string total = smem_refusal(bytes + a.sharedSizeBytes);
        if (!total.empty()) return total + " (" + std::to_string(a.sharedSizeBytes) + " bytes of it static)";
        if (bytes > size_t(a.maxDynamicSharedSizeBytes))
            CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
        g.bytes = std::max(bytes, size_t(a.maxDynamicSharedSizeBytes));
    }
    if (prefer_shared && !g.carveout) {
        CHECK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   int(cudaSharedmemCarveoutMaxShared)));
        g.carveout = true;
    }
    return "";
}

// The launch column of every results table: "grid(128) block(256)",
// "grid(64,64) block(32,8)", "grid(4,4,3) block(256)"; then " smem 64K" when
// dynamic shared memory is asked for (rounded up to whole KiB, as common::kib
// does), and " cluster 4" for a launch in thread-block clusters of 4 blocks
// (common/cluster.cuh; 0: not a cluster launch).
inline std::string launch_string(dim3 g, dim3 b, size_t smem = 0, unsigned cluster = 0) {
    char s[96];
    if (g.z > 1)
        std::snprintf(s, sizeof s, "grid(%u,%u,%u) block(%u)", g.x, g.y, g.z, b.x * b.y * b.z);
    else if (g.y == 1 && b.y == 1)
        std::snprintf(s, sizeof s, "grid(%u) block(%u)", g.x, b.x);
    else
        std::snprintf(s, sizeof s, "grid(%u,%u) block(%u,%u)", g.x, g.y, b.x, b.y);
    std::string r = s;
    if (smem) r += " smem " + std::to_string((smem + 1023) / 1024) + "K";
    if (cluster) r += " cluster " + std::to_string(cluster);
    return r;
}

// ---- Programmatic dependent launch (Hopper: compute capability 9.0 and newer) ----
// A kernel in a stream starts when the kernel before it has finished and its
// writes are visible; only then is its grid launched, its blocks placed on the
// SMs, and their prologues run: a few microseconds between two short kernels.
// Launched programmatically (Launch::programmatic() below), the next grid may
// be launched while the one before still runs; its blocks are placed where
// they fit and wait in pdl_wait() (CUDA's cudaGridDependencySynchronize()),
// which returns once the grid before has completed and its writes are
// visible. The rule that keeps a chain of such launches in order: every
// thread of a kernel launched this way calls pdl_wait() before its first
// access to global memory, so no grid completes before the grid before it
// has. pdl_launch_dependents() (cudaTriggerProgrammaticLaunchCompletion())
// lets the next grid be launched once every block of this one has called it
// (else when they exit): a hint, never a wait. Launched without the
// attribute, or compiled for a GPU before 9.0, both do nothing: a build for
// sm_80 JIT-compiled on a Hopper GPU has no wait, so Launch::programmatic()
// asks for the early launch only where the kernel's code is 9.0's
// (programmatic_waits below).
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Whether `kernel`, launched programmatically, waits in pdl_wait(): this GPU
// (and GPU_PROFILE) has the launch and the kernel's code in this binary is
// 9.0's or newer (code_refusal, common/gpu.cuh). Asked once per device and
// kernel (launchers call it before every launch, inside the timed interval).
inline bool programmatic_waits(const void* kernel) {
    if (!gpu().has(90)) return false;
    static std::map<std::pair<int, const void*>, bool> known;  // per device and kernel
    int device = 0;
    CHECK(cudaGetDevice(&device));
    const auto it = known.find({device, kernel});
    if (it != known.end()) return it->second;
    return known[{device, kernel}] = code_refusal(kernel, 90).empty();
}

// A launch's configuration for cudaLaunchKernelEx: `grid` blocks of `block`
// threads with `smem` bytes of dynamic shared memory each, on `stream`, and
// the attributes asked for: cluster(c), thread-block clusters of c blocks
// (common/cluster.cuh); programmatic(kernel), the programmatic launch above
// where `kernel` waits in pdl_wait() (programmatic_waits), else none.
// cfg.attrs points into this object: it may not be copied.
struct Launch {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[2] = {};
    Launch(dim3 grid, dim3 block, size_t smem = 0, cudaStream_t stream = 0) {
        cfg.gridDim = grid;
        cfg.blockDim = block;
        cfg.dynamicSmemBytes = smem;
        cfg.stream = stream;
        cfg.attrs = attr;
    }
    Launch& cluster(dim3 c) {
        cudaLaunchAttribute& a = next_attr();
        a.id = cudaLaunchAttributeClusterDimension;
        a.val.clusterDim.x = c.x;
        a.val.clusterDim.y = c.y;
        a.val.clusterDim.z = c.z;
        return *this;
    }
    template <class... Params>
    Launch& programmatic(void (*kernel)(Params...)) {
        if (!programmatic_waits(reinterpret_cast<const void*>(kernel))) return *this;
        cudaLaunchAttribute& a = next_attr();
        a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        a.val.programmaticStreamSerializationAllowed = 1;
        return *this;
    }
    Launch(const Launch&) = delete;
    Launch& operator=(const Launch&) = delete;

  private:
    cudaLaunchAttribute& next_attr() {  // one slot for each kind of attribute
        if (cfg.numAttrs >= sizeof attr / sizeof attr[0]) {
            std::fprintf(stderr, "common::Launch: more than %zu launch attributes\n", sizeof attr / sizeof attr[0]);
            std::abort();
        }
        return attr[cfg.numAttrs++];
    }
};

// kernel<<<grid, block>>>(args...), launched programmatically (above); CHECKed.
template <class... Params, class... Args>
void launch_programmatic(void (*kernel)(Params...), dim3 grid, dim3 block, Args&&... args) {
    Launch l(grid, block);
    CHECK(cudaLaunchKernelEx(&l.programmatic(kernel).cfg, kernel, std::forward<Args>(args)...));
}

}  // namespace common
