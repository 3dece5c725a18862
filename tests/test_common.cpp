// The host-side helpers of common/ (no GPU needed), and the timer's one rule (a GPU's events).
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>
#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <thread>
#include <gtest/gtest.h>
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/gpu_profile.cuh"
#include "common/kernel_list.hpp"
#include "common/launch.cuh"
#include "common/report.hpp"
#include "common/stats.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"
#include "tests/gpu_test.hpp"

namespace {

struct Parsed {
    std::string error;
    int64_t n = 7;
    std::string type = "int";
    bool toy = false;
    bool help = false;
};

Parsed parse(std::vector<const char*> args) {
    Parsed p;
    common::Cli cli("prog", "test program");
    cli.option("n", &p.n, "size", 1, 1000).option("type", &p.type, "type", {"int", "float"}).flag("toy", &p.toy, "toy");
    args.insert(args.begin(), "prog");
    p.error = cli.parse(int(args.size()), args.data());
    p.help = cli.help_requested();
    return p;
}

TEST(Cli, Defaults) {
    const Parsed p = parse({});
    EXPECT_EQ(p.error, "");
    EXPECT_EQ(p.n, 7);
    EXPECT_EQ(p.type, "int");
    EXPECT_FALSE(p.toy);
}

TEST(Cli, SpaceEqualsAndPowerOfTwo) {
    EXPECT_EQ(parse({"--n", "12"}).n, 12);
    EXPECT_EQ(parse({"--n=13"}).n, 13);
    EXPECT_EQ(parse({"--n", "2^9"}).n, 512);
    EXPECT_EQ(parse({"--type", "float", "--toy"}).type, "float");
    EXPECT_TRUE(parse({"--toy"}).toy);
    EXPECT_TRUE(parse({"--help"}).help);
}

TEST(Cli, RejectsBadValuesWithAReason) {
    for (auto args : std::vector<std::vector<const char*>>{
             {"--n", "0"},                       // below the range
             {"--n", "-5"},                      // negative
             {"--n", "1001"},                    // above the range
             {"--n", "abc"},                     // not a number
             {"--n", "12abc"},                   // trailing junk
             {"--n", ""},                        // empty
             {"--n", "99999999999999999999999"}, // overflows int64
             {"--n", "2^63"},                    // overflows int64
             {"--n", "1e3"},                     // no floating point
             {"--n"},                            // missing value
             {"--type", "double"},               // not a choice
             {"--toy=1"},                        // a flag takes no value
             {"--bogus"},                        // unknown option
             {"stray"}}) {                       // positional argument
        const Parsed p = parse(args);
        EXPECT_NE(p.error, "") << "accepted: " << args[0] << " " << (args.size() > 1 ? args[1] : "");
    }
    EXPECT_NE(parse({"--n", "0"}).error.find("--n"), std::string::npos) << "the message names the option";
}

// A free-text option's value taken from the next word is never an option: `--csv --sweep`
// forgot the value. Given with `=`, or as a path, such a name is still taken.
TEST(Cli, TextValueIsNotTheNextOption) {
    std::string label;
    bool toy = false;
    auto run = [&](std::vector<const char*> args) {
        common::Cli cli("prog", "test program");
        cli.option("label", &label, "free text").flag("toy", &toy, "toy");
        args.insert(args.begin(), "prog");
        return cli.parse(int(args.size()), args.data());
    };
    EXPECT_NE(run({"--label", "--toy"}).find("--label needs a value, not the option '--toy'"), std::string::npos);
    EXPECT_EQ(run({"--label=--toy"}), "");
    EXPECT_EQ(label, "--toy");
    EXPECT_EQ(run({"--label", "./--toy"}), "");
    EXPECT_EQ(run({"--label", "-"}), "");
    EXPECT_EQ(run({"--label", "--"}), "") << "'--' alone is a name, not an option";
}

TEST(Cli, RefusesAnOptionGivenTwice) {
    EXPECT_NE(parse({"--n", "64", "--n", "128"}).error.find("given twice"), std::string::npos);
    EXPECT_NE(parse({"--n=64", "--n", "64"}).error, "") << "even with the same value";
    EXPECT_NE(parse({"--toy", "--toy"}).error, "");
}

TEST(Cli, ModesAreExclusiveAndTakeOnlyTheirOptions) {
    bool a = false, b = false;
    int64_t n = 1, k = 1;
    common::Cli cli("prog", "modes");
    cli.flag("a", &a, "mode a").flag("b", &b, "mode b").option("n", &n, "size", 1, 9).option("k", &k, "k", 1, 9);
    cli.mode("", {"n", "k"}).mode("a", {"k"}).mode("b", {});
    auto parse = [&](std::vector<const char*> args) {
        args.insert(args.begin(), "prog");
        return cli.parse(int(args.size()), args.data());
    };
    EXPECT_NE(parse({"--a", "--b"}).find("--a and --b cannot be combined"), std::string::npos);
    EXPECT_EQ(parse({"--a", "--k", "2"}), "");
    EXPECT_EQ(parse({"--n", "2", "--k", "2"}), "");
    EXPECT_EQ(parse({"--a", "--n", "2"}), "--n does not apply to --a (it goes with: default)");
    EXPECT_EQ(parse({"--k", "2", "--b"}), "--k does not apply to --b (it goes with: default, --a)");
    EXPECT_NE(cli.usage().find("  --a: --k\n"), std::string::npos) << cli.usage();
    EXPECT_NE(cli.usage().find("  default: --n --k\n"), std::string::npos) << cli.usage();
}

TEST(Cli, OutputFileMustBeARegularFileOrANewPath) {
    EXPECT_EQ(common::output_file_problem("/tmp"), "'/tmp' is a folder");
    EXPECT_NE(common::output_file_problem("/no-such-folder/x.csv"), "");
    EXPECT_NE(common::output_file_problem("/proc/x.csv"), "") << "access() passes this as root; a create does not";
    EXPECT_NE(common::output_file_problem("/dev/full").find("not a regular file"), std::string::npos);
    EXPECT_NE(common::output_file_problem("/dev/null").find("not a regular file"), std::string::npos);
    const std::string fresh = "/tmp/test_common_output_" + std::to_string(::getpid()) + ".csv";
    ASSERT_EQ(mkfifo(fresh.c_str(), 0600), 0);
    EXPECT_NE(common::output_file_problem(fresh).find("not a regular file"), std::string::npos) << "never opened";
    unlink(fresh.c_str());
    EXPECT_EQ(common::output_file_problem(fresh), "");
    EXPECT_NE(access(fresh.c_str(), F_OK), 0) << "a file the check created is removed again";
}

// The file appears whole or not at all: a write that fails (here the file-size limit, as a full
// disk would) reports why and leaves the old file as it was, with no temporary file beside it.
TEST(Report, WriteFileAtomicallyKeepsTheOldFileOnAFailedWrite) {
    char dir_template[] = "/tmp/test_common_write_XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    const std::string dir = dir_template, path = dir + "/r.csv";
    const mode_t mask = umask(022);  // the mode checked below: 0666 less this
    ASSERT_EQ(common::write_file_atomically(path, "old\n"), "");
    const pid_t pid = fork();
    if (pid == 0) {  // in a child: the limit and the signal it raises stay there
        signal(SIGXFSZ, SIG_IGN);
        const rlimit small = {100, 100};
        setrlimit(RLIMIT_FSIZE, &small);
        const std::string err = common::write_file_atomically(path, std::string(1000, 'x'));
        _exit(err.find("cannot write " + path + ": File too large") == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the error names the file and the reason";
    std::string got(16, '\0');
    FILE* f = std::fopen(path.c_str(), "r");
    ASSERT_NE(f, nullptr);
    got.resize(std::fread(&got[0], 1, got.size(), f));
    std::fclose(f);
    EXPECT_EQ(got, "old\n");
    ASSERT_EQ(common::write_file_atomically(path, "new\n"), "");
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 4);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    umask(mask);
    unlink(path.c_str());
    EXPECT_EQ(rmdir(dir.c_str()), 0) << "nothing but the file in the folder";
}

// The temporary file's name is the first free one: a file left with the name tried first (here
// made on purpose) is stepped past and left alone.
TEST(Report, WriteFileAtomicallyStepsPastATakenTemporaryName) {
    char dir_template[] = "/tmp/test_common_taken_XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    const std::string dir = dir_template, path = dir + "/r.csv";
    const std::string taken = path + "." + std::to_string(getpid()) + ".0.tmp";
    FILE* f = std::fopen(taken.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("someone else's\n", f);
    std::fclose(f);
    ASSERT_EQ(common::write_file_atomically(path, "new\n"), "");
    for (const std::string& p : {path, taken}) {
        std::string got(32, '\0');
        f = std::fopen(p.c_str(), "r");
        ASSERT_NE(f, nullptr);
        got.resize(std::fread(&got[0], 1, got.size(), f));
        std::fclose(f);
        EXPECT_EQ(got, p == path ? "new\n" : "someone else's\n") << p;
        unlink(p.c_str());
    }
    EXPECT_EQ(rmdir(dir.c_str()), 0) << "no other file was left in the folder";
}

// A results path that is a symbolic link stays one (the file it points to is replaced, or made);
// an existing file keeps its mode, a new one gets 0666 less the umask.
TEST(Report, WriteFileAtomicallyFollowsLinksAndKeepsModes) {
    char dir_template[] = "/tmp/test_common_link_XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    const std::string dir = dir_template, file = dir + "/real.csv", link = dir + "/link.csv";
    const mode_t mask = umask(027);
    ASSERT_EQ(common::write_file_atomically(file, "a\n"), "");
    struct stat st;
    ASSERT_EQ(stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u) << "0666 less the umask";
    ASSERT_EQ(chmod(file.c_str(), 0604), 0);
    ASSERT_EQ(symlink("real.csv", link.c_str()), 0);
    ASSERT_EQ(common::write_file_atomically(link, "bb\n"), "");
    umask(mask);
    ASSERT_EQ(lstat(link.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link is still a link";
    ASSERT_EQ(stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 3) << "its target has the new text";
    EXPECT_EQ(st.st_mode & 0777, 0604u) << "and its mode";
    // A link to a file not made yet (into a subfolder, through a second link) is followed
    // too: the file is made where the last link points, as a shell's > would make it.
    const std::string sub = dir + "/sub", fresh = sub + "/fresh.csv", dangling = dir + "/dangling.csv",
                      chain = dir + "/chain.csv";
    ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
    ASSERT_EQ(symlink("sub/fresh.csv", dangling.c_str()), 0);
    ASSERT_EQ(symlink(dangling.c_str(), chain.c_str()), 0);
    EXPECT_EQ(common::output_file_problem(chain), "");
    ASSERT_EQ(common::write_file_atomically(chain, "ccc\n"), "");
    ASSERT_EQ(lstat(dangling.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the links stay links";
    ASSERT_EQ(stat(fresh.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 4) << "and the file they point to is made";
    unlink(chain.c_str());
    unlink(dangling.c_str());
    unlink(fresh.c_str());
    EXPECT_EQ(rmdir(sub.c_str()), 0) << "nothing else in the subfolder";
    // A loop of links is refused while parsing, with the reason.
    ASSERT_EQ(symlink("loop_b.csv", (dir + "/loop_a.csv").c_str()), 0);
    ASSERT_EQ(symlink("loop_a.csv", (dir + "/loop_b.csv").c_str()), 0);
    EXPECT_NE(common::output_file_problem(dir + "/loop_a.csv").find("symbolic links"), std::string::npos);
    unlink((dir + "/loop_a.csv").c_str());
    unlink((dir + "/loop_b.csv").c_str());
    unlink(link.c_str());
    unlink(file.c_str());
    EXPECT_EQ(rmdir(dir.c_str()), 0) << "nothing else in the folder";
}

struct FakeKernel {
    const char* name;
    const char* what;
};

TEST(KernelList, FindByNameAndRefusePitfalls) {
    const std::vector<FakeKernel> kernels = {{"first", "the first step"}, {"second", "the second"}};
    const std::vector<FakeKernel> pitfalls = {{"broken", "a seed's bug"}};
    EXPECT_EQ(common::find_kernel(kernels, "second"), &kernels[1]);
    EXPECT_EQ(common::find_kernel(kernels, "broken"), nullptr);
    EXPECT_EQ(&common::kernel_named(kernels, "first"), &kernels[0]);
    EXPECT_THROW(common::kernel_named(kernels, "broken"), std::invalid_argument);  // reported, never an exit
    EXPECT_EQ(common::kernel_names(kernels, pitfalls), (std::vector<std::string>{"first", "second", "broken"}));
    const std::string text = common::kernel_list_text(kernels, pitfalls);
    EXPECT_LT(text.find("first"), text.find("Pitfalls"));
    EXPECT_LT(text.find("Pitfalls"), text.find("broken"));
    EXPECT_EQ(common::pitfall_refusal("broken", pitfalls, true), "");
    EXPECT_EQ(common::pitfall_refusal("first", pitfalls, false), "");
    EXPECT_NE(common::pitfall_refusal("broken", pitfalls, false).find("--pitfalls"), std::string::npos);
}

TEST(Cli, UsageListsEveryOptionWithItsDefault) {
    int64_t n = 5;
    common::Cli cli("prog", "summary line");
    cli.option("n", &n, "how many", 1, 10);
    const std::string u = cli.usage();
    EXPECT_NE(u.find("usage: prog"), std::string::npos);
    EXPECT_NE(u.find("--n N"), std::string::npos);
    EXPECT_NE(u.find("(default 5)"), std::string::npos);
    const char* argv[] = {"prog", "--n", "7"};
    EXPECT_EQ(cli.parse(3, argv), "");
    EXPECT_EQ(n, 7);
    EXPECT_NE(cli.usage().find("(default 5)"), std::string::npos) << "after a parse: the default, not the value";
}

TEST(Stats, Median) {
    EXPECT_DOUBLE_EQ(common::median({3, 1, 2}), 2);
    EXPECT_DOUBLE_EQ(common::median({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(common::median({1, 100, 1, 1, 1}), 1);  // an outlier does not move it
    EXPECT_THROW(common::median({}), std::invalid_argument);
}

TEST(Stats, MulFitsAndHumanBytes) {
    uint64_t r = 0;
    EXPECT_TRUE(common::mul_fits(1ull << 31, 1ull << 31, &r));
    EXPECT_EQ(r, 1ull << 62);
    EXPECT_FALSE(common::mul_fits(1ull << 32, 1ull << 32, &r));
    EXPECT_EQ(common::human_bytes(512), "512 B");
    EXPECT_EQ(common::human_bytes(1536), "1.5 KiB");
    EXPECT_EQ(common::human_bytes(2.0 * 1073741824.0), "2.0 GiB");
}

TEST(Data, SeededUniformIsReproducibleAndInRange) {
    std::vector<float> a(10000), b(10000), c(10000);
    common::fill_uniform(a.data(), a.size(), 42, -1.0f, 1.0f);
    common::fill_uniform(b.data(), b.size(), 42, -1.0f, 1.0f);
    common::fill_uniform(c.data(), c.size(), 43, -1.0f, 1.0f);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    float lo = 1, hi = -1;
    double sum = 0;
    for (float x : a) { lo = std::min(lo, x); hi = std::max(hi, x); sum += x; }
    EXPECT_GE(lo, -1.0f);
    EXPECT_LT(hi, 1.0f);
    EXPECT_LT(lo, -0.99f);  // it covers the range ...
    EXPECT_GT(hi, 0.99f);
    EXPECT_NEAR(sum / a.size(), 0.0, 0.05);  // ... evenly
    // The top end stays open where rounding to float would reach it: in [1, 1 + 2^-23) about
    // half the draws round up to hi.
    const float one = 1.0f, next = std::nextafter(one, 2.0f);
    std::vector<float> narrow(1000);
    common::fill_uniform(narrow.data(), narrow.size(), 7, one, next);
    for (float x : narrow) ASSERT_EQ(x, one);
}

TEST(Data, IntegersCoverTheClosedRange) {
    std::vector<int> v(5000);
    common::fill_uniform(v.data(), v.size(), 1, -3, 3);
    std::vector<int> seen(7, 0);
    for (int x : v) {
        ASSERT_GE(x, -3);
        ASSERT_LE(x, 3);
        ++seen[x + 3];
    }
    for (int s : seen) EXPECT_GT(s, 500);
}

TEST(Verify, ExactToleranceAndNaN) {
    const float ref[4] = {1, 2, 3, 4};
    const float same[4] = {1, 2, 3, 4};
    EXPECT_TRUE(common::compare(same, ref, 4).pass());

    const float off[4] = {1, 2, 3.001f, 4};
    const common::Comparison c = common::compare(off, ref, 4);
    EXPECT_FALSE(c.pass());
    EXPECT_EQ(c.mismatches, 1u);
    EXPECT_EQ(c.first_bad, 2u);
    EXPECT_NEAR(c.max_abs_err, 0.001, 1e-6);
    EXPECT_TRUE(common::compare(off, ref, 4, 0.0, 1e-3).pass());  // within a relative tolerance

    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float poisoned[4] = {1, nan, 3, 4};
    EXPECT_FALSE(common::compare(poisoned, ref, 4, 1e30, 1e30).pass()) << "NaN never passes";
    EXPECT_TRUE(std::isinf(common::compare(poisoned, ref, 4).max_abs_err)) << "and its error column says so";

    // An infinity matches only itself, whatever the tolerance.
    const float inf = std::numeric_limits<float>::infinity();
    const float ref_inf[2] = {inf, -inf};
    const float got_inf[2] = {inf, -inf}, got_flipped[2] = {-inf, -inf}, got_finite[2] = {inf, 1};
    EXPECT_TRUE(common::compare(got_inf, ref_inf, 2).pass());
    EXPECT_TRUE(common::compare(got_inf, ref_inf, 2, 0.0, 1e-3).pass());
    EXPECT_FALSE(common::compare(got_flipped, ref_inf, 2, 0.0, 1e-3).pass());
    EXPECT_FALSE(common::compare(got_finite, ref_inf, 2, 1e30, 1e30).pass());
    EXPECT_FALSE(common::compare(ref_inf, ref, 2, 1e30, 1e30).pass()) << "an overflowed result fails";
    EXPECT_NE(common::describe(c, off, ref).find("index 2"), std::string::npos);
}

TEST(Report, CsvHasMetadataHeaderAndQuotesCommas) {
    common::Report r("GB/s", "copy");
    testing::internal::CaptureStdout();  // add() prints each row as it comes
    r.add({"8x8", 64, "k1", "grid(1,2) block(32,16)", 0.5, 100.0, 50.0, 0.0, "PASS", {}});
    r.add({"8x8", 64, "k2", "-", 1.0, 50.0, -1, 0.0, "FAIL", {}});
    const std::string printed = testing::internal::GetCapturedStdout();
    EXPECT_NE(printed.find("k1"), std::string::npos);
    EXPECT_NE(printed.find("50.0%"), std::string::npos);
    const std::string csv = r.csv({{"gpu", "Test GPU"}, {"date", "today"}});
    EXPECT_EQ(csv.rfind("# gpu: Test GPU\n# date: today\n", 0), 0u);
    EXPECT_NE(csv.find("problem,size,kernel,launch,ms,GB_per_s,pct_of_copy,max_err,result\n"), std::string::npos);
    EXPECT_NE(csv.find("8x8,64,k1,\"grid(1,2) block(32,16)\",0.50000,100.00,50.00,0,PASS\n"), std::string::npos);
    EXPECT_NE(csv.find("8x8,64,k2,-,1.00000,50.00,,0,FAIL\n"), std::string::npos);
    EXPECT_FALSE(r.all_pass());
    // A line break in a metadata value would end its comment line (the rest read as the header).
    const std::string broken = r.csv({{"command", "./prog --csv 'a\nb.csv'\r"}});
    EXPECT_EQ(broken.rfind("# command: ./prog --csv 'a b.csv' \nproblem,", 0), 0u);
    EXPECT_EQ(common::csv_field("a\rb"), "\"a\rb\"");
}

// The one launch column every chapter prints.
TEST(Launch, LaunchStringShapesSmemAndClusters) {
    EXPECT_EQ(common::launch_string(128, 256), "grid(128) block(256)");
    EXPECT_EQ(common::launch_string(dim3(64, 64), dim3(32, 8)), "grid(64,64) block(32,8)");
    EXPECT_EQ(common::launch_string(dim3(4, 4, 3), dim3(16, 16)), "grid(4,4,3) block(256)");
    EXPECT_EQ(common::launch_string(132, 544, 128 * 1024), "grid(132) block(544) smem 128K");
    EXPECT_EQ(common::launch_string(132, 544, 128 * 1024 + 64), "grid(132) block(544) smem 129K") << "rounded up";
    EXPECT_EQ(common::launch_string(1, 128, 512), "grid(1) block(128) smem 1K");
    EXPECT_EQ(common::launch_string(120, 512, 194 * 1024, 4), "grid(120) block(512) smem 194K cluster 4");
    EXPECT_EQ(common::launch_string(16, 512, 0, 16), "grid(16) block(512) cluster 16");
    EXPECT_EQ(common::launch_string(1, 512, 16 * 1024, 1), "grid(1) block(512) smem 16K cluster 1")
        << "a cluster launch of one block is still a cluster launch";
}

// The preset called `name`.
const common::GpuPreset& testing_preset(const char* name) {
    for (const common::GpuPreset& p : common::kGpuPresets)
        if (std::string(name) == p.name) return p;
    throw std::invalid_argument(name);
}

// GPU_PROFILE on an H200's limits (no GPU needed: apply_gpu_profile takes the real limits).
common::Gpu h200() { return common::gpu_of(testing_gpu::kH200); }

TEST(GpuProfile, PresetsLowerTheLimitsAndKeepTheRealCapability) {
    common::Gpu g = h200();
    ASSERT_EQ(common::apply_gpu_profile("t4", g), "");
    EXPECT_EQ(g.cc, 75);
    EXPECT_EQ(g.real_cc, 90);
    EXPECT_EQ(g.sms, 40);
    EXPECT_EQ(g.smem_per_block, 64 * common::kKiB);
    EXPECT_EQ(g.smem_per_sm, 64 * common::kKiB);
    EXPECT_EQ(g.l2_bytes, 4 * common::kMiB);
    EXPECT_EQ(g.max_cluster, 0);
    EXPECT_EQ(g.threads_per_sm, 1024);
    EXPECT_EQ(g.blocks_per_sm, 16);
    EXPECT_EQ(g.capped, "");
    EXPECT_FALSE(g.has(90));
    EXPECT_TRUE(g.has(75));
    EXPECT_FALSE(g.sm90a());
    EXPECT_EQ(g.profile, "t4");
    for (const common::GpuPreset& p : common::kGpuPresets) {
        common::Gpu q = h200();
        EXPECT_EQ(common::apply_gpu_profile(p.name, q), "") << p.name;
        EXPECT_LE(q.sms, 132) << p.name;
        EXPECT_LE(q.smem_per_block, q.smem_per_sm) << p.name;
        EXPECT_EQ(q.max_cluster > 0, q.cc >= 90) << p.name;
    }
}

// The recorded command line runs again as it ran: an argument a shell would
// split or expand is quoted, the usual ones are left as they are.
TEST(Cli, CommandLineIsQuotedForTheShell) {
    EXPECT_EQ(common::shell_quote("--csv"), "--csv");
    EXPECT_EQ(common::shell_quote("01_matmul/results/h200.csv"), "01_matmul/results/h200.csv");
    EXPECT_EQ(common::shell_quote("--n=100,000"), "--n=100,000");
    EXPECT_EQ(common::shell_quote("my results.csv"), "'my results.csv'");
    EXPECT_EQ(common::shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(common::shell_quote(""), "''");
    EXPECT_EQ(common::shell_quote("$HOME"), "'$HOME'");
    common::Cli cli("prog", "test");
    std::string csv;
    cli.option("csv", &csv, "a file");
    const char* argv[] = {"./prog", "--csv", "a b.csv"};
    ASSERT_EQ(cli.parse(3, argv), "");
    EXPECT_EQ(cli.command_line(), "./prog --csv 'a b.csv'");
}

// A size the host cannot hold is refused with exit 2 before anything is
// allocated (the programs call it with their inputs' and references' bytes).
TEST(HostMemory, MoreThanIsAvailableIsRefused) {
    const size_t avail = common::available_host_memory();
    if (avail == 0) GTEST_SKIP() << "no /proc/meminfo here";
    EXPECT_GT(avail, size_t(1) << 20);
    common::require_host_memory("test", 1024.0);  // returns
    EXPECT_EXIT(common::require_host_memory("test", 2.0 * double(avail)), testing::ExitedWithCode(2),
                "test: needs .* of host memory, .* is available");
}

// The rule for slow kernels counts the warm-up too, and cuts it first: `--reps 1 --warmup
// 100000` takes the budget, not minutes a kernel.
TEST(Timer, PlanRepsCountsTheWarmupAndCutsItFirst) {
    auto same = [](common::RepsPlan p, int warmup, int reps, bool reduced) {
        return p.warmup == warmup && p.reps == reps && p.reduced == reduced;
    };
    EXPECT_TRUE(same(common::plan_reps(1.0, 5, 20), 5, 20, false));
    EXPECT_TRUE(same(common::plan_reps(0.0, 5, 20), 5, 20, false));
    EXPECT_TRUE(same(common::plan_reps(1.0, 100000, 1), 1499, 1, false));  // 1500 launches fit
    EXPECT_TRUE(same(common::plan_reps(70.0, 5, 20), 1, 20, false));       // 21 fit
    EXPECT_TRUE(same(common::plan_reps(200.0, 1, 10), 0, 7, true));        // 7 fit
    EXPECT_TRUE(same(common::plan_reps(2000.0, 5, 20), 0, 1, true));       // none fits: one
}

// A second call is timed only where the first would cut the repetitions, and then it decides.
TEST(Timer, PlanRepsAfterFirstTimesAgainOnlyWhereTheFirstWouldCut) {
    int again = 0;
    auto fast = [&] { ++again; return 1.0; };
    const common::RepsPlan quick = common::plan_reps_after_first(1.0, 5, 20, fast);
    EXPECT_EQ(again, 0);
    EXPECT_FALSE(quick.reduced);
    const common::RepsPlan slow_first = common::plan_reps_after_first(200.0, 1, 10, fast);
    EXPECT_EQ(again, 1);
    EXPECT_FALSE(slow_first.reduced);
    EXPECT_EQ(slow_first.reps, 10);
    const common::RepsPlan slow = common::plan_reps_after_first(200.0, 1, 10, [&] { ++again; return 200.0; });
    EXPECT_EQ(again, 2);
    EXPECT_TRUE(slow.reduced);
    EXPECT_EQ(slow.reps, 7);
}

// The rule for slow kernels cuts the repetitions only for a launch that is
// slow every time: a first launch slowed by one-time work (here a host wait
// inside it, as a module's lazy load would be) is timed again before it cuts.
TEST(Timer, OneSlowFirstLaunchDoesNotCutTheRepetitions) {
    SKIP_WITHOUT_GPU();
    int launches = 0;
    auto launch = [&] {
        if (launches++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    };
    const double once_ms = common::time_once_ms(launch);
    ASSERT_TRUE(common::plan_reps(once_ms, 1, 10).reduced);  // 200 ms x 10 > the 1500-ms budget
    const common::Timing t = common::time_kernel(launch, once_ms, 1, 10);
    EXPECT_FALSE(t.plan.reduced);
    EXPECT_EQ(t.plan.reps, 10);
    EXPECT_EQ(launches, 1 + 1 + 1 + 10);  // first, again, warm-up, timed
    EXPECT_LT(t.ms, 50.0);
    // A launch slow every time is still cut: 200 ms x 10 leaves 7, no warm-up.
    int slow = 0;
    auto always_slow = [&] {
        ++slow;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    };
    const common::Timing s = common::time_kernel(always_slow, common::time_once_ms(always_slow), 1, 10);
    EXPECT_TRUE(s.plan.reduced);
    EXPECT_EQ(s.plan.warmup, 0);
    EXPECT_EQ(s.plan.reps, 7);
    EXPECT_EQ(slow, 1 + 1 + 7);
}

TEST(GpuProfile, PresetsAreCappedAtTheRealGpu) {
    common::Gpu g = h200();
    ASSERT_EQ(common::apply_gpu_profile("rtx5090", g), "");  // 170 SMs, 96 MiB of L2 on an H200
    EXPECT_EQ(g.sms, 132);
    EXPECT_EQ(g.l2_bytes, 60 * common::kMiB);
    EXPECT_EQ(g.cc, 120);
    EXPECT_TRUE(g.has(90)) << "a 12.0 profile on a 9.0 GPU has what 9.0 has";
    EXPECT_FALSE(g.has(100)) << "but not what the real GPU lacks";
    EXPECT_FALSE(g.sm90a());
    EXPECT_EQ(g.max_cluster, 8);
    EXPECT_NE(g.capped.find("SMs"), std::string::npos) << g.capped;
    EXPECT_NE(g.capped.find("L2"), std::string::npos) << g.capped;
    common::Gpu small =
        common::gpu_of({"", 75, 40, 64 * common::kKiB, 64 * common::kKiB, 4 * common::kMiB, 0, 1024, 16});
    ASSERT_EQ(common::apply_gpu_profile("h100", small), "");  // a preset larger than a T4
    EXPECT_EQ(small.cc, 90) << "the capability is the profile's";
    EXPECT_FALSE(small.has(90)) << "features the real GPU lacks stay waived";
    EXPECT_EQ(small.smem_per_block, 64 * common::kKiB);
    EXPECT_EQ(small.max_cluster, 0);
    EXPECT_EQ(small.threads_per_sm, 1024);
    EXPECT_EQ(small.blocks_per_sm, 16);
    EXPECT_NE(small.capped.find("threads per SM"), std::string::npos) << small.capped;
}

TEST(GpuProfile, ExplicitProfilesLowerOrAreRefused) {
    common::Gpu g = h200();
    ASSERT_EQ(common::apply_gpu_profile("cc=8.6,sms=84,smem_block=101376,smem_sm=102400,l2=6291456", g), "");
    EXPECT_EQ(g.cc, 86);
    EXPECT_EQ(g.sms, 84);
    EXPECT_EQ(g.smem_per_block, 101376u);
    EXPECT_EQ(g.smem_per_sm, 102400u);
    EXPECT_EQ(g.l2_bytes, 6291456u);
    EXPECT_EQ(g.max_cluster, 0);
    common::Gpu part = h200();
    ASSERT_EQ(common::apply_gpu_profile("sms=66", part), "");  // unnamed limits stay the GPU's
    EXPECT_EQ(part.sms, 66);
    EXPECT_EQ(part.cc, 90);
    EXPECT_EQ(part.smem_per_block, 227 * common::kKiB);
    EXPECT_EQ(part.threads_per_sm, 2048);
    common::Gpu ampere = h200();
    ASSERT_EQ(common::apply_gpu_profile("threads_sm=1536,blocks_sm=16", ampere), "");
    EXPECT_EQ(ampere.threads_per_sm, 1536);
    EXPECT_EQ(ampere.blocks_per_sm, 16);
    // A cc implies its largest cluster, capped at the GPU's: a GPU without clusters gets none, not a refusal.
    common::Gpu no_clusters = h200();
    no_clusters.cc = no_clusters.real_cc = 80, no_clusters.max_cluster = 0;
    ASSERT_EQ(common::apply_gpu_profile("cc=9.0", no_clusters), "");
    EXPECT_EQ(no_clusters.max_cluster, 0);
    common::Gpu hopper = h200();
    ASSERT_EQ(common::apply_gpu_profile("cc=10.0", hopper), "");
    EXPECT_EQ(hopper.max_cluster, 8);
    for (const char* over : {"sms=133", "smem_block=300000,smem_sm=300000", "l2=1e9", "cluster=32", "smem_sm=233473",
                             "threads_sm=4096", "blocks_sm=64"}) {
        common::Gpu q = h200();
        const std::string err = common::apply_gpu_profile(over, q);
        EXPECT_NE(err.find("more than this GPU has"), std::string::npos) << over << ": " << err;
    }
}

// What a profile does not emulate stays the GPU's; the reservation per block follows the profile's capability.
TEST(GpuProfile, FeaturesStayTheGpusAndTheReservationFollowsTheCapability) {
    common::Gpu g = h200();
    g.cooperative = false, g.sync_domains = 4;  // as a GPU might answer: the profile must not touch them
    ASSERT_EQ(common::apply_gpu_profile("t4", g), "");
    EXPECT_FALSE(g.cooperative);
    EXPECT_EQ(g.sync_domains, 4);
    EXPECT_EQ(common::reserved_smem_per_block(g), 0u) << "7.5 reserves none";
    EXPECT_EQ(common::blocks_per_sm_by_smem(g, 32 * common::kKiB), 2);
    const common::Gpu a100 = common::gpu_of(testing_preset("a100"));
    EXPECT_EQ(common::reserved_smem_per_block(a100), common::kKiB);
    EXPECT_EQ(common::blocks_per_sm_by_smem(a100, 81 * common::kKiB), 2);
    EXPECT_EQ(common::blocks_per_sm_by_smem(a100, 82 * common::kKiB), 1) << "82 + 1 KiB twice is more than 164";
}

// Clusters: none below 9.0 (a T4 profile), up to the GPU's largest; each refusal says which limit.
TEST(GpuProfile, ClusterRefusalNamesTheLimit) {
    common::Gpu g = h200();
    g.profile = "";  // the real GPU's limits
    EXPECT_EQ(common::cluster_refusal(2, g), "");
    EXPECT_EQ(common::cluster_refusal(16, g), "");
    EXPECT_EQ(common::cluster_refusal(32, g), "needs clusters of 32 blocks; this GPU allows 16");
    ASSERT_EQ(common::apply_gpu_profile("rtx5090", g), "");
    EXPECT_EQ(common::cluster_refusal(8, g), "");
    EXPECT_EQ(common::cluster_refusal(16, g), "needs clusters of 16 blocks; this GPU allows 8 (GPU_PROFILE)");
    g = h200();
    ASSERT_EQ(common::apply_gpu_profile("t4", g), "");
    EXPECT_EQ(common::cluster_refusal(2, g), "no thread-block clusters on this GPU (GPU_PROFILE)");
}

TEST(GpuProfile, BadTextIsRefusedInOneLine) {
    for (const char* bad : {"t5", "cc=", "cc=x", "sms=-1", "sms=84,", "foo=1", "cc=8.6;sms=84", "sms=0",
                            "smem_block=1024", "smem_block=100000,smem_sm=50000", "cc=4.0", "sms=84.5", "cluster=1e12",
                            "cluster=3e9", "threads_sm=512", "blocks_sm=0", "cc=214748365", "cc=1e10"}) {
        common::Gpu g = h200();
        const std::string err = common::apply_gpu_profile(bad, g);
        EXPECT_NE(err, "") << bad;
        EXPECT_EQ(err.find('\n'), std::string::npos) << bad;
        EXPECT_EQ(err.rfind("GPU_PROFILE", 0), 0u) << bad << ": " << err;
    }
}

}  // namespace
