"""Sinks: blocks that end a signal.

:class:`Terminator` ends a signal nothing needs, so that a diagram can export an
input it does not use (a diagram's exported inputs must each drive a block
input): an interface kept for compatibility, an FMU input that a variant of the
model ignores.  It declares that it reads nothing (``discards_input``), so a
co-simulation master knows the input is unread (``DiagramSubsystem.unread_inputs``)
and iterative Newton coupling gives its source no Jacobian column; an FMU export
of the diagram declares no dependency on it.
"""

from __future__ import annotations

from typing import Any

from cosim.block import Block


class Terminator(Block):
    """A block input that nothing reads: :math:`\\emptyset \\leftarrow u`.

    Parameters
    ----------
    name : str
    shape : tuple, optional
        Shape of the signal it ends (default scalar).
    unit : str, optional
        Unit of the signal it ends (default: none, i.e. dimensionless).

    Ports
    -----
    in   u   shape ``shape`` [unit]; read by nothing, no outputs, no state
    """

    #: the input is accepted and discarded: no output, state or update depends on it
    discards_input = True

    def __init__(self, name: str, shape: Any = (), unit: str | None = None) -> None:
        super().__init__(name)
        self.u = self.declare_input("u", shape=shape, unit=unit)
