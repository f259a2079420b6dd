"""The one convention for units on the core blocks: ``unit`` is the unit of the block's
output, ``input_unit`` that of its input where it differs (``input_units`` for two).

Where the relation is known it is inferred: an :class:`~blocks.continuous.Integrator` in
``m`` takes ``m/s``, a derivative of ``m`` gives ``m/s``, a gain or a sum given one unit
has it on both sides.  The names used before (``output_unit``, ``unit_out``, ``unit_in``)
are refused with the new one.
"""

from __future__ import annotations

from cosim.errors import ParameterError
from cosim.units import per_second, times_second

RENAMED = {"output_unit": "unit", "unit_out": "unit", "unit_in": "input_unit",
           "unit_in0": "input_units", "unit_in1": "input_units"}


def refuse_renamed(kind: str, name: str, old: dict) -> None:
    """The extra keywords of a block (``**old``): a unit keyword of the old names is a
    clear error naming the new one; anything else is Python's usual TypeError."""
    for key, value in old.items():
        if key not in RENAMED:
            raise TypeError(f"{kind}() got an unexpected keyword argument {key!r}")
        new = RENAMED[key]
        raise ParameterError(
            f"{kind} '{name}': {key}= is now {new}= (the units of every block: unit= is "
            f"the output's, input_unit= the input's); did you mean {new}={value!r}?")


def same(unit: str | None, input_unit: str | None) -> tuple[str | None, str | None]:
    """``(unit, input_unit)`` of a block whose output has its input's unit (a gain given
    one unit, a limiter): the one given, on both sides."""
    return unit or input_unit, input_unit or unit


def integral(unit: str | None, input_unit: str | None) -> tuple[str | None, str | None]:
    """``(unit, input_unit)`` of an integrator: ``y`` in ``unit`` from ``u`` in
    ``unit``/s (whichever is given gives the other)."""
    if unit and not input_unit:
        return unit, per_second(unit)
    if input_unit and not unit:
        return times_second(input_unit), input_unit
    return unit, input_unit


def derivative(unit: str | None, input_unit: str | None) -> tuple[str | None, str | None]:
    """``(unit, input_unit)`` of a differentiator: ``y`` in ``input_unit``/s."""
    if input_unit and not unit:
        return per_second(input_unit), input_unit
    if unit and not input_unit:
        return unit, times_second(unit)
    return unit, input_unit
