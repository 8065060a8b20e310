"""A rank that dies or hangs mid-training: python _dist_fault.py <torch|ember>
<kill|hang|exit> <timeout seconds>, with the launcher's environment. The
survivors print how long their failing collective took to raise."""

import datetime
import importlib
import os
import signal
import sys
import time

torch = importlib.import_module(sys.argv[1])
dist = importlib.import_module(sys.argv[1] + ".distributed")
mode, timeout = sys.argv[2], float(sys.argv[3])

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=timeout))
rank = dist.get_rank()
t = torch.ones(1000)
for step in range(5):
    if rank == 1 and step == 3:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif mode == "exit":
            sys.exit(7)
        else:
            time.sleep(timeout * 10)
    if mode == "exit" and rank == 0 and step == 3:
        time.sleep(timeout)  # the launcher stops this rank after rank 1's exit
    start = time.monotonic()
    try:
        dist.all_reduce(t)
    except Exception as e:  # noqa: BLE001  what the survivor sees is the result
        print(f"rank {rank} step {step} raised {type(e).__name__} after {time.monotonic() - start:.2f}s", flush=True)
        print(f"message: {e}", flush=True)
        sys.exit(5)
print(f"rank {rank} finished", flush=True)
