r"""Pacejka Magic Formula tyre model, MF 5.2 and MF 6.1/6.2, from ``.tir`` coefficients.

Axes and signs: ISO-W (TYDEX W) contact-point axes as in TNO MF-Tyre and MFeval:
x forward, y left, z up.  Longitudinal slip :math:`\kappa = (\Omega R_e - V_x)/|V_x|`
(positive when driving), slip angle :math:`\tan\alpha = V_y/|V_x|`.  With the usual
ISO coefficient sets (``PKY1 < 0``) a positive slip angle gives a negative ``Fy``:
the force opposes the lateral sliding.  Forces and moments act on the tyre at the
contact point, in W axes.

Equations (Pacejka, *Tire and Vehicle Dynamics*, 3rd ed. 2012, eqs. 4.E1-4.E78;
MF 5.2 as in the MF-Tyre 5.2 / MSC Adams PAC2002 documentation).  With
:math:`F'_{z0} = \lambda_{Fz0} F_{z0}`, :math:`df_z = (F_z - F'_{z0})/F'_{z0}`,
:math:`\alpha^* = \tan\alpha` and the basic formula

.. math::

    y(x) = D \sin(C \arctan(B x - E (B x - \arctan B x)))

* pure longitudinal: :math:`F_{x0} = y(\kappa + S_{Hx}) + S_{Vx}` with
  :math:`C_x = p_{Cx1}\lambda_{Cx}`,
  :math:`D_x = (p_{Dx1} + p_{Dx2} df_z)(1 - p_{Dx3}\gamma^2)\lambda_{\mu x} F_z`,
  :math:`K_{x\kappa} = F_z (p_{Kx1} + p_{Kx2} df_z) e^{p_{Kx3} df_z}\lambda_{Kx} = B_x C_x D_x`;
* pure lateral: :math:`F_{y0} = y(\alpha^* + S_{Hy}) + S_{Vy}` with
  :math:`D_y = \mu_y F_z`, :math:`K_{y\alpha} = B_y C_y D_y`; MF 5.2:
  :math:`K_{y\alpha} = p_{Ky1} F'_{z0}\sin(2\arctan(F_z/(p_{Ky2}F'_{z0})))(1 - p_{Ky3}|\gamma|)`,
  camber through the shifts :math:`p_{Hy3}`, :math:`p_{Vy3,4}`; MF 6.x: exponent
  :math:`p_{Ky4}`, :math:`p_{Ky5}`, camber stiffness :math:`K_{y\gamma 0} = F_z(p_{Ky6} +
  p_{Ky7} df_z)` entering :math:`S_{Hy}`;
* aligning moment: :math:`M_{z0} = -t_0 F_{y0} + M_{zr0}` (pneumatic trail
  :math:`t = D_t\cos(C_t\arctan(B_t\alpha_t - E_t(B_t\alpha_t - \arctan B_t\alpha_t)))\cos\alpha`,
  residual :math:`M_{zr} = D_r\cos(\arctan(B_r\alpha_r))`); MF 6.x uses :math:`F_{y0}`
  at zero camber in the trail term;
* combined slip: :math:`F_x = G_{x\alpha}F_{x0}`, :math:`F_y = G_{y\kappa}F_{y0} +
  S_{Vy\kappa}` with the cosine weighting functions
  :math:`G = \cos(C\arctan(B x_s - E(B x_s - \arctan B x_s)))/G_0` (r-coefficients),
  :math:`M_z = -t F'_y + M_{zr} + s F_x` with the equivalent slips
  :math:`\alpha_{eq} = \sqrt{\alpha^2 + (K_{x\kappa}/K_{y\alpha})^2\kappa^2}\,\mathrm{sgn}\,\alpha`;
* overturning :math:`M_x` (book 4.E69; MF 5.2: ``QSX1..3`` only) and rolling resistance
  :math:`M_y = -\mathrm{sgn}(V_x) F_z R_0 (q_{sy1} + q_{sy2}F_x/F_{z0} + q_{sy3}|V_x/V_0| +
  q_{sy4}(V_x/V_0)^4)` (MF 6.x: book 4.E70 with ``QSY5..8``).

Version differences applied: MF 5.2 scales camber by ``LGAX/LGAY/LGAZ`` and uses
:math:`\gamma`; MF 6.x uses :math:`\sin\gamma`, ``LKYC/LKZC``, the degressive friction
scaling :math:`\lambda'_\mu = 10\lambda_\mu/(1 + 9\lambda_\mu)` in the vertical shifts,
and the inflation-pressure terms (``PPX*``, ``PPY*``, ``PPZ*``, ``PPMX1``, ``QSY8``) with
:math:`dp_i = (p - p_{nom})/p_{nom}` from ``INFLPRES``/``NOMPRES`` when the file gives
them (else :math:`dp_i = 0`: the terms vanish).  MF 6.2 is evaluated with the 6.1
force equations.  Following TNO as reported by MFeval, :math:`D_t` and :math:`s` use
the unscaled :math:`F_{z0}`, and :math:`D_t`, :math:`B_t` take the signed camber terms
``QDZ3`` and ``QBZ4``.

Low speed: with ``vx`` given and :math:`|V_x| <` ``VXLOW`` the shifts, the trail, the
residual moment and :math:`M_y` are multiplied by :math:`w = (1 - \cos(\pi|V_x|/V_{low}))/2`
(as MFeval and MF-Tyre do), so a tyre at rest with zero slip carries no force.

Limitations: steady-state equations only here (relaxation: :mod:`.tyres`); no turn
slip (all :math:`\zeta_i = 1`), no speed-dependent friction (``LMUV``), no MF 6.2
``QSX12..14`` overturning terms, no mirroring for ``TYRESIDE``; PAC2002 pressure
coefficients are ignored (MF 5.2 has none); the reversing case keeps the forward
shifts (the forces still oppose the sliding); the inputs are clipped to the
``*_RANGE`` sections (``FZMAX``, ``KPU*``, ``ALP*``, ``CAM*``) and ``Fz <= 0`` gives
zero forces.  Reversing flips the trail and residual moment (``sgn(Vx)`` in
:math:`D_t`, :math:`D_r`, as in the book).  The implementation follows the published
equations; no TNO/MFeval golden values were available to compare with (see the tests).
"""

from __future__ import annotations

import math
import pathlib
import warnings
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from .tir import TirError, TirFile, TirWarning, read_tir

__all__ = ["MFResult", "MagicFormula", "magic_formula", "SAMPLE_TIR"]

#: The sample MF 5.2 (PAC2002) file shipped with the package: 185/80 R14, Fz0 = 3800 N.
SAMPLE_TIR = pathlib.Path(__file__).resolve().parent / "data" / "pac2002_185_80R14.tir"

_TINY = 1e-12
_A_MU = 10.0  # degressive friction scaling constant (Pacejka 2012, 4.E8)

#: Coefficients every model needs; the rest default to 0 (shape/shift/variation terms)
#: or to the values of :data:`DEFAULTS`.
REQUIRED = ("FNOMIN", "UNLOADED_RADIUS", "PCX1", "PDX1", "PKX1", "PCY1", "PDY1", "PKY1",
            "PKY2", "QBZ1", "QCZ1", "QDZ1")
#: Non-zero defaults of absent coefficients (scaling factors are 1).
DEFAULTS = {"VXLOW": 1.0, "LONGVL": 16.7, "RCX1": 1.0, "RCY1": 1.0, "PKY4": 2.0,
            "Q_RE0": 1.0, "QSY7": 1.0}
_SCALING = ("LFZO", "LCX", "LMUX", "LEX", "LKX", "LHX", "LVX", "LGAX", "LCY", "LMUY", "LEY",
            "LKY", "LKYC", "LKZC", "LHY", "LVY", "LGAY", "LTR", "LRES", "LGAZ", "LXAL", "LYKA",
            "LVYKA", "LS", "LSGKP", "LSGAL", "LMX", "LVMX", "LMY")
_COEFFS = (
    "PCX1 PDX1 PDX2 PDX3 PEX1 PEX2 PEX3 PEX4 PKX1 PKX2 PKX3 PHX1 PHX2 PVX1 PVX2 PPX1 PPX2 "
    "PPX3 PPX4 RBX1 RBX2 RBX3 RCX1 REX1 REX2 RHX1 PTX1 PTX2 PTX3 "
    "PCY1 PDY1 PDY2 PDY3 PEY1 PEY2 PEY3 PEY4 PEY5 PKY1 PKY2 PKY3 PKY4 PKY5 PKY6 PKY7 PHY1 "
    "PHY2 PHY3 PVY1 PVY2 PVY3 PVY4 PPY1 PPY2 PPY3 PPY4 PPY5 RBY1 RBY2 RBY3 RBY4 RCY1 REY1 "
    "REY2 RHY1 RHY2 RVY1 RVY2 RVY3 RVY4 RVY5 RVY6 PTY1 PTY2 "
    "QBZ1 QBZ2 QBZ3 QBZ4 QBZ5 QBZ6 QBZ9 QBZ10 QCZ1 QDZ1 QDZ2 QDZ3 QDZ4 QDZ6 QDZ7 QDZ8 QDZ9 "
    "QDZ10 QDZ11 QEZ1 QEZ2 QEZ3 QEZ4 QEZ5 QHZ1 QHZ2 QHZ3 QHZ4 PPZ1 PPZ2 SSZ1 SSZ2 SSZ3 SSZ4 "
    "QSX1 QSX2 QSX3 QSX4 QSX5 QSX6 QSX7 QSX8 QSX9 QSX10 QSX11 PPMX1 "
    "QSY1 QSY2 QSY3 QSY4 QSY5 QSY6 QSY7 QSY8 "
    "FNOMIN UNLOADED_RADIUS VXLOW LONGVL VERTICAL_STIFFNESS BREFF DREFF FREFF Q_RE0 Q_V1 "
    "LONGITUDINAL_STIFFNESS LATERAL_STIFFNESS PCFX1 PCFX2 PCFX3 PCFY1 PCFY2 PCFY3").split()
# coefficients that exist only in MF 6.x: a PAC2002/MF 5.2 file may carry some of them
# with other meanings (QSX4..11) or unused (pressure); they are zeroed for MF 5.2
_MF6_ONLY = ("PPX1 PPX2 PPX3 PPX4 PPY1 PPY2 PPY3 PPY4 PPY5 PPZ1 PPZ2 PPMX1 QSX4 QSX5 QSX6 "
             "QSX7 QSX8 QSX9 QSX10 QSX11 QSY5 QSY6 QSY8 PKY5 PKY6 PKY7 PEY5 RBX3 RBY4 "
             "QBZ6 QDZ10 QDZ11").split()


def magic_formula(x: Any, B: Any, C: Any, D: Any, E: Any) -> Any:
    r""":math:`D\sin(C\arctan(Bx - E(Bx - \arctan Bx)))` (vectorised).

    Slope at zero ``B*C*D``; peak ``D`` (for ``C > 1``); large-slip asymptote
    ``D*sin(pi*C/2)``; with ``E = 0`` the peak is at ``tan(pi/(2C))/B``.
    """
    bx = np.multiply(B, x)
    return D * np.sin(C * np.arctan(bx - E * (bx - np.arctan(bx))))


class _Scalar:
    """Math on Python floats (the block's path: ~20x cheaper than NumPy on scalars)."""

    sin, cos, tan, atan, exp, sqrt = math.sin, math.cos, math.tan, math.atan, math.exp, \
        math.sqrt
    abs = staticmethod(abs)

    @staticmethod
    def sgn(x: float) -> float:
        return 1.0 if x >= 0.0 else -1.0

    @staticmethod
    def min1(x: float) -> float:
        return x if x < 1.0 else 1.0

    @staticmethod
    def clip(x: float, lo: float, hi: float) -> float:
        return lo if x < lo else (hi if x > hi else x)

    @staticmethod
    def safe(d: float) -> float:
        return d if (d > _TINY or d < -_TINY) else (_TINY if d >= 0.0 else -_TINY)

    @staticmethod
    def pos(x: float) -> float:
        return 1.0 if x > 0.0 else 0.0

    @staticmethod
    def power(x: float, e: float) -> float:
        return x ** e


class _Array:
    """The same operations on NumPy arrays (broadcasting)."""

    sin, cos, tan, atan, exp, sqrt, abs = np.sin, np.cos, np.tan, np.arctan, np.exp, \
        np.sqrt, np.abs

    @staticmethod
    def sgn(x: Any) -> Any:
        return np.where(x >= 0.0, 1.0, -1.0)

    @staticmethod
    def min1(x: Any) -> Any:
        return np.minimum(x, 1.0)

    @staticmethod
    def clip(x: Any, lo: float, hi: float) -> Any:
        return np.clip(x, lo, hi)

    @staticmethod
    def safe(d: Any) -> Any:
        return np.where(np.abs(d) > _TINY, d, np.where(d >= 0.0, _TINY, -_TINY))

    @staticmethod
    def pos(x: Any) -> Any:
        return np.where(x > 0.0, 1.0, 0.0)

    @staticmethod
    def power(x: Any, e: float) -> Any:
        return np.power(x, e)


def _ops(*args: Any) -> tuple[Any, list]:
    if all(isinstance(a, (float, int)) or (np.ndim(a) == 0 and not isinstance(a, np.ndarray))
           for a in args):
        return _Scalar, [float(a) for a in args]
    return _Array, [np.array(a, dtype=float) for a in np.broadcast_arrays(*args)]


@dataclass
class MFResult:
    """Everything :meth:`MagicFormula.evaluate` computes (arrays or floats)."""

    fx: Any     #: combined longitudinal force [N]
    fy: Any     #: combined lateral force [N]
    mx: Any     #: overturning moment [N*m]
    my: Any     #: rolling resistance moment [N*m]
    mz: Any     #: aligning moment [N*m]
    fx0: Any    #: pure-slip longitudinal force [N]
    fy0: Any    #: pure-slip lateral force [N]
    mz0: Any    #: pure-slip aligning moment [N*m]
    gxa: Any    #: combined-slip weighting of Fx
    gyk: Any    #: combined-slip weighting of Fy
    svyk: Any   #: kappa-induced side force [N]
    kxk: Any    #: longitudinal slip stiffness dFx0/dkappa [N]
    kya: Any    #: cornering stiffness dFy0/dalpha [N/rad]
    mux: Any    #: longitudinal peak friction coefficient
    muy: Any    #: lateral peak friction coefficient
    trail: Any  #: pneumatic trail t [m]
    mzr: Any    #: residual aligning moment [N*m]


class MagicFormula:
    """Magic Formula 5.2 / 6.1 / 6.2 tyre (see module docstring).

    Parameters
    ----------
    tir : TirFile, str or Path
        Coefficients: a parsed file or a path (read with :func:`~.tir.read_tir`).
    scaling : dict, optional
        Overrides of scaling factors (``{"LMUY": 0.8}``); absent factors are 1.
    pressure_pa : float, optional
        Inflation pressure (MF 6.x); default ``INFLPRES`` (else ``NOMPRES``).
    clip_inputs : bool
        Clip slips, camber and load to the file's ranges (MF-Tyre behaviour).
    """

    def __init__(self, tir: TirFile | str | pathlib.Path, *, scaling: dict | None = None,
                 pressure_pa: float | None = None, clip_inputs: bool = True) -> None:
        self.tir = tir if isinstance(tir, TirFile) else read_tir(tir)
        t = self.tir
        self.version = t.version
        t.require(*REQUIRED)
        c = SimpleNamespace()
        for k in _COEFFS:
            setattr(c, k, t.number(k, DEFAULTS.get(k, 0.0)))
        for k in _SCALING:
            setattr(c, k, t.number(k, 1.0))
        unknown = set(scaling or ()) - set(_SCALING)
        if unknown:
            raise TirError(f"{t.name}: unknown scaling factor(s) {sorted(unknown)}; valid: "
                           + ", ".join(_SCALING))
        for k, v in (scaling or {}).items():
            setattr(c, k, float(v))
        self.v52 = self.version == "5.2"
        if self.v52:
            for k in _MF6_ONLY:
                setattr(c, k, 0.0)
            c.PKY4 = 2.0
        else:
            c.LGAX = c.LGAY = c.LGAZ = 1.0
        if c.FNOMIN <= 0 or c.UNLOADED_RADIUS <= 0 or c.LFZO <= 0:
            raise TirError(f"{t.name}: FNOMIN, UNLOADED_RADIUS and LFZO must be > 0")
        if c.PKY2 == 0:
            raise TirError(f"{t.name}:{t.lines.get('PKY2', '?')}: PKY2 must not be 0")
        self.c = c
        nom = t.number("NOMPRES", 0.0)
        p = pressure_pa if pressure_pa is not None else t.number("INFLPRES", nom)
        self.pressure = p
        self.dpi = (p - nom) / nom if (nom > 0 and not self.v52) else 0.0
        self.p_ratio = p / nom if (nom > 0 and not self.v52) else 1.0
        self.clip = clip_inputs
        lim = {k: t.get(k) for k in ("KPUMIN", "KPUMAX", "ALPMIN", "ALPMAX", "CAMMIN",
                                     "CAMMAX", "FZMAX")}
        self.kappa_range = (lim["KPUMIN"] if lim["KPUMIN"] is not None else -np.inf,
                            lim["KPUMAX"] if lim["KPUMAX"] is not None else np.inf)
        amax = np.pi / 2 - 1e-6  # tan(alpha) stays finite and keeps its sign
        self.alpha_range = (max(lim["ALPMIN"] if lim["ALPMIN"] is not None else -amax, -amax),
                            min(lim["ALPMAX"] if lim["ALPMAX"] is not None else amax, amax))
        self.camber_range = (lim["CAMMIN"] if lim["CAMMIN"] is not None else -np.inf,
                             lim["CAMMAX"] if lim["CAMMAX"] is not None else np.inf)
        self.fz_max = lim["FZMAX"] if lim["FZMAX"] is not None else np.inf
        self.v_low = c.VXLOW
        self.radius = c.UNLOADED_RADIUS
        if "RBX1" not in t or "RBY1" not in t:
            warnings.warn(TirWarning(f"{t.name}: no combined-slip coefficients (RBX1/RBY1): "
                                     "Fx and Fy are not reduced under combined slip"),
                          stacklevel=2)

    def __repr__(self) -> str:
        return f"<MagicFormula {self.version} '{self.tir.name}'>"

    # ----------------------------------------------------------- helpers
    def _common(self, o: Any, fz: Any, gamma: Any, mu_scale: float) -> tuple:
        c = self.c
        fz0p = c.FNOMIN * c.LFZO
        dfz = (fz - fz0p) / fz0p
        if self.v52:
            gx, gy, gz = gamma * c.LGAX, gamma * c.LGAY, gamma * c.LGAZ
        else:
            gx = gy = gz = o.sin(gamma)
        lmux, lmuy = c.LMUX * mu_scale, c.LMUY * mu_scale
        if self.v52:
            lmux_p, lmuy_p = lmux, lmuy
        else:
            lmux_p = _A_MU * lmux / (1.0 + (_A_MU - 1.0) * lmux)
            lmuy_p = _A_MU * lmuy / (1.0 + (_A_MU - 1.0) * lmuy)
        return fz0p, dfz, gx, gy, gz, lmux, lmuy, lmux_p, lmuy_p

    def _lateral(self, o: Any, a: Any, g: Any, fz: Any, dfz: Any, lmuy: Any, lmuy_p: Any,
                 w: Any) -> tuple:
        """Pure lateral force; ``a = tan(alpha)``, ``g`` the (scaled/sin) camber."""
        c, dpi, fz0p = self.c, self.dpi, self.c.FNOMIN * self.c.LFZO
        if self.v52:
            kya = (c.PKY1 * fz0p * o.sin(2.0 * o.atan(fz / (c.PKY2 * fz0p)))
                   * (1.0 - c.PKY3 * o.abs(g)) * c.LKY)
            shy = ((c.PHY1 + c.PHY2 * dfz) * c.LHY + c.PHY3 * g) * w
            svy = fz * ((c.PVY1 + c.PVY2 * dfz) * c.LVY + (c.PVY3 + c.PVY4 * dfz) * g) \
                * lmuy * w
            muy = (c.PDY1 + c.PDY2 * dfz) * (1.0 - c.PDY3 * g * g) * lmuy
        else:
            kya = (c.PKY1 * fz0p * (1.0 + c.PPY1 * dpi) * (1.0 - c.PKY3 * o.abs(g))
                   * o.sin(c.PKY4 * o.atan(fz / fz0p / o.safe((c.PKY2 + c.PKY5 * g * g)
                                                               * (1.0 + c.PPY2 * dpi))))
                   * c.LKY)
            svyg = fz * (c.PVY3 + c.PVY4 * dfz) * g * c.LKYC * lmuy_p
            kyg0 = fz * (c.PKY6 + c.PKY7 * dfz) * (1.0 + c.PPY5 * dpi) * c.LKYC
            shy = ((c.PHY1 + c.PHY2 * dfz) * c.LHY + (kyg0 * g - svyg) / o.safe(kya)) * w
            svy = (fz * (c.PVY1 + c.PVY2 * dfz) * c.LVY * lmuy_p + svyg) * w
            muy = ((c.PDY1 + c.PDY2 * dfz) * (1.0 + c.PPY3 * dpi + c.PPY4 * dpi * dpi)
                   * (1.0 - c.PDY3 * g * g) * lmuy)
        ay = a + shy
        cy = c.PCY1 * c.LCY
        dy = muy * fz
        if self.v52:
            ey = (c.PEY1 + c.PEY2 * dfz) * (1.0 - (c.PEY3 + c.PEY4 * g) * o.sgn(ay)) * c.LEY
        else:
            ey = ((c.PEY1 + c.PEY2 * dfz) * (1.0 + c.PEY5 * g * g - (c.PEY3 + c.PEY4 * g)
                                              * o.sgn(ay)) * c.LEY)
        ey = o.min1(ey)
        by = kya / o.safe(cy * dy)
        bya = by * ay
        fy0 = dy * o.sin(cy * o.atan(bya - ey * (bya - o.atan(bya)))) + svy
        return fy0, muy, kya, by, cy, shy, svy

    # --------------------------------------------------------- evaluation
    def evaluate(self, kappa: Any, alpha: Any, gamma: Any, fz: Any, vx: Any = None,
                 mu_scale: float = 1.0) -> MFResult:
        """All forces and moments at slip ratio ``kappa``, slip angle ``alpha`` [rad],
        camber ``gamma`` [rad] and load ``fz`` [N] (broadcast arrays or floats).

        ``vx`` [m/s] switches on the low-speed reduction and sets the sign and speed
        terms of ``My`` (default: rolling forward at ``LONGVL``).  ``mu_scale``
        multiplies ``LMUX`` and ``LMUY`` (road friction).
        """
        c = self.c
        if vx is None:
            o, (kappa, alpha, gamma, fz) = _ops(kappa, alpha, gamma, fz)
            vxv, w = c.LONGVL, 1.0
        else:
            o, (kappa, alpha, gamma, fz, vxv) = _ops(kappa, alpha, gamma, fz, vx)
            av = o.abs(vxv)
            if o is _Scalar:
                w = 1.0 if av >= self.v_low else 0.5 * (1.0 - math.cos(math.pi * av / self.v_low))
            else:
                w = np.where(av >= self.v_low, 1.0,
                             0.5 * (1.0 - np.cos(np.pi * np.minimum(av / self.v_low, 1.0))))
        if self.clip:
            kappa = o.clip(kappa, *self.kappa_range)
            alpha = o.clip(alpha, *self.alpha_range)
            gamma = o.clip(gamma, *self.camber_range)
            fz = o.clip(fz, 0.0, self.fz_max)
        on = o.pos(fz)  # Fz <= 0: the wheel is off the ground
        fz = fz * on
        fz0p, dfz, gx, gy, gz, lmux, lmuy, lmux_p, lmuy_p = self._common(o, fz, gamma, mu_scale)
        dpi, r0, fz0 = self.dpi, c.UNLOADED_RADIUS, c.FNOMIN
        a = o.tan(alpha)

        # ---- pure longitudinal (4.E9-4.E18)
        shx = (c.PHX1 + c.PHX2 * dfz) * c.LHX * w
        svx = fz * (c.PVX1 + c.PVX2 * dfz) * c.LVX * lmux_p * w
        kx = kappa + shx
        cx = c.PCX1 * c.LCX
        mux = ((c.PDX1 + c.PDX2 * dfz) * (1.0 + c.PPX3 * dpi + c.PPX4 * dpi * dpi)
               * (1.0 - c.PDX3 * gx * gx) * lmux)
        dx = mux * fz
        ex = o.min1((c.PEX1 + c.PEX2 * dfz + c.PEX3 * dfz * dfz)
                    * (1.0 - c.PEX4 * o.sgn(kx)) * c.LEX)
        kxk = (fz * (c.PKX1 + c.PKX2 * dfz) * o.exp(c.PKX3 * dfz)
               * (1.0 + c.PPX1 * dpi + c.PPX2 * dpi * dpi) * c.LKX)
        bx = kxk / o.safe(cx * dx)
        bxk = bx * kx
        fx0 = dx * o.sin(cx * o.atan(bxk - ex * (bxk - o.atan(bxk)))) + svx

        # ---- pure lateral (4.E19-4.E30)
        fy0, muy, kya, by, cy, shy, svy = self._lateral(o, a, gy, fz, dfz, lmuy, lmuy_p, w)

        # ---- combined slip (4.E50-4.E67)
        bxa = (c.RBX1 + c.RBX3 * gx * gx) * o.cos(o.atan(c.RBX2 * kappa)) * c.LXAL
        exa = o.min1(c.REX1 + c.REX2 * dfz)
        u0, u = bxa * c.RHX1, bxa * (a + c.RHX1)
        gxa = (o.cos(c.RCX1 * o.atan(u - exa * (u - o.atan(u))))
               / o.cos(c.RCX1 * o.atan(u0 - exa * (u0 - o.atan(u0)))))
        fx = gxa * fx0
        dvyk = muy * fz * (c.RVY1 + c.RVY2 * dfz + c.RVY3 * gy) * o.cos(o.atan(c.RVY4 * a))
        svyk = dvyk * o.sin(c.RVY5 * o.atan(c.RVY6 * kappa)) * c.LVYKA * w
        shyk = c.RHY1 + c.RHY2 * dfz
        eyk = o.min1(c.REY1 + c.REY2 * dfz)
        byk = (c.RBY1 + c.RBY4 * gy * gy) * o.cos(o.atan(c.RBY2 * (a - c.RBY3))) * c.LYKA
        v0, v = byk * shyk, byk * (kappa + shyk)
        gyk = (o.cos(c.RCY1 * o.atan(v - eyk * (v - o.atan(v))))
               / o.cos(c.RCY1 * o.atan(v0 - eyk * (v0 - o.atan(v0)))))
        fy = gyk * fy0 + svyk

        # ---- aligning moment (4.E31-4.E49, 4.E71-4.E78)
        kya_p = o.safe(kya)
        at = a + c.QHZ1 + c.QHZ2 * dfz + (c.QHZ3 + c.QHZ4 * dfz) * gz
        ar = a + shy + svy / kya_p
        bt = ((c.QBZ1 + c.QBZ2 * dfz + c.QBZ3 * dfz * dfz)
              * (1.0 + c.QBZ4 * gz + c.QBZ5 * o.abs(gz) + c.QBZ6 * gz * gz) * c.LKY
              / o.safe(lmuy))
        ct = c.QCZ1
        dt = (fz * (c.QDZ1 + c.QDZ2 * dfz) * (1.0 - c.PPZ1 * dpi)
              * (1.0 + c.QDZ3 * gz + c.QDZ4 * gz * gz) * (r0 / fz0) * c.LTR * o.sgn(vxv))
        et = o.min1((c.QEZ1 + c.QEZ2 * dfz + c.QEZ3 * dfz * dfz)
                    * (1.0 + (c.QEZ4 + c.QEZ5 * gz) * (2.0 / math.pi) * o.atan(bt * ct * at)))
        cos_a = o.cos(alpha)
        br = c.QBZ9 * c.LKY / o.safe(lmuy) + c.QBZ10 * by * cy
        lkzc = 1.0 if self.v52 else c.LKZC
        dr = (fz * r0 * ((c.QDZ6 + c.QDZ7 * dfz) * c.LRES
                         + ((c.QDZ8 + c.QDZ9 * dfz) * (1.0 + c.PPZ2 * dpi)
                            + (c.QDZ10 + c.QDZ11 * dfz) * o.abs(gz)) * gz * lkzc)
              * lmuy * cos_a * w * o.sgn(vxv))

        def trail(x: Any) -> Any:
            btx = bt * x
            return dt * o.cos(ct * o.atan(btx - et * (btx - o.atan(btx)))) * cos_a * w

        r2 = (kxk / kya_p) ** 2 * kappa * kappa
        at_eq = o.sqrt(at * at + r2) * o.sgn(at)
        ar_eq = o.sqrt(ar * ar + r2) * o.sgn(ar)
        t0, t = trail(at), trail(at_eq)
        mzr0, mzr = dr * o.cos(o.atan(br * ar)), dr * o.cos(o.atan(br * ar_eq))
        s = r0 * (c.SSZ1 + c.SSZ2 * fy / fz0 + (c.SSZ3 + c.SSZ4 * dfz) * gz) * c.LS
        if self.v52:
            mz0 = -t0 * fy0 + mzr0
            mz = -t * (fy - svyk) + mzr + s * fx
        else:  # the trail acts on Fy at zero camber (4.E32, 4.E74)
            fy0_g0 = self._lateral(o, a, 0.0 * gy, fz, dfz, lmuy, lmuy_p, w)[0]
            mz0 = -t0 * fy0_g0 + mzr0
            mz = -t * gyk * fy0_g0 + mzr + s * fx

        # ---- overturning and rolling resistance moments (4.E69, 4.E70)
        g = gamma
        mx = r0 * fz * c.LMX * (
            c.QSX1 * c.LVMX - c.QSX2 * g * (1.0 + c.PPMX1 * dpi) + c.QSX3 * fy / fz0
            + c.QSX4 * o.cos(c.QSX5 * o.atan((c.QSX6 * fz / fz0) ** 2))
            * o.sin(c.QSX7 * g + c.QSX8 * o.atan(c.QSX9 * fy / fz0))
            + c.QSX10 * o.atan(c.QSX11 * fz / fz0) * g)
        vr = vxv / c.LONGVL
        poly = (c.QSY1 + c.QSY2 * fx / fz0 + c.QSY3 * o.abs(vr) + c.QSY4 * vr ** 4
                + (c.QSY5 + c.QSY6 * fz / fz0) * g * g)
        if self.v52:
            my = -o.sgn(vxv) * w * fz * r0 * poly * c.LMY
        else:
            my = (-o.sgn(vxv) * w * fz0 * r0 * poly * c.LMY * o.power(fz / fz0, c.QSY7)
                  * self.p_ratio ** c.QSY8)
        return MFResult(fx=fx, fy=fy, mx=mx * on, my=my * on, mz=mz, fx0=fx0, fy0=fy0,
                        mz0=mz0, gxa=gxa, gyk=gyk, svyk=svyk, kxk=kxk, kya=kya, mux=mux,
                        muy=muy, trail=t, mzr=mzr)

    # ------------------------------------------------ the tyre-model protocol
    def forces(self, kappa: Any, alpha: Any, gamma: Any, fz: Any, vx: Any = None,
               mu_scale: float = 1.0) -> tuple:
        """``(fx, fy, mx, my, mz)`` (the protocol of :class:`~.tyres.Tyre`)."""
        r = self.evaluate(kappa, alpha, gamma, fz, vx, mu_scale)
        return r.fx, r.fy, r.mx, r.my, r.mz

    def relaxation_lengths(self, fz: Any, gamma: Any = 0.0) -> tuple | None:
        r"""``(sigma_kappa, sigma_alpha)`` [m] at load ``fz``, or ``None`` if the file has
        neither relaxation coefficients nor structural stiffnesses.

        MF 5.2 / PAC2002 (``PTX*``, ``PTY*``):
        :math:`\sigma_\kappa = F_z(p_{Tx1} + p_{Tx2}df_z)e^{-p_{Tx3}df_z}(R_0/F_{z0})
        \lambda_{\sigma\kappa}`,
        :math:`\sigma_\alpha = p_{Ty1}\sin(2\arctan(F_z/(p_{Ty2}F'_{z0})))(1 - p_{Ky3}|\gamma|)
        R_0\lambda_{Fz0}\lambda_{\sigma\alpha}`.
        MF 6.x (``LONGITUDINAL_STIFFNESS``, ``LATERAL_STIFFNESS``):
        :math:`\sigma_\kappa = K_{x\kappa}/C_{Fx}`, :math:`\sigma_\alpha = |K_{y\alpha}|/C_{Fy}`
        with the load-dependent carcass stiffnesses (``PCFX*``, ``PCFY*``).
        """
        c, t = self.c, self.tir
        o, (fz, gamma) = _ops(fz, gamma)
        fz0p, dfz, gx, gy, *_ = self._common(o, fz, gamma, 1.0)
        if "PTX1" in t and "PTY1" in t:
            sk = fz * (c.PTX1 + c.PTX2 * dfz) * o.exp(-c.PTX3 * dfz) * (c.UNLOADED_RADIUS
                                                                         / c.FNOMIN) * c.LSGKP
            sa = (c.PTY1 * o.sin(2.0 * o.atan(fz / (o.safe(c.PTY2) * fz0p)))
                  * (1.0 - c.PKY3 * o.abs(gy)) * c.UNLOADED_RADIUS * c.LFZO * c.LSGAL)
            return sk, sa
        if c.LONGITUDINAL_STIFFNESS > 0 and c.LATERAL_STIFFNESS > 0:
            r = self.evaluate(0.0 * fz, 0.0 * fz, gamma, fz)
            dpi = self.dpi
            cfx = c.LONGITUDINAL_STIFFNESS * (1.0 + c.PCFX1 * dfz + c.PCFX2 * dfz * dfz) \
                * (1.0 + c.PCFX3 * dpi)
            cfy = c.LATERAL_STIFFNESS * (1.0 + c.PCFY1 * dfz + c.PCFY2 * dfz * dfz) \
                * (1.0 + c.PCFY3 * dpi)
            return o.abs(r.kxk) / cfx, o.abs(r.kya) / cfy
        return None

    def rolling_radius(self, fz: Any, omega: Any = 0.0) -> Any:
        r"""Effective rolling radius :math:`R_e` [m] (MF 5.2/6.1):
        :math:`R_\Omega = R_0(q_{re0} + q_{V1}(R_0\Omega/V_0)^2)`,
        :math:`R_e = R_\Omega - (F_{z0}/C_z)(D_{reff}\arctan(B_{reff}F_z/F_{z0}) +
        F_{reff}F_z/F_{z0})`; without ``VERTICAL_STIFFNESS`` or ``B/D/FREFF``,
        :math:`R_e = R_\Omega`."""
        c = self.c
        o, (fz, omega) = _ops(fz, omega)
        r_om = c.UNLOADED_RADIUS * (c.Q_RE0 + c.Q_V1 * (c.UNLOADED_RADIUS * omega
                                                         / c.LONGVL) ** 2)
        if c.VERTICAL_STIFFNESS > 0 and (c.BREFF or c.DREFF or c.FREFF):
            rho = o.clip(fz, 0.0, np.inf) / c.FNOMIN
            return r_om - (c.FNOMIN / c.VERTICAL_STIFFNESS) * (
                c.DREFF * o.atan(c.BREFF * rho) + c.FREFF * rho)
        return r_om

    # ------------------------------------------------------- conveniences
    def slip_stiffness(self, fz: Any) -> Any:
        """Longitudinal slip stiffness :math:`K_{x\\kappa} = dF_{x0}/d\\kappa` [N]."""
        return self.evaluate(0.0, 0.0, 0.0, fz).kxk

    def cornering_stiffness(self, fz: Any, gamma: Any = 0.0) -> Any:
        """Cornering stiffness :math:`K_{y\\alpha} = dF_{y0}/d\\alpha` [N/rad] (ISO: < 0)."""
        return self.evaluate(0.0, 0.0, gamma, fz).kya
