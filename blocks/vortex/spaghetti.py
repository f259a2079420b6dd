r"""Spaghetti and reverse-spaghetti problems: a segmented beam drawn through a wall gap in fluid.

After Kobayashi, Watanabe, Irie, Kozono, "Dynamics and Stability of Spaghetti and Reverse
Spaghetti Problems Coupled with Fluid Force" (seed §12).  A flexible strip (per unit span)
is pulled into (*spaghetti*, ``speed < 0``) or drawn out of (*reverse spaghetti*,
``speed > 0``) a gap in a wall at X = 0 at a constant speed V.  The fluid fills X > 0 and is
at rest (U = 0); the beam inside the wall (X < 0) is guided by the gap channel.

Beam: finite-segment method in minimal coordinates
--------------------------------------------------
``n_b`` rigid segments of length :math:`\Delta l = L/n_b`, mass :math:`m = \mu\Delta l`, inertia
:math:`m\Delta l^2/12`, joined by hinge springs :math:`k_\varphi = EI/\Delta l` and dampers
:math:`c_\varphi`.  The driven end (node 0) moves along X at the drive speed; its Y and the
segment angles are free.  The generalised coordinates are

.. math::

    q = (y_0, \varphi_1, \dots, \varphi_{n_b}), \qquad
    \mathbf r_k = \big(X_0(t) + \Delta l \textstyle\sum_{j\le k}\cos\varphi_j,\;
    y_0 + \Delta l \sum_{j\le k}\sin\varphi_j\big),\qquad \dot X_0 = V,

and the equations of motion (Kane/Lagrange for a rheonomic chain, :math:`\ddot X_0 = 0`)

.. math::

    M(q)\,\ddot q + h(q,\dot q) = Q,\quad
    M_{00} = n_b m,\; M_{0j} = m\Delta l\,c_j\cos\varphi_j,\;
    M_{jk} = m\Delta l^2 C_{jk}\cos(\varphi_j - \varphi_k) + \delta_{jk}\,m\Delta l^2/12,

    h_0 = -m\Delta l\sum_j c_j \sin\varphi_j\,\dot\varphi_j^2,\qquad
    h_k = m\Delta l^2 \sum_j C_{kj}\sin(\varphi_k - \varphi_j)\,\dot\varphi_j^2,

with :math:`c_j = n_b - j + \tfrac12`, :math:`C_{jk} = n_b - \max(j,k) + \tfrac12` (j ≠ k),
:math:`C_{jj} = n_b - j + \tfrac14`.  A point force :math:`\mathbf F` at arc length ``s`` on
segment ``i`` gives :math:`Q_0 = F_Y`, :math:`Q_j = w_j (F_Y\cos\varphi_j - F_X\sin\varphi_j)`
with :math:`w_j = \Delta l` (j < i), ``s`` (j = i), 0 (j > i).

*Why not* :mod:`blocks.multibody`: a chain of rigid segments in absolute coordinates
(Eq. 1 of the paper, 3 n_b coordinates + 3 n_b - 1 constraints + index-3 DAE) needs a
constrained formulation and a dense (6 n_b)-sized solve per evaluation; in minimal coordinates
the chain is an ODE of n_b + 1 degrees of freedom with a closed-form mass matrix, the
driving constraint is eliminated exactly (no drift, no Baumgarte), and the contact and fluid
forces enter through one vectorised point-force projection.  That makes the block ~10x
cheaper and free of constraint stabilisation, which matters for the many runs of a speed sweep.

Gap, guide and contacts
-----------------------
The wall occupies X ≤ 0 outside the channel :math:`-c_l \le Y \le c_u` (clearance
:math:`C_p = c_u + c_l`, here :math:`c_u = c_l = C_p/2`) of length ``gap_length_m`` (default:
the whole inside).  An optional tapered guide in front of the inlet has the surfaces
:math:`Y = c_u + X\tan\alpha_g` and :math:`Y = -c_l - X\tan\alpha_g`, 0 ≤ X ≤ ``guide_length_m``.
Contacts are one-sided penalty spring–dampers with regularised Coulomb friction:

* nodes against the channel walls and the guide surfaces (penetration measured along the
  surface normal; these are the paper's F1 and F3);
* the four corners (inlet edges and guide ends) against the segments (the corner's distance to
  the segment line, the paper's F2 and F4 with :math:`y_d` of Eq. 5);
* normal force :math:`F_n = \max(0, k_c p + c_c \dot p)`, friction
  :math:`F_t = -\mu F_n \tanh(v_t/v_\varepsilon)` along the contact tangent.

The paper's contact constants are garbled (k1 = 3.0e6 "N·m/rad", k2 = 6.0e?, c = 1.53e-?);
we use :math:`k_c` = 1e7 N/m per metre of span (``contact_stiffness``; 3e6 N/m on the 30 mm
wide experimental strip is 1e8 N/m per metre: ten times stiffer; the softer default keeps the
contact frequency below the bending frequencies of the segment chain so that explicit RK4
stays usable) and a contact damping :math:`c_c = 2\zeta_c\sqrt{k_c m}` with
:math:`\zeta_c = 0.5` (one segment mass).  A corner only acts while its penetration is below
``max_penetration_m`` (a segment far on the other side of a corner is not snapped back).

Fluid force: bound vortices (quasi-steady, no wake)
---------------------------------------------------
On the part of the beam in the fluid (X > 0, from the wall crossing to the free end),
``n_c * n_b`` + 1 point vortices :math:`\Gamma_j` sit at equal arc-length intervals (a fixed
count over the current wetted length, so that the force is continuous in time as the beam
emerges; the paper uses n_c per segment, the same count when the beam is fully out).
Collocation points are the arc-length midpoints between adjacent vortices, with the normal
of the chord :math:`n_k = -i(z_{k+1} - z_k)/|z_{k+1} - z_k|` (Eq. 16).  With
:math:`w = u - iv`:

.. math::

    \sum_j \Gamma_j\,\mathrm{Re}\Big[\frac{-i\,n_k}{2\pi(z_{r,k} - z_{v,j})}\Big]
        = \mathrm{Re}\big[(\overline{V_k} - U)\,n_k\big]\quad (k = 1..n_v),\qquad
    \Gamma_{n_v+1} = 0 \;\text{(Kutta condition at the free end)},

an :math:`(n_v+1)\times(n_v+1)` dense solve per evaluation.  The force on each vortex is
Kutta–Joukowski (Blasius) with the relative velocity there (free stream, the other bound
vortices, minus the body velocity): :math:`F_X - iF_Y = i\rho\Gamma_j W_j`; plus a drag
:math:`D = \tfrac12 C_D\, t\, \rho\, u^2` on the free end along X (frontal area = thickness
per unit span, :math:`C_D` = ``drag_coefficient``, not given in the paper; default 1).
There is **no wake**: the model is quasi-steady (no shed vorticity, no added-mass term from
the unsteady Bernoulli equation), as the paper's.  It captures the two effects the paper
discusses: a transverse beam velocity creates circulation opposing it (fluid damping ∝ ρV),
and a beam slope creates lift along the deflection (negative stiffness ∝ ρV²).  With the
beam drawn out the free end leads; see *Findings* below for what this does and does not
have in common with an inverted flag.  No image of the vortices in the wall plane is
taken (the paper does not mention one).

Modelling choices (OCR doubts of the seed)
------------------------------------------
* :math:`k_\varphi = EI/\Delta l` from Table 1's bending rigidity (the printed 65.1 N·m/rad
  does not match the experiment's EI/Δl = 7.4 N·m/rad).
* Hinge damping: :math:`c_\varphi = \tau_d k_\varphi` with the retardation time
  ``hinge_damping_time_s`` (default 1e-5 s, Kelvin–Voigt material damping; the printed
  5.67e-5 N·m·s/rad over 65.1 N·m/rad is 8.7e-7 s).  The experiment's damping ratio 0.043
  at the full-length first mode would need τ = 2ζ/ω₁ ≈ 3e-3 s, which makes the highest
  segment modes so stiff (λ ≈ τ ω_max²) that explicit steps < 1 µs would be needed; in water
  the fluid supplies most of the damping.
* Kutta condition at the **trailing** end with respect to the relative flow (``kutta=
  "trailing"``, default): the root at the wall when the beam is drawn out, the free end when
  it is pulled in.  The seed puts Γ = 0 at the free end in both cases (``kutta="free_end"``);
  drawn out, that is a leading-edge condition and gives negative fluid damping at every
  speed (see *Findings* below).
* Drive speed: an input; its time derivative is neglected (piecewise constant speed).

Ports
-----
in   speed          scalar [m/s]  drive speed of the driven end along +X (> 0: drawn out)
out  tip            (2,) [m]      free-end position
out  tip_y          scalar [m]    free-end Y (the tip displacement)
out  tip_deflection scalar [m]    free end's distance from the beam tangent at the wall
                                  (elastic deflection of the wetted part)
out  nodes          (n_b+1, 2) [m] node positions (driven end first)
out  angles         (n_b,) [rad]  segment angles
out  wetted_length  scalar [m]    length of beam in the fluid (X > 0)
out  contact_force  (2,) [N/m]    total contact force on the beam (per unit span)
out  fluid_force    (2,) [N/m]    total fluid force (lift + drag) on the beam
The forces read ``speed`` (the driven end's velocity enters the contact damping and the
fluid boundary condition); the other outputs depend on the state only.

Findings: geometry, Kutta end, linear analysis, time domain
------------------------------------------------------------
*Geometry and run length.*  Table 1's masses (steel 6.28 kg = 7850 x 0.5 x 0.0016 x 1) fix
the strip at L = 0.5 m per metre of span; the part in the fluid is the part already drawn
out, between the wall and the free tip (the paper's vortices sit on the bodies outside the
gap; U = 0, "the relative flow velocity to bodies is equal to the driving velocity").  The
driving constraint :math:`\Phi_D = (x_1 - l) + Vt` acts on the driven (inner) end body: it
puts body 1's centre at X = l at t = 0 and moves it at -V, i.e. it is written for the
pulled-in case starting with the whole strip outside; drawing out flips the sign.  "A quarter
has been drawn out" is the impulse time, L/(4V).  Fig. 6's 0.5 s window is L/V at 1 m/s:
the runs start with the tip at the inlet and end when the strip is out, so the faster
runs are shorter (0.1 s at 5 m/s); the strip is not longer.  The example runs from the
impulse to 98 % out.

*Kinematics: no fluid load from a steady shape.*  For a material point sliding along the
surface Y = w(X, t), the normal component of its velocity is :math:`w_t/\sqrt{1+w_X^2}`:
the no-penetration condition sees only the Eulerian motion of the surface, not the drawing
speed.  A shape that is steady in the wall frame therefore carries no circulation and no
lift (tested: a plate moving along its own chord has Γ = 0).  The reverse-spaghetti strip in
still fluid is *not* an inverted flag (that needs a stream past a fixed-length plate): the
fluid force is a velocity-dependent (damping-type) load :math:`\propto \rho V\,\Gamma[w_t]`
(the Kutta–Joukowski force uses the sliding velocity V), and a Lagrangian deflection that is
convected out with the material (:math:`w_t = -Vw_X`) is what looks like a negative
stiffness :math:`\propto \rho V^2` in the material coordinates of this model.

*Kutta end.*  Γ = 0 at the free end (the seed's reading of "the end of the beam") makes the
fluid force a *negative* damping at every speed: frozen-length linearisation
(:func:`linear_eigenvalues`, steel, 16 segments, 0.14 m out) gives a growing first mode
42.6 ± 352j 1/s already at 0.5 m/s, and the runs blow up at 1 m/s, contrary to the paper's
damped response at 1 m/s.  Γ = 0 at the end where the relative flow leaves the strip (the
wall end when drawn out, ``kutta="trailing"``, default) gives positive fluid damping
(first mode -49 ± 350j at 0.5 m/s, over-damped above ~3 m/s) and, in the frozen-length
analysis, a real unstable eigenvalue once :math:`\kappa = \rho V^2 L_{out}^3/EI` exceeds
≈ 1.7 (0.26 m out: stable at 2 m/s, +11 1/s at 3 m/s, +27 1/s at 4 m/s; 0.45 m out:
-1.7 1/s at 1 m/s, +8.8 at 2 m/s).  :func:`divergence_speed` at 0.45 m out: FRP 0.23,
Al 0.79, steel 1.12 m/s (κ_c 1.6–1.8 for all three; 8/16/32 segments: steel 1.08/1.12/1.11).

*Why the frozen analysis over-predicts.*  The growth rate of that divergent mode is limited
by the quasi-steady fluid damping (~ ρVL) to ~V/L, and the run lasts ~L/V: O(1) e-folds at
any speed, while the gap keeps feeding straight material at the root (the frozen analysis
clamps fixed material).  In the time domain a disturbed strip in water at high V is
over-damped: its tilt freezes and is carried out with the material, so the tip displacement
grows like the wetted length at a constant tip angle — the paper's "displacement increases
monotonously" — and the tip angle itself grows only when ρV²L³/EI is well above κ_c: at
the end of the run (L_out = 0.49 m) the first diverging grid speed has κ = 44 (FRP 1 m/s),
31 (Al 3 m/s), 34 (steel 4.5 m/s) and the last stable one 11, 22, 27 — one time-domain
threshold κ ≈ 30 for all three materials, ~20x the frozen-length κ_c.

*Why the earlier reproduction failed.*  With an impulse of 0.05 N·s/m the tip moved
< 0.1 mm, i.e. within the 0.1 mm gap clearance: the response was the strip rattling in the
gap (contact noise ±0.03 mm) and no trend could be read; and the run stopped at 90 % out.

Results (reverse spaghetti, ``examples/reverse_spaghetti.py``)
--------------------------------------------------------------
Impulse 0.5 N·s/m at 1/4 out, run to 98 % out, 16 segments, RK4 1e-4 s; divergence = over
the second half the tip displacement keeps its sign, grows monotonically, ends above 20 % of
its peak, and the tip angle grows.  Steel in water: V = 1, 2 m/s decay to the clearance
level (damped), 3 m/s an over-damped creep with a small residual tilt, 4–5 m/s a monotonic
growth (tip angle ratio 0.98 at 4, 1.06 at 4.5, 1.10 at 5 m/s) — the sequence of Fig. 6.
Critical speed (grid 0.5 m/s): FRP 1.0, Al 3.0, steel 4.5 m/s (paper: FRP < 1, Al ≈ 2,
steel 2–3 in the text, 3–4 by the curves); with an impulse of 2 N·s/m Al 2.5, steel 3.5
(FRP: RK4 at 1e-4 s blows up, the tip velocity is ~100 m/s).  Air (1.2) and vacuum: free
vibration with peaks within 2.2 % at 4 m/s (Fig. 7).  Sensitivity at the steel boundary
(8 segments, tip angle ratio at 4 m/s, baseline 1.00): C_D 0 / 2: 1.007 / 1.013; contact
stiffness 1e8 N/m²: 0.967 (3 m/s 0.89, Al 2.5 m/s 0.96); clearance 1.6 mm: 0.78.  The
ordering, the ∝ √EI scaling and the air/water contrast are robust; the absolute critical
speeds move by ±0.5–1 m/s with the (unknown) impulse and contact constants, and are
1.3–1.5x above the paper's for Al and steel.

Added mass (option ``added_mass=True``, default off)
----------------------------------------------------
The quasi-steady model has no fluid inertia.  :meth:`SegmentedBeam.added_mass_matrix` takes
it from the same point-vortex discretisation: the non-circulatory solution (collocation rows
as above, :math:`\sum\Gamma_j = 0` instead of the Kutta row) gives Γ per unit q̇; the
potential jump across panel k is the cumulative circulation, and the unsteady Bernoulli
term :math:`\rho\,\partial[\phi]/\partial t` on the panels gives a symmetric added mass
matrix :math:`M_a(q)` (flat plate: heave ρπL²/4 within 1/(2 n_v): +1.2 % at 16 segments;
pitch about mid-chord ρπL⁴/128 within 2 % at 32; tested).  The equations become
:math:`(M + M_a)\ddot q = Q - h - \dot M_a\dot q` with :math:`\dot M_a` the growth of
the added mass with the wetted length (:math:`V\,\partial M_a/\partial X_0`, von Kármán's
water-entry term, by a difference in X0).  Not included: the convective non-circulatory
term (Theodorsen's :math:`\rho\pi b^2 V\dot\alpha`, i.e. :math:`\rho V\gamma_{nc}`), the
velocity-quadratic terms of :math:`M_a(q)` and a wake.

Reverse spaghetti with added mass (quick grid 0.5..5 m/s, 8 segments, RK4 2e-4 s, impulse
0.5): first diverging speed Al 2.5 (was 3.0), steel 4.0 (was 4.5) m/s; 16 segments at
1e-4 s (without the water-entry term) Al 3.0, steel 4.0.  But the verdicts are no longer
monotonic in V (Al stable at 3.5-4.0 and diverging at 4.5-5; steel stable at 4.5, diverging
at 5): with ρπL²/4 ≈ 200 kg/m against 6.3 kg/m of steel the first mode's period in water is
~1 s, longer than the run (L/V), and the growth criterion samples part of one slow swing.
FRP (1.1 kg/m): the impulse response reaches 96 mm at 0.5 m/s (39 mm and decaying without
added mass) and from 1 m/s the strip folds over (segment angles > 90°, tip ~0.3 m up) until
the run fails - a large-amplitude collapse the small-slope fluid model cannot describe, not a
step-size effect (same at 1e-4 and 2e-4 s).  The shift toward the paper's Al ≈ 2, steel 2-4
m/s is 0.5 m/s and within the criterion's scatter; the default stays without added mass.

Wake (option ``wake=True``, default off)
----------------------------------------
:func:`wake_circulation` adds free vortices to the seed's solve: the old wake's induced
velocity enters the no-penetration rows, a new vortex shed from the trailing edge closes
Kelvin's theorem (:math:`\sum\Gamma_b + \Gamma_{new} + \sum\Gamma_w = 0`) with the Kutta
condition kept, and :func:`vortex_forces` (``w_ext``) adds the wake's induced velocity to the
relative velocity of each bound vortex (Kutta–Joukowski as before).  Validation (test): a
plate started impulsively in a stream, 40 vortices, a vortex shed every 0.025 c/U at 1/4 of
the step behind the trailing edge and the wake frozen in the fluid: KJ lift 0.16 / 0.45 /
0.58 / 0.71 of πρU²cα at s = 0 / 1 / 2 / 4 semi-chords (Wagner 0.50 / 0.59 / 0.67 / 0.76:
-7 % at 4; 80 vortices 0.705), i.e. the bound-circulation curve: the per-vortex KJ force has
no ρ∂[φ]/∂t term.  The impulse force ρ d/dt Σ Γx of the same vortices is Wagner's within
1.3 % at s = 4 (0.59 / 0.63 / 0.69 / 0.77 at s = 0.5 / 1 / 2 / 4; Wagner 0.55 /
0.59 / 0.67 / 0.76), so the shed circulation itself is right.

In the reverse spaghetti the trailing edge is the wall crossing, *fixed* at X = 0, and the
fluid is at rest: a vortex shed there stays there (to first order; the root moves only
within the gap clearance).  The whole wake therefore sits at the trailing bound vortex and
merges with it (``z_new=None`` of :func:`wake_circulation`): the Kutta row is replaced by
Kelvin's :math:`\sum_j\Gamma_j = 0`, the trailing vortex is free (no force on it) and its
induced velocity enters the KJ force on the others.  This limit needs no wake state (no
shedding scheme: the continuous-time limit of shedding every step, exact as the step → 0),
so the block stays a plain ODE.  Pulled in (spaghetti) the wake would trail behind the free
end in the fluid; that case is not implemented (``wake=True`` has no effect there).  Effect:
the circulatory lift is cancelled and only the (non-circulatory) bound vortices' KJ force
remains; the frozen-length divergence speed at 0.45 m out rises by 1.38x (8 segments, FRP
0.21 → 0.29, Al 0.76 → 1.04, steel 1.08 → 1.50 m/s).

Reverse spaghetti with the wake (water, grid 0.5-5, 6, 8 m/s, impulse 0.5, 8 segments, RK4
2e-4 s): first diverging speed FRP 1.0 → 1.5 (1.5-3.0 the run fails: fold-over, counted as
divergence; 0.5 m/s peaks at 113 mm, 39 without), Al 3.0 → 3.5, steel 4.5 → 6.0 m/s (16
segments, 1e-4 s: Al 3.5, steel 7.0 (6.5 not run; 5.5-6 grow, not monotonically)).  With the wake
*and* added mass: Al 3.0, steel 4.0 (non-monotonic in V as with added mass alone: Al stable
at 3.5-4, steel at 4.5-5) and FRP fails from 0.5 m/s.  The wake moves Al and steel *away*
from the paper (< 1, ≈ 2, 2-4 m/s): it removes the quasi-steady circulation whose lift is
the negative stiffness; the default stays without it.

Spaghetti with guide (Fig. 5, ``examples/spaghetti_guide.py``)
--------------------------------------------------------------
FRP strip pulled in at 4 m/s through 15° guides (x_e = 0.15 m: not in the OCR; from Fig. 5's
window, ~0.13 m is still out when "most of the surface" is on the guides), C_p = 0.1 mm, air,
gravity, from 0.45 m out in static sag (tip -46 mm).  :meth:`SegmentedBeam.contact_list`
names each active contact.  Sequence in the model: the sagging strip rests on the lower
inlet corner and the upper gap wall from t = 0; pulled in, its root is straightened and the
strip whips up (upper inlet corner at 0.02-0.05 s, tip from -50 to +28..33 mm), i.e. the
"end bends upward" - but at ~11-12° it stays below the 15° guides: **no guide contact** at
C_p = 0.1 mm for guide lengths 0.1-0.45 m (10° guides neither; 5° only a guide-end touch).
With C_p = 1.6 mm the free end touches a guide late (~0.09-0.1 s, X ≈ 60-80 mm).  The
paper's sequence (mid-span on the upper guide, then the strip on both guides) is **not
reproduced**.  Amplitude at the paper's sensor (20 mm in front of the inlet, peak-to-peak):
V = 4 m/s, C_p 0.1 / 1.6 mm: 7.8 / 9.9 mm (16 segments; 8 in vacuum: 7.2 / 9.2): the
paper's "amplitude grows with smaller clearance" does **not** hold; V 2 / 4 m/s at 0.1 mm:
5.8 / 7.8 mm (holds at 16 segments; 8 segments 7.2 / 7.2: marginal).

*Step size.*  Explicit RK4 is stable for dt·|λ|max < 2.8.  With the gap contacts active the
Jacobian's spectral radius is 2.4e4 1/s (16 segments, k_c = 1e7 N/m²; 2.7e4 with 8), 2-3x
:math:`\sqrt{k_c/m_{seg}}` (1.2e4; 8.5e3) because a contact at a chain end or a corner
acts on less than one segment mass: dt < 1.1e-4 s, not the 2.3e-4 s the segment-mass
estimate gives.  The earlier blow-up at V = 2 m/s, C_p = 0.1 mm was this: 2e-4 s goes to NaN,
1e-4 s is at the edge; the guide example uses 5e-5 s.  (The reverse-spaghetti runs at 2e-4
s with 8 segments stay bounded because a strip drawn out in water rarely presses on the
inlet; the same limit applies whenever it does.)

Limitations
-----------
Quasi-steady potential flow; wake and added mass only as the options above; no wall
images; thin beam (the thickness is used only for the drag area); contacts are penalty
springs (soft default, see above); per unit span (2-D) throughout; the drive acceleration
(the experiment's 0.05 s run-up) is neglected.  The spaghetti-with-guide sequence of Fig. 5
is not reproduced (see above).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError

# Table 1 of the paper: 1 m wide strips, 500 mm x 1.6 mm.
MATERIALS = {
    "frp": dict(density=1.40e3, youngs_modulus=7.80e9, bending_rigidity=2.66),
    "aluminium": dict(density=2.86e3, youngs_modulus=99.0e9, bending_rigidity=33.8),
    "steel": dict(density=7.85e3, youngs_modulus=206e9, bending_rigidity=70.3),
}
FLUID_DENSITY = {"vacuum": 0.0, "air": 1.2, "water": 1000.0}
LENGTH_M = 0.5
THICKNESS_M = 1.6e-3
_TWO_PI = 2.0 * math.pi


# --------------------------------------------------------------------------- vortex solve
def bound_vortex_circulation(zv: np.ndarray, zc: np.ndarray, vel_c: np.ndarray,
                             u_inf: complex = 0.0, kutta: int = -1) -> np.ndarray:
    r"""Circulations of the bound vortices ``zv`` (``n+1``, complex) with Γ = 0 at ``zv[kutta]``.

    ``zc`` (``n``) are the collocation points, ``vel_c`` the body velocity there (complex
    ``vx + i vy``), ``u_inf`` the free stream (complex).  Normal of chord k:
    :math:`-i(z_{k+1} - z_k)/|\cdot|`; no penetration at each collocation point; Kutta
    condition :math:`\Gamma = 0` at vortex ``kutta`` (0 or -1: the trailing end).  Returns Γ
    (counter-clockwise positive).
    """
    dz = np.diff(zv)
    nrm = -1j * dz / np.abs(dz)
    n = zv.size
    a = np.empty((n, n))
    a[:-1] = np.real(-1j * nrm[:, None] / (_TWO_PI * (zc[:, None] - zv[None, :])))
    a[-1] = 0.0
    a[-1, kutta] = 1.0
    b = np.empty(n)
    b[:-1] = np.real((np.conj(vel_c) - np.conj(u_inf)) * nrm)
    b[-1] = 0.0
    return np.linalg.solve(a, b)


def induced_conj_velocity(z: np.ndarray, zw: np.ndarray, gw: np.ndarray) -> np.ndarray:
    """Conjugate velocity u - iv at ``z`` induced by point vortices ``gw`` at ``zw``."""
    if zw.size == 0:
        return np.zeros(z.shape, complex)
    return (-1j / _TWO_PI) * ((1.0 / (z[:, None] - zw[None, :])) @ gw)


def wake_circulation(zv: np.ndarray, zc: np.ndarray, vel_c: np.ndarray, u_inf: complex,
                     kutta: int, zw: np.ndarray, gw: np.ndarray,
                     z_new: complex | None = None) -> tuple[np.ndarray, float]:
    r"""Bound circulations with a wake: (Γ_bound, Γ_new).

    Old free vortices ``gw`` at ``zw`` add their induced normal velocity to the collocation
    rows of :func:`bound_vortex_circulation`; a new free vortex at ``z_new`` (unknown) closes
    Kelvin's theorem :math:`\sum\Gamma_b + \Gamma_{new} + \sum\Gamma_w = 0` with the
    Kutta condition Γ = 0 at ``zv[kutta]``.  ``z_new=None``: the new vortex sits *at* the
    trailing vortex (the merged limit: no Kutta row, Kelvin row only; Γ_b[kutta] is then the
    free vorticity shed there, returned as Γ_new with Γ_b[kutta] set to 0)."""
    dz = np.diff(zv)
    nrm = -1j * dz / np.abs(dz)
    n = zv.size
    extra = 0 if z_new is None else 1
    a = np.zeros((n + extra, n + extra))
    b = np.zeros(n + extra)
    a[:n - 1, :n] = np.real(-1j * nrm[:, None] / (_TWO_PI * (zc[:, None] - zv[None, :])))
    b[:n - 1] = np.real((np.conj(vel_c) - np.conj(u_inf)
                         - induced_conj_velocity(zc, zw, gw)) * nrm)
    a[-1, :] = 1.0                                      # Kelvin
    b[-1] = -float(np.sum(gw))
    if z_new is not None:
        a[:n - 1, n] = np.real(-1j * nrm / (_TWO_PI * (zc - z_new)))
        a[n - 1, kutta % n] = 1.0                       # Kutta
    g = np.linalg.solve(a, b)
    if z_new is None:
        gb = g.copy()
        g_new = float(gb[kutta])
        gb[kutta] = 0.0
        return gb, g_new
    return g[:n], float(g[n])


def vortex_forces(zv: np.ndarray, gamma: np.ndarray, vel_v: np.ndarray, rho: float,
                  u_inf: complex = 0.0, mutual: bool = True,
                  w_ext: np.ndarray | None = None) -> np.ndarray:
    r"""Kutta–Joukowski force on each bound vortex, complex :math:`F_X + iF_Y` per unit span.

    :math:`F_X - iF_Y = i\rho\Gamma_j W_j` with :math:`W_j` the conjugate relative velocity
    (free stream + the other vortices when ``mutual`` + ``w_ext`` (e.g. the wake's induced
    conjugate velocity at ``zv``) − body velocity ``vel_v``).
    """
    w = np.conj(u_inf) - np.conj(vel_v)
    if w_ext is not None:
        w = w + w_ext
    if mutual and zv.size > 1:
        d = zv[:, None] - zv[None, :]
        np.fill_diagonal(d, 1.0)
        k = -1j / (_TWO_PI * d)
        np.fill_diagonal(k, 0.0)
        w = w + k @ gamma
    return np.conj(1j * rho * gamma * w)


# --------------------------------------------------------------------------- the model
@dataclass
class BeamGeometry:
    """Gap, guide and contact constants (see the module docstring)."""

    clearance_m: float = 1e-4
    gap_length_m: float = math.inf
    guide_angle_deg: float = 0.0
    guide_length_m: float = 0.0
    contact_stiffness: float = 1e7          # N/m per m span
    contact_damping_ratio: float = 0.5
    friction_coefficient: float = 0.2
    friction_velocity_m_s: float = 1e-3
    max_penetration_m: float = 5e-3


@dataclass
class SegmentedBeam:
    r"""Numerical core of :class:`SpaghettiBeam`: kinematics, forces and :math:`\ddot q`.

    State ``x = [X0, y0, φ_1..φ_n, ẏ0, φ̇_1..φ̇_n]`` (size 2 n + 3).
    """

    n_segments: int = 16
    length_m: float = LENGTH_M
    thickness_m: float = THICKNESS_M
    density: float = 7.85e3
    bending_rigidity: float = 70.3
    hinge_damping_time_s: float = 1e-5
    fluid_density: float = 1000.0
    vortices_per_segment: int = 5
    drag_coefficient: float = 1.0
    gravity: float = 0.0
    free_stream: float = 0.0
    mutual_induction: bool = True
    added_mass: bool = False
    kutta: str = "trailing"
    wake: bool = False
    geometry: BeamGeometry = field(default_factory=BeamGeometry)

    def __post_init__(self) -> None:
        n = int(self.n_segments)
        if n < 1:
            raise ParameterError(f"SegmentedBeam: n_segments must be >= 1, got {n}")
        if self.kutta not in ("trailing", "free_end"):
            raise ParameterError(f"SegmentedBeam: kutta must be 'trailing' or 'free_end', "
                                 f"got {self.kutta!r}")
        self.n = n
        self.dl = self.length_m / n
        self.m = self.density * self.thickness_m * self.dl  # per unit span
        self.k_phi = self.bending_rigidity / self.dl
        self.c_phi = self.hinge_damping_time_s * self.k_phi
        j = np.arange(1, n + 1)
        self.c_vec = n - j + 0.5
        jj = np.maximum(j[:, None], j[None, :])
        self.C = n - jj + 0.5
        np.fill_diagonal(self.C, n - j + 0.25)
        lap = np.zeros((n, n))
        for i in range(1, n):  # hinge between segments i-1 and i (0-based)
            lap[i, i] += 1
            lap[i - 1, i - 1] += 1
            lap[i, i - 1] -= 1
            lap[i - 1, i] -= 1
        self.lap = lap
        g = self.geometry
        self.cu = self.cl = 0.5 * g.clearance_m
        ta = math.tan(math.radians(g.guide_angle_deg))
        self.tan_a = ta
        self.kc = g.contact_stiffness
        self.cc = 2.0 * g.contact_damping_ratio * math.sqrt(g.contact_stiffness * self.m)
        corners = [(0.0, self.cu, -1.0), (0.0, -self.cl, 1.0)]
        if g.guide_length_m > 0:
            lg = g.guide_length_m
            corners += [(lg, self.cu + lg * ta, -1.0), (lg, -self.cl - lg * ta, 1.0)]
        self.corners = np.array(corners)

    # ----------------------------------------------------------------- kinematics
    def split(self, x: np.ndarray):
        n = self.n
        return x[0], x[1:n + 2], x[n + 2:]

    def nodes(self, x0: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        phi = q[1:]
        xs = np.concatenate(([x0], x0 + self.dl * np.cumsum(np.cos(phi))))
        ys = np.concatenate(([q[0]], q[0] + self.dl * np.cumsum(np.sin(phi))))
        return xs, ys

    def node_velocities(self, v_drive: float, q: np.ndarray, qd: np.ndarray):
        phi, w = q[1:], qd[1:]
        vx = np.concatenate(([v_drive], v_drive - self.dl * np.cumsum(np.sin(phi) * w)))
        vy = np.concatenate(([qd[0]], qd[0] + self.dl * np.cumsum(np.cos(phi) * w)))
        return vx, vy

    def points(self, s_arc: np.ndarray, xs, ys, vx, vy, q, qd):
        """Positions, velocities (complex), segment index and local s of arc lengths."""
        seg = np.minimum((s_arc / self.dl).astype(int), self.n - 1)
        s = s_arc - seg * self.dl
        phi, w = q[1:][seg], qd[1:][seg]
        c, sn = np.cos(phi), np.sin(phi)
        z = (xs[seg] + s * c) + 1j * (ys[seg] + s * sn)
        v = (vx[seg] - s * sn * w) + 1j * (vy[seg] + s * c * w)
        return z, v, seg, s

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        n, m, dl = self.n, self.m, self.dl
        phi = q[1:]
        M = np.empty((n + 1, n + 1))
        M[0, 0] = n * m
        M[0, 1:] = M[1:, 0] = m * dl * self.c_vec * np.cos(phi)
        M[1:, 1:] = m * dl * dl * self.C * np.cos(phi[:, None] - phi[None, :])
        M[1:, 1:] += np.eye(n) * (m * dl * dl / 12.0)
        return M

    def velocity_terms(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        m, dl = self.m, self.dl
        phi, w2 = q[1:], qd[1:] ** 2
        h = np.empty(self.n + 1)
        h[0] = -m * dl * np.sum(self.c_vec * np.sin(phi) * w2)
        h[1:] = m * dl * dl * ((self.C * np.sin(phi[:, None] - phi[None, :])) @ w2)
        return h

    def generalized(self, seg: np.ndarray, s: np.ndarray, fx: np.ndarray, fy: np.ndarray,
                    q: np.ndarray) -> np.ndarray:
        """Generalised force of point forces (fx, fy) at local ``s`` on segments ``seg``."""
        n = self.n
        phi = q[1:]
        Q = np.zeros(n + 1)
        if seg.size == 0:
            return Q
        Q[0] = fy.sum()
        ax = self._arm(seg, s, fx)
        ay = self._arm(seg, s, fy)
        Q[1:] = ay * np.cos(phi) - ax * np.sin(phi)
        return Q

    def _arm(self, seg, s, f):
        n = self.n
        fs = np.bincount(seg, f, n)
        ss = np.bincount(seg, s * f, n)
        after = np.cumsum(fs[::-1])[::-1] - fs  # sum over segments i > j
        return self.dl * after + ss

    # ----------------------------------------------------------------- forces
    def wetted_start(self, xs: np.ndarray) -> float | None:
        """Arc length where the beam leaves the wall (X = 0) for good; None if not out."""
        if xs[-1] <= 0.0:
            return None
        inside = np.nonzero(xs <= 0.0)[0]
        if inside.size == 0:
            return 0.0
        k = inside[-1]
        frac = -xs[k] / (xs[k + 1] - xs[k])
        return (k + frac) * self.dl

    def fluid(self, xs, ys, vx, vy, q, qd):
        """Generalised fluid force and the total force (complex) per unit span."""
        zero = np.zeros(self.n + 1)
        rho = self.fluid_density
        s0 = self.wetted_start(xs)
        if rho == 0.0 or s0 is None or self.length_m - s0 < 1e-6 * self.length_m:
            return zero, 0j
        nv = self.vortices_per_segment * self.n
        s_v = np.linspace(s0, self.length_m, nv + 1)
        s_v[-1] = self.length_m * (1 - 1e-12)
        zv, vv, seg_v, sl_v = self.points(s_v, xs, ys, vx, vy, q, qd)
        zc, vc, _, _ = self.points(0.5 * (s_v[1:] + s_v[:-1]), xs, ys, vx, vy, q, qd)
        u_inf = complex(self.free_stream)
        u_rel = vx[-1] - self.free_stream  # > 0: the free end leads (drawn out)
        kutta = 0 if (self.kutta == "trailing" and u_rel > 0.0) else -1
        if self.wake and self.kutta == "trailing" and kutta == 0:
            # wake frozen in the still fluid at the (fixed) wall-end trailing edge: it merges
            # with the trailing vortex (see "Wake" in the module docstring)
            gam, g_w = wake_circulation(zv, zc, vc, u_inf, kutta, np.zeros(0, complex),
                                        np.zeros(0))
            w_ext = np.zeros(zv.size, complex)
            w_ext[1:] = induced_conj_velocity(zv[1:], zv[:1], np.array([g_w]))
            f = vortex_forces(zv, gam, vv, rho, u_inf, self.mutual_induction, w_ext)
        else:
            gam = bound_vortex_circulation(zv, zc, vc, u_inf, kutta)
            f = vortex_forces(zv, gam, vv, rho, u_inf, self.mutual_induction)
        # drag on the free end along X
        drag = -0.5 * self.drag_coefficient * self.thickness_m * rho * abs(u_rel) * u_rel
        f[-1] += drag
        Q = self.generalized(seg_v, sl_v, f.real, f.imag, q)
        return Q, complex(f.sum())

    def added_mass_matrix(self, xs, ys, q, qd) -> np.ndarray:
        r"""Fluid inertia of the wetted part as an added generalised mass matrix.

        The non-circulatory bound-vortex solution of the same discretisation (collocation
        rows of :func:`bound_vortex_circulation`, :math:`\sum\Gamma_j = 0` instead of the
        Kutta row) gives Γ = G J_n q̇ (J_n: normal velocity of the collocation points per
        q̇).  The potential jump across panel k is :math:`[\phi]_k = \sum_{j\le k}\Gamma_j`
        and the unsteady Bernoulli term :math:`\rho\,\partial[\phi]/\partial t` loads panel
        k (length :math:`\Delta s_k`) along its normal, so that
        :math:`M_a = \rho J_n^T \mathrm{diag}(\Delta s) C G J_n` (C: cumulative sum),
        symmetrised.  Rates of the geometry and of the wetted length are neglected.  Flat
        plate in heave: ρπL²/4 (tested).  Zero without fluid or wetted part."""
        n = self.n
        rho = self.fluid_density
        s0 = self.wetted_start(xs)
        Ma = np.zeros((n + 1, n + 1))
        if rho == 0.0 or s0 is None or self.length_m - s0 < 1e-6 * self.length_m:
            return Ma
        nv = self.vortices_per_segment * n
        s_v = np.linspace(s0, self.length_m, nv + 1)
        s_v[-1] = self.length_m * (1 - 1e-12)
        zero = np.zeros(n + 1)
        zv, _, _, _ = self.points(s_v, xs, ys, zero, zero, q, qd)
        zc, _, seg, sl = self.points(0.5 * (s_v[1:] + s_v[:-1]), xs, ys, zero, zero, q, qd)
        dz = np.diff(zv)
        ds = np.abs(dz)
        nrm = -1j * dz / ds
        phi = q[1:]
        # normal-velocity Jacobian of the collocation points
        j = np.arange(n)
        w = np.where(j[None, :] < seg[:, None], self.dl,
                     np.where(j[None, :] == seg[:, None], sl[:, None], 0.0))
        J = np.empty((nv, n + 1))
        J[:, 0] = nrm.imag
        J[:, 1:] = w * (nrm.imag[:, None] * np.cos(phi)[None, :]
                        - nrm.real[:, None] * np.sin(phi)[None, :])
        a = np.empty((nv + 1, nv + 1))
        a[:-1] = np.real(-1j * nrm[:, None] / (_TWO_PI * (zc[:, None] - zv[None, :])))
        a[-1] = 1.0
        B = np.vstack((J, np.zeros((1, n + 1))))
        G = np.linalg.solve(a, B)                       # Γ per unit q̇
        jump = np.cumsum(G, axis=0)[:-1]                # [φ] at the panels
        Ma = -rho * J.T @ (ds[:, None] * jump)
        return 0.5 * (Ma + Ma.T)

    def contacts(self, xs, ys, vx, vy, q, qd, detail: list | None = None):
        """Generalised contact force and the total contact force (complex).

        With a list ``detail``, one ``(surface, X, Y, F_n, s)`` tuple per active contact is
        appended (s: arc length on the beam from the driven end; surface: ``gap_upper/lower``,
        ``guide_upper/lower`` for nodes on the walls, ``inlet_upper/lower`` and
        ``guide_end_upper/lower`` for the corners)."""
        g = self.geometry
        n = self.n
        segs, ss, fxs, fys = [], [], [], []
        # nodes against channel walls (X <= 0) and guide surfaces (0 < X <= L_g)
        in_gap = (xs <= 0.0) & (xs >= -g.gap_length_m)
        in_guide = (xs > 0.0) & (xs <= g.guide_length_m)
        ca = 1.0 / math.sqrt(1.0 + self.tan_a ** 2)
        sa = self.tan_a * ca
        for sign, c in ((1.0, self.cu), (-1.0, self.cl)):
            # upper (sign=+1): surface Y = c + X tan a in the guide, Y = c in the gap
            surf = np.where(in_guide, c + np.maximum(xs, 0.0) * self.tan_a, c)
            nx = np.where(in_guide, sa, 0.0)        # inward normal (into the free region)
            ny = -sign * np.where(in_guide, ca, 1.0)
            pen = (sign * ys - surf) * np.where(in_guide, ca, 1.0)
            pdot = -(vx * nx + vy * ny)
            act = (in_gap | in_guide) & (pen > 0.0)
            if not act.any():
                continue
            fn = np.maximum(0.0, self.kc * pen + self.cc * pdot)[act]
            tx, ty = -ny[act], nx[act]
            vt = vx[act] * tx + vy[act] * ty
            ft = -g.friction_coefficient * fn * np.tanh(vt / g.friction_velocity_m_s)
            fxs.append(fn * nx[act] + ft * tx)
            fys.append(fn * ny[act] + ft * ty)
            idx = np.nonzero(act)[0]
            if detail is not None:
                side = "upper" if sign > 0 else "lower"
                for k, f in zip(idx, fn):
                    kind = "guide" if in_guide[k] else "gap"
                    detail.append((f"{kind}_{side}", float(xs[k]), float(ys[k]), float(f),
                                   k * self.dl))
            # node k is the end of segment k-1 (s = dl), node 0 the start of segment 0
            segs.append(np.where(idx == 0, 0, idx - 1))
            ss.append(np.where(idx == 0, 0.0, self.dl))
        # corners against segments
        phi, w = q[1:], qd[1:]
        ex, ey = np.cos(phi), np.sin(phi)
        for ic, (cx, cy, side) in enumerate(self.corners):
            rx, ry = cx - xs[:-1], cy - ys[:-1]
            t = rx * ex + ry * ey
            d = -rx * ey + ry * ex           # corner distance along the segment normal
            pen = side * d                    # upper corner (side=-1) penetrates if d < 0
            act = (t >= 0.0) & (t < self.dl) & (pen > 0.0) & (pen < g.max_penetration_m)
            if not act.any():
                continue
            i = np.nonzero(act)[0]
            nxs, nys = side * -ey[i], side * ex[i]   # force direction on the beam
            # velocity of the beam material point under the corner
            pvx = vx[i] - t[i] * ey[i] * w[i]
            pvy = vy[i] + t[i] * ex[i] * w[i]
            pdot = -(pvx * nxs + pvy * nys)
            fn = np.maximum(0.0, self.kc * pen[i] + self.cc * pdot)
            vt = pvx * ex[i] + pvy * ey[i]
            ft = -g.friction_coefficient * fn * np.tanh(vt / g.friction_velocity_m_s)
            fxs.append(fn * nxs + ft * ex[i])
            fys.append(fn * nys + ft * ey[i])
            if detail is not None:
                name = ("inlet" if ic < 2 else "guide_end") + ("_upper" if side < 0 else
                                                               "_lower")
                detail.extend((name, float(cx), float(cy), float(f), float(si))
                              for f, si in zip(fn, i * self.dl + t[i]))
            segs.append(i)
            ss.append(t[i])
        if not segs:
            return np.zeros(n + 1), 0j
        seg, s = np.concatenate(segs), np.concatenate(ss)
        fx, fy = np.concatenate(fxs), np.concatenate(fys)
        return self.generalized(seg, s, fx, fy, q), complex(fx.sum(), fy.sum())

    def evaluate(self, x: np.ndarray, v_drive: float) -> dict:
        """Every force of the current state (used by :meth:`rhs` and the outputs)."""
        x0, q, qd = self.split(x)
        xs, ys = self.nodes(x0, q)
        vx, vy = self.node_velocities(v_drive, q, qd)
        phi, w = q[1:], qd[1:]
        Q = np.zeros(self.n + 1)
        Q[1:] -= self.lap @ (self.k_phi * phi + self.c_phi * w)
        if self.gravity:
            s = np.full(self.n, 0.5 * self.dl)
            Q += self.generalized(np.arange(self.n), s, np.zeros(self.n),
                                  np.full(self.n, -self.m * self.gravity), q)
        Qc, fc = self.contacts(xs, ys, vx, vy, q, qd)
        Qf, ff = self.fluid(xs, ys, vx, vy, q, qd)
        ev = dict(xs=xs, ys=ys, Q=Q + Qc + Qf, contact=fc, fluid=ff)
        if self.added_mass:
            Ma = self.added_mass_matrix(xs, ys, q, qd)
            ev["added_mass"] = Ma
            # momentum form -d(M_a q̇)/dt: the added mass grows with the wetted length as
            # the strip is drawn out (von Kármán's water-entry term), -(∂M_a/∂X0) V q̇
            if v_drive != 0.0 and Ma.any():
                h = 1e-5 * self.length_m
                Mp = self.added_mass_matrix(*self.nodes(x0 + h, q), q, qd)
                ev["Q"] = ev["Q"] - (Mp - Ma) / h * v_drive @ qd
        return ev

    def contact_list(self, x: np.ndarray, v_drive: float) -> list:
        """Active contacts of state ``x``: ``(surface, X, Y, F_n, s)`` tuples (see
        :meth:`contacts`)."""
        x0, q, qd = self.split(x)
        xs, ys = self.nodes(x0, q)
        vx, vy = self.node_velocities(v_drive, q, qd)
        out: list = []
        self.contacts(xs, ys, vx, vy, q, qd, detail=out)
        return out

    def rhs(self, x: np.ndarray, v_drive: float) -> np.ndarray:
        """:math:`\\dot x` for the drive speed ``v_drive``."""
        x0, q, qd = self.split(x)
        ev = self.evaluate(x, v_drive)
        M = self.mass_matrix(q)
        if self.added_mass:
            M = M + ev["added_mass"]
        qdd = np.linalg.solve(M, ev["Q"] - self.velocity_terms(q, qd))
        return np.concatenate(([v_drive], qd, qdd))

    # ----------------------------------------------------------------- helpers
    def initial_state(self, wetted_length_m: float, tip_impulse: float = 0.0) -> np.ndarray:
        """Straight beam on the X axis with ``wetted_length_m`` outside the wall, at rest
        but for a Y impulse ``tip_impulse`` [N·s per m span] at the free end."""
        n = self.n
        x = np.zeros(2 * n + 3)
        x[0] = wetted_length_m - self.length_m
        if tip_impulse:
            q = x[1:n + 2]
            _, _, seg, s = self.points(np.array([self.length_m * (1 - 1e-12)]),
                                       *self.nodes(x[0], q), np.zeros(n + 1),
                                       np.zeros(n + 1), q, np.zeros(n + 1))
            J = self.generalized(seg, s, np.zeros(1), np.array([tip_impulse]), q)
            x[n + 2:] = np.linalg.solve(self.mass_matrix(q), J)
        return x

    def tip_deflection(self, x: np.ndarray) -> float:
        """Elastic tip deflection of the wetted part: the tip's distance from the tangent of
        the beam where it leaves the wall (removes the rigid rocking in the gap clearance)."""
        x0, q, qd = self.split(x)
        xs, ys = self.nodes(x0, q)
        s0 = self.wetted_start(xs)
        if s0 is None:
            return 0.0
        z, _, seg, _ = self.points(np.array([s0]), xs, ys, xs, ys, q, qd)
        phi = q[1 + seg[0]]
        return float(-math.sin(phi) * (xs[-1] - z[0].real) + math.cos(phi) * (ys[-1] - z[0].imag))

    def energy(self, x: np.ndarray) -> float:
        """Kinetic (drive speed 0) + hinge + contact-free potential energy [J/m]."""
        _, q, qd = self.split(x)
        phi = q[1:]
        return 0.5 * qd @ self.mass_matrix(q) @ qd + 0.5 * self.k_phi * phi @ self.lap @ phi

    def first_mode_rad_s(self, length_m: float | None = None) -> float:
        """Euler–Bernoulli first cantilever frequency 3.516 sqrt(EI/(μ L⁴))."""
        L = self.length_m if length_m is None else length_m
        mu = self.density * self.thickness_m
        return 1.875104 ** 2 * math.sqrt(self.bending_rigidity / (mu * L ** 4))


def divergence_speed(beam: SegmentedBeam, wetted_length_m: float) -> float | None:
    r"""Quasi-static divergence speed [m/s] of the drawn-out beam at a given wetted length.

    With the beam straight and at rest (:math:`\dot q = 0`) the fluid load is quadratic in
    the drive speed, so the linearised stiffness is :math:`K(V) = K_s - V^2 K_f`
    (finite differences of :meth:`SegmentedBeam.evaluate`); divergence at the smallest real
    positive :math:`V^2` with :math:`K(V)` singular.  The gap is preloaded by 20 µm for the
    linearisation so that it acts as a clamp (at zero preload the one-sided contacts are at
    their kink).  ``None`` without fluid.
    """
    geo = replace(beam.geometry, clearance_m=-2e-5, friction_coefficient=0.0)
    b = replace(beam, geometry=geo)
    if b.fluid_density == 0.0:
        return None
    x = b.initial_state(wetted_length_m)

    def stiffness(v: float) -> np.ndarray:
        n, h = b.n, 1e-7
        f0 = b.evaluate(x, v)["Q"]
        K = np.empty((n + 1, n + 1))
        for i in range(n + 1):
            xp = x.copy()
            xp[1 + i] += h
            K[:, i] = -(b.evaluate(xp, v)["Q"] - f0) / h
        return K

    ks = stiffness(1e-9)
    kf = ks - stiffness(1.0)
    lam = np.linalg.eigvals(np.linalg.solve(ks, kf))
    real = lam[(np.abs(lam.imag) <= 1e-9 * np.abs(lam).max()) & (lam.real > 0)].real
    return float(1.0 / math.sqrt(real.max())) if real.size else None


def linear_eigenvalues(beam: SegmentedBeam, wetted_length_m: float,
                       speed: float) -> np.ndarray:
    r"""Eigenvalues [1/s] of the beam linearised about the straight state, frozen length.

    The drive speed ``speed`` moves the material (it enters the fluid boundary condition and
    the Kutta–Joukowski force) but :math:`X_0` is held, i.e. the wetted length and the
    clamped material are frozen (Lagrangian coordinates; the gap is preloaded by 20 µm as in
    :func:`divergence_speed`).  A real positive eigenvalue is the frozen-length divergence,
    a complex pair with positive real part flutter.  Jacobian of :meth:`SegmentedBeam.rhs` by
    forward differences.
    """
    geo = replace(beam.geometry, clearance_m=-2e-5, friction_coefficient=0.0)
    b = replace(beam, geometry=geo)
    x = b.initial_state(wetted_length_m)
    f0 = b.rhs(x, speed)
    n, h = x.size, 1e-7
    A = np.empty((n - 1, n - 1))
    for i in range(1, n):
        xp = x.copy()
        xp[i] += h
        A[:, i - 1] = (b.rhs(xp, speed)[1:] - f0[1:]) / h
    return np.linalg.eigvals(A)


def beam_for(material: str, **kw: Any) -> SegmentedBeam:
    """A :class:`SegmentedBeam` of a Table 1 material ('frp', 'aluminium', 'steel')."""
    try:
        mat = MATERIALS[material]
    except KeyError:
        raise ParameterError(f"unknown material {material!r}; valid: "
                             f"{', '.join(MATERIALS)}") from None
    return SegmentedBeam(density=mat["density"], bending_rigidity=mat["bending_rigidity"], **kw)


# --------------------------------------------------------------------------- the block
class SpaghettiBeam(Block):
    """The segmented beam in the wall gap as a block (see the module docstring).

    Parameters
    ----------
    name : str
    beam : SegmentedBeam
        The model (material, segments, fluid, gap and guide).
    initial_state : array, optional
        ``[X0, y0, φ..., ẏ0, φ̇...]``; default: :meth:`SegmentedBeam.initial_state` with
        ``wetted_length_m`` and ``tip_impulse``.
    """

    def __init__(self, name: str, beam: SegmentedBeam, wetted_length_m: float = 0.125,
                 tip_impulse: float = 0.0, initial_state: Any = None) -> None:
        super().__init__(name)
        self.beam = beam
        n = beam.n
        x = (beam.initial_state(wetted_length_m, tip_impulse) if initial_state is None
             else np.asarray(initial_state, float))
        if x.shape != (2 * n + 3,):
            raise ParameterError(f"SpaghettiBeam '{name}': initial_state needs {2 * n + 3} "
                                 f"values, got shape {x.shape}")
        self.speed = self.declare_input("speed", unit="m/s",
                                        description="drive speed along +X (> 0 draws out)")
        self.x = self.declare_continuous_state("x", x)
        st = ()
        self.declare_output("tip", lambda c: self._nodes(c)[-1], shape=(2,), unit="m",
                            depends_on=st)
        self.declare_output("tip_y", lambda c: float(self._nodes(c)[-1, 1]), unit="m",
                            depends_on=st)
        self.declare_output("tip_deflection",
                            lambda c: self.beam.tip_deflection(np.asarray(c.state(self.x))),
                            unit="m", depends_on=st)
        self.declare_output("nodes", self._nodes, shape=(n + 1, 2), unit="m", depends_on=st)
        self.declare_output("angles", lambda c: np.array(c.state(self.x)[2:n + 2]),
                            shape=(n,), unit="rad", depends_on=st)
        self.declare_output("wetted_length", self._wetted, unit="m", depends_on=st)
        self.declare_outputs(
            [dict(name="contact_force", shape=(2,), unit="N/m"),
             dict(name="fluid_force", shape=(2,), unit="N/m")], self._forces,
            depends_on=("speed",))

    def _nodes(self, ctx: Any) -> np.ndarray:
        x = np.asarray(ctx.state(self.x))
        _, q, _ = self.beam.split(x)
        xs, ys = self.beam.nodes(x[0], q)
        return np.column_stack((xs, ys))

    def _wetted(self, ctx: Any) -> float:
        xs = self._nodes(ctx)[:, 0]
        s0 = self.beam.wetted_start(xs)
        return 0.0 if s0 is None else self.beam.length_m - s0

    def _forces(self, ctx: Any):
        ev = self.beam.evaluate(np.asarray(ctx.state(self.x)), float(ctx.input(self.speed)))
        c, f = ev["contact"], ev["fluid"]
        return np.array([c.real, c.imag]), np.array([f.real, f.imag])

    def derivatives(self, ctx: Any) -> np.ndarray:
        return self.beam.rhs(np.asarray(ctx.state(self.x)), float(ctx.input(self.speed)))
