"""Two robustness checks, with their measured outcome printed:

- a process killed (SIGKILL) at several points while it saves a 256 MiB
  checkpoint over an existing one leaves the old checkpoint loadable;
- a DataLoader whose worker is killed raises RuntimeError, and how soon.

    .venv/bin/python tools/fuzz/bar_checks.py
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import ember
from ember.utils.data import DataLoader, Dataset

NUMEL = 64 * 1024 * 1024  # float32: 256 MiB


def check_killed_save():
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "ckpt.pt")
    old = ember.arange(10.0)
    ember.save({"w": old}, path)
    saver = f"import ember\nx = ember.ones({NUMEL})\nprint('ready', flush=True)\nember.save({{'w': x}}, {path!r})\n"
    for delay in (0.0, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6):
        child = subprocess.Popen([sys.executable, "-c", saver], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "ready"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        got = ember.load(path)["w"]
        if got.shape == old.shape and bool((got == old).all()):
            state = "the old checkpoint"
        elif got.numel() == NUMEL:
            state = "the new checkpoint"
            ember.save({"w": old}, path)
        else:
            state = "BROKEN"
        others = sorted(f for f in os.listdir(folder) if f != "ckpt.pt")
        print(f"killed {delay:.2f} s into the save: {state} loads; other files: {len(others)}")


class KillsItsWorker(Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def check_killed_worker(trials=3):
    for _ in range(trials):
        start = time.monotonic()
        try:
            for _batch in DataLoader(KillsItsWorker(), batch_size=1, num_workers=2):
                pass
            print("killed worker: no error")
        except RuntimeError as e:
            first = str(e).splitlines()[0]
            print(f"killed worker: RuntimeError after {time.monotonic() - start:.2f} s: {first}")


if __name__ == "__main__":
    check_killed_save()
    check_killed_worker()
