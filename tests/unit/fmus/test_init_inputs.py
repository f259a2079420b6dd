"""Issue 31 items 1 and 4: inputs are set in Initialization Mode, on every interface.

The corpus is the steady-state lag (:mod:`tests.unit.fmus.init_lag_fmu`: ``x(0) = K u(0)``
computed in Initialization Mode): FMI 2 and 3, Co-Simulation (master of
``FMUSubsystem``) and Model Exchange (``FMUBlock`` in a diagram), chains of 1-3 lags with and
without direct feedthrough, and an algebraic loop at initialization.  Exact answer: the
system starts at its equilibrium and stays there, so every output is constant.  Single
FMUs are also compared with ``fmpy.simulate_fmu(input=...)``.  Before the fix a master
set the inputs after ``exitInitializationMode``: y(0) = 0 instead of K u.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocks.sources import Constant
from cosim import DiagramBuilder, MasterScheduler
from cosim.coupling import GaussSeidel, Jacobi
from cosim.errors import NotADiagramError
from cosim.simulator import simulate
from cosim.subsystem import DiagramSubsystem
from tests.unit.fmus.init_lag_fmu import build, build_container, build_python

pytest.importorskip("fmpy")

U0 = 2.0
#: (K, D) of each lag in a chain; steady state y = (K + D) u
CHAINS = {1: [(1.5, 0.0)], 2: [(1.5, 0.0), (-0.5, 0.25)], 3: [(1.5, 0.0), (0.5, 0.0),
                                                            (2.0, 0.5)]}


@pytest.fixture(scope="module")
def lags(tmp_path_factory):
    root = tmp_path_factory.mktemp("init_lags")
    cache: dict = {}

    def get(fmi: int, K: float, D: float, name: str):
        """The lag FMU file and the parameters that make it ``(K, D)``."""
        key = (fmi, bool(D), name)
        if key not in cache:
            cache[key] = build(root / f"{fmi}_{bool(D)}_{name}", fmi=fmi,
                               feedthrough=bool(D), name=name)
        return cache[key], {"K": K, "D": D}
    return get


def _load(lags, fmi, K, D, name, itf):
    from fmus import load_fmu
    path, params = lags(fmi, K, D, name)
    return load_fmu(path, interface=itf, name=name, parameters=params)


def _source(value: float = U0) -> DiagramSubsystem:
    b = DiagramBuilder("src")
    c = b.add(Constant("c", value))
    b.export_output(c.y, "y")
    return DiagramSubsystem(b.build(), solver="euler", dt=0.01)


def _exact(chain: list) -> list:
    out, u = [], U0
    for K, D in chain:
        u = (K + D) * u
        out.append(u)
    return out


@pytest.mark.parametrize("coupling", ["jacobi", "gauss_seidel"])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("fmi", [2, 3])
def test_a_master_sets_inputs_in_initialization_mode(lags, fmi, n, coupling):
    chain = CHAINS[n]
    subs = [_source()]
    conns = []
    prev = "src.y"
    for i, (K, D) in enumerate(chain):
        name = f"lag{i}"
        subs.append(_load(lags, fmi, K, D, name, "cs"))
        conns.append((prev, f"{name}.u"))
        prev = f"{name}.y"
    # shuffled: the master orders by the initial dependencies, not by the list
    subs = subs[::-1]
    cpl = Jacobi() if coupling == "jacobi" else GaussSeidel()
    res = MasterScheduler(subs, conns, 0.01, coupling=cpl).run(0.2)
    for i, want in enumerate(_exact(chain)):
        y = res[f"lag{i}.y"]
        assert np.max(np.abs(y - want)) < 1e-12, (i, y[:3], want)


def _random_chain(seed: int) -> list:
    """``[(fmi, K, D, interface options)]`` of 1-3 lags, FMI versions mixed."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    return [(int(rng.choice([2, 3])), float(np.round(rng.uniform(-2, 2), 3)),
             float(np.round(rng.uniform(-1, 1), 3)) if rng.random() < 0.5 else 0.0)
            for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_generated_chains_in_a_master_and_in_a_diagram_start_at_their_fixed_point(lags, seed):
    """Seeded chains: FMI 2 and 3 mixed, random gains, feedthrough or not; the master (CS, in
    a shuffled list) and a diagram (ME) against the exact equilibrium."""
    chain = _random_chain(seed)
    subs, conns, prev = [_source()], [], "src.y"
    b = DiagramBuilder("d")
    blocks = []
    for i, (fmi, K, D) in enumerate(chain):
        subs.append(_load(lags, fmi, K, D, f"lag{i}", "cs"))
        conns.append((prev, f"lag{i}.u"))
        prev = f"lag{i}.y"
        blocks.append(b.add(_load(lags, fmi, K, D, f"lag{i}", "me")))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(subs))
    res_cs = MasterScheduler([subs[k] for k in order], conns, 0.01).run(0.1)
    c = b.add(Constant("c", U0))
    b.connect(c.y, blocks[0].inputs["u"])
    for a, z in zip(blocks, blocks[1:]):
        b.connect(a.outputs["y"], z.inputs["u"])
    res_me = simulate(b.build(), 0.1, dt=0.01)
    for i, want in enumerate(_exact([(K, D) for _, K, D in chain])):
        assert np.max(np.abs(res_cs[f"lag{i}.y"] - want)) < 1e-12, (chain, i)
        assert np.max(np.abs(res_me[f"lag{i}.y"] - want)) < 1e-9, (chain, i)


def test_a_chain_out_of_process_sets_inputs_in_initialization_mode(lags):
    from fmus import load_fmu
    subs, conns, prev = [_source()], [], "src.y"
    for i, (K, D) in enumerate(CHAINS[2]):
        path, params = lags(3, K, D, f"lag{i}")
        subs.append(load_fmu(path, interface="cs", name=f"lag{i}", parameters=params,
                             out_of_process=True))
        conns.append((prev, f"lag{i}.u"))
        prev = f"lag{i}.y"
    try:
        res = MasterScheduler(subs[::-1], conns, 0.01).run(0.05)
    finally:
        for s in subs[1:]:
            s.free()
    for i, want in enumerate(_exact(CHAINS[2])):
        assert np.max(np.abs(res[f"lag{i}.y"] - want)) < 1e-12


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("fmi", [2, 3])
def test_fmu_blocks_in_a_diagram_start_from_their_inputs(lags, fmi, n):
    chain = CHAINS[n]
    b = DiagramBuilder("d")
    blocks = [b.add(_load(lags, fmi, K, D, f"lag{i}", "me"))
              for i, (K, D) in reversed(list(enumerate(chain)))][::-1]
    c = b.add(Constant("c", U0))  # added last
    b.connect(c.y, blocks[0].inputs["u"])
    for a, z in zip(blocks, blocks[1:]):
        b.connect(a.outputs["y"], z.inputs["u"])
    res = simulate(b.build(), 0.2, dt=0.01)
    for i, want in enumerate(_exact(chain)):
        y = res[f"lag{i}.y"]
        assert np.max(np.abs(y - want)) < 1e-9, (i, y[:3], want)


@pytest.mark.parametrize("loop_solver", ["newton", "broyden", "fixed_point"])
@pytest.mark.parametrize("fmi", [2, 3])
def test_an_algebraic_loop_at_initialization_is_iterated(lags, fmi, loop_solver):
    """u1 = c + a y2, u2 = y1: no feedthrough in Step Mode, a loop in Initialization Mode
    (x1 = K1 u1, x2 = K2 u2).  Fixed point x1 = K1 c / (1 - a K1 K2), an equilibrium."""
    K1, K2, a, c = 1.5, 0.5, 0.5, 1.0  # loop gain a K1 K2 = 0.375
    s1 = _load(lags, fmi, K1, 0.0, "A", "cs")
    s2 = _load(lags, fmi, K2, 0.0, "B", "cs")
    m = MasterScheduler([_source(0.0), s1, s2], [("B.y", "A.u", (a, c)), ("A.y", "B.u")],
                        0.01, loop_solver=loop_solver)
    res = m.run(0.2)
    x1 = K1 * c / (1.0 - a * K1 * K2)
    assert np.max(np.abs(res["A.y"] - x1)) < 1e-9
    assert np.max(np.abs(res["B.y"] - K2 * x1)) < 1e-9
    assert m.settler.init_sweeps > 1  # iterated, not one ordered sweep


@pytest.mark.parametrize("fmi", [2, 3])
def test_an_algebraic_loop_at_initialization_in_a_diagram_is_iterated(lags, fmi):
    """The same loop of ME blocks through a Gain and a Sum: fixed-point re-initializations
    until the inputs agree to 1e-13 (before: exact agreement in 10 rounds, never reached)."""
    from blocks.math import Gain, Sum
    K1, K2, a, c = 1.5, 0.5, 0.5, 1.0
    A = _load(lags, fmi, K1, 0.0, "A", "me")
    B = _load(lags, fmi, K2, 0.0, "B", "me")
    b = DiagramBuilder("d")
    for blk in (A, B):
        b.add(blk)
    g, s, k = b.add(Gain("g", a)), b.add(Sum("s", "++")), b.add(Constant("k", c))
    b.connect(B.outputs["y"], g.u)
    b.connect(g.y, s.ins[0])
    b.connect(k.y, s.ins[1])
    b.connect(s.y, A.inputs["u"])
    b.connect(A.outputs["y"], B.inputs["u"])
    res = simulate(b.build(), 0.1, dt=0.01)
    x1 = K1 * c / (1.0 - a * K1 * K2)
    assert np.max(np.abs(res["A.y"] - x1)) < 1e-11
    assert np.max(np.abs(res["B.y"] - K2 * x1)) < 1e-11


@pytest.mark.parametrize("itf", ["cs", "me"])
@pytest.mark.parametrize("fmi", [2, 3])
def test_a_single_lag_agrees_with_fmpy(lags, fmi, itf):
    """FMPy sets the inputs in Initialization Mode (fmpy/simulation.py): y(0) = K u(0)."""
    import fmpy

    K = 1.5
    path, params = lags(fmi, K, 0.0, "Lag")
    t = np.array([0.0, 1.0])
    sig = np.array(list(zip(t, [U0, U0])), dtype=[("time", float), ("u", float)])
    ref = fmpy.simulate_fmu(str(path), stop_time=0.2, output_interval=0.01, input=sig,
                            start_values=params,
                            fmi_type="CoSimulation" if itf == "cs" else "ModelExchange")
    if itf == "cs":
        res = MasterScheduler([_source(), _load(lags, fmi, K, 0.0, "Lag", "cs")],
                              [("src.y", "Lag.u")], 0.01).run(0.2)
    else:
        b = DiagramBuilder("d")
        blk = b.add(_load(lags, fmi, K, 0.0, "Lag", "me"))
        c = b.add(Constant("c", U0))
        b.connect(c.y, blk.inputs["u"])
        res = simulate(b.build(), 0.2, dt=0.01)
    assert ref["y"][0] == pytest.approx(K * U0, abs=1e-12)  # the oracle's own start
    y = np.interp(ref["time"], res.time, res["Lag.y"])
    assert np.max(np.abs(y - ref["y"])) < 1e-9


@pytest.mark.parametrize("fmi", [2, 3])
def test_the_cli_sets_inputs_in_initialization_mode(lags, tmp_path, fmi):
    from cosim.cli import main
    from cosim.writers import read_csv
    path, _ = lags(fmi, 1.5, 0.0, "Lag")
    csv = tmp_path / "u.csv"
    csv.write_text(f"time,u\n0,{U0}\n1,{U0}\n")
    for itf in ("cs", "me"):
        out = tmp_path / itf
        assert main(["fmu", "simulate", str(path), "--input", str(csv), "--stop-time", "0.2",
                     "--set", "K=1.5", "--out", str(out), "-q", "--interface-type", itf]) == 0
        res = read_csv(out / "results.csv")
        assert np.max(np.abs(res["y"] - 1.5 * U0)) < 1e-9, (itf, res["y"][:3])


def test_a_subsystem_used_alone_sets_its_inputs_before_leaving_initialization(lags):
    """initialize, set_inputs, do_step (no master): do_step ends the initialization."""
    sub = _load(lags, 3, 1.5, 0.0, "Lag", "cs")
    sub.initialize(0)
    sub.set_inputs(0.0, {"u": (U0,)})
    sub.do_step(0, 10_000_000)
    assert sub.get_outputs()["y"] == pytest.approx(1.5 * U0, abs=1e-12)


@pytest.fixture(scope="module")
def py_lags(tmp_path_factory):
    """The pythonfmu and pythonfmu3 lags (their initial value set at exitInitializationMode)."""
    pytest.importorskip("pythonfmu")
    pytest.importorskip("pythonfmu3")
    root = tmp_path_factory.mktemp("py_lags")
    return {fmi: build_python(root / str(fmi), fmi=fmi) for fmi in (2, 3)}


@pytest.mark.parametrize("order", ["c_py2_py3", "py3_py2_c", "py2_c_py3"])
def test_a_chain_of_fmus_from_three_exporters_starts_at_its_fixed_point(lags, py_lags, order):
    """The pythonfmu lags compute y(0) only when leaving Initialization Mode: the master ends
    each one's initialization before the next one downstream gets its input."""
    from fmus import load_fmu
    gains = {"c": 1.5, "py2": -0.5, "py3": 2.0}
    kinds = order.split("_")
    subs, conns, prev = [_source()], [], "src.y"
    for i, kind in enumerate(kinds):
        name = f"lag{i}"
        if kind == "c":
            sub = _load(lags, 2, gains[kind], 0.0, name, "cs")
        else:
            sub = load_fmu(py_lags[2 if kind == "py2" else 3], interface="cs", name=name,
                           parameters={"K": gains[kind]})
        subs.append(sub)
        conns.append((prev, f"{name}.u"))
        prev = f"{name}.y"
    res = MasterScheduler(subs[::-1], conns, 0.01).run(0.1)
    want = U0
    for i, kind in enumerate(kinds):
        want *= gains[kind]
        y = res[f"lag{i}.y"]
        assert np.max(np.abs(y - want)) < 1e-12, (order, i, y[:3], want)


@pytest.mark.parametrize("fmi", [2, 3])
def test_a_pythonfmu_lag_agrees_with_fmpy(py_lags, fmi):
    import fmpy

    from fmus import load_fmu
    path = py_lags[fmi]
    t = np.array([0.0, 0.05, 0.05, 1.0])  # u steps from 2 to 1 at t = 0.05
    sig = np.array(list(zip(t, [U0, U0, 1.0, 1.0])), dtype=[("time", float), ("u", float)])
    ref = fmpy.simulate_fmu(str(path), stop_time=0.1, output_interval=0.01, input=sig,
                            start_values={"K": 1.5})
    from blocks.tables import FromArrays
    b = DiagramBuilder("src")
    c = b.add(FromArrays("u", [0.0, 0.05, 0.05, 1.0], [U0, U0, 1.0, 1.0]))
    b.export_output(c.y, "y")
    src = DiagramSubsystem(b.build(), solver="euler", dt=0.01)
    res = MasterScheduler([src, load_fmu(path, interface="cs", name="Lag",
                                         parameters={"K": 1.5})],
                          [("src.y", "Lag.u")], 0.01, extrapolation=0).run(0.1)
    assert ref["y"][0] == pytest.approx(1.5 * U0, abs=1e-12)
    assert np.max(np.abs(res["Lag.y"] - ref["y"])) < 1e-9, (res["Lag.y"][:7], ref["y"][:7])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_container_of_fmus_gets_its_input_in_initialization_mode(tmp_path, n):
    """FMPy's container computes its nested outputs when it leaves Initialization Mode;
    before the fix its y started at 0 and lagged (0.0046 at t = 0.04 s instead of 2)."""
    import fmpy
    pytest.importorskip("fmpy.container_fmu")
    from fmus import load_fmu
    path = build_container(tmp_path, n)
    sig = np.array([(0.0, U0), (1.0, U0)], dtype=[("time", float), ("u", float)])
    ref = fmpy.simulate_fmu(str(path), stop_time=0.1, output_interval=0.01, input=sig)
    res = MasterScheduler([_source(), load_fmu(path, interface="cs", name="C")],
                          [("src.y", "C.u")], 0.01).run(0.1)
    assert np.max(np.abs(ref["y"] - U0)) < 1e-12  # the oracle: exact (K = 1 throughout)
    assert np.max(np.abs(res["C.y"] - ref["y"])) < 1e-12, res["C.y"][:3]


# ------------------------------------------------------------------ item 4
def _objects(lags, tmp_path):
    from fmus import FMU, load_fmu
    path, _ = lags(2, 1.0, 0.0, "Lag")
    me_only = tmp_path / "MEOnly.fmu"
    from tests.fmu_builders import rewrite_fmu
    rewrite_fmu(path, me_only, replace={"modelDescription.xml": (
        '<CoSimulation modelIdentifier="InitLag" canHandleVariableCommunicationStepSize="true"'
        '\n    canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>', "")})
    b = DiagramBuilder("d")
    b.add(Constant("c", 1.0))
    return {
        "FMUBlock of an ME+CS FMU": (load_fmu(path), "interface='CoSimulation'"),
        "FMUBlock of an ME-only FMU": (load_fmu(me_only), "DiagramSubsystem(block"),
        "FMU file object": (FMU(path), "fmu.subsystem()"),
        "path string": (str(path), "load_fmu(path, interface='CoSimulation')"),
        "pathlib.Path": (path, "load_fmu(path, interface='CoSimulation')"),
        "DiagramBuilder": (b, "call build() first"),
        "Diagram": (b.build(), "DiagramSubsystem(diagram"),
        "plain block": (Constant("k", 1.0), "DiagramSubsystem(block"),
        "number": (3, "must be Subsystem objects"),
    }


def test_a_master_refuses_what_is_not_a_subsystem_saying_what_to_give(lags, tmp_path):
    for what, (obj, hint) in _objects(lags, tmp_path).items():
        with pytest.raises(NotADiagramError) as exc:
            MasterScheduler([obj], [], 0.01)
        msg = str(exc.value)
        assert hint in msg, (what, msg)
        assert msg.count(". ") == 0 or what == "number", (what, msg)  # one sentence


def test_a_master_takes_the_co_simulation_interface_when_asked(lags):
    from fmus import FMU, load_fmu
    path, _ = lags(2, 1.0, 0.0, "Lag")
    for sub in (load_fmu(path, interface="CoSimulation", name="Lag"),
                FMU(path).subsystem("Lag"),
                DiagramSubsystem(_wrap(load_fmu(path, name="Lag")), solver="rk4", dt=0.01,
                                 name="Lag")):
        res = MasterScheduler([_source(), sub], [("src.y", "Lag.u")], 0.01).run(0.05)
        assert math.isclose(res["Lag.y"][-1], U0, abs_tol=1e-9), type(sub).__name__


def _wrap(block):
    b = DiagramBuilder("w")
    b.add(block)
    b.export_input(block.inputs["u"], "u")
    b.export_output(block.outputs["y"], "y")
    return b.build()
