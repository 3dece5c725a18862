// 05_transpose under every GPU_PROFILE preset (common/gpu.cuh): no launch asks
// for more shared memory than the preset gives one block. Every tile here is a
// static __shared__ array (no dynamic shared memory, nothing the host sizes),
// all of them small enough for every preset's block: every kernel must fit
// every preset (transposeBulkCopy and transposeTensorMap, waived below 9.0 for
// their capability, too).
// Only the compiled code knows a static size, so the test reads it on the GPU
// (cudaFuncGetAttributes).
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include "05_transpose/transpose.cuh"
#include "tests/gpu_test.hpp"

namespace {

using namespace transpose;
using testing_gpu::KernelLaunch;
using testing_gpu::kernel_launch;

// The kernels the entry `name` of kernels() launches; empty for a name not
// listed here. The float4 kernels run transposeSmemPadCoarse for shapes they
// cannot take (rows or cols not a multiple of 4).
std::vector<KernelLaunch> launches_of(const std::string& name) {
    if (name == "copyVec4") return {kernel_launch(copyVec4)};
    if (name == "copyGmem") return {kernel_launch(copyGmem)};
    if (name == "naiveGmem") return {kernel_launch(naiveGmem)};
    if (name == "naiveGmemStridedRead") return {kernel_launch(naiveGmemStridedRead)};
    if (name == "naiveGmemStridedReadLdg") return {kernel_launch(naiveGmemStridedReadLdg)};
    if (name == "transposeSmem") return {kernel_launch(transposeSmem)};
    if (name == "transposeSmemPad") return {kernel_launch(transposeSmemPad)};
    if (name == "transposeSmemUnrollPad") return {kernel_launch(transposeSmemUnrollPad)};
    if (name == "transposeSmemPadCoarse") return {kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeSwizzleVec4")
        return {kernel_launch(transposeSwizzleVec4<false>), kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeSwizzleVec4ColGrid")
        return {kernel_launch(transposeSwizzleVec4<true>), kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeSectorAligned")  // either block size, as its plan chooses
        return {kernel_launch(transposeSectorAligned<512>), kernel_launch(transposeSectorAligned<256>),
                kernel_launch(transposeSectorAligned<256, true>), kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeBulkCopy") return {kernel_launch(transposeBulkCopy<true>), kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeTensorMap")
        return {kernel_launch(transposeTensorMap<true>), kernel_launch(transposeSmemPadCoarse)};
    return {};
}

TEST(TransposeLimits, EveryKernelFitsEveryPreset) {
    SKIP_WITHOUT_GPU();
    for (const Kernel& k : kernels()) {
        const std::vector<KernelLaunch> launches = launches_of(k.name);
        ASSERT_FALSE(launches.empty()) << k.name << ": add the kernels it launches to launches_of";
        for (const common::Gpu& g : testing_gpu::preset_gpus())
            for (const KernelLaunch& l : launches)
                EXPECT_EQ(testing_gpu::launch_refusal(l, g), "") << g.profile << " " << k.name;
    }
}

}  // namespace
