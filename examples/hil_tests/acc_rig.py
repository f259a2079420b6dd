"""The ACC rig's model factories (named by the rig files in ``rigs/``).

:func:`plant` is the plant of ``examples/acc_hil.py`` (car, traffic with a cut-in, radar;
the controller across the bus) on the rig's bus; :func:`controller` is the ECU's diagram of
``examples/acc_ecu.py`` (rx -> ACC controller -> tx, with its diagnostics monitor),
stepped in lock-step by a virtual rig, and :func:`uds_server` and :func:`xcp_slave` are
its services there (``[controller] services``): the UDS server (a thread on the rig's
bus) and the XCP slave (its writes applied before a controller frame, its DAQ event
after it), as the ECU process serves them on a real-time rig (``acc_ecu.py --xcp``).
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


def controller(io: Any, time_gap_s: float | None = None, diagnostics: bool = True) -> Any:
    """The ACC ECU's diagram on the rig's bus ``can`` (``time_gap_s``: its calibration;
    ``diagnostics``: the fault memory's monitor, block ``diag``)."""
    settings = ACCSettings() if time_gap_s is None else ACCSettings(time_gap_s=time_gap_s)
    return ecu_diagram(io.bus("can"), io.db("can"), settings, io.period_s,
                       diagnostics=diagnostics)


#: the A2L file the ECU writes in the rig's work folder (both rigs: [xcp] args.a2l)
A2L_NAME = "acc_ecu.a2l"


def uds_server(ecu: Any) -> Any:
    """The ECU's UDS server (:func:`hil.diag.acc.serve`) on the rig's bus, in a thread."""
    from hil.diag.acc import serve
    return serve(ecu.diagram.blocks["diag"], ecu.interface, ecu.channel)


class _XcpService:
    """The ECU's XCP slave in lock-step: writes before a frame, the DAQ event after."""

    def __init__(self, ecu: Any) -> None:
        import os

        import can

        from hil.xcp import acc_ecu_xcp
        self.bus = can.Bus(interface=ecu.interface, channel=ecu.channel)
        self.xcp = acc_ecu_xcp(ecu.sim, ecu.period_s, bus=self.bus,
                               a2l=os.path.join(ecu.work_dir, A2L_NAME))
        self.before_frame = self.xcp.before_frame
        self.after_frame = self.xcp.after_frame

    def close(self) -> None:
        self.xcp.close()
        self.bus.shutdown()


def xcp_slave(ecu: Any) -> Any:
    """The ECU's XCP slave (:func:`hil.xcp.acc_ecu_xcp`) on the rig's bus, its A2L in the
    rig's work folder."""
    return _XcpService(ecu)
