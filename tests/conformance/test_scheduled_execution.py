"""FMI 3 Scheduled Execution: the Reference FMU ``Clocks`` through :class:`FMUScheduledBlock`.

References: upstream's own importer example ``scs_synchronous`` (built with the FMUs, run
here on the same ``Clocks.fmu``: its CSV is the expected result), the model's equations in
``reference_fmus/Clocks/model.c`` (partition 1 counts and, at ``(int)time == 4``, announces
the countdown clock ``inClock3`` with interval 0; partition 2 adds ``input2`` to ``result2``;
partition 3 sets ``output3 = 1000``; each partition ticks ``outClock`` when
``totalInClockTicks`` reaches a multiple of 5) and the FMI 3.0 clock definitions (a periodic
clock ticks at ``t_start + shift + k * interval``).  Also the one error for a Model Exchange
or Co-Simulation FMU that declares clocks.
"""

from __future__ import annotations

import csv
import math
import subprocess
import zipfile
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("fmpy")

from blocks.sources import Constant  # noqa: E402
from blocks.tables import FromArrays  # noqa: E402
from cosim import DiagramBuilder, Simulator  # noqa: E402
from fmus import FMU, FMUBlock, FMUScheduledBlock, FMUSubsystem, load_fmu  # noqa: E402
from fmus.errors import FMUConfigError  # noqa: E402
from tests.fmu_builders import rewrite_fmu  # noqa: E402

#: the instants at which upstream's example activates partition 2 (``time % 8 == 0 ||
#: (time - 1) % 8 == 0`` for time = 0..9)
PARTITION2 = [t for t in range(10) if t % 8 == 0 or (t - 1) % 8 == 0]
COLUMNS = ["inClock1Ticks", "inClock2Ticks", "inClock3Ticks", "totalInClockTicks"]


def _clocks(reference_fmus):
    return reference_fmus[(3, "Clocks")]


def _trigger(b, name, times):
    """A source that steps up at ``times`` (a triggered input clock ticks there)."""
    return b.add(FromArrays(name, list(times), list(range(1, len(times) + 1)),
                            interpolation="previous"))


def _run(b, t_end, **kw):
    return Simulator(b.build(), **kw).run(t_end)


def _at(res, name, t):
    """The value of ``name`` at ``t`` after every event there (the last sample)."""
    i = np.flatnonzero(np.isclose(res.time, t, rtol=0, atol=1e-12))
    assert i.size, f"no sample at t = {t}"
    return res[name][i[-1]]


@pytest.fixture(scope="module")
def upstream(reference_fmus, tmp_path_factory):
    """``{column: [values]}`` of upstream's ``scs_synchronous`` run on this Clocks.fmu."""
    fmu = _clocks(reference_fmus)
    exe = fmu.parent.parent / "temp" / "scs_synchronous"
    if not exe.exists():
        pytest.skip(f"upstream's example {exe} was not built")
    d = tmp_path_factory.mktemp("scs_synchronous")
    with zipfile.ZipFile(fmu) as z:  # the example loads Clocks/binaries/<platform>/
        z.extractall(d / "Clocks")
    p = subprocess.run([str(exe)], cwd=d, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(d / "scs_synchronous_out.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 10
    return {k: [float(r[k]) if k == "time" else int(r[k]) for r in rows]
            for k in rows[0]}


def test_clocks_equals_upstreams_scheduled_execution_example(reference_fmus, upstream):
    for itf in ("auto", "se"):
        blk = load_fmu(_clocks(reference_fmus), name="fmu", interface=itf)
        assert isinstance(blk, FMUScheduledBlock)
        b = DiagramBuilder("clocks")
        b.add(blk)
        b.connect(_trigger(b, "trig", PARTITION2).outputs["y"], blk.inputs["inClock2"])
        res = _run(b, 9.0)
        for col in COLUMNS:
            ours = [int(_at(res, f"fmu.{col}", t)) for t in upstream["time"]]
            assert ours == upstream[col], col
        # one activation of each partition per tick, at upstream's instants
        assert blk.clock_ticks("inClock1") == upstream["time"]
        assert blk.clock_ticks("inClock2") == [float(t) for t in PARTITION2]


def test_countdown_clock_runs_at_the_instant_partition_1_announces_it(reference_fmus):
    blk = load_fmu(_clocks(reference_fmus), name="fmu")
    b = DiagramBuilder("clocks")
    b.add(blk)
    res = _run(b, 9.0)
    # model.c: at (int)time == 4 partition 1 sets inClock3's interval to 0 (countdown)
    assert blk.clock_ticks("inClock3") == [4.0]
    at4 = [c for t, c in blk.events if t == 4.0 and c != "outClock"]
    assert at4 == ["inClock1", "inClock3"]  # after the partition that announced it
    assert [int(_at(res, "fmu.output3", t)) for t in (3, 4, 9)] == [0, 1000, 1000]
    assert int(_at(res, "fmu.inClock3Ticks", 9)) == 1


def test_output_clock_ticks_where_the_total_reaches_a_multiple_of_five(reference_fmus):
    blk = load_fmu(_clocks(reference_fmus), name="fmu")
    b = DiagramBuilder("clocks")
    b.add(blk)
    b.connect(_trigger(b, "trig", PARTITION2).outputs["y"], blk.inputs["inClock2"])
    res = _run(b, 9.0)
    # each partition adds 1 to the total and ticks outClock when it is a multiple of 5
    # (read, and so reset, in the clockUpdate callback): at the instants where the total
    # passes one
    total = [0] + [int(_at(res, "fmu.totalInClockTicks", t)) for t in range(10)]
    expected = [float(t) for t in range(10) if total[t + 1] // 5 > total[t] // 5]
    assert expected and blk.clock_ticks("outClock") == expected
    assert [int(_at(res, "fmu.outClock", t)) for t in range(10)] == [
        total[t + 1] // 5 for t in range(10)]
    # partitions at one instant in priority order (inClock1 0, inClock2 1, inClock3 2)
    prio = {"inClock1": 0, "inClock2": 1, "inClock3": 2}
    for t in range(10):
        order = [prio[c] for s, c in blk.events if s == t and c in prio]
        assert order == sorted(order)


def test_inputs_are_set_before_each_activation(reference_fmus):
    # model.c: partition 2 adds input2 to result2; unconnected, input2 holds its start=
    # value; connected, the source's value
    for how in ("start", "source"):
        kw = {"start": {"input2": 7}} if how == "start" else {}
        blk = load_fmu(_clocks(reference_fmus), name="fmu", **kw)
        b = DiagramBuilder("clocks")
        b.add(blk)
        b.connect(_trigger(b, "trig", PARTITION2).outputs["y"], blk.inputs["inClock2"])
        if how == "source":
            c = b.add(Constant("c", 7, dtype=np.int32))
            b.connect(c.y, blk.inputs["input2"])
        res = _run(b, 9.0)
        assert [int(_at(res, "fmu.result2", t)) for t in PARTITION2] == [7, 14, 21, 28]


def test_feedback_through_the_fmu_reads_the_value_from_before_the_instant(reference_fmus):
    # output3 -> input2 (as upstream's threaded example passes partition 3's output to
    # partition 2): no algebraic loop; at each partition-2 instant input2 is output3 as
    # held from the previous instant (1000 from t = 4 on)
    blk = load_fmu(_clocks(reference_fmus), name="fmu")
    b = DiagramBuilder("clocks")
    b.add(blk)
    b.connect(_trigger(b, "trig", PARTITION2).outputs["y"], blk.inputs["inClock2"])
    b.connect(blk.outputs["output3"], blk.inputs["input2"])
    res = _run(b, 9.0)
    held = {t: int(_at(res, "fmu.output3", t - 1)) if t else 0 for t in PARTITION2}
    expected = np.cumsum([held[t] for t in PARTITION2]).tolist()
    assert [int(_at(res, "fmu.result2", t)) for t in PARTITION2] == expected == [
        0, 0, 1000, 2000]


def test_two_scheduled_fmus_in_a_chain_pass_values_at_the_same_instant(reference_fmus):
    # B: A's output clock triggers B's partition 2; C: partition 2 at 0, 1, 8, 9 (a source),
    # while A's partition 1 runs every second.  Both read A's inClock1Ticks as computed at
    # that same instant, not the value from before it (added before A: their events come
    # first in the simulator's list)
    b = DiagramBuilder("chain")
    c = b.add(load_fmu(_clocks(reference_fmus), name="C"))
    d = b.add(load_fmu(_clocks(reference_fmus), name="B"))
    a = b.add(load_fmu(_clocks(reference_fmus), name="A"))
    b.connect(a.outputs["outClock"], d.inputs["inClock2"])
    b.connect(_trigger(b, "trig", PARTITION2).outputs["y"], c.inputs["inClock2"])
    for x in (c, d):
        b.connect(a.outputs["inClock1Ticks"], x.inputs["input2"])
    res = _run(b, 9.0)
    ticks = a.clock_ticks("outClock")
    assert len(ticks) >= 2 and d.clock_ticks("inClock2") == ticks
    for x, times in ((d, ticks), (c, PARTITION2)):
        # model.c: result2 adds input2 at each partition-2 activation
        expected = sum(int(_at(res, "A.inClock1Ticks", t)) for t in times)
        assert int(_at(res, f"{x.name}.result2", 9)) == expected
    assert int(_at(res, "C.result2", 9)) == 1 + 2 + 9 + 10


def test_two_scheduled_fmus_feeding_each_other_run_in_the_order_they_were_added(
        reference_fmus):
    # A and B read each other's inClock1Ticks in partition 2 at the same instants: a loop
    # at the instant, broken by the order of addition (A first: A reads B's value from
    # before the instant, t; B reads A's after it, t + 1), never a deadlock
    b = DiagramBuilder("mutual")
    a = b.add(load_fmu(_clocks(reference_fmus), name="A"))
    c = b.add(load_fmu(_clocks(reference_fmus), name="B"))
    trig = _trigger(b, "trig", PARTITION2)
    for x, y in ((a, c), (c, a)):
        b.connect(trig.outputs["y"], x.inputs["inClock2"])
        b.connect(x.outputs["inClock1Ticks"], y.inputs["input2"])
    res = _run(b, 9.0)
    assert int(_at(res, "A.result2", 9)) == sum(PARTITION2)
    assert int(_at(res, "B.result2", 9)) == sum(t + 1 for t in PARTITION2)


def test_a_model_exchange_event_at_the_same_instant_is_seen_by_the_partition(reference_fmus):
    # Stair (ME) increments its counter by a time event every second; partition 2 of Clocks
    # runs at 0, 1, 5 and 8 with input2 = counter: it must add the counter after Stair's
    # event at that instant (as an ME FMU's own event sees a source's new value)
    b = DiagramBuilder("me_se")
    se = b.add(load_fmu(_clocks(reference_fmus), name="se"))
    st = b.add(load_fmu(reference_fmus[(3, "Stair")], name="stair", interface="me"))
    b.connect(_trigger(b, "trig", [0, 1, 5, 8]).outputs["y"], se.inputs["inClock2"])
    b.connect(st.outputs["counter"], se.inputs["input2"])
    res = _run(b, 8.5, solver="rk4", dt=0.5)
    counter = [int(_at(res, "stair.counter", t)) for t in (0, 1, 5, 8)]
    assert counter == [1, 2, 6, 9]  # Stair: 1 + the seconds elapsed
    assert int(_at(res, "se.result2", 8.5)) == sum(counter)


def test_periodic_clock_ticks_exactly_at_its_xml_interval_and_shift(reference_fmus,
                                                                    tmp_path):
    # inClock1 every 1/3 s (intervalCounter/resolution), first at 1/2 s: t_k = 1/2 + k/3
    # exactly (FMI 3.0 periodic clock), 29 ticks in [0, 10]; model.c announces inClock3 at
    # each activation with (int)time == 4: 4 1/6, 4 1/2 and 4 5/6
    p = rewrite_fmu(_clocks(reference_fmus), tmp_path / "Clocks3.fmu", replace={
        "modelDescription.xml": (
            'intervalVariability="constant" intervalDecimal="1.0"',
            'intervalVariability="constant" intervalDecimal="0.3333333333333333" '
            'shiftDecimal="0.5" supportsFraction="true" resolution="6" intervalCounter="2" '
            'shiftCounter="3"')})
    blk = load_fmu(p, name="fmu")
    b = DiagramBuilder("clocks")
    b.add(blk)
    res = _run(b, 10.0)
    expected = [float(Fraction(1, 2) + Fraction(k, 3)) for k in range(29)]
    assert blk.clock_ticks("inClock1") == expected
    assert int(_at(res, "fmu.inClock1Ticks", 10.0)) == len(expected)
    assert blk.clock_ticks("inClock3") == [t for t in expected if math.floor(t) == 4]
    assert len(blk.clock_ticks("inClock3")) == 3


def test_out_of_process_gives_the_same_results_or_one_clear_refusal(reference_fmus,
                                                                    monkeypatch):
    import fmus.remote
    from fmus.scheduled import _SE_CALLS
    assert set(_SE_CALLS) <= fmus.remote._FORWARDED
    # a driver that would not forward the SE calls: one clear error, not a wrong run
    monkeypatch.setattr(fmus.remote, "_FORWARDED", fmus.remote._FORWARDED - set(_SE_CALLS))
    with pytest.raises(FMUConfigError, match="out_of_process=True is not available for "
                                             "Scheduled Execution yet: the out-of-process "
                                             "driver does not forward se_activate"):
        load_fmu(_clocks(reference_fmus), name="fmu", out_of_process=True)
    monkeypatch.undo()
    # the child process runs the partitions (the clockUpdate callback included)
    results = []
    for oop in (False, True):
        blk = load_fmu(_clocks(reference_fmus), name="fmu", out_of_process=oop)
        b = DiagramBuilder("clocks")
        b.add(blk)
        b.connect(_trigger(b, "trig", PARTITION2).outputs["y"], blk.inputs["inClock2"])
        try:
            res = _run(b, 9.0)
        finally:
            blk.free()
        results.append(([res[f"fmu.{c}"].tolist() for c in COLUMNS + ["outClock"]],
                         list(blk.events)))
    assert results[0] == results[1]


def test_a_model_exchange_or_co_simulation_fmu_with_clocks_is_refused_once(reference_fmus,
                                                                         tmp_path):
    # Dahlquist (FMI 3, ME and CS) given an input clock and a clocked output
    q = rewrite_fmu(reference_fmus[(3, "Dahlquist")], tmp_path / "step1.fmu",
                    replace={"modelDescription.xml": (
                        '<Float64 name="k"',
                        '<Clock name="tick" valueReference="10" causality="input" '
                        'intervalVariability="triggered"/>\n    <Float64 name="xs" '
                        'valueReference="11" causality="output" variability="discrete" '
                        'clocks="10"/>\n    <Float64 name="k"')})
    p = rewrite_fmu(q, tmp_path / "DahlquistClocked.fmu", replace={"modelDescription.xml": (
        '<Output valueReference="1" dependencies=""/>',
        '<Output valueReference="1" dependencies=""/>\n    '
        '<Output valueReference="11" dependencies="10"/>')})
    msg = ("FMU 'DahlquistClocked.fmu' declares 1 FMI 3 clock ('tick' (input, triggered)) "
           "clocking 1 variable (xs): cosim imports clocks only through Scheduled "
           "Execution; as {} its clocked partitions would never run")
    for make, what in ((FMUBlock, "Model Exchange"), (FMUSubsystem, "Co-Simulation")):
        with pytest.raises(FMUConfigError) as exc:
            make(FMU(p))
        text = str(exc.value)
        assert text.startswith(msg.format(what)), text
        assert "ask for a build of the model without clocks" in text
        assert "start value" not in text
    with pytest.raises(FMUConfigError, match="declares 1 FMI 3 clock"):
        load_fmu(p, interface="cs")
