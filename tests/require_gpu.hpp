// require_gpu.hpp - REQUIRE_GPU=1 (tests/run.sh, `make test REQUIRE_GPU=1`): this
// machine has a usable GPU, so a GPU test that cannot run fails instead of
// skipping. Plain C++: the g++-built tests (test_programs) use it too.
#pragma once
#include <cstdlib>
#include <cstring>

namespace testing_gpu {

inline bool gpu_required() {
    const char* e = std::getenv("REQUIRE_GPU");
    return e && *e && std::strcmp(e, "0") != 0;
}

}  // namespace testing_gpu
