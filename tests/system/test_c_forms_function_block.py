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
from tests.corpus.compiled_oracle import run_both
from tests.corpus.pyfunc_corpus import corpus_module
from tests.corpus.pyfunc_harness import compile_blocks

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
    ys = y if n_out > 1 else (y,)
    if any(isinstance(v, complex) for v in ys):
        return None  # a negative number to a fractional power: the C must fail too
    return [float(v) for v in ys]


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
    checked = failed = conservative = 0
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
            if err[r] and translate(b).conservative:  # documented: conservative, safe
                conservative += 1
                continue
            assert not err[r], (b.name, row, "the C fails, Python does not")
            for k, w in enumerate(want):
                assert _same(out[r, k], w), (b.name, row, k, out[r, k], w)
            checked += 1
    assert checked > 50_000 and failed > 100, (checked, failed)
    assert conservative < checked / 100, (conservative, checked)


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
        for src in (bl.Sine("s0", float(rng.uniform(0.5, 3)), float(rng.uniform(0.5, 4)),
                            float(rng.uniform(0, 3))),
                    bl.Ramp("r", float(rng.uniform(-2, 2)), 0.1, float(rng.uniform(-1, 1))),
                    bl.Step("st", 0.2, float(rng.uniform(-2, 2)), 0.5),
                    bl.Constant("c", float(rng.uniform(-3, 3)))):
            b.add(src)
            sigs.append(f"{src.name}.y")
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


def test_a_constant_input_is_not_folded_by_the_c_compiler():
    """GCC folds a C-library call of a constant with MPFR (correctly rounded); glibc, and so
    Python, give another last bit for this one: the C takes an opaque copy."""
    def make():  # a step's levels are literals of the C: the compiler sees the constant
        b = DiagramBuilder("folded")
        b.add(bl.Step("c", 0.0, 0.5310250904285843, 0.5310250904285843))
        b.add(FunctionBlock("f", lambda u: math.expm1(math.tanh(u) * 3.0)))
        b.connect("c.y", "f.u")
        return b.build()
    py, c = run_both(make, 0.01, dt=1e-3)
    _exact(py, c)
    assert float(c["f.y"][-1]) == math.expm1(math.tanh(0.5310250904285843) * 3.0)


# ------------------------------------------------------------- Python's errors
ERRORS = [  # (fn of the ramp u = t - 0.5, which is 0.0 at t = 0.5; Python's error)
    (lambda u: 1.0 / u, "ZeroDivisionError: float division by zero"),
    (lambda u: 2.0 % u, "ZeroDivisionError: float modulo"),
    (lambda u: 2.0 // u, "ZeroDivisionError: float floor division by zero"),
    (lambda u: u ** -1.0, "ZeroDivisionError: 0.0 cannot be raised to a negative power"),
    (lambda u: math.log(-u), "ValueError: math domain error"),
    (lambda u: math.sqrt(-u - 1e-9), "ValueError: math domain error"),
    (lambda u: math.asin(u * 4.0 + 1.0), "ValueError: math domain error"),
    (lambda u: math.exp(2000.0 * u), "OverflowError: math range error"),
    (lambda u: (u + 1.5) ** 2000.0, "OverflowError: (34, 'Numerical result out of range')"),
    (lambda u: math.log(2.0, u + 1.0), "ZeroDivisionError: float division by zero"),
    (lambda u: math.fmod(1.0, u), "ValueError: math domain error"),
    (lambda u: math.cosh(800.0 * (u + 0.5)), "OverflowError: math range error"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_where_python_raises_the_c_fails_and_the_python_loop_raises(case):
    fn, said = ERRORS[case]

    def make():
        b = DiagramBuilder("err")
        b.add(bl.Ramp("r", 1.0, 0.0, -0.5))
        b.add(bl.Sine("s", 1.0, 2.0))
        b.add(bl.Integrator("i", 0.0))
        b.add(FunctionBlock("f", fn))
        b.connect("r.y", "f.u")
        b.connect("s.y", "i.u")
        return b.build()
    errs = []
    for compiled in (False, True):
        with pytest.raises(Exception) as ei:
            Simulator(make(), dt=1e-3, compiled=compiled, fuse_linear=False).run(1.0)
        errs.append(ei.value)
    assert type(errs[0]) is type(errs[1])
    assert str(errs[0]) == str(errs[1]) and said in str(errs[1])  # the Python loop's own
    assert "the C run failed (FunctionBlock 'f' line" in \
        errs[1].results.diagnostics["compiled"], errs[1].results.diagnostics["compiled"]
    _exact(errs[0].results, errs[1].results)


# ------------------------------------------------------------- what has no C form
def helper_fn(x):
    return x


GLOBAL_LIST = [1.0, 2.0]
GLOBAL_FLOAT = 2.5
GLOBAL_NAME = "on"
PARAMS = {"k": 2.5, "n": 3, "name": "on", "arr": np.array([1.0, 2.0])}
GLOBAL_KEY = "k"


class _Params(dict):
    pass


SUB_PARAMS = _Params(k=1.0)


def f_helper(u):
    return helper_fn(u) + 1.0


def f_loop(u):
    s = 0.0
    for _ in range(3):
        s = s + u
    return s


def f_int_out(u):
    return max(0, u)


def f_list(u):
    return u * GLOBAL_LIST[0]


def f_npexp(u):
    return np.exp(u)


def f_bool_out(u):
    return u > 0.0


def f_no_else(u):
    if u > -2.0:
        y = u
    return y


REFUSED = [  # (fn, inputs, outputs, the reason's words)
    (f_helper, ["u"], ["y"], "calls 'helper_fn' (line "),
    (f_loop, ["u"], ["y"], "a for loop (line "),
    (f_int_out, ["u"], ["y"], "returns a value that is an int or a float"),
    (f_list, ["u"], ["y"], "reads 'GLOBAL_LIST', a list, not an int or float constant (line "),
    (lambda u: u if GLOBAL_NAME else 0.0, ["u"], ["y"],
     "reads 'GLOBAL_NAME', a str, not an int or float constant (line "),
    (f_npexp, ["u"], ["y"], "calls np.exp (line "),
    (f_bool_out, ["u"], ["y"], "returns a bool"),
    (f_no_else, ["u"], ["y"], "reads 'y', which an if statement binds on one path only"),
    (lambda u: np.sum(u), [{"name": "u", "shape": 3}], ["y"],
     "calls np.sum (line "),
    (lambda u: (u, u), ["u"], ["y"], "a tuple (line "),
    (eval("lambda u: u"), ["u"], ["y"], "its source is not available"),  # noqa: S307
    (print, ["u"], ["y"], "not a plain function or lambda"),
    (lambda u: u * PARAMS[GLOBAL_KEY], ["u"], ["y"],
     "reads 'PARAMS[...]' with a key that is not a constant string or integer (line "),
    (lambda u: u if PARAMS["name"] else 0.0, ["u"], ["y"],
     "reads 'PARAMS['name']', a str, not an int or float constant (line "),
    (lambda u: u * SUB_PARAMS["k"], ["u"], ["y"], "reads 'SUB_PARAMS', a _Params"),
]


@pytest.mark.parametrize("case", range(len(REFUSED)))
def test_what_does_not_translate_keeps_the_python_loop_and_says_why(case):
    fn, ins, outs, words = REFUSED[case]

    def make():
        b = DiagramBuilder("refused")
        src = b.add(bl.Sine("s", 1.0, 1.0)) if ins == ["u"] or ins == ["u", "v"] else \
            b.add(bl.Constant("s", [1.0, 2.0, 3.0]))
        f = b.add(FunctionBlock("f3", fn, inputs=ins, outputs=outs))
        for p in f.in_ports:
            b.connect(src.y, p)
        return b.build()
    blk = make().find("f3")
    why = why_no_c_form(blk)
    assert words in why, why
    sim = Simulator(make(), dt=1e-3)  # compiled=None: not worth the C for one sine
    sim.initialize()
    assert sim.route.choose(None, count=False, force=True) is None
    assert f"1 block(s) without a C form: 'f3' (FunctionBlock): {why}" in sim.route.reason
    # compiled=True: in C, the block called back in Python (test_compiled_callbacks.py)
    sim = Simulator(make(), dt=1e-3, compiled=True)
    sim.initialize()
    assert sim.route.run is not None and sim.route.run.called_back == ["'f3' (FunctionBlock)"]


def test_an_argument_count_that_does_not_match_the_inputs_is_named():
    blk = FunctionBlock("f3", lambda u, v: u)
    assert why_no_c_form(blk) == "fn takes 2 positional arguments, the block passes 1"


def _sine_into(fn, name: str = "f"):
    """A sine into a FunctionBlock ``name`` of ``fn``."""
    b = DiagramBuilder("sine_into")
    b.add(bl.Sine("s", 1.0, 1.0))
    b.add(FunctionBlock(name, fn))
    b.connect("s.y", f"{name}.u")
    return b.build()


def test_the_reason_reaches_diagnostics_and_a_named_construct_and_line():
    res = Simulator(_sine_into(f_helper, "f3"), dt=1e-3).run(200.0)  # long enough for C
    line = f_helper.__code__.co_firstlineno + 1
    assert res.diagnostics["compiled"] == (
        "1 of its 2 blocks would be called back in Python from the C (1 block(s) without a C "
        f"form: 'f3' (FunctionBlock): calls 'helper_fn' (line {line}), which has no C form): "
        "the C pays from 4 blocks in C per block called back; compiled=True compiles it")


def test_globals_and_closures_are_frozen_at_build_time():
    """A global's value is frozen into the C at build time, as parameters are; a new
    Simulator after the global changed reads the new value (the translation kept for the
    function is checked against the values it read)."""
    global GLOBAL_FLOAT
    k = 3.0

    def fn(u):  # one function for both builds: its kept translation must be checked
        return u * GLOBAL_FLOAT + k

    def make():
        return _sine_into(fn)
    py, c = run_both(make, 0.05, dt=1e-3)
    _exact(py, c)
    old = GLOBAL_FLOAT
    try:
        GLOBAL_FLOAT = -1.0
        py2, c2 = run_both(make, 0.05, dt=1e-3)
        _exact(py2, c2)
        assert not np.array_equal(np.asarray(c2["f.y"]), np.asarray(c["f.y"]))
    finally:
        GLOBAL_FLOAT = old


def test_a_missing_dict_entry_has_no_c_form():
    blk = FunctionBlock("f", lambda u: u * PARAMS["missing"])
    assert why_no_c_form(blk).startswith(
        "reads PARAMS['missing'], which is not in the dict (Python raises KeyError) (line ")


def test_a_dicts_entries_are_frozen_at_build_time_and_followed():
    """``PARAMS["k"]`` (and an array entry) is frozen into the C as a global is; a new
    Simulator after the entry changed reads the new value (the translation kept for the
    function is checked against the entries it read), and both loops agree bit for bit."""
    def fn(u):  # one function for both builds: its kept translation must be checked
        return u * PARAMS["k"] + PARAMS["n"] - PARAMS["arr"][1]

    def make():
        return _sine_into(fn)
    assert why_no_c_form(make().find("f")) == ""
    py, c = run_both(make, 0.05, dt=1e-3)
    _exact(py, c)
    old = PARAMS["k"]
    try:
        PARAMS["k"] = -1.0
        py2, c2 = run_both(make, 0.05, dt=1e-3)
        _exact(py2, c2)
        assert not np.array_equal(np.asarray(c2["f.y"]), np.asarray(c["f.y"]))
    finally:
        PARAMS["k"] = old


def test_a_function_of_the_math_module_itself_and_several_outputs_with_if():
    def two(t, u):
        if u > 0.2:
            return u * t, math.atan2(u, t)
        elif u < -0.5 or t > 0.7:
            if t > 0.9:  # a return on one path only: the other goes on below
                return -u, 0.5
            u = u * 0.5
        else:
            v = u + 1.0
            if v > 1.1:
                u = v
        return max(u, t, 0.1), min((u, 2.0 * t))

    def make():
        b = DiagramBuilder("direct")
        b.add(bl.Sine("s", 1.0, 1.0))
        b.add(FunctionBlock("f", math.tanh))
        b.add(FunctionBlock("g", two, outputs=["a", "b"], needs_time=True))
        b.connect("s.y", "f.u")
        b.connect("f.y", "g.u")
        return b.build()
    py, c = run_both(make, 1.0, dt=1e-3)
    _exact(py, c)


# ------------------------------------------------------------- Numba
def _numba():
    return pytest.importorskip("numba")


def _with(fn, needs_time=False, inputs=("u",)):
    def make():
        b = DiagramBuilder("nb")
        b.add(bl.Sine("s", 1.5, 1.0))
        b.add(bl.Integrator("i", 0.2))
        b.add(bl.Saturation("sat", -2.0, 2.0))
        b.add(FunctionBlock("f", fn, inputs=list(inputs), needs_time=needs_time))
        b.connect("s.y", f"f.{inputs[0]}")
        if len(inputs) > 1:
            b.connect("i.y", f"f.{inputs[1]}")
        b.connect("f.y", "sat.u")
        b.connect("sat.y", "i.u")
        return b.build()
    return make


def test_a_numba_cfunc_runs_the_same_machine_code_in_c_and_in_the_python_loop():
    numba = _numba()

    @numba.cfunc("float64(float64, float64)")
    def nl(u, x):  # np.tanh: not translatable, but the same machine code in both loops
        return np.tanh(1.05 * u) + 0.3 * x * x - math.exp(-x) / 7.0

    make = _with(nl, inputs=("u", "x"))
    blk = make().find("f")
    assert blk.cfunc is nl and why_no_c_form(blk) == ""
    py, c = run_both(make, 0.5, dt=1e-3, fuse_linear=False)
    _exact(py, c)


def test_an_njit_function_is_compiled_as_a_cfunc_with_the_time():
    numba = _numba()

    @numba.njit
    def nl(t, u):
        return math.sin(3.0 * t) * np.tanh(u)

    make = _with(nl, needs_time=True)
    blk = make().find("f")
    assert blk.cfunc is not None and why_no_c_form(blk) == ""
    py, c = run_both(make, 0.5, dt=1e-3, fuse_linear=False)
    _exact(py, c)


def test_a_cfunc_of_other_types_has_no_c_form_and_no_fmu_can_call_one():
    numba = _numba()

    @numba.cfunc("float32(float32)")
    def single(u):
        return u * 2.0

    assert "only float64 arguments and result" in why_no_c_form(FunctionBlock("f", single))

    @numba.cfunc("float64(float64)")
    def double(u):
        return u * 2.0

    from cosim.codegen.model import CodegenError
    from cosim.codegen.program import Program
    sim = Simulator(_with(double)(), dt=1e-3, compiled=False)
    sim.initialize()
    with pytest.raises(CodegenError, match="machine code lives in this Python process"):
        Program(sim.diagram, sim.ctx).build()


def test_a_source_file_changed_after_import_is_not_translated(tmp_path):
    """The translation reads the file: if it no longer compiles to the function's code, the
    C would compute something else than Python does, so there is no C form."""
    import importlib.util
    path = tmp_path / "edited_fn.py"
    path.write_text("def law(u):\n    return 2.0 * u\n")
    spec = importlib.util.spec_from_file_location("edited_fn", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path.write_text("def law(u):\n    return 3.0 * u\n")  # edited, not re-imported
    import linecache
    linecache.checkcache(str(path))
    assert "does not compile to the function's code" in why_no_c_form(
        FunctionBlock("f", mod.law))


def test_chained_comparisons_evaluate_each_operand_once_and_in_order():
    def chain(u, v):
        if -2.0 < math.sin(u) <= math.cos(v) < abs(u - v) + 0.5 != math.atan(u):
            return u * v
        return u - v if 0.0 < u / (abs(v) + 1.0) < 0.5 else u + v

    def make():
        b = DiagramBuilder("chain")
        b.add(bl.Sine("s", 2.0, 1.3))
        b.add(bl.Ramp("r", 1.5, 0.1, -1.0))
        b.add(FunctionBlock("f", chain, inputs=["u", "v"]))
        b.connect("s.y", "f.u")
        b.connect("r.y", "f.v")
        return b.build()
    py, c = run_both(make, 2.0, dt=1e-3)
    _exact(py, c)
    vals = np.asarray(py["f.y"])
    assert len(np.unique(np.round(vals / (np.abs(vals) + 1e-9), 3))) > 2  # branches taken


def test_a_translated_function_block_exports_as_an_fmu(tmp_path):
    """The FMU export (same generator, another process) takes the translation too."""
    pytest.importorskip("fmpy")
    from fmus.export import export_fmu
    from tests.unit.fmus.test_cgen_export import max_err, simulate_fmu_cs, simulate_ref

    def law(u, x):
        if u > 0.3:
            return math.tanh(2.0 * u) - x ** 2 % 0.7
        return max(u, -0.5) * math.exp(-x)

    b = DiagramBuilder("fbx")
    b.add(bl.Integrator("i", 0.1))
    b.add(FunctionBlock("f", law, inputs=["u", "x"]))
    b.connect("i.y", "f.x")
    b.connect("f.y", "i.u")
    b.export_input("f.u", "u")
    b.export_output("f.y", "y")
    d = b.build()
    inp = {"u": lambda t: math.sin(3.0 * t)}
    path = export_fmu(d, tmp_path / "fbx.fmu", "2.0", step=1e-3, fuse_linear=False)
    got = simulate_fmu_cs(path, inp, 2.0, 0.01, ["y"], {"y": ()})
    ref = simulate_ref(d, inp, 2.0, 0.01, 1e-3, ["y"], fuse_linear=False)
    assert max_err(got, ref) == 0.0


# ------------------------------------------------------------- each operation alone
OPS1 = [  # one argument
    lambda x: x ** 2, lambda x: x ** 0.5, lambda x: x ** 3, lambda x: x ** -1,
    lambda x: x ** -0.5, lambda x: x ** 1.5, lambda x: 2.0 ** x, lambda x: (-2.0) ** x,
    lambda x: x % 0.7, lambda x: x // 0.7, lambda x: x % -1.3, lambda x: x // -1.3,
    lambda x: 1.0 / x, lambda x: -x, lambda x: abs(x), lambda x: float(x),
    lambda x: math.sin(x), lambda x: math.cos(x), lambda x: math.tan(x),
    lambda x: math.asin(x), lambda x: math.acos(x), lambda x: math.atan(x),
    lambda x: math.sinh(x), lambda x: math.cosh(x), lambda x: math.tanh(x),
    lambda x: math.asinh(x), lambda x: math.acosh(x), lambda x: math.atanh(x),
    lambda x: math.exp(x), lambda x: math.expm1(x), lambda x: math.log(x),
    lambda x: math.log(x, 3.0), lambda x: math.log(7.0, x), lambda x: math.log2(x),
    lambda x: math.log10(x), lambda x: math.log1p(x), lambda x: math.sqrt(x),
    lambda x: math.fabs(x), lambda x: math.floor(x) * 1.0, lambda x: math.ceil(x) * 1.0,
    lambda x: -math.floor(x) * 1.0, lambda x: np.sqrt(x), lambda x: np.abs(x),
    lambda x: np.floor(x), lambda x: np.ceil(x), lambda x: np.fabs(x),
    lambda x: max(x, 0.0), lambda x: min(0.0, x), lambda x: max(0.0, x, -x),
    lambda x: math.pi * x, lambda x: 1 / 2 * x, lambda x: x if x else 2.0,
    lambda x: np.sqrt(x) / 0.0 if x > 1e300 else x,
]
OPS2 = [  # two arguments
    lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
    lambda x, y: x ** y, lambda x, y: x % y, lambda x, y: x // y, lambda x, y: max(x, y),
    lambda x, y: min(x, y), lambda x, y: max((y, x)), lambda x, y: math.atan2(x, y),
    lambda x, y: math.hypot(x, y), lambda x, y: math.copysign(x, y),
    lambda x, y: math.fmod(x, y), lambda x, y: math.log(x, y), lambda x, y: np.minimum(x, y),
    lambda x, y: np.maximum(x, y), lambda x, y: np.copysign(x, y),
    lambda x, y: np.sqrt(x) ** y, lambda x, y: np.abs(x) % y, lambda x, y: np.floor(x) // y,
    lambda x, y: float(x < y) - float(x >= y), lambda x, y: x if x == y else y,
    lambda x, y: x if not (x < y or y != y) else y, lambda x, y: x if -1.0 < x <= y else y,
]


@pytest.mark.parametrize("n_args", [1, 2])
def test_each_operation_and_function_alone_equals_python_bit_for_bit(n_args):
    """``x ** 2``, ``x ** 0.5``, ``%``, ``//``, every math and NumPy function taken, min/max
    with NaN, over 20,000 values each (special values: signed zeros, infinities, NaN,
    extremes, subnormals; random values of every scale)."""
    ops = OPS1 if n_args == 1 else OPS2
    blocks = [FunctionBlock(f"op{i}", fn, inputs=[f"u{j}" for j in range(n_args)])
              for i, fn in enumerate(ops)]
    for b in blocks:
        assert _translates(b), (b.name, why_no_c_form(b))
    rng = np.random.default_rng(n_args)
    special = np.array(SPECIAL + [2.2250738585072014e-308, -5e-324, 0.25, 1e-16, 709.78,
                                  710.0, -745.2, 0.9999999999999999, 1.0000000000000002])
    grid = np.stack(np.meshgrid(*[special] * n_args), axis=-1).reshape(-1, n_args)
    scales = 10.0 ** rng.uniform(-310, 309, size=(20_000, n_args))
    rand = np.where(rng.random((20_000, n_args)) < 0.5, -1.0, 1.0) * scales
    rows = np.vstack([grid, rand, rng.uniform(-4, 4, size=(20_000, n_args))])
    for b, run in zip(blocks, compile_blocks(blocks), strict=True):
        out, err = run(rows)
        for r, row in enumerate(rows):
            want = _python(b.fn, row, 1)
            if want is None:
                assert err[r], (b.name, row, "Python raises, the C does not fail")
            elif not (err[r] and translate(b).conservative):  # copysign of a NaN: fails
                assert not err[r], (b.name, row, "the C fails, Python does not")
                assert _same(out[r, 0], want[0]), (b.name, row, out[r, 0], want[0])


def _closed_form_diagram(fn, shape=()):
    b = DiagramBuilder("closed_form")
    src = b.add(bl.ClosedFormSource("w", fn, shape=shape))
    g = b.add(bl.Gain("g", 2.0, shape=shape))
    z = b.add(bl.Integrator("z", [0.0] * shape[0] if shape else 0.0))
    b.connect(src.y, g.u)
    b.connect(g.y, z.u)
    return b.build()


@pytest.mark.parametrize("fn, shape", [
    (lambda t: PARAMS["k"] * (1.0 - math.exp(-(t / 0.3) ** 2)), ()),
    (math.cos, ()),
    (lambda t: np.array([math.sin(t), PARAMS["k"] * t]), (2,)),
])
def test_a_closed_form_source_runs_its_function_in_c(fn, shape):
    """``ClosedFormSource``'s f(t) translates as a FunctionBlock's of the time: in C, not
    called back, bit for bit with the Python loop (linear blocks unfused)."""
    def make():
        return _closed_form_diagram(fn, shape)
    assert why_no_c_form(make().find("w")) == ""
    sim = Simulator(make(), dt=1e-3, compiled=True, fuse_linear=False)
    c = sim.run(0.2)
    assert c.diagnostics["compiled"] is True and not sim.route.run.called_back
    py = Simulator(make(), dt=1e-3, compiled=False, fuse_linear=False).run(0.2)
    _exact(py, c)


def test_a_closed_form_source_that_does_not_translate_is_called_back():
    def make():
        return _closed_form_diagram(lambda t: t * len(GLOBAL_LIST))
    why = why_no_c_form(make().find("w"))
    assert why.startswith("calls 'len' (line "), why
    sim = Simulator(make(), dt=1e-3, compiled=True, fuse_linear=False)
    c = sim.run(0.05)
    assert sim.route.run.called_back == ["'w' (ClosedFormSource)"]
    _exact(Simulator(make(), dt=1e-3, compiled=False, fuse_linear=False).run(0.05), c)
