"""The operator test database: one row per operator (or per overload that
needs its own call), grouped by family. test_opdb.py runs every row against
PyTorch; test_op_coverage.py checks that every public operator of ops.yaml
has a row here or a reason in EXCLUDED.

A new simple operator is one line in its family's list, for example
`unary_float("sinh")` in elementwise.py or `binary("hypot", dtypes=FLOATS)`;
families.py holds the defaults (dtypes, flags, samples) that such a line
inherits. A difference from PyTorch found by a row is recorded in the row's
`xfail` ("test", "test/dtype" or "test:sample" -> the exact difference) and
runs as a strict xfail, so it is seen again the day it is fixed.
`python tests/python/test_opdb.py --table` prints the counts.
"""

from __future__ import annotations

from . import complex_fft, composites, elementwise, indexing, linalg_lapack, misc, nn, reductions, shape
from .core import OpInfo, SampleInput

OP_DB: list[OpInfo] = [
    *elementwise.ROWS,
    *reductions.ROWS,
    *shape.ROWS,
    *indexing.ROWS,
    *nn.ROWS,
    *misc.ROWS,
    *linalg_lapack.ROWS,
    *composites.ROWS,
    *complex_fft.ROWS,
]

# Public operators of ops.yaml without a row, each with the reason.
_RANDOM = "draws random numbers: distributions and generator state are checked in test_random.py"
_COMPLEX = "complex numbers: compared with PyTorch for both complex dtypes in test_complex.py"
EXCLUDED: dict[str, str] = {
    **{
        name: _COMPLEX
        for name in (
            "conj", "imag", "real", "resolve_conj", "resolve_neg",
        )
    },  # fmt: skip
    **{
        name: _RANDOM
        for name in (
            "bernoulli",
            "bernoulli_",
            "exponential_",
            "multinomial",
            "normal",
            "normal_",
            "rand",
            "rand_like",
            "randint",
            "randint_like",
            "randn",
            "randn_like",
            "random_",
            "randperm",
            "uniform_",
        )
    },
    **{
        name: "draws random numbers for ember.distributions: checked bit for bit in test_distributions.py"
        for name in ("binomial", "cauchy_", "poisson")
    },
}


def meta_available():
    """Whether this build has the meta device."""
    import ember

    try:
        ember.empty(1, device="meta")
    except Exception:  # noqa: BLE001 - any refusal means no meta device
        return False
    return True


def devices():
    """The devices with data that the tests run on (meta has its own test)."""
    import ember

    found = ["cpu"]
    if hasattr(ember, "cuda") and ember.cuda.is_available():
        found.append("cuda")
    return found


__all__ = ["EXCLUDED", "OP_DB", "OpInfo", "SampleInput", "devices", "meta_available"]
