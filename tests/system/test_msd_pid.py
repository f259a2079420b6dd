"""Closed-loop mass-spring-damper + PID against the matrix-exponential solution.

Model and reference from the benchmark (bench/models.py): m x'' + c x' + k x = u
with m=1, c=2, k=20; PID Kp=100, Ki=50, Kd=10 with derivative filter
N=100 rad/s, unit step reference at t = 1 s.
"""

import numpy as np
import pytest

from bench.models import PID_A as QA
from bench.models import PID_B as QB
from bench.models import PID_C as QC
from bench.models import PID_D as QD
from bench.models import PLANT_A as PA
from bench.models import PLANT_B as PB
from bench.models import PLANT_C as PC
from bench.models import reference_msd_pid as reference
from blocks.lti import StateSpace
from blocks.math import Sum
from blocks.sources import Step
from cosim import DiagramBuilder, Simulator


def build():
    b = DiagramBuilder("msd_pid")
    r = b.add(Step("ref", 1.0))
    e = b.add(Sum("err", "+-"))
    pid = b.add(StateSpace("pid", QA, QB, QC, QD))
    plant = b.add(StateSpace("plant", PA, PB, PC, [[0.0]]))
    b.connect(r.y, e.ins[0])
    b.connect(plant.y, e.ins[1])
    b.connect(e.y, pid.u)
    b.connect(pid.y, plant.u)
    return b.build()


@pytest.mark.parametrize("fuse", [True, False])
def test_rk4_matches_matrix_exponential(fuse):
    res = Simulator(build(), solver="rk4", dt=1e-3, record=["plant.y"],
                    fuse_linear=fuse).run(10.0)
    np.testing.assert_allclose(res["plant.y"][::500], reference(res.time[::500]), atol=5e-12)


@pytest.mark.parametrize("solver, tol", [("dop853", 1e-9), ("radau", 1e-7), ("bdf", 1e-5)])
def test_variable_step_solvers(solver, tol):
    res = Simulator(build(), solver=solver, dt=0.01, rtol=1e-10, atol=1e-12,
                    record=["plant.y"]).run(5.0)
    np.testing.assert_allclose(res["plant.y"], reference(res.time), atol=tol)


def test_rk4_global_error_is_fourth_order():
    errs = []
    for dt in (4e-3, 2e-3):
        res = Simulator(build(), solver="rk4", dt=dt, record=["plant.y"]).run(3.0)
        errs.append(np.max(np.abs(res["plant.y"] - reference(res.time))))
    assert 3.7 < np.log2(errs[0] / errs[1]) < 4.3
