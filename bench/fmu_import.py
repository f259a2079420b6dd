"""Cost of the FMU import over fmpy's raw calls (CS subsystem and ME block).

Builds the C test FMU ``Oscillator`` (tests/fmu_sources, FMI 2.0 ME + CS) and measures,
median of many steps:

* CS: one master step of :class:`fmus.FMUSubsystem` (``set_inputs`` + ``do_step`` +
  ``get_outputs``) against the same FMU driven by fmpy's low-level calls with
  preallocated buffers (``fmi2SetReal`` + ``fmi2DoStep`` + ``fmi2GetReal``) and by
  fmpy's convenience methods (``setReal`` + ``doStep`` + ``getReal``);
* CS out of process (:mod:`fmus.remote`): the same step, one round trip to the child;
* ME, per derivative evaluation: :meth:`FMUBlock.derivatives` at a new point against
  ``fmi2SetTime`` + ``fmi2SetContinuousStates`` + ``fmi2SetReal`` + ``fmi2GetDerivatives``;
* ME, per RK4 step: the block in a diagram run by cosim's ``Simulator`` (1 ms, constant
  input) against a hand-written RK4 loop over fmpy's low-level calls (mean).

Usage: ``python -m bench.fmu_import [--steps N]``
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _median_us(samples: list[int]) -> float:
    return statistics.median(samples) / 1e3


def measure(steps: int = 20000) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from blocks.sources import Constant
    from cosim import DiagramBuilder, Simulator
    from cosim.testing import BlockHarness
    from fmus import FMU
    from tests.fmu_builders import build_c_fmu
    out: dict = {}
    with tempfile.TemporaryDirectory() as td:
        path = build_c_fmu("oscillator", Path(td))
        fmu = FMU(path)
        # ---------------------------------------------------------------- CS raw
        from fmpy.fmi2 import FMU2Slave
        raw = FMU2Slave(guid=fmu.info.token, unzipDirectory=str(fmu.root),
                        modelIdentifier="Oscillator", instanceName="raw")
        raw.instantiate()
        raw.setupExperiment(startTime=0.0)
        raw.enterInitializationMode()
        raw.exitInitializationMode()
        vr_in = (ctypes.c_uint * 1)(4)
        val_in = (ctypes.c_double * 1)()
        vr_out = (ctypes.c_uint * 4)(0, 2, 10, 11)
        val_out = (ctypes.c_double * 4)()
        vr_i = (ctypes.c_uint * 1)(0)
        val_i = (ctypes.c_int * 1)()
        val_b = (ctypes.c_int * 1)()
        c = raw.component
        h = 1e-3
        ts = []
        for k in range(steps):
            t = k * h
            t0 = time.perf_counter_ns()
            val_in[0] = 0.1 * (k % 7)
            raw.fmi2SetReal(c, vr_in, 1, val_in)
            raw.fmi2DoStep(c, t, h, 1)
            raw.fmi2GetReal(c, vr_out, 4, val_out)
            raw.fmi2GetInteger(c, vr_i, 1, val_i)  # the same calls as the subsystem:
            raw.fmi2GetBoolean(c, vr_i, 1, val_b)  # its Integer and Boolean outputs too
            _ = val_out[:]
            ts.append(time.perf_counter_ns() - t0)
        out["cs_raw_lowlevel_us"] = _median_us(ts)
        ts = []
        for k in range(steps):
            t = (steps + k) * h
            t0 = time.perf_counter_ns()
            raw.setReal([4], [0.1 * (k % 7)])
            raw.doStep(t, h)
            raw.getReal([0, 2, 10, 11])
            raw.getInteger([0])
            raw.getBoolean([0])
            ts.append(time.perf_counter_ns() - t0)
        out["cs_raw_convenience_us"] = _median_us(ts)
        raw.terminate()
        raw.freeInstance()
        # --------------------------------------------------------------- CS ours
        sub = fmu.subsystem("osc", input_derivative_order=0)
        sub.initialize(0)
        H = 1_000_000
        ts = []
        for k in range(steps):
            t0 = time.perf_counter_ns()
            sub.set_inputs(k * 1e-3, {"F": (0.1 * (k % 7),)})
            sub.do_step(k * H, H)
            sub.get_outputs()
            ts.append(time.perf_counter_ns() - t0)
        out["cs_subsystem_us"] = _median_us(ts)
        sub.free()
        # ------------------------------------------------ CS out of process
        oop = fmu.subsystem("osc_oop", input_derivative_order=0, out_of_process=True)
        oop.initialize(0)
        ts = []
        for k in range(min(steps, 5000)):
            t0 = time.perf_counter_ns()
            oop.set_inputs(k * 1e-3, {"F": (0.1 * (k % 7),)})
            oop.do_step(k * H, H)
            oop.get_outputs()
            ts.append(time.perf_counter_ns() - t0)
        out["cs_subsystem_out_of_process_us"] = _median_us(ts)
        oop.free()
        # --------------------------------------------------------------- ME raw
        from fmpy.fmi2 import FMU2Model
        me = FMU2Model(guid=fmu.info.token, unzipDirectory=str(fmu.root),
                       modelIdentifier="Oscillator", instanceName="me")
        me.instantiate()
        me.setupExperiment(startTime=0.0)
        me.enterInitializationMode()
        me.exitInitializationMode()
        me.newDiscreteStates()
        me.enterContinuousTimeMode()
        c = me.component
        x = (ctypes.c_double * 2)(0.1, 0.0)
        dx = (ctypes.c_double * 2)()

        def f(t: float, xs: np.ndarray, u: float) -> np.ndarray:
            me.fmi2SetTime(c, t)
            x[0], x[1] = xs
            me.fmi2SetContinuousStates(c, x, 2)
            val_in[0] = u
            me.fmi2SetReal(c, vr_in, 1, val_in)
            me.fmi2GetDerivatives(c, dx, 2)
            return np.array(dx[:])

        ts = []
        xs = np.array([0.1, 0.0])
        for k in range(steps):
            t0 = time.perf_counter_ns()
            f(k * 1e-6, xs + 1e-9 * k, 0.5)
            ts.append(time.perf_counter_ns() - t0)
        out["me_raw_eval_us"] = _median_us(ts)
        t0 = time.perf_counter()
        xs = np.array([0.1, 0.0])
        n_rk = steps // 4
        for k in range(n_rk):
            t = k * h
            k1 = f(t, xs, 0.5)
            k2 = f(t + h / 2, xs + h / 2 * k1, 0.5)
            k3 = f(t + h / 2, xs + h / 2 * k2, 0.5)
            k4 = f(t + h, xs + h * k3, 0.5)
            xs = xs + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out["me_raw_rk4_step_us"] = (time.perf_counter() - t0) / n_rk * 1e6
        me.terminate()
        me.freeInstance()
        # --------------------------------------------------------------- ME ours
        blk = fmu.block("osc")
        hn = BlockHarness(blk)
        hn.set_input("F", 0.5)
        ts = []
        for k in range(steps):
            hn.set_time(k * 1e-6)
            hn.ctx.set_state(blk.xh, [0.1 + 1e-9 * k, 1e-9 * k])
            t0 = time.perf_counter_ns()
            blk.derivatives(hn.ctx)
            ts.append(time.perf_counter_ns() - t0)
        out["me_block_eval_us"] = _median_us(ts)
        b = DiagramBuilder("bench")
        src = b.add(Constant("F", 0.5, unit="N"))
        blk2 = b.add(fmu.block("osc"))
        b.connect(src.y, blk2.input("F"))
        sim = Simulator(b.build(), solver="rk4", dt=1e-3, record=False)
        sim.advance_to(0.01)
        t0 = time.perf_counter()
        sim.advance_to(0.01 + n_rk * 1e-3)
        out["me_block_rk4_step_us"] = (time.perf_counter() - t0) / n_rk * 1e6
    out["cs_overhead_us"] = out["cs_subsystem_us"] - out["cs_raw_lowlevel_us"]
    out["me_eval_overhead_us"] = out["me_block_eval_us"] - out["me_raw_eval_us"]
    out["me_rk4_step_overhead_us"] = out["me_block_rk4_step_us"] - out["me_raw_rk4_step_us"]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000)
    a = ap.parse_args(argv)
    res = measure(a.steps)
    for k, v in res.items():
        print(f"{k:28s} {v:8.2f}")


if __name__ == "__main__":
    main()
