"""Vehicle with expanding wheels: flat-output plan and prolonged exact linearization.

Agrawal, Yan & Franch (seed 000 §1; :mod:`blocks.controllers.flatness.expanding_wheel`):

1. the flat boundary values from the seed's state boundary data (eq. 27):
   z3(10) = 0.17857, z3'(10) = 0.0306, and the cubic plan in the flat outputs;
2. the plan checked before the run: the inverse map's singularity
   D = z2 z1' - z1 z2' stays positive (minimum 9.66e-4 at t = 7.18 s), the
   inconsistency of the seed's t = 10 s data shown by mapping the plan back
   (theta1(10) = 2.930, not 3, for the rod length l = 1 m we chose);
3. the closed loop (plant: kinematic model A; controller: :class:`FlatTracker` with
   :class:`ExpandingWheelLaw`) from the seed's initial conditions:

   * with the seed's gains (kv = 1.414, kp = 10 on r1, r2: damping 0.22) the radius
     rates oscillate and the loop reaches the law's singular set D = r2 r1' - r1 r2' = 0
     at t = 1.13 s, where the linearizing input is unbounded: the run stops there with
     the tracker's error (``--ignore-singular`` runs through it and shows the damage);
   * with critically damped gains (kv = 2 sqrt(kp)) D stays positive and every
     flat-output error follows e'' + kv e' + kp e = 0 to integrator accuracy;

4. model B (rod angle as a state, eq. 14) driven by the same inputs, against model A.

Run ``python examples/flatness_expanding_wheel.py [--out DIR] [--rod-length L]``.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from blocks.controllers.flatness import (
    SEED_BOUNDARY,
    SEED_GAINS,
    SEED_INITIAL,
    ExpandingWheelLaw,
    ExpandingWheelPlant,
    ExpandingWheelVehicle,
    FlatTracker,
    PolynomialPlan,
    check_plan,
    flag_from_rates,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import StepError
from cosim.plotting import save_figure

DT = 2.5e-3
T_END = 10.0
RECORD = ["ctl.error", "ctl.z_ref", "ctl.z", "ctl.u", "ctl.singularity", "veh.x", "veh.alpha"]


def seed_plan() -> PolynomialPlan:
    """The seed's cubic plan in the flat outputs (boundary flags from eq. 27)."""
    B = SEED_BOUNDARY
    return PolynomialPlan(0.0, B["T"], flag_from_rates(B["x0"], B["xdot0"]),
                          flag_from_rates(B["xf"], B["xdotf"]))


def build(plan, kp, kv, rod_length_m=1.0, model="A", on_singular="raise", period_s=None):
    """Plant + tracker from the seed's initial conditions (``period_s``: a sampled ECU)."""
    b = DiagramBuilder("expanding_wheel")
    ctl = b.add(FlatTracker("ctl", ExpandingWheelLaw(rod_length_m), plan, kp=kp, kv=kv,
                            extension_initial=SEED_INITIAL["zeta0"], on_singular=on_singular,
                            period_s=period_s))
    veh = b.add(ExpandingWheelPlant("veh", SEED_INITIAL["x0"], rod_length_m, model=model))
    b.connect(veh.x, ctl.x)
    b.connect(ctl.u, veh.u)
    return b.build()


def closed_loop(plan, kp, kv, rod_length_m=1.0, model="A", dt=DT, on_singular="raise"):
    """The continuous closed loop run offline; returns the results."""
    d = build(plan, kp, kv, rod_length_m, model, on_singular)
    return Simulator(d, solver="rk4", dt=dt, record=RECORD).run(T_END)


def analytic_errors(t, kp, kv, e0, de0):
    """Solutions of e'' + kv e' + kp e = 0 at the times ``t``, one column per flat output
    (the matrix exponential of the companion matrix, any damping)."""
    from scipy.linalg import expm

    t = np.asarray(t, float)
    out = np.zeros((len(t), len(e0)))
    for i in range(len(e0)):
        A = np.array([[0.0, 1.0], [-kp[i], -kv[i]]])
        for k, tk in enumerate(t):
            out[k, i] = (expm(A * (tk - t[0])) @ np.array([e0[i], de0[i]]))[0]
    return out


def initial_errors(plan, rod_length_m):
    law = ExpandingWheelLaw(rod_length_m)
    zm = law.measured_flag(np.array(SEED_INITIAL["x0"]), np.array(SEED_INITIAL["zeta0"]))
    zd = plan.flag_array(plan.t0, 1)
    return zd[:, 0] - zm[:, 0], zd[:, 1] - zm[:, 1]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/flatness_expanding_wheel")
    ap.add_argument("--rod-length", type=float, default=1.0, help="rod length l [m]")
    ap.add_argument("--ignore-singular", action="store_true",
                    help="run the seed's gains through the singular set")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    l_ = args.rod_length
    plan = seed_plan()
    system = ExpandingWheelVehicle(l_)
    report = check_plan(system, plan, n=10001)
    d_min, t_min = report.min_singularity
    x10, _ = system.reverse(list(plan.flag_array(10.0, 2)))
    out = {"z3_10": plan.flag_array(10.0, 1)[2, 0], "dz3_10": plan.flag_array(10.0, 1)[2, 1],
           "coefficients": plan.coefficients, "D_min": d_min, "t_D_min": t_min,
           "theta1_10": x10[2], "theta2_10": x10[3]}
    print("Expanding-wheel vehicle (Agrawal, Yan & Franch), rod length l = "
          f"{l_:g} m (not in the seed)")
    print(f"  flat boundary values: z3(10) = {out['z3_10']:.5f}, z3'(10) = "
          f"{out['dz3_10']:.4f}")
    for name, c in zip(("z1", "z2", "z3"), plan.coefficients):
        print(f"  {name}(t) = " + " + ".join(f"{v:.6g} t^{j}" for j, v in enumerate(c)))
    print(f"  plan checked: D = z2 z1' - z1 z2' >= {d_min:.3e} (at t = {t_min:.2f} s)")
    print(f"  mapped back at t = 10 s: theta1 = {x10[2]:.3f}, theta2 = {x10[3]:.3f} "
          "(seed data: 3, 3.25; its t = 10 s rates violate eq. 12)")

    # seed gains: the loop reaches the singular set
    try:
        res_seed = closed_loop(plan, SEED_GAINS["kp"], SEED_GAINS["kv"], l_,
                               on_singular="ignore" if args.ignore_singular else "raise")
        out["seed_gains_singular_at"] = None
        d = res_seed["ctl.singularity"]
        cross = np.nonzero(np.diff(np.sign(d)))[0]
        out["seed_gains_crossings"] = res_seed.time[cross].tolist()
        print(f"  seed gains, run through: D changes sign at t = "
              f"{', '.join(f'{t:.2f}' for t in out['seed_gains_crossings'])} s; "
              f"max |theta1'| = {np.abs(res_seed['ctl.u'][:, 2]).max():.3g} rad/s")
    except StepError as exc:
        out["seed_gains_singular_at"] = float(str(exc).split("t = ")[1].split(" s")[0])
        print(f"  seed gains (kv = 1.414, kp = 10): stopped, {exc}".split(". Use")[0])

    kp = np.array(SEED_GAINS["kp"])
    kv = 2.0 * np.sqrt(kp)
    res = closed_loop(plan, kp, kv, l_)
    e0, de0 = initial_errors(plan, l_)
    ref = analytic_errors(res.time, kp, kv, e0, de0)
    dev = np.max(np.abs(res["ctl.error"] - ref), axis=0)
    out.update(critical_kv=kv, error_deviation=dev, D_min_closed=float(
        res["ctl.singularity"].min()), final_error=np.abs(res["ctl.error"][-1]))
    print(f"  critically damped gains kv = {', '.join(f'{v:.3g}' for v in kv)}: "
          f"D >= {out['D_min_closed']:.3e}; errors e'' + kv e' + kp e = 0 to "
          f"{', '.join(f'{v:.1e}' for v in dev)} (RK4, dt = {DT} s)")

    res_b = closed_loop(plan, kp, kv, l_, model="B")
    out["model_b_vs_a"] = float(np.max(np.abs(res_b["veh.x"] - res["veh.x"])))
    print(f"  model B (alpha as a state) against model A: max state difference "
          f"{out['model_b_vs_a']:.1e}")

    path = os.path.join(args.out, "closed_loop.csv")
    cols = [res.time[:, None], res["ctl.z_ref"], res["ctl.z"], res["ctl.error"], ref,
            res["ctl.u"], res["veh.x"]]
    header = ("t,z1_ref,z2_ref,z3_ref,z1,z2,z3,e1,e2,e3,e1_analytic,e2_analytic,e3_analytic,"
              "r1_dot,r2_dot,theta1_dot,r1,r2,theta1,theta2")
    np.savetxt(path, np.hstack(cols), delimiter=",", header=header, comments="")
    out["csv"] = path
    print(f"  results: {path}")
    if not args.no_plot:
        def draw(fig, ax):
            ax[0].plot(res.time, res["ctl.z_ref"], "--", res.time, res["ctl.z"])
            ax[0].set_ylabel("flat outputs")
            ax[1].plot(res.time, res["ctl.error"])
            ax[1].set_ylabel("errors z_d - z")
            ax[2].plot(res.time, res["veh.x"])
            ax[2].set_ylabel("r1, r2, theta1, theta2")
            ax[2].set_xlabel("t [s]")

        save_figure(os.path.join(args.out, "plot.png"), draw, 3, 1, figsize=(8, 8), sharex=True)
    return out


if __name__ == "__main__":
    main()
