#!/usr/bin/env bash
# Downloads, here, the wheels that building Ember needs and the GPU machine
# lacks (it has no package index): OpenBLAS (scipy-openblas32), and nanobind
# and scikit-build-core at the versions this checkout builds with. They land
# in .whl/ (ignored through .git/info/exclude), which the device call carries.
# Python 3.12 manylinux x86-64 wheels: the GPU machine's interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
DEST=.whl
mkdir -p "$DEST"
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || {
  exclude="$(git rev-parse --git-path info/exclude)"
  mkdir -p "$(dirname "$exclude")"
  grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >>"$exclude"
}
PLATFORMS=(manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64
  manylinux2014_x86_64 manylinux1_x86_64)
platform_args=()
for p in "${PLATFORMS[@]}"; do platform_args+=(--platform "$p"); done
# The versions this checkout's virtual environment builds with, when it has one.
version_of() {
  local v=""
  [ -x .venv/bin/python ] && v=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null || true)
  [ -n "$v" ] && echo "$1==$v" || echo "$1"
}
WANT=("$(version_of scipy-openblas32)" "$(version_of nanobind)" "$(version_of scikit-build-core)")
rm -f "$DEST"/*.whl
for req in "${WANT[@]}"; do
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platform_args[@]}" -d "$DEST" "$req"
done
ls -l "$DEST"
du -sh "$DEST"
