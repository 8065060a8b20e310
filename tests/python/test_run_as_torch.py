"""tools/run_as_torch.py runs a program written for PyTorch with Ember in
torch's place: `import torch`, `import torch.nn as nn`, `from torch.utils.data
import ...` resolve to Ember's modules, and the program prints what it prints
under PyTorch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "run_as_torch.py"

PROGRAM = """\
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

print(__name__, sys.argv[1:])
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
for x, y in DataLoader(data, batch_size=8):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"{loss.item():.6f}")
"""


def _run(*args, cwd):
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_program_prints_what_it_prints_under_torch(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    want = _run("prog.py", "--steps", "2", cwd=tmp_path)
    got = _run(str(TOOL), "prog.py", "--steps", "2", cwd=tmp_path)
    assert want.startswith("__main__ ['--steps', '2']")
    assert got == want


def test_torch_names_are_embers_modules(tmp_path):
    (tmp_path / "helper.py").write_text("import torch.nn.functional as F\n")
    (tmp_path / "check.py").write_text(
        "import ember, ember.nn.functional, ember.utils.data\n"
        "import torch, torch.nn as nn, helper\n"
        "from torch.utils.data import DataLoader\n"
        "print(torch is ember, nn is ember.nn, helper.F is ember.nn.functional,\n"
        "      DataLoader is ember.utils.data.DataLoader)\n"
        "try:\n"
        "    import torch.no_such_module\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e.name)\n"
    )
    assert _run(str(TOOL), "check.py", cwd=tmp_path) == "True True True True\ntorch.no_such_module\n"
