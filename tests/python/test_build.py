"""The build pipeline's promises: version, configuration, layout, RUNPATHs,
collect_env, cmake_prefix_path, and code generation that reruns only when
its inputs change."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ember

ROOT = Path(__file__).resolve().parents[2]
PKG = Path(ember._C.__file__).parent  # compiled parts of the installed package


def test_version_has_git_hash():
    assert re.fullmatch(r"\d+\.\d+\.\d+\+git[0-9a-f]{7}", ember.__version__), ember.__version__
    assert re.fullmatch(r"[0-9a-f]{40}", ember.version.git_version)
    assert ember.__version__.endswith(ember.version.git_version[:7])
    assert ember.__version__.split("+")[0] == (ROOT / "VERSION").read_text().strip()


def test_version_module_fields():
    assert ember.version.debug in (True, False)
    assert ember.version.cuda is None or re.fullmatch(r"\d+\.\d+(\.\d+)?", ember.version.cuda)


def test_config_show_lists_every_item():
    text = ember.__config__.show()
    assert text == ember._C._show_config()
    for item in ["GCC", "C++ Version: 201703", "BLAS: ", "OpenMP 20", "CPU capability usage: ",
                 "CUDA", "Build settings: ", "BUILD_TYPE=", "USE_CUDA=", "USE_OPENMP=", "CXX_FLAGS="]:
        assert item in text, f"{item!r} missing from:\n{text}"
    # MKL where it is installed (Note [MKL for matrix products]), else the build's BLAS.
    assert re.search(r"BLAS: (Intel\(R\) oneAPI Math Kernel Library|OpenBLAS)", text), text
    cap = re.search(r"CPU capability usage: (\w+)", text).group(1)
    assert cap in ("DEFAULT", "AVX2", "AVX512")


def test_layered_libraries_are_separate_files():
    libs = {p.name for p in (PKG / "lib").glob("*.so")}
    assert {"libember_core.so", "libember_cpu.so", "libember_python.so"} <= libs
    assert list(PKG.glob("_C*.so")), "the _C stub extension is missing"


def _dynamic(path: Path) -> str:
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) not installed")
def test_every_shared_object_has_only_origin_runpaths():
    objects = list(PKG.rglob("*.so"))
    assert len(objects) >= 4
    for so in objects:
        dyn = _dynamic(so)
        assert "(RPATH)" not in dyn, f"{so} uses RPATH instead of RUNPATH"
        for entry in re.findall(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", dyn):
            for path in entry.split(":"):
                assert path.startswith("$ORIGIN"), f"{so}: RUNPATH entry {path!r}"


def test_stub_links_python_layer_only():
    stub = next(PKG.glob("_C*.so"))
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", _dynamic(stub))
    assert "libember_python.so" in needed
    assert os.path.getsize(stub) < 64 * 1024, "the stub should be tiny; code belongs in libember_python.so"


def test_cmake_prefix_path_has_config():
    assert (Path(ember.utils.cmake_prefix_path) / "Ember" / "EmberConfig.cmake").is_file()
    assert (Path(ember.utils.cmake_prefix_path) / "Ember" / "EmberConfigVersion.cmake").is_file()


def test_public_headers_installed():
    inc = PKG / "include" / "ember"
    for rel in ["core/TensorImpl.h", "ops/Ops.h", "ops/generated/Functions.h", "autograd/Engine.h", "BuildConfig.h"]:
        assert (inc / rel).is_file(), rel
    assert not (inc / "python").exists(), "Python binding headers are not part of the C++ API"


def test_collect_env_runs():
    out = subprocess.run([sys.executable, "-m", "ember.utils.collect_env"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for key in ["Ember version", "CPU capability in use", "BLAS", "Build configuration"]:
        assert key in out.stdout


def test_cuda_absent_or_reported():
    assert isinstance(ember.cuda.is_available(), bool)
    assert ember.cuda.device_count() >= 0


# ---- code generation -----------------------------------------------------------


def _run_codegen(yaml: Path, out: Path) -> str:
    r = subprocess.run([sys.executable, "-m", "tools.codegen.main", "--yaml", str(yaml), "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_codegen_rewrites_only_changed_files(tmp_path):
    yaml = ROOT / "src/ember/ops/ops.yaml"
    first = _run_codegen(yaml, tmp_path)
    assert re.search(r"(\d+) files, \1 changed", first), first
    second = _run_codegen(yaml, tmp_path)
    assert second.strip().endswith(", 0 changed"), second
    edited = tmp_path / "ops.yaml"
    edited.write_text(yaml.read_text().replace("self: -grad", "self: grad.neg()"))
    third = _run_codegen(edited, tmp_path)
    changed = int(re.search(r"(\d+) changed", third).group(1))
    assert 1 <= changed <= 2, third  # only the shard holding neg's node


def test_codegen_error_names_yaml_line(tmp_path):
    bad = tmp_path / "ops.yaml"
    bad.write_text("- func: add.Tensor(Tensor self, Tnsor other) -> Tensor\n  dispatch:\n    CPU: add_out\n")
    r = subprocess.run([sys.executable, "-m", "tools.codegen.main", "--yaml", str(bad), "--out", str(tmp_path / "o")],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1
    assert "ops.yaml:1:" in r.stderr and "unknown type 'Tnsor'" in r.stderr


def _ninja_build_dir() -> Path | None:
    for cand in sorted((ROOT / "build").glob("*/build.ninja")):
        return cand.parent
    return None


@pytest.mark.skipif(_ninja_build_dir() is None or shutil.which("ninja") is None, reason="no Ninja build folder")
def test_codegen_reruns_only_for_its_inputs():
    """Touching a kernel recompiles it without codegen; touching ops.yaml reruns
    codegen, which rewrites nothing, so nothing recompiles."""
    build = _ninja_build_dir()
    kernel = ROOT / "src/ember/cpu/BinaryOps.cpp"
    yaml = ROOT / "src/ember/ops/ops.yaml"

    def build_after_touching(path: Path) -> str:
        st = path.stat()
        os.utime(path, None)
        try:
            r = subprocess.run(["ninja", "-C", str(build)], capture_output=True, text=True)
            assert r.returncode == 0, r.stdout + r.stderr
            return r.stdout
        finally:
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    subprocess.run(["ninja", "-C", str(build)], capture_output=True, text=True, check=True)
    after_kernel = build_after_touching(kernel)
    assert "BinaryOps.cpp" in after_kernel
    assert "Generating operators" not in after_kernel
    after_yaml = build_after_touching(yaml)
    assert "Generating operators" in after_yaml
    assert "Building CXX" not in after_yaml, after_yaml


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not on PATH")
def test_missing_compiler_fails_fast_with_one_line(tmp_path):
    env = dict(os.environ, CXX="/nonexistent/g++")
    r = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(tmp_path / "b")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0
    first = r.stderr.splitlines()[0]
    assert first == ("ember: no C++ compiler: CXX is set to '/nonexistent/g++', which does not exist "
                     "(fix: install g++ or point CXX at a C++ compiler)"), r.stderr


def test_generated_stub_is_valid_python():
    import ast

    stub = PKG / "_C.pyi"
    tree = ast.parse(stub.read_text())
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"add", "sum", "zeros", "cat"} <= names
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")
    assert {"add", "add_", "sum", "view"} <= {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None, reason="cmake/ninja missing")
def test_cpp_consumer_builds_against_installed_package(tmp_path):
    """examples/cpp configured with find_package(Ember) from cmake_prefix_path, built and run."""
    src = ROOT / "examples" / "cpp"
    build = tmp_path / "build"
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    cfg = subprocess.run(["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja",
                          f"-DCMAKE_PREFIX_PATH={ember.utils.cmake_prefix_path}"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    bld = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, env=env, timeout=600)
    assert bld.returncode == 0, bld.stdout + bld.stderr
    exe = build / "ember_example"
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith("OK")


def _cmake():
    local = Path(sys.executable).parent / "cmake"
    return str(local) if local.exists() else shutil.which("cmake")


@pytest.mark.skipif(_cmake() is None, reason="cmake not installed")
@pytest.mark.parametrize(
    "spelling, archs, flags",
    [
        ("9.0+PTX", "90-real;90-virtual", "sm_90 compute_90"),
        ("9.0", "90-real", "sm_90"),
        ("8.0;9.0+PTX", "80-real;90-real;90-virtual", "sm_80 sm_90 compute_90"),
        ("8.0 8.6", "80-real;86-real", "sm_80 sm_86"),
        ("9.0a", "90a-real", "sm_90a"),
        ("9.0 sm_90", "", "ERROR: EMBER_CUDA_ARCH_LIST: 'sm_90' is not an architecture like 9.0, 9.0a or 9.0+PTX"),
        (" ", "", "ERROR: EMBER_CUDA_ARCH_LIST is empty"),
    ],
)
def test_cuda_arch_list_spelling(tmp_path, spelling, archs, flags):
    """EMBER_CUDA_ARCH_LIST as TORCH_CUDA_ARCH_LIST spells it, to CMake's architectures and nvcc's flags."""
    script = tmp_path / "archs.cmake"
    script.write_text(
        f'include("{ROOT / "cmake" / "CudaArch.cmake"}")\n'
        f'ember_cuda_archs("{spelling}" archs flags error)\n'
        'if(error)\n  message("${archs}|ERROR: ${error}")\nelse()\n  message("${archs}|${flags}")\nendif()\n'
    )
    r = subprocess.run([_cmake(), "-P", str(script)], capture_output=True, text=True, check=True)
    assert r.stderr.strip() == f"{archs}|{flags}"
