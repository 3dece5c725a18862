// The command-line contract of every chapter's program (CONTRIBUTING.md, "Program contract"),
// checked by running the built binaries. The programs to check come in the
// PROGRAMS environment variable (`make test` sets it).
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gtest/gtest.h>
#include "tests/program_runner.hpp"
#include "tests/require_gpu.hpp"

namespace {

struct Result { int code; std::string out; };

Result run(const std::string& cmd) {
    Result r{-1, ""};
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, got);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

using runner::programs;

using testing_gpu::gpu_required;

TEST(Programs, SomeAreListed) { EXPECT_FALSE(programs().empty()) << "PROGRAMS is empty: run through `make test`"; }

TEST(Programs, HelpExitsZeroWithUsage) {
    for (const std::string& p : programs()) {
        const Result r = run(p + " --help");
        EXPECT_EQ(r.code, 0) << p;
        EXPECT_NE(r.out.find("usage:"), std::string::npos) << p;
    }
}

TEST(Programs, BadCommandLinesExitTwoWithAMessage) {
    for (const std::string& p : programs())
        for (const char* args : {"--reps 0", "--reps -3", "--reps abc", "--reps 99999999999999999999999",
                                 "--warmup", "--no-such-flag", "--kernel no_such_kernel", "stray"}) {
            const Result r = run(p + " " + args);
            EXPECT_EQ(r.code, 2) << p << " " << args;
            EXPECT_NE(r.out.find("usage:"), std::string::npos) << p << " " << args;
        }
}

// Without a device (none here, or, on a GPU machine, none visible: CUDA_VISIBLE_DEVICES
// empty) every program is waived, exit 77; a device number past the last is exit 2.
// Whether this machine has a usable device is the CUDA runtime's answer, as the
// program reports it (nvidia-smi can list a GPU that a too-old driver cannot run
// this runtime on): a waiver there, unless REQUIRE_GPU says there is one.
TEST(Programs, NoDeviceIsWaivedAndABadDeviceIsRejected) {
    for (const std::string& p : programs()) {
        const Result none = run("CUDA_VISIBLE_DEVICES= " + p + " --reps 1 --warmup 0");
        EXPECT_EQ(none.code, 77) << p << ": " << none.out;
        EXPECT_NE(none.out.find("WAIVED"), std::string::npos) << p;
        const Result r = run(p + " --device 1023 --reps 1 --warmup 0");
        if (r.code == 77 && !gpu_required()) {
            EXPECT_NE(r.out.find("WAIVED"), std::string::npos) << p << ": " << r.out;
        } else {
            EXPECT_EQ(r.code, 2) << p << ": " << r.out;
            EXPECT_NE(r.out.find("--device 1023: only "), std::string::npos) << p << ": " << r.out;
        }
    }
}

// --kernel asking for one kernel that the GPU cannot run (a Hopper kernel, or one that needs more
// shared memory, under a smaller GPU's preset: GPU_PROFILE) ends WAIVED, exit 77: nothing that
// was asked for ran, so the run is no PASS. The same program asked for a kernel it can run passes.
// Without a device: waived (77) before any kernel. 04's --accuracy mode too.
TEST(Programs, AKernelAskedForThatIsWaivedEndsTheRunWaived) {
    struct Ask { const char *program, *profile, *waived, *runs, *size; };
    const Ask asks[] = {
        {"./matmul", "a100", "sgemmTmaWgmma", "sgemmCpAsync", "--m 64 --n 64 --k 64"},
        {"./distributed_smem", "a100", "clusterHist_c2", "histSmem", "--n 10000 --bins 1024"},
        {"./bank_conflicts", "t4", "reverseBlockOptIn", "writeRowReadRow", "--tiles 2"},
        {"./reduction", "a100", "reduceBulkCopy", "reduceVec4", "--n 100000"},
        {"./transpose", "a100", "transposeTensorMap", "transposeSwizzleVec4", "--rows 64 --cols 64"},
    };
    int asked = 0;
    for (const Ask& a : asks) {
        bool listed = false;
        for (const std::string& p : programs()) listed |= p == a.program;
        if (!listed) continue;
        ++asked;
        const std::string env = std::string("GPU_PROFILE=") + a.profile + " ", tail = std::string(" ") + a.size +
                                " --reps 1 --warmup 0";
        const Result w = run(env + a.program + " --kernel " + a.waived + tail);
        if (w.code == 77 && !gpu_required() && w.out.find("WAIVED: --kernel") == std::string::npos) continue;  // no GPU
        EXPECT_EQ(w.code, 77) << a.program << " --kernel " << a.waived << ": " << w.out;
        EXPECT_NE(w.out.find(std::string("WAIVED: --kernel ") + a.waived), std::string::npos) << w.out;
        const Result r = run(env + a.program + " --kernel " + a.runs + tail);
        EXPECT_EQ(r.code, 0) << a.program << " --kernel " << a.runs << ": " << r.out;
        EXPECT_NE(r.out.rfind("PASS"), std::string::npos) << r.out;
        if (std::string(a.program) == "./distributed_smem") {
            // Below 9.0 a fast kernel runs where one block holds the bins (C = 1, no cluster) and is
            // waived where they need a cluster.
            const std::string fast = env + a.program + " --kernel clusterHistVec4 --n 10000 --reps 1 --warmup 0 --bins ";
            const Result in_block = run(fast + "1024"), past = run(fast + "65537");
            EXPECT_EQ(in_block.code, 0) << in_block.out;
            EXPECT_NE(in_block.out.rfind("PASS"), std::string::npos) << in_block.out;
            EXPECT_EQ(past.code, 77) << past.out;
            EXPECT_NE(past.out.find("bins need a cluster"), std::string::npos) << past.out;
        }
        if (std::string(a.program) != "./reduction") continue;
        // --accuracy measures a table and checks nothing (no PASS line), with the same exit codes.
        const std::string acc = env + a.program + " --accuracy --n 100000 --kernel ";
        const Result wa = run(acc + a.waived), ra = run(acc + a.runs);
        EXPECT_EQ(wa.code, 77) << wa.out;
        EXPECT_NE(wa.out.find(std::string("WAIVED: --kernel ") + a.waived), std::string::npos) << wa.out;
        EXPECT_EQ(ra.code, 0) << ra.out;
    }
    if (asked == 0) GTEST_SKIP() << "none of the five programs is in PROGRAMS";
}

// --csv to a path that cannot be written is refused while parsing (exit 2,
// the reason on stderr), before any GPU work, and the check itself creates
// and truncates nothing. The unwritable paths do not depend on permissions
// (a test run as root may write anywhere): a missing folder, a folder where
// the file should be, a regular file used as a folder.
TEST(Programs, UnwritableCsvPathIsRefusedBeforeAnyWork) {
    char dir_template[] = "/tmp/test_programs_csv_XXXXXX";
    const char* dir = mkdtemp(dir_template);
    ASSERT_NE(dir, nullptr);
    const std::string d = dir, file = d + "/existing.csv", content = "keep me\n";
    {
        FILE* f = std::fopen(file.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs(content.c_str(), f);
        std::fclose(f);
    }
    auto read_all = [](const std::string& path) {
        std::string s;
        if (FILE* f = std::fopen(path.c_str(), "r")) {
            char buf[256];
            size_t got;
            while ((got = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, got);
            std::fclose(f);
        }
        return s;
    };
    for (const std::string& p : programs()) {
        for (const std::string& bad : {std::string("/nonexistent/dir/x.csv"), d, file + "/x.csv"}) {
            const Result r = run(p + " --csv " + bad);
            EXPECT_EQ(r.code, 2) << p << " --csv " << bad << ": " << r.out;
            EXPECT_NE(r.out.find("--csv: "), std::string::npos) << p << ": the message names the option and why";
            EXPECT_EQ(r.out.find("WAIVED"), std::string::npos) << p << ": refused only after the device check";
        }
        // A writable existing file passes the check and is left alone until the
        // results are written: a run that stops early (a bad device: exit 2 with
        // a GPU, 77 without) must not have truncated it.
        const Result r = run(p + " --csv " + file + " --device 1023 --reps 1 --warmup 0");
        EXPECT_TRUE(r.code == 2 || r.code == 77) << p << ": " << r.out;
        EXPECT_EQ(read_all(file), content) << p << ": the existing CSV was changed";
    }
    // Nothing left behind: only the file this test made.
    EXPECT_EQ(run("ls -A " + d).out, "existing.csv\n");
    std::remove(file.c_str());
    EXPECT_EQ(rmdir(dir), 0);
}

// constant_stencil writes a second file beside --csv (X.csv -> X_constant_cache.csv): a path
// that cannot take it is refused while parsing too, not after the run.
TEST(Programs, ConstantStencilChecksItsSecondCsv) {
    bool listed = false;
    for (const std::string& p : programs()) {
        if (p != "./constant_stencil") continue;
        listed = true;
        char dir_template[] = "/tmp/test_programs_cache_XXXXXX";
        const char* dir = mkdtemp(dir_template);
        ASSERT_NE(dir, nullptr);
        const std::string d = dir, folder = d + "/r_constant_cache.csv";
        ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
        const Result r = run(p + " --csv " + d + "/r.csv --n 1000 --reps 1 --warmup 0");
        EXPECT_EQ(r.code, 2) << r.out;
        EXPECT_NE(r.out.find("--csv: its second file, '" + folder + "' is a folder"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("WAIVED"), std::string::npos) << "refused before the device check: " << r.out;
        // Nothing written: only the folder this test made.
        EXPECT_EQ(run("ls -A " + d).out, "r_constant_cache.csv\n");
        EXPECT_EQ(rmdir(folder.c_str()), 0);
        EXPECT_EQ(rmdir(dir), 0);
    }
    if (!listed) GTEST_SKIP() << "constant_stencil is not in PROGRAMS";
}

// An option given twice is refused (no silent last-wins), before any GPU work:
// exit 2, the reason, the usage; a flag and an option with a value alike.
TEST(Programs, AnOptionGivenTwiceIsRefused) {
    for (const std::string& p : programs())
        for (const char* args : {"--reps 2 --reps 3", "--reps=2 --reps 2", "--warmup 1 --reps 2 --warmup 1"}) {
            const Result r = run(p + " " + args);
            EXPECT_EQ(r.code, 2) << p << " " << args << ": " << r.out;
            EXPECT_NE(r.out.find("given twice"), std::string::npos) << p << " " << args << ": " << r.out;
            EXPECT_NE(r.out.find("usage:"), std::string::npos) << p << " " << args;
            EXPECT_EQ(r.out.find("WAIVED"), std::string::npos) << p << " " << args << ": refused only after the device check";
        }
}

// A CSV in /proc cannot be created (by root neither): refused while parsing, before any GPU work.
TEST(Programs, CsvInProcIsRefusedBeforeAnyWork) {
    for (const std::string& p : programs()) {
        const Result r = run(p + " --csv /proc/x.csv");
        EXPECT_EQ(r.code, 2) << p << ": " << r.out;
        EXPECT_NE(r.out.find("--csv: "), std::string::npos) << p << ": " << r.out;
        EXPECT_EQ(r.out.find("WAIVED"), std::string::npos) << p << ": refused only after the device check";
    }
}

// distributed_smem --pitfalls with more bins than one cluster's pass counts (2^21: an H200
// counts 2^20) is refused before the pitfalls run: exit 2 and the reason, no pitfall's output.
// Without a device: waived (77); on a GPU without clusters there is no such limit (and the
// pitfalls are waived): the small run passes.
TEST(Programs, DistributedSmemPitfallsCheckTheBinsFirst) {
    bool listed = false;
    for (const std::string& p : programs()) {
        if (p != "./distributed_smem") continue;
        listed = true;
        const Result r = run(p + " --pitfalls --bins 2097152 --n 1000 --reps 1 --warmup 0");
        EXPECT_EQ(r.out.find("Pitfall:"), std::string::npos) << r.out;
        if (r.code == 77 && !gpu_required()) continue;
        if (r.out.find("pitfalls: WAIVED") != std::string::npos) {
            EXPECT_EQ(r.code, 0) << r.out;
            continue;
        }
        EXPECT_EQ(r.code, 2) << r.out;
        EXPECT_NE(r.out.find("--bins 2097152: one pass"), std::string::npos) << r.out;
    }
    if (!listed) GTEST_SKIP() << "distributed_smem is not in PROGRAMS";
}

// distributed_smem's modes are one per run: --micro (part 1's micro-benchmarks) with --sync (part 2) is refused.
TEST(Programs, DistributedSmemModesAreExclusive) {
    bool listed = false;
    for (const std::string& p : programs()) {
        if (p != "./distributed_smem") continue;
        listed = true;
        for (const char* args : {"--micro --sync", "--sync --micro"}) {
            const Result r = run(p + " " + args);
            EXPECT_EQ(r.code, 2) << p << " " << args << ": " << r.out;
            EXPECT_NE(r.out.find("cannot be combined"), std::string::npos) << p << " " << args << ": " << r.out;
            EXPECT_EQ(r.out.find("WAIVED"), std::string::npos) << p << " " << args;
        }
    }
    if (!listed) GTEST_SKIP() << "distributed_smem is not in PROGRAMS";
}

// Every program's modes, as its --help lists them: every pair of modes is refused, and so is
// every mode with every option it does not take (exit 2, the first line naming both), before
// any GPU work; every mode with each option it takes, alone, is accepted (77 here: no GPU).
TEST(Programs, ModesRefuseEachOtherAndTheOptionsTheyIgnore) {
    char dir_template[] = "/tmp/test_programs_modes_XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    const std::string csv = std::string(dir_template) + "/out.csv";
    for (const std::string& path : programs()) {
        const runner::Program p = runner::describe(path);
        EXPECT_FALSE(p.modes.empty()) << path << ": --help lists no modes";
        // A value the mode accepts: the first choice, but for --kernel under a --pitfalls mode (which
        // runs only the pitfall kernels, listed last) the last.
        auto with_value = [&](const runner::Option& o, const runner::Mode& m) {
            std::vector<std::string> a{"--" + o.name};
            if (o.kind == runner::Option::Int) a.push_back(std::to_string(o.lo));
            if (o.kind == runner::Option::Choice)
                a.push_back(o.name == "kernel" && m.name == "pitfalls" ? o.choices.back() : o.choices.at(0));
            if (o.kind == runner::Option::Path) a.push_back(csv);
            return a;
        };
        int pairs = 0, refused = 0, accepted = 0;
        for (const runner::Mode& m : p.modes) {
            const std::vector<std::string> mode_args =
                m.name.empty() ? std::vector<std::string>{} : std::vector<std::string>{"--" + m.name};
            for (const runner::Mode& other : p.modes) {
                if (m.name.empty() || other.name.empty() || m.name == other.name) continue;
                const runner::Outcome r = runner::run(path, {"--" + m.name, "--" + other.name});
                const std::string first = r.out.substr(0, r.out.find('\n'));
                EXPECT_EQ(r.code, 2) << path << " --" << m.name << " --" << other.name << ": " << r.out;
                EXPECT_NE(first.find("cannot be combined"), std::string::npos) << path << ": " << first;
                ++pairs;
            }
            for (const runner::Option& o : p.options) {
                if (p.is_mode(o.name)) continue;
                bool takes = false;
                for (const std::string& t : m.takes) takes |= t == o.name;
                std::vector<std::string> args = mode_args;
                for (const std::string& a : with_value(o, m)) args.push_back(a);
                const runner::Outcome r = runner::run(path, args);
                const std::string first = r.out.substr(0, r.out.find('\n')), line = path + " " +
                    (m.name.empty() ? "" : "--" + m.name + " ") + "--" + o.name;
                if (takes) {
                    EXPECT_TRUE(r.code == 77 || r.code == 0) << line << ": " << r.out;
                    ++accepted;
                } else {
                    EXPECT_EQ(r.code, 2) << line << ": " << r.out;
                    EXPECT_NE(first.find("--" + o.name + " does not apply to " +
                                         (m.name.empty() ? std::string("the default run") : "--" + m.name)),
                              std::string::npos) << line << ": " << first;
                    ++refused;
                }
            }
        }
        std::printf("modes %s: %zu modes, %d mode pairs refused, %d mode+option refused, %d mode+option accepted\n",
                    path.c_str(), p.modes.size(), pairs, refused, accepted);
    }
    EXPECT_EQ(runner::run("/bin/ls", {"-A", dir_template}, 10, false).out, "") << "nothing left behind";
    rmdir(dir_template);
}

// setup.sh's decisions (distribution, nvcc version, --dry-run), checked by tests/test_setup.sh
// with a fake /etc/os-release and a fake nvcc; it installs nothing.
TEST(Setup, DetectsDistributionAndNvccWithoutInstalling) {
    if (access("tests/test_setup.sh", X_OK) != 0) GTEST_SKIP() << "run from the repository root (make test)";
    const Result r = run("tests/test_setup.sh");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(" passed, 0 failed"), std::string::npos) << r.out;
}

// make bench and profile.sh name results files after common/gpu_tag.sh: one name per model and form
// factor, the committed ones (h100, h200) as they are.
TEST(Scripts, GpuTagNamesEachModelApart) {
    if (access("common/gpu_tag.sh", X_OK) != 0) GTEST_SKIP() << "run from the repository root (make test)";
    const std::vector<std::pair<std::string, std::string>> names = {
        {"NVIDIA H200", "h200"},           {"NVIDIA H100 80GB HBM3", "h100"},   {"NVIDIA H100 PCIe", "h100-pcie"},
        {"Tesla T4", "t4"},                {"NVIDIA L4", "l4"},                 {"NVIDIA A100-SXM4-80GB", "a100-sxm4"},
        {"NVIDIA GeForce RTX 3090", "rtx3090"}, {"NVIDIA GeForce RTX 4090", "rtx4090"},
        {"NVIDIA GeForce RTX 5090", "rtx5090"}, {"NVIDIA RTX A6000", "rtxa6000"},
        {"NVIDIA RTX 6000 Ada Generation", "rtx6000-ada"}};
    for (const auto& [name, tag] : names) {
        const runner::Outcome r = runner::run("common/gpu_tag.sh", {name});
        EXPECT_EQ(r.code, 0) << name << ": " << r.out;
        EXPECT_EQ(r.out, tag + "\n") << name;
    }
    // A MIG slice is named apart from its whole GPU.
    const runner::Outcome mig = runner::run("common/gpu_tag.sh", {"NVIDIA H100 80GB HBM3", "1g.10gb"});
    EXPECT_EQ(mig.out, "h100-mig-1g.10gb\n");
}

// Without a name, gpu_tag.sh names the GPU the programs run on (CUDA_VISIBLE_DEVICES' first entry;
// CUDA's device 0 is the fastest GPU, not nvidia-smi's GPU 0), and none where two models leave
// that open. A fake nvidia-smi (NVIDIA_SMI) plays three machines.
TEST(Scripts, GpuTagNamesTheGpuTheProgramsRunOn) {
    if (access("common/gpu_tag.sh", X_OK) != 0) GTEST_SKIP() << "run from the repository root (make test)";
    char dir_template[] = "/tmp/test_gpu_tag_XXXXXX";
    const char* dir = mkdtemp(dir_template);
    ASSERT_NE(dir, nullptr);
    auto machine = [&](const std::string& name, const std::string& listing) {
        const std::string path = std::string(dir) + "/" + name;
        FILE* f = std::fopen(path.c_str(), "w");
        std::fprintf(f, "#!/bin/sh\ncat <<'EOF'\n%sEOF\n", listing.c_str());
        std::fclose(f);
        chmod(path.c_str(), 0755);
        return path;
    };
    const std::string mixed = machine("mixed", "GPU 0: NVIDIA GeForce RTX 3060 (UUID: GPU-aaaa1111)\n"
                                               "GPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-bbbb2222)\n");
    const std::string twins = machine("twins", "GPU 0: NVIDIA H200 (UUID: GPU-cccc3333)\n"
                                               "GPU 1: NVIDIA H200 (UUID: GPU-dddd4444)\n");
    const std::string sliced = machine("sliced", "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-eeee5555)\n"
                                                 "  MIG 1g.10gb     Device  0: (UUID: MIG-ffff6666)\n"
                                                 "  MIG 2g.20gb     Device  1: (UUID: MIG-9999aaaa)\n");
    auto tag = [&](const std::string& smi, const std::string& env) {
        return run("env -u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER NVIDIA_SMI=" + smi + " " + env +
                   " common/gpu_tag.sh");
    };
    const Result open = tag(mixed, "");
    EXPECT_EQ(open.code, 1) << open.out;
    EXPECT_NE(open.out.find("UUID"), std::string::npos) << open.out;
    EXPECT_EQ(tag(mixed, "CUDA_VISIBLE_DEVICES=GPU-bbbb2222").out, "rtx4090\n");
    EXPECT_EQ(tag(mixed, "CUDA_VISIBLE_DEVICES=GPU-aaaa").out, "rtx3060\n");  // a UUID's prefix, as CUDA takes it
    EXPECT_EQ(tag(mixed, "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,0").out, "rtx4090\n");
    EXPECT_EQ(tag(mixed, "CUDA_DEVICE_ORDER=PCI_BUS_ID").out, "rtx3060\n");
    EXPECT_EQ(tag(mixed, "CUDA_VISIBLE_DEVICES=").code, 1);
    EXPECT_EQ(tag(mixed, "CUDA_VISIBLE_DEVICES=GPU-").code, 1);  // a prefix of both
    EXPECT_EQ(tag(mixed, "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2").code, 1);
    EXPECT_EQ(tag(twins, "").out, "h200\n");
    EXPECT_EQ(tag(twins, "CUDA_VISIBLE_DEVICES=1").out, "h200\n");
    EXPECT_EQ(tag(sliced, "").out, "h100-mig-1g.10gb\n");
    EXPECT_EQ(tag(sliced, "CUDA_VISIBLE_DEVICES=MIG-9999aaaa").out, "h100-mig-2g.20gb\n");
    EXPECT_EQ(tag(sliced, "CUDA_VISIBLE_DEVICES=MIG-").code, 1);  // both slices
    EXPECT_EQ(tag(sliced, "CUDA_VISIBLE_DEVICES=MIG-GPU-eeee5555/1/0").code, 1);  // the old form: not mapped
    for (const char* f : {"mixed", "twins", "sliced"}) std::remove((std::string(dir) + "/" + f).c_str());
    rmdir(dir);
}

}  // namespace
