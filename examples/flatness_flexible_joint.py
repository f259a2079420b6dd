"""Flexible-joint robot by flatness (Agrawal's slides, seed §2): feedforward and exact tracking.

I q1'' + M g L sin q1 + k (q1 - q2) = 0,  J q2'' - k (q1 - q2) = u; flat output q1.
Parameters are ours (the seed gives none): I = 1, J = 0.5 kg m^2, M = 1 kg, L = 0.5 m,
k = 100 N m/rad (:data:`blocks.controllers.flatness.flexible_joint.DEFAULT_PARAMS`).

1. ramp q1 = t: the inverse map gives q2 = t + (MgL/k) sin t and
   u = MgL sin t - (J MgL/k) sin t; the plant driven by that torque from the consistent
   state follows q1 = t (open loop, RK4);
2. the same ramp tracked from a perturbed state by the
   :class:`~blocks.controllers.flatness.FlatTracker` (static exact linearization, poles
   -4, -5, -6, -7): the error equals the solution of the fourth-order error equation;
3. a rest-to-rest swing from 0 to pi/2 in 2 s (degree-9 plan, q1 to q1'''' zero at both
   ends), checked with ``check_plan`` and tracked (the torque ends at the holding
   torque M g L).

Run ``python examples/flatness_flexible_joint.py [--out DIR] [--no-plot]``.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from scipy.linalg import expm

from blocks.controllers.flatness import FlatTracker, PolynomialPlan, check_plan
from blocks.controllers.flatness.flexible_joint import (
    DEFAULT_PARAMS,
    FlexibleJoint,
    FlexibleJointFlat,
    FlexibleJointLaw,
    ramp_reference,
)
from blocks.sources import ClosedFormSource
from cosim import DiagramBuilder, Simulator
from cosim.plotting import save_figure

POLES = (-4.0, -5.0, -6.0, -7.0)
#: perturbed start of the tracking run: (q1, q1', q2, q2')
X0_PERTURBED = (0.2, 0.5, 0.1, 0.0)
DT = 2e-3
T_END = 5.0
SWING = {"angle_rad": math.pi / 2, "T": 2.0, "t_end": 3.0}


def ramp_plan(T=T_END) -> PolynomialPlan:
    """q1 = t (the degree-7 polynomial through these boundary flags is t itself)."""
    return PolynomialPlan(0.0, T, [[0.0, 1.0, 0.0, 0.0]], [[T, 1.0, 0.0, 0.0]])


def swing_plan() -> PolynomialPlan:
    """Rest to rest, degree 9: q1 and its first four derivatives zero at both ends.

    The feedforward needs q1'''', so it is then continuous where the plan ends; with
    degree 7 the jump of q1'''' at t = T costs a fixed-step solver an O(dt) error (the
    stage at T sees the left limit: 2e-5 rad at 2 ms).
    """
    return PolynomialPlan(0.0, SWING["T"], [[0.0] * 5], [[SWING["angle_rad"]] + [0.0] * 4])


def open_loop(dt=DT, t_end=T_END):
    r0 = ramp_reference(0.0)
    x0 = [0.0, 1.0, float(r0["q2"]), float(r0["q2_dot"])]
    b = DiagramBuilder("flexible_joint_open_loop")
    src = b.add(ClosedFormSource("torque", lambda t: np.array([ramp_reference(t)["u"]]),
                                 shape=(1,)))
    joint = b.add(FlexibleJoint("joint", x0=x0))
    b.connect(src.y, joint.u)
    return Simulator(b.build(), solver="rk4", dt=dt, record=["joint.x", "torque.y"]).run(t_end)


def tracking(plan, x0, dt=DT, t_end=T_END):
    b = DiagramBuilder("flexible_joint_tracking")
    joint = b.add(FlexibleJoint("joint", x0=x0))
    tr = b.add(FlatTracker("tracker", FlexibleJointLaw(), plan, poles=[POLES]))
    b.connect(joint.x, tr.x)
    b.connect(tr.u, joint.u)
    res = Simulator(b.build(), solver="rk4", dt=dt,
                    record=["joint.x", "tracker.u", "tracker.error", "tracker.z_ref"]).run(t_end)
    return res, tr


def error_solution(tracker, plan, x0, t):
    """Solution of e'''' + k3 e''' + k2 e'' + k1 e' + k0 e = 0 from the initial error."""
    A = np.zeros((4, 4))
    A[:3, 1:] = np.eye(3)
    A[3] = -tracker.k[0]
    e0 = plan.flag_array(plan.t0, 3)[0] - tracker.law.system.output_derivatives(x0)
    return np.array([(expm(A * ti) @ e0)[0] for ti in t])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/flatness_flexible_joint", help="output folder")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    wall = time.perf_counter()
    fj = FlexibleJointFlat()

    # 1. the reverse map and the open loop on the ramp
    grid = np.linspace(0.0, T_END, 101)
    r = ramp_reference(grid)
    xu = [fj.reverse([[t, 1.0, 0.0, 0.0, 0.0]]) for t in grid]
    rev_dev = max(float(np.max(np.abs(np.array([v[0][2] for v in xu]) - r["q2"]))),
                  float(np.max(np.abs(np.array([v[1][0] for v in xu]) - r["u"]))))
    ol = open_loop()
    Xo = np.asarray(ol["joint.x"])
    ol_dev = float(np.max(np.abs(Xo[:, 0] - ol.time)))

    # 2. tracking the ramp from a perturbed state
    plan = ramp_plan()
    x0 = np.asarray(X0_PERTURBED, float)
    cl, tr = tracking(plan, x0)
    e = np.asarray(cl["tracker.error"])[:, 0]
    ea = error_solution(tr, plan, x0, cl.time)
    Uc = np.asarray(cl["tracker.u"])[:, 0]

    # 3. rest-to-rest swing
    sw = swing_plan()
    rep = check_plan(fj, sw, n=401)
    sr, _ = tracking(sw, np.zeros(4), t_end=SWING["t_end"])
    Xs = np.asarray(sr["joint.x"])
    Us = np.asarray(sr["tracker.u"])[:, 0]
    P = DEFAULT_PARAMS
    hold = P["M"] * P["g"] * P["L"]

    s = {"params": dict(P), "poles": POLES,
         "reverse_map_vs_closed_form_max": rev_dev,
         "open_loop_max_dev_rad": ol_dev,
         "tracking_initial_error_rad": float(e[0]),
         "tracking_max_error_rad": float(np.max(np.abs(e))),
         "tracking_final_error_rad": float(e[-1]),
         "tracking_error_vs_solution_max": float(np.max(np.abs(e - ea))),
         "tracking_peak_torque_nm": float(np.max(np.abs(Uc))),
         "swing_planned_peak_torque_nm": float(np.max(np.abs(rep.u[0]))),
         "swing_planned_max_twist_rad": float(np.max(np.abs(rep.x[2] - rep.x[0]))),
         "swing_final_angle_rad": float(Xs[-1, 0]),
         "swing_final_torque_nm": float(Us[-1]),
         "holding_torque_nm": hold,
         "swing_max_error_rad": float(np.max(np.abs(np.asarray(sr["tracker.error"])))),
         }
    csv = os.path.join(args.out, "flexible_joint.csv")
    Xc = np.asarray(cl["joint.x"])
    cols = {"t": cl.time, "q1_ol": Xo[:, 0], "q2_ol": Xo[:, 2],
            "u_ol": np.asarray(ol["torque.y"])[:, 0],
            "q1_cl": Xc[:, 0], "q2_cl": Xc[:, 2], "u_cl": Uc, "e": e, "e_solution": ea}
    np.savetxt(csv, np.column_stack(list(cols.values())), delimiter=",",
               header=",".join(cols), comments="", fmt="%.12g")
    csv_swing = os.path.join(args.out, "flexible_joint_swing.csv")
    np.savetxt(csv_swing, np.column_stack([sr.time, Xs, Us]), delimiter=",",
               header="t,q1,q1_dot,q2,q2_dot,u", comments="", fmt="%.12g")
    s["csv"] = [csv, csv_swing]
    s["wall_s"] = time.perf_counter() - wall

    print("Flexible-joint robot (Agrawal, seed §2), our parameters "
          + ", ".join(f"{k}={v:g}" for k, v in P.items()))
    print(f"  ramp q1 = t: reverse map vs closed form  {rev_dev:.1e}; open loop (RK4, "
          f"{DT * 1e3:g} ms) |q1 - t| <= {ol_dev:.1e} rad over {T_END:g} s")
    print(f"  tracking from {X0_PERTURBED}, poles {POLES}: error {e[0]:.3f} -> {e[-1]:.1e} rad, "
          f"vs the 4th-order solution {s['tracking_error_vs_solution_max']:.1e}, "
          f"peak torque {s['tracking_peak_torque_nm']:.1f} N m")
    print(f"  swing 0 -> pi/2 in {SWING['T']:g} s: planned peak torque "
          f"{s['swing_planned_peak_torque_nm']:.2f} N m, max twist "
          f"{s['swing_planned_max_twist_rad']:.4f} rad; final q1 {Xs[-1, 0]:.6f} rad, torque "
          f"{Us[-1]:.4f} N m (holding MgL = {hold:.4f})")
    print(f"  results: {', '.join(s['csv'])}  (wall {s['wall_s']:.2f} s)")
    if not args.no_plot:
        def draw(fig, ax):
            ax[0].plot(ol.time, Xo[:, 0] - ol.time)
            ax[0].set_ylabel("open loop q1 - t [rad]")
            ax[1].plot(cl.time, e, label="error")
            ax[1].plot(cl.time, ea, "--", label="4th-order solution")
            ax[1].set_ylabel("tracking error [rad]")
            ax[1].legend()
            ax[2].plot(sr.time, Xs[:, 0], label="q1")
            ax[2].plot(sr.time, Xs[:, 2], label="q2")
            ax[2].set_xlabel("t [s]")
            ax[2].set_ylabel("swing [rad]")
            ax[2].legend()

        save_figure(os.path.join(args.out, "flexible_joint.png"), draw, 3, 1, figsize=(7, 8))
    return s


if __name__ == "__main__":
    main()
