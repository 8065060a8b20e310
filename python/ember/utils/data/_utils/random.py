"""The random draws of the data utilities, as PyTorch makes them.

The samplers call ember.randperm / ember.randint and Tensor.random_. Where
those operators are missing (builds without the random-sampling operators)
the fallbacks below apply PyTorch's CPU algorithms to an MT19937 stream that
mirrors the generator's: NumPy's MT19937 with the same standard seeding,
restarted whenever the generator's seed changes. Nothing else draws from a
generator in such a build, so the mirror yields the generator's own numbers.
"""

from __future__ import annotations

import ember

_mirrors = {}  # id(generator) -> (generator, seed, NumPy bit generator)


def _draws(generator, n, wide):
    """n raw engine outputs: 32-bit random() or, when wide, 64-bit random64()."""
    import numpy as np

    g = generator if generator is not None else ember.default_generator
    seed = g.initial_seed()
    entry = _mirrors.get(id(g))
    if entry is None or entry[0] is not g or entry[1] != seed:
        bits = np.random.MT19937(0)
        bits._legacy_seeding(seed & 0xFFFFFFFF)
        entry = _mirrors[id(g)] = (g, seed, bits)
    raw = entry[2].random_raw(2 * n if wide else n)
    if wide:
        raw = raw.reshape(n, 2)
        return [(int(hi) << 32) | int(lo) for hi, lo in raw.tolist()]
    return raw.tolist()


def random_int64(generator=None):
    """torch.empty((), dtype=torch.int64).random_(generator=g).item()."""
    if hasattr(ember.Tensor, "random_"):
        return int(ember.empty((), dtype=ember.int64).random_(generator=generator).item())
    return _draws(generator, 1, True)[0] % (1 << 63)


def randperm(n, generator=None):
    """torch.randperm(n, generator=g).tolist()."""
    fn = getattr(ember, "randperm", None)
    if fn is not None:
        return fn(n, generator=generator).tolist()
    if n >= (1 << 32) // 20:
        raise NotImplementedError("randperm fallback: n too large")
    perm = list(range(n))
    draws = _draws(generator, max(n - 1, 0), False)
    for i in range(n - 1):
        z = draws[i] % (n - i)
        perm[i], perm[i + z] = perm[i + z], perm[i]
    return perm


def randint(high, size, generator=None):
    """torch.randint(high=high, size=(size,), dtype=torch.int64, generator=g).tolist()."""
    fn = getattr(ember, "randint", None)
    if fn is not None:
        return fn(high=high, size=(size,), dtype=ember.int64, generator=generator).tolist()
    wide = high >= (1 << 32)
    return [v % high for v in _draws(generator, size, wide)]


def manual_seed(seed):
    """Seeds the default generator(s), as torch.manual_seed."""
    fn = getattr(ember, "manual_seed", None)
    if fn is not None:
        fn(seed)
    else:
        ember.default_generator.manual_seed(seed)
