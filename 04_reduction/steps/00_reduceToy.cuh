// Step 0 of 04_reduction: the seeds' toy (seed 002), 8 numbers summed in place
// by one block of 4 threads (./reduction --toy prints every step).
#pragma once
#include <cuda_runtime.h>

namespace reduction {

// reduceToy: each step adds the upper half onto the lower half:
// 1..8 -> 6 8 10 12 -> 16 20 -> 36. `history` receives the array after every
// step (n values per step).
template <class T>
__global__ void reduceToy(T* x, int n, T* history) {
    const int tid = threadIdx.x;
    int step = 0;
    for (int offset = n / 2; offset > 0; offset /= 2) {
        if (tid < offset) x[tid] += x[tid + offset];
        __syncthreads();
        if (tid == 0)
            for (int i = 0; i < n; ++i) history[step * n + i] = x[i];
        ++step;
        __syncthreads();
    }
}

}  // namespace reduction
