#pragma once
// ldexp's exact route: out = std::ldexp(self, int(other)) for a floating
// self and an integral exponent (cpu/kernels/SpecialKernel.cpp).

#include "ember/ops/DispatchStub.h"

namespace ember::native {

using LdexpIntExponentFn = void (*)(const TensorIterator& it);
EMBER_DECLARE_DISPATCH(LdexpIntExponentFn, ldexp_int_exponent_stub);

}  // namespace ember::native
