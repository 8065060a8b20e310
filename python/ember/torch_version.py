"""TorchVersion: the version string that compares as a version (torch.__version__ >= (2, 1), "2.13"
< torch.__version__), with a small PEP 440 parser of its own."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ember.version import __version__ as internal_version

__all__ = ["TorchVersion"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


_PATTERN = re.compile(
    r"^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>a|b|c|rc|alpha|beta|pre|preview)[-_.]?(?P<pre_n>\d+)?)?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?:post|rev|r)[-_.]?(?P<post_n2>\d+)?)?"
    r"(?:[-_.]?dev[-_.]?(?P<dev_n>\d+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$",
    re.IGNORECASE,
)
# pre-release kinds in their order: alpha, beta, release candidate
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_INF = float("inf")


class Version:
    """A PEP 440 version, ordered as PEP 440 orders them."""

    def __init__(self, text: str) -> None:
        match = _PATTERN.match(text)
        if not match:
            raise InvalidVersion(f"Invalid version: '{text}'")
        self._text = text
        release = [int(p) for p in match["release"].split(".")]
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        pre = (_PRE[match["pre_l"].lower()], int(match["pre_n"] or 0)) if match["pre_l"] else None
        post_n = match["post_n1"] or match["post_n2"]
        has_post = match["post_n1"] is not None or re.search(r"(post|rev|r)\d*", text[match.end("release") :], re.I)
        post = int(post_n or 0) if has_post else None
        dev = int(match["dev_n"] or 0) if re.search(r"dev", text, re.I) else None
        local = tuple(
            (int(p), "") if p.isdigit() else (-1, p.lower()) for p in re.split(r"[-_.]", match["local"] or "") if p
        )
        # the sort key: a dev release sorts before its pre-releases, a post release after the release
        pre_key = (-1, 0) if pre is None and post is None and dev is not None else (pre or (3, 0))
        self._key = (
            int(match["epoch"] or 0),
            tuple(release),
            pre_key,
            (-_INF,) if post is None else (post,),
            (_INF,) if dev is None else (dev,),
            local,
        )

    def __repr__(self) -> str:
        return f"<Version('{self._text}')>"

    def __str__(self) -> str:
        return self._text

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __lt__(self, other: Version) -> bool:
        return self._key < other._key

    def __le__(self, other: Version) -> bool:
        return self._key <= other._key

    def __gt__(self, other: Version) -> bool:
        return self._key > other._key

    def __ge__(self, other: Version) -> bool:
        return self._key >= other._key


class TorchVersion(str):
    """A str that compares with versions, version strings and tuples of numbers as a version; a value that
    is none of these is compared as a string."""

    def _convert_to_version(self, inp: Any) -> Any:
        if isinstance(inp, Version):
            return inp
        if isinstance(inp, str):
            return Version(inp)
        if isinstance(inp, Iterable):
            return Version(".".join(str(item) for item in inp))
        raise InvalidVersion(inp)

    def _compare(self, other: Any, method: str) -> Any:
        try:
            return getattr(Version(self), method)(self._convert_to_version(other))
        except InvalidVersion:
            return getattr(super(), method)(other)


def _comparison(method):
    def compare(self, other):
        return self._compare(other, method)

    compare.__name__ = method
    return compare


for _method in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__"):
    setattr(TorchVersion, _method, _comparison(_method))
TorchVersion.__hash__ = str.__hash__
del _method

__version__ = TorchVersion(internal_version)
