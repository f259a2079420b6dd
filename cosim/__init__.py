"""cosim: block-diagram co-simulation and hardware-in-the-loop testing.

Public API (re-exports only)::

    from cosim import Block, FunctionBlock, DiagramBuilder, Simulator, simulate

The names are imported when first used (PEP 562), so that ``import cosim.errors`` or the
``cosim`` command's ``--help`` do not load numpy and scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the submodule that defines it
_LAZY = {
    "ALL": "block", "Block": "block", "Context": "context",
    "Coupling": "coupling", "GaussSeidel": "coupling", "Iterative": "coupling",
    "Jacobi": "coupling", "Diagram": "diagram", "DiagramBuilder": "diagram",
    "AlgebraicLoopError": "errors", "BuildError": "errors", "ConnectError": "errors",
    "ContextError": "errors", "CosimError": "errors", "CosimWarning": "errors",
    "LoopConvergenceError": "errors", "NonFiniteError": "errors", "OutputError": "errors",
    "ParameterError": "errors", "PortError": "errors", "RateError": "errors",
    "SolverError": "errors", "StepError": "errors", "UnitError": "errors",
    "FunctionBlock": "function_block", "LinearModel": "linear", "LoopOptions": "loops",
    "Manipulator": "manipulators", "Noise": "manipulators", "Offset": "manipulators",
    "Override": "manipulators", "Scale": "manipulators", "Scenario": "manipulators",
    "StuckAt": "manipulators", "MasterScheduler": "master", "Observer": "observers",
    "Recorder": "observers", "Results": "observers", "Simulator": "simulator",
    "simulate": "simulator", "StepController": "step_control",
    "DiagramSubsystem": "subsystem", "Subsystem": "subsystem",
    "TICKS_PER_SECOND": "time", "to_seconds": "time", "to_ticks": "time",
}

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


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'cosim' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # static analysers see the names as plain imports
    from .block import ALL, Block  # noqa: F401
    from .context import Context  # noqa: F401
    from .coupling import Coupling, GaussSeidel, Iterative, Jacobi  # noqa: F401
    from .diagram import Diagram, DiagramBuilder  # noqa: F401
    from .errors import (  # noqa: F401
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
    from .function_block import FunctionBlock  # noqa: F401
    from .linear import LinearModel  # noqa: F401
    from .loops import LoopOptions  # noqa: F401
    from .manipulators import (  # noqa: F401
        Manipulator,
        Noise,
        Offset,
        Override,
        Scale,
        Scenario,
        StuckAt,
    )
    from .master import MasterScheduler  # noqa: F401
    from .observers import Observer, Recorder, Results  # noqa: F401
    from .simulator import Simulator, simulate  # noqa: F401
    from .step_control import StepController  # noqa: F401
    from .subsystem import DiagramSubsystem, Subsystem  # noqa: F401
    from .time import TICKS_PER_SECOND, to_seconds, to_ticks  # noqa: F401
