"""Tests of blocks.tables: 1-D/2-D lookups, recorded-data sources, CSV files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.interpolate import RegularGridInterpolator

from blocks import Constant, FromArrays, FromFile, Integrator, Sine, Table1D, Table2D
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError, StepError
from cosim.testing import BlockHarness

X = [0.0, 1.0, 2.5, 4.0]
Y = [1.0, 3.0, 0.0, 2.0]


def table(u: float, **kw) -> float:
    return BlockHarness(Table1D("t", X, Y, **kw)).set_input("u", u).output("y")


# --------------------------------------------------------------------- Table1D
def test_table1d_linear_matches_numpy_inside():
    us = np.random.default_rng(3).uniform(0.0, 4.0, 50)
    h = BlockHarness(Table1D("t", X, Y))
    got = [h.set_input("u", u).output("y") for u in us]
    np.testing.assert_allclose(got, np.interp(us, X, Y), rtol=0, atol=1e-14)
    assert table(1.75) == pytest.approx(1.5)  # midway between 3 and 0


def test_table1d_extrapolation():
    assert table(-1.0) == 1.0 and table(9.0) == 2.0  # clip
    assert table(-1.0, extrapolation="linear") == pytest.approx(1.0 - 2.0)  # slope 2
    assert table(5.0, extrapolation="linear") == pytest.approx(2.0 + 2.0 / 1.5)
    assert table(4.0, extrapolation="error") == 2.0  # the end point is inside
    with pytest.raises(ValueError, match=r"Table1D 't'.*outside"):
        table(4.0001, extrapolation="error")


@pytest.mark.parametrize(("u", "nearest", "previous"), [
    (-3.0, 1.0, 1.0), (0.0, 1.0, 1.0), (0.49, 1.0, 1.0), (0.5, 3.0, 1.0), (1.0, 3.0, 3.0),
    (1.7, 3.0, 3.0), (1.75, 0.0, 3.0), (2.5, 0.0, 0.0), (3.99, 2.0, 0.0), (4.0, 2.0, 2.0),
    (7.0, 2.0, 2.0),
])
def test_table1d_nearest_and_previous(u, nearest, previous):
    assert table(u, interpolation="nearest") == nearest  # ties go up
    assert table(u, interpolation="previous") == previous


def test_table1d_vector_values():
    ys = np.column_stack([Y, np.arange(4.0)])
    h = BlockHarness(Table1D("t", X, ys))
    assert h.block.y_port.shape == (2,)
    np.testing.assert_allclose(h.set_input("u", 3.25).output("y"), [1.0, 2.5])


def test_table1d_in_simulation_is_evaluated_at_each_step():
    b = DiagramBuilder("d")
    s = b.add(Sine("s", amplitude=2.0, frequency_hz=1.0, bias=2.0))
    t = b.add(Table1D("t", X, Y))
    b.connect(s.y, t.u)
    res = Simulator(b.build(), dt=0.01).run(1.0)
    np.testing.assert_allclose(res["t.y"], np.interp(res["s.y"], X, Y), atol=1e-14)


def test_compiled_lookups_equal_the_general_path_bit_for_bit():
    """Linear/clip tables get a closure compiled once (blocks.tables._linear_clip_1d,
    _bilinear_clip); it must give exactly what the general method gives, NaN included."""
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-3.0, 5.0, 12))
    y = rng.normal(size=12)
    fast = Table1D("t", x, y)
    assert "lookup" in vars(fast)  # the compiled closure is in use
    us = np.concatenate([rng.uniform(-5.0, 7.0, 2000), x, [np.nan, np.inf, -np.inf]])
    for u in us.tolist():
        a, b = fast.lookup(u), Table1D.lookup(fast, u)
        assert a == b or (np.isnan(a) and np.isnan(b)), (u, a, b)
    xs, ys = np.sort(rng.uniform(0, 1, 7)), np.sort(rng.uniform(0, 9, 9))
    z = rng.normal(size=(7, 9))
    fast2 = Table2D("z", xs, ys, z)
    assert "lookup" in vars(fast2)
    u0 = np.concatenate([rng.uniform(-1.0, 2.0, 3000), xs, [0.5, np.nan]])
    u1 = np.concatenate([rng.uniform(-1.0, 10.0, 3000), ys[:7], [np.nan, 0.5]])
    for a0, a1 in zip(u0.tolist(), u1.tolist()):
        a, b = fast2.lookup(a0, a1), Table2D.lookup(fast2, a0, a1)
        assert a == b or (np.isnan(a) and np.isnan(b)), (a0, a1, a, b)
    # the other modes keep the general method
    assert "lookup" not in vars(Table1D("n", x, y, interpolation="nearest"))
    assert "lookup" not in vars(Table2D("e", xs, ys, z, extrapolation="linear"))


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Table1D("bad", [0, 1, 1, 2], [0, 1, 2, 3]), r"strictly increasing.*x\[1\]"),
    (lambda: Table1D("bad", [0, 2, 1], [0, 1, 2]), "strictly increasing"),
    (lambda: Table1D("bad", [0, 1, 2], [0, 1]), r"shape \(3,\)"),
    (lambda: Table1D("bad", [0], [1]), "at least 2"),
    (lambda: Table1D("bad", [0, np.nan], [1, 2]), "x = .*: expected a 1-D array of .*finite"),
    (lambda: Table1D("bad", X, Y, interpolation="cubic"), "interpolation"),
    (lambda: Table1D("bad", X, Y, extrapolation="wrap"), "extrapolation"),
    (lambda: Table1D("bad", X, Y, interpolation="nearest", extrapolation="linear"), "linear"),
    (lambda: Table2D("bad", [0, 1], [1, 0], [[0, 0], [0, 0]]), r"y must be strictly"),
    (lambda: Table2D("bad", [0, 1], [0, 1, 2], [[0, 0], [0, 0]]), r"\(2, 3\)"),
    (lambda: FromArrays("bad", [0.0, 1.0, 0.5], [1, 2, 3]), "strictly increasing"),
    (lambda: FromArrays("bad", [0.0, 1.0], [1, 2, 3]), r"shape \(2,\)"),
    (lambda: FromArrays("bad", [0.0, 1e-10], [1, 2]), "1 ns"),
    (lambda: FromArrays("bad", [0.0, 1.0], [1, 2], extrapolation="clip"), "extrapolation"),
])
def test_table_validation_errors_name_the_block(make, message):
    with pytest.raises(ParameterError, match="'bad'") as info:
        make()
    assert info.match(message)


# --------------------------------------------------------------------- Table2D
XG, YG = np.array([0.0, 1.0, 3.0]), np.array([-1.0, 0.0, 2.0, 2.5])
ZG = np.random.default_rng(7).normal(size=(3, 4))


def test_table2d_reproduces_bilinear_functions_exactly():
    def f(a, b):
        return 1.0 + 2.0 * a - 3.0 * b + 0.5 * a * b

    h = BlockHarness(Table2D("t", XG, YG, f(XG[:, None], YG[None, :])))
    for a, b in np.random.default_rng(1).uniform([0, -1], [3, 2.5], size=(20, 2)):
        assert h.set_inputs(u0=a, u1=b).output("y") == pytest.approx(f(a, b), abs=1e-13)


def test_table2d_matches_scipy_inside_and_with_linear_extrapolation():
    rgi = RegularGridInterpolator((XG, YG), ZG, method="linear", bounds_error=False,
                                  fill_value=None)
    h = BlockHarness(Table2D("t", XG, YG, ZG, extrapolation="linear"))
    pts = np.random.default_rng(2).uniform([-1, -2], [4, 3.5], size=(40, 2))
    got = [h.set_inputs(u0=a, u1=b).output("y") for a, b in pts]
    np.testing.assert_allclose(got, rgi(pts), rtol=0, atol=1e-13)


def test_table2d_clip_and_error():
    h = BlockHarness(Table2D("t", XG, YG, ZG))
    assert h.set_inputs(u0=-5.0, u1=9.0).output("y") == pytest.approx(ZG[0, -1])
    assert h.set_inputs(u0=3.0, u1=-1.0).output("y") == pytest.approx(ZG[-1, 0])
    he = BlockHarness(Table2D("t", XG, YG, ZG, extrapolation="error"))
    with pytest.raises(ValueError, match="u1"):
        he.set_inputs(u0=1.0, u1=2.6).output("y")


# ------------------------------------------------------------------ FromArrays
T_DATA = [0.0, 0.0123, 0.0456, 0.0789, 0.1, 0.1234]
V_DATA = [1.0, -2.0, 3.0, 3.0, 4.0, -1.0]


def rectangles(t_end: float) -> float:
    edges = np.append(T_DATA, t_end)
    return float(np.sum(np.array(V_DATA) * np.diff(edges)))


@pytest.mark.parametrize("solver", [dict(solver="rk4", dt=0.01), dict(solver="rk45")])
def test_from_arrays_previous_integral_is_exact_sum_of_rectangles(solver):
    b = DiagramBuilder("zoh_data")
    src = b.add(FromArrays("src", T_DATA, V_DATA, interpolation="previous"))
    itg = b.add(Integrator("itg"))
    b.connect(src.y, itg.u)
    t_end = 0.2
    res = Simulator(b.build(), **solver).run(t_end)
    # with dt = 10 ms no data instant is on the grid: only the time events make this exact
    assert res["itg.y"][-1] == pytest.approx(rectangles(t_end), abs=1e-13)
    assert res.at("src.y", 0.05) == 3.0


def test_from_arrays_declares_events_only_at_jumps():
    src = FromArrays("src", T_DATA, V_DATA, interpolation="previous")
    (ev,) = src.time_events
    assert ev.times == [12_300_000, 45_600_000, 100_000_000, 123_400_000]  # 3.0 -> 3.0 skipped
    assert not FromArrays("lin", T_DATA, V_DATA).time_events


def test_from_arrays_previous_uses_mode_time():
    h = BlockHarness(FromArrays("src", T_DATA, V_DATA, interpolation="previous"))
    h.set_time(0.0456)
    assert h.output("y") == 3.0
    h.ctx.mode_time = 0.04  # integrating the interval that ends at the jump: left value
    assert h.output("y") == -2.0
    h.set_time(-1.0)
    assert h.output("y") == 1.0  # hold before the data
    h.set_time(5.0)
    assert h.output("y") == -1.0  # hold after


def test_from_arrays_linear_and_vector_values():
    vals = np.column_stack([V_DATA, np.arange(6.0)])
    h = BlockHarness(FromArrays("src", T_DATA, vals))
    assert h.block.y.shape == (2,)
    t = 0.0123 + 0.25 * (0.0456 - 0.0123)
    np.testing.assert_allclose(h.set_time(t).output("y"), [-2.0 + 0.25 * 5.0, 1.25], atol=1e-12)
    np.testing.assert_allclose(h.set_time(1.0).output("y"), [-1.0, 5.0])


def test_from_arrays_vector_previous_drives_vector_integrator():
    vals = np.column_stack([V_DATA, -np.array(V_DATA) * 2.0])
    b = DiagramBuilder("vec")
    src = b.add(FromArrays("src", T_DATA, vals, interpolation="previous"))
    itg = b.add(Integrator("itg", x0=np.zeros(2)))
    b.connect(src.y, itg.u)
    res = Simulator(b.build(), solver="rk4", dt=0.01).run(0.2)
    exact = rectangles(0.2)
    np.testing.assert_allclose(res["itg.y"][-1], [exact, -2.0 * exact], atol=1e-13)


def data_integrator(extrapolation: str):
    b = DiagramBuilder("err")
    src = b.add(FromArrays("src", [0.0, 0.1], [1.0, 2.0], extrapolation=extrapolation))
    itg = b.add(Integrator("itg"))
    b.connect(src.y, itg.u)
    return b.build()


def test_from_arrays_extrapolation_error_in_simulation():
    res = Simulator(data_integrator("error"), dt=0.01).run(0.1)  # t = 0.1 is inside the data
    assert res["itg.y"][-1] == pytest.approx(0.15)
    with pytest.raises(StepError, match=r"'src'.*outside the data"):
        Simulator(data_integrator("error"), dt=0.01).run(0.12)
    res = Simulator(data_integrator("hold"), dt=0.01).run(0.12)
    assert res["itg.y"][-1] == pytest.approx(0.15 + 0.02 * 2.0)


# -------------------------------------------------------------------- FromFile
def write_csv(path, text: str):
    path.write_text(text)
    return path


def test_from_file_round_trip(tmp_path):
    t = np.linspace(0.0, 1.0, 11)
    a, bcol = np.sin(t), t ** 2
    path = tmp_path / "data.csv"
    np.savetxt(path, np.column_stack([t, a, bcol]), delimiter=",", header="time,a,b",
               comments="")
    both = BlockHarness(FromFile("f", path))
    assert both.block.columns == ["a", "b"] and both.block.y.shape == (2,)
    np.testing.assert_allclose(both.set_time(0.3).output("y"), [a[3], bcol[3]], atol=1e-15)
    only_b = BlockHarness(FromFile("g", path, columns="b", interpolation="previous"))
    assert only_b.block.y.shape == ()
    assert only_b.set_time(0.35).output("y") == pytest.approx(bcol[3])
    rev = BlockHarness(FromFile("h", str(path), columns=["b", "a"]))
    np.testing.assert_allclose(rev.set_time(0.0).output("y"), [0.0, 0.0])
    np.testing.assert_allclose(rev.set_time(1.0).output("y"), [1.0, np.sin(1.0)])


def test_from_file_plays_back_recorded_results(tmp_path):
    b = DiagramBuilder("rec")
    b.add(Sine("s", frequency_hz=2.0))
    res = Simulator(b.build(), dt=0.01).run(0.5)
    path = tmp_path / "results.csv"
    res.to_pandas().to_csv(path)  # header "time,s.y": the signal names (issue 30)
    d = DiagramBuilder("play")
    d.add(FromFile("src", path, columns="s.y"))
    played = Simulator(d.build(), dt=0.01).run(0.5)
    np.testing.assert_allclose(played["src.y"], res["s.y"], atol=1e-12)
    assert list(pd.read_csv(path).columns) == ["time", "s.y"]


def test_from_file_errors_name_file_and_columns(tmp_path):
    path = write_csv(tmp_path / "d.csv", "# a comment\ntime,speed,torque\n0,1,2\n1,3,4\n")
    with pytest.raises(ParameterError) as info:
        FromFile("ff", path, columns=["speed", "pressure"])
    msg = str(info.value)
    assert "'ff'" in msg and str(path) in msg and "'pressure'" in msg
    assert "available columns: time, speed, torque" in msg
    with pytest.raises(ParameterError, match="column 't' not found"):
        FromFile("ff", path, time_column="t")
    with pytest.raises(ParameterError, match="cannot read"):
        FromFile("ff", tmp_path / "missing.csv")
    bad = write_csv(tmp_path / "bad.csv", "time,x\n0,1\n0.5,oops\n")
    with pytest.raises(ParameterError, match="non-numeric"):
        FromFile("ff", bad)
    unsorted = write_csv(tmp_path / "unsorted.csv", "time,x\n0,1\n2,2\n1,3\n")
    with pytest.raises(ParameterError, match=r"strictly increasing.*unsorted\.csv"):
        FromFile("ff", unsorted)
    empty = write_csv(tmp_path / "empty.csv", "time,x\n")
    with pytest.raises(ParameterError, match="no data rows"):
        FromFile("ff", empty)


def test_constant_input_table_in_diagram_units():
    b = DiagramBuilder("u")
    c = b.add(Constant("c", 1000.0, unit="rpm"))
    t = b.add(Table1D("t", [0.0, 100.0, 200.0], [0.0, 1.0, 4.0], input_unit="rad/s"))
    b.connect(c.y, t.u)  # converted on the wire: 1000 rpm = 104.72 rad/s
    res = Simulator(b.build(), dt=0.1).run(0.1)
    assert res["t.y"][0] == pytest.approx(1.0 + 3.0 * (1000 * 2 * np.pi / 60 - 100) / 100)


# ------------------------------------------------- repeated times: steps (FMPy's Input)
T_STEP = [0.0, 0.5, 0.5, 1.0, 1.5, 1.5, 1.5, 2.0]
V_STEP = [0.0, 1.0, 3.0, 2.0, 2.0, -1.0, 5.0, 4.0]


def test_a_repeated_time_is_a_step_as_in_fmpys_input():
    fmpy_input = pytest.importorskip("fmpy.simulation").Input
    t, table = np.array(T_STEP), np.array([V_STEP])
    h = BlockHarness(FromArrays("src", T_STEP, V_STEP))
    for time in np.linspace(-0.5, 2.5, 61).tolist() + [0.5, 1.5, 1e-9 + 0.5]:
        want, _ = fmpy_input.interpolate(time, t, table, after_event=True)
        assert h.set_time(time).output("y") == pytest.approx(want[0], abs=1e-15), time
        if time in (0.5, 1.5):  # integrating up to the instant: FMPy's value before it
            h.ctx.mode_time = time - 0.1
            left, _ = fmpy_input.interpolate(time, t, table, after_event=False)
            assert h.output("y") == left[0] == {0.5: 1.0, 1.5: 2.0}[time]
    prev = BlockHarness(FromArrays("zoh", T_STEP, V_STEP, interpolation="previous"))
    for time in np.linspace(-0.5, 2.5, 61):
        want, _ = fmpy_input.interpolate(time, t, table, discrete=True, after_event=True)
        assert prev.set_time(time).output("y") == want[0], time


def test_steps_are_time_events_and_integrate_exactly():
    src = FromArrays("src", T_STEP, V_STEP)
    (ev,) = src.time_events
    assert ev.times == [500_000_000, 1_500_000_000]  # not the kinks at 1.0 and 2.0
    b = DiagramBuilder("steps")
    s = b.add(src)
    itg = b.add(Integrator("itg"))
    b.connect(s.y, itg.u)
    res = Simulator(b.build(), solver="rk4", dt=0.3).run(2.0)  # no step lands on 0.5, 1.5
    # trapezoids of the piecewise-linear signal with its jumps (RK4 is exact on lines)
    exact = 0.5 * 0.5 * ((0 + 1) + (3 + 2) + (2 + 2) + (5 + 4))
    assert res["itg.y"][-1] == pytest.approx(exact, abs=1e-12)


def test_a_file_with_repeated_times_plays_steps(tmp_path):
    path = write_csv(tmp_path / "u.csv", "time,u\n0,0\n1,0\n1,2\n2,2\n")
    h = BlockHarness(FromFile("f", path))
    assert h.set_time(0.999).output("y") == 0.0 and h.set_time(1.0).output("y") == 2.0
    h.ctx.mode_time = 0.9
    assert h.output("y") == 0.0
    with pytest.raises(ParameterError, match=r"strictly increasing except where a time is "
                                             r"repeated \(a step\), but t\[2\] = 1.0"):
        FromFile("f", write_csv(tmp_path / "v.csv", "time,u\n0,0\n1,0\n1.0,2\n0.5,2\n"))
    with pytest.raises(ParameterError, match="2 different instants"):
        FromArrays("f", [1.0, 1.0], [0.0, 1.0])
