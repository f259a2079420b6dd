"""Multibody dynamics: planar and spatial rigid bodies, joints, formulations, force elements.

``Mechanism`` builds the model (bodies, markers, joints, force elements, loads; the layout of
``q`` and ``v`` per body is ``Mechanism.layout()``); ``MultibodyBlock`` makes it a block with
typed ports for any ODE solver of the engine; ``Index3Stepper`` advances it with the index-3
augmented Lagrangian with projections (the formulation for mechanisms that pass singular
positions); ``staggered_integrate`` is Chiou's staggered scheme outside a diagram;
``kinematics``, ``inverse_dynamics`` and ``linearize`` analyse it.  See the module
docstrings of :mod:`.mechanism`, :mod:`.joints`, :mod:`.formulations`, :mod:`.index3`.
"""

from .analysis import inverse_dynamics, kinematics, linearize
from .block import MultibodyBlock
from .formulations import Formulation
from .index3 import Index3Stepper
from .joints import driver
from .mechanism import Mechanism
from .staggered import staggered_integrate

__all__ = ["Formulation", "Index3Stepper", "Mechanism", "MultibodyBlock", "driver",
           "inverse_dynamics", "kinematics", "linearize", "staggered_integrate"]
