"""Multibody dynamics: planar and spatial rigid bodies, joints, formulations, force elements.

``Mechanism`` builds the model (bodies, markers, joints, force elements, loads);
``MultibodyBlock`` makes it a block with typed ports.  See the module
docstrings of :mod:`.mechanism`, :mod:`.joints`, :mod:`.formulations`.
"""

from .block import MultibodyBlock
from .formulations import Formulation
from .joints import driver
from .mechanism import Mechanism

__all__ = ["Formulation", "Mechanism", "MultibodyBlock", "driver"]
