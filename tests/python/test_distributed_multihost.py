"""More than one machine: two hosts as network namespaces on this one (a
veth pair between them, Gloo bound to it), two ranks each, started by the
launcher with --nnodes 2. DDP training with DistributedSampler prints what
torchrun and PyTorch print; a host killed mid-training makes the other
host's ranks raise and its launcher report the failure, never a hang."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

TRAIN = """\
import os, time
import LIB as torch
import LIB.distributed as dist
from LIB.utils.data import DataLoader, TensorDataset
from LIB.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).double()
ddp = torch.nn.parallel.DistributedDataParallel(model)
g = torch.Generator().manual_seed(1)
x = torch.randn(64, 8, generator=g, dtype=torch.float64)
y = torch.randn(64, 1, generator=g, dtype=torch.float64)
data = TensorDataset(x, y)
sampler = DistributedSampler(data, shuffle=True, seed=3)
loader = DataLoader(data, batch_size=4, sampler=sampler)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
for epoch in range(int(os.environ["EPOCHS"])):
    sampler.set_epoch(epoch)
    for xb, yb in loader:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(xb), yb)
        loss.backward()
        opt.step()
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    time.sleep(float(os.environ["PAUSE"]))
    print(f"rank {rank}/{world} epoch {epoch} loss {loss.item():.12f} all_reduce {t.item()}", flush=True)
flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
print(f"rank {rank} parameters {flat.sum().item():.15f} {flat.norm().item():.15f}", flush=True)
if "LIB" == "torch":
    os._exit(0)  # PyTorch's Gloo group can deadlock at exit; its reference leaves at once
dist.destroy_process_group()
"""


def _ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


@pytest.fixture
def hosts():
    """Two namespaces joined by a veth pair: [(namespace, interface, address)]."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("network namespaces need the ip tool and root")
    tag = f"{os.getpid() % 100000}"
    a, b = (f"emb{tag}a", "10.232.0.1"), (f"emb{tag}b", "10.232.0.2")
    made = []
    try:
        for ns, _ in (a, b):
            r = _ip("netns", "add", ns)
            if r.returncode != 0:
                pytest.skip(f"cannot create a network namespace: {r.stderr.strip()}")
            made.append(ns)
        steps = [
            ("link", "add", f"v{tag}a", "type", "veth", "peer", "name", f"v{tag}b"),
            ("link", "set", f"v{tag}a", "netns", a[0]),
            ("link", "set", f"v{tag}b", "netns", b[0]),
        ]
        for ns, addr in (a, b):
            dev = f"v{tag}{ns[-1]}"
            steps += [("-n", ns, "addr", "add", f"{addr}/24", "dev", dev), ("-n", ns, "link", "set", dev, "up")]
            steps += [("-n", ns, "link", "set", "lo", "up")]
        for s in steps:
            r = _ip(*s)
            assert r.returncode == 0, (s, r.stderr)
        yield [(a[0], f"v{tag}a", a[1]), (b[0], f"v{tag}b", b[1])]
    finally:
        for ns in made:
            for pid in _ip("netns", "pids", ns).stdout.split():
                subprocess.run(["kill", "-9", pid], check=False)
            _ip("netns", "del", ns)


def _start(lib, host, node_rank, master, port, script, epochs, pause):
    ns, dev, _ = host
    launcher = "torch.distributed.run" if lib == "torch" else "ember.distributed.run"
    env = dict(os.environ, GLOO_SOCKET_IFNAME=dev, EPOCHS=str(epochs), PAUSE=str(pause), PYTHONUNBUFFERED="1")
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", launcher, "--nnodes", "2", "--nproc-per-node", "2"]
    cmd += ["--node-rank", str(node_rank), "--master-addr", master, "--master-port", str(port), str(script)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _script(tmp_path, lib):
    path = tmp_path / f"train_{lib}.py"
    path.write_text(TRAIN.replace("LIB", lib))
    return path


def _lines(text):
    """The ranks' lines, whichever way their writes interleaved."""
    return sorted(re.findall(r"rank \d+[^\n]*?(?=rank \d|\n|$)", text))


def _run_job(lib, hosts, tmp_path, port):
    script = _script(tmp_path, lib)
    master = hosts[0][2]
    procs = [_start(lib, h, i, master, port, script, 3, 0.0) for i, h in enumerate(hosts)]
    try:
        outs = [p.communicate(timeout=240) for p in procs]
    except subprocess.TimeoutExpired:
        if lib == "torch":
            pytest.skip("PyTorch's own reference run hung")
        raise
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    return _lines("".join(out for out, _ in outs))


def test_two_hosts_print_what_torchrun_prints(hosts, tmp_path):
    port = 29000 + os.getpid() % 500
    got = _run_job("ember", hosts, tmp_path, port)
    want = _run_job("torch", hosts, tmp_path, port + 1)
    assert len(got) == 4 * 3 + 4
    assert got == want
    # every replica ends with the same parameters
    assert len({line.split(" ", 2)[2] for line in got if "parameters" in line}) == 1


def test_killed_host_fails_the_job_with_a_clear_error(hosts, tmp_path):
    script = _script(tmp_path, "ember")
    port = 29500 + os.getpid() % 400
    master = hosts[0][2]
    survivor = _start("ember", hosts[0], 0, master, port, script, 10_000, 0.05)
    victim = _start("ember", hosts[1], 1, master, port, script, 10_000, 0.05)
    seen = ""
    deadline = time.monotonic() + 120
    while "epoch 2" not in seen and time.monotonic() < deadline:
        seen += survivor.stdout.readline()
    assert "epoch 2" in seen, "training did not start"
    for pid in _ip("netns", "pids", hosts[1][0]).stdout.split():
        subprocess.run(["kill", "-9", pid], check=False)
    killed = time.monotonic()
    _, err = survivor.communicate(timeout=120)
    waited = time.monotonic() - killed
    victim.wait(timeout=30)
    assert survivor.returncode != 0
    assert waited < 60, f"the surviving host took {waited:.1f} s to fail"
    assert "Connection closed by peer" in err or "Connection reset" in err, err[-3000:]
    assert "FAILED" in err and "Root Cause (first observed failure)" in err, err[-3000:]
