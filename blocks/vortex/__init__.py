"""2-D discrete vortex method (DVM): vortex kernels, panel bodies, time stepping, block.

``from blocks.vortex import PanelBody, DiscreteVortexFlow, VortexFlow``

* :mod:`~blocks.vortex.kernels`: induced velocity of regularised point vortices
  (Krasny blob by default, Lamb–Oseen, Rankine, point), NumPy or Numba;
* :mod:`~blocks.vortex.panels`: a closed or open polygon of panels with bound vortices,
  no penetration, Kelvin's theorem, Kutta condition at shedding nodes, any body motion;
* :mod:`~blocks.vortex.flow`: shedding, Adams–Bashforth convection, removal, optional
  random walk or core spreading, force and moment from the vortex impulse;
* :mod:`~blocks.vortex.block`: :class:`VortexFlow`, the flow as a sampled block;
* :mod:`~blocks.vortex.spaghetti`: the spaghetti and reverse-spaghetti problems of
  Kobayashi et al. (a finite-segment beam through a gap, the seed's quasi-steady bound
  vortex force), :class:`SpaghettiBeam`.

Forces are per unit span (2-D).  See each module for equations and limitations.
"""

from .block import VortexFlow
from .flow import DiscreteVortexFlow, FlowState, strouhal
from .kernels import MODELS, induced_velocity, naive_self_induced, numba_available, self_induced
from .panels import BodyMotion, PanelBody, PanelSolution, rigid_motion
from .spaghetti import MATERIALS, SegmentedBeam, SpaghettiBeam, divergence_speed

__all__ = [
    "MATERIALS", "MODELS", "BodyMotion", "DiscreteVortexFlow", "FlowState", "PanelBody",
    "PanelSolution", "SegmentedBeam", "SpaghettiBeam", "VortexFlow", "divergence_speed",
    "induced_velocity", "naive_self_induced", "numba_available", "rigid_motion",
    "self_induced", "strouhal",
]
