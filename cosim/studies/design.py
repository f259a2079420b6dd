"""Designs of experiments: the parameter points a study runs.

A design is a list of points; a point is a ``dict`` from parameter name to value.  Names
with a dot (``"pid.kp"``) are context parameters of the compiled diagram (set per run,
no rebuild); names without one are keyword arguments of the model's build function (one
build per distinct combination, cached in each worker).

* :func:`grid`: the full factorial of the given value lists;
* :func:`random_samples`: independent draws from :class:`Uniform`, :class:`LogUniform`,
  :class:`Normal` or :class:`Choice` with a seeded ``numpy`` generator (Monte Carlo);
* :func:`latin_hypercube` and :func:`sobol`: space-filling designs over bounds
  (``scipy.stats.qmc``), seeded;
* :func:`run_id`: the stable identity of a point (a hash of its sorted items), the key
  under which its result is stored and by which an interrupted study resumes.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError


def _plain(v: Any) -> Any:
    """A JSON-able Python scalar (or list) for a numpy value."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


def run_id(point: dict) -> str:
    """Stable 16-hex-digit identity of a parameter point (order of keys irrelevant)."""
    text = json.dumps({k: _plain(point[k]) for k in sorted(point)}, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def grid(**values: Any) -> list[dict]:
    """Full factorial: every combination of the value lists, the last name fastest."""
    if not values:
        raise ParameterError("grid: give at least one parameter with its values")
    names, lists = [], []
    for name, vals in values.items():
        vals = list(np.atleast_1d(vals)) if not isinstance(vals, (list, tuple)) else list(vals)
        if not vals:
            raise ParameterError(f"grid: parameter {name!r} has no values")
        names.append(name)
        lists.append([_plain(v) for v in vals])
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


@dataclass(frozen=True)
class Uniform:
    low: float
    high: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, n)


@dataclass(frozen=True)
class LogUniform:
    low: float
    high: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if not 0 < self.low < self.high:
            raise ParameterError(f"LogUniform needs 0 < low < high, got {self.low}, {self.high}")
        return np.exp(rng.uniform(math.log(self.low), math.log(self.high), n))


@dataclass(frozen=True)
class Normal:
    mean: float
    std: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.normal(self.mean, self.std, n)


@dataclass(frozen=True)
class Choice:
    values: tuple

    def draw(self, rng: np.random.Generator, n: int) -> list:
        idx = rng.integers(0, len(self.values), n)
        return [self.values[i] for i in idx]


def random_samples(n: int, seed: int, /, **dists: Any) -> list[dict]:
    """``n`` Monte Carlo points; each parameter drawn from its distribution (seeded)."""
    if int(n) < 1:
        raise ParameterError(f"random_samples: n must be >= 1, got {n!r}")
    rng = np.random.default_rng(seed)
    cols = {}
    for name, d in dists.items():
        if not hasattr(d, "draw"):
            raise ParameterError(f"random_samples: {name!r} needs a distribution "
                                 f"(Uniform, LogUniform, Normal, Choice), got {d!r}")
        cols[name] = [_plain(v) for v in d.draw(rng, int(n))]
    return [{k: cols[k][i] for k in cols} for i in range(int(n))]


def _bounds(who: str, bounds: dict) -> tuple[list, np.ndarray, np.ndarray]:
    names = list(bounds)
    lo = np.array([float(bounds[k][0]) for k in names])
    hi = np.array([float(bounds[k][1]) for k in names])
    if not names or np.any(~(hi > lo)):
        raise ParameterError(f"{who}: give (low, high) with low < high for each parameter, "
                             f"got {bounds!r}")
    return names, lo, hi


def latin_hypercube(n: int, seed: int, /, **bounds: Any) -> list[dict]:
    """``n`` points of a Latin hypercube over the ``(low, high)`` bounds (scipy qmc)."""
    from scipy.stats import qmc

    names, lo, hi = _bounds("latin_hypercube", bounds)
    x = qmc.scale(qmc.LatinHypercube(d=len(names), seed=seed).random(int(n)), lo, hi)
    return [{k: float(row[j]) for j, k in enumerate(names)} for row in x]


def sobol(n: int, seed: int, /, **bounds: Any) -> list[dict]:
    """``n`` points of a scrambled Sobol sequence over the bounds (``n`` a power of 2 is
    balanced; scipy warns otherwise)."""
    from scipy.stats import qmc

    names, lo, hi = _bounds("sobol", bounds)
    x = qmc.scale(qmc.Sobol(d=len(names), seed=seed).random(int(n)), lo, hi)
    return [{k: float(row[j]) for j, k in enumerate(names)} for row in x]
