// buffer.cuh - an owning device array, and poisoning.
#pragma once
#include <cstddef>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "common/check.cuh"

namespace common {

// The poison: every byte 0xFF, a float or double NaN, an integer -1. Outputs
// are poisoned before each kernel runs, so an element the kernel never writes
// cannot pass for a result.
constexpr unsigned char kPoisonByte = 0xFF;
inline void poison(void* device_ptr, size_t bytes) { CHECK(cudaMemset(device_ptr, kPoisonByte, bytes)); }

// cudaMalloc'd array of n T, freed when it goes out of scope (so a failed
// test does not leak). cudaMalloc memory is aligned to 256 bytes, which the
// 16-byte vector loads in the kernels need; get() + 1 is not, and their
// launchers check (05, 06, 07: a scalar kernel instead, or a refusal).
template <class T>
class DeviceBuffer {
  public:
    explicit DeviceBuffer(size_t n) : n_(n) { CHECK(cudaMalloc(&p_, bytes() ? bytes() : 1)); }
    ~DeviceBuffer() { cudaFree(p_); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* get() const { return p_; }
    size_t size() const { return n_; }
    size_t bytes() const { return n_ * sizeof(T); }

    void upload(const std::vector<T>& h) { CHECK(cudaMemcpy(p_, h.data(), bytes(), cudaMemcpyHostToDevice)); }
    void download(std::vector<T>& h) const {
        h.resize(n_);
        CHECK(cudaMemcpy(h.data(), p_, bytes(), cudaMemcpyDeviceToHost));
    }
    void poison() { common::poison(p_, bytes()); }

  private:
    T* p_ = nullptr;
    size_t n_;
};

// The elements of h (a poisoned buffer, downloaded after a kernel ran) outside
// [begin, end) that are no longer poison: what the kernel wrote outside its
// output. A test puts poisoned elements around the output to catch a guard off
// by one in `make test`, not only under memcheck.
template <class T>
size_t written_outside(const std::vector<T>& h, size_t begin, size_t end) {
    unsigned char poisoned[sizeof(T)];
    std::memset(poisoned, kPoisonByte, sizeof poisoned);
    size_t n = 0;
    for (size_t i = 0; i < h.size(); ++i)
        if ((i < begin || i >= end) && std::memcmp(&h[i], poisoned, sizeof poisoned) != 0) ++n;
    return n;
}

}  // namespace common
