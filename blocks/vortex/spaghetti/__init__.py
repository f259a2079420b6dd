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
the end of the run (L_out = 0.49 m) the bisected flip of the verdict sits at κ = 23.9
(FRP 0.73 m/s), 25.4 (Al 2.70 m/s), 28.7 (steel 4.14 m/s) — one time-domain threshold
κ ≈ 24–29 for all three materials, ~15x the frozen-length κ_c.

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
The critical speed is where the verdict flips: the 0.5 m/s grid, then four bisections of the
bracket (to 0.03 m/s): **FRP 0.73, Al 2.70, steel 4.14 m/s** (paper: FRP < 1, Al ≈ 2, steel
2–3 in the text, 3–4 by the curves; its text contradicts its own Fig. 6, where 3 m/s is the
over-damped case).  In :math:`\kappa = \rho V^2 L^3/EI` at the end of the run (L = 0.49 m)
the three flips sit at 23.9, 25.4 and 28.7: one threshold, so the Al : steel speed ratio
(0.65) is the √EI ratio (0.69).  The paper's text puts the flip at κ ≈ 14 (Al at 2 m/s
13.9, steel at 3 m/s 15.1) and its steel curves at 15–27: its fluid load relative to the
bending stiffness is up to ~1.8x ours.  FRP is inside its band, steel 4 % above the curves'
band, Al 35 % above "about 2".  Air (1.2) and vacuum: free vibration with peaks within
2.2 % at 4 m/s (Fig. 7).

What moves the critical speeds (none closes the Al gap):

* the impulse (its size is not given; 16 segments, bisected): 0.5 / 2 / 5 N·s/m give Al 2.70
  / 2.34 / 3.22 and steel 4.14 / 3.47 / 3.28 m/s — not monotonic in the impulse (a larger
  disturbance swings through the gap contacts before the fluid freezes the tilt); with 2 the
  steel flip is inside the curves' band (FRP then fails: RK4 at 1e-4 s blows up with the
  tip at ~100 m/s);
* contacts (8 segments, tip angle ratio at 4 m/s, baseline 1.00): C_D 0 / 2: 1.007 / 1.013;
  contact stiffness 1e8 N/m²: 0.967 (3 m/s 0.89, Al 2.5 m/s 0.96); clearance 1.6 mm: 0.78
  — all toward stability;
* added mass and the wake (options below): Al 2.5 / 3.5, steel 4.0 / 6.0 m/s (grid);
* the wall as a mirror plane (images :math:`-\Gamma_j` at :math:`-\bar z_j`; the root vortex
  coincides with its image, so there is no Kutta row left): steel verdicts at 1–4 m/s
  unchanged (tip angle ratio at 4 m/s 0.972 against 0.989, 8 segments) — not kept;
* the Kutta condition at the free end: flutter from 0.5 m/s (above), against Fig. 6.
* bound vortices on every segment, also on the part still in the gap (the paper's count
  n_c n_b + 1; that part slides along itself and carries little circulation, the Kutta point
  moves to the driven end): FRP 0.73, Al 2.73, steel 4.11 m/s — no change (not kept);
* the criterion: the tip displacement alone (the paper's "increases monotonously", the
  example's ``literal`` flag) gives Al 2.5 and steel 3.0 on the grid but is not monotonic
  in V (steel 3.5 m/s then counts as stable): near the threshold the tilt frozen by the
  fluid damping is carried out with the material and the displacement creeps up at a
  constant tip angle; the example keeps the growth of the tip angle as the criterion.

The order, the √EI scaling and the air/water contrast are robust; the absolute critical
speeds move by ±0.5 m/s with the unknown impulse and contact constants.  The missing factor
for Al (κ 25 against ≈ 14) would need the original figures or constants to trace (the seed's
k_φ = 65.1 N·m/rad fits neither the experiment's EI nor Table 1's).

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

from .beam import (
    FLUID_DENSITY,
    LENGTH_M,
    MATERIALS,
    THICKNESS_M,
    BeamGeometry,
    SegmentedBeam,
    beam_for,
)
from .block import SpaghettiBeam
from .fluid import (
    bound_vortex_circulation,
    chord_normals,
    induced_conj_velocity,
    normal_influence,
    vortex_forces,
    wake_circulation,
)
from .stability import divergence_speed, linear_eigenvalues

__all__ = [
    "FLUID_DENSITY", "LENGTH_M", "MATERIALS", "THICKNESS_M", "BeamGeometry", "SegmentedBeam",
    "SpaghettiBeam", "beam_for", "bound_vortex_circulation", "chord_normals",
    "divergence_speed", "induced_conj_velocity", "linear_eigenvalues", "normal_influence",
    "vortex_forces", "wake_circulation",
]
