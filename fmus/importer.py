"""Importing FMUs: :func:`load_fmu`, :func:`fmu_info` and the :class:`FMU` handle.

>>> info = fmu_info("BouncingBall.fmu")            # doctest: +SKIP
>>> print(info)                                     # metadata and a ports table
>>> ball = load_fmu("BouncingBall.fmu")             # ME FMU: a Block for a diagram
>>> lag = load_fmu("Lag.fmu", interface="CoSimulation", name="lag")   # a master Subsystem

An :class:`FMU` extracts the archive once (safely, :mod:`fmus.archive`), reads
and checks the model description (:mod:`fmus.description`) and makes any
number of blocks and subsystems from it; each owns one FMU instance, reused
with ``reset`` from run to run.  fmpy is imported only when an instance is
created (``import fmus`` does not import it).

Interface choice (``interface="auto"``): an FMU with only one of Model Exchange
and Co-Simulation gives that one; with both, Model Exchange (a
:class:`~fmus.fmu_block.FMUBlock` integrated by cosim's solvers, events located
by cosim) unless ``interface="CoSimulation"``.  An FMI 3 FMU offering only Scheduled
Execution, or asked for with ``interface="ScheduledExecution"`` (``"se"``), gives a
:class:`~fmus.scheduled.FMUScheduledBlock` (each model partition runs at its clock's
ticks).

What is checked when (so that a broken FMU fails at load, not at the first step):

* ``FMU(path)``: the archive and the model description (:mod:`fmus.archive`,
  :mod:`fmus.description`); an FMU without a binary for this platform can still
  be read (``fmu_info``).
* choosing an interface (:meth:`FMU.interface`, which ``FMUBlock`` and
  ``FMUSubsystem`` call): the binary for this platform, read but not loaded
  (:func:`fmus.archive.check_binary`: an ELF shared library of this architecture
  exporting every FMI function).
* :func:`load_fmu`, :meth:`FMU.block`, :meth:`FMU.subsystem` (``check=True``): the
  instantiation token.  When the token occurs in the binary it matches and nothing
  runs; otherwise (e.g. pythonfmu FMUs, whose binary is generic) the FMU is
  instantiated and freed once, the only way to learn whether it accepts the
  token; in a child process with ``out_of_process=True`` (about 0.3-1 s more);
  skipped for ``canBeInstantiatedOnlyOncePerProcess`` FMUs in process.  An
  ``FMUBlock``/``FMUSubsystem`` made directly skips this check (a wrong token then
  shows at the first instantiation).
"""

from __future__ import annotations

import os
from typing import Any

from .archive import ArchiveLimits
from .description import FMUInfo
from .fmu_file import INTERFACES, FMUFile, as_fmu, default_name

__all__ = ["FMU", "FMUInfo", "as_fmu", "default_name", "fmu_info", "load_fmu",
           "INTERFACES"]


class FMU(FMUFile):
    """An FMU file, extracted and checked once (:class:`~fmus.fmu_file.FMUFile`), that makes
    blocks and subsystems of itself.

    Parameters
    ----------
    path, validate, limits, units, port_names
        As for :class:`~fmus.fmu_file.FMUFile`.
    """

    def block(self, name: str | None = None, *, check: bool = True, **options: Any) -> Any:
        """A Model Exchange :class:`~fmus.fmu_block.FMUBlock` (see its options);
        ``check``: :meth:`check_instance` first."""
        from .fmu_block import FMUBlock
        return FMUBlock(self, name, check=check, **options)

    def subsystem(self, name: str | None = None, *, check: bool = True,
                  **options: Any) -> Any:
        """A Co-Simulation :class:`~fmus.subsystem.FMUSubsystem` (see its options);
        ``check``: :meth:`check_instance` first."""
        from .subsystem import FMUSubsystem
        return FMUSubsystem(self, name, check=check, **options)

    def scheduled(self, name: str | None = None, *, check: bool = True,
                  **options: Any) -> Any:
        """An FMI 3 Scheduled Execution :class:`~fmus.scheduled.FMUScheduledBlock` (see its
        options); ``check``: :meth:`check_instance` first."""
        from .scheduled import FMUScheduledBlock
        return FMUScheduledBlock(self, name, check=check, **options)


    def subsystem_hint(self) -> str:
        """What a :class:`~cosim.master.MasterScheduler` takes instead of this file."""
        if "CoSimulation" in self.info.interfaces:
            return ("an FMU file is not a subsystem; give the master "
                    "fmu.subsystem() (its Co-Simulation interface)")
        return ("an FMU file is not a subsystem, and this one offers no Co-Simulation "
                "interface; give the master DiagramSubsystem(fmu.block(), solver=..., dt=...)")


def fmu_info(path: str | os.PathLike, **kw: Any) -> FMUInfo:
    """The checked model description of an FMU (``print()`` it for the metadata and ports)."""
    return FMU(path, **kw).info


def load_fmu(path: FMU | str | os.PathLike, name: str | None = None, *,
             interface: str = "auto", validate: str = "warn",
             limits: ArchiveLimits | None = None, units: dict | None = None,
             port_names: dict | None = None, check: bool = True, **options: Any) -> Any:
    """Import an FMU as a block (Model Exchange, Scheduled Execution) or a co-simulation
    subsystem.

    Parameters
    ----------
    path : path-like or FMU
    name : str, optional
        Block/subsystem name (default: the model name).
    interface : ``"auto"``, ``"ModelExchange"`` (``"me"``), ``"CoSimulation"`` (``"cs"``)
        or ``"ScheduledExecution"`` (``"se"``)
    validate : ``"warn"`` | ``"strict"`` | ``"none"``
        Model description rules (:func:`fmus.description.read_description`): ``"warn"``
        loads what FMPy loads, deriving what is left out, with one warning; ``"strict"``
        refuses any broken rule; ``"none"`` does not check them (FMPy's
        ``validate=False``).
    limits, units, port_names
        See :class:`FMU`.
    check : bool
        Check the instantiation token now (:meth:`FMU.check_instance`; the binary is
        checked in any case).
    **options
        Passed to :class:`~fmus.fmu_block.FMUBlock`,
        :class:`~fmus.subsystem.FMUSubsystem` or :class:`~fmus.scheduled.FMUScheduledBlock`
        (``parameters``, ``out_of_process``, ``timeout_s``, ``call_log``, ...).

    Returns
    -------
    FMUBlock, FMUSubsystem or FMUScheduledBlock
    """
    fmu = path if isinstance(path, FMUFile) else FMU(path, validate=validate, limits=limits,
                                                     units=units, port_names=port_names)
    itf = fmu.interface(interface)
    if itf == "ModelExchange":
        from .fmu_block import FMUBlock
        return FMUBlock(fmu, name, check=check, **options)
    if itf == "ScheduledExecution":
        from .scheduled import FMUScheduledBlock
        return FMUScheduledBlock(fmu, name, check=check, **options)
    from .subsystem import FMUSubsystem
    return FMUSubsystem(fmu, name, check=check, **options)
