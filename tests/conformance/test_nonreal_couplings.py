"""Every non-Real FMI type through every coupling path of the master (issue 31, item 2).

A generated corpus, types x paths: the Reference FMUs' Feedthrough (FMI 2: Integer,
Boolean, Enumeration; FMI 3: Int8..UInt64, Boolean, Enumeration; each output equals its
input) chained as

    src (a diagram playing a table) -> A.X_input, A.X_output -> B.X_input,
    B.X_output -> snk (a diagram whose input is of the same type) -> snk.y

under every coupling (Jacobi, Gauss-Seidel, iterative fixed-point / Broyden / Newton),
every loop solver and every extrapolation order.  Non-Real values are held, never
extrapolated or iterated numerically, so the exact answer at each communication point is
the table's value there (the master settles the feedthrough chain at every point): B's
and snk's outputs must equal it exactly, in the port's own type (an Int64 or UInt64 never
passes through float64).
"""

from __future__ import annotations

import numpy as np
import pytest

from cosim import DiagramBuilder, MasterScheduler
from cosim.coupling import GaussSeidel, Iterative, Jacobi
from cosim.function_block import FunctionBlock
from cosim.subsystem import DiagramSubsystem

fmpy = pytest.importorskip("fmpy")

STEP = 0.1
T_END = 1.0
#: per FMI type: the values the source plays (the type's extremes where it has them)
from tests.conformance.nonreal_values import TIMES, VALUES  # noqa: E402

#: the FMI 2 variable of each type (FMI 2 has one Integer)
FMI2 = {"Int32": "Int32", "Boolean": "Boolean", "Enumeration": "Enumeration"}

COUPLINGS = {"jacobi": Jacobi, "gauss_seidel": GaussSeidel,
             "fixed_point": lambda: Iterative("fixed_point"),
             "broyden": lambda: Iterative("broyden"), "newton": lambda: Iterative("newton")}


@pytest.fixture(scope="module")
def feedthrough(reference_fmus) -> dict:
    return {2: reference_fmus[(2, "Feedthrough")], 3: reference_fmus[(3, "Feedthrough")]}


def _dtype(fmu_path, port: str):
    from fmus import FMUSubsystem
    return FMUSubsystem(fmu_path, name="probe").dtypes[port]


def _source(typ: str, dtype, dt=STEP) -> DiagramSubsystem:
    from blocks.tables import FromArrays
    b = DiagramBuilder("src")
    s = b.add(FromArrays("table", TIMES, VALUES[typ], interpolation="previous",
                         dtype=dtype))
    b.export_output(s.y, "y")
    return DiagramSubsystem(b.build(), solver="euler", dt=dt, name="src")


def _sink(dtype) -> DiagramSubsystem:
    b = DiagramBuilder("snk")
    f = b.add(FunctionBlock("pass", lambda u: u, inputs=[{"name": "u", "dtype": dtype}],
                            outputs=[{"name": "y", "dtype": dtype}]))
    b.export_input(f.in_ports[0], "u")
    b.export_output(f.out_ports[0], "y")
    return DiagramSubsystem(b.build(), solver="euler", dt=STEP, name="snk")


def _expected(typ: str, t: np.ndarray) -> list:
    idx = np.searchsorted(TIMES, t + 1e-12, side="right") - 1
    return [VALUES[typ][i] for i in idx]


def _master(path, var: str, typ: str, dtype, coupling: str, **kw) -> MasterScheduler:
    from fmus import FMUSubsystem
    subs = [_source(typ, dtype), FMUSubsystem(path, name="A"), FMUSubsystem(path, name="B"),
            _sink(dtype)]
    conns = [("src.y", f"A.{var}_input"), (f"A.{var}_output", f"B.{var}_input"),
             (f"B.{var}_output", "snk.u")]
    return MasterScheduler(subs, conns, STEP, coupling=COUPLINGS[coupling](), **kw)


def _check(res, var: str, typ: str, dtype) -> None:
    want = _expected(typ, np.asarray(res.time))
    for sig in (f"A.{var}_output", f"B.{var}_output", "snk.y"):
        got = np.asarray(res[sig])
        assert got.dtype == np.dtype(dtype), (sig, got.dtype, dtype)
        assert got.tolist() == want, sig


CASES = ([(3, typ, c) for typ in VALUES for c in COUPLINGS]
         + [(2, typ, c) for typ in FMI2 for c in COUPLINGS])


@pytest.mark.parametrize("fmi,typ,coupling", CASES,
                         ids=[f"fmi{f}-{t}-{c}" for f, t, c in CASES])
def test_type_through_each_coupling(feedthrough, fmi, typ, coupling):
    path = feedthrough[fmi]
    var = typ if fmi == 3 else FMI2[typ]
    dtype = _dtype(path, f"{var}_input")
    res = _master(path, var, typ, dtype, coupling, high_order_start=False).run(T_END)
    _check(res, var, typ, dtype)


@pytest.mark.parametrize("loop_solver", ["newton", "broyden", "fixed_point"])
@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("typ", ["Boolean", "UInt64", "Int8"])
def test_never_extrapolated_any_order_any_loop_solver(feedthrough, typ, order, loop_solver):
    """Orders 2-3 also run the high-order start (waveform relaxation) over held values."""
    path = feedthrough[3]
    dtype = _dtype(path, f"{typ}_input")
    m = _master(path, typ, typ, dtype, "jacobi", extrapolation=order, loop_solver=loop_solver)
    _check(m.run(T_END), typ, typ, dtype)


def test_boolean_only_loop_of_feedthrough(feedthrough):
    """The issue's case: the only coupled signals are Boolean, in an algebraic loop."""
    from fmus import FMUSubsystem
    for fmi, path in feedthrough.items():
        a = FMUSubsystem(path, name="a")
        b = FMUSubsystem(path, name="b", start={"Boolean_input": True})
        m = MasterScheduler([a, b], [("a.Boolean_output", "b.Boolean_input"),
                                     ("b.Boolean_output", "a.Boolean_input")], STEP)
        res = m.run(0.5)
        assert res["a.Boolean_output"].dtype == np.bool_, fmi
        assert res["a.Boolean_output"].tolist() == res["b.Boolean_output"].tolist()


def test_mixed_real_and_every_type_at_once(feedthrough):
    """Real and non-Real couplings together: ``z`` of the loop solve holds the Real ones."""
    from fmus import FMUSubsystem
    path = feedthrough[3]
    start = {f"{t}_input": VALUES[t][1] for t in VALUES}
    start["Float64_continuous_input"] = 2.5
    a = FMUSubsystem(path, name="A", start=start)
    b = FMUSubsystem(path, name="B")
    names = [*VALUES, "Float64_continuous"]
    conns = [(f"A.{n}_output", f"B.{n}_input") for n in names]
    for coupling in ("jacobi", "newton"):
        res = MasterScheduler([a, b], conns, STEP, coupling=COUPLINGS[coupling]()).run(0.5)
        for n in names:
            got = res[f"B.{n}_output"].tolist()
            assert got == [start[f"{n}_input"]] * len(res.time), (coupling, n)


def test_discrete_loop_that_never_settles_is_an_error():
    """A Boolean inverter fed back has no consistent value: an error naming it."""
    from cosim.errors import BuildError
    b = DiagramBuilder("inv")
    f = b.add(FunctionBlock("not", lambda u: not u, inputs=[{"name": "u", "dtype": bool}],
                            outputs=[{"name": "y", "dtype": bool}]))
    b.export_input(f.in_ports[0], "u")
    b.export_output(f.out_ports[0], "y")
    inv = DiagramSubsystem(b.build(), solver="euler", dt=STEP, name="inv")
    for solver in ("newton", "fixed_point"):
        m = MasterScheduler([inv], [("inv.y", "inv.u")], STEP, loop_solver=solver)
        with pytest.raises(BuildError, match="non-Real"):
            m.run(0.5)


# ------------------------------------------------------------------ compiled loop
COUNTER = '''
from pythonfmu import Boolean, Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer, Real


class Counter(Fmi2Slave):
    """Integer, Enumeration-valued, Boolean and Real outputs that change every 0.25 s."""

    author = "cosim tests"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.n = 0
        self.big = 2**31 - 1
        self.option = 1
        self.flag = False
        self.x = 0.0
        for name in ("n", "big", "option"):
            self.register_variable(Integer(name, causality=Fmi2Causality.output,
                                           variability=Fmi2Variability.discrete))
        self.register_variable(Boolean("flag", causality=Fmi2Causality.output,
                                       variability=Fmi2Variability.discrete))
        self.register_variable(Real("x", causality=Fmi2Causality.output))

    def do_step(self, current_time, step_size):
        k = int((current_time + step_size) / 0.25 + 1e-9)
        self.n = k
        self.big = -2**31 + k if k % 2 else 2**31 - 1 - k
        self.option = 1 + k % 2
        self.flag = k % 2 == 1
        self.x = current_time + step_size
        return True
'''


RELAY = '''
from pythonfmu import Boolean, Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer, Real


class Relay(Fmi2Slave):
    """Integer, Boolean and Real inputs copied to its outputs at the end of each step."""

    author = "cosim tests"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.i_in = self.i_out = 0
        self.e_in = self.e_out = 1
        self.b_in = self.b_out = False
        self.r_in = self.r_out = 0.0
        for name in ("i", "e"):
            self.register_variable(Integer(f"{name}_in", causality=Fmi2Causality.input,
                                           variability=Fmi2Variability.discrete))
            self.register_variable(Integer(f"{name}_out", causality=Fmi2Causality.output,
                                           variability=Fmi2Variability.discrete))
        self.register_variable(Boolean("b_in", causality=Fmi2Causality.input,
                                       variability=Fmi2Variability.discrete))
        self.register_variable(Boolean("b_out", causality=Fmi2Causality.output,
                                       variability=Fmi2Variability.discrete))
        self.register_variable(Real("r_in", causality=Fmi2Causality.input))
        self.register_variable(Real("r_out", causality=Fmi2Causality.output))

    def do_step(self, current_time, step_size):
        self.i_out, self.e_out = self.i_in, self.e_in
        self.b_out, self.r_out = self.b_in, self.r_in
        return True
'''


@pytest.fixture(scope="module")
def counter_fmus(tmp_path_factory):
    from tests.fmu_builders import build_pythonfmu
    d = tmp_path_factory.mktemp("counter")
    return build_pythonfmu(COUNTER, d, fmi=2), build_pythonfmu(RELAY, d, fmi=2)


def _counter_master(fmus, compiled, coupling):
    from fmus import FMUSubsystem
    counter, relay = fmus
    subs = [FMUSubsystem(counter, name="cnt"), FMUSubsystem(relay, name="A"),
            FMUSubsystem(relay, name="B")]
    pairs = [("n", "i"), ("flag", "b"), ("option", "e"), ("big", "r")]  # big: Integer -> Real
    conns = [(f"cnt.{o}", f"A.{i}_in") for o, i in pairs]
    conns += [(f"A.{i}_out", f"B.{i}_in") for _, i in pairs]
    return MasterScheduler(subs, conns, STEP, coupling=COUPLINGS[coupling](),
                           compiled=compiled)


@pytest.mark.parametrize("coupling", ["jacobi", "gauss_seidel"])
def test_compiled_loop_carries_integer_and_boolean_exactly(counter_fmus, coupling):
    """FMI 2 Integer, Enumeration-valued and Boolean couplings run in the compiled loop,
    equal to the Python loop bit for bit and to the exact answer (the counter's values,
    held; each relay passes on at the end of a step what it got at its start)."""
    py = _counter_master(counter_fmus, False, coupling).run(2.0)
    c = _counter_master(counter_fmus, True, coupling).run(2.0)
    assert c.diagnostics["compiled"] is True, c.diagnostics["compiled"]
    assert set(py.signals) == set(c.signals)
    for sig in py.signals:
        assert c[sig].dtype == py[sig].dtype, sig
        assert c[sig].tolist() == py[sig].tolist(), sig
    k = np.floor(np.asarray(c.time) / 0.25 + 1e-9).astype(int)
    # Jacobi: each relay sees its source's value at the step's start (two steps from the
    # counter to B); Gauss-Seidel: the sources' new values (no lag)
    lag = 0 if coupling == "gauss_seidel" else 2
    first = max(lag, 1)  # at t0 a relay shows its start values (it outputs in do_step)
    j = np.floor(np.maximum(np.asarray(c.time) - lag * STEP, 0.0) / 0.25 + 1e-9).astype(int)
    assert c["cnt.n"].tolist() == k.tolist()
    assert c["B.i_out"].tolist()[first:] == j.tolist()[first:]
    assert c["B.b_out"].tolist()[first:] == (j % 2 == 1).tolist()[first:]
    assert c["B.e_out"].tolist()[first:] == (1 + j % 2).tolist()[first:]
    big = np.where(j % 2 == 1, -2**31 + j, 2**31 - 1 - j).astype(float)
    assert c["B.r_out"].tolist()[first:] == big.tolist()[first:]


def test_compiled_loop_says_why_not_for_string_ports(feedthrough):
    """String/Binary ports stay in the Python loop, with the reason (never wrong rows)."""
    from fmus import FMUSubsystem
    subs = [FMUSubsystem(feedthrough[2], name="A"), FMUSubsystem(feedthrough[2], name="B")]
    m = MasterScheduler(subs, [("A.Int32_output", "B.Int32_input")], STEP)
    assert "String" in m.compiled_reason
    assert m.run(0.3).diagnostics["compiled"] == m.compiled_reason


# ------------------------------------------------------------- String and Binary
WORDS = '''
from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, String


class Words(Fmi2Slave):
    """A String output that changes every 0.25 s."""

    author = "cosim tests"
    WORDS = ["alpha", "beta, with a comma", "", "\\u00fcn\\u00efc\\u00f8d\\u00e9"]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = self.WORDS[0]
        self.register_variable(String("w", causality=Fmi2Causality.output,
                                      variability=Fmi2Variability.discrete))

    def do_step(self, current_time, step_size):
        self.w = self.WORDS[int((current_time + step_size) / 0.25 + 1e-9) % 4]
        return True
'''
WORD_LIST = ["alpha", "beta, with a comma", "", "\u00fcn\u00efc\u00f8d\u00e9"]
BLOB = b"\x00\xff,\nab"


@pytest.fixture(scope="module")
def words_fmu(tmp_path_factory):
    from tests.fmu_builders import build_pythonfmu
    return build_pythonfmu(WORDS, tmp_path_factory.mktemp("words"), fmi=2,
                           canGetAndSetFMUstate=True)


@pytest.mark.parametrize("coupling", list(COUPLINGS))
@pytest.mark.parametrize("fmi", [2, 3])
def test_string_and_binary_through_each_coupling(words_fmu, feedthrough, fmi, coupling,
                                                 tmp_path):
    from cosim.csv_results import CsvWriter, read_csv
    from fmus import FMUSubsystem
    path = feedthrough[fmi]
    start = {"Binary_input": BLOB} if fmi == 3 else {}
    subs = [FMUSubsystem(words_fmu, name="words"),
            FMUSubsystem(path, name="A", start=start), FMUSubsystem(path, name="B")]
    conns = [("words.w", "A.String_input"), ("A.String_output", "B.String_input")]
    if fmi == 3:
        conns.append(("A.Binary_output", "B.Binary_input"))
    csv = tmp_path / "res.csv"
    res = MasterScheduler(subs, conns, STEP, coupling=COUPLINGS[coupling](),
                          writers=[CsvWriter(csv, "all")]).run(T_END)
    k = np.floor(np.asarray(res.time) / 0.25 + 1e-9).astype(int)
    want = [WORD_LIST[i % 4] for i in k]
    assert res["B.String_output"].tolist() == want
    if fmi == 3:
        assert res["B.Binary_output"].tolist() == [BLOB] * len(k)
    # the results file holds every signal exactly: text as text, bytes as bytes
    back = read_csv(csv)
    assert back["B.String_output"].tolist() == want
    assert back["words.w"].tolist() == want
    if fmi == 3:
        assert back["B.Binary_output"].tolist() == [BLOB] * len(k)
    assert back["B.Int32_output"].tolist() == res["B.Int32_output"].tolist()
    named = _run_named(subs, conns, tmp_path / "x.csv")
    assert named["B.String_output"].tolist() == want[:len(named.time)]


def _run_named(subs, conns, path):
    """A writer given a String signal by name writes it (issue 31 item 2)."""
    from cosim.csv_results import CsvWriter, read_csv
    MasterScheduler(subs, conns, STEP, writers=[CsvWriter(path, ["B.String_output"])]).run(0.6)
    return read_csv(path)


@pytest.mark.parametrize("typ", ["UInt64", "Boolean", "Int8"])
@pytest.mark.parametrize("method", ["extrapolation", "richardson"])
def test_step_control_holds_non_real_couplings(feedthrough, method, typ):
    """The step controller's error estimates see the Real couplings only: a non-Real
    signal has no extrapolation defect (it is held), and it is never subtracted."""
    from cosim.step_control import StepController
    path = feedthrough[3]
    dtype = _dtype(path, f"{typ}_input")
    subs = [_source(typ, dtype, dt="advance"), _counterpart_real(), _fmu_pair(path)]
    ctl = StepController(method=method, rtol=1e-6, atol=1e-9, h_min_s=0.05, h_max_s=0.2)
    conns = [("src.y", f"A.{typ}_input"), ("real.y", "A.Float64_continuous_input")]
    res = MasterScheduler(subs, conns, 0.1, step_control=ctl).run(T_END)
    assert res[f"A.{typ}_output"].tolist() == _expected(typ, res.time)
    assert res["A.Float64_continuous_output"].tolist() == res["real.y"].tolist()


def _counterpart_real() -> DiagramSubsystem:
    from blocks.sources import Constant
    b = DiagramBuilder("real")
    c = b.add(Constant("c", 1.5))
    b.export_output(c.y, "y")
    return DiagramSubsystem(b.build(), solver="euler", dt="advance", name="real")


def _fmu_pair(path):
    from fmus import FMUSubsystem
    return FMUSubsystem(path, name="A")


def test_text_meets_numbers_is_a_connect_error(feedthrough):
    from cosim.errors import ConnectError
    from fmus import FMUSubsystem
    subs = [FMUSubsystem(feedthrough[3], name="A"), FMUSubsystem(feedthrough[3], name="B")]
    for src, dst in (("A.String_output", "B.Float64_continuous_input"),
                     ("A.Int32_output", "B.String_input"),
                     ("A.Binary_output", "B.Boolean_input")):
        with pytest.raises(ConnectError, match="String or Binary signal connects only"):
            MasterScheduler(subs, [(src, dst)], STEP)


@pytest.mark.parametrize("fmi", [2, 3])
def test_fmu_blocks_and_blocks_in_a_diagram(feedthrough, fmi):
    """Model Exchange: blocks -> FMU -> blocks for every type, exact and in its own dtype in
    the Simulator's results (a Boolean stays bool).  Enumeration is left to issue 31 item 1
    (a 0 reaches the FMU in Initialization Mode before the connected value)."""
    from blocks.sources import Constant
    from cosim import Simulator
    from fmus import load_fmu
    b = DiagramBuilder("d")
    f = b.add(load_fmu(feedthrough[fmi], name="f", interface="ModelExchange"))
    types = ["Int32", "Boolean"] if fmi == 2 else [t for t in VALUES if t != "Enumeration"]
    outs = []
    for t in types:
        dtype = f.input(f"{t}_input").dtype
        c = b.add(Constant(f"c_{t}", VALUES[t][0], dtype=dtype))
        b.connect(c.y, f.input(f"{t}_input"))
        g = b.add(FunctionBlock(f"g_{t}", lambda u: u, inputs=[{"name": "u", "dtype": dtype}],
                                outputs=[{"name": "y", "dtype": dtype}]))
        b.connect(f.output(f"{t}_output"), g.in_ports[0])
        outs.append((t, dtype, f"g_{t}.y"))
    res = Simulator(b.build(), solver="rk4", dt=STEP,
                    record=[o for *_, o in outs]).run(0.3)
    for t, dtype, o in outs:
        assert res[o].dtype == dtype, (t, res[o].dtype)
        assert res[o].tolist() == [VALUES[t][0]] * len(res.time), t


@pytest.mark.parametrize("fmi", [2, 3])
def test_string_and_binary_ports_of_model_exchange_blocks(feedthrough, fmi, tmp_path):
    """Model Exchange (issue 31 item 2): a table of str (and bytes) -> A -> B, String and
    Binary ports of FMUBlocks, each value exact in the Simulator's results and in the CSV
    and HDF5 files; a change of a String input is an event (it is set in event mode)."""
    from blocks.tables import FromArrays
    from cosim import Simulator
    from cosim.csv_results import CsvWriter, read_csv
    from cosim.ports import BINARY, STRING
    from fmus import load_fmu
    h5py = pytest.importorskip("h5py")  # noqa: F841 - the HDF5 writer's extra
    from cosim.hdf5_results import Hdf5Writer, read_hdf5
    blobs = [BLOB, b"", b"\x00", b"z" * 128]  # the Feedthrough holds at most 128 bytes
    b = DiagramBuilder("d")
    a = b.add(load_fmu(feedthrough[fmi], name="A", interface="ModelExchange"))
    bb = b.add(load_fmu(feedthrough[fmi], name="B", interface="ModelExchange"))
    assert a.input("String_input").dtype == STRING
    words = b.add(FromArrays("words", TIMES, WORD_LIST, interpolation="previous",
                             dtype=STRING))
    b.connect(words.y, a.input("String_input"))
    b.connect(a.output("String_output"), bb.input("String_input"))
    record = ["A.String_output", "B.String_output"]
    if fmi == 3:
        assert a.input("Binary_input").dtype == BINARY
        blob = b.add(FromArrays("blob", TIMES, blobs, interpolation="previous", dtype=BINARY))
        b.connect(blob.y, a.input("Binary_input"))
        b.connect(a.output("Binary_output"), bb.input("Binary_input"))
        record += ["B.Binary_output"]
    writers = [CsvWriter(tmp_path / "r.csv", record), Hdf5Writer(tmp_path / "r.h5", record)]
    res = Simulator(b.build(), solver="rk4", dt=0.05, record=record,
                    observers=writers).run(T_END)
    k = np.searchsorted(TIMES, np.asarray(res.time) + 1e-12, side="right") - 1
    for name, r in (("memory", res), ("csv", read_csv(tmp_path / "r.csv")),
                    ("hdf5", read_hdf5(tmp_path / "r.h5"))):
        for sig in ("A.String_output", "B.String_output"):
            assert r[sig].tolist() == [WORD_LIST[i] for i in k], (name, sig)
        if fmi == 3:
            assert r["B.Binary_output"].tolist() == [blobs[i] for i in k], name


def test_a_string_input_given_a_number_says_what_to_connect(feedthrough):
    from blocks.sources import Constant
    from cosim import Simulator
    from cosim.errors import StepError
    from fmus import load_fmu
    b = DiagramBuilder("d")
    a = b.add(load_fmu(feedthrough[3], name="A", interface="ModelExchange"))
    c = b.add(Constant("c", 1.5))
    b.connect(c.y, a.input("String_input"))
    with pytest.raises(StepError, match="String input 'String_input' got 1.5 .*connect a "
                                        "String output"):
        Simulator(b.build(), solver="rk4", dt=0.1).run(0.2)
