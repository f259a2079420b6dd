"""cosim: block-diagram co-simulation and hardware-in-the-loop testing.

Public API (re-exports only)::

    from cosim import Block, FunctionBlock, DiagramBuilder, Simulator, simulate
"""

from .block import ALL, Block
from .context import Context
from .coupling import Coupling, GaussSeidel, Iterative, Jacobi
from .diagram import Diagram, DiagramBuilder
from .errors import (
    AlgebraicLoopError,
    BuildError,
    ConnectError,
    ContextError,
    CosimError,
    CosimWarning,
    LoopConvergenceError,
    NonFiniteError,
    OutputError,
    ParameterError,
    PortError,
    RateError,
    SolverError,
    StepError,
    UnitError,
)
from .function_block import FunctionBlock
from .linear import LinearModel
from .loops import LoopOptions
from .manipulators import Manipulator, Noise, Offset, Override, Scale, Scenario, StuckAt
from .master import MasterScheduler
from .observers import Observer, Recorder, Results
from .simulator import Simulator, simulate
from .step_control import StepController
from .subsystem import DiagramSubsystem, Subsystem
from .time import TICKS_PER_SECOND, to_seconds, to_ticks

__version__ = "0.1.0"

__all__ = [
    "ALL", "Block", "Coupling", "DiagramSubsystem", "GaussSeidel", "Iterative", "Jacobi",
    "MasterScheduler", "StepController",
    "Subsystem", "Context", "Diagram", "DiagramBuilder", "FunctionBlock", "LinearModel",
    "LoopOptions", "Manipulator", "Noise", "Observer", "Offset", "Override", "Recorder",
    "Results", "Scale", "Scenario", "Simulator", "StuckAt", "TICKS_PER_SECOND", "simulate",
    "to_seconds", "to_ticks", "AlgebraicLoopError", "BuildError", "ConnectError",
    "ContextError", "CosimError", "CosimWarning", "LoopConvergenceError", "NonFiniteError",
    "OutputError", "ParameterError", "PortError", "RateError", "SolverError", "StepError",
    "UnitError",
]
