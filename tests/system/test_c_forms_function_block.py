"""The C form of ``FunctionBlock`` (:mod:`cosim.codegen.pyfunc`: its Python function
translated into C; :mod:`cosim.codegen.numba_form`: a Numba cfunc called by address) against
Python, its oracle.

The class is a generated, seeded corpus of functions (:mod:`tests.corpus.pyfunc_corpus`:
random expression trees of every operator, ``math`` and NumPy function the translation
takes, constants of many scales from literals, globals and closures, conditions, ``if``
statements, several outputs, the time):

* each function's C over a thousand argument rows (special values: signed zeros,
  infinities, NaN, the extremes, and random values of many scales) against the function
  called by Python: equal bit for bit (the sign of zeros too, NaN where Python gives NaN),
  and the C fails exactly where Python raises (:mod:`tests.corpus.pyfunc_harness`);
* the functions wired into small diagrams (sources, gains, a saturated feedback through an
  integrator) run with ``compiled=True`` and ``compiled=False`` (``fuse_linear=False``: the
  Python loop then steps the integrators stage by stage as the C does): identical times and
  signals, bit for bit;
* a Python error inside the C (division by zero, a math domain error) makes the C run fail,
  the Python loop takes over and raises its own error;
* what has no C form, with its reason (the block, the construct, the line) in
  ``diagnostics["compiled"]`` and ``compiled=True``'s BuildError.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import blocks as bl
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.codegen import why_no_c_form
from cosim.codegen.pyfunc import translate
from cosim.errors import BuildError
from tests.corpus.compiled_oracle import run_both
from tests.corpus.pyfunc_corpus import corpus_module
from tests.corpus.pyfunc_harness import Sink, compile_blocks

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 1e-300, -1e-300, 5e-324, 1e300,
           -1e300, 1.7976931348623157e308, math.inf, -math.inf, math.nan, 0.1, 0.7, -1.3,
           2.5, 1e-3, 1e16, -7.0]


#: the refusals the generated corpus may meet: Python ints where the C has doubles
INT_REASONS = ("returns an int", "integer arithmetic", "returns a value that is an int or a",
               "negates a value that is an int or a float", "with a Python int that is not",
               "with an int that is not a constant")


def _block(fn, n_in, n_out, needs_time, name="f"):
    return FunctionBlock(name, fn, inputs=[f"u{j}" for j in range(n_in)],
                         outputs=[f"y{j}" for j in range(n_out)], needs_time=needs_time)


def _rows(rng, n_args, n=1000):
    rows = rng.choice(SPECIAL, size=(n // 2, n_args))
    scales = 10.0 ** rng.integers(-6, 7, size=(n - n // 2, n_args))
    rand = rng.uniform(-1, 1, size=(n - n // 2, n_args)) * scales
    return np.vstack([rows, rand])


def _python(fn, row, n_out):
    try:
        with np.errstate(all="ignore"):
            y = fn(*(float(v) for v in row))  # the core blocks give Python floats
    except (ArithmeticError, ValueError):
        return None
    return [float(v) for v in (y if n_out > 1 else (y,))]


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _translates(b) -> bool:
    return why_no_c_form(b) == ""


# ------------------------------------------------------------- the functions' C
@pytest.mark.parametrize("seed", range(4))
def test_generated_functions_c_equals_python_bit_for_bit(seed, tmp_path):
    """100 generated functions per seed, each over 1000 argument rows."""
    corpus = corpus_module(100 + seed, 100, tmp_path)
    blocks = [_block(fn, n_in, n_out, nt, f"f{i}")
              for i, (fn, n_in, n_out, nt) in enumerate(corpus)]
    ok = [b for b in blocks if _translates(b)]
    refused = [why_no_c_form(b) for b in blocks if not _translates(b)]
    # what is refused is only what the translation documents: int or bool results
    for why in refused:
        assert any(w in why for w in INT_REASONS), why
    assert len(ok) >= 85, refused
    runs = compile_blocks(ok)
    rng = np.random.default_rng(seed)
    checked = failed = 0
    for b, run in zip(ok, runs, strict=True):
        n_args = len(b.in_ports) + int(b.needs_time)
        rows = _rows(rng, n_args)
        out, err = run(rows)
        for r, row in enumerate(rows):
            want = _python(b.fn, row, len(b.out_ports))
            if want is None:
                assert err[r], (b.name, row, "Python raises, the C does not fail")
                failed += 1
                continue
            assert not err[r], (b.name, row, "the C fails, Python does not")
            for k, w in enumerate(want):
                assert _same(out[r, k], w), (b.name, row, k, out[r, k], w)
            checked += 1
    assert checked > 50_000 and failed > 100, (checked, failed)


# ------------------------------------------------------------- in diagrams
def _exact(py, c):
    """Identical times and signals, bit for bit (NaN where NaN, the sign of zeros)."""
    assert np.array_equal(py.time, c.time)
    assert set(py.signals) == set(c.signals)
    for k in py.signals:
        a, b = np.asarray(py[k], dtype=float), np.asarray(c[k], dtype=float)
        assert a.shape == b.shape, k
        nan = np.isnan(a)
        assert np.array_equal(nan, np.isnan(b)), k
        assert np.array_equal(a[~nan], b[~nan]), (k, np.max(np.abs(a[~nan] - b[~nan])))
        assert np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan])), k


def _diagram_maker(seed, folder, n_fn=8):
    """A diagram of ``n_fn`` generated functions fed by sources, gains and an integrator
    whose input is the (saturated) first output of the last function."""
    corpus = corpus_module(200 + seed, 3 * n_fn, folder)

    def make():
        rng = np.random.default_rng(seed)
        b = DiagramBuilder(f"fb{seed}")
        sigs = []
        for i, src in enumerate((bl.Sine(f"s{0}", float(rng.uniform(0.5, 3)),
                                         float(rng.uniform(0.5, 4)), float(rng.uniform(0, 3))),
                                 bl.Ramp("r", float(rng.uniform(-2, 2)), 0.1,
                                         float(rng.uniform(-1, 1))),
                                 bl.Step("st", 0.2, float(rng.uniform(-2, 2)), 0.5),
                                 bl.Constant("c", float(rng.uniform(-3, 3))))):
            b.add(src)
            sigs.append(f"{src.name}.y")
            del i
        b.add(bl.Integrator("int", float(rng.uniform(-1, 1))))
        b.add(bl.Saturation("sat", -5.0, 5.0))
        b.add(bl.Gain("g", float(rng.uniform(-2, 2))))
        b.connect("sat.y", "int.u")
        b.connect("int.y", "g.u")
        sigs += ["int.y", "g.y"]
        placed = 0
        last = None
        for i, (fn, n_in, n_out, nt) in enumerate(corpus):
            blk = _block(fn, n_in, n_out, nt, f"f{i}")
            if not _translates(blk):
                continue
            b.add(blk)
            for p in blk.in_ports:
                b.connect(sigs[int(rng.integers(len(sigs)))], f"{blk.name}.{p.name}")
            sigs += [f"{blk.name}.{p.name}" for p in blk.out_ports]
            last = f"{blk.name}.{blk.out_ports[0].name}"
            placed += 1
            if placed == n_fn:
                break
        b.connect(last, "sat.u")
        return b.build()
    return make


@pytest.mark.parametrize("seed", range(24))
def test_generated_function_blocks_in_diagrams_compiled_equal_the_python_loop(seed, tmp_path):
    make = _diagram_maker(seed, tmp_path)
    kw = dict(solver=["rk4", "heun", "euler", "midpoint"][seed % 4], dt=1e-3,
              fuse_linear=False)
    try:
        Simulator(make(), compiled=False, **kw).run(0.3)
    except Exception as exc:  # noqa: BLE001 - the Python loop's own error: the C's too
        with pytest.raises(type(exc)) as got:
            Simulator(make(), compiled=True, **kw).run(0.3)
        assert str(got.value) == str(exc)
        return
    py, c = run_both(make, 0.3, **kw) if _finite(make, kw) else _both_nan(make, kw)
    _exact(py, c)


def _finite(make, kw) -> bool:
    r = Simulator(make(), compiled=False, **kw).run(0.3)
    return all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in r.signals.values())


def _both_nan(make, kw):
    """Signals with NaN or inf (``run_both``'s 1e-12 comparison takes finite ones): the two
    runs, the C one really C."""
    py = Simulator(make(), compiled=False, **kw).run(0.3)
    c = Simulator(make(), compiled=True, **kw).run(0.3)
    assert c.diagnostics["compiled"] is True
    return py, c
