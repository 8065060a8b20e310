"""ember.cuda.random: the CUDA generators' seeds and states. Seeds given
before CUDA is initialised are kept and applied at initialisation; without a
device they are never applied, as in PyTorch."""

from __future__ import annotations

from collections.abc import Iterable

import ember
from ember import Tensor
from ember.cuda import _lazy_call, _lazy_init, current_device, device_count, is_initialized

__all__ = [
    "get_rng_state",
    "get_rng_state_all",
    "set_rng_state",
    "set_rng_state_all",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
]


def _as_device(device: int | str | ember.device) -> ember.device:
    if isinstance(device, str):
        return ember.device(device)
    if isinstance(device, int):
        return ember.device("cuda", device)
    return device


def _generators() -> tuple:
    """torch.cuda.default_generators, filled from the backend on first use."""
    generators = ember.cuda.default_generators
    if not generators and hasattr(ember._C, "_cuda_default_generators"):
        generators = ember._C._cuda_default_generators()
        ember.cuda.default_generators = generators
    return generators


def _default_generator(index: int | None):
    """The device's generator; None where the backend has none (without a
    device, queued seeds have nothing to set)."""
    index = current_device() if index is None else index
    generators = _generators()
    return generators[index] if 0 <= index < len(generators) else None


def _required_generator(index: int | None):
    generator = _default_generator(index)
    if generator is None:
        raise RuntimeError("ember's CUDA backend has no random number generators yet")
    return generator


def _apply(index: int | None, method: str, *args) -> None:
    generator = _default_generator(index)
    if generator is not None:
        getattr(generator, method)(*args)


def get_rng_state(device: int | str | ember.device = "cuda") -> Tensor:
    _lazy_init()
    return _required_generator(_as_device(device).index).get_state()


def get_rng_state_all() -> list[Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: Tensor, device: int | str | ember.device = "cuda") -> None:
    if not is_initialized():
        new_state = new_state.clone(memory_format=ember.contiguous_format)
    target = _as_device(device)
    _lazy_call(lambda: _apply(target.index, "set_state", new_state))


def set_rng_state_all(new_states: Iterable[Tensor]) -> None:
    for index, state in enumerate(new_states):
        set_rng_state(state, index)


def manual_seed(seed: int) -> None:
    seed = int(seed)
    _lazy_call(lambda: _apply(None, "manual_seed", seed), seed=True)


def manual_seed_all(seed: int) -> None:
    seed = int(seed)

    def apply():
        for generator in _generators()[: device_count()]:
            generator.manual_seed(seed)

    _lazy_call(apply, seed_all=True)


def seed() -> None:
    _lazy_call(lambda: _apply(None, "seed"))


def seed_all() -> None:
    def apply():
        generators = _generators()[: device_count()]
        if generators:
            generators[0].seed()
            for generator in generators[1:]:
                generator.manual_seed(generators[0].initial_seed())

    _lazy_call(apply)


def initial_seed() -> int:
    _lazy_init()
    return _required_generator(None).initial_seed()
