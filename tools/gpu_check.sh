#!/usr/bin/env bash
# The GPU check: builds Ember for one architecture in a fresh build folder
# with the machine's python3, runs tests/cuda and benchmarks/gpu.py, and
# writes a summary (pass/fail counts, the first line of each failure, the
# benchmark table) to $OUT/summary.txt, printed last. docs/cuda.md gives the
# device call that runs it. Each phase has its own time budget (seconds):
#   GPU_CHECK_BUILD_S (300) GPU_CHECK_TEST_S (180) GPU_CHECK_BENCH_S (60)
#   GPU_CHECK_COVERAGE_S (0: skipped; the trace needs no GPU, run it here)
# GPU_CHECK_TESTS: the test paths to run (tests/cuda); results.tsv.long keeps
# each failure's report (its last 3,000 characters).
# Options: --dry  build with MAX_JOBS=1 (default 1 in dry mode) and run the
#                 tests on a machine without a GPU (they skip), no benchmarks;
#          --no-build  reuse the install in $GPU_CHECK_DIR.
# Environment: PYTHON (python3), GPU_CHECK_DIR (/tmp/ember-gpu-check),
#   EMBER_CUDA_ARCH_LIST (9.0), MAX_JOBS (16), OUT (./gpu-check-out).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DRY=0
BUILD=1
for arg in "$@"; do
  case "$arg" in
    --dry) DRY=1 ;;
    --no-build) BUILD=0 ;;
    *) echo "usage: $0 [--dry] [--no-build]" >&2; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
WORK=${GPU_CHECK_DIR:-/tmp/ember-gpu-check}
OUT=${OUT:-$ROOT/gpu-check-out}
ARCH=${EMBER_CUDA_ARCH_LIST:-9.0}
# A dry run may use ccache (this machine's cache); the GPU machine has none.
if [ "$DRY" = 1 ]; then JOBS=${MAX_JOBS:-1} CCACHE=ON; else JOBS=${MAX_JOBS:-16} CCACHE=OFF; fi
BUILD_S=${GPU_CHECK_BUILD_S:-300}
TEST_S=${GPU_CHECK_TEST_S:-180}
BENCH_S=${GPU_CHECK_BENCH_S:-60}
mkdir -p "$OUT" "$WORK"
SUMMARY=$OUT/summary.txt
START=$(date +%s)
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
elapsed() { echo $(($(date +%s) - START)); }

note "ember gpu check: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if command -v nvidia-smi >/dev/null; then
  note "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)"
else
  note "gpu: none (nvidia-smi not found)"
fi
note "python: $("$PY" -c 'import sys; print(sys.version.split()[0])'), nvcc: $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"

# ---- wheels the machine lacks (tools/gpu_wheels.sh downloads them into .whl/) ----
SITE=$WORK/site
if ls "$ROOT"/.whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WORK/wheels" \
    "$ROOT"/.whl/*.whl || { note "FAILED: installing .whl/"; exit 1; }
  export PYTHONPATH=$WORK/wheels${PYTHONPATH:+:$PYTHONPATH}
fi

# ---- build -----------------------------------------------------------------------
BUILD_LOG=$OUT/build.log
if [ "$BUILD" = 1 ]; then
  rm -rf "$WORK/build" "$SITE"
  t0=$(date +%s)
  # Only what the check needs: no oneDNN, no C++ tests, baseline CPU kernels; of the distributed
  # layer only the NCCL backend (tests/cuda/test_nccl.py), from torch's nccl wheel.
  USE_CUDA=1 USE_ONEDNN=0 USE_DISTRIBUTED=1 USE_GLOO=0 USE_MPI=0 BUILD_TEST=0 EMBER_USE_CCACHE=$CCACHE MAX_JOBS=$JOBS \
    EMBER_CUDA_ARCH_LIST=$ARCH CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=${ARCH/./} -DEMBER_BASELINE_KERNELS_ONLY=ON" \
    timeout "$BUILD_S" "$PY" -m pip install --no-build-isolation --no-deps --no-compile --no-cache-dir \
    -Cbuild-dir="$WORK/build" --target "$SITE" . >"$BUILD_LOG" 2>&1
  rc=$?
  note "build: rc=$rc in $(($(date +%s) - t0)) s (MAX_JOBS=$JOBS, arch $ARCH)"
  if [ $rc != 0 ]; then
    [ $rc = 124 ] && note "  build ran past its ${BUILD_S} s budget"
    grep -m 8 -E "error|Error" "$BUILD_LOG" | cut -c1-200 | sed 's/^/  /' | tee -a "$SUMMARY"
    cat "$SUMMARY"
    exit 1
  fi
  # The compile time of each CUDA object, slowest first.
  if [ -f "$WORK/build/.ninja_log" ]; then
    awk -F'\t' 'NR > 1 && $4 ~ /\.cu\.o$/ { printf "%6.1f s  %s\n", ($2 - $1) / 1000, $4 }' \
      "$WORK/build/.ninja_log" | sort -rn | head -8 >"$OUT/cuda_compile_times.txt"
    note "slowest CUDA objects:"
    sed 's/^/  /' "$OUT/cuda_compile_times.txt" | tee -a "$SUMMARY"
  fi
fi
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
# Which toolchain built it, and whether a library exports libstdc++'s own
# functions (a statically linked copy that would capture PyTorch's references).
note "toolchain: $(${CXX:-c++} --version 2>/dev/null | head -1); CXX=${CXX:-} LDFLAGS=${LDFLAGS:-}"
for lib in "$SITE"/ember/lib/libember_*.so; do
  n=$(nm -D --defined-only "$lib" 2>/dev/null | grep -c -E ' (_Znwm|_ZNSt6localeC1Ev|_ZSt9terminatev)$')
  [ "$n" != 0 ] && note "  warning: $(basename "$lib") exports libstdc++ functions ($n of 3 probes)"
done
"$PY" -c "import ember; print('ember', ember.__version__, 'from', ember.__file__, 'cuda', ember.version.cuda, 'devices', ember.cuda.device_count())" \
  2>&1 | tee -a "$SUMMARY"

where=$("$PY" -c "import ember, os; print(os.path.dirname(ember.__file__))" 2>/dev/null)
case "$where" in
  "$SITE"*) ;;
  *) note "warning: ember imports from $where, not from $SITE (an editable install of $PY shadows PYTHONPATH)" ;;
esac

# ---- operator-database coverage (tools/cuda_opdb_coverage.py) -----------------------
# The rows whose operators reach a CUDA kernel, traced on the CPU; the static count
# of ops.yaml operators if the trace runs past its budget. GPU_CHECK_COVERAGE_S=0
# skips it (the trace needs no GPU and gives the same count on any machine).
COVERAGE_S=${GPU_CHECK_COVERAGE_S:-0}
if [ "$COVERAGE_S" != 0 ]; then
t0=$(date +%s)
(cd "$WORK" && timeout "$COVERAGE_S" "$PY" "$ROOT/tools/cuda_opdb_coverage.py" \
  >"$OUT/coverage.txt" 2>&1)
rc=$?
if [ $rc = 0 ]; then
  note "coverage: $(tail -1 "$OUT/coverage.txt") ($(($(date +%s) - t0)) s; $OUT/coverage.txt lists the rest)"
else
  note "coverage: trace rc=$rc; $("$PY" "$ROOT/tools/cuda_opdb_coverage.py" --ops 2>&1 | tail -1)"
fi
fi

# ---- tests/cuda (every file: test_opdb.py, test_complex.py, test_nn_*.py, ...) -------
XDIST=()
# A crashed worker is replaced however often it happens, so a crash costs one test, not the run.
if [ "$DRY" = 0 ] && "$PY" -c "import xdist" 2>/dev/null; then
  XDIST=(-n "${GPU_CHECK_WORKERS:-14}" --max-worker-restart 100000)
fi
# A test that hangs ends its worker (thread method: a hang inside a CUDA call
# never returns to Python) and costs its GPU_CHECK_TEST_TIMEOUT seconds only.
if "$PY" -c "import pytest_timeout" 2>/dev/null; then
  XDIST+=(--timeout "${GPU_CHECK_TEST_TIMEOUT:-60}" --timeout-method thread)
fi
# Each outcome is appended as it happens (tests/cuda/conftest.py), so a run cut
# off by its budget still names every failure so far.
RESULTS=$OUT/results.tsv
: >"$RESULTS"
: >"$RESULTS.long"
# GPU_CHECK_TESTS: the test paths to run (default tests/cuda), relative to the checkout.
TEST_PATHS=()
for p in ${GPU_CHECK_TESTS:-tests/cuda}; do TEST_PATHS+=("$ROOT/$p"); done
t0=$(date +%s)
# Run from a folder outside the checkout so that `import ember` finds the build, not python/ember.
# -p no:benchmark: pytest-benchmark (installed there) claims parameter names of ours.
(cd "$WORK" && EMBER_CUDA_RESULTS="$RESULTS" CI=true timeout "$TEST_S" "$PY" -m pytest "${TEST_PATHS[@]}" -p no:cacheprovider -p no:warnings -p no:benchmark \
  --rootdir "$ROOT" -o addopts="" "${XDIST[@]}" -rfEs --tb=short --junitxml="$OUT/tests.xml" >"$OUT/tests.log" 2>&1)
rc=$?
note "tests/cuda: rc=$rc in $(($(date +%s) - t0)) s"
[ $rc = 124 ] && note "  the tests ran past their ${TEST_S} s budget"
"$PY" "$ROOT/tools/gpu_check_summary.py" "$RESULTS" "$OUT/tests.xml" "$OUT/tests.log" | tee -a "$SUMMARY"

# ---- benchmarks ------------------------------------------------------------------
if [ "$DRY" = 0 ] && [ "$BENCH_S" -gt 5 ]; then
  t0=$(date +%s)
  (cd "$WORK" && timeout "$BENCH_S" "$PY" "$ROOT/benchmarks/gpu.py" --budget "$((BENCH_S - 5))" \
    >"$OUT/bench.txt" 2>&1)
  rc=$?
  note "benchmarks: rc=$rc in $(($(date +%s) - t0)) s"
  tee -a "$SUMMARY" <"$OUT/bench.txt" >/dev/null
else
  note "benchmarks: skipped (dry run, or GPU_CHECK_BENCH_S at most 5)"
fi
note "total: $(elapsed) s"
echo
echo "==== summary ($SUMMARY) ===="
cat "$SUMMARY"
