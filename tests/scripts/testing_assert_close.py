"""torch.testing.assert_close: tolerances by dtype, messages for tensors, scalars,
sequences and mappings, and the attribute checks."""

import torch

assert_close = torch.testing.assert_close


def t(f):
    try:
        f()
        print("ok")
    except Exception as e:
        print(type(e).__name__, repr(str(e)))


t(lambda: assert_close(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.5, 3.0])))
t(lambda: assert_close(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)))
t(lambda: assert_close(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0])))
t(lambda: assert_close(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4])))
t(lambda: assert_close(torch.tensor(float("nan")), torch.tensor(float("nan"))))
t(lambda: assert_close(torch.tensor(float("nan")), torch.tensor(float("nan")), equal_nan=True))
t(lambda: assert_close([torch.ones(2)], [torch.ones(2), 1]))
t(lambda: assert_close({"a": torch.ones(2)}, {"a": torch.zeros(2)}))
t(lambda: assert_close(1.0, 1.5))
t(lambda: assert_close(torch.ones(2, 2), torch.ones(2, 2).t() * 2, msg="custom"))
t(lambda: assert_close(torch.ones(2), torch.ones(2), rtol=1e-3))
t(lambda: assert_close(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[1.0, 2.0], [3.0, 4.5]])))
t(lambda: assert_close(torch.tensor([True]), torch.tensor([False])))
t(lambda: assert_close(torch.zeros(0), torch.zeros(0)))
t(lambda: assert_close(torch.ones(2, 3), torch.ones(3, 2).t(), check_stride=True))
t(lambda: assert_close(torch.tensor([1.0, float("inf")]), torch.tensor([1.0, float("inf")])))
t(lambda: assert_close(torch.tensor([1.0, float("inf")]), torch.tensor([1.0, -float("inf")])))
t(lambda: assert_close(torch.ones(3, requires_grad=True), torch.ones(3)))
t(lambda: assert_close(torch.tensor([1, 2]), torch.tensor([1, 2]).float(), check_dtype=False))
t(lambda: assert_close(2, 3))
t(lambda: assert_close((1, 2), (1, 3)))
t(lambda: assert_close(torch.tensor([1.0, 2.0], dtype=torch.float16), torch.tensor([1.0, 2.001], dtype=torch.float16)))
t(lambda: assert_close(torch.tensor([1.0, 2.0], dtype=torch.bfloat16), torch.tensor([1.0, 2.1], dtype=torch.bfloat16)))
t(lambda: assert_close(torch.tensor([0.0, 1.0]), torch.tensor([1e-6, 1.0])))
t(lambda: assert_close(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0]), msg=lambda m: m.upper()))
t(lambda: assert_close(torch.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3) + 1, rtol=0, atol=0))
t(lambda: assert_close(True, False))
t(lambda: assert_close(None, None))
t(lambda: assert_close(torch.tensor([1, 2], dtype=torch.uint8), torch.tensor([1, 3], dtype=torch.uint8)))
t(lambda: assert_close(torch.ones(2, dtype=torch.float64) * 1.00000001, torch.ones(2, dtype=torch.float64)))
