// sync_kernels.cuh - part 2 of the chapter: the kernels of the synchronization experiments
// (./distributed_smem --sync). Host code that runs and reports them is in sync.cuh, sync_litmus.cuh
// and sync_report.cuh. (Seeds 000 and 004: the top README's Sources section.)
//
// Every wait in this file is bounded (a spin count or a clock64() budget): a wait that never
// ends reports a timeout instead of hanging the program. The only unbounded waits are hardware
// barriers (__syncthreads, grid.sync, cluster.sync), and those are only ever reached by every
// thread of their scope, except in the pitfall kernels that --pitfalls runs on purpose.
#pragma once
#include <cstdint>
#include <cooperative_groups.h>
#include <cuda/atomic>
#include <cuda_runtime.h>

namespace distributed_smem::sync {

namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------
// Small device helpers.
__device__ __forceinline__ unsigned smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned long long globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
template <class T>
__device__ __forceinline__ cuda::atomic_ref<T, cuda::thread_scope_device> dev_ref(T& x) {
    return cuda::atomic_ref<T, cuda::thread_scope_device>(x);
}

// The four ways the litmus tests order their accesses.
enum class Order : int {
    Plain = 0,     // ordinary loads and stores; the flag is volatile so that the spin is not hoisted
    Volatile = 1,  // every access volatile (PTX: relaxed, system scope): no compiler or L1 games, no order
    Fence = 2,     // as Volatile/Plain, plus __threadfence() after the data store and after the flag load
    Atomic = 3,    // cuda::atomic_ref at device scope: store(release) / load(acquire) (SB: seq_cst)
};
constexpr int kOrders = 4;
inline const char* order_name(Order o) {
    switch (o) {
        case Order::Plain: return "plain";
        case Order::Volatile: return "volatile";
        case Order::Fence: return "__threadfence";
        default: return "atomic_ref";
    }
}

// Both blocks of a pair meet here once per round, so that producer and consumer run the same
// round at about the same time (a producer far ahead never races). Relaxed atomics only: the
// meeting itself orders nothing, the variant under test does. Thread 0 waits (bounded), then
// the block's __syncthreads(); returns false for every thread once the wait timed out.
__device__ bool pair_meet(unsigned* counter, unsigned target, long long budget_cycles) {
    __shared__ int timed_out;
    if (threadIdx.x == 0) {
        dev_ref(*counter).fetch_add(1u, cuda::memory_order_relaxed);
        const long long t0 = clock64();
        int bad = 0;
        while (dev_ref(*counter).load(cuda::memory_order_relaxed) < target)
            if (clock64() - t0 > budget_cycles) { bad = 1; break; }
        timed_out = bad;
    }
    __syncthreads();
    const bool ok = !timed_out;
    __syncthreads();  // nobody rewrites timed_out before everyone has read it
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Message passing (MP). Blocks 2p (producer) and 2p+1 (consumer) form pair p; lane t of both
// runs instance (p, t, round k) on its own fresh slots data[i], flag[i], i = ((p*T)+t)*K + k:
//     producer: data = k+1;   flag = 1
//     consumer: wait until flag == 1 (bounded);   r = data
// The weak outcome: the consumer saw the flag but not the data (r != k+1). Consecutive rounds
// of one lane use consecutive words, so one 128-byte line holds 32 rounds of a lane's data:
// a plain load that brought the line into the consumer's L1 in round k can answer round k+1
// from there, stale. That is the GPU's everyday weak behaviour; the fences and acquire loads
// exist to forbid it (the SASS shows how: an L1 invalidation after the fence / acquire).
// counts[0] weak outcomes, counts[1] waits that timed out. sm[b] records each block's SM.
template <Order O>
__global__ void litmusMessagePassing(int* data, int* flag, unsigned* meet, int rounds,
                                     long long budget_cycles, unsigned long long* counts, unsigned* sm) {
    const int pair = blockIdx.x / 2;
    const bool producer = blockIdx.x % 2 == 0;
    if (threadIdx.x == 0) sm[blockIdx.x] = smid();
    unsigned long long weak = 0, timeouts = 0;
    for (int k = 0; k < rounds; ++k) {
        if (!pair_meet(meet + pair, 2u * (k + 1), budget_cycles)) { ++timeouts; break; }
        const size_t i = (size_t(pair) * blockDim.x + threadIdx.x) * rounds + k;
        if (producer) {
            if constexpr (O == Order::Plain) {
                data[i] = k + 1;
                *(volatile int*)&flag[i] = 1;
            } else if constexpr (O == Order::Volatile) {
                *(volatile int*)&data[i] = k + 1;
                *(volatile int*)&flag[i] = 1;
            } else if constexpr (O == Order::Fence) {
                data[i] = k + 1;
                __threadfence();
                *(volatile int*)&flag[i] = 1;
            } else {
                data[i] = k + 1;
                dev_ref(flag[i]).store(1, cuda::memory_order_release);
            }
        } else {
            const long long t0 = clock64();
            bool seen = false;
            int r = 0;
            for (;;) {
                int f;
                if constexpr (O == Order::Atomic) f = dev_ref(flag[i]).load(cuda::memory_order_acquire);
                else f = *(volatile int*)&flag[i];
                if (f) { seen = true; break; }
                if (clock64() - t0 > budget_cycles) break;
            }
            if (seen) {
                if constexpr (O == Order::Fence) __threadfence();
                if constexpr (O == Order::Volatile) r = *(volatile int*)&data[i];
                else r = data[i];
                weak += r != k + 1;
            } else {
                ++timeouts;
            }
            if (__syncthreads_or(!seen)) break;  // one lane timed out: the whole block leaves (pair_meet's
                                                 // barriers need every thread), after the others' reads
        }
    }
    if (weak) atomicAdd(&counts[0], weak);
    if (timeouts) atomicAdd(&counts[1], timeouts);
}

// Store buffering (SB): blocks 2p ("A") and 2p+1 ("B"), instance i as above, x and y zeroed:
//     A: x = 1;  r1 = y          B: y = 1;  r2 = x
// The weak outcome r1 == r2 == 0 (each thread missed the other's store, as if both stores sat
// in a store buffer while the loads ran). Only a full fence (fence.sc) or seq_cst atomics forbid
// it: release/acquire does not. ra[i], rb[i] receive r1, r2; the host counts the four outcomes.
template <Order O>
__global__ void litmusStoreBuffering(int* x, int* y, unsigned* meet, int rounds, long long budget_cycles,
                                     int* ra, int* rb, unsigned long long* counts, unsigned* sm) {
    const int pair = blockIdx.x / 2;
    const bool a = blockIdx.x % 2 == 0;
    if (threadIdx.x == 0) sm[blockIdx.x] = smid();
    int* mine = a ? x : y;
    int* other = a ? y : x;
    int* out = a ? ra : rb;
    for (int k = 0; k < rounds; ++k) {
        if (!pair_meet(meet + pair, 2u * (k + 1), budget_cycles)) {
            if (threadIdx.x == 0) atomicAdd(&counts[1], 1ull);
            return;
        }
        const size_t i = (size_t(pair) * blockDim.x + threadIdx.x) * rounds + k;
        int r;
        if constexpr (O == Order::Plain) {
            mine[i] = 1;
            r = other[i];
        } else if constexpr (O == Order::Volatile) {
            *(volatile int*)&mine[i] = 1;
            r = *(volatile int*)&other[i];
        } else if constexpr (O == Order::Fence) {
            *(volatile int*)&mine[i] = 1;
            __threadfence();
            r = *(volatile int*)&other[i];
        } else {
            dev_ref(mine[i]).store(1, cuda::memory_order_seq_cst);
            r = dev_ref(other[i]).load(cuda::memory_order_seq_cst);
        }
        out[i] = r;
    }
}

// ---------------------------------------------------------------------------------------------
// Fence cost: `iters` fences in a loop, optionally each after one store (a stream of stores in
// flight that the fence must wait for). Thread 0 of each block writes its clock64() and
// globaltimer deltas. Look at: __threadfence_block costs next to nothing (ordering within one
// SM is the L1's own order); __threadfence and __threadfence_system wait for the stores to be
// acknowledged by L2, so they cost more with stores in flight.
enum class FenceKind : int { None = 0, Block = 1, Device = 2, System = 3, AcqRelDevice = 4 };
constexpr int kFenceKinds = 5;
inline const char* fence_name(FenceKind f) {
    switch (f) {
        case FenceKind::None: return "(no fence)";
        case FenceKind::Block: return "__threadfence_block";
        case FenceKind::Device: return "__threadfence";
        case FenceKind::System: return "__threadfence_system";
        default: return "atomic_thread_fence(acq_rel,device)";
    }
}

template <FenceKind F, bool Stores>
__global__ void fenceCost(int* buf, int iters, long long* cycles, long long* ns) {
    const size_t nthreads = size_t(gridDim.x) * blockDim.x;
    const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    __syncthreads();
    const long long c0 = clock64();
    const unsigned long long t0 = globaltimer_ns();
#pragma unroll 1
    for (int i = 0; i < iters; ++i) {
        if constexpr (Stores) buf[size_t(i & 63) * nthreads + tid] = i;
        if constexpr (F == FenceKind::Block) __threadfence_block();
        else if constexpr (F == FenceKind::Device) __threadfence();
        else if constexpr (F == FenceKind::System) __threadfence_system();
        else if constexpr (F == FenceKind::AcqRelDevice)
            cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_device);
        else asm volatile("" ::: "memory");  // no instruction: without stores ptxas deletes the empty loop
    }
    const long long c1 = clock64();
    const unsigned long long t1 = globaltimer_ns();
    if (threadIdx.x == 0) {
        cycles[blockIdx.x] = c1 - c0;
        ns[blockIdx.x] = (long long)(t1 - t0);
    }
}

// ---------------------------------------------------------------------------------------------
// Memory-synchronization domains: a fence-heavy kernel (each thread: a store, then
// __threadfence(), `iters` times) timed alone and while storeStream floods the memory system
// from another stream. A __threadfence() in one domain only has to wait for the stores of its
// own domain; moving the flood to the remote domain (cudaLaunchAttributeMemSyncDomain) lets the
// fences ignore it.
// fenceHeavy<false> is the control: the same stores without the fences (how much of the slowdown
// under the flood is the fence, how much the stores' own way through a busy memory system).
template <bool Fence>
__global__ void fenceHeavy(int* buf, int iters) {
    const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
#pragma unroll 1
    for (int i = 0; i < iters; ++i) {
        buf[tid] = i;
        if constexpr (Fence) __threadfence();
        else asm volatile("" ::: "memory");
    }
}

__global__ void storeStream(int4* buf, size_t n4, int passes) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (int p = 0; p < passes; ++p)
        for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride)
            buf[i] = make_int4(p, int(i), p, int(i));
}

// ---------------------------------------------------------------------------------------------
// Barrier cost, `iters` barriers in a loop; thread 0 of each block writes clock64() and
// globaltimer deltas. Look at: __syncwarp is a few cycles, __syncthreads tens, a cluster barrier
// hundreds (it crosses SMs), grid.sync() and a kernel boundary microseconds.
__global__ void barrierSyncwarp(int iters, long long* cycles, long long* ns) {
    const long long c0 = clock64();
    const unsigned long long t0 = globaltimer_ns();
#pragma unroll 1
    for (int i = 0; i < iters; ++i) __syncwarp();
    if (threadIdx.x == 0) {
        cycles[blockIdx.x] = clock64() - c0;
        ns[blockIdx.x] = (long long)(globaltimer_ns() - t0);
    }
}

__global__ void barrierSyncthreads(int iters, long long* cycles, long long* ns) {
    __syncthreads();
    const long long c0 = clock64();
    const unsigned long long t0 = globaltimer_ns();
#pragma unroll 1
    for (int i = 0; i < iters; ++i) __syncthreads();
    if (threadIdx.x == 0) {
        cycles[blockIdx.x] = clock64() - c0;
        ns[blockIdx.x] = (long long)(globaltimer_ns() - t0);
    }
}

// Cooperative launch only. The timed loop is grid.sync() alone; then `checks` rounds check the
// barrier: every block adds 1 to `arrived` before grid.sync(), and after it all gridDim.x
// arrivals of the round must be visible. `wrong` counts the rounds where they were not.
__global__ void barrierGridSync(int iters, int checks, unsigned* arrived, unsigned* wrong, long long* cycles,
                                long long* ns) {
    cg::grid_group grid = cg::this_grid();
    grid.sync();
    const long long c0 = clock64();
    const unsigned long long t0 = globaltimer_ns();
#pragma unroll 1
    for (int i = 0; i < iters; ++i) grid.sync();
    const long long c1 = clock64();
    const unsigned long long t1 = globaltimer_ns();
    for (int i = 0; i < checks; ++i) {
        if (threadIdx.x == 0) atomicAdd(arrived, 1u);
        grid.sync();
        if (threadIdx.x == 0 && dev_ref(*arrived).load(cuda::memory_order_relaxed) < gridDim.x * (i + 1u))
            atomicAdd(wrong, 1u);
        grid.sync();  // nobody adds for round i+1 before everyone has checked round i
    }
    if (threadIdx.x == 0) {
        cycles[blockIdx.x] = c1 - c0;
        ns[blockIdx.x] = (long long)(t1 - t0);
    }
}

// Launched with a cluster dimension (sm_90). The timed loop is cluster.sync() alone; then `checks`
// rounds check it through the cluster's distributed shared memory: each block writes round i into
// its own slot, and after cluster.sync() every block must read i in every other block's slot.
__global__ void barrierClusterSync(int iters, int checks, unsigned* wrong, long long* cycles, long long* ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ int slot;
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) slot = -1;
    cluster.sync();
    const long long c0 = clock64();
    const unsigned long long t0 = globaltimer_ns();
#pragma unroll 1
    for (int i = 0; i < iters; ++i) cluster.sync();
    const long long c1 = clock64();
    const unsigned long long t1 = globaltimer_ns();
    unsigned bad = 0;
    for (int i = 0; i < checks; ++i) {
        if (threadIdx.x == 0) slot = i;
        cluster.sync();
        if (threadIdx.x < cluster.num_blocks()) bad += *cluster.map_shared_rank(&slot, threadIdx.x) != i;
        cluster.sync();  // nobody overwrites its slot before the others have read it
    }
    if (bad) atomicAdd(wrong, bad);
    if (threadIdx.x == 0) {
        cycles[blockIdx.x] = c1 - c0;
        ns[blockIdx.x] = (long long)(t1 - t0);
    }
#else
    (void)iters; (void)checks; (void)wrong;
    if (threadIdx.x == 0) { cycles[blockIdx.x] = -1; ns[blockIdx.x] = -1; }
#endif
}

__global__ void emptyKernel() {}

// ---------------------------------------------------------------------------------------------
// volatile: block 0 sets *flag after `delay_cycles`; block 1 spins until it sees it, at most
// `max_spins` times. out[0] = 1 if the flag was seen, out[1] = spins, out[2] = cycles waited.
// Three kernels so that each has its own SASS (cuobjdump -sass -fun waitFlagPlain ...):
// waitFlagPlain reads the flag with an ordinary load. Nothing in its loop writes memory, so the
// compiler may (and does) load the flag once, before the loop, and spin on that register copy:
// unbounded, the loop never ends (the seeds' missing-volatile bug); bounded, it runs out of spins
// and reports a timeout. The bound is a spin count, not a clock64() budget, on purpose: a clock
// read inside the loop is an asm volatile that happens to stop the hoisting and hide the bug.
__device__ __forceinline__ void set_flag_after(int* flag, long long delay_cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < delay_cycles) {}
    dev_ref(*flag).store(1, cuda::memory_order_release);
}

__global__ void waitFlagPlain(int* flag, long long delay_cycles, long long max_spins, long long* out) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) { set_flag_after(flag, delay_cycles); return; }
    const long long t0 = clock64();
    long long spins = 0;
    bool seen = false;
    while (!(seen = *flag != 0) && spins < max_spins) ++spins;  // PITFALL: an ordinary load
    const long long t1 = clock64();
    out[0] = seen;
    out[1] = spins;
    out[2] = t1 - t0;
}

__global__ void waitFlagVolatile(int* flag, long long delay_cycles, long long max_spins, long long* out) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) { set_flag_after(flag, delay_cycles); return; }
    const long long t0 = clock64();
    long long spins = 0;
    bool seen = false;
    while (!(seen = *(volatile int*)flag != 0) && spins < max_spins) ++spins;  // a load every time
    const long long t1 = clock64();
    out[0] = seen;
    out[1] = spins;
    out[2] = t1 - t0;
}

__global__ void waitFlagAtomic(int* flag, long long delay_cycles, long long max_spins, long long* out) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) { set_flag_after(flag, delay_cycles); return; }
    const long long t0 = clock64();
    long long spins = 0;
    bool seen = false;
    while (!(seen = dev_ref(*flag).load(cuda::memory_order_acquire) != 0) && spins < max_spins) ++spins;
    const long long t1 = clock64();
    out[0] = seen;
    out[1] = spins;
    out[2] = t1 - t0;
}

// ---------------------------------------------------------------------------------------------
// Barrier pitfalls (never in the default run): a block sum of n ints, one result per block.
// reduceBlockSmem is the correct form: out-of-range threads load 0 and every thread reaches
// every __syncthreads().
constexpr int kReduceBlock = 256;

__global__ void reduceBlockSmem(const int* in, int n, int* out) {
    __shared__ int s[kReduceBlock];
    const int tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    s[tid] = i < size_t(n) ? in[i] : 0;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();  // outside the if: the whole block reaches it
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// PITFALL (seed 004): the barrier inside `if (tid < stride)`. Threads that fail the test skip it;
// the threads inside wait for a barrier the others never reach. Undefined behaviour. What nvcc 13
// makes of it for sm_90 (SASS): the branch becomes a predicate, `@!P1 BAR.SYNC.DEFER_BLOCKING 0x0`,
// so whole warps skip the barrier, which then completes when they exit: the sums come out right
// and compute-sanitizer synccheck reported nothing on the H200. Wrong code that happens to work;
// the next compiler or GPU may hang on it.
__global__ void reduceDivergentBarrier(const int* in, int n, int* out) {
    __shared__ int s[kReduceBlock];
    const int tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    s[tid] = i < size_t(n) ? in[i] : 0;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
            __syncthreads();  // BUG: reached by `stride` threads of the block only
        }
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// PITFALL (seed 000's form): `if (tid % 2 == 0) { ...; __syncthreads(); } else { ...; __syncthreads(); }`.
// Two different barrier instructions, each reached by half of every warp. Here each thread swaps
// its value with its pair neighbour's (out[i] = in[i ^ 1]); the two halves write different arrays
// so that the compiler cannot merge the branches back into one barrier. On the H200 this HANGS
// (README, Part 2, section 6), exactly as seeds 000 and 004 warn, so
// nothing in this repository launches it: it is here to be read. syncPairSwap is the correct
// form: one barrier for all.
__global__ void syncPairSwap(const int* in, int n, int* out) {
    __shared__ int s[kReduceBlock];
    const int tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    s[tid] = i < size_t(n) ? in[i] : 0;
    __syncthreads();
    if (i < size_t(n)) out[i] = s[tid ^ 1];
}
__global__ void syncIfElse(const int* in, int n, int* out) {
    __shared__ int even[kReduceBlock / 2], odd[kReduceBlock / 2];
    const int tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    const int v = i < size_t(n) ? in[i] : 0;
    int r;
    if (tid % 2 == 0) {
        even[tid / 2] = v;
        __syncthreads();  // BUG: the odd threads wait at the other barrier below
        r = odd[tid / 2];
    } else {
        odd[tid / 2] = v;
        __syncthreads();
        r = even[tid / 2];
    }
    if (i < size_t(n)) out[i] = r;
}

// PITFALL: a barrier in a loop whose trip count differs between the threads of a warp (here 0-3
// rounds, taken from the data): after the shortest thread leaves the loop, the rest of its warp
// reaches __syncthreads() diverged. out[block] = how many rounds thread 0 saw complete. On the
// H200 it finishes, and synccheck reported nothing (README, Part 2, section 6).
__global__ void syncInDivergentLoop(const int* in, int n, int* out) {
    __shared__ int rounds_done;
    const int tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    const int rounds = i < size_t(n) ? (in[i] & 3) : 0;
    if (tid == 0) rounds_done = 0;
    __syncthreads();
    for (int r = 0; r < rounds; ++r) {
        if (tid == 0) ++rounds_done;
        __syncthreads();  // BUG: threads with fewer rounds have left the loop
    }
    if (tid == 0) out[blockIdx.x] = rounds_done;
}

// PITFALL (the seeds' `if (idx >= n) return;` before __syncthreads()): in the last block the
// threads past n have left, so the barrier is reached by part of the block, and the tree then
// adds the shared-memory words those threads never wrote (left over from earlier blocks).
__global__ void reduceEarlyReturn(const int* in, int n, int* out) {
    __shared__ int s[kReduceBlock];
    const int tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    if (i >= size_t(n)) return;  // BUG: the rest of the block still reaches __syncthreads()
    s[tid] = in[i];
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

}  // namespace distributed_smem::sync
