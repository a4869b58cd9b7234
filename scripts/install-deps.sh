#!/usr/bin/env bash
# Installs what convbench needs from Debian, when it is missing (as root; prints the command
# otherwise; "fuzz" as the argument adds the fuzzing compiler). The CUDA toolkit is optional: CUDA sources build when nvcc is on PATH.
set -euo pipefail
pkgs=(build-essential pkg-config libcjson-dev libopenblas-dev libsqlite3-dev zlib1g-dev python3 dataset-fashion-mnist
      libprotobuf-c-dev protobuf-c-compiler libonnx-dev python3-onnx python3-numpy python3-torch python3-torchvision)
# `install-deps.sh fuzz`: also clang with libFuzzer and OpenMP, for `make fuzz` (fuzz/)
[ "${1:-}" = fuzz ] && pkgs+=(clang libclang-rt-dev libomp-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "convbench: missing Debian packages: ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "convbench: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
