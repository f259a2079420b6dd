"""The block library: ``from blocks import PID, ZeroOrderHold, Table1D, ...``.

The modules depend on NumPy and cosim only (SciPy and python-control are
imported inside the functions that need them), so importing the library is
cheap.
"""

from .continuous import FilteredDerivative, Integrator
from .discrete import (
    DiscreteIntegrator,
    DiscreteStateSpace,
    DiscreteTransferFunction,
    RateTransition,
    UnitDelay,
    ZeroOrderHold,
    c2d,
)
from .lti import FirstOrderLag, StateSpace, TransferFunction
from .math import (
    Abs,
    DeadZone,
    Demux,
    Gain,
    MinMax,
    Mux,
    Product,
    RateLimiter,
    Relay,
    Saturation,
    Sum,
    Switch,
    UnitConversion,
)
from .pid import PID, DiscretePID
from .sinks import Terminator
from .sources import ClosedFormSource, Constant, Pulse, Ramp, Sine, Step, TimeSource
from .tables import FromArrays, FromFile, Table1D, Table2D

__all__ = [
    "Abs", "ClosedFormSource", "Constant", "DeadZone", "Demux", "DiscreteIntegrator",
    "DiscretePID", "DiscreteStateSpace", "DiscreteTransferFunction", "FilteredDerivative",
    "FirstOrderLag", "FromArrays", "FromFile", "Gain", "Integrator", "MinMax", "Mux", "PID",
    "Product", "Pulse", "Ramp", "RateLimiter", "RateTransition", "Relay", "Saturation", "Sine",
    "StateSpace", "Step", "Sum", "Switch", "Table1D", "Table2D", "Terminator", "TimeSource",
    "TransferFunction", "UnitConversion", "UnitDelay", "ZeroOrderHold", "c2d",
]
