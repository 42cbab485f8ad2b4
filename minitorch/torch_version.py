"""torch.torch_version: the version string scripts compare against.

minitorch follows PyTorch 2.13's API, so `__version__` reports that API level, with minitorch's
own release as the local label ("2.13.0+minitorch.0.1.0", as PyTorch's wheels say "2.13.0+cpu").
Scripts that branch on `torch.__version__ >= "2.0"` or `(2, 1)` then take the paths written
for the API we provide. `TorchVersion` is a str that compares as a version."""
from __future__ import annotations

import re
from typing import Any

__all__ = ["TorchVersion", "Version", "InvalidVersion"]

_PATTERN = re.compile(r"v?(\d+(?:\.\d+)*)((?:a|b|rc)\d+)?(?:\.post(\d+))?(?:\.dev(\d+))?(?:\+([a-z0-9.]+))?$", re.I)


class InvalidVersion(ValueError):
    pass


class Version:
    """A PEP 440 version reduced to what version checks use: the release numbers, a pre-release
    (a, b, rc), post and dev numbers, and the local label (which sorts after the bare release)."""

    def __init__(self, text: str) -> None:
        m = _PATTERN.match(text.strip())
        if m is None:
            raise InvalidVersion(f"Invalid version: '{text}'")
        release = tuple(int(p) for p in m.group(1).split("."))
        self.release = release
        while len(release) > 1 and release[-1] == 0:  # 2.0 == 2.0.0
            release = release[:-1]
        pre = m.group(2)
        # order within a release: dev < a < b < rc < final < post
        if pre:
            kind = re.match(r"[a-z]+", pre.lower()).group(0)
            pre_key = ({"a": 0, "b": 1, "rc": 2}[kind], int(pre[len(kind):]))
        elif m.group(4) is not None and m.group(3) is None:
            pre_key = (-1, 0)
        else:
            pre_key = (3, 0)
        post = int(m.group(3)) if m.group(3) is not None else -1
        dev = int(m.group(4)) if m.group(4) is not None else 1 << 62
        local = tuple((0, int(p), "") if p.isdigit() else (-1, 0, p.lower())
                      for p in m.group(5).split(".")) if m.group(5) else ()
        self._key = (release, pre_key, post, dev, local)
        self.local = m.group(5)

    @property
    def major(self) -> int:
        return self.release[0]

    @property
    def minor(self) -> int:
        return self.release[1] if len(self.release) > 1 else 0

    @property
    def micro(self) -> int:
        return self.release[2] if len(self.release) > 2 else 0

    def __lt__(self, other: "Version") -> bool:
        return self._key < other._key

    def __le__(self, other: "Version") -> bool:
        return self._key <= other._key

    def __gt__(self, other: "Version") -> bool:
        return self._key > other._key

    def __ge__(self, other: "Version") -> bool:
        return self._key >= other._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)


def _as_version(other: Any) -> Version:
    if isinstance(other, Version):
        return other
    if isinstance(other, (tuple, list)):
        return Version(".".join(str(p) for p in other))
    if isinstance(other, str):
        return Version(other)
    raise InvalidVersion(f"{other!r} ({type(other).__name__}) cannot be compared with a version")


class TorchVersion(str):
    """A version string comparable as a version with strings ("2.0"), tuples ((2, 1) is "2.1")
    and Versions; a string that is no version compares as a string. `!=` stays str's, as
    PyTorch's."""

    def _compare(self, other: Any, method: str) -> bool:
        try:
            return getattr(Version(str(self)), method)(_as_version(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)

    def __lt__(self, other: Any) -> bool:
        return self._compare(other, "__lt__")

    def __le__(self, other: Any) -> bool:
        return self._compare(other, "__le__")

    def __gt__(self, other: Any) -> bool:
        return self._compare(other, "__gt__")

    def __ge__(self, other: Any) -> bool:
        return self._compare(other, "__ge__")

    def __eq__(self, other: Any) -> bool:
        return self._compare(other, "__eq__")

    __hash__ = str.__hash__
