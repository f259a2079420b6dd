"""DC-motor speed loop: a discrete PI controller at 1 ms, the motor integrated at 0.1 ms.

The speed reference is given in rpm and converted to rad/s on the connection
(units are checked and converted by ``connect``); the PI output is limited to
the +-24 V supply with back-calculation anti-windup; a load torque is applied
at 0.35 s.  Run it with ``make demo``, ``python examples/dc_motor_speed_loop.py``
or ``cosim run examples/dc_motor_speed_loop.py --plot``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from blocks.electric import DCMotor
from blocks.math import Sum
from blocks.pid import DiscretePID
from blocks.sources import Step
from cosim import DiagramBuilder, Simulator
from cosim.writers import CsvWriter, Hdf5Writer

MOTOR = dict(resistance_ohm=0.5, inductance_h=1.5e-3, torque_constant_nm_per_a=0.05,
             inertia_kgm2=2.5e-4, friction_nms_per_rad=1e-4)
SPEED_RPM = 3000.0
LOAD_NM = 0.1
SIMULATION = dict(t_end=0.6, solver="rk4", dt=1e-4)


def build():
    """The speed loop as a diagram (the function ``cosim run`` calls)."""
    b = DiagramBuilder("dc_motor_speed_loop")
    ref = b.add(Step("speed_ref", time_s=0.05, final=SPEED_RPM, unit="rpm"))
    load = b.add(Step("load", time_s=0.35, final=LOAD_NM, unit="N*m"))
    err = b.add(Sum("error", "+-", unit="rad/s"))
    pi = b.add(DiscretePID("pi", period_s=1e-3, kp=0.25, ki=5.0, lower=-24.0, upper=24.0,
                           anti_windup="back_calculation", input_unit="rad/s", unit="V"))
    motor = b.add(DCMotor("motor", **MOTOR))
    b.connect(ref.y, err.ins[0])            # rpm -> rad/s converted here
    b.connect(motor.speed, err.ins[1])
    b.connect(err.y, pi.e)
    b.connect(pi.u, motor.voltage)
    b.connect(load.y, motor.load_torque)
    return b.build()


RECORD = ["speed_ref.y", "motor.speed", "motor.current", "pi.u", "load.y"]


def summarize(res, wall_s: float) -> dict:
    t, w = res.time, res["motor.speed"]
    target = SPEED_RPM * 2 * np.pi / 60
    before_load = (t >= 0.05) & (t < 0.35)
    w_b, t_b = w[before_load], t[before_load]
    rise = t_b[np.argmax(w_b >= 0.9 * target)] - 0.05 if np.any(w_b >= 0.9 * target) else None
    after = t >= 0.35
    return {
        "target_rad_s": target,
        "time_to_90pct_s": rise,
        "overshoot_pct": 100 * (w_b.max() - target) / target,
        "speed_before_load_rad_s": float(w[t < 0.35][-1]),
        "speed_dip_under_load_rad_s": float(target - w[after].min()),
        "final_speed_rad_s": float(w[-1]),
        "steady_state_error_rad_s": float(target - w[-1]),
        "peak_current_a": float(np.max(np.abs(res["motor.current"]))),
        "voltage_saturated_s": float(np.sum(np.abs(res["pi.u"]) >= 24.0 - 1e-9) * 1e-4),
        "wall_s": wall_s,
        "real_time_factor": SIMULATION["t_end"] / wall_s,
        "steps": res.diagnostics["steps"],
    }


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/dc_motor_speed_loop", help="output folder")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    writers = [CsvWriter(os.path.join(args.out, "results.csv"), RECORD)]
    try:
        writers.append(Hdf5Writer(os.path.join(args.out, "results.h5"), RECORD))
    except ImportError:
        print("h5py not installed: writing CSV only")
    d = build()
    sim = Simulator(d, solver=SIMULATION["solver"], dt=SIMULATION["dt"], record=RECORD,
                    observers=writers)
    wall = time.perf_counter()
    res = sim.run(SIMULATION["t_end"])
    wall = time.perf_counter() - wall
    s = summarize(res, wall)
    print(f"DC-motor speed loop: PI at 1 ms, motor (RK4) at 0.1 ms, {s['steps']} steps")
    print(f"  reference {SPEED_RPM:.0f} rpm = {s['target_rad_s']:.2f} rad/s at 0.05 s, "
          f"load {LOAD_NM} N*m at 0.35 s")
    print(f"  time to 90 % of target  {s['time_to_90pct_s'] * 1e3:8.2f} ms")
    print(f"  overshoot                {s['overshoot_pct']:8.2f} %")
    print(f"  supply saturated for     {s['voltage_saturated_s'] * 1e3:8.2f} ms "
          "(anti-windup active)")
    print(f"  speed dip under load     {s['speed_dip_under_load_rad_s']:8.3f} rad/s")
    print(f"  final speed              {s['final_speed_rad_s']:8.3f} rad/s "
          f"(error {s['steady_state_error_rad_s']:.2e})")
    print(f"  peak current             {s['peak_current_a']:8.2f} A")
    print(f"  wall time {wall:.3f} s = {s['real_time_factor']:.1f}x real time")
    for w in writers:
        print(f"  results: {w.path}")
    if not args.no_plot:
        try:
            from cosim.plotting import plot_results
            print("  plot:", plot_results(res, os.path.join(args.out, "plot.png"),
                                          title="DC-motor speed loop"))
        except Exception as exc:  # plotting is optional
            print(f"  (no plot: {exc})")
    return s


if __name__ == "__main__":
    main()
