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
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from .archive import ArchiveLimits, check_binary, extract_fmu, platform_binary
from .description import FMUInfo, port_name, read_description
from .driver import DriverSpec
from .errors import FMUBinaryError, FMUConfigError, FMUError, FMUWarning

__all__ = ["FMU", "FMUInfo", "fmu_info", "load_fmu"]

INTERFACES = {"me": "ModelExchange", "modelexchange": "ModelExchange",
              "cs": "CoSimulation", "cosimulation": "CoSimulation",
              "se": "ScheduledExecution", "scheduledexecution": "ScheduledExecution"}


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
        self._checked: dict = {}   # interface -> BinaryFacts; (interface, "token") -> True

    @property
    def root(self) -> Path:
        return self.archive.root

    def interface(self, interface: str | None) -> str:
        """Resolve ``"auto"``/``"me"``/``"cs"``/``"se"`` to the interface to use, or a clear
        error; the binary for it is checked (without loading it) on first use."""
        info = self.info
        have = [i for i in ("ModelExchange", "CoSimulation", "ScheduledExecution")
                if i in info.interfaces]
        key = None
        if interface not in (None, "auto"):
            key = INTERFACES.get(str(interface).lower().replace("_", "").replace("-", ""))
            if key is None:
                raise FMUConfigError(f"interface must be 'auto', 'ModelExchange', "
                                     f"'CoSimulation' or 'ScheduledExecution', got "
                                     f"{interface!r}")
        if key is None:
            if not have:
                raise FMUConfigError(f"FMU '{self.path.name}' implements none of Model "
                                     "Exchange, Co-Simulation and Scheduled Execution")
            key = have[0]
        if key not in have:
            raise FMUConfigError(f"FMU '{self.path.name}' does not implement {key} (it has: "
                                 f"{', '.join(have) or 'none'})"
                                 + (f"; use interface='{have[0]}'" if have else ""))
        self.check_binary(key)
        return key

    def check_binary(self, interface: str) -> Any:
        """The binary for ``interface``: present, and (read, not loaded) a shared library
        of this platform exporting the FMI functions (:func:`fmus.archive.check_binary`)."""
        facts = self._checked.get(interface)
        if facts is None:
            info = self.info
            mid = info.interfaces[interface]["modelIdentifier"]
            lib = platform_binary(self.root, info.fmi_major, mid, self.path.name)
            facts = self._checked[interface] = check_binary(
                lib, info.fmi_major, interface, info.token, self.path.name)
        return facts

    def check_instance(self, interface: str, *, out_of_process: bool = False,
                       timeout_s: float | None = 10.0) -> None:
        """Check that the FMU accepts its instantiation token (see the module docstring):
        free when the token occurs in the binary, else one instantiation, freed at once."""
        if self._checked.get((interface, "token")):
            return
        facts = self.check_binary(interface)
        caps = self.info.interfaces[interface]
        if not facts.has_token and not (caps.get("canBeInstantiatedOnlyOncePerProcess")
                                        and not out_of_process):
            spec = self.spec(interface, "load_check")
            try:
                if out_of_process:
                    from .remote import RemoteDriver
                    drv: Any = RemoteDriver(spec, timeout_s=timeout_s)
                else:
                    from .driver import Driver
                    drv = Driver(spec)
                try:
                    drv.instantiate()
                finally:
                    drv.free()
            except FMUError as exc:
                raise FMUBinaryError(
                    f"{exc} [checked at load: the FMU was instantiated once to test its "
                    f"instantiation token {self.info.token!r}]") from None
        self._checked[(interface, "token")] = True

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
                          interface={"ModelExchange": "ME", "CoSimulation": "CS"}.get(
                              interface, "SE"),
                          model_identifier=mid, token=info.token,
                          instance_name=instance_name, label=self.path.name,
                          library=str(lib), logging_on=logging_on, early_return=early_return,
                          event_mode=event_mode, intermediate_vrs=list(intermediate_vrs or []),
                          n_states=n_states, n_indicators=n_ind)

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

    def __repr__(self) -> str:
        return (f"<FMU {self.path.name}: {self.info.model_name}, FMI {self.info.fmi_version}, "
                f"{'+'.join(self.info.interfaces)}>")


def as_fmu(fmu: FMU | str | os.PathLike, **kw: Any) -> FMU:
    """``fmu`` if it is an :class:`FMU`, else ``FMU(fmu, **kw)``."""
    return fmu if isinstance(fmu, FMU) else FMU(fmu, **kw)


def default_name(fmu: FMU) -> str:
    """A block/diagram name for ``fmu`` from any model name (``"Van der Pol oscillator"``
    -> ``"Van_der_Pol_oscillator"``; see :func:`fmus.description.port_name`)."""
    for text in (fmu.info.model_name, fmu.path.stem):
        name = port_name(text or "")
        if name != "v_":
            return name
    return "fmu"


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
    validate, limits, units, port_names
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
    fmu = as_fmu(path, validate=validate, limits=limits, units=units, port_names=port_names)
    itf = fmu.interface(interface)
    if itf == "ModelExchange":
        return fmu.block(name, check=check, **options)
    if itf == "ScheduledExecution":
        return fmu.scheduled(name, check=check, **options)
    return fmu.subsystem(name, check=check, **options)
