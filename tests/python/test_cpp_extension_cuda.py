"""CUDA extensions build with this machine's nvcc and load without a GPU:
load_inline(cuda_sources=...) compiles the .cu part with nvcc, links
Ember's CUDA library and the CUDA runtime, and registers its operators.
Running the kernel is tests/cuda/test_cpp_extension.py's part."""

import os
import subprocess
import sys

import pytest
from cuda_extension_source import build

import ember
from ember.utils import cpp_extension

pytestmark = pytest.mark.skipif(
    cpp_extension.CUDA_HOME is None or not os.path.exists(os.path.join(cpp_extension.CUDA_HOME, "bin", "nvcc")),
    reason="needs the CUDA toolkit (nvcc)",
)


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    return build(tmp_path_factory.mktemp("cuda_ext"))


def test_builds_with_nvcc_and_links_embers_cuda_library(ext):
    assert callable(ext.scale_add_cuda)
    needed = subprocess.run(["readelf", "-d", ext.__file__], capture_output=True, text=True, check=True).stdout
    assert "libember_core.so" in needed
    if os.path.exists(os.path.join(cpp_extension.library_paths()[0], "libember_cuda.so")):
        assert "libember_cuda.so" in needed
    symbols = subprocess.run(["nm", "-C", ext.__file__], capture_output=True, text=True, check=True).stdout
    assert "scale_add_kernel" in symbols  # the device code's host stub


def test_checks_and_cpu_kernel_run_without_a_gpu(ext):
    with pytest.raises(RuntimeError, match="scale_add_cuda: expected CUDA tensors"):
        ext.scale_add_cuda(ember.ones(3), ember.ones(3), 2.0)
    out = ember.ops.cuda_ext.scale_add(ember.tensor([1.0, 2.0]), ember.tensor([0.5, 0.5]), 3.0)
    assert out.tolist() == [3.5, 6.5]


def test_cuda_extension_without_toolkit_raises(monkeypatch, tmp_path):
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", None)
    with pytest.raises(OSError, match="CUDA_HOME environment variable is not set"):
        cpp_extension.load_inline("no_cuda", "", cuda_sources="", build_directory=str(tmp_path))


def test_setup_py_cuda_extension_registers_on_import(tmp_path):
    from cuda_extension_source import CPP, CUDA

    (tmp_path / "ext.cpp").write_text(
        "#include <torch/extension.h>\n"
        + CPP
        + 'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale_add_cuda", &scale_add_cuda); }\n'
    )
    (tmp_path / "kernel.cu").write_text("#include <torch/types.h>\n#include <cuda_runtime.h>\n" + CUDA)
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "from ember.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(name='cuda_setup_ext', ext_modules=[CUDAExtension('cuda_setup_ext', ['ext.cpp', 'kernel.cu'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n"
    )
    build = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tmp_path, capture_output=True, text=True
    )
    assert build.returncode == 0, build.stdout + build.stderr
    # A plain import: the operators appear at the first look into ember.ops.
    check = (
        "import ember, cuda_setup_ext\n"
        "print(ember.ops.cuda_ext.scale_add(ember.ones(2), ember.ones(2), 2.0).tolist())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[3.0, 3.0]"
