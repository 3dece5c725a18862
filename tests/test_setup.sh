#!/usr/bin/env bash
# test_setup.sh - setup.sh's decisions, without installing anything and whatever this machine
# has: a fake /etc/os-release (SETUP_OS_RELEASE), a fake nvcc first on PATH, no /usr/local/cuda
# (SETUP_CUDA_HOME), the package probes answered by SETUP_FAKE_PRESENT, and fake apt-get, sudo,
# wget and dpkg first on PATH (they print pages and install nothing), so no check depends on the
# host. The network install itself (NVIDIA's cuda-keyring route) is not run here.
# Prints one line per check and "N passed, N failed"; exits 1 if any failed.
set -u
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

os_release() {  # os_release NAME ID VERSION_ID PRETTY
    printf 'ID=%s\nVERSION_ID="%s"\nPRETTY_NAME="%s"\n' "$2" "$3" "$4" >"$tmp/$1"
}
fake_nvcc() {  # fake_nvcc DIR RELEASE: DIR/nvcc prints what nvcc --version prints
    mkdir -p "$1"
    printf '#!/bin/sh\necho "Cuda compilation tools, release %s, V%s.0"\n' "$2" "$2" >"$1/nvcc"
    chmod +x "$1/nvcc"
}
os_release debian12 debian 12 "Debian GNU/Linux 12 (bookworm)"
os_release ubuntu2204 ubuntu 22.04 "Ubuntu 22.04.4 LTS"
os_release ubuntu2404 ubuntu 24.04 "Ubuntu 24.04 LTS"
os_release fedora fedora 40 "Fedora Linux 40"
fake_nvcc "$tmp/nvcc11" 11.8
fake_nvcc "$tmp/nvcc13" 13.0
fake_nvcc "$tmp/cuda13/bin" 13.0
mkdir -p "$tmp/nvccbroken"  # an nvcc that does not run (a broken install): counts as none
printf '#!/bin/sh\nexit 1\n' >"$tmp/nvccbroken/nvcc"
chmod +x "$tmp/nvccbroken/nvcc"
# The host's PATH without its nvcc (a CUDA install here must not answer for the fake ones).
host_path=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do [ -x "$d/nvcc" ] || host_path=${host_path:+$host_path:}$d; done
mkdir -p "$tmp/fakebin"
for tool in apt-get wget dpkg; do  # a package manager's pages of output, and nothing installed
    printf '#!/bin/sh\nfor i in $(seq 50); do echo "%s: progress line $i"; done\n' "$tool" >"$tmp/fakebin/$tool"
done
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/fakebin/sudo"
printf '#!/bin/sh\nexit 9\n' >"$tmp/fakebin/nvidia-smi"  # no driver here, whatever the host has
mkdir -p "$tmp/driver550" "$tmp/driver580"  # nvidia-smi of a GPU with that driver, first on PATH
printf '#!/bin/sh\necho 550.54.15\n' >"$tmp/driver550/nvidia-smi"
printf '#!/bin/sh\necho 580.95.05\n' >"$tmp/driver580/nvidia-smi"
chmod +x "$tmp/fakebin"/* "$tmp/driver550/nvidia-smi" "$tmp/driver580/nvidia-smi"
all_present="make g++ libgtest-dev python3-matplotlib wget ca-certificates apt-get"
present=$all_present  # what the package probes find, for the next check

# check NAME EXPECTED_RC PATTERN OS NVCC_DIR CUDA_HOME [ARGS...]: setup.sh's output matches PATTERN (grep -E)
check() {
    local name=$1 want_rc=$2 pattern=$3 os=$4 nvcc_dir=$5 cuda_home=$6
    shift 6
    local out rc
    out=$(SETUP_OS_RELEASE="$tmp/$os" SETUP_CUDA_HOME="$cuda_home" SETUP_FAKE_PRESENT="$present" TMPDIR="$tmp" \
          PATH="$nvcc_dir:$tmp/fakebin:$host_path" ./setup.sh "$@" 2>&1)
    rc=$?
    local seen=$out
    # "LAST:PATTERN": the last line matches, and no package manager's line reached the terminal.
    case $pattern in LAST:*) pattern=${pattern#LAST:}; seen=$(tail -n 1 <<<"$out"); grep -q "progress line" <<<"$out" && seen="" ;; esac
    if [ "$rc" -eq "$want_rc" ] && grep -Eq -- "$pattern" <<<"$seen"; then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name: exit $rc (want $want_rc), output does not match /$pattern/:"
        sed 's/^/     /' <<<"$out"
    fi
}
url=https://developer.download.nvidia.com/compute/cuda/repos
arch=$(uname -m)
if [ "$arch" = x86_64 ]; then
    check "nvcc 11.8 on Debian 12 -> NVIDIA's debian12 repository" 0 \
        "would run: .*found nvcc 11\.8 .*wget $url/debian12/x86_64/cuda-keyring_1\.1-1_all\.deb; dpkg -i cuda-keyring_1\.1-1_all\.deb; apt-get update; apt-get install cuda-toolkit" \
        debian12 "$tmp/nvcc11" /nonexistent --dry-run
    check "nvcc 11.8 on Ubuntu 22.04 -> ubuntu2204" 0 "$url/ubuntu2204/x86_64/cuda-keyring_1\.1-1_all\.deb" \
        ubuntu2204 "$tmp/nvcc11" /nonexistent --dry-run
    check "nvcc 11.8 on Ubuntu 24.04 -> ubuntu2404" 0 "$url/ubuntu2404/x86_64/cuda-keyring_1\.1-1_all\.deb" \
        ubuntu2404 "$tmp/nvcc11" /nonexistent --dry-run
    check "an nvcc that does not run -> as none: the CUDA install planned" 0 \
        "would run: .*apt-get install cuda-toolkit" debian12 "$tmp/nvccbroken" /nonexistent --dry-run
    check "driver 550 -> CUDA 12.8, not 13 (which needs 580)" 0 \
        "driver 550\.54\.15: CUDA 13 needs 580 or newer.*apt-get install cuda-toolkit-12-8;" \
        debian12 "$tmp/nvcc11:$tmp/driver550" /nonexistent --dry-run
    check "driver 580 -> the newest CUDA" 0 "apt-get install cuda-toolkit;" \
        debian12 "$tmp/nvcc11:$tmp/driver580" /nonexistent --dry-run
fi
check "nvcc 13.0 on PATH -> no CUDA install" 0 "present.*nvcc 13\.0 \($tmp/nvcc13/nvcc\)" \
    debian12 "$tmp/nvcc13" /nonexistent --dry-run
check "nvcc 13.0 -> no CUDA step in the plan" 0 "would install nothing|would run: apt-get install [^;]*; present" \
    debian12 "$tmp/nvcc13" /nonexistent --dry-run
check "nvcc 11.8 on PATH, 13.0 in CUDA_HOME -> no install, the export PATH line" 0 \
    "export PATH=/usr/local/cuda/bin:\\\$PATH" debian12 "$tmp/nvcc11" "$tmp/cuda13" --dry-run
check "nvcc 11.8 on Fedora -> runfile or conda, exit 1" 1 "runfile installer.*|conda install -c nvidia cuda-toolkit" \
    fedora "$tmp/nvcc11" /nonexistent --dry-run
check "nvcc 13.0 on Fedora -> nothing to do for CUDA" 0 "present.*nvcc 13\.0" fedora "$tmp/nvcc13" /nonexistent --dry-run
check "an unknown argument -> exit 2" 2 "unknown argument '--bogus'" debian12 "$tmp/nvcc13" /nonexistent --bogus

present="make g++ wget ca-certificates apt-get"
check "no GoogleTest, no matplotlib, nvcc 13.0 -> install those two only" 0 \
    "would run: apt-get install libgtest-dev python3-matplotlib; present \(skipped\): make g\+\+, nvcc 13\.0" \
    debian12 "$tmp/nvcc13" /nonexistent --dry-run
check "nvcc 13.0 only in CUDA_HOME, packages missing -> the export PATH line too" 0 \
    "export PATH=/usr/local/cuda/bin:\\\$PATH" \
    debian12 /nonexistent "$tmp/cuda13" --dry-run
present="make g++"
check "packages missing and no apt-get -> exit 1 naming them" 1 "missing libgtest-dev python3-matplotlib, and there is no apt-get" \
    debian12 "$tmp/nvcc13" /nonexistent --dry-run
present="make g++ apt-get"
check "an install: the package manager's output in the log, the summary the last line" 0 \
    "LAST:^setup\.sh: installed libgtest-dev python3-matplotlib; skipped \(present\): make g\+\+, nvcc 13\.0 \([^)]*\); log: $tmp/setup\.[^ ]*\.log\$" \
    debian12 "$tmp/nvcc13" /nonexistent
log=$(ls "$tmp"/setup.*.log 2>/dev/null | head -n 1)
if [ -n "$log" ] && grep -q "apt-get: progress line 50" "$log"; then
    passed=$((passed + 1)); echo "ok   the log holds the package manager's output"
else
    failed=$((failed + 1)); echo "FAIL the log ($log) does not hold the package manager's output"
fi
present=$all_present
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
