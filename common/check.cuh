// check.cuh - fail loudly and early on any CUDA error.
//
// Every runtime call is wrapped in CHECK(); every kernel launch is followed by
// CHECK_LAUNCH(). A launch itself returns nothing: configuration errors (too
// many threads, too much shared memory) are only visible through
// cudaGetLastError(), and errors raised while the kernel runs surface at the
// next synchronizing call, which is itself wrapped in CHECK().
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        const cudaError_t err_ = (call);                                         \
        if (err_ != cudaSuccess) {                                               \
            std::fprintf(stderr, "CUDA error at %s:%d: %s: %s\n    in: %s\n",    \
                         __FILE__, __LINE__, cudaGetErrorName(err_),             \
                         cudaGetErrorString(err_), #call);                       \
            std::exit(1);                                                        \
        }                                                                        \
    } while (0)

#define CHECK_LAUNCH() CHECK(cudaGetLastError())
