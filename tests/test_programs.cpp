// The command-line contract of every chapter's program (CONVENTIONS.md section 3),
// checked by running the built binaries. The programs to check come in the
// PROGRAMS environment variable (`make test` sets it).
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <gtest/gtest.h>

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

std::vector<std::string> programs() {
    std::vector<std::string> v;
    std::istringstream in(std::getenv("PROGRAMS") ? std::getenv("PROGRAMS") : "");
    for (std::string p; in >> p;) v.push_back("./" + p);
    return v;
}

bool gpu_present() { return run("nvidia-smi -L").code == 0; }

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

TEST(Programs, NoDeviceIsWaivedAndABadDeviceIsRejected) {
    for (const std::string& p : programs()) {
        if (gpu_present()) {
            const Result r = run(p + " --device 1023");
            EXPECT_EQ(r.code, 2) << p << ": " << r.out;
        } else {
            const Result r = run(p + " --reps 1 --warmup 0");
            EXPECT_EQ(r.code, 77) << p << ": " << r.out;
            EXPECT_NE(r.out.find("WAIVED"), std::string::npos) << p;
        }
    }
}

}  // namespace
