// 07_shuffle under every GPU_PROFILE preset (common/gpu.cuh): no launch asks
// for more shared memory than the preset gives one block. The kernels keep
// their few shared values in static __shared__ arrays (no dynamic shared
// memory, nothing the host sizes) and none needs more than 7.5, so the
// chapter has no waiver: every kernel must fit every preset. Only the compiled
// code knows a static size, so the test reads it on the GPU.
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include "07_shuffle/shuffle.cuh"
#include "tests/gpu_test.hpp"

namespace {

using namespace shuffle;
using testing_gpu::KernelLaunch;
using testing_gpu::kernel_launch;

// matvecVec2<L, R, EVEN> for every R of kRowChoices, both alignments.
template <int L>
void add_vec2(std::vector<KernelLaunch>& v) {
    v.insert(v.end(), {kernel_launch(matvecVec2<L, 1, true>), kernel_launch(matvecVec2<L, 1, false>),
                       kernel_launch(matvecVec2<L, 2, true>), kernel_launch(matvecVec2<L, 2, false>),
                       kernel_launch(matvecVec2<L, 4, true>), kernel_launch(matvecVec2<L, 4, false>),
                       kernel_launch(matvecVec2<L, 8, true>), kernel_launch(matvecVec2<L, 8, false>)});
}

// Every kernel launch_shape can run (what matvecShuffleTuned picks from).
std::vector<KernelLaunch> every_shape() {
    std::vector<KernelLaunch> v;
    add_vec2<1>(v), add_vec2<2>(v), add_vec2<4>(v), add_vec2<8>(v), add_vec2<16>(v), add_vec2<32>(v);
    v.insert(v.end(), {kernel_launch(matvecBlockRow<true>), kernel_launch(matvecBlockRow<false>),
                       kernel_launch(matvecSplitRow<true>), kernel_launch(matvecSplitRow<false>),
                       kernel_launch(matvecSplitRowSum), kernel_launch(matvecThinRows<1>),
                       kernel_launch(matvecThinRows<2>), kernel_launch(matvecThinRows<3>)});
    return v;
}

// The kernels the entry `name` of kernels() or pitfalls() launches; empty for
// a name not listed here.
std::vector<KernelLaunch> launches_of(const std::string& name) {
    if (name == "matvecGmemCache") return {kernel_launch(matvecGmemCache)};
    if (name == "matvecSmem") return {kernel_launch(matvecSmem)};
    if (name == "matvecShuffle") return {kernel_launch(matvecShuffle)};
    if (name == "matvecShuffleVec2")
        return {kernel_launch(matvecVec2<32, 1, true>), kernel_launch(matvecVec2<32, 1, false>)};
    if (name == "matvecShuffleTuned") return every_shape();
    if (name == "matvecSmemNoSyncwarp") return {kernel_launch(matvecSmemNoSyncwarp)};
    return {};
}

TEST(ShuffleLimits, EveryMatvecKernelFitsEveryPreset) {
    SKIP_WITHOUT_GPU();
    for (const std::vector<MatvecKernel>* list : {&kernels(), &pitfalls()})
        for (const MatvecKernel& k : *list) {
            const std::vector<KernelLaunch> launches = launches_of(k.name);
            ASSERT_FALSE(launches.empty()) << k.name << ": add the kernels it launches to launches_of";
            for (const common::Gpu& g : testing_gpu::preset_gpus())
                for (const KernelLaunch& l : launches)
                    EXPECT_EQ(testing_gpu::launch_refusal(l, g), "") << g.profile << " " << k.name;
        }
}

// The primitives' demos and probe, and the building blocks (steps 1-9), for the types the program runs.
template <class T>
void add_blocks(std::vector<KernelLaunch>& v) {
    v.insert(v.end(), {kernel_launch(warpScans<T>), kernel_launch(reduceShuffle<T>), kernel_launch(scanTiles<T>),
                       kernel_launch(shuffleProbe<Op::Idx, T>), kernel_launch(shuffleProbe<Op::Up, T>),
                       kernel_launch(shuffleProbe<Op::Down, T>), kernel_launch(shuffleProbe<Op::Xor, T>)});
}

TEST(ShuffleLimits, EveryBuildingBlockFitsEveryPreset) {
    SKIP_WITHOUT_GPU();
    std::vector<KernelLaunch> v = {kernel_launch(bcast),     kernel_launch(groupBcast), kernel_launch(scan4),
                                   kernel_launch(scan4Width), kernel_launch(warpReduce), kernel_launch(xorTable),
                                   kernel_launch(reduceDownVsXor)};
    add_blocks<int>(v), add_blocks<long long>(v), add_blocks<float>(v), add_blocks<double>(v);
    for (const common::Gpu& g : testing_gpu::preset_gpus())
        for (size_t i = 0; i < v.size(); ++i)
            EXPECT_EQ(testing_gpu::launch_refusal(v[i], g), "") << g.profile << ", kernel " << i << " of the list";
}

}  // namespace
