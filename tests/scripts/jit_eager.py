# ruff: noqa: E402 - torch is imported after PYTORCH_JIT is set
# Code written for TorchScript, run with the compiler off (PYTORCH_JIT=0):
# decorated helpers, a scripted and a traced model, type refinement.
import os

os.environ["PYTORCH_JIT"] = "0"

import torch

torch.manual_seed(0)


@torch.jit.script
def fused_gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))


class Block(torch.nn.Module):
    scale: torch.jit.Final[float]

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.scale = 2.0
        self.extra = torch.jit.Attribute(3, int)

    @torch.jit.ignore
    def debug(self, x):
        return x.sum().item()

    @torch.jit.unused
    def never(self, x):
        return x

    @torch.jit.export
    def half(self, x):
        return x / 2

    def forward(self, x):
        if not torch.jit.is_scripting() and not torch.jit.is_tracing():
            y = fused_gelu(self.fc(x)) * self.scale
        else:
            y = self.fc(x)
        return y + self.extra


m = Block()
x = torch.randn(2, 4)
scripted = torch.jit.script(m)
traced = torch.jit.trace(m, x)
print(scripted(x))
print(traced(x))
print(scripted.half(x).shape, m.debug(x) == m.debug(x))
print(torch.jit.is_scripting(), torch.jit.is_tracing(), isinstance(scripted, torch.jit.ScriptModule))
print(torch.jit.annotate(list[int], []), torch.jit.annotate(int | None, None))
print(torch.jit.isinstance([1, 2], list[int]), torch.jit.isinstance([1, "a"], list[int]))
print(torch.jit.isinstance({"a": torch.ones(1)}, dict[str, torch.Tensor]))
print(torch.jit.isinstance((1, "b"), tuple[int, str]), torch.jit.isinstance((1, 2, 3), tuple[int, ...]))
print(torch.jit.isinstance(None, int | None), torch.jit.isinstance(3.0, int | None))
try:
    torch.jit.isinstance([1], list)
except RuntimeError as e:
    print("RuntimeError:", e)
fut = torch.jit.fork(fused_gelu, x)
print(torch.jit.wait(fut).sum())
try:
    torch.jit.save(m, "unused.pt")
except AttributeError as e:
    print("AttributeError:", e)
with torch.jit.optimized_execution(False):
    print(traced(x).sum())
