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
by cosim) unless ``interface="CoSimulation"``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from .archive import ArchiveLimits, extract_fmu, platform_binary
from .description import FMUInfo, read_description
from .driver import DriverSpec
from .errors import FMUConfigError, FMUWarning

__all__ = ["FMU", "FMUInfo", "fmu_info", "load_fmu"]

INTERFACES = {"me": "ModelExchange", "modelexchange": "ModelExchange",
              "cs": "CoSimulation", "cosimulation": "CoSimulation"}


class FMU:
    """An FMU file, extracted and checked once; makes blocks and subsystems.

    Parameters
    ----------
    path : path-like
        The ``.fmu`` file (or an extracted FMU directory).
    validate : ``"warn"`` | ``"strict"``
        See :func:`fmus.description.read_description`.
    limits : ArchiveLimits, optional
        Extraction limits (:mod:`fmus.archive`).
    units : dict, optional
        ``{variable: cosim unit}`` overriding the mapped units.
    port_names : dict, optional
        ``{variable: port name}`` overriding the generated names.
    """

    def __init__(self, path: str | os.PathLike, *, validate: str = "warn",
                 limits: ArchiveLimits | None = None, units: dict | None = None,
                 port_names: dict | None = None) -> None:
        self.path = Path(path)
        self.archive = extract_fmu(self.path, limits=limits)
        self.info: FMUInfo = read_description(self.archive.root, self.path.name, validate,
                                              units, port_names)
        self.info.path = self.path
        warn = [p for p in self.info.problems if p.severity == "warning"]
        if warn:
            warnings.warn(f"FMU '{self.path.name}': modelDescription.xml breaks "
                          f"{len(warn)} rule(s) the import works around:\n  "
                          + "\n  ".join(str(p) for p in warn[:10]), FMUWarning, stacklevel=3)
        for note in self.info.notes:
            warnings.warn(f"FMU '{self.path.name}': {note}", FMUWarning, stacklevel=3)
        self._copies: list = []

    @property
    def root(self) -> Path:
        return self.archive.root

    def interface(self, interface: str | None) -> str:
        """Resolve ``"auto"``/``"me"``/``"cs"`` to the interface to use, or a clear error."""
        have = [i for i in ("ModelExchange", "CoSimulation") if i in self.info.interfaces]
        if interface in (None, "auto"):
            if not have:
                raise FMUConfigError(f"FMU '{self.path.name}' implements neither Model "
                                     "Exchange nor Co-Simulation")
            return have[0]
        key = INTERFACES.get(str(interface).lower().replace("_", "").replace("-", ""))
        if key is None:
            raise FMUConfigError(f"interface must be 'auto', 'ModelExchange' or "
                                 f"'CoSimulation', got {interface!r}")
        if key not in have:
            raise FMUConfigError(f"FMU '{self.path.name}' does not implement {key} (it has: "
                                 f"{', '.join(have) or 'none'})")
        return key

    def spec(self, interface: str, instance_name: str, *, logging_on: bool = False,
             early_return: bool = False, event_mode: bool = False,
             intermediate_vrs: list | None = None, private_copy: bool = False) -> DriverSpec:
        """A :class:`~fmus.driver.DriverSpec` for one instance (checks the binary)."""
        info = self.info
        caps = info.interfaces[interface]
        mid = caps["modelIdentifier"]
        root = self.root
        if private_copy:
            # a second instance of an FMU that can be instantiated only once per process:
            # a copy of the extracted FMU loads as a separate library
            tmp = Path(tempfile.mkdtemp(prefix=f"cosim_fmu_copy_{mid[:30]}_"))
            shutil.copytree(root, tmp, dirs_exist_ok=True)
            import weakref
            self._copies.append(weakref.finalize(self, shutil.rmtree, str(tmp), True))
            root = tmp
        lib = platform_binary(root, info.fmi_major, mid, self.path.name)
        n_ind = info.n_event_indicators if interface == "ModelExchange" else 0
        n_states = sum(v.size for v in info.states) if interface == "ModelExchange" else 0
        return DriverSpec(root=str(root), fmi_major=info.fmi_major,
                          interface="ME" if interface == "ModelExchange" else "CS",
                          model_identifier=mid, token=info.token,
                          instance_name=instance_name, label=self.path.name,
                          library=str(lib), logging_on=logging_on, early_return=early_return,
                          event_mode=event_mode, intermediate_vrs=list(intermediate_vrs or []),
                          n_states=n_states, n_indicators=n_ind)

    def block(self, name: str | None = None, **options: Any) -> Any:
        """A Model Exchange :class:`~fmus.fmu_block.FMUBlock` (see its options)."""
        from .fmu_block import FMUBlock
        return FMUBlock(self, name, **options)

    def subsystem(self, name: str | None = None, **options: Any) -> Any:
        """A Co-Simulation :class:`~fmus.subsystem.FMUSubsystem` (see its options)."""
        from .subsystem import FMUSubsystem
        return FMUSubsystem(self, name, **options)

    def __repr__(self) -> str:
        return (f"<FMU {self.path.name}: {self.info.model_name}, FMI {self.info.fmi_version}, "
                f"{'+'.join(self.info.interfaces)}>")


def as_fmu(fmu: FMU | str | os.PathLike, **kw: Any) -> FMU:
    """``fmu`` if it is an :class:`FMU`, else ``FMU(fmu, **kw)``."""
    return fmu if isinstance(fmu, FMU) else FMU(fmu, **kw)


def default_name(fmu: FMU) -> str:
    from .description import port_name
    return port_name(fmu.info.model_name or fmu.path.stem)


def fmu_info(path: str | os.PathLike, **kw: Any) -> FMUInfo:
    """The checked model description of an FMU (``print()`` it for the metadata and ports)."""
    return FMU(path, **kw).info


def load_fmu(path: FMU | str | os.PathLike, name: str | None = None, *,
             interface: str = "auto", validate: str = "warn",
             limits: ArchiveLimits | None = None, units: dict | None = None,
             port_names: dict | None = None, **options: Any) -> Any:
    """Import an FMU as a block (Model Exchange) or a co-simulation subsystem.

    Parameters
    ----------
    path : path-like or FMU
    name : str, optional
        Block/subsystem name (default: the model name).
    interface : ``"auto"``, ``"ModelExchange"`` (``"me"``) or ``"CoSimulation"`` (``"cs"``)
    validate, limits, units, port_names
        See :class:`FMU`.
    **options
        Passed to :class:`~fmus.fmu_block.FMUBlock` or
        :class:`~fmus.subsystem.FMUSubsystem` (``parameters``, ``out_of_process``,
        ``timeout_s``, ``call_log``, ...).

    Returns
    -------
    FMUBlock or FMUSubsystem
    """
    fmu = as_fmu(path, validate=validate, limits=limits, units=units, port_names=port_names)
    itf = fmu.interface(interface)
    if itf == "ModelExchange":
        return fmu.block(name, **options)
    return fmu.subsystem(name, **options)
