"""FMI import and export (FMI 2 and 3, Co-Simulation and Model Exchange; FMI 3 Scheduled
Execution import).

fmpy (the ``fmi`` extra) is imported lazily: importing this package needs nothing
beyond the core.

Import with fmpy's low-level API: :func:`load_fmu` (a Model Exchange FMU as a
:class:`FMUBlock`, a Co-Simulation FMU as a master :class:`FMUSubsystem`, an FMI 3
Scheduled Execution FMU as a :class:`FMUScheduledBlock` running each model partition at
its clock's ticks),
:func:`fmu_info` / :class:`FMUInfo` (metadata and ports), :class:`FMU` (one
extracted, checked FMU making blocks and subsystems), the errors in
:mod:`fmus.errors`.

SSP 1.0 systems of Co-Simulation FMUs (:mod:`fmus.ssp`): :func:`read_ssp` /
:class:`SSPSystem`, :func:`load_ssp` (a master), :func:`export_ssp` and
:func:`export_master_ssp`.

Export as generated C (no Python at run time): :func:`export_fmu`, with the
extension API :class:`CModel` / :func:`register_c_model` (see :mod:`fmus.cgen`).
"""

_EXPORT = {"export_fmu": ("export", "export_fmu"),
           "CModel": ("cgen", "CModel"), "CContext": ("cgen", "CContext"),
           "register_c_model": ("cgen", "register_c_model"),
           "FMUExportError": ("cgen", "FMUExportError")}


_IMPORT = {"load_fmu": ("importer", "load_fmu"), "fmu_info": ("importer", "fmu_info"),
           "FMU": ("importer", "FMU"), "FMUInfo": ("description", "FMUInfo"),
           "FMUBlock": ("fmu_block", "FMUBlock"), "FMUSubsystem": ("subsystem", "FMUSubsystem"),
           "FMUScheduledBlock": ("scheduled", "FMUScheduledBlock"),
           "ArchiveLimits": ("archive", "ArchiveLimits"), "FMUError": ("errors", "FMUError"),
           "read_ssp": ("ssp", "read_ssp"), "load_ssp": ("ssp", "load_ssp"),
           "export_ssp": ("ssp", "export_ssp"), "export_master_ssp": ("ssp", "export_master_ssp"),
           "SSPSystem": ("ssp", "SSPSystem"), "SSPError": ("ssp", "SSPError")}


def __getattr__(name: str):  # lazy: ``import fmus`` stays cheap
    if name in _EXPORT or name in _IMPORT:
        import importlib
        mod, attr = _EXPORT.get(name) or _IMPORT[name]
        return getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
    raise AttributeError(f"module 'fmus' has no attribute {name!r}")
