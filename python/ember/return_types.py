"""The named-tuple types of operators that return several tensors (torch.return_types.max & co).

Each type is the one the operator's results have, so isinstance checks and
pattern matching work; a type is looked up by running its operator once on a
tiny input, the first time its name is read. The `*_out` names are the same
types (Ember's out= forms return the functional form's type)."""

from __future__ import annotations


def _tiny():
    import ember

    return ember.ones(2), ember.eye(2)


def _linalg(name, *args):
    def run():
        import ember

        _, m = _tiny()
        return getattr(ember.linalg, name)(*(m if a == "m" else a for a in args))

    return run


def _top(name, *args):
    def run():
        import ember

        t, m = _tiny()
        return getattr(ember, name)(*(t if a == "t" else m if a == "m" else a for a in args))

    return run


_SAMPLES = {
    "aminmax": _top("aminmax", "t"),
    "cummax": _top("cummax", "t", 0),
    "cummin": _top("cummin", "t", 0),
    "frexp": _top("frexp", "t"),
    "geqrf": _top("geqrf", "m"),
    "histogram": _top("histogram", "t", 2),
    "histogramdd": _top("histogramdd", "m", 2),
    "kthvalue": _top("kthvalue", "t", 1),
    "linalg_cholesky_ex": _linalg("cholesky_ex", "m"),
    "linalg_eig": _linalg("eig", "m"),
    "linalg_eigh": _linalg("eigh", "m"),
    "linalg_inv_ex": _linalg("inv_ex", "m"),
    "linalg_ldl_factor": _linalg("ldl_factor", "m"),
    "linalg_ldl_factor_ex": _linalg("ldl_factor_ex", "m"),
    "linalg_lstsq": _linalg("lstsq", "m", "m"),
    "linalg_lu": _linalg("lu", "m"),
    "linalg_lu_factor": _linalg("lu_factor", "m"),
    "linalg_lu_factor_ex": _linalg("lu_factor_ex", "m"),
    "linalg_qr": _linalg("qr", "m"),
    "linalg_slogdet": _linalg("slogdet", "m"),
    "linalg_solve_ex": _linalg("solve_ex", "m", "m"),
    "linalg_svd": _linalg("svd", "m"),
    "lu_unpack": lambda: __import__("ember").lu_unpack(*__import__("ember").linalg.lu_factor(_tiny()[1])),
    "max": _top("max", "t", 0),
    "median": _top("median", "t", 0),
    "min": _top("min", "t", 0),
    "mode": _top("mode", "t", 0),
    "nanmedian": _top("nanmedian", "t", 0),
    "qr": _top("qr", "m"),
    "slogdet": _top("slogdet", "m"),
    "sort": _top("sort", "t"),
    "svd": _top("svd", "m"),
    "topk": _top("topk", "t", 1),
    "triangular_solve": _top("triangular_solve", "m", "m"),
}

__all__ = sorted([*_SAMPLES, *(f"{n}_out" for n in _SAMPLES if n != "histogramdd")])
_types: dict[str, type] = {}


def __getattr__(name):
    base = name[:-4] if name.endswith("_out") and name[:-4] in _SAMPLES else name
    if base not in _SAMPLES:
        raise AttributeError(f"module 'torch.return_types' has no attribute '{name}'")
    if base not in _types:
        _types[base] = type(_SAMPLES[base]())
    return _types[base]


def __dir__():
    return sorted([*globals(), *__all__])
