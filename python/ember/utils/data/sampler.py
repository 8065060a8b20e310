"""Samplers: the orders in which a DataLoader visits a map-style dataset. The
random ones draw what PyTorch's draw, so a seed gives PyTorch's order."""

from __future__ import annotations

import itertools

import ember

from ._utils import random as _random

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]


class Sampler:
    """Base class: iterates over dataset indices (or batches of them)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):
        return cls


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation per pass (num_samples may exceed the length: whole
    permutations then a partial one), or draws with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={self.num_samples}"
            )

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            # a fresh generator seeded from the default one, as PyTorch
            generator = ember.Generator()
            generator.manual_seed(_random.random_int64())
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _random.randint(n, 32, generator)
            yield from _random.randint(n, self.num_samples % 32, generator)
        else:
            for _ in range(self.num_samples // n):
                yield from _random.randperm(n, generator)
            yield from _random.randperm(n, generator)[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _random.randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Indices drawn with probabilities proportional to weights (multinomial)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights = ember.as_tensor(weights, dtype=ember.float64)
        if len(weights.shape) != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}"
            )
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        fn = getattr(ember, "multinomial", None)
        if fn is not None:
            yield from fn(
                self.weights, self.num_samples, self.replacement, generator=self.generator
            ).tolist()
            return
        yield from _multinomial(
            self.weights.tolist(), self.num_samples, self.replacement, self.generator
        )

    def __len__(self):
        return self.num_samples


def _multinomial(weights, num_samples, replacement, generator):
    """Sampling by inverse CDF on 53-bit uniforms from the generator (not
    PyTorch's stream: used only until ember.multinomial exists)."""
    import bisect

    if any(w < 0 for w in weights) or not sum(weights) > 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    weights = list(weights)
    if not replacement and num_samples > sum(1 for w in weights if w > 0):
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    out = []
    for _ in range(num_samples):
        cdf = list(itertools.accumulate(weights))
        u = (_random._draws(generator, 1, True)[0] & ((1 << 53) - 1)) * 2.0**-53 * cdf[-1]
        i = min(bisect.bisect_right(cdf, u), len(weights) - 1)
        while weights[i] == 0:
            i -= 1
        out.append(i)
        if not replacement:
            weights[i] = 0.0
    return out


class BatchSampler(Sampler):
    """Groups the indices of another sampler into lists of batch_size."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(b) for b in zip(*([it] * self.batch_size)))
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
