"""Recorder, Results (units, provenance, pandas) and custom observers."""

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.math import Mux
from blocks.sources import Constant, Sine
from cosim import DiagramBuilder, Observer, Recorder, Simulator
from cosim.errors import PortError


def _diagram():
    b = DiagramBuilder("obs")
    c = b.add(Constant("v", 2.0, unit="m/s"))
    i = b.add(Integrator("x", unit="m", input_unit="m/s"))
    s = b.add(Sine("s", 1.0, 1.0))
    m = b.add(Mux("mux", 2))
    b.connect(c.y, i.u)
    b.connect(s.y, m.ins[0])
    b.connect(c.y, m.ins[1])
    return b.build()


def test_results_have_units_provenance_and_pandas():
    sim = Simulator(_diagram(), solver="rk4", dt=0.01)
    res = sim.run(1.0)
    assert res.units["x.y"] == "m" and res["x.y"][-1] == pytest.approx(2.0)
    assert res["mux.y"].shape == (101, 2)
    prov = res.provenance
    assert prov["model"] == "obs" and len(prov["model_hash"]) == 16
    assert prov["solver"]["solver"] == "rk4" and prov["solver"]["dt"] == 0.01
    assert prov["versions"]["numpy"] == np.__version__
    df = res.to_pandas()  # columns named by the signals, units beside (issue 30)
    assert "x.y" in df.columns and "mux.y[1]" in df.columns
    assert df.attrs["units"]["x.y"] == "m" and df.attrs["units"]["time"] == "s"
    assert df.index.name == "time" and df.attrs["provenance"] == prov
    with pytest.raises(PortError, match="signal 'x.yy' was not recorded.*Did you mean 'x.y'"):
        res["x.yy"]


def test_model_hash_changes_with_structure_not_with_runs():
    h1 = Simulator(_diagram(), solver="rk4", dt=0.1).run(0.1).provenance["model_hash"]
    h2 = Simulator(_diagram(), solver="rk4", dt=0.1).run(0.2).provenance["model_hash"]
    assert h1 == h2
    b = DiagramBuilder("obs")
    b.add(Constant("v", 3.0, unit="m/s"))
    h3 = Simulator(b.build()).run(0.0).provenance["model_hash"]
    assert h3 != h1


def test_decimation_and_custom_observer():
    class Count(Observer):
        def __init__(self):
            self.n = 0
            self.finished = None

        def on_sample(self, sim):
            self.n += 1

        def on_finish(self, sim, error=None):
            self.finished = error

    cnt = Count()
    rec = Recorder(["x.y"], every=10)
    res = Simulator(_diagram(), solver="rk4", dt=0.01, record=False,
                    observers=[rec, cnt]).run(1.0)
    assert cnt.n == 101 and cnt.finished is None
    assert len(rec.times) == 11 and rec.times[1] == pytest.approx(0.1)
    assert len(res.time) == 0  # the built-in recorder was off


def test_recorder_rejects_bad_decimation():
    with pytest.raises(ValueError, match="every must be >= 1"):
        Recorder("all", every=0)


def test_decimation_stays_on_the_time_grid_across_events(ball_cls):
    """record_every=5 at dt = 10 ms keeps t = 0, 0.05, 0.10, ... and the event samples;
    counting samples instead shifted the grid after each bounce."""
    import numpy as np

    from cosim import DiagramBuilder, Simulator
    b = DiagramBuilder("bb")
    ball = b.add(ball_cls("ball"))
    res = Simulator(b.build(), solver="rk4", dt=0.01, record=["ball.h"],
                    record_every=5).run(4.0)
    ticks = np.round(res.time * 1e9).astype(np.int64)
    on_grid = ticks[ticks % 10_000_000 == 0]
    assert (on_grid % 50_000_000 == 0).all()
    assert len(on_grid) == 81  # 0, 0.05, ..., 4.0
    off = res.time[ticks % 10_000_000 != 0]
    assert len(ball.impacts) == 2 and np.allclose(off, ball.impacts, atol=1e-9)


def test_an_exported_output_of_a_nested_diagram_can_be_recorded():
    """'car.x' where car is a sub-diagram exporting its body's x (found by the ACC on the
    full vehicle: the recorder had no slot for it)."""
    from blocks.continuous import Integrator
    from blocks.sources import Constant
    from cosim import DiagramBuilder, Simulator
    inner = DiagramBuilder("car")
    i = inner.add(Integrator("body", 0.0))
    inner.export_input(i.u, "u")
    inner.export_output(i.y, "x")
    top = DiagramBuilder("top")
    car = top.add(inner.build())
    c = top.add(Constant("c", 2.0))
    top.connect(c.y, car.input("u"))
    res = Simulator(top.build(), solver="rk4", dt=0.1, record=["car.x", "car/body.y"]).run(1.0)
    assert (res["car.x"] == res["car/body.y"]).all()
    assert res["car.x"][-1] == pytest.approx(2.0, abs=1e-14)
