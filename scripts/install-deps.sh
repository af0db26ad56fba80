#!/usr/bin/env bash
# Installs every build, test and fixture dependency of Vernier from Debian 12 packages.
# Idempotent: packages already present are left alone; nothing is downloaded outside apt.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libncurses-dev libreadline-dev zlib1g-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  libeigen3-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libvterm-dev
  python3 python3-onnx python3-numpy python3-torch python3-torchvision
  libopenblas0-pthread valgrind
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
