"""Our own exported Model Exchange FMU, imported back into a diagram, against the native
diagram: the import's event handling has no reference closer than the model itself.

The model: a sampled PI controller (10 ms) on a continuous second-order plant.  The
diagram's reference steps at 0.1 s, a sample instant of the controller: at that instant
the FMU's own time event (its sample hit) and the Step's time event coincide, and the
controller must see the new reference (as the native diagram does: inputs of a sampled
block are read at its hit).
"""

from __future__ import annotations

import numpy as np
import pytest

from blocks import DiscretePID, StateSpace, Step, Sum
from cosim import DiagramBuilder, Simulator

pytest.importorskip("fmpy")

from fmus import load_fmu  # noqa: E402
from fmus.export import export_fmu  # noqa: E402


def servo():
    """e = r - y; u = PI(e) sampled at 10 ms; plant y'' = -4 y - 0.8 y' + u."""
    b = DiagramBuilder("servo")
    b.add(Sum("err", "+-"))
    b.add(DiscretePID("pid", 0.01, kp=3.0, ki=1.5))
    b.add(StateSpace("plant", [[0, 1], [-4, -0.8]], [[0], [1]], [[1, 0]]))
    b.connect("err.y", "pid.e")
    b.connect("pid.u", "plant.u")
    b.connect("plant.y", "err.u1")
    b.export_input("err.u0", "r")
    b.export_output("plant.y", "y")
    b.export_output("pid.u", "u")
    return b.build()


def _run(inner, solver="rk4", dt=1e-3, t_end=0.5, step_at=0.1):
    b = DiagramBuilder("top")
    st = b.add(Step("st", time_s=step_at, final=1.0))
    m = b.add(inner)
    b.connect(st.y, m.input("r"))
    return Simulator(b.build(), solver=solver, dt=dt, record=[m.output("y"), m.output("u")],
                     event_samples="after").run(t_end)


@pytest.mark.parametrize("version", ["2.0", "3.0"])
@pytest.mark.parametrize("step_at", [0.1, 0.1035])
def test_reimported_me_fmu_sees_an_input_step_on_its_sample_instant(tmp_path, version,
                                                                    step_at):
    """Simultaneous events: the reference steps on (0.1 s) or between (0.1035 s) the
    controller's sample instants; the re-imported FMU equals the native diagram."""
    path = export_fmu(servo(), tmp_path / "servo.fmu", version, "me")
    native = _run(servo(), step_at=step_at)
    fmu = _run(load_fmu(path, name="servo"), step_at=step_at)
    assert np.array_equal(native.time, fmu.time)
    u_err = np.max(np.abs(native["servo.u"] - fmu["servo.u"]))
    y_err = np.max(np.abs(native["servo.y"] - fmu["servo.y"]))
    # the controller's first response to the step (kp + ki T = 3.015 at the hit)
    k = np.searchsorted(native.time, 0.11 if step_at == 0.1 else 0.111, side="left")
    assert native["servo.u"][k] > 2.9
    assert u_err <= 1e-12 and y_err <= 1e-12, (u_err, y_err)
