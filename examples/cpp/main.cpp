// Uses Ember from C++: tensors, operators, a reduction and autograd.
// Build and run with build_and_run.sh in this folder.

#include <cstdio>
#include <string>
#include <vector>

#include "ember/ops/Ops.h"

namespace {

void print(const char* name, const ember::Tensor& t) {
  std::printf("%s = %s\n", name, ember::to_string(t).c_str());
}

void print_values(const char* name, const std::vector<double>& values) {
  std::printf("%s = [", name);
  for (size_t i = 0; i < values.size(); ++i) {
    std::printf(i ? ", %g" : "%g", values[i]);
  }
  std::printf("]\n");
}

}  // namespace

int main() {
  // Two 2x3 float32 tensors.
  ember::Tensor a = ember::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  ember::Tensor b = ember::from_vector({0.5, -1, 2, 0, 1.5, 3}, {2, 3});
  print("a", a);
  print("b", b);

  // Free functions and operators (both go through the dispatcher).
  ember::Tensor s = ember::add(a, b);
  ember::Tensor p = a * b;
  print("add(a, b)", s);
  print("a * b", p);
  print_values("to_vector(a * b)", ember::to_vector(p));
  print("(a * b).sum()", p.sum());

  // Autograd: loss = sum(a * b + a); dloss/da = b + 1, dloss/db = a.
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  ember::Tensor loss = (a * b + a).sum();
  print("loss", loss);
  loss.backward();
  print("a.grad()", a.grad());
  print("b.grad()", b.grad());
  print_values("to_vector(a.grad())", ember::to_vector(a.grad()));
  print_values("to_vector(b.grad())", ember::to_vector(b.grad()));

  // Check the numbers, so that running the example is also a test.
  const std::vector<double> want_sum = {1.5, 1, 5, 4, 6.5, 9};
  const std::vector<double> want_prod = {0.5, -2, 6, 0, 7.5, 18};
  const std::vector<double> want_ga = {1.5, 0, 3, 1, 2.5, 4};
  const std::vector<double> want_gb = {1, 2, 3, 4, 5, 6};
  bool ok = ember::to_vector(s) == want_sum && ember::to_vector(p) == want_prod &&
            ember::to_vector(a.grad()) == want_ga && ember::to_vector(b.grad()) == want_gb &&
            ember::to_vector(p.sum()) == std::vector<double>{30} &&
            ember::to_vector(loss) == std::vector<double>{51};
  std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
