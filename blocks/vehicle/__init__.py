"""Vehicle library.

Tyres (this issue's first part; vehicle dynamics and adaptive cruise control modules will
join this package):

* :mod:`.tir`: reader of ``.tir`` tyre property files (sections, units, version,
  unknown keys reported, missing coefficients named);
* :mod:`.magic_formula`: Pacejka Magic Formula 5.2 / 6.1 / 6.2 (pure and combined slip,
  aligning, overturning and rolling resistance moments, relaxation lengths), vectorised;
* :mod:`.brush`: brush (Fiala) and linear tyre models;
* :mod:`.tyres`: the :class:`Tyre` block (wheel-centre kinematics and normal load in,
  forces and moments out; steady or with relaxation lengths).

``SAMPLE_TIR`` is the bundled MF 5.2 (PAC2002) 185/80 R14 coefficient set.
"""

from .brush import BrushTyre, LinearTyre, low_speed_weight
from .magic_formula import SAMPLE_TIR, MagicFormula, MFResult, magic_formula
from .tir import KNOWN_KEYS, TirError, TirFile, TirWarning, parse_tir, read_tir
from .tyres import Tyre, regularized_speed

__all__ = [
    "KNOWN_KEYS", "SAMPLE_TIR", "BrushTyre", "LinearTyre", "MFResult", "MagicFormula",
    "TirError", "TirFile", "TirWarning", "Tyre", "low_speed_weight", "magic_formula",
    "parse_tir", "read_tir", "regularized_speed",
]
