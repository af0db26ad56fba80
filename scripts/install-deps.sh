#!/usr/bin/env bash
# Installs every build, test and fixture dependency of Vernier: Debian 12 packages, then, for the
# `ort` engine runner, Node.js and onnxruntime-node from the npm registry into .deps/node (ignored
# by git). Idempotent: what is present is left alone; nothing is downloaded outside apt and npm.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
  build-essential cmake ninja-build pkg-config git
  libncurses-dev libreadline-dev zlib1g-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  libeigen3-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libvterm-dev
  python3 python3-onnx python3-numpy python3-torch python3-torchvision
  libopenblas0-pthread valgrind
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then
    $SUDO apt-get update -qq
    apt_updated=1
  fi
  $SUDO apt-get install -y -qq --no-install-recommends "$@"
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

# Node.js and npm. A machine may ship its own Node.js with npm (in /usr/bin or elsewhere), which
# Debian's npm package conflicts with: Debian's packages only fill in what is missing.
if ! command -v node > /dev/null 2>&1; then
  echo "install-deps: installing Debian's nodejs"
  apt_install nodejs
fi
if ! command -v npm > /dev/null 2>&1; then
  echo "install-deps: installing Debian's npm"
  apt_install npm
fi

# onnxruntime-node, at the exact version the ort runner is tested with. Its package holds the CPU
# library for Linux x64; ONNXRUNTIME_NODE_INSTALL=skip keeps its install script (where npm runs it)
# from downloading the GPU libraries.
ort_version=1.30.0
node_dir="$root/.deps/node"
ort_installed() {
  [ "$(VN_DIR="$node_dir" node -e \
      "process.stdout.write(require(process.env.VN_DIR + '/node_modules/onnxruntime-node/package.json').version)" \
      2> /dev/null)" = "$ort_version" ] &&
    (cd "$node_dir" && node -e "require('onnxruntime-node')") > /dev/null 2>&1
}
if ort_installed; then
  echo "install-deps: onnxruntime-node $ort_version present in .deps/node"
else
  echo "install-deps: installing onnxruntime-node $ort_version into .deps/node"
  mkdir -p "$node_dir"
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$node_dir" --no-save --no-audit --no-fund --loglevel=error \
    "onnxruntime-node@$ort_version"
  if ! ort_installed; then
    echo "install-deps: onnxruntime-node $ort_version does not load from $node_dir" >&2
    exit 1
  fi
fi
