// gpu_test.hpp - gate GPU tests on the presence of a device.
//
// On a machine without a GPU (CI) the GPU tests are skipped with a reason;
// with REQUIRE_GPU=1 in the environment a skip becomes a failure, so a run
// on the GPU machine cannot pass by silently testing nothing.
#pragma once
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace testing_gpu {

inline bool gpu_present() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

inline bool gpu_required() {
    const char* e = std::getenv("REQUIRE_GPU");
    return e && *e && std::strcmp(e, "0") != 0;
}

inline int compute_capability() {  // 90 for 9.0; 0 without a device
    int dev = 0, major = 0, minor = 0;
    if (!gpu_present() || cudaGetDevice(&dev) != cudaSuccess) return 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    return major * 10 + minor;
}

}  // namespace testing_gpu

// Use as the first statement of a GPU test.
#define SKIP_WITHOUT_GPU()                                                               \
    do {                                                                                 \
        if (!testing_gpu::gpu_present()) {                                               \
            if (testing_gpu::gpu_required()) FAIL() << "REQUIRE_GPU is set but no CUDA device is available"; \
            GTEST_SKIP() << "no CUDA device available (set REQUIRE_GPU=1 to make this a failure)"; \
        }                                                                                \
    } while (0)

// For features such as thread-block clusters: SKIP_WITHOUT_CC(90, "clusters").
#define SKIP_WITHOUT_CC(cc, what)                                                        \
    do {                                                                                 \
        SKIP_WITHOUT_GPU();                                                              \
        if (testing_gpu::compute_capability() < (cc)) {                                  \
            if (testing_gpu::gpu_required()) FAIL() << what << " needs compute capability " << (cc) / 10 << "." << (cc) % 10; \
            GTEST_SKIP() << what << " needs compute capability " << (cc) / 10 << "." << (cc) % 10; \
        }                                                                                \
    } while (0)
