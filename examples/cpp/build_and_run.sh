#!/usr/bin/env bash
# Builds examples/cpp against the installed Ember package and runs it.
#   examples/cpp/build_and_run.sh [PYTHON]   (default: python3)
# PYTHON is the interpreter whose environment has ember installed; its
# ember.utils.cmake_prefix_path tells CMake where share/cmake/Ember is.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${1:-python3}"

prefix="$("$python" -c 'import ember.utils; print(ember.utils.cmake_prefix_path)')"
echo "CMAKE_PREFIX_PATH=$prefix"

cmake -S "$here" -B "$here/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$prefix"
cmake --build "$here/build"
"$here/build/ember_example"
