// histogram_test.hpp - what 02_distributed_smem's two histogram test files
// share: one plan run on the GPU, compared with the CPU's histogram.
#pragma once
#include <vector>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include "02_distributed_smem/distributed_smem.cuh"
#include "common/buffer.cuh"
#include "common/check.cuh"
#include "common/verify.hpp"

namespace histogram_test {

// Runs plan p on `in`, placed `offset` ints into its device buffer (an input
// that starts off 16 bytes), into a poisoned histogram, and compares it with
// ref bin by bin. 32 poisoned counters follow the histogram: a kernel that
// adds past its last bin (a flush or a clamp off by one) fails here too.
inline common::Comparison run(const distributed_smem::Plan& p, const std::vector<int>& in,
                              const std::vector<unsigned>& ref, int num_bins, size_t offset = 0) {
    constexpr size_t kAfter = 32;
    common::DeviceBuffer<int> d_in(in.size() + offset);
    common::DeviceBuffer<unsigned> d_out{size_t(num_bins) + kAfter};
    CHECK(cudaMemcpy(d_in.get() + offset, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
    d_out.poison();
    CHECK(distributed_smem::launch(p, d_in.get() + offset, in.size(), d_out.get(), num_bins));
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> got;
    d_out.download(got);
    const size_t past = common::written_outside(got, 0, size_t(num_bins));
    if (past > 0) ADD_FAILURE() << past << " counters past the " << num_bins << " bins were written";
    return common::compare(got.data(), ref.data(), size_t(num_bins));
}

}  // namespace histogram_test
