"""Ocean engineering blocks: linear waves, spectra, Morison loads and moorings.

Modules: :mod:`.waves` (Airy dispersion and kinematics, regular waves, irregular seas from a
spectrum, the :class:`WaveField` source block), :mod:`.spectra` (Pierson-Moskowitz and
JONSWAP after DNV-RP-C205 3.5.5, spectral moments), :mod:`.morison` (Morison force per unit
length, strip integration along a member, the :class:`MorisonMember` block),
:mod:`.mooring` (elastic catenary with seabed contact and friction, mooring systems and
their stiffness, the seed's polynomial mooring; :class:`CatenaryMooring`,
:class:`PolynomialMooring`), :mod:`.crane_vessel` (the seed's moored crane vessel in
surge with a pendulum load, for the subharmonic study with :mod:`cosim.periodic`),
:mod:`.vessel` (a 6-DOF rigid vessel with constant added mass, damping and linear
restoring), :mod:`.wave_loads` (first-order wave forces from RAOs, the seed's slow drift).
Coordinates: z up from the still water level.
"""

from .crane_vessel import (
    CraneVessel,
    froude_krylov_surge_force_per_amplitude,
    linearized_frequencies,
    mooring_equilibrium,
)
from .mooring import (
    CatenaryError,
    CatenaryMooring,
    CatenarySolution,
    MooringLine,
    MooringSystem,
    PolynomialMooring,
    catenary,
    moorpy_catenary,
    polynomial_mooring_force,
)
from .morison import (
    MorisonMember,
    MorisonMemberModel,
    keulegan_carpenter,
    morison_force,
    pile_inertia_base_shear,
)
from .spectra import (
    JONSWAP,
    PiersonMoskowitz,
    dnv_gamma,
    jonswap,
    pierson_moskowitz,
    spectral_moment,
)
from .vessel import Vessel6DOF, VesselData
from .wave_loads import DriftCoefficients, ForceRAO, WaveLoadModel, WaveLoads, hilbert_envelope
from .waves import (
    IrregularSea,
    LinearWaves,
    RegularWave,
    WaveField,
    WaveKinematics,
    celerity,
    wave_number,
    wavelength,
)

__all__ = [
    "JONSWAP", "CatenaryError", "CatenaryMooring", "CatenarySolution", "IrregularSea",
    "LinearWaves", "MooringLine", "MooringSystem", "MorisonMember", "MorisonMemberModel",
    "PiersonMoskowitz", "PolynomialMooring", "RegularWave", "WaveField", "WaveKinematics",
    "catenary", "celerity", "dnv_gamma", "jonswap", "keulegan_carpenter", "moorpy_catenary",
    "morison_force", "pierson_moskowitz", "pile_inertia_base_shear", "polynomial_mooring_force",
    "spectral_moment", "wave_number", "wavelength", "CraneVessel",
    "froude_krylov_surge_force_per_amplitude", "linearized_frequencies", "mooring_equilibrium",
    "Vessel6DOF", "VesselData", "DriftCoefficients", "ForceRAO", "WaveLoadModel", "WaveLoads",
    "hilbert_envelope",
]
