// mbarrier.cuh - the PTX of Hopper's (sm_90) shared-memory barriers with a
// transaction count, which the copy engines (cp.async.bulk, TMA) complete,
// and of the plain bulk copies (cp.async.bulk) in both directions; barriers
// that the blocks of a cluster arrive on across distributed shared memory.
//
// A barrier in shared memory completes a phase when `count` threads have
// arrived AND the bytes it was told to expect (arrive.expect_tx) have landed.
// Waiters name the phase by its parity (0, 1, 0, ...): wait(bar, p) returns
// once the phase of parity p has completed. 04_reduction and 05_transpose
// (bulk copies) and 01_matmul (TMA tiles) use them; device code only, sm_90
// and newer.
#pragma once
#include <cstdint>

namespace common {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned smem_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// A barrier that completes a phase after `count` arrivals (and its tx-count at 0).
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(count) : "memory");
}
// Orders this thread's earlier mbarrier.inits before what follows, at cluster
// scope (a release fence restricted to them: PTX ISA, membar/fence; CUTLASS's
// fence_barrier_init), for barriers other threads, blocks or copies will use;
// a __syncthreads() (or a cluster barrier) must follow. (A bulk copy reaches
// its mbarrier through the generic proxy, PTX ISA; the CUDA Programming
// Guide's TMA example puts fence.proxy.async.shared::cta here instead.)
__device__ __forceinline__ void fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// Arrive once and expect `bytes` more of transactions in this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes) : "memory");
}
// Arrive once (release: this thread's earlier reads are ordered before it).
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(bar)) : "memory");
}
// Spin until the phase of parity `parity` has completed (acquire: the copied
// bytes are visible after it). try_wait suspends the thread for a while in
// hardware before it answers false, so the loop does not hammer the barrier.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile(
            "{\n\t.reg .pred p;\n\t"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
            "selp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done) : "r"(smem_address(bar)), "r"(parity) : "memory");
}

// ---- Barriers between the blocks of a cluster (distributed shared memory) ----
// `addr` from cluster_address(): the shared::cluster address of another
// block's barrier. Arrive there (release at cluster scope: this thread's
// earlier reads and writes, remote ones included, are ordered before it).
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned addr) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(addr) : "memory");
}
// The same arrive ordering only this thread's own earlier accesses before it
// (.release.cta, the default), to say "done reading" a buffer the other
// block's copy engine will overwrite, where no data flows to the waiter.
// That it is enough rests on practice, not on the PTX memory model (a
// .cta-scoped release does not reach a waiter in another block): CUTLASS's
// ClusterBarrier::arrive(cta_id) is this instruction, and the reads it
// follows have returned their values before it issues.
// The cluster-scope release above compiles to a MEMBAR.ALL.GPU before the
// arrive (01_matmul's step 17 measured 0.64x with it there).
__device__ __forceinline__ void mbarrier_arrive_remote(unsigned addr) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(addr) : "memory");
}
// mbarrier_wait for a barrier that other blocks of the cluster arrive on
// (acquire at cluster scope: what they wrote before arriving is visible after it).
__device__ __forceinline__ void mbarrier_wait_cluster(uint64_t* bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile(
            "{\n\t.reg .pred p;\n\t"
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
            "selp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done) : "r"(smem_address(bar)), "r"(parity) : "memory");
}
// The same variable in block `rank` of this cluster (mapa): a shared::cluster address.
__device__ __forceinline__ unsigned cluster_address(const void* p, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_address(p)), "r"(rank));
    return r;
}
// Every thread of every block of the cluster (barrier.cluster, release / acquire).
__device__ __forceinline__ void cluster_sync_all() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// ---- Bulk copies: the TMA unit's plain (untiled) form -----------------------
// Both addresses 16-byte aligned, `bytes` a multiple of 16; one thread issues
// each copy, and the copy engine moves the bytes while the thread goes on.

// Global `src` -> shared `dst`; the bytes count down `bar`'s tx-count as they land.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_address(dst)), "l"(src), "r"(bytes), "r"(smem_address(bar)) : "memory");
}
// Shared `src` -> global `dst`, in this thread's current bulk group. The
// threads' ordinary writes of `src` must be made visible to the copy engine
// first: fence_proxy_async() by each writer, then a barrier.
__device__ __forceinline__ void bulk_copy_to_global(void* dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(dst), "r"(smem_address(src)), "r"(bytes) : "memory");
}
// Ordinary (generic proxy) writes to shared memory visible to later bulk copies (async proxy).
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// Close this thread's bulk group, then wait until the copy engine has READ
// every group's shared memory (the writes to global may still be in flight;
// they complete before the kernel does). Shared memory must outlive the reads.
__device__ __forceinline__ void bulk_commit_and_wait_read() {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
#endif

}  // namespace common
