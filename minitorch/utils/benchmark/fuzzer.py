"""torch.utils.benchmark's Fuzzer: random benchmark inputs from a declarative spec. Parameters
(FuzzedParameter: log-uniform, uniform or a dict of choices; ParameterAlias to reuse another's
value) are drawn from a NumPy RandomState seeded once per take(), and a set is drawn again until
every constraint and every tensor's size limits accept it; tensors (FuzzedTensor) are made by
minitorch.rand / randint after manual_seed from the same RandomState (so a seed gives PyTorch's
tensors too), optionally laid out in a permuted order and sliced by steps to be non-contiguous.
Only the draws' order is PyTorch's; nothing here times anything."""
from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

import minitorch

__all__ = ["Fuzzer", "FuzzedParameter", "FuzzedTensor", "ParameterAlias"]

_DISTRIBUTIONS = ("loguniform", "uniform")
_MAX_ATTEMPTS = 1000  # draws of a parameter set before the fuzzer gives up


class FuzzedParameter:
    """A named value drawn per step: "loguniform" or "uniform" in [minval, maxval] (integers when
    both bounds are ints, for uniform), or a {choice: probability} dict. A strict parameter keeps
    its first draw while the rest of the set is drawn again."""

    def __init__(self, name: str, minval: Optional[Union[int, float]] = None,
                 maxval: Optional[Union[int, float]] = None, distribution: Any = None,
                 strict: bool = False) -> None:
        self._name, self._minval, self._maxval = name, minval, maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self) -> str:
        return self._name

    def _check_distribution(self, distribution: Any) -> Any:
        if not isinstance(distribution, dict):
            if distribution not in _DISTRIBUTIONS:
                raise AssertionError(f"Unknown distribution: {distribution}")
            return distribution
        if any(p < 0 for p in distribution.values()):
            raise AssertionError("Probabilities cannot be negative")
        if abs(sum(distribution.values()) - 1) > 1e-5:
            raise AssertionError("Distribution is not normalized")
        if self._minval is not None or self._maxval is not None:
            raise AssertionError("When passing a custom distribution, 'minval' and 'maxval' must be None")
        return distribution

    def sample(self, state: np.random.RandomState) -> Any:
        if isinstance(self._distribution, dict):
            index = state.choice(np.arange(len(self._distribution)), p=tuple(self._distribution.values()))
            return list(self._distribution)[index]
        if self._distribution == "uniform":
            if isinstance(self._minval, int) and isinstance(self._maxval, int):
                return int(state.randint(low=self._minval, high=self._maxval + 1))
            return state.uniform(low=self._minval, high=self._maxval)
        # log-uniform: uniform in log2 space, truncated to an int and kept inside the bounds
        value = int(2 ** state.uniform(low=np.log2(self._minval), high=np.log2(self._maxval)))
        return min(max(value, self._minval), self._maxval)


class ParameterAlias:
    """A parameter's value taken from the parameter named alias_to (chains allowed, no cycles)."""

    def __init__(self, alias_to: str) -> None:
        self.alias_to = alias_to

    def __repr__(self) -> str:
        return f"ParameterAlias[alias_to: {self.alias_to}]"


def _itemsize(dtype: Any) -> int:
    if dtype == minitorch.bool:
        return 1
    info = minitorch.finfo(dtype) if (dtype.is_floating_point or dtype.is_complex) else minitorch.iinfo(dtype)
    return info.bits // 8


class FuzzedTensor:
    """A tensor of `size` (ints, or names of parameters), allocated `steps` times larger and
    sliced back (strided), laid out in a random dim order with chance 1 - probability_contiguous;
    a parameter set is rejected when its element count or allocation falls outside the limits."""

    def __init__(self, name: str, size: Sequence[Union[str, int]], steps: Optional[Sequence[Union[str, int]]] = None,
                 probability_contiguous: float = 0.5, min_elements: Optional[int] = None,
                 max_elements: Optional[int] = None, max_allocation_bytes: Optional[int] = None,
                 dim_parameter: Optional[str] = None, roll_parameter: Optional[str] = None,
                 dtype: Any = None, cuda: bool = False, tensor_constructor: Optional[Callable] = None) -> None:
        self._name, self._size, self._steps = name, tuple(size), tuple(steps or ())
        self._probability_contiguous = probability_contiguous
        self._min_elements, self._max_elements = min_elements, max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter = dim_parameter
        self._dtype = minitorch.float32 if dtype is None else dtype
        self._cuda = cuda
        self._tensor_constructor = tensor_constructor

    @property
    def name(self) -> str:
        return self._name

    @staticmethod
    def default_tensor_constructor(size: Tuple[int, ...], dtype: Any, **kwargs: Any) -> Any:
        if dtype.is_floating_point or dtype.is_complex:
            return minitorch.rand(size=size, dtype=dtype, device="cpu")
        return minitorch.randint(1, 127, size=size, dtype=dtype, device="cpu")

    def _get_size_and_steps(self, params: Dict[str, Any]) -> Tuple[tuple, tuple, tuple]:
        dim = params[self._dim_parameter] if self._dim_parameter is not None else len(self._size)

        def resolve(values: tuple) -> tuple:
            # names become their values; the tuple is cut or padded with 1s to dim entries
            values = tuple(params.get(v, v) for v in values)[:dim]
            return values + (1,) * (dim - len(values))

        size, steps = resolve(self._size), resolve(self._steps)
        return size, steps, tuple(n * s for n, s in zip(size, steps))

    def satisfies_constraints(self, params: Dict[str, Any]) -> bool:
        size, _, allocation = self._get_size_and_steps(params)
        numel = math.prod(int(n) for n in size)
        nbytes = math.prod(int(n) for n in allocation) * _itemsize(self._dtype)
        if self._max_elements is not None and numel > self._max_elements:
            return False
        if self._min_elements is not None and numel < self._min_elements:
            return False
        return self._max_allocation_bytes is None or nbytes <= self._max_allocation_bytes

    def _make_tensor(self, params: Dict[str, Any], state: np.random.RandomState) -> Tuple[Any, Dict[str, Any]]:
        size, steps, allocation = self._get_size_and_steps(params)
        constructor = self._tensor_constructor or self.default_tensor_constructor
        raw = constructor(size=allocation, dtype=self._dtype, **params)
        if self._cuda:
            raw = raw.cuda()
        dim = len(size)
        order = np.arange(dim)
        if state.rand() > self._probability_contiguous:
            # a memory order other than the identity (when there is one), then the dims put back
            while dim > 1 and np.all(order == np.arange(dim)):
                order = state.permutation(raw.dim())
            raw = raw.permute(tuple(int(i) for i in order)).contiguous()
            raw = raw.permute(tuple(int(i) for i in np.argsort(order)))
        tensor = raw[tuple(slice(0, n * s, s) for n, s in zip(size, steps))]
        properties = {"numel": int(tensor.numel()), "order": order, "steps": steps,
                      "is_contiguous": tensor.is_contiguous(), "dtype": str(self._dtype)}
        return tensor, properties


def _flatten(values: Sequence[Any], cls: type) -> Tuple[Any, ...]:
    return tuple(itertools.chain.from_iterable([v] if isinstance(v, cls) else v for v in values))


class Fuzzer:
    """take(n) yields n (tensors, tensor_properties, params) triples, each a dict by name."""

    def __init__(self, parameters: List[Any], tensors: List[Any], constraints: Optional[List[Callable]] = None,
                 seed: Optional[int] = None) -> None:
        if seed is None:
            seed = int(np.random.RandomState().randint(0, 2 ** 32 - 1, dtype=np.int64))
        self._seed = seed
        self._parameters = _flatten(parameters, FuzzedParameter)
        self._tensors = _flatten(tensors, FuzzedTensor)
        self._constraints = constraints or ()
        overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if overlap:
            raise ValueError(f"Duplicate names in parameters and tensors: {overlap}")
        self._rejections = 0
        self._total_generated = 0

    def take(self, n: int) -> Iterator[Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]]:
        state = np.random.RandomState(self._seed)
        minitorch.manual_seed(int(state.randint(low=0, high=2 ** 63, dtype=np.int64)))
        for _ in range(n):
            params = self._generate(state)
            tensors, properties = {}, {}
            for t in self._tensors:
                tensors[t.name], properties[t.name] = t._make_tensor(params, state)
            yield tensors, properties, params

    @property
    def rejection_rate(self) -> float:
        return self._rejections / self._total_generated if self._total_generated else 0.0

    def _generate(self, state: np.random.RandomState) -> Dict[str, Any]:
        strict: Dict[str, Any] = {}
        for _ in range(_MAX_ATTEMPTS):
            candidate = {}
            for p in self._parameters:
                if p.strict and p.name in strict:
                    candidate[p.name] = strict[p.name]
                    continue
                candidate[p.name] = p.sample(state)
                if p.strict:
                    strict[p.name] = candidate[p.name]
            candidate = self._resolve_aliases(candidate)
            self._total_generated += 1
            if all(f(candidate) for f in self._constraints) and \
                    all(t.satisfies_constraints(candidate) for t in self._tensors):
                return candidate
            self._rejections += 1
        raise ValueError("Failed to generate a set of valid parameters.")

    @staticmethod
    def _resolve_aliases(params: Dict[str, Any]) -> Dict[str, Any]:
        params = dict(params)
        pending = sum(isinstance(v, ParameterAlias) for v in params.values())
        while pending:
            for k, v in params.items():
                if isinstance(v, ParameterAlias):
                    params[k] = params[v.alias_to]
            left = sum(isinstance(v, ParameterAlias) for v in params.values())
            if left == pending:
                raise ValueError(f"ParameterAlias cycle detected\n{params}")
            pending = left
        return params
