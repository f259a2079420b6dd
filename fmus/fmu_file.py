"""The FMU file: extracted and checked once (:class:`FMUFile`), the layer every FMU block
and subsystem stands on.

An :class:`FMUFile` extracts the archive once (safely, :mod:`fmus.archive`), reads and
checks the model description (:mod:`fmus.description`), both kept for later processes in
the FMU cache (:mod:`fmus.fmu_cache`), resolves an interface and checks
its binary (:meth:`FMUFile.interface`), checks the instantiation token
(:meth:`FMUFile.check_instance`) and gives the driver specification of an instance
(:meth:`FMUFile.spec`).  What makes blocks and subsystems of it is one layer up
(:class:`fmus.importer.FMU`, :func:`fmus.importer.load_fmu`): the blocks import this
module, never the importer.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from . import fmu_cache
from .archive import ArchiveLimits, check_binary, platform_binary
from .description import FMUInfo, port_name
from .description_rules import grouped
from .driver import DriverSpec
from .errors import FMUBinaryError, FMUConfigError, FMUError, FMUWarning

__all__ = ["FMUFile", "INTERFACES", "as_fmu", "default_name"]

INTERFACES = {"me": "ModelExchange", "modelexchange": "ModelExchange",
              "cs": "CoSimulation", "cosimulation": "CoSimulation",
              "se": "ScheduledExecution", "scheduledexecution": "ScheduledExecution"}


class FMUFile:
    """An FMU file, extracted and checked once (module docstring).

    Parameters
    ----------
    path : path-like
        The ``.fmu`` file (or an extracted FMU directory).
    validate : ``"warn"`` | ``"strict"`` | ``"none"``
        See :func:`fmus.description.read_description` (``"none"``: skip the rules).
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
        self.archive = fmu_cache.extract(self.path, limits=limits)
        self.info: FMUInfo = fmu_cache.description(self.archive, self.path.name, validate,
                                                   units, port_names)
        self.info.path = self.path
        warn = [p for p in self.info.problems if p.severity == "warning"]
        if warn:  # once per FMU, one line per rule
            warnings.warn(f"FMU '{self.path.name}': modelDescription.xml breaks "
                          f"{len({p.rule for p in warn})} rule(s) the import works around:"
                          "\n  " + "\n  ".join(grouped(warn)), FMUWarning, stacklevel=3)
        skipped = [p for p in self.info.problems if p.severity == "skipped"]
        if skipped:
            warnings.warn(f"FMU '{self.path.name}': validate='none': modelDescription.xml "
                          f"breaks {len({p.rule for p in skipped})} rule(s) the import does "
                          "not check (results are yours to judge):\n  "
                          + "\n  ".join(grouped(skipped)), FMUWarning, stacklevel=3)
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
        if not facts.has_token and not (self.once_per_process(interface)
                                        and not out_of_process):
            # logging on: a failure then says why (pythonfmu logs nothing otherwise)
            spec = self.spec(interface, "load_check", logging_on=True)
            try:
                if out_of_process:
                    from .remote import RemoteDriver
                    drv: Any = RemoteDriver(spec, timeout_s=timeout_s)
                else:
                    from .driver import open_driver
                    drv = open_driver(spec)
                try:
                    drv.instantiate()
                finally:
                    drv.free()
            except FMUError as exc:
                raise FMUBinaryError(f"{exc} [checked at load: one trial "
                                     "instantiation]") from None
        self._checked[(interface, "token")] = True

    def once_per_process(self, interface: str) -> bool:
        """Whether only one instance of ``interface`` may live in a process: declared
        (``canBeInstantiatedOnlyOncePerProcess``), or known of the FMU's wrapper (pythonfmu
        0.x, FMI 2: a second instance fails, see :mod:`fmus.pyslave`, whatever FMUs
        exported before cosim declared it say)."""
        if self.info.interfaces[interface].get("canBeInstantiatedOnlyOncePerProcess"):
            return True
        return self.info.fmi_major == 2 and self.info.generation_tool.startswith("PythonFMU")

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

    def __repr__(self) -> str:
        return (f"<FMU {self.path.name}: {self.info.model_name}, FMI {self.info.fmi_version}, "
                f"{'+'.join(self.info.interfaces)}>")


def as_fmu(fmu: FMUFile | str | os.PathLike, **kw: Any) -> FMUFile:
    """``fmu`` if it is an :class:`FMUFile` (or an :class:`fmus.importer.FMU`), else
    ``FMUFile(fmu, **kw)``."""
    return fmu if isinstance(fmu, FMUFile) else FMUFile(fmu, **kw)


def default_name(fmu: FMUFile) -> str:
    """A block/diagram name for ``fmu`` from any model name (``"Van der Pol oscillator"``
    -> ``"Van_der_Pol_oscillator"``; see :func:`fmus.description.port_name`)."""
    for text in (fmu.info.model_name, fmu.path.stem):
        name = port_name(text or "")
        if name != "v_":
            return name
    return "fmu"
