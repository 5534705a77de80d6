#!/usr/bin/env bash
# Makes sure libuv's headers and pkg-config file are installed (Debian: libuv1-dev).
# Run by `make run` and `make test`; does nothing when `pkg-config --exists libuv` already holds.
set -euo pipefail

if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libuv; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: libuv is missing and this is not a Debian-like system." >&2
    echo "       Install libuv's development files and pkg-config (Homebrew: brew install libuv pkg-config)." >&2
    exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo="sudo"
    else
        echo "error: libuv1-dev is missing and installing it needs root (no sudo here)." >&2
        echo "       Run: apt-get update && apt-get install -y libuv1-dev pkg-config" >&2
        exit 1
    fi
fi

echo "Installing libuv1-dev and pkg-config (apt-get)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq libuv1-dev pkg-config >/dev/null; }; then
    echo "error: apt-get could not install libuv1-dev; install it by hand and retry." >&2
    exit 1
fi
pkg-config --exists libuv || { echo "error: libuv1-dev installed but pkg-config cannot find libuv." >&2; exit 1; }
