"""Scheduled Execution import without an FMU binary: the schedule of every clock kind.

:class:`~fmus.scheduled.FMUScheduledBlock` runs here on model descriptions written for the
test and a scripted driver standing in for the FMU (it records every call and answers
``fmi3GetIntervalDecimal`` and the clockUpdate callback as the script says, and checks
that only the variables FMI 3.0 section 5.2.1 allows are set and read around each
partition).  Expected schedules are the FMI 3.0 clock definitions (section 2.2.9.3):
periodic ``t_k = t_start + shift + k interval``, changing ``t_i = t_{i-1} + interval_i``,
countdown ``t = t_event + interval``, a tunable interval counted from the time it changes.
The Reference FMU ``Clocks`` runs in ``tests/conformance/test_scheduled_execution.py``.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from blocks.tables import FromArrays
from cosim import DiagramBuilder, Simulator
from cosim.errors import ContextError
from fmus import FMU, FMUScheduledBlock, load_fmu
from fmus.errors import FMUCallError, FMUConfigError
from fmus.instance import FMUInstance
from fmus.scheduled import check_no_clocks
from fmus.se_clocks import ClockTimer, exact, grid_tick

CHANGED, UNCHANGED, NOT_YET_KNOWN = 2, 1, 0


def model(clocks: str, variables: str = "", structure: str = "", se_caps: str = "",
          interfaces: str = "") -> str:
    return f'''<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="Scripted" instantiationToken="{{S}}">
{interfaces} <ScheduledExecution modelIdentifier="Scripted"{se_caps}/>
 <ModelVariables>
  <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
{clocks}
{variables}
 </ModelVariables>
 <ModelStructure>
{structure}
 </ModelStructure>
</fmiModelDescription>
'''


def clock(name: str, vr: int, kind: str, extra: str = "", causality: str = "input") -> str:
    return (f'  <Clock name="{name}" valueReference="{vr}" causality="{causality}" '
            f'intervalVariability="{kind}" {extra}/>')


class FakeSE:
    """A scripted stand-in for :class:`fmus.driver.Driver` of a Scheduled Execution FMU."""

    def __init__(self, info, script):
        self.info = info
        self.script = script
        self.by_vr = {v.vr: v for v in info.variables}
        self.regs: list = []
        self.values: dict = {}
        self.log: list = []
        self.mode = "instantiated"
        self.active = None  # (clock name, output clocks ticked) during/after an activation

    # --- the Driver API the block uses
    def register(self, typ, vrs, nvals):
        self.regs.append(list(vrs))
        return len(self.regs) - 1

    def set(self, key, vals):
        for vr, x in zip(self.regs[key], vals):
            v = self.by_vr[vr]
            if self.mode == "activation":
                assert v.causality != "input" or not v.clocks or self.pending in v.clocks, (
                    f"{v.name} set before the partition of {self.pending}")
            self.values[vr] = x
            self.log.append(("set", v.name, x, self.mode))

    def get(self, key):
        for vr in self.regs[key]:
            v = self.by_vr[vr]
            if self.mode == "activation" and v.clocks:
                assert self.active and (self.active[0] in v.clocks
                                        or set(v.clocks) & set(self.active[1])), (
                    f"{v.name} read after the partition of {self.active}")
        return [self.values.get(vr, 0.0) for vr in self.regs[key]]

    def enter_initialization(self, t0, tol, stop):
        self.mode = "initialization"
        self.log.append(("init", t0))

    def exit_initialization(self):
        self.mode = "activation"

    def set_intervals(self, vrs, ivs):
        assert self.mode == "initialization"
        self.log.append(("set_intervals", [self.by_vr[v].name for v in vrs], list(ivs)))

    def get_intervals(self, vrs):
        return [self.script.interval(self, self.by_vr[v].name) for v in vrs]

    def get_shifts(self, vrs):
        return [self.script.shift(self, self.by_vr[v].name) for v in vrs]

    def se_activate(self, vr, t, sets, out_keys, out_clock_vrs, interval_vrs):
        name = self.by_vr[vr].name
        self.pending = name
        for key, vals in sets:
            self.set(key, vals)
        self.log.append(("activate", name, t))
        ticked, intervals = self.script.activate(self, name, t)
        self.active = (name, ticked)
        outs = [self.get(k) for k in out_keys]
        return ([self.info.variable(c).vr for c in ticked],
                {self.info.variable(c).vr: iq for c, iq in intervals.items()}, outs)

    def terminate(self):
        pass

    def reset(self):
        self.values.clear()
        self.mode = "instantiated"

    def free(self):
        pass

    def get_state(self):
        return copy.deepcopy((self.values, self.script.__dict__))

    def set_state(self, state):
        values, script = copy.deepcopy(state)
        self.values = values
        self.script.__dict__.update(script)

    def free_state(self, state):
        pass

    # --- what the tests look at
    def activations(self, name=None):
        return [(c, t) if name is None else t for k, c, *rest in self.log if k == "activate"
                for t in rest if name in (None, c)]


class Script:
    """Default answers: intervals unknown, shift 0, activations change nothing."""

    def interval(self, drv, name):
        return (0.0, NOT_YET_KNOWN)

    def shift(self, drv, name):
        return 0.0

    def activate(self, drv, name, t):
        return [], {}


@pytest.fixture
def fake(monkeypatch):
    """Every FMUInstance gets a :class:`FakeSE` (``fake[-1]``); no binary is checked."""
    made: list = []

    def start(self):
        drv = FakeSE(self.fmu.info, self.script)
        for typ, vrs, n in self._regs:
            drv.register(typ, vrs, n)
        self.drv, self.broken, self.initialized = drv, False, False
        self.generation += 1
        made.append(drv)
        return drv

    monkeypatch.setattr(FMUInstance, "start", start)
    monkeypatch.setattr(FMU, "check_binary", lambda self, interface: None)
    return made


def block(tmp_path, text, script=None, name="se", **kw):
    d = tmp_path / "fmu"
    d.mkdir(exist_ok=True)
    (d / "modelDescription.xml").write_text(text)
    blk = FMUScheduledBlock(FMU(d), name, check=False, **kw)  # a scripted stand-in: no binary
    blk.inst.script = script or Script()
    return blk


def run(blk, t_end, *sources, t0=0.0):
    b = DiagramBuilder("d")
    b.add(blk)
    for src, port in sources:
        b.add(src)
        b.connect(src.outputs["y"], blk.inputs[port])
    d = b.build()
    ctx = d.create_context()
    ctx.set_time(t0)
    return Simulator(d, ctx).run(t_end)


# ----------------------------------------------------------------------- clock kinds
def test_constant_clock_ticks_at_start_plus_shift_plus_k_intervals(tmp_path, fake):
    blk = block(tmp_path, model(clock("c", 1, "constant",
                                      'intervalDecimal="0.5" shiftDecimal="0.1"')))
    run(blk, 3.0, t0=1.0)
    expected = [float(Fraction(11, 10) + Fraction(k, 2)) for k in range(4)]
    assert fake[-1].activations("c") == expected == blk.clock_ticks("c")
    assert ("init", 1.0) in fake[-1].log


def test_fixed_clock_takes_the_importers_interval_in_initialization_mode(tmp_path, fake):
    text = model(clock("f", 1, "fixed", 'intervalDecimal="1.0"'))
    blk = block(tmp_path, text, clock_intervals={"f": 0.25})
    run(blk, 1.0)
    assert ("set_intervals", ["f"], [0.25]) in fake[-1].log
    assert fake[-1].activations("f") == [0.0, 0.25, 0.5, 0.75, 1.0]
    # without clock_intervals the model description's interval, and no set call
    blk = block(tmp_path, text, name="se2")
    run(blk, 2.0)
    assert fake[-1].activations("f") == [0.0, 1.0, 2.0]
    assert not any(e[0] == "set_intervals" for e in fake[-1].log)


def test_clock_intervals_only_where_fmi_lets_the_importer_choose(tmp_path, fake):
    text = model("\n".join([clock("k", 1, "constant", 'intervalDecimal="1"'),
                            clock("t", 2, "tunable"), clock("d", 3, "countdown")]))
    for key, why in (("k", "'k' is a constant clock"),
                     ("t", r"'t' is a tunable clock without intervalDecimal \(the FMU "
                           r"computes its interval\)"),
                     ("d", "'d' is a countdown clock")):
        with pytest.raises(FMUConfigError, match=f"clock_intervals\\['{key}'\\]: {why}; "
                                                 "FMI lets the importer set"):
            block(tmp_path, text, clock_intervals={key: 0.1})
    with pytest.raises(FMUConfigError, match=r"names 'kk', which is not an input clock.*"
                                             r"Did you mean 'k'\?"):
        block(tmp_path, text, clock_intervals={"kk": 0.1})


class TunableScript(Script):
    """A tunable clock whose interval the FMU computes: 0.4 s (shift 0.2), 0.3 s once the
    tunable parameter ``gain`` is 3."""

    def interval(self, drv, name):
        gain = drv.values.get(drv.info.variable("gain").vr, 2.0)
        return (0.3 if gain == 3.0 else 0.4, CHANGED)

    def shift(self, drv, name):
        return 0.2


def test_tunable_clock_asks_the_fmu_and_restarts_from_a_parameter_change(tmp_path, fake):
    text = model(clock("tc", 1, "tunable"), '  <Float64 name="gain" valueReference="10" '
                 'causality="parameter" variability="tunable" start="2"/>')
    blk = block(tmp_path, text, TunableScript())
    b = DiagramBuilder("d")
    b.add(blk)
    d = b.build()
    ctx = d.create_context()
    sim = Simulator(d, ctx)
    sim.advance_to(1.1)
    ctx.set_param("se.gain", 3.0)
    sim.advance_to(2.0)
    drv = fake[-1]
    # 0.2 + k 0.4 up to 1.4, where gain = 3 is set: from then on every 0.3 s from 1.4
    assert drv.activations("tc") == pytest.approx([0.2, 0.6, 1.0, 1.4, 1.7, 2.0], abs=1e-12)
    i_set = drv.log.index(("set", "gain", 3.0, "activation"))
    assert drv.log[i_set + 1] == ("activate", "tc", pytest.approx(1.4))


class ChangingScript(Script):
    """A changing clock: first tick 0.3 s after the start, then 0.2, 0.5, 0.1 s apart."""

    def __init__(self):
        self.next = [0.3, 0.2, 0.5, 0.1]

    def interval(self, drv, name):
        return (self.next.pop(0), CHANGED) if self.next else (0.0, NOT_YET_KNOWN)


def test_changing_clock_gets_its_next_interval_after_each_tick(tmp_path, fake):
    blk = block(tmp_path, model(clock("ch", 1, "changing")), ChangingScript())
    run(blk, 5.0)
    assert fake[-1].activations("ch") == pytest.approx([0.3, 0.5, 1.0, 1.1], abs=1e-12)


class CountdownScript(Script):
    """The periodic partition ``p`` announces the countdown clock ``cd``: 0.25 s after
    t = 1, at once at t = 2 (interval 0), 0.5 s after t = 3."""

    def activate(self, drv, name, t):
        if name == "p" and t in (1.0, 2.0, 3.0):
            return [], {"cd": ({1.0: 0.25, 2.0: 0.0, 3.0: 0.5}[t], CHANGED)}
        return [], {}


def test_countdown_clock_runs_where_the_clock_update_callback_puts_it(tmp_path, fake):
    text = model("\n".join([clock("p", 1, "constant", 'intervalDecimal="1" priority="1"'),
                            clock("cd", 2, "countdown", 'priority="0"')]))
    blk = block(tmp_path, text, CountdownScript())
    run(blk, 4.0)
    assert fake[-1].activations("cd") == [1.25, 2.0, 3.5]
    at2 = [c for t, c in blk.events if t == 2.0]
    assert at2 == ["p", "cd"]  # announced by p at 2: after p (no preemption)


class TwiceScript(Script):
    def activate(self, drv, name, t):
        return [], ({"cd": (0.0, CHANGED)} if name == "cd" else
                    {"cd": (0.0, CHANGED)} if t == 1.0 else {})


def test_a_partition_asked_twice_at_one_instant_is_an_error(tmp_path, fake):
    text = model("\n".join([clock("p", 1, "constant", 'intervalDecimal="1"'),
                            clock("cd", 2, "countdown")]))
    blk = block(tmp_path, text, TwiceScript())
    with pytest.raises(Exception, match="clock 'cd' would run its partition again at "
                                        "t = 1 s \\(last at 1 s\\); FMI 3 activates a "
                                        "partition once per time instant"):
        run(blk, 2.0)


def test_triggered_clock_ticks_where_its_input_increases(tmp_path, fake):
    text = model(clock("tr", 1, "triggered"))
    src = FromArrays("src", [0, 0.5, 1, 1.5, 2, 2.5, 3], [0, 1, 1, 0, 1, 3, 3],
                     interpolation="previous")
    blk = block(tmp_path, text)
    run(blk, 4.0, (src, "tr"))
    assert fake[-1].activations("tr") == [0.5, 2.0, 2.5]
    # the value before the start counts as 0: a source that starts high ticks at t0
    blk = block(tmp_path, text, name="se2")
    run(blk, 1.0, (FromArrays("hi", [0, 1], [1, 1]), "tr"))
    assert fake[-1].activations("tr") == [0.0]
    blk = block(tmp_path, text, name="se3")  # unconnected: never ticks
    run(blk, 1.0)
    assert fake[-1].activations() == []


# ------------------------------------------------------------- values and clocks out
class OutScript(Script):
    """Partition ``p`` computes y = 10 u and ticks the output clock ``o`` at t = 1 and 3,
    which clocks ``w`` = 100 t."""

    def activate(self, drv, name, t):
        vr = {v.name: v.vr for v in drv.info.variables}
        drv.values[vr["y"]] = 10 * drv.values[vr["u"]]
        if t in (1.0, 3.0):
            drv.values[vr["w"]] = 100 * t
            return ["o"], {}
        return [], {}


def test_partition_values_and_output_clocks(tmp_path, fake):
    text = model("\n".join([clock("p", 1, "constant", 'intervalDecimal="1"'),
                            clock("q", 2, "constant", 'intervalDecimal="2"'),
                            clock("o", 3, "triggered", 'clocks="1"', causality="output")]),
                 '  <Float64 name="u" valueReference="11" causality="input" '
                 'variability="discrete" clocks="1" start="0"/>\n'
                 '  <Float64 name="y" valueReference="12" causality="output" '
                 'variability="discrete" clocks="1" start="-1"/>\n'
                 '  <Float64 name="w" valueReference="13" causality="output" '
                 'variability="discrete" clocks="3"/>',
                 '  <Output valueReference="3" dependencies="1"/>\n'
                 '  <Output valueReference="12" dependencies="1 11"/>\n'
                 '  <Output valueReference="13" dependencies="1"/>')
    src = FromArrays("u", [0, 2, 4], [1.0, 2.0, 3.0])  # u(t) = 1 + t/2
    blk = block(tmp_path, text, OutScript())
    res = run(blk, 4.0, (src, "u"))
    assert list(res["se.y"]) == [10 * (1 + t / 2) for t in res.time]
    assert res["se.o"].dtype.kind == "i" and list(res["se.o"]) == [0, 1, 1, 2, 2]
    assert list(res["se.w"]) == [0.0, 100.0, 100.0, 300.0, 300.0]  # held between ticks
    assert blk.clock_ticks("o") == [1.0, 3.0]
    assert [c for t, c in blk.events if t == 1.0] == ["p", "o"]
    # u (clocked by p) is set before p only; FakeSE checked every set and get
    assert {e[2] for e in fake[-1].log if e[0] == "set" and e[1] == "u"} == {
        1 + t / 2 for t in range(5)}
    with pytest.raises(FMUConfigError, match="no clock 'x'; valid names: p, q, o"):
        blk.clock_ticks("x")


def test_partitions_at_one_instant_run_by_priority_then_xml_order(tmp_path, fake):
    text = model("\n".join([clock("a", 1, "constant", 'intervalDecimal="1" priority="2"'),
                            clock("b", 2, "constant", 'intervalDecimal="1" priority="1"'),
                            clock("c", 3, "constant", 'intervalDecimal="1" priority="2"')]))
    blk = block(tmp_path, text)
    run(blk, 1.0)
    assert fake[-1].activations() == [("b", 0.0), ("a", 0.0), ("c", 0.0),
                                      ("b", 1.0), ("a", 1.0), ("c", 1.0)]


def test_an_se_fmu_without_input_clocks_is_refused(tmp_path, fake):
    with pytest.raises(FMUConfigError, match="declares no input clock, so it has no model "
                                             "partition to run"):
        block(tmp_path, model(clock("o", 1, "triggered", causality="output"),
                              structure='  <Output valueReference="1"/>'))


# ------------------------------------------------------------------ FMU state
def test_rollback_restores_the_schedule_with_the_fmu_state(tmp_path, fake):
    text = model("\n".join([clock("p", 1, "constant", 'intervalDecimal="1" priority="1"'),
                            clock("cd", 2, "countdown", 'priority="0"')]),
                 se_caps=' canGetAndSetFMUState="true"')
    blk = block(tmp_path, text, CountdownScript())
    b = DiagramBuilder("d")
    b.add(blk)
    d = b.build()
    ctx = d.create_context()
    Simulator(d, ctx).advance_to(1.1)  # cd announced for 1.25 at t = 1
    snap = ctx.snapshot()
    Simulator(d, ctx).advance_to(4.0)
    first = list(blk.events)
    ctx.restore(snap)
    assert blk.events == [e for e in first if e[0] <= 1.1]
    Simulator(d, ctx).advance_to(4.0)
    assert blk.events == first and ("cd", 1.25) in fake[-1].activations()


def test_without_fmu_state_a_snapshot_is_refused(tmp_path, fake):
    blk = block(tmp_path, model(clock("p", 1, "constant", 'intervalDecimal="1"')))
    b = DiagramBuilder("d")
    b.add(blk)
    d = b.build()
    ctx = d.create_context()
    Simulator(d, ctx).advance_to(1.0)
    with pytest.raises(ContextError, match="block 'se' keeps state 'fmu' outside"):
        ctx.snapshot()


# ---------------------------------------------------------- interface choice
def test_interface_choice_for_a_scheduled_execution_only_fmu(tmp_path, fake):
    d = tmp_path / "fmu"
    d.mkdir()
    (d / "modelDescription.xml").write_text(model(clock("p", 1, "constant",
                                                        'intervalDecimal="1"')))
    fmu = FMU(d)
    assert fmu.interface("auto") == fmu.interface("se") == "ScheduledExecution"
    for itf, key in (("me", "ModelExchange"), ("cs", "CoSimulation")):
        with pytest.raises(FMUConfigError) as exc:
            load_fmu(fmu, interface=itf)
        assert str(exc.value) == (f"FMU 'fmu' does not implement {key} (it has: "
                                  "ScheduledExecution); use interface='ScheduledExecution'")
    assert isinstance(load_fmu(fmu, interface="se", check=False), FMUScheduledBlock)


# --------------------------------------------------- clocks in ME and CS FMUs
def _me_with(tmp_path, clocks: str, variables: str = "", structure: str = "",
             se: bool = False):
    d = tmp_path / "me"
    d.mkdir(exist_ok=True)
    text = model(clocks, variables, structure,
                 interfaces=' <ModelExchange modelIdentifier="Scripted"/>\n')
    if not se:
        text = text.replace(' <ScheduledExecution modelIdentifier="Scripted"/>\n', "")
    (d / "modelDescription.xml").write_text(text)
    return FMU(d)


def test_check_no_clocks_names_the_clocks_and_what_to_do(tmp_path):
    fmu = _me_with(tmp_path, "\n".join([
        clock("c1", 1, "constant", 'intervalDecimal="1"'),
        clock("o", 2, "triggered", causality="output")]),
        '  <Float64 name="y" valueReference="3" causality="output" variability="discrete" '
        'clocks="1 2"/>',
        '  <Output valueReference="2"/>\n  <Output valueReference="3"/>')
    with pytest.raises(FMUConfigError) as exc:
        check_no_clocks(fmu, "ModelExchange")
    assert str(exc.value) == (
        "FMU 'me' declares 2 FMI 3 clocks ('c1' (input, constant); 'o' (output, "
        "triggered)) clocking 1 variable (y): cosim imports clocks only through Scheduled "
        "Execution; as Model Exchange its clocked partitions would never run (input clocks "
        "activated in Event Mode with fmi3SetClock and output clocks read with fmi3GetClock "
        "are not implemented); ask for a build of the model without clocks, or with a "
        "Scheduled Execution interface")
    check_no_clocks(fmu, "CoSimulation")  # not an interface it has: interface() says so


def test_check_no_clocks_points_to_the_se_interface_and_passes_local_clocks(tmp_path):
    fmu = _me_with(tmp_path, clock("c1", 1, "triggered"), se=True)
    with pytest.raises(FMUConfigError, match="load it with interface='ScheduledExecution'"):
        check_no_clocks(fmu, "ModelExchange")
    (tmp_path / "me" / "modelDescription.xml").unlink()
    fmu = _me_with(tmp_path, clock("loc", 1, "triggered", causality="local"))
    check_no_clocks(fmu, "ModelExchange")  # local clocks do not need the importer


# ------------------------------------------------------------------ timing math
def test_exact_times_and_grid_ticks():
    assert exact(0.001) == Fraction(1, 1000) and exact(3) == 3
    assert grid_tick(Fraction(1, 3)) == 333333334 and grid_tick(Fraction(1, 2)) == 500000000
    assert grid_tick(0.1 + 0.2) == 300000000  # float noise below 1e-3 ns: that tick
    tm = ClockTimer("c", 1, "constant", 0, 0, "periodic")
    tm.start(0.0, Fraction(1, 10), 0)
    for _ in range(10):
        tm.fired(tm.activation_time())
    assert tm.activation_time() == 1.0 and tm.next_tick() == 10**9  # no float drift
    with pytest.raises(ValueError, match="interval of clock 'c' must be > 0"):
        tm.start(0.0, 0.0)
    with pytest.raises(ValueError, match="shift of clock 'c' must be >= 0"):
        tm.start(0.0, 1.0, -0.5)
    tm.retune(2.05, 0.5)
    assert [tm.activation_time()] == [2.55]
    cd = ClockTimer("d", 2, "countdown", 0, 1, "countdown")
    assert cd.next_tick() is None
    cd.schedule(1.0, 0.25)
    assert cd.next_tick() == 1_250_000_000
    cd.fired(1.25)
    assert cd.next_time is None and cd.last == 1.25
    with pytest.raises(ValueError, match="the FMU gave the interval -1"):
        cd.schedule(1.0, -1.0)


def test_an_fmu_that_does_not_know_a_periodic_interval_is_an_error(tmp_path, fake):
    blk = block(tmp_path, model(clock("f", 1, "fixed")))  # no intervalDecimal: asked
    with pytest.raises(FMUCallError, match="fmi3GetIntervalDecimal of the fixed clock 'f' "
                                           "says 'not yet known' in Initialization Mode"):
        run(blk, 1.0)
