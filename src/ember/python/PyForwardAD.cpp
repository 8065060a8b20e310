// Forward-mode AD from Python: dual levels, dual tensors, tangents
// (python/ember/autograd/forward_ad.py wraps these).
#include "ember/python/PyForwardAD.h"

#include <nanobind/stl/optional.h>

#include "ember/autograd/ForwardAD.h"
#include "ember/python/PyNanobind.h"

namespace nb = nanobind;

namespace ember::python {

void init_forward_ad(nb::module_& m) {
  namespace fw = autograd::forward_ad;
  m.def("_enter_dual_level", &fw::enter_dual_level);
  m.def("_exit_dual_level", &fw::exit_dual_level, nb::arg("level"));
  m.def("_current_dual_level", &fw::current_level);
  m.def("_make_dual", &fw::make_dual, nb::arg("tensor"), nb::arg("tangent"), nb::arg("level"));
  m.def("_fw_primal", &fw::fw_primal, nb::arg("tensor"), nb::arg("level"));
  // The tangent at `level`, or None (no level open, another level, or none set).
  m.def(
      "_fw_grad",
      [](const Tensor& t, int64_t level) -> std::optional<Tensor> {
        if (level != fw::current_level()) return std::nullopt;
        Tensor tangent = fw::fw_grad(t);
        if (!tangent.defined()) return std::nullopt;
        return tangent;
      },
      nb::arg("tensor"), nb::arg("level"));
  // Sets a tensor's tangent (a custom Function's outputs); an existing one is written in place.
  m.def(
      "_set_fw_grad",
      [](const Tensor& t, const Tensor& tangent, int64_t level) {
        EMBER_CHECK(level == fw::current_level(), "Invalid level given to _set_fw_grad");
        EMBER_CHECK(tangent.sizes().equals(t.sizes()),
                    "Trying to set a forward gradient that has a different size than that of the original Tensor, "
                    "this is not supported.");
        fw::set_inplace_tangent(t, tangent);
      },
      nb::arg("tensor"), nb::arg("tangent"), nb::arg("level"));
  // PyTorch's _set_fwd_grad_enabled: returns the previous state.
  m.def("_set_fwd_grad_enabled", [](bool enabled) {
    const bool was = fw::detail::t_disabled == 0;
    if (was && !enabled) ++fw::detail::t_disabled;
    if (!was && enabled) fw::detail::t_disabled = 0;
    return was;
  });
  m.def("_is_fwd_grad_enabled", [] { return fw::detail::t_disabled == 0; });
}

}  // namespace ember::python
