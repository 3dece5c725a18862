// program_runner.hpp - run a chapter's program as a learner would, with a time limit, and read
// what its --help says it takes: the options (each one's kind, range or choices, found by
// giving it a value no option accepts) and the modes with their options.
#pragma once
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace runner {

struct Outcome {
    int code = -1;           // the exit status; 128 + N for a signal N; -1 when it timed out
    bool timed_out = false;
    double seconds = 0;
    std::string out;         // stdout and stderr together
};

// Runs `program args...` directly (no shell: every argument arrives as given). `hide_gpu`:
// CUDA_VISIBLE_DEVICES="" so a GPU machine behaves as one without a GPU.
inline Outcome run(const std::string& program, const std::vector<std::string>& args, double limit_s = 10,
                   bool hide_gpu = true) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e)
        if (!hide_gpu || std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env_strings.push_back(*e);
    if (hide_gpu) env_strings.push_back("CUDA_VISIBLE_DEVICES=");
    std::vector<char*> argv{const_cast<char*>(program.c_str())}, envp;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (std::string& e : env_strings) envp.push_back(&e[0]);
    envp.push_back(nullptr);

    Outcome r;
    int fds[2];
    // Close-on-exec: a child forked by another thread's run must not keep this pipe open (its
    // reader would wait for that program too); dup2 onto 1 and 2 clears the flag for our child.
    if (pipe2(fds, O_CLOEXEC) != 0) return r;
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execve(program.c_str(), argv.data(), envp.data());
        _exit(127);
    }
    close(fds[1]);
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    char buf[4096];
    for (;;) {
        const double left = limit_s - elapsed();
        if (left <= 0) { r.timed_out = true; kill(pid, SIGKILL); break; }
        pollfd p{fds[0], POLLIN, 0};
        if (poll(&p, 1, int(left * 1000) + 1) <= 0) continue;
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n <= 0) break;
        r.out.append(buf, size_t(n));
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.seconds = elapsed();
    if (!r.timed_out) r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

struct Option {
    enum Kind { Flag, Int, Choice, Path } kind = Flag;
    std::string name;
    int64_t lo = 0, hi = 0;            // Int
    std::vector<std::string> choices;  // Choice
};
struct Mode {
    std::string name;  // "" for the default run
    std::vector<std::string> takes;
};
struct Program {
    std::string path;
    std::vector<Option> options;  // without --help
    std::vector<Mode> modes;
    const Option* find(const std::string& name) const {
        for (const Option& o : options) if (o.name == name) return &o;
        return nullptr;
    }
    bool is_mode(const std::string& name) const {
        for (const Mode& m : modes) if (!m.name.empty() && m.name == name) return true;
        return false;
    }
};

// The options and modes `program --help` lists. An option's kind comes from what the program
// says to `--name=/no/such/folder/x`: "takes no value", an integer range, a list of choices, or
// a file it cannot write.
inline Program describe(const std::string& program) {
    Program p{program, {}, {}};
    std::istringstream help(run(program, {"--help"}).out);
    bool in_modes = false;
    for (std::string line; std::getline(help, line);) {
        if (line.rfind("modes", 0) == 0) { in_modes = true; continue; }
        if (!in_modes && line.rfind("  --", 0) == 0) {
            const std::string name = line.substr(4, line.find(' ', 4) - 4);
            if (name != "help") p.options.push_back({Option::Flag, name, 0, 0, {}});
        } else if (in_modes && line.rfind("  ", 0) == 0 && line.find(':') != std::string::npos) {
            Mode m;
            const std::string title = line.substr(2, line.find(':') - 2);
            m.name = title == "default" ? "" : title.substr(2);
            std::istringstream rest(line.substr(line.find(':') + 1));
            for (std::string t; rest >> t;) m.takes.push_back(t.substr(2));
            p.modes.push_back(m);
        }
    }
    for (Option& o : p.options) {
        const std::string said = run(program, {"--" + o.name + "=/no/such/folder/x"}).out;
        size_t at;
        if ((at = said.find("expects an integer in [")) != std::string::npos) {
            o.kind = Option::Int;
            std::sscanf(said.c_str() + at, "expects an integer in [%ld, %ld]", &o.lo, &o.hi);
        } else if ((at = said.find("must be one of {")) != std::string::npos) {
            o.kind = Option::Choice;
            std::istringstream list(said.substr(at + 16, said.find('}', at) - at - 16));
            for (std::string c; std::getline(list >> std::ws, c, ',');) o.choices.push_back(c);
        } else if (said.find("--" + o.name + ": ") != std::string::npos) {
            o.kind = Option::Path;
        }
    }
    return p;
}

// The programs `make test` names in PROGRAMS, as ./name.
inline std::vector<std::string> programs() {
    std::vector<std::string> v;
    std::istringstream in(std::getenv("PROGRAMS") ? std::getenv("PROGRAMS") : "");
    for (std::string p; in >> p;) v.push_back("./" + p);
    return v;
}

}  // namespace runner
