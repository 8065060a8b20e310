"""TORCH_LIBRARY registration in C++ extensions: operators defined and
implemented in C++ become `ember.ops.<ns>.<name>`, as PyTorch's do.

The extension is PyTorch's custom-operator tutorial source (mymuladd with CPU
and Meta kernels, an out= operator, a composite with a default argument, a
schema inferred from the C++ types); its results, schemas and errors are
compared with the same operators defined for PyTorch through torch.library.
"""

import pytest
import torch

import ember
from ember.utils import cpp_extension

SOURCE = r"""
#include <torch/extension.h>
#include <tuple>
#include <vector>

at::Tensor mymuladd_cpu(const at::Tensor& a, const at::Tensor& b, double c) {
  TORCH_CHECK(a.sizes() == b.sizes());
  TORCH_CHECK(a.dtype() == at::kFloat);
  TORCH_CHECK(b.dtype() == at::kFloat);
  at::Tensor a_contig = a.contiguous();
  at::Tensor b_contig = b.contiguous();
  at::Tensor result = torch::empty(a_contig.sizes(), a_contig.options());
  const float* a_ptr = a_contig.data_ptr<float>();
  const float* b_ptr = b_contig.data_ptr<float>();
  float* result_ptr = result.data_ptr<float>();
  for (int64_t i = 0; i < result.numel(); i++) result_ptr[i] = a_ptr[i] * b_ptr[i] + c;
  return result;
}

at::Tensor mymuladd_meta(const at::Tensor& a, const at::Tensor& b, double c) {
  TORCH_CHECK(a.sizes() == b.sizes());
  return at::empty_like(a);
}

at::Tensor mymul_cpu(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.sizes() == b.sizes(), "mymul: shapes differ");
  return (a.contiguous() * b.contiguous());
}

void myadd_out_cpu(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  TORCH_CHECK(out.is_contiguous());
  at::Tensor sum = a + b;
  out.copy_(sum);
}

// Composite: built from differentiable operators, so autograd needs nothing more.
at::Tensor scaled_sum(const at::Tensor& x, at::IntArrayRef dims, double scale) {
  return x.sum(dims.vec()) * scale;
}

std::tuple<at::Tensor, at::Tensor> split_signs(const at::Tensor& x, int64_t shift) {
  return {torch::relu(x) + shift, torch::relu(-x)};
}

at::Tensor fill_like(const at::Tensor& x, c10::Scalar value, c10::optional<at::Tensor> bias) {
  auto out = torch::full_like(x, value);
  return bias.has_value() ? out + *bias : out;
}

TORCH_LIBRARY(extension_cpp, m) {
  m.def("mymuladd(Tensor a, Tensor b, float c) -> Tensor");
  m.def("mymul(Tensor a, Tensor b) -> Tensor");
  m.def("myadd_out(Tensor a, Tensor b, Tensor(a!) out) -> ()");
  m.def("scaled_sum(Tensor x, int[1] dims, float scale=1.0) -> Tensor", &scaled_sum);
  m.def("split_signs", &split_signs);
}

TORCH_LIBRARY_FRAGMENT(extension_cpp, m) {
  m.def("fill_like(Tensor x, Scalar value, Tensor? bias=None) -> Tensor");
  m.impl("fill_like", TORCH_FN(fill_like));
}

TORCH_LIBRARY_IMPL(extension_cpp, CPU, m) {
  m.impl("mymuladd", &mymuladd_cpu);
  m.impl("mymul", &mymul_cpu);
  m.impl("myadd_out", &myadd_out_cpu);
}

TORCH_LIBRARY_IMPL(extension_cpp, Meta, m) {
  m.impl("mymuladd", torch::dispatch(c10::DispatchKey::Meta, TORCH_FN(mymuladd_meta)));
}
"""

# The same operators for PyTorch, defined in Python (the reference).
SCHEMAS = [
    "mymuladd(Tensor a, Tensor b, float c) -> Tensor",
    "mymul(Tensor a, Tensor b) -> Tensor",
    "myadd_out(Tensor a, Tensor b, Tensor(a!) out) -> ()",
    "scaled_sum(Tensor x, int[1] dims, float scale=1.0) -> Tensor",
    "split_signs(Tensor _0, int _1) -> (Tensor, Tensor)",
    "fill_like(Tensor x, Scalar value, Tensor? bias=None) -> Tensor",
]


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    build = tmp_path_factory.mktemp("library_ext")
    path = cpp_extension.load_inline(
        "library_ext", SOURCE, build_directory=str(build), is_python_module=False, verbose=False
    )
    return path


@pytest.fixture(scope="module")
def reference():
    lib = torch.library.Library("extension_cpp_ref", "DEF")
    for schema in SCHEMAS:
        lib.define(schema)
    lib.impl("mymuladd", lambda a, b, c: a * b + c, "CPU")
    lib.impl("mymuladd", lambda a, b, c: torch.empty_like(a), "Meta")
    lib.impl("mymul", lambda a, b: a * b, "CPU")

    def myadd_out(a, b, out):
        out.copy_(a + b)

    lib.impl("myadd_out", myadd_out, "CPU")
    yield torch.ops.extension_cpp_ref
    lib._destroy()


def test_operators_are_registered_with_their_schemas(ext, reference):
    ops = ember.ops.extension_cpp
    for schema in SCHEMAS:
        name = schema.split("(")[0]
        ours = str(getattr(ops, name).default._schema)
        theirs = str(getattr(reference, name).default._schema).replace("extension_cpp_ref::", "extension_cpp::")
        assert ours == theirs
    assert ext in ember.ops.loaded_libraries


def test_kernels_match_pytorch(ext, reference):
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    ea, eb = ember.tensor(a.numpy()), ember.tensor(b.numpy())
    for name, args in [("mymuladd", (1.5,)), ("mymul", ())]:
        ours = getattr(ember.ops.extension_cpp, name)(ea, eb, *args)
        theirs = getattr(reference, name)(a, b, *args)
        assert ours.dtype == ember.float32 and tuple(ours.shape) == tuple(theirs.shape)
        assert torch.allclose(torch.from_numpy(ours.numpy()), theirs)
    out, ref_out = ember.empty(3, 4), torch.empty(3, 4)
    assert ember.ops.extension_cpp.myadd_out(ea, eb, out) is None
    reference.myadd_out(a, b, ref_out)
    assert torch.allclose(torch.from_numpy(out.numpy()), ref_out)


def test_composites_are_differentiable(ext):
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    ex = ember.tensor(x.detach().numpy(), requires_grad=True)
    ours = ember.ops.extension_cpp.scaled_sum(ex, [0, 2], scale=0.5)
    theirs = x.sum([0, 2]) * 0.5
    assert torch.allclose(torch.from_numpy(ours.detach().numpy()), theirs.detach())
    (ours * ember.arange(3.0, dtype=ember.float64)).sum().backward()
    (theirs * torch.arange(3.0, dtype=torch.float64)).sum().backward()
    assert torch.allclose(torch.from_numpy(ex.grad.numpy()), x.grad)
    # int[1] takes a single int, as PyTorch's schemas do.
    assert ember.ops.extension_cpp.scaled_sum(ex, 1).shape == (2, 4)

    pos, neg = ember.ops.extension_cpp.split_signs(ember.tensor([-1.0, 2.0]), 3)
    assert pos.tolist() == [3.0, 5.0] and neg.tolist() == [1.0, 0.0]
    filled = ember.ops.extension_cpp.fill_like(ember.zeros(2), 2.5, bias=ember.ones(2))
    assert filled.tolist() == [3.5, 3.5]
    assert ember.ops.extension_cpp.fill_like(ember.zeros(2, dtype=ember.int64), 7).tolist() == [7, 7]


def test_register_autograd_on_a_cpp_operator(ext, reference):
    def setup_context(ctx, inputs, output):
        a, b, c = inputs
        ctx.save_for_backward(a, b)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a, None

    ember.library.register_autograd("extension_cpp::mymuladd", backward, setup_context=setup_context)
    torch.library.register_autograd("extension_cpp_ref::mymuladd", backward, setup_context=setup_context)
    a, b = torch.randn(5, requires_grad=True), torch.randn(5, requires_grad=True)
    ea = ember.tensor(a.detach().numpy(), requires_grad=True)
    eb = ember.tensor(b.detach().numpy(), requires_grad=True)
    ours = ember.ops.extension_cpp.mymuladd(ea, eb, 2.0)
    theirs = reference.mymuladd(a, b, 2.0)
    assert ours.requires_grad and type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__.replace("_ref", "")
    ours.sum().backward()
    theirs.sum().backward()
    assert torch.allclose(torch.from_numpy(ea.grad.numpy()), a.grad)
    assert torch.allclose(torch.from_numpy(eb.grad.numpy()), b.grad)


def test_meta_kernel_and_missing_backend(ext, reference):
    out = ember.ops.extension_cpp.mymuladd(ember.empty(2, 3, device="meta"), ember.empty(2, 3, device="meta"), 1.0)
    assert out.device.type == "meta" and out.shape == (2, 3)
    with pytest.raises(NotImplementedError):
        reference.mymul(torch.empty(2, device="meta"), torch.empty(2, device="meta"))
    with pytest.raises(NotImplementedError):
        ember.ops.extension_cpp.mymul(ember.empty(2, device="meta"), ember.empty(2, device="meta"))


def test_errors_match_pytorch(ext, reference):
    ea = ember.ones(2)

    def message(fn):
        with pytest.raises(Exception) as info:
            fn()
        return info.type, str(info.value).replace("extension_cpp_ref", "extension_cpp")

    assert message(lambda: ember.ops.extension_cpp.mymul(ea)) == message(lambda: reference.mymul(torch.ones(2)))
    # A C++ check fails with the exception Ember's own checks raise.
    with pytest.raises(RuntimeError, match="mymul: shapes differ"):
        ember.ops.extension_cpp.mymul(ea, ember.ones(3))
    with pytest.raises(AttributeError, match="'_OpNamespace' 'extension_cpp' object has no attribute 'nope'"):
        ember.ops.extension_cpp.nope  # noqa: B018


def test_import_registers_without_load_library(tmp_path):
    source = r"""
#include <torch/extension.h>
at::Tensor twice(const at::Tensor& x) { return x * 2; }
TORCH_LIBRARY(imported_ns, m) { m.def("twice(Tensor x) -> Tensor", &twice); }
// A kernel of an operator that is defined later (from Python here).
TORCH_LIBRARY_IMPL(later_ns, CPU, m) { m.impl("thrice", [](const at::Tensor& x) { return x * 3; }); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}
"""
    path = tmp_path / "imported.cpp"
    path.write_text(source)
    module = cpp_extension.load("imported_ext", [str(path)], build_directory=str(tmp_path))
    assert module.__name__ == "imported_ext"
    assert ember.ops.imported_ns.twice(ember.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    lib = ember.library.Library("later_ns", "DEF")
    lib.define("thrice(Tensor x) -> Tensor")
    assert ember.ops.later_ns.thrice(ember.tensor([1.0, 2.0])).tolist() == [3.0, 6.0]
    lib._destroy()
