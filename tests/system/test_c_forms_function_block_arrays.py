"""FunctionBlocks with small float64 array ports translated to C
(:mod:`cosim.codegen.pyfunc_arrays`): a generated corpus of functions over arrays of 1-6
elements equal to Python bit for bit over many argument rows (failing where Python raises),
generated diagrams run in C equal to the Python loop bit for bit, the example diagrams'
functions (lim_manipulator's actuator, crane_vessel_6dof's mooring), and the refusals."""

from __future__ import annotations

import inspect
import math
import shutil

import numpy as np
import pytest

import blocks as bl
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.codegen import why_no_c_form
from cosim.codegen.pyfunc import translate
from tests.corpus.compiled_oracle import run_both
from tests.corpus.pyfunc_array_corpus import array_corpus_module, compile_array_blocks
from tests.system.test_c_forms_function_block import INT_REASONS, SPECIAL, _exact, _same

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def _ports(prefix, sizes):
    return [f"{prefix}{j}" if s is None else {"name": f"{prefix}{j}", "shape": (s,)}
            for j, s in enumerate(sizes)]


def _block(fn, ins, outs, name="f"):
    return FunctionBlock(name, fn, inputs=_ports("u", ins), outputs=_ports("y", outs))


def _rows(rng, width, n=600):
    rows = rng.choice(SPECIAL, size=(n // 3, width))
    scales = 10.0 ** rng.integers(-4, 5, size=(n - n // 3, width))
    return np.vstack([rows, rng.uniform(-1, 1, size=(n - n // 3, width)) * scales])


def _args(row, sizes):
    out, off = [], 0
    for s in sizes:
        if s is None:
            out.append(float(row[off]))  # the core blocks give Python floats
            off += 1
        else:
            out.append(np.array(row[off:off + s], dtype=np.float64))
            off += s
    return out


def _python(fn, row, ins, outs):
    """Python's flattened outputs, or None where it raises."""
    try:
        with np.errstate(all="ignore"):
            y = fn(*_args(row, ins))
    except (ArithmeticError, ValueError, IndexError):
        return None
    ys = y if len(outs) > 1 else (y,)
    flat = []
    for v, s in zip(ys, outs, strict=True):
        if s is None:
            assert not isinstance(v, np.ndarray), "the generator returns an array for a scalar"
            flat.append(float(v))
        else:  # the C's arrays are what NumPy returns: float64 of the output's shape
            assert isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == (s,)
            flat.extend(float(e) for e in v)
    return flat


def _width(sizes):
    return sum(1 if s is None else s for s in sizes)


#: the refusals the generated corpus may meet: Python ints where the C has doubles
ARRAY_INT_REASONS = (*INT_REASONS, "np.array of ints", "array arithmetic (+) with a Python int",
                     "array arithmetic (-) with a Python int",
                     "array arithmetic (*) with a Python int",
                     "array arithmetic (/) with a Python int")


# ------------------------------------------------------------- the functions' C
@pytest.mark.parametrize("seed", range(4))
def test_generated_array_functions_c_equals_python_bit_for_bit(seed, tmp_path):
    """60 generated functions per seed, each over 600 argument rows."""
    corpus = array_corpus_module(300 + seed, 60, tmp_path)
    blocks = [_block(fn, ins, outs, f"f{i}") for i, (fn, ins, outs) in enumerate(corpus)]
    why = [why_no_c_form(b) for b in blocks]
    for w in why:  # refused: only the documented Python ints where the C has doubles
        assert not w or any(r in w for r in ARRAY_INT_REASONS), w
    keep = [k for k, w in enumerate(why) if not w]
    assert len(keep) >= 48, why
    blocks, corpus = [blocks[k] for k in keep], [corpus[k] for k in keep]
    runs = compile_array_blocks(blocks, [c[1] for c in corpus], [c[2] for c in corpus])
    rng = np.random.default_rng(seed)
    checked = failed = conservative = 0
    for b, (fn, ins, outs), run in zip(blocks, corpus, runs, strict=True):
        rows = _rows(rng, _width(ins))
        out, err = run(rows)
        for r, row in enumerate(rows):
            want = _python(fn, row, ins, outs)
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
    print(f"seed {seed}: {len(blocks)} functions, {checked} rows equal, {failed} failing as "
          f"Python raises, {conservative} conservative")
    assert checked > 20_000 and failed > 100, (checked, failed)
    assert conservative < checked / 50, (conservative, checked)


# ------------------------------------------------------------- in diagrams
def _diagram_maker(seed, folder, n_fn=6):
    """Scalar sources, FunctionBlocks making arrays of 1-6 elements of them, then
    ``n_fn`` generated functions fed by signals of their inputs' sizes; the last one's
    first scalar output (saturated) drives an integrator."""
    corpus = array_corpus_module(400 + seed, 4 * n_fn, folder)

    def make():
        rng = np.random.default_rng(seed)
        b = DiagramBuilder(f"fba{seed}")
        sigs: dict = {None: []}
        for src in (bl.Sine("s0", float(rng.uniform(0.5, 3)), float(rng.uniform(0.5, 4))),
                    bl.Ramp("r", float(rng.uniform(-2, 2)), 0.1, float(rng.uniform(-1, 1))),
                    bl.Constant("c", float(rng.uniform(0.5, 3)))):
            b.add(src)
            sigs[None].append(f"{src.name}.y")
        b.add(bl.Integrator("int", float(rng.uniform(0.5, 1))))
        b.add(bl.Saturation("sat", -5.0, 5.0))
        b.connect("sat.y", "int.u")
        sigs[None].append("int.y")
        for n in range(1, 7):
            mux = b.add(FunctionBlock(f"mux{n}", _MUX[n], inputs=[f"u{j}" for j in range(n)],
                                      outputs=[{"name": "y", "shape": (n,)}]))
            for p in mux.in_ports:
                b.connect(sigs[None][int(rng.integers(len(sigs[None])))], p)
            sigs[n] = [f"mux{n}.y"]
        placed, last = 0, None
        for i, (fn, ins, outs) in enumerate(corpus):
            blk = _block(fn, ins, outs, f"f{i}")
            if None not in outs or "bad = " in inspect.getsource(fn) or why_no_c_form(blk):
                continue  # (an index out of range: Python's IndexError at every step)
            b.add(blk)
            for p, s in zip(blk.in_ports, ins, strict=True):
                b.connect(sigs[s][int(rng.integers(len(sigs[s])))], p)
            for p, s in zip(blk.out_ports, outs, strict=True):
                sigs.setdefault(s, []).append(f"{blk.name}.{p.name}")
            last = f"{blk.name}.{blk.out_ports[outs.index(None)].name}"
            placed += 1
            if placed == n_fn:
                break
        assert placed == n_fn, placed
        b.connect(last, "sat.u")
        return b.build()
    return make


_MUX = {1: lambda a: np.array([a]), 2: lambda a, b: np.array([a, b]),
        3: lambda a, b, c: np.array([a, b, -c]), 4: lambda a, b, c, d: np.array([a, b, c, d]),
        5: lambda a, b, c, d, e: np.array([a, b, c, d, e]),
        6: lambda a, b, c, d, e, f: np.array([a, b, c, d, e, f])}


@pytest.mark.parametrize("seed", range(12))
def test_generated_array_blocks_in_diagrams_compiled_equal_the_python_loop(seed, tmp_path):
    make = _diagram_maker(seed, tmp_path)
    kw = dict(solver=["rk4", "heun", "euler", "midpoint"][seed % 4], dt=1e-3,
              fuse_linear=False)
    try:
        py = Simulator(make(), compiled=False, **kw).run(0.3)
    except Exception as exc:  # noqa: BLE001 - the Python loop's own error: the C's too
        with pytest.raises(type(exc)) as got:
            Simulator(make(), compiled=True, **kw).run(0.3)
        assert str(got.value) == str(exc)
        return
    c = Simulator(make(), compiled=True, **kw).run(0.3)
    assert c.diagnostics["compiled"] is True
    _exact(py, c)


# ------------------------------------------------------------- the examples' functions
def test_lim_manipulator_mechanics_compiled_equals_the_python_loop_bit_for_bit():
    from examples.lim_manipulator import add_mechanics

    def make():
        b = DiagramBuilder("mech")
        _, kin, force = add_mechanics(b)
        b.add(bl.Sine("f", 2000.0, 3.0))
        b.connect("f.y", force.in_ports[0])
        return b.build()
    for name in ("actuator", "actuator_force"):
        assert why_no_c_form(make().find(name)) == ""
    py, c = run_both(make, 0.5, solver="rk4", dt=1e-3)
    _exact(py, c)


def test_crane_vessel_mooring_lambda_translates_with_its_closure_array_frozen():
    import examples.crane_vessel_6dof as cv
    moor = cv.build(waves=False).find("mooring")
    assert why_no_c_form(moor) == ""
    k = cv.mooring_stiffness(cv.barge())

    def make():
        b = DiagramBuilder("moor")
        pos = b.add(FunctionBlock("pos", lambda a: np.array([a, -2.0 * a, 0.5]),
                                  inputs=["u"], outputs=[{"name": "y", "shape": (3,)}]))
        b.add(bl.Sine("s", 3.0, 0.7))
        b.add(bl.Ramp("r", 0.1))
        m = b.add(FunctionBlock("mooring", moor.fn, inputs=[
            {"name": "position", "shape": (3,)}, "heading"],
            outputs=[{"name": "force", "shape": (3,)}, {"name": "moment", "shape": (3,)}]))
        b.connect("s.y", pos.in_ports[0])
        b.connect("pos.y", m.in_ports[0])
        b.connect("r.y", m.in_ports[1])
        return b.build()
    py, c = run_both(make, 0.2, dt=1e-3)
    _exact(py, c)
    assert np.array_equal(c["mooring.force"][:, 0], -k[0] * c["pos.y"][:, 0])


# ------------------------------------------------------------- refusals
def f_sum(p):
    return np.sum(p)


def f_dot(p):
    return np.dot(p, p)


def f_matmul(p):
    return p @ p


def f_slice(p):
    return p[0:2]


def f_var_index(p, u):
    return p[math.floor(u)]


def f_pow(p):
    return p ** 2


def f_aug(p):
    p += 1.0
    return p


def f_cmp(p):
    return 1.0 if p > 0.0 else 0.0


def f_int_array(p):
    return np.array([1, 2]) * p


def f_2d(p):
    return np.array([p, p])


def f_exp(p):
    return np.exp(p)


def f_norm(p):
    return np.linalg.norm(p)


def f_shape(p):
    return p + np.array([1.0, 2.0, 3.0])


def f_scalar_out(p):
    return p * 2.0


KA2 = np.zeros((2, 2))


def f_global_2d(p):
    return p * KA2[0, 0]


REFUSED = [  # (fn, inputs, outputs, the reason's words)
    (f_sum, [2], [None], "calls np.sum (line "),
    (f_dot, [2], [None], "calls np.dot (line "),
    (f_norm, [2], [None], "calls np.norm (line "),
    (f_matmul, [2], [None], "@ (a reduction"),
    (f_slice, [2], [2], "a slice (x[a:b])"),
    (f_var_index, [2, None], [None], "an index that is not a constant integer"),
    (f_pow, [2], [2], "the operator Pow with an array"),
    (f_aug, [2], [2], "an augmented assignment (+=, ...) of an array"),
    (f_cmp, [2], [None], "uses a float64 array as a number"),
    (f_int_array, [2], [2], "np.array of ints"),
    (f_2d, [2], [2], "np.array of arrays (a 2-D array)"),
    (f_exp, [2], [2], "calls np.exp (line "),
    (f_shape, [2], [2], "arrays of shapes (2,) and (3,), which do not broadcast"),
    (f_scalar_out, [2], [None], "returns an array for a scalar output"),
    (f_scalar_out, [None], [2], "returns a float for an array output of shape (2,)"),
    (f_scalar_out, [3], [2], "returns an array of shape (3,) for an output of shape (2,)"),
    (f_global_2d, [2], [2], "an array of shape (2, 2)"),
    (lambda p: np.zeros(2) + p, [2], [2], "calls np.zeros (line "),
    (f_scalar_out, [17], [17], "only scalar ports and 1-D arrays of 1 to 16 elements"),
]


@pytest.mark.parametrize("case", range(len(REFUSED)))
def test_what_does_not_translate_is_named_with_its_line(case):
    fn, ins, outs, words = REFUSED[case]
    why = why_no_c_form(_block(fn, ins, outs))
    assert words in why, why


def test_an_index_out_of_range_fails_the_c_where_python_raises_index_error():
    def make():
        b = DiagramBuilder("oob")
        b.add(bl.Sine("s", 1.0, 1.0))
        m = b.add(FunctionBlock("m", _MUX[2], inputs=["a", "b"],
                                outputs=[{"name": "y", "shape": (2,)}]))
        f = b.add(FunctionBlock("f", lambda p: p[2], inputs=[{"name": "p", "shape": (2,)}]))
        b.connect("s.y", m.in_ports[0])
        b.connect("s.y", m.in_ports[1])
        b.connect("m.y", f.in_ports[0])
        return b.build()
    assert why_no_c_form(make().find("f")) == ""
    with pytest.raises(Exception) as py:
        Simulator(make(), dt=1e-3, compiled=False).run(0.01)
    with pytest.raises(type(py.value)) as c:
        Simulator(make(), dt=1e-3, compiled=True).run(0.01)
    assert str(c.value) == str(py.value) and "index 2 is out of bounds" in str(py.value)


def test_a_changed_global_array_is_translated_again():
    """A frozen array is valid while it holds the same values (changed in place too)."""
    blk = _block(lambda p: p * KB_G[1], [2], [2])
    try:
        first = "\n".join(translate(blk).lines)
        KB_G[1] = 3.0
        second = "\n".join(translate(blk).lines)
        assert "2.0" in first and "3.0" in second and "2.0" not in second
    finally:
        KB_G[1] = 2.0


KB_G = np.array([1.0, 2.0])


def test_special_values_per_element_equal_numpy():
    """Each element-wise operation alone over the special values (zeros' signs, inf, NaN)."""
    fns = [lambda p, q: p + q, lambda p, q: p - q, lambda p, q: p * q, lambda p, q: p / q,
           lambda p, q: -p, lambda p, q: np.sqrt(p), lambda p, q: np.abs(p),
           lambda p, q: np.floor(p), lambda p, q: np.ceil(p), lambda p, q: p / q[0],
           lambda p, q: q[-1] * p, lambda p, q: np.array([p[0], q[1], 2.0]) / q]
    blocks = [_block(fn, [3, 3], [3], f"g{i}") for i, fn in enumerate(fns)]
    for b in blocks:
        assert why_no_c_form(b) == "", why_no_c_form(b)
    runs = compile_array_blocks(blocks, [[3, 3]] * len(fns), [[3]] * len(fns))
    sp = np.array(SPECIAL)
    rows = np.array([[a, b, a, b, a, b] for a in sp for b in sp])
    for b, fn, run in zip(blocks, fns, runs, strict=True):
        out, err = run(rows)
        assert not err.any()
        for r, row in enumerate(rows):
            want = _python(fn, row, [3, 3], [3])
            assert all(_same(out[r, k], w) for k, w in enumerate(want)), (b.name, row)
    assert math.isnan(SPECIAL[17])


def test_the_flagship_mechanics_subsystem_runs_in_c_equal_to_the_python_loop():
    """examples/flagship_model.py's ``mechanics_diagram`` (the LIM boom and actuator) as a
    DiagramSubsystem under a master: in C, equal to its Python loop bit for bit."""
    from cosim import DiagramSubsystem, Jacobi, MasterScheduler
    from examples import flagship_model as fm

    def source():
        b = DiagramBuilder("src")
        s = b.add(bl.Sine("f", 2000.0, 3.0))
        b.export_output(s.y, "f_h")
        return b.build()

    def master(compiled):
        subs = [DiagramSubsystem(fm.mechanics_diagram(), solver="rk4", dt=1e-3,
                                 compiled=compiled, name="mech"),
                DiagramSubsystem(source(), solver="rk4", dt=1e-3, compiled=compiled,
                                 name="src")]
        return MasterScheduler(subs, [("src.f_h", "mech.f_h")], 2e-3, coupling=Jacobi()), subs
    (m0, _), (m1, subs) = master(False), master(True)
    r0, r1 = m0.run(0.3), m1.run(0.3)
    assert [s.sim.route.diagnostic() for s in subs] == [True, True]
    for k in ("mech.s", "mech.sd"):
        assert np.array_equal(np.asarray(r0[k]), np.asarray(r1[k])), k


def test_array_function_blocks_export_as_an_fmu(tmp_path):
    """The FMU export (same generator, another process) takes array ports too."""
    pytest.importorskip("fmpy")
    from fmus.export import export_fmu
    from tests.unit.fmus.test_cgen_export import max_err, simulate_fmu_cs, simulate_ref

    def force(f, p):
        d = np.array([p[0] - 0.5, p[-1]])
        return f * d / math.hypot(d[0], d[1])

    b = DiagramBuilder("fbax")
    b.add(bl.Integrator("i", 0.1))
    b.add(FunctionBlock("m", _MUX[2], inputs=["a", "b"], outputs=[{"name": "y", "shape": (2,)}]))
    b.add(FunctionBlock("f", force, inputs=["f", {"name": "p", "shape": (2,)}],
                        outputs=[{"name": "y", "shape": (2,)}]))
    b.add(FunctionBlock("g", lambda v: v[0] - 2.0 * v[1], inputs=[{"name": "v", "shape": (2,)}]))
    b.connect("i.y", "m.a")
    b.connect("i.y", "f.f")
    b.connect("m.y", "f.p")
    b.connect("f.y", "g.v")
    b.connect("g.y", "i.u")
    b.export_input("m.b", "u")
    b.export_output("g.y", "y")
    d = b.build()
    for name in ("m", "f", "g"):
        assert why_no_c_form(d.find(name)) == ""
    inp = {"u": lambda t: 1.0 + math.sin(3.0 * t)}
    path = export_fmu(d, tmp_path / "fbax.fmu", "2.0", step=1e-3, fuse_linear=False)
    got = simulate_fmu_cs(path, inp, 1.0, 0.01, ["y"], {"y": ()})
    ref = simulate_ref(d, inp, 1.0, 0.01, 1e-3, ["y"], fuse_linear=False)
    assert np.ptp(ref["y"]) > 0.1  # a signal that moves
    assert max_err(got, ref) == 0.0
