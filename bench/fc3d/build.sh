#!/usr/bin/env bash
# Build bench/fc3d/siconos-fc3d (Siconos Numerics' FC3D solvers) into build/bench-fc3d/.
# Needs libsiconos-numerics-dev (scripts/packages.txt); not part of the CMake build or ctest.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${CUSP_BUILD_DIR:-$repo/build}/bench-fc3d"
mkdir -p "$out"
cc -std=c11 -O2 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -I/usr/include/siconos \
  -o "$out/siconos-fc3d" "$repo/bench/fc3d/siconos_fc3d.c" \
  -lsiconos_numerics -lm
echo "$out/siconos-fc3d"
