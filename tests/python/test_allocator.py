"""CPU allocator: large blocks are reused, bounded, and reused memory is never mistaken for zeros."""

import os
import subprocess
import sys

import pytest
import torch

import ember

LARGE = 1 << 22  # float32 elements: 16 MiB, a large block


def test_freed_large_block_is_reused():
    a = ember.empty(LARGE)
    p = a.data_ptr()
    del a
    b = ember.empty(LARGE)
    assert b.data_ptr() == p
    assert b.data_ptr() % (2 << 20) == 0  # huge-page aligned


def test_slightly_smaller_request_reuses_block():
    a = ember.empty(LARGE)
    p = a.data_ptr()
    del a
    b = ember.empty(LARGE - 1000)
    assert b.data_ptr() == p


def test_much_smaller_request_gets_its_own_block():
    ember._C._cpu_release_cached_blocks()
    a = ember.empty(LARGE)
    del a
    assert ember._C._cpu_cached_bytes() == LARGE * 4
    b = ember.empty(LARGE // 4)  # would waste 3/4 of the idle block
    assert ember._C._cpu_cached_bytes() == LARGE * 4
    del b


@pytest.mark.parametrize("make", ["zeros", "ones", "full", "arange", "randn_like"])
def test_reused_memory_gets_written(make):
    junk = ember.full((LARGE,), 7.5)
    del junk
    if make == "zeros":
        x, ref = ember.zeros(LARGE), torch.zeros(LARGE)
    elif make == "ones":
        x, ref = ember.ones(LARGE), torch.ones(LARGE)
    elif make == "full":
        x, ref = ember.full((LARGE,), -2.0), torch.full((LARGE,), -2.0)
    elif make == "arange":
        x, ref = ember.arange(LARGE, dtype=ember.float32), torch.arange(LARGE, dtype=torch.float32)
    else:
        ember.manual_seed(3)
        torch.manual_seed(3)
        x, ref = ember.randn(LARGE), torch.randn(LARGE)
    assert torch.equal(torch.from_numpy(x.numpy()), ref)


def test_small_blocks_do_not_enter_the_cache():
    ember._C._cpu_release_cached_blocks()
    a = ember.empty(1000)
    del a
    assert ember._C._cpu_cached_bytes() == 0


def test_release_cached_blocks():
    a = ember.empty(LARGE)
    del a
    assert ember._C._cpu_cached_bytes() > 0
    ember._C._cpu_release_cached_blocks()
    assert ember._C._cpu_cached_bytes() == 0


def _run(code, limit_mb):
    env = dict(os.environ, EMBER_CPU_CACHE_MB=str(limit_mb))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_cache_limit_evicts_oldest():
    code = (
        "import ember\n"
        "xs = [ember.empty(1 << 22) for _ in range(4)]\n"  # 4 x 16 MiB
        "ptrs = [x.data_ptr() for x in xs]\n"
        "for i in range(4): xs[i] = None\n"
        "print(ember._C._cpu_cached_bytes() >> 20)\n"
        "y = ember.empty(1 << 22)\n"
        "print(ptrs.index(y.data_ptr()) if y.data_ptr() in ptrs else -1)\n"
    )
    cached_mb, reused = _run(code, 40).split()
    assert cached_mb == "32"  # two of four fit; the first two freed were evicted
    assert reused in ("2", "3")


def test_cache_off():
    code = "import ember\nx = ember.empty(1 << 22)\ndel x\nprint(ember._C._cpu_cached_bytes())\n"
    assert _run(code, 0) == "0"


@pytest.mark.parametrize("nbytes", [1 << 40, 1 << 60])
def test_impossible_allocation_raises_like_torch(nbytes):
    with pytest.raises(RuntimeError) as theirs:
        torch.empty(nbytes, dtype=torch.uint8)
    with pytest.raises(RuntimeError) as ours:
        ember.empty(nbytes, dtype=ember.uint8)
    expected = str(theirs.value)
    expected = expected[expected.index("DefaultCPUAllocator"):]
    assert str(ours.value) == expected


def test_forked_child_allocates_large_blocks():
    a = ember.ones(LARGE)
    del a  # an idle block inherited by the child
    pid = os.fork()
    if pid == 0:
        # A child starts on one thread (the OpenMP pool does not survive fork).
        if ember.get_num_threads() != 1:
            os._exit(2)
        ok = ember.ones(LARGE).sum().item() == LARGE and ember.zeros(LARGE).sum().item() == 0
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
