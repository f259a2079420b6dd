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
beam drawn out the free end leads; see ``docs/libraries/spaghetti.md`` for what this does
and does not have in common with an inverted flag.  No image of the vortices in the wall plane is
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
  speed (see ``docs/libraries/spaghetti.md``).
* Drive speed: an input.  Its time derivative Ẍ0 is neglected (piecewise constant speed)
  unless the block is built with ``drive_acceleration=True``: then the input
  ``acceleration`` acts on every segment as the body force -m Ẍ0 along X (exact for the
  prescribed X0(t); the added-mass option ignores it).

Ports: :class:`SpaghettiBeam`.

Options (both off by default)
-----------------------------
* ``added_mass=True``: the fluid's added mass of the wetted part
  (:meth:`SegmentedBeam.added_mass_matrix`, non-circulatory point-vortex solution), with the
  water-entry term of the growing wetted length.
* ``wake=True``: a shed wake (:func:`wake_circulation`); drawn out it stays at the wall-end
  trailing edge and merges with the trailing vortex (Kelvin's :math:`\sum_j\Gamma_j = 0`
  replaces the Kutta row); no effect when pulled in.

Findings and results
--------------------
The measured results (reverse-spaghetti critical speeds FRP 0.67 < Al 2.36 < steel 3.45 m/s
with a 2 N·s/m tip impulse, against the paper's < 1, about 2, 2-4; what was tried against
the aluminium gap; the added-mass and wake options; the spaghetti-with-guide case, not
reproduced) and the analysis behind the modelling choices are in
``docs/libraries/spaghetti.md``.

Limitations
-----------
Quasi-steady potential flow; wake and added mass only as the options above; no wall
images; thin beam (the thickness is used only for the drag area); contacts are penalty
springs (soft default, see above); per unit span (2-D) throughout; the drive acceleration
only with ``drive_acceleration=True`` (and not in the added mass).  The spaghetti-with-guide
sequence of Fig. 5 is not reproduced, with or without the experiment's run-up (see
``docs/libraries/spaghetti.md``).
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
