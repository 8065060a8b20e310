"""ember.utils.cpp_extension: PyTorch-style C++ extensions built against Ember.

One extension, written as it would be for PyTorch (#include <torch/extension.h>,
torch:: names, PYBIND11_MODULE or `functions=`), is compiled once per run; its
functions are compared with the same computation done by PyTorch in Python.
"""

import os
import subprocess
import sys

import pytest
import torch

import ember
from ember.utils import cpp_extension

SOURCE = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor d_sigmoid(torch::Tensor z) {
  auto s = torch::sigmoid(z);
  return (1 - s) * s;
}

std::vector<torch::Tensor> gated(torch::Tensor input, torch::Tensor weights, torch::Tensor bias,
                                 torch::Tensor old_h) {
  auto X = torch::cat({old_h, input}, /*dim=*/1);
  auto gate_weights = torch::addmm(bias, X, weights.transpose(0, 1));
  auto gates = gate_weights.chunk(3, /*dim=*/1);
  auto h = torch::sigmoid(gates[0]) * torch::tanh(gates[1]) + torch::relu(gates[2]);
  return {h, X};
}

torch::Tensor add_loop(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.sizes() == b.sizes(), "shapes differ: ", a.sizes(), " vs ", b.sizes());
  TORCH_CHECK(a.scalar_type() == b.scalar_type());
  auto ac = a.contiguous();
  auto bc = b.contiguous();
  auto out = torch::empty_like(ac);
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "add_loop", [&] {
    const scalar_t* pa = ac.data_ptr<scalar_t>();
    const scalar_t* pb = bc.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < ac.numel(); ++i) po[i] = pa[i] + pb[i];
  });
  return out;
}

torch::Tensor row_sums(torch::Tensor x) {
  TORCH_CHECK_VALUE(x.dim() == 2, "expected a matrix, got ", x.dim(), " dims");
  auto out = torch::zeros({x.size(0)}, x.options().dtype(torch::kFloat64));
  auto in = x.accessor<float, 2>();
  auto o = out.accessor<double, 1>();
  for (int64_t i = 0; i < in.size(0); ++i)
    for (int64_t j = 0; j < in.size(1); ++j) o[i] += in[i][j];
  return out;
}

torch::Tensor make(int64_t n, torch::Dtype dtype, bool grad) {
  return torch::arange(n, torch::dtype(dtype).requires_grad(grad));
}

torch::Tensor scale_(torch::Tensor x, double factor) {
  x.mul_(factor);
  x += 1;
  return x;
}

torch::Tensor maybe(torch::Tensor x, bool give) { return give ? x * 2 : torch::Tensor(); }

torch::Tensor bad_index(torch::Tensor x) {
  TORCH_CHECK_INDEX(false, "index ", 7, " is out of bounds");
  return x;
}

torch::Tensor no_grad_double(torch::Tensor x) {
  torch::NoGradGuard guard;
  return x * 2;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("d_sigmoid", &d_sigmoid, "sigmoid derivative");
  m.def("gated", &gated);
  m.def("add_loop", &add_loop);
  m.def("row_sums", &row_sums);
  m.def("make", &make);
  m.def("scale_", &scale_);
  m.def("maybe", &maybe);
  m.def("bad_index", &bad_index);
  m.def("no_grad_double", &no_grad_double);
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    if not cpp_extension.is_ninja_available():
        pytest.skip("ninja is not installed")
    build = tmp_path_factory.mktemp("ext")
    return cpp_extension.load_inline("ember_test_ext", SOURCE, build_directory=str(build), extra_cflags=["-O1"])


def both(values, dtype="float32"):
    return ember.tensor(values, dtype=getattr(ember, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


def assert_same(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype) == str(t.dtype)
    assert e.tolist() == t.tolist()


def test_composite_of_operators_matches_torch(ext):
    ez, tz = both([[-2.0, 0.0, 0.5], [1.0, 3.0, -0.25]])
    ts = torch.sigmoid(tz)
    assert_same(ext.d_sigmoid(ez), (1 - ts) * ts)

    g = torch.Generator().manual_seed(0)
    arrays = [torch.randn(s, generator=g) for s in [(4, 3), (9, 5), (9,), (4, 2)]]
    e_args = [ember.tensor(a.tolist()) for a in arrays]
    h, x = ext.gated(*e_args)
    tx = torch.cat([arrays[3], arrays[0]], 1)
    gates = torch.addmm(arrays[2], tx, arrays[1].t()).chunk(3, 1)
    th = torch.sigmoid(gates[0]) * torch.tanh(gates[1]) + torch.relu(gates[2])
    assert_same(x, tx)
    assert torch.allclose(torch.tensor(h.tolist()), th, rtol=1e-6, atol=1e-6)


def test_gradients_flow_through_operators_called_from_cpp(ext):
    ez, tz = both([[-2.0, 0.0, 0.5], [1.0, 3.0, -0.25]])
    ez.requires_grad_(True)
    tz.requires_grad_(True)
    out = ext.d_sigmoid(ez)
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    ts = torch.sigmoid(tz)
    ((1 - ts) * ts).sum().backward()
    assert torch.allclose(torch.tensor(ez.grad.tolist()), tz.grad, rtol=1e-6, atol=1e-7)


def test_custom_function_wrapping_the_extension(ext):
    class DSigmoid(ember.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return ext.d_sigmoid(z)

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            s = ember.sigmoid(z)
            return grad * s * (1 - s) * (1 - 2 * s)

    z = ember.tensor([0.3, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(DSigmoid.apply, (z,))
    assert type(DSigmoid.apply(z).grad_fn).__name__ == "DSigmoidBackward"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_raw_loop_with_dispatch(ext, dtype):
    ea, ta = both([[1.5, 2.0], [3.0, -4.0]], dtype)
    eb, tb = both([[0.25, 1.0], [-1.0, 8.0]], dtype)
    assert_same(ext.add_loop(ea, eb.t().t()), ta + tb)
    assert_same(ext.add_loop(ea.t(), eb.t()), ta.t() + tb.t())


def test_errors_have_pytorch_types_and_messages(ext):
    ea, _ = both([1.0, 2.0])
    eb, _ = both([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"shapes differ: \[2\] vs \[3\]"):
        ext.add_loop(ea, eb)
    with pytest.raises(RuntimeError, match=r"Expected a.scalar_type\(\) == b.scalar_type\(\) to be true"):
        ext.add_loop(ea, ea.double())
    with pytest.raises(NotImplementedError, match="\"add_loop\" not implemented for 'Int'"):
        ext.add_loop(ea.int(), ea.int())
    with pytest.raises(ValueError, match="expected a matrix, got 1 dims"):
        ext.row_sums(ea)
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        ext.bad_index(ea)
    with pytest.raises(TypeError):
        ext.d_sigmoid([1.0, 2.0])


def test_accessors_options_and_factories(ext):
    x = ember.arange(12, dtype=ember.float32).reshape(3, 4)
    assert_same(ext.row_sums(x), torch.arange(12, dtype=torch.float32).reshape(3, 4).sum(1).double())
    assert_same(ext.row_sums(x.t().contiguous().t()), torch.arange(12.0).reshape(3, 4).sum(1).double())
    made = ext.make(5, ember.float64, True)
    assert made.dtype == ember.float64 and made.requires_grad and made.is_leaf
    assert made.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert ext.make(3, ember.int64, False).dtype == ember.int64


def test_in_place_and_identity(ext):
    x = ember.tensor([1.0, 2.0])
    y = ext.scale_(x, 3.0)
    assert y is x and x.tolist() == [4.0, 7.0]
    assert ext.maybe(x, False) is None
    assert ext.maybe(x, True).tolist() == [8.0, 14.0]


def test_no_grad_guard(ext):
    x = ember.tensor([1.0], requires_grad=True)
    assert not ext.no_grad_double(x).requires_grad


def test_functions_argument_binds_and_rebuilds_under_a_new_version(tmp_path):
    if not cpp_extension.is_ninja_available():
        pytest.skip("ninja is not installed")
    source = "torch::Tensor twice(torch::Tensor x) { return x * 2; }"
    first = cpp_extension.load_inline("ember_inline_fn", source, functions=["twice"], build_directory=str(tmp_path))
    assert first.twice(ember.tensor([1.0, 2.5])).tolist() == [2.0, 5.0]
    assert first.twice.__doc__.strip().endswith("twice")
    # Changed sources in the same process load under a new module name.
    source2 = "torch::Tensor twice(torch::Tensor x) { return x * 3; }"
    second = cpp_extension.load_inline(
        "ember_inline_fn", source2, functions={"twice": "triples"}, build_directory=str(tmp_path)
    )
    assert second.__name__ == "ember_inline_fn_v1"
    assert second.twice(ember.tensor([1.0])).tolist() == [3.0]


def test_build_failure_raises_runtime_error(tmp_path):
    if not cpp_extension.is_ninja_available():
        pytest.skip("ninja is not installed")
    with pytest.raises(RuntimeError, match="Error building extension 'ember_broken'"):
        cpp_extension.load_inline("ember_broken", "this is not C++;", build_directory=str(tmp_path))


def test_setup_py_build(tmp_path):
    (tmp_path / "square.cpp").write_text(
        "#include <torch/extension.h>\n"
        "torch::Tensor square(torch::Tensor x) { return x * x; }\n"
        'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("square", &square); }\n'
    )
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "from ember.utils.cpp_extension import BuildExtension, CppExtension\n"
        "setup(name='square_ext', ext_modules=[CppExtension('square_ext', ['square.cpp'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n"
    )
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tmp_path, check=True, capture_output=True
    )
    check = "import ember, square_ext; print(square_ext.square(ember.tensor([3.0, -2.0])).tolist())"
    out = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[9.0, 4.0]"


def test_paths_point_into_the_package():
    root = os.path.dirname(ember._C.__file__)
    assert cpp_extension.include_paths()[0] == os.path.join(root, "include")
    assert os.path.exists(os.path.join(cpp_extension.include_paths()[1], "torch", "extension.h"))
    assert cpp_extension.library_paths() == [os.path.join(root, "lib")]
