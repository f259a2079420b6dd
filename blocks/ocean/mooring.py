r"""Mooring: the quasi-static elastic catenary with seabed contact, mooring systems, and the
seed's polynomial mooring stiffness.

Elastic catenary (Jonkman 2007, the FAST/MoorPy formulation).  End A (the anchor) at the
origin, end B (the fairlead) at horizontal span :math:`X_F \ge 0` and height :math:`Z_F`
above it; unstretched length :math:`L`, axial stiffness :math:`EA`, submerged weight per
length :math:`w > 0`, seabed friction coefficient :math:`C_B \ge 0`.  Unknowns: the
fairlead tension components :math:`H_F` (horizontal, > 0) and :math:`V_F` (vertical).  With
:math:`\operatorname{asinh}` written for the logarithms of the references:

*Fully suspended* (:math:`V_F - wL \ge 0`, or the anchor above the seabed):

.. math::

    X_F &= \frac{H_F}{w}\Big[\operatorname{asinh}\frac{V_F}{H_F}
           - \operatorname{asinh}\frac{V_F - wL}{H_F}\Big] + \frac{H_F L}{EA} \\
    Z_F &= \frac{H_F}{w}\Big[\sqrt{1 + (V_F/H_F)^2} - \sqrt{1 + ((V_F - wL)/H_F)^2}\Big]
           + \frac{1}{EA}\Big(V_F L - \frac{wL^2}{2}\Big)

with :math:`H_A = H_F`, :math:`V_A = V_F - wL`.

*Partly on the seabed* (:math:`L_B = L - V_F/w > 0`):

.. math::

    X_F &= L_B + \frac{H_F}{w}\operatorname{asinh}\frac{V_F}{H_F} + \frac{H_F L}{EA}
           - \frac{C_B w}{2EA}\big(L_B^2 - x_B\max(x_B, 0)\big),
           \qquad x_B = L_B - \frac{H_F}{C_B w} \\
    Z_F &= \frac{H_F}{w}\Big[\sqrt{1 + (V_F/H_F)^2} - 1\Big] + \frac{V_F^2}{2 EA w}

with :math:`H_A = \max(H_F - C_B w L_B, 0)`, :math:`V_A = 0`.  The two sets agree at
:math:`L_B = 0`.  Special regimes solved in closed form (as MoorPy): the line entirely on
the seabed (:math:`Z_F = 0`), the fully slack "L" line (:math:`L \ge X_F +
L_{hang}`, :math:`L_{hang} = \sqrt{2 Z_F EA/w + (EA/w)^2} - EA/w` hanging vertically, the
rest on the seabed), the slack "U" line between two ends above the seabed, and the nearly
vertical line (:math:`X_F/Z_F < 10^{-4}`, slack or taut).

Solution: Newton's method on :math:`(H_F, V_F)` with the analytic Jacobian
:math:`J = \partial(X_F, Z_F)/\partial(H_F, V_F)`, Peyrot & Goulois's initial guess
(:math:`\lambda_0 = \sqrt{3((L^2 - Z_F^2)/X_F^2 - 1)}`, 0.2 if taut) or a warm start, steps
limited so that :math:`H_F` stays positive and backtracking on the residual.  The fairlead
stiffness :math:`K = \partial(H_F, V_F)/\partial(X_F, Z_F) = J^{-1}`.

Sign conventions.  :class:`CatenarySolution` holds tension *magnitudes* at the fairlead
(``h_fairlead, v_fairlead``: the line pulls the fairlead towards the anchor and down by
these) and the line's pull on the anchor (``h_anchor`` towards the fairlead, ``v_anchor``
up; negative when the line leaves the anchor downwards).  MoorPy's ``catenary`` returns
the forces the line exerts on its ends, horizontal positive from A to B and vertical
positive up: ``(fAH, fAV, fBH, fBV) = (h_anchor, v_anchor, -h_fairlead, -v_fairlead)``
(:meth:`CatenarySolution.as_moorpy`).  MoorPy's single ``CB`` argument (friction if >= 0,
else minus the anchor's height above the seabed) maps to ``friction`` and
``anchor_height`` (:func:`moorpy_catenary`).

Limitations: quasi-static (no line inertia or hydrodynamic drag on the line), a flat
horizontal seabed, homogeneous single-segment lines, no buoyant lines (:math:`w \le 0`),
no U-shaped line touching the seabed between two elevated ends (an error), no bending
stiffness.  Friction acts only on the part lying on the seabed next to the anchor.

The blocks' C forms live in :mod:`blocks.ocean.mooring_c`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CContext, CModel
from cosim.errors import CosimError, ParameterError

from .mooring_c import catenary_mooring_c, polynomial_mooring_c
from .morison import rotation_rpy

__all__ = ["CatenaryError", "CatenaryMooring", "CatenarySolution", "MooringLine",
           "MooringSystem", "PolynomialMooring",
           "catenary", "moorpy_catenary", "polynomial_mooring_force"]


class CatenaryError(CosimError, ValueError):
    """A catenary line that has no solution (too short, below the seabed, no convergence)."""


@dataclass(frozen=True)
class CatenarySolution:
    """Solution of one line (module docstring for the sign conventions).

    ``stiffness`` is :math:`\\partial(H_F, V_F)/\\partial(X_F, Z_F)` [N/m] (2x2).
    """

    h_fairlead: float
    v_fairlead: float
    h_anchor: float
    v_anchor: float
    seabed_length: float
    regime: str
    stiffness: np.ndarray = field(repr=False)
    iterations: int = 0

    @property
    def tension_fairlead(self) -> float:
        """Fairlead tension magnitude [N]."""
        return math.hypot(self.h_fairlead, self.v_fairlead)

    @property
    def tension_anchor(self) -> float:
        """Anchor tension magnitude [N]."""
        return math.hypot(self.h_anchor, self.v_anchor)

    def as_moorpy(self) -> tuple[float, float, float, float, float]:
        """``(fAH, fAV, fBH, fBV, LBot)`` in MoorPy's convention."""
        return (self.h_anchor, self.v_anchor, -self.h_fairlead, -self.v_fairlead,
                self.seabed_length)


def _suspended(H: float, V: float, L: float, EA: float, w: float):
    """(X, Z, J) of the fully suspended line."""
    sb, sa = V / H, (V - w * L) / H
    qb, qa = math.sqrt(1.0 + sb * sb), math.sqrt(1.0 + sa * sa)
    X = H / w * (math.asinh(sb) - math.asinh(sa)) + H * L / EA
    Z = H / w * (qb - qa) + (V * L - 0.5 * w * L * L) / EA
    J = ((math.asinh(sb) - math.asinh(sa) - sb / qb + sa / qa) / w + L / EA,
         (1.0 / qb - 1.0 / qa) / w,
         (qb - qa - sb * sb / qb + sa * sa / qa) / w,
         (sb / qb - sa / qa) / w + L / EA)
    return X, Z, J


def _grounded(H: float, V: float, L: float, EA: float, w: float, cb: float):
    """(X, Z, J) of the line partly on the seabed (L_B > 0)."""
    LB = L - V / w
    s = V / H
    q = math.sqrt(1.0 + s * s)
    X = LB + H / w * math.asinh(s) + H * L / EA
    dXdH = (math.asinh(s) - s / q) / w + L / EA
    dXdV = -1.0 / w + 1.0 / (w * q)
    if cb > 0:
        xb = LB - H / (cb * w)
        xbl = max(xb, 0.0)
        X -= 0.5 * cb * w / EA * (LB * LB - xb * xbl)
        dXdH -= xbl / EA
        dXdV += cb / EA * (LB - xbl)
    Z = H / w * (q - 1.0) + V * V / (2.0 * EA * w)
    J = (dXdH, dXdV, (q - 1.0 - s * s / q) / w, s / (w * q) + V / (EA * w))
    return X, Z, J


def _hang(h: float, EA_w: float) -> float:
    """Unstretched length hanging vertically over a height h (stretched by its own weight)."""
    return math.sqrt(2.0 * h * EA_w + EA_w * EA_w) - EA_w if h > 0 else 0.0


def catenary(xf: float, zf: float, length: float, ea: float, w: float,
             friction: float = 0.0, anchor_height: float = 0.0, *, guess=None,
             tol: float = 1e-10, max_iter: int = 100, max_strain: float = 0.1,
             name: str = "line") -> CatenarySolution:
    """Solve one elastic catenary line (module docstring).

    Parameters
    ----------
    xf, zf : float
        Horizontal span [m] (>= 0) and height of the fairlead above the anchor [m].
    length : float
        Unstretched length [m].
    ea : float
        Axial stiffness [N].
    w : float
        Submerged weight per length [N/m] (> 0).
    friction : float
        Seabed friction coefficient (>= 0).
    anchor_height : float
        Height of the anchor above the seabed [m] (0: on the seabed; > 0: no seabed
        contact next to the anchor).
    guess : (float, float), optional
        Warm start ``(h_fairlead, v_fairlead)``.
    tol : float
        Convergence tolerance on the span residual, relative to the line length.
    max_strain : float
        A line needing more strain than this to span the straight distance is refused
        as "too short" (:class:`CatenaryError`).
    name : str
        Used in error messages.
    """
    who = f"catenary '{name}'"
    for label, v in (("length", length), ("ea", ea), ("w", w)):
        if not (math.isfinite(v) and v > 0):
            extra = " (buoyant lines are not supported)" if label == "w" else ""
            raise ParameterError(f"{who}: {label} must be finite and > 0, got {v!r}{extra}")
    if not (math.isfinite(xf) and xf >= 0):
        raise ParameterError(f"{who}: horizontal span xf must be >= 0 m, got {xf!r}")
    if not (math.isfinite(friction) and friction >= 0):
        raise ParameterError(f"{who}: friction must be >= 0, got {friction!r}")
    if not (math.isfinite(anchor_height) and anchor_height >= 0):
        raise ParameterError(f"{who}: anchor_height must be >= 0 m, got {anchor_height!r}")
    L, EA = float(length), float(ea)
    xf, zf, w = float(xf), float(zf), float(w)
    hA = float(anchor_height)
    if zf + hA < -1e-9 * L:
        raise CatenaryError(f"{who}: the fairlead is {-(zf + hA):g} m below the seabed; "
                            "check the anchor depth and the fairlead position")
    if zf < 0 and hA > 0:  # the lower end is the fairlead: solve the reversed line
        rev = catenary(xf, -zf, L, EA, w, 0.0, hA + zf, tol=tol, max_iter=max_iter,
                       max_strain=max_strain, name=name)
        return CatenarySolution(rev.h_anchor, -rev.v_anchor, rev.h_fairlead, -rev.v_fairlead,
                                rev.seabed_length, rev.regime + " (reversed)",
                                rev.stiffness * np.array([[1, -1], [-1, 1]]), rev.iterations)
    chord = math.hypot(xf, zf)
    if chord > L * (1.0 + max_strain):
        raise CatenaryError(
            f"{who} is too short to reach the anchor: the straight distance from anchor to "
            f"fairlead is {chord:.4g} m but the unstretched length is only {L:.4g} m (strain "
            f"{chord / L - 1:.1%} > max_strain {max_strain:.1%}); lengthen the line, move the "
            "anchor closer or raise max_strain if such a stretch is intended")
    EA_w = EA / w
    cb = float(friction) if hA == 0 else 0.0

    # --- closed-form regimes
    if zf == 0.0 and hA == 0.0:
        if cb == 0 or xf <= L:
            HF = max(0.0, (xf / L - 1.0) * EA)
            HA = HF
        elif 0.5 * L + EA / (cb * w) * (1.0 - xf / L) <= 0:
            HF = (xf / L - 1.0) * EA + 0.5 * cb * w * L
            HA = max(0.0, HF - cb * w * L)
        else:
            HF = math.sqrt(2.0 * EA * cb * w * (xf - L))
            HA = 0.0
        K = np.array([[EA / L if HF > 0 else 0.0, 0.0], [0.0, w]])
        return CatenarySolution(HF, 0.0, HA, 0.0, L, "on seabed", K)
    lh_a, lh_b = _hang(hA, EA_w), _hang(zf + hA, EA_w)
    if L >= xf + lh_a + lh_b:
        if hA == 0.0:
            K = np.array([[0.0, 0.0], [0.0, w / math.sqrt(2.0 * zf / EA_w + 1.0)]])
            return CatenarySolution(0.0, w * lh_b, 0.0, 0.0, L - lh_b, "slack L", K)
        K = np.array([[0.0, 0.0], [0.0, w / math.sqrt(2.0 * (zf + hA) / EA_w + 1.0)]])
        return CatenarySolution(0.0, w * lh_b, 0.0, -w * lh_a, L - lh_a - lh_b, "slack U", K)
    if zf > 0 and xf / zf < 1e-4:
        dz_hanging = L + 0.5 * w / EA * L * L
        if dz_hanging >= zf:  # slack: hangs from both ends, lowest point below the anchor
            LB = (zf + L + w * L * L / (2 * EA)) / (2 + w * L / EA)
            K = np.array([[w * LB / zf, 0.0], [0.0, 0.5 * w]])
            return CatenarySolution(0.0, w * LB, 0.0, -w * (L - LB), 0.0, "vertical slack", K)
        t0 = (zf - dz_hanging) / L * EA
        K = np.array([[(t0 + w * L) / zf, 0.0], [0.0, EA / L]])
        return CatenarySolution(0.0, t0 + w * L, 0.0, t0, 0.0, "vertical taut", K)

    # --- Newton on (HF, VF)
    x_eff = max(xf, 1e-12 * L)
    if guess is not None and guess[0] > 0:
        H, V = float(guess[0]), float(guess[1])
    else:
        lam = 0.2 if L <= chord else math.sqrt(3.0 * ((L * L - zf * zf) / (x_eff * x_eff) - 1.0))
        H = max(abs(0.5 * w * x_eff / lam), 1e-6 * w * L)
        V = 0.5 * w * (zf / math.tanh(lam) + L)

    def evaluate(H: float, V: float):
        if hA > 0 or V - w * L >= 0:
            X, Z, J = _suspended(H, V, L, EA, w)
        else:
            X, Z, J = _grounded(H, V, L, EA, w, cb)
        return X - x_eff, Z - zf, J

    ex, ez, J = evaluate(H, V)
    atol = tol * L
    it = 0
    while math.hypot(ex, ez) > atol and it < max_iter:
        it += 1
        det = J[0] * J[3] - J[1] * J[2]
        if det == 0 or not math.isfinite(det):
            break
        dH = -(J[3] * ex - J[1] * ez) / det
        dV = -(-J[2] * ex + J[0] * ez) / det
        a = 1.0
        if H + dH < 0.1 * H:  # keep HF positive
            a = 0.9 * H / -dH
        r0 = math.hypot(ex, ez)
        for _ in range(30):
            Hn, Vn = H + a * dH, V + a * dV
            exn, ezn, Jn = evaluate(Hn, Vn)
            if math.hypot(exn, ezn) < r0 or a < 1e-6:
                break
            a *= 0.5
        H, V, ex, ez, J = Hn, Vn, exn, ezn, Jn
    if not math.hypot(ex, ez) <= max(atol, 1e-12):
        raise CatenaryError(
            f"{who}: Newton did not converge in {max_iter} iterations (xf={xf!r}, zf={zf!r}, "
            f"L={L!r}, EA={EA!r}, w={w!r}, friction={friction!r}, anchor_height={hA!r}); "
            f"residual {math.hypot(ex, ez):.3g} m")
    det = J[0] * J[3] - J[1] * J[2]
    K = np.array([[J[3], -J[1]], [-J[2], J[0]]]) / det
    if hA > 0 or V - w * L >= 0:
        if hA > 0 and V - w * L < 0:  # check the sag stays above the seabed
            sa = (V - w * L) / H
            z_low = (1.0 - math.sqrt(1.0 + sa * sa)) * H / w - 0.5 * (V - w * L) ** 2 / (EA * w)
            if z_low < -hA:
                raise CatenaryError(
                    f"{who}: the slack line would touch the seabed between two elevated ends "
                    f"(sag {-z_low:.4g} m below the anchor, seabed {hA:.4g} m below it); this "
                    "U-shaped contact is not supported: shorten the line or set "
                    "anchor_height=0")
        return CatenarySolution(H, V, H, V - w * L, 0.0, "suspended", K, it)
    LB = L - V / w
    HA = max(H - cb * w * LB, 0.0)
    return CatenarySolution(H, V, HA, 0.0, LB, "seabed contact", K, it)


def moorpy_catenary(x: float, z: float, length: float, ea: float, w: float,
                    cb: float = 0.0) -> tuple[float, float, float, float, float]:
    """MoorPy-style call: ``CB >= 0`` friction, ``CB < 0`` anchor ``-CB`` above the seabed;
    returns ``(fAH, fAV, fBH, fBV, LBot)`` (module docstring)."""
    sol = catenary(x, z, length, ea, w, friction=max(cb, 0.0), anchor_height=max(-cb, 0.0))
    return sol.as_moorpy()


@dataclass(frozen=True)
class MooringLine:
    """One catenary line of a :class:`MooringSystem`.

    ``anchor`` (3,) global anchor position [m] (z up, SWL at 0); ``fairlead`` (3,) the
    fairlead in the body frame [m] relative to the body reference point; ``length`` [m],
    ``ea`` [N], ``w`` submerged weight [N/m], ``friction`` seabed friction coefficient.
    """

    anchor: tuple
    fairlead: tuple
    length: float
    ea: float
    w: float
    friction: float = 0.0
    name: str = "line"


class MooringSystem:
    """Several catenary lines between fixed anchors and fairleads on one body.

    Parameters
    ----------
    lines : sequence of MooringLine
    depth : float
        Water depth [m]: the seabed is at ``z = -depth``; an anchor above it gets the
        corresponding ``anchor_height`` (no friction then).
    """

    def __init__(self, lines, depth: float) -> None:
        self.lines = list(lines)
        if not self.lines:
            raise ParameterError("MooringSystem: needs at least one line")
        if not (math.isfinite(depth) and depth > 0):
            raise ParameterError(f"MooringSystem: depth must be > 0 m, got {depth!r}")
        self.depth = float(depth)
        for ln in self.lines:
            if ln.anchor[2] < -self.depth - 1e-9:
                raise ParameterError(f"MooringSystem: anchor of '{ln.name}' at z = "
                                     f"{ln.anchor[2]:g} m lies below the seabed z = "
                                     f"{-self.depth:g} m")
        self._guess: list = [None] * len(self.lines)

    @classmethod
    def symmetric(cls, n_lines: int, depth: float, anchor_radius: float,
                  fairlead_radius: float, fairlead_z: float, length: float, ea: float,
                  w: float, friction: float = 0.0, heading0: float = 0.0) -> MooringSystem:
        """``n_lines`` equal lines at headings ``heading0 + 2 pi i/n`` [rad], anchors on the
        seabed at ``anchor_radius`` [m], fairleads at ``fairlead_radius`` and
        ``fairlead_z`` [m] in the body frame."""
        lines = []
        for i in range(n_lines):
            a = heading0 + 2.0 * math.pi * i / n_lines
            c, s = math.cos(a), math.sin(a)
            lines.append(MooringLine((anchor_radius * c, anchor_radius * s, -depth),
                                     (fairlead_radius * c, fairlead_radius * s, fairlead_z),
                                     length, ea, w, friction, name=f"line{i + 1}"))
        return cls(lines, depth)

    def solve(self, position=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0),
              warm_start: bool = True):
        """Force (3,) [N] and moment (3,) [N m] about the body reference point on the body,
        and the line solutions, for the body at ``position`` [m] with ``rotation``
        (roll, pitch, yaw) [rad].  ``warm_start``: start each line's Newton iteration from
        its previous solution (held by this object; fewer iterations, the same result to
        the tolerance) instead of the initial guess of :func:`catenary`."""
        pos = np.asarray(position, dtype=float)
        R = rotation_rpy(rotation)
        F, M, sols = np.zeros(3), np.zeros(3), []
        for i, ln in enumerate(self.lines):
            fl = [float(v) for v in ln.fairlead]  # R @ fairlead, summed left to right
            r = np.array([R[k, 0] * fl[0] + R[k, 1] * fl[1] + R[k, 2] * fl[2]
                          for k in range(3)])
            fair = pos + r
            anc = np.asarray(ln.anchor, dtype=float)
            d = fair[:2] - anc[:2]
            xf = float(math.hypot(d[0], d[1]))
            sol = catenary(xf, float(fair[2] - anc[2]), ln.length, ln.ea, ln.w, ln.friction,
                           max(anc[2] + self.depth, 0.0),
                           guess=self._guess[i] if warm_start else None, name=ln.name)
            self._guess[i] = (sol.h_fairlead, sol.v_fairlead) if sol.h_fairlead > 0 else None
            u = d / xf if xf > 0 else np.zeros(2)
            f = np.array([-sol.h_fairlead * u[0], -sol.h_fairlead * u[1], -sol.v_fairlead])
            F += f
            M += np.cross(r, f)
            sols.append(sol)
        return F, M, sols

    def forces(self, x: float = 0.0, y: float = 0.0, heading: float = 0.0, z: float = 0.0):
        """Planar summary: ``(Fx, Fy, Mz)`` [N, N, N m] on the body at ``(x, y, z)`` [m] with
        yaw ``heading`` [rad]."""
        F, M, _ = self.solve((x, y, z), (0.0, 0.0, heading))
        return float(F[0]), float(F[1]), float(M[2])

    def stiffness(self, position=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0),
                  step: float = 1e-3) -> np.ndarray:
        """6x6 stiffness :math:`K = -\\partial(F, M)/\\partial(x, y, z, roll, pitch, yaw)` by
        central differences (``step`` [m] and [rad])."""
        q0 = np.concatenate([np.asarray(position, float), np.asarray(rotation, float)])
        K = np.zeros((6, 6))
        for j in range(6):
            dq = np.zeros(6)
            dq[j] = step
            Fp, Mp, _ = self.solve(q0[:3] + dq[:3], q0[3:] + dq[3:])
            Fm, Mm, _ = self.solve(q0[:3] - dq[:3], q0[3:] - dq[3:])
            K[:, j] = -(np.concatenate([Fp, Mp]) - np.concatenate([Fm, Mm])) / (2.0 * step)
        return K


def polynomial_mooring_force(x, c1: float, c2: float = 0.0, c3: float = 0.0,
                             even_term: str = "square"):
    r"""The seed's polynomial mooring restoring force [N] at displacement ``x`` [m]:

    .. math:: F = -(c_1 x + c_2 x^2 + c_3 x^3)

    (``even_term="square"``, as the seed's units kN/m, kN/m^2, kN/m^3 imply) or
    :math:`F = -(c_1 x + c_2 x|x| + c_3 x^3)` (``even_term="signed"``: odd, symmetric
    restoring).  OCR note: the seed (Kreuzer & Ellermann slides, p. 123 and the P2 page)
    prints only the coefficients with units (c1 = 33.4 kN/m, c2 = 2.9 kN/m2,
    c3 = 45.5 kN/m3; c1 = 669.8, c2 = -37.5, c3 = 8, units partly illegible); the
    polynomial form itself is inferred from those units and the sign of the restoring
    force is our convention.  Coefficients in N/m, N/m^2, N/m^3.
    """
    if even_term not in ("square", "signed"):
        raise ParameterError(f"polynomial_mooring_force: even_term must be 'square' or "
                             f"'signed', got {even_term!r}")
    x = np.asarray(x, dtype=float)
    x2 = x * x if even_term == "square" else x * np.abs(x)
    out = -(c1 * x + c2 * x2 + c3 * x * x * x)
    return float(out) if out.ndim == 0 else out


class CatenaryMooring(Block):
    """Restoring force and moment of a :class:`MooringSystem` on a body (quasi-static).

    The body's roll and pitch are taken as zero (fairleads move with the position and the
    heading only).  Each line is solved from the initial guess of :func:`catenary` (no warm
    start from the previous call): the outputs are a function of the inputs alone, so the
    compiled run (:meth:`c_model`, the same Newton iteration in C) equals the Python loop
    bit for bit.  Limitation of the C form: an unsolvable line fails the step with a short
    message (no span and length figures).

    Ports
    -----
    in   position  (3,) [m]      body reference point (x, y, z; z up from the SWL)
    in   heading   scalar [rad]   yaw
    out  force     (3,) [N]      on the body, global frame; reads every input
    out  moment    (3,) [N*m]    about the body reference point, global frame; reads
                                 every input
    out  tensions  (n,) [N]      fairlead tension magnitude of each line; reads every
                                 input

    Parameters
    ----------
    system : MooringSystem
        The lines (anchors, fairleads on the body, line data) and the water depth.
    """

    def __init__(self, name: str, system: MooringSystem) -> None:
        super().__init__(name)
        if not isinstance(system, MooringSystem):
            raise ParameterError(f"CatenaryMooring '{name}': system must be a MooringSystem")
        self.system = system
        self.position = self.declare_input("position", shape=(3,), unit="m")
        self.heading = self.declare_input("heading", unit="rad")
        n = len(system.lines)
        self.force, self.moment, self.tensions = self.declare_outputs(
            [dict(name="force", shape=(3,), unit="N"), dict(name="moment", shape=(3,),
                                                            unit="N*m"),
             dict(name="tensions", shape=(n,), unit="N")], self._calc)

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`MooringSystem.solve` (zero roll and pitch) with :func:`catenary`
        from the cold start, line by line in the same order; the lines are constants.  A
        line without a solution fails the step, as :class:`CatenaryError` does in Python."""
        return catenary_mooring_c(self, cg)

    def _calc(self, ctx):
        try:
            F, M, sols = self.system.solve(ctx.input(self.position),
                                           (0.0, 0.0, ctx.input(self.heading)),
                                           warm_start=False)
        except CatenaryError as exc:
            raise CatenaryError(f"CatenaryMooring '{self.path}' at t = {ctx.time:g} s: "
                                f"{exc}") from None
        return F, M, np.array([s.tension_fairlead for s in sols])


class PolynomialMooring(Block):
    """The seed's polynomial mooring restoring force (:func:`polynomial_mooring_force`).

    .. math:: F = -(c_1 x + c_2 x^2 + c_3 x^3)\\quad\\text{or, with even_term="signed",}
              \\quad F = -(c_1 x + c_2 x|x| + c_3 x^3)

    Ports
    -----
    in   x      scalar [m]  displacement from the mooring's neutral position
    out  force  scalar [N]  restoring force; reads x

    Parameters
    ----------
    c1, c2, c3 : float
        :math:`c_1` [N/m], :math:`c_2` [N/m^2], :math:`c_3` [N/m^3]: the initial values of
        the tunable parameters of the same names.
    even_term : {"square", "signed"}
        :math:`c_2 x^2` (the seed's, asymmetric) or :math:`c_2 x|x|` (odd, symmetric).
    """

    def __init__(self, name: str, c1: float, c2: float = 0.0, c3: float = 0.0,
                 even_term: str = "square") -> None:
        super().__init__(name)
        if even_term not in ("square", "signed"):
            raise ParameterError(f"PolynomialMooring '{name}': even_term must be 'square' or "
                                 f"'signed', got {even_term!r}")
        self.even_term = even_term

        def finite(v):
            if not math.isfinite(v):
                raise ValueError("must be finite")
            return float(v)
        self.c1 = self.declare_parameter("c1", finite(c1), "N/m", finite)
        self.c2 = self.declare_parameter("c2", finite(c2), "N/m^2", finite)
        self.c3 = self.declare_parameter("c3", finite(c3), "N/m^3", finite)
        self.x = self.declare_input("x", unit="m")
        self.force = self.declare_output("force", self._force, unit="N", depends_on=("x",))

    def c_model(self, cg: CContext) -> CModel:
        """C of :func:`polynomial_mooring_force` on a scalar; c1, c2, c3 tunable."""
        return polynomial_mooring_c(self, cg)

    def _force(self, ctx) -> float:
        return polynomial_mooring_force(ctx.input(self.x), ctx.param(self.c1),
                                        ctx.param(self.c2), ctx.param(self.c3), self.even_term)
