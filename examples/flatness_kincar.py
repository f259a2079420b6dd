"""Kinematic car lane change by flatness: the plan, open loop, and exact tracking.

The reference is python-control's ``examples/kincar-flatsys.py`` (0.10.2): wheelbase 3 m,
from (x, y, theta) = (0, -2, 0) at 10 m/s to (40, 2, 0) at 10 m/s in 4 s.

1. plan: the quintic :class:`~blocks.controllers.flatness.PolynomialPlan` in the flat
   outputs (x, y), boundary flags from ``KinematicCarFlat.forward``; compared with the
   closed form and with ``control.flatsys.point_to_point`` (``PolyFamily(6)``) when
   python-control is installed;
2. open loop: the :class:`~blocks.controllers.flatness.kincar.KinematicCar` plant driven
   by the plan's inputs (``reverse``) follows the plan to integrator accuracy (and
   python-control's own open-loop simulation, ``input_output_response``, to its
   interpolation and tolerance error);
3. closed loop: the car starts 0.5 m off the lane and 0.1 rad off heading; the
   :class:`~blocks.controllers.flatness.FlatTracker` (speed prolonged, kp = kv = 4: double
   pole at -2) makes each error obey e'' + 4 e' + 4 e = 0, compared with its solution.

Run ``python examples/flatness_kincar.py [--out DIR] [--no-plot]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.linalg import expm

from blocks.controllers.flatness import FlatTracker, PolynomialPlan, check_plan
from blocks.controllers.flatness.kincar import (
    LANE_CHANGE,
    KinematicCar,
    KinematicCarFlat,
    KinematicCarLaw,
    lane_change_analytic,
)
from blocks.sources import ClosedFormSource
from cosim import DiagramBuilder, Simulator
from cosim.plotting import save_figure

WHEELBASE_M = 3.0
#: the closed loop's start: 0.5 m right of the plan's start, heading 0.1 rad
X0_OFFSET = (0.0, -1.5, 0.1)
GAINS = {"kp": 4.0, "kv": 4.0}
DT = 5e-3
T_END = 6.0


def lane_change_plan(car: KinematicCarFlat) -> PolynomialPlan:
    lc = LANE_CHANGE
    return PolynomialPlan(0.0, lc["T"], car.forward(lc["x0"], lc["u0"]),
                          car.forward(lc["xf"], lc["uf"]))


def open_loop(car, plan, dt=DT, t_end=LANE_CHANGE["T"]):
    """The plant driven by the plan's inputs (feedforward only)."""
    b = DiagramBuilder("kincar_open_loop")
    ff = b.add(ClosedFormSource("feedforward", lambda t: car.reverse(plan.flag(t, 2))[1],
                                shape=(2,)))
    plant = b.add(KinematicCar("car", x0=LANE_CHANGE["x0"], b=car.b))
    b.connect(ff.y, plant.u)
    return Simulator(b.build(), solver="rk4", dt=dt, record=["car.x", "feedforward.y"]).run(t_end)


def closed_loop(plan, x0=X0_OFFSET, dt=DT, t_end=T_END):
    b = DiagramBuilder("kincar_tracking")
    plant = b.add(KinematicCar("car", x0=x0, b=WHEELBASE_M))
    tr = b.add(FlatTracker("tracker", KinematicCarLaw(WHEELBASE_M), plan, x0=x0, **GAINS))
    b.connect(plant.x, tr.x)
    b.connect(tr.u, plant.u)
    res = Simulator(b.build(), solver="rk4", dt=dt,
                    record=["car.x", "tracker.u", "tracker.error", "tracker.z_ref"]).run(t_end)
    return res, tr


def error_solution(tracker, plan, x0, t):
    """Solution of e'' + kv e' + kp e = 0 from the initial error (one column per output)."""
    zd = plan.flag(plan.t0, 2)
    x0 = np.asarray(x0, float)
    zm = tracker.law.measured_flag(x0, tracker.law.extension_initial(x0, zd))
    cols = []
    for i, (kp, kv) in enumerate(tracker.k):
        A = np.array([[0.0, 1.0], [-kp, -kv]])
        e0 = np.array([zd[i][0] - zm[i, 0], zd[i][1] - zm[i, 1]])
        cols.append([(expm(A * ti) @ e0)[0] for ti in t])
    return np.array(cols).T


def compare_python_control(car, plan, times):
    """Max deviations of python-control's plan and open loop from ours (None: not installed)."""
    try:
        import control as ct
        import control.flatsys as fs

        from blocks.controllers.flatness import plan_flatsys
    except ImportError:
        return None
    lc = LANE_CHANGE
    fp = plan_flatsys(car, lc["T"], lc["x0"], lc["u0"], lc["xf"], lc["uf"],
                      basis=fs.PolyFamily(6))
    xd, ud = fp.trajectory.eval(times)
    ours = [car.reverse(plan.flag(t, 2)) for t in times]
    xo = np.array([o[0] for o in ours]).T
    uo = np.array([o[1] for o in ours]).T
    # python-control's open loop, as in its example (inputs interpolated on 500 points)
    T = np.linspace(0, lc["T"], 500)
    _, ud500 = fp.trajectory.eval(T)
    resp = ct.input_output_response(car.to_flatsys(), T, ud500, lc["x0"])
    a = lane_change_analytic(T)
    return {"plan_flag_max_dev": float(np.max(np.abs(fp.evaluate(times, 2)
                                                     - plan.evaluate(times, 2)))),
            "plan_state_max_dev": float(np.max(np.abs(xd - xo))),
            "plan_input_max_dev": float(np.max(np.abs(ud - uo))),
            "pc_open_loop_max_dev_m": float(max(np.max(np.abs(resp.states[0] - a["x"])),
                                                np.max(np.abs(resp.states[1] - a["y"]))))}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/flatness_kincar", help="output folder")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    wall = time.perf_counter()

    car = KinematicCarFlat(WHEELBASE_M)
    plan = lane_change_plan(car)
    report = check_plan(car, plan, singular_tol=1.0)      # keep above 1 m/s
    table = {}
    for t in (1.0, 2.0, 3.0):
        x, u = car.reverse(plan.flag(t, 2))
        table[t] = (float(x[1]), float(x[2]), float(u[0]), float(u[1]))
    grid = np.linspace(0.0, LANE_CHANGE["T"], 401)
    a = lane_change_analytic(grid, WHEELBASE_M)
    xu = [car.reverse(plan.flag(t, 2)) for t in grid]
    dev_closed_form = max(
        np.max(np.abs(np.array([v[0] for v in xu]).T - np.array([a["x"], a["y"], a["theta"]]))),
        np.max(np.abs(np.array([v[1] for v in xu]).T - np.array([a["v"], a["delta"]]))))

    ol = open_loop(car, plan)
    Xo = np.asarray(ol["car.x"])
    ao = lane_change_analytic(ol.time, WHEELBASE_M)
    ol_dev = float(np.max(np.abs(Xo - np.array([ao["x"], ao["y"], ao["theta"]]).T)))

    cl, tr = closed_loop(plan)
    e = np.asarray(cl["tracker.error"])
    ea = error_solution(tr, plan, X0_OFFSET, cl.time)
    Xc = np.asarray(cl["car.x"])
    Uc = np.asarray(cl["tracker.u"])
    Zr = np.asarray(cl["tracker.z_ref"])

    s = {"plan_vs_closed_form_max_dev": float(dev_closed_form),
         "table": table,
         "min_speed_m_s": report.min_singularity[0],
         "max_steering_rad": float(np.max(np.abs(report.u[1]))),
         "open_loop_max_dev": ol_dev,
         "open_loop_final_state": Xo[-1].tolist(),
         "closed_loop_initial_error_m": e[0].tolist(),
         "closed_loop_final_error_m": e[-1].tolist(),
         "closed_loop_max_steering_rad": float(np.max(np.abs(Uc[:, 1]))),
         "closed_loop_error_vs_solution_max": float(np.max(np.abs(e - ea))),
         "python_control": compare_python_control(car, plan, grid)}

    n = min(len(ol.time), len(cl.time))
    uff = np.asarray(ol["feedforward.y"])
    cols = {"t": cl.time, "x_ref": Zr[:, 0], "y_ref": Zr[:, 1], "x_cl": Xc[:, 0],
            "y_cl": Xc[:, 1], "theta_cl": Xc[:, 2], "v_cl": Uc[:, 0], "delta_cl": Uc[:, 1],
            "ex": e[:, 0], "ey": e[:, 1], "ex_solution": ea[:, 0], "ey_solution": ea[:, 1]}
    extra = {"x_ol": Xo[:, 0], "y_ol": Xo[:, 1], "theta_ol": Xo[:, 2], "v_ff": uff[:, 0],
             "delta_ff": uff[:, 1]}
    data = np.column_stack([v for v in cols.values()]
                           + [np.concatenate([v[:n], np.full(len(cl.time) - n, np.nan)])
                              for v in extra.values()])
    csv = os.path.join(args.out, "lane_change.csv")
    np.savetxt(csv, data, delimiter=",", header=",".join([*cols, *extra]), comments="",
               fmt="%.12g")
    s["csv"] = csv
    s["wall_s"] = time.perf_counter() - wall

    print("Kinematic car lane change (python-control kincar-flatsys), wheelbase 3 m, T = 4 s")
    print(f"  quintic plan vs closed form       max dev {s['plan_vs_closed_form_max_dev']:.2e}")
    for t, (y, th, v, d) in table.items():
        print(f"  t = {t:.0f} s: y = {y:9.6f} m  theta = {th:.6f} rad  v = {v:.6f} m/s  "
              f"delta = {d:9.6f} rad")
    pc = s["python_control"]
    if pc is None:
        print("  python-control not installed: no comparison")
    else:
        print(f"  vs python-control point_to_point  flags {pc['plan_flag_max_dev']:.2e}, "
              f"states {pc['plan_state_max_dev']:.2e}, inputs {pc['plan_input_max_dev']:.2e}")
        print(f"  python-control open loop vs plan  {pc['pc_open_loop_max_dev_m']:.2e} m")
    print(f"  cosim open loop (RK4, {DT * 1e3:g} ms) vs plan  max dev {ol_dev:.2e}")
    print(f"  closed loop from {X0_OFFSET}: error {np.round(e[0], 3)} m -> "
          f"{np.abs(e[-1]).max():.1e} m at {T_END:g} s; vs e''+4e'+4e=0: "
          f"{s['closed_loop_error_vs_solution_max']:.1e}")
    print(f"  results: {csv}  (wall {s['wall_s']:.2f} s)")
    if not args.no_plot:
        def draw(fig, ax):
            ax[0].plot(Zr[:, 0], Zr[:, 1], "k--", label="plan")
            ax[0].plot(Xo[:, 0], Xo[:, 1], label="open loop")
            ax[0].plot(Xc[:, 0], Xc[:, 1], label="tracking from offset")
            ax[0].set_xlabel("x [m]"); ax[0].set_ylabel("y [m]"); ax[0].legend()  # noqa: E702
            ax[1].plot(cl.time, e[:, 1], label="e_y")
            ax[1].plot(cl.time, ea[:, 1], "--", label="solution")
            ax[1].set_ylabel("error [m]"); ax[1].legend()  # noqa: E702
            ax[2].plot(cl.time, Uc[:, 1], label="delta (tracking)")
            ax[2].set_xlabel("t [s]"); ax[2].set_ylabel("steering [rad]")  # noqa: E702

        save_figure(os.path.join(args.out, "lane_change.png"), draw, 3, 1, figsize=(7, 8))
    return s


if __name__ == "__main__":
    main()
