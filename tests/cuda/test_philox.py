"""ember/cuda/Philox.h against curand itself, on the device: compiles
philox_vs_curand.cu with nvcc and curand's headers and runs it."""

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _curand_include():
    for base in [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]:
        if base and (Path(base) / "include" / "curand_kernel.h").exists():
            return Path(base) / "include"
    spec = importlib.util.find_spec("nvidia")
    for loc in spec.submodule_search_locations if spec else []:
        for sub in ("curand/include", "cu13/include", "cu12/include"):
            if (Path(loc) / sub / "curand_kernel.h").exists():
                return Path(loc) / sub
    return None


def _nvcc():
    for cand in [shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"]:
        if cand and Path(cand).exists():
            return cand
    return None


def test_philox_matches_curand(tmp_path):
    nvcc, include = _nvcc(), _curand_include()
    if nvcc is None or include is None:
        pytest.skip(f"needs nvcc ({nvcc}) and curand_kernel.h ({include})")
    exe = tmp_path / "philox_vs_curand"
    cmd = [
        nvcc,
        "-O2",
        "-arch=native",
        "-std=c++17",
        f"-I{ROOT / 'src'}",
        f"-I{include}",
        str(Path(__file__).with_name("philox_vs_curand.cu")),
        "-o",
        str(exe),
    ]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
