"""Every pointwise operator of ops.yaml has a CUDA kernel (counted by
tools/cuda_pointwise_coverage.py from the CUDA sources), and dtype errors of
generated pointwise functions name the CUDA kernel on CUDA tensors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tools import cuda_pointwise_coverage as coverage  # noqa: E402
from tools.codegen.pointwise import cuda_error_name  # noqa: E402


def test_every_pointwise_operator_has_a_cuda_kernel():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools/cuda_pointwise_coverage.py"), str(ROOT)], capture_output=True, text=True
    )
    ops = coverage.pointwise_ops(ROOT)
    assert f"{len(ops)} of {len(ops)} pointwise operators have a CUDA kernel; 0 missing" in result.stdout
    assert result.returncode == 0, result.stdout


def test_coverage_reads_the_registration_forms(tmp_path):
    cuda = tmp_path / "src/ember/cuda/kernels"
    cuda.mkdir(parents=True)
    (tmp_path / "src/ember/ops").mkdir(parents=True)
    (tmp_path / "src/ember/ops/ops.yaml").write_text(
        "- func: exp(Tensor self) -> Tensor\n  pointwise: unary_float\n"
        "- func: eq.Tensor(Tensor self, Tensor other) -> Tensor\n  pointwise: comparison\n"
        "- func: eq.Scalar(Tensor self, Scalar other) -> Tensor\n  pointwise: comparison\n"
        "- func: special_hermite_polynomial_h(Tensor x, Tensor n) -> Tensor\n  pointwise: binary_float\n"
        "- func: sign(Tensor self) -> Tensor\n  pointwise: unary\n"
        "- func: mm(Tensor self, Tensor mat2) -> Tensor\n"
    )
    (cuda / "A.cu").write_text(
        "#define EMBER_X(_) \\\n  _(exp, dm::exp(x))\nEMBER_COMPARE_KERNEL(eq);\n"
        "EMBER_POLYNOMIAL_KERNEL(hermite_polynomial_h, 2, 0);\n"
    )
    assert coverage.pointwise_ops(tmp_path) == ["exp", "eq", "special_hermite_polynomial_h", "sign"]
    assert coverage.main(["x", str(tmp_path)]) == 1  # sign has none
    (cuda / "B.cu").write_text("EMBER_REGISTER_CUDA_POINTWISE(sign, &sign_kernel);\n")
    assert coverage.main(["x", str(tmp_path)]) == 0


def test_cuda_kernel_names():
    assert cuda_error_name("sign_cpu") == "sign_cuda"
    assert cuda_error_name("floor_vml_cpu") == "floor_cuda"
    assert cuda_error_name("div_floor_cpu") == "div_floor_cuda"
    assert cuda_error_name("pow") == "pow"
