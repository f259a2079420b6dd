"""The ACC rig's model factories (named by the rig files in ``rigs/``).

:func:`plant` is the plant of ``examples/acc_hil.py`` (car, traffic with a cut-in, radar;
the controller across the bus) on the rig's bus; :func:`controller` is the ECU's diagram of
``examples/acc_ecu.py`` (rx -> ACC controller -> tx), stepped in lock-step by a virtual rig.
A real-time rig runs ``examples/acc_ecu.py`` as its own process instead.
"""

from __future__ import annotations

from typing import Any

from blocks.controllers import ACCSettings
from examples.acc_ecu import ecu_diagram
from examples.acc_hil import T_END, plant_diagram, scenario


def plant(io: Any, cut_in_s: float = 10.0, t_end: float = T_END, on_range: str = "clamp"
          ) -> Any:
    """The plant on the rig's bus ``can``; the cut-in at ``cut_in_s`` (``1e9``: none);
    ``on_range``: what the command's receiver does with a value outside the DBC's range
    (:class:`hil.bridges.CanReceive`: clamp, reject, accept)."""
    d = plant_diagram(io.bus("can"), io.db("can"), scenario(cut_in_s, t_end))
    d.find("rx_cmd").on_range = on_range
    return d


def controller(io: Any, time_gap_s: float | None = None) -> Any:
    """The ACC ECU's diagram on the rig's bus ``can`` (``time_gap_s``: its calibration)."""
    settings = ACCSettings() if time_gap_s is None else ACCSettings(time_gap_s=time_gap_s)
    return ecu_diagram(io.bus("can"), io.db("can"), settings, io.period_s)
