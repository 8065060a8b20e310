"""PyTorch's C++ API in extensions: one source, built against Ember and against
PyTorch, must print the same results, gradients and errors.

The source uses what extension code commonly reaches for: dims given as one
int or a braced list, Tensor::slice, Python-style indexing through
torch::indexing, new_* factories, at::parallel_for, the functions Ember writes
in Python (linear, einsum, the losses, linalg), and C++ custom autograd
functions (torch::autograd::Function).
"""

import pytest
import torch

import ember
from ember.utils import cpp_extension as ember_cpp

SOURCE = r"""
#include <torch/extension.h>
#include <sstream>
#include <tuple>
#include <vector>

using namespace torch::indexing;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

torch::Tensor reductions(torch::Tensor x) {
  return x.sum(0) + x.sum(1, true).squeeze(1).sum() + x.mean(-1).sum() + x.sum({0, 1}) + x.mean({0}, false).sum() +
         x.amax(1).sum() + x.std(0).sum() + x.var(1).sum() + x.std(false) + x.norm() + x.norm(1, {1}).sum();
}

// A tensor and a number: PyTorch's C++ API records the .Scalar operators.
std::vector<torch::Tensor> with_numbers(torch::Tensor x) {
  return {x * 2.5, 2 + x, x - 1, x / 4, x.mul(3), x.add(1, 2), 3 * x, 1 - x, 2 / x};
}

torch::Tensor slices(torch::Tensor x) {
  return x.slice(1, 0, 2).sum(1) + x.slice(/*dim=*/0, 1).sum() + x.slice(1, 0, 3, 2).mean() +
         x.narrow(1, 1, 1).squeeze(1);
}

torch::Tensor getitem(torch::Tensor x, int64_t which) {
  switch (which) {
    case 0: return x.index({Slice(), 0});
    case 1: return x.index({Slice(None, 2), Slice(1, None)});
    case 2: return x.index({"...", -1});
    case 3: return x.index({torch::tensor({0, 2})});
    case 4: return x.index({x > 0});
    case 5: return x.index({None, Slice(), Ellipsis, 1});
    case 6: return x.index({Slice(None, None, 2), torch::tensor({1, 0})});
    case 7: return x.index({Slice()});
    case 8: return x.index({true, 1});
    case 9: return x.index({5});
    default: return x.index({0, 0, 0});
  }
}

torch::Tensor setitem(torch::Tensor x) {
  auto y = x.clone();
  y.index_put_({0, 0}, 5.0);
  y.index_put_({Slice(1, None), 1}, torch::tensor({-1.0f, -2.0f, -3.0f}));
  y.index_put_({y > 2}, 0);
  y.index_put_({"...", Slice(None, 1)}, y.index({"...", Slice(1, 2)}) * 10);
  return y;
}

std::vector<torch::Tensor> maxes(torch::Tensor x) {
  auto r = x.max(1);
  auto m = torch::min(x, 0);
  return {std::get<0>(r), std::get<1>(r), std::get<0>(m), std::get<1>(m), std::get<0>(x.sort(1, true))};
}

std::vector<torch::Tensor> brackets(torch::Tensor x) {
  return {x[0], x[1][2], x[torch::tensor(3)], x[c10::Scalar(2)], x[-1]};
}

std::vector<torch::Tensor> factories(torch::Tensor x) {
  auto o = torch::TensorOptions().dtype(torch::kFloat64);
  return {x.new_zeros({2, 3}), x.new_ones({2}, o), x.new_full({2, 2}, 7), x.new_empty({0, 2}),
          torch::arange(6, o).view({2, 3}), x.toType(torch::kFloat64), x.to(x.options().dtype(torch::kInt32)),
          x.data()};
}

torch::Tensor scaled_loop(torch::Tensor x) {
  auto out = torch::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "scaled_loop", ([&] {
    auto xa = x.accessor<scalar_t, 2>();
    auto oa = out.accessor<scalar_t, 2>();
    at::parallel_for(0, x.size(0), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        for (int64_t j = 0; j < x.size(1); ++j) oa[i][j] = xa[i][j] * scalar_t(2) + scalar_t(1);
    });
  }));
  return out;
}

torch::Tensor packed(torch::Tensor x) {
  auto out = torch::zeros_like(x);
  auto xa = x.packed_accessor32<float, 2>();
  auto oa = out.packed_accessor64<float, 2>();
  for (int i = 0; i < xa.size(0); ++i)
    for (int j = 0; j < xa.size(1); ++j) oa[i][j] = xa[i][j] * xa.size(1) + xa.stride(0);
  return out;
}

std::vector<double> scalars(torch::Tensor x) {
  auto s = x.sum().item();
  auto m = x.argmax().item();
  auto b = (x > 0).any().item();
  return {s.toDouble(), s.toFloat(), double(m.toLong()), double(b.toBool()), s.to<double>(),
          double(m.isIntegral(false)), double(s.isFloatingPoint()), double(b.isBoolean())};
}

std::string describe(torch::Tensor x) {
  std::ostringstream s;
  s << x.sizes() << " " << x.scalar_type() << " " << x.device() << " " << x.item<double>() << " "
    << x.equal(x) << torch::allclose(x, x + 1e-9) << (x.layout() == torch::kStrided);
  return s.str();
}

std::string legacy(torch::Tensor x) {
  std::ostringstream s;
  s << x.type().toString() << " " << (x.device().type() == at::DeviceType::CPU) << " " << int(x.device().index())
    << " " << x.device().has_index() << " " << c10::toString(x.scalar_type()) << " " << x.type().is_cuda();
  return s.str();
}

std::vector<torch::Tensor> python_written(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor target) {
  auto y = torch::linear(x, w, b);
  return {y,
          torch::dropout(y, 0.0, true),
          torch::einsum("ij,kj->ik", {x, x}),
          torch::one_hot(target, 5),
          torch::cross_entropy_loss(y, target),
          torch::nll_loss(torch::log_softmax(y, 1), target, {}, at::Reduction::Sum),
          torch::kron(x.slice(0, 0, 2), w.slice(0, 0, 1)),
          torch::pad(x, {1, 1}),
          torch::cosine_similarity(x, x.flip(0))};
}

std::vector<torch::Tensor> linalg(torch::Tensor a) {
  auto [u, s, v] = torch::svd(a);
  return {torch::det(a), torch::inverse(a), s, torch::linalg_solve(a, a.sum(1, true)), torch::matrix_power(a, 3)};
}

struct MulConst : public torch::autograd::Function<MulConst> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, double c, torch::Tensor w) {
    ctx->saved_data["c"] = c;
    ctx->saved_data["n"] = x.size(0);
    ctx->save_for_backward({x, w});
    return x * w * c;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto saved = ctx->get_saved_variables();
    double c = ctx->saved_data["c"].toDouble();
    TORCH_CHECK(ctx->saved_data["n"].toInt() == saved[0].size(0));
    return {ctx->needs_input_grad(0) ? g[0] * saved[1] * c : torch::Tensor(), torch::Tensor(),
            ctx->needs_input_grad(1) ? g[0] * saved[0] * c : torch::Tensor()};
  }
};

struct ExpArgmax : public torch::autograd::Function<ExpArgmax> {
  static variable_list forward(AutogradContext* ctx, torch::Tensor x) {
    auto e = x.exp();
    auto idx = x.argmax();
    ctx->mark_non_differentiable({idx});
    ctx->save_for_backward({e});
    return {e, idx};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};

struct TooFew : public torch::autograd::Function<TooFew> {
  static torch::Tensor forward(AutogradContext*, torch::Tensor x, torch::Tensor y) { return x + y; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

struct DoubleInPlace : public torch::autograd::Function<DoubleInPlace> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

// An operator whose autograd kernel is a custom function, as PyTorch's
// custom-operator tutorial writes it.
torch::Tensor cube_cpu(const torch::Tensor& x) { return x * x * x; }

struct Cube : public torch::autograd::Function<Cube> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({x});
    return cube_cpu(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto x = ctx->get_saved_variables()[0];
    return {grads[0] * 3 * x * x};
  }
};
torch::Tensor cube_autograd(const torch::Tensor& x) { return Cube::apply(x); }

TORCH_LIBRARY(api_cube, m) { m.def("cube(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(api_cube, CPU, m) { m.impl("cube", &cube_cpu); }
TORCH_LIBRARY_IMPL(api_cube, Autograd, m) { m.impl("cube", &cube_autograd); }

// The engine from C++: PyTorch requires the GIL released around it.
torch::Tensor grad_in_cpp(torch::Tensor x) {
  torch::Tensor w = x.detach().clone();
  w.set_requires_grad(true);
  auto y = (w * w).sum();
  py::gil_scoped_release no_gil;
  return torch::autograd::grad({y}, {w})[0];
}

std::vector<torch::Tensor> backward_in_cpp(torch::Tensor x, bool release_gil) {
  auto w = x.detach().clone();
  w.requires_grad_(true);
  auto h = w.sin() * 3;
  h.retain_grad();
  auto y = h.sum();
  std::ostringstream facts;
  facts << y.grad_fn()->name() << " " << h.grad_fn()->name() << " " << h.output_nr() << " " << w._version() << " "
        << h.retains_grad() << " " << w.is_leaf() << " " << (w.grad_fn() == nullptr);
  if (release_gil) {
    py::gil_scoped_release no_gil;
    y.backward();
  } else {
    y.backward();
  }
  return {w.grad(), h.grad(), torch::tensor(static_cast<int64_t>(facts.str().size()))};
}

torch::Tensor backward_through(torch::Tensor y, torch::Tensor w) {
  {
    py::gil_scoped_release no_gil;
    torch::autograd::backward({y.sum()}, {}, /*retain_graph=*/true);
  }
  return w.grad();
}

// Tensors as members of a bound class, optional arguments.
struct Accumulator {
  torch::Tensor total;
  int64_t count = 0;
  explicit Accumulator(int64_t n) : total(torch::zeros({n})) {}
  void push(const torch::Tensor& v) {
    total.add_(v);
    count += 1;
  }
  torch::Tensor mean() const { return total / static_cast<double>(count); }
};

torch::Tensor with_optionals(torch::Tensor x, c10::optional<torch::Tensor> bias, std::optional<double> scale) {
  auto y = x * scale.value_or(1.0);
  if (bias.has_value() && bias->defined()) y = y + *bias;
  return y;
}

torch::Tensor mul_const(torch::Tensor x, double c, torch::Tensor w) { return MulConst::apply(x, c, w); }
std::vector<torch::Tensor> exp_argmax(torch::Tensor x) { return ExpArgmax::apply(x); }
torch::Tensor too_few(torch::Tensor x, torch::Tensor y) { return TooFew::apply(x, y); }
torch::Tensor double_in_place(torch::Tensor x) { return DoubleInPlace::apply(x); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("reductions", &reductions);
  m.def("with_numbers", &with_numbers);
  m.def("slices", &slices);
  m.def("getitem", &getitem);
  m.def("setitem", &setitem);
  m.def("maxes", &maxes);
  m.def("factories", &factories);
  m.def("brackets", &brackets);
  m.def("scaled_loop", &scaled_loop);
  m.def("packed", &packed);
  m.def("scalars", &scalars);
  m.def("describe", &describe);
  m.def("legacy", &legacy);
  m.def("python_written", &python_written);
  m.def("linalg", &linalg);
  m.def("mul_const", &mul_const);
  m.def("exp_argmax", &exp_argmax);
  m.def("too_few", &too_few);
  m.def("double_in_place", &double_in_place);
  m.def("grad_in_cpp", &grad_in_cpp);
  m.def("backward_in_cpp", &backward_in_cpp);
  m.def("backward_through", &backward_through);
  py::class_<Accumulator>(m, "Accumulator")
      .def(py::init<int64_t>())
      .def("push", &Accumulator::push)
      .def("mean", &Accumulator::mean)
      .def_readwrite("total", &Accumulator::total)
      .def_readonly("count", &Accumulator::count);
  m.def("with_optionals", &with_optionals, py::arg("x"), py::arg("bias") = py::none(), py::arg("scale") = py::none());
}
"""


@pytest.fixture(scope="module")
def exts(tmp_path_factory):
    if not ember_cpp.is_ninja_available():
        pytest.skip("ninja is not installed")
    from torch.utils import cpp_extension as torch_cpp

    built = {}
    for lib, loader in (("ember", ember_cpp), ("torch", torch_cpp)):
        folder = tmp_path_factory.mktemp(f"api_{lib}")
        built[lib] = loader.load_inline(
            f"api_ext_{lib}", SOURCE, build_directory=str(folder), extra_cflags=["-O1"], verbose=False
        )
    return built


def run(lib, ext, program):
    """Runs program(lib, ext): (False, its result as text) or (True, the
    exception's type and message)."""
    try:
        return False, repr(program(lib, ext))
    except Exception as e:  # the same type and message are expected
        return True, f"{type(e).__name__}: {e}"


def same_in_both(exts, program, raises=False):
    got = run(ember, exts["ember"], program)
    want = run(torch, exts["torch"], program)
    assert want[0] == raises, want[1]
    assert got == want


def matrix(lib, rows=4, cols=3, dtype="float32", grad=False):
    values = [[((i * 7 + j * 3) % 11 - 5) / 4 for j in range(cols)] for i in range(rows)]
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=grad)


def vector(lib, n, dtype="float32", grad=False):
    return lib.tensor([((i * 5) % 7 - 3) / 2 for i in range(n)], dtype=getattr(lib, dtype), requires_grad=grad)


@pytest.mark.parametrize("grad", [False, True])
def test_reductions_and_slices(exts, grad):
    same_in_both(exts, lambda lib, ext: ext.reductions(matrix(lib, grad=grad)))
    same_in_both(exts, lambda lib, ext: ext.slices(matrix(lib, grad=grad)))


def test_tensor_and_number_nodes(exts):
    def program(lib, ext):
        x = matrix(lib, grad=True)
        outs = ext.with_numbers(x)
        sum(o.sum() for o in outs).backward()
        return outs, x.grad

    same_in_both(exts, program)


@pytest.mark.parametrize("which", range(11))
def test_indexing_reads_as_python(exts, which):
    same_in_both(exts, lambda lib, ext: ext.getitem(matrix(lib, grad=True), which), raises=which >= 9)


def test_indexing_writes_as_python(exts):
    same_in_both(exts, lambda lib, ext: ext.setitem(matrix(lib)))

    def grads(lib, ext):
        x = matrix(lib, grad=True)
        y = ext.setitem(x * 1)
        y.sum().backward()
        return y, x.grad

    same_in_both(exts, grads)


def test_brackets_select_as_pytorch(exts):
    same_in_both(exts, lambda lib, ext: ext.brackets(matrix(lib, grad=True)))
    same_in_both(exts, lambda lib, ext: ext.brackets(matrix(lib, rows=2)), raises=True)


def test_tuples_factories_and_loops(exts):
    same_in_both(exts, lambda lib, ext: ext.maxes(matrix(lib)))
    same_in_both(exts, lambda lib, ext: ext.factories(matrix(lib, grad=True)))
    for dtype in ("float32", "float64", "int64"):
        same_in_both(exts, lambda lib, ext: ext.scaled_loop(matrix(lib, dtype=dtype)), raises=dtype == "int64")
    same_in_both(exts, lambda lib, ext: ext.packed(matrix(lib).t()))
    same_in_both(exts, lambda lib, ext: ext.scalars(matrix(lib)))
    same_in_both(exts, lambda lib, ext: ext.describe(matrix(lib, 1, 1)))
    same_in_both(exts, lambda lib, ext: ext.legacy(matrix(lib, dtype="float64")))
    same_in_both(exts, lambda lib, ext: ext.describe(matrix(lib)), raises=True)


def test_functions_written_in_python(exts):
    def program(lib, ext):
        x = matrix(lib, grad=True)
        w = matrix(lib, 5, 3, grad=True)
        b = lib.linspace(-1, 1, 5, requires_grad=True)
        outs = ext.python_written(x, w, b, lib.tensor([0, 4, 2, 1]))
        sum(o.float().sum() for o in outs).backward()
        return outs, x.grad, w.grad, b.grad

    same_in_both(exts, program)

    def linalg(lib, ext):
        a = (matrix(lib, 3, 3, dtype="float64") + lib.eye(3, dtype=lib.float64) * 3).requires_grad_()
        outs = ext.linalg(a)
        sum(o.sum() for o in outs).backward()
        return [o.detach().numpy().round(4).tolist() for o in outs], a.grad.numpy().round(4).tolist()

    same_in_both(exts, linalg)


def test_custom_function(exts):
    def program(lib, ext):
        x = vector(lib, 3, grad=True)
        w = lib.linspace(-1, 2, 3, requires_grad=True)
        y = ext.mul_const(x, 2.5, w)
        printed = [str(y), type(y.grad_fn).__name__, y.grad_fn.name()]
        y.sum().backward()
        return printed, x.grad, w.grad

    same_in_both(exts, program)

    def twice(lib, ext):
        x = vector(lib, 3, grad=True)
        y = ext.mul_const(x, 2.0, x.detach())
        y.sum().backward()
        y.sum().backward()

    same_in_both(exts, twice, raises=True)

    def two_outputs(lib, ext):
        x = vector(lib, 4, grad=True)
        e, i = ext.exp_argmax(x)
        (e * 2).sum().backward()
        return e, i, i.requires_grad, x.grad

    same_in_both(exts, two_outputs)

    def too_few(lib, ext):
        x = matrix(lib, grad=True)
        ext.too_few(x, x * 2).sum().backward()

    same_in_both(exts, too_few, raises=True)

    def no_graph(lib, ext):
        x = vector(lib, 3)
        with lib.no_grad():
            inside = ext.mul_const(vector(lib, 3, grad=True), 1.0, x)
        return ext.mul_const(x, 1.0, x), inside.requires_grad

    same_in_both(exts, no_graph)

    def in_place(lib, ext):
        a = vector(lib, 3, grad=True)
        b = a.clone()
        c = ext.double_in_place(b)
        printed = [c is b, c.grad_fn.name(), str(c)]
        c.sum().backward()
        return printed, a.grad

    same_in_both(exts, in_place)


def test_registered_operator_with_a_custom_function(exts):
    def program(lib, ext):
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = lib.ops.api_cube.cube(x)
        y.sum().backward()
        return y, x.grad, lib.ops.api_cube.cube(lib.tensor([2.0]))

    same_in_both(exts, program)


def test_custom_function_gradcheck(exts):
    def program(lib, ext):
        p = vector(lib, 3, dtype="float64", grad=True)
        q = lib.linspace(0.5, 1.5, 3, dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(lambda a, b: ext.mul_const(a, 1.5, b), (p, q))

    same_in_both(exts, program)


@pytest.mark.parametrize("release_gil", [True, False])
def test_autograd_from_cpp(exts, release_gil):
    same_in_both(exts, lambda lib, ext: ext.grad_in_cpp(matrix(lib)))
    # Without releasing the GIL, PyTorch's engine refuses to run.
    same_in_both(exts, lambda lib, ext: ext.backward_in_cpp(matrix(lib), release_gil), raises=not release_gil)


def test_backward_from_cpp_runs_python_nodes_and_hooks(exts):
    def program(lib, ext):
        seen = []

        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                seen.append("backward")
                return g * 2

        w = vector(lib, 3, grad=True)
        w.register_hook(lambda g: seen.append(g.tolist()))
        y = Twice.apply(w).exp()
        return ext.backward_through(y, w), ext.backward_through(y, w), seen

    same_in_both(exts, program)


def test_bound_class_and_optional_arguments(exts):
    def program(lib, ext):
        acc = ext.Accumulator(3)
        acc.push(vector(lib, 3))
        acc.push(lib.ones(3))
        before = (acc.mean(), acc.count, acc.total.clone())
        acc.total = lib.zeros(3)
        x = matrix(lib, grad=True)
        outs = [
            ext.with_optionals(x),
            ext.with_optionals(x, vector(lib, 3)),
            ext.with_optionals(x, None, 2.0),
            ext.with_optionals(x, scale=0.5, bias=vector(lib, 3)),
        ]
        sum(o.sum() for o in outs).backward()
        return before, acc.total, outs, x.grad

    same_in_both(exts, program)
