#!/usr/bin/env bash
# test_setup.sh - setup.sh's decisions, without installing anything: a fake /etc/os-release
# (SETUP_OS_RELEASE), a fake nvcc first on PATH, no /usr/local/cuda (SETUP_CUDA_HOME), and
# --dry-run. The network install itself (NVIDIA's cuda-keyring route) is not run here.
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

# check NAME EXPECTED_RC PATTERN OS NVCC_DIR CUDA_HOME [ARGS...]: setup.sh's output matches PATTERN (grep -E)
check() {
    local name=$1 want_rc=$2 pattern=$3 os=$4 nvcc_dir=$5 cuda_home=$6
    shift 6
    local out rc
    out=$(SETUP_OS_RELEASE="$tmp/$os" SETUP_CUDA_HOME="$cuda_home" PATH="$nvcc_dir:$PATH" ./setup.sh "$@" 2>&1)
    rc=$?
    if [ "$rc" -eq "$want_rc" ] && grep -Eq -- "$pattern" <<<"$out"; then
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
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
