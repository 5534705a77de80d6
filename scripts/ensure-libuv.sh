#!/usr/bin/env bash
# Makes sure libuv's headers and pkg-config file are installed (Debian: libuv1-dev), and python3,
# which `make test`'s checks run (the examples' extraction, the allocation guard, the test-wait
# check). Run by `make run` and `make test`; does nothing when both are already there.
set -euo pipefail

packages=()
if ! { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libuv; }; then
    packages+=(libuv1-dev pkg-config)
fi
if ! command -v python3 >/dev/null 2>&1; then
    packages+=(python3)
fi
if [ "${#packages[@]}" -eq 0 ]; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: ${packages[*]} missing and this is not a Debian-like system." >&2
    echo "       Install libuv's development files, pkg-config and python3 (Homebrew: brew install libuv pkg-config python3)." >&2
    exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo="sudo"
    else
        echo "error: ${packages[*]} missing and installing needs root (no sudo here)." >&2
        echo "       Run: apt-get update && apt-get install -y ${packages[*]}" >&2
        exit 1
    fi
fi

echo "Installing ${packages[*]} (apt-get)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq "${packages[@]}" >/dev/null; }; then
    echo "error: apt-get could not install ${packages[*]}; install by hand and retry." >&2
    exit 1
fi
pkg-config --exists libuv || { echo "error: libuv1-dev installed but pkg-config cannot find libuv." >&2; exit 1; }
