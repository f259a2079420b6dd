"""Export any diagram as an FMI Co-Simulation FMU through pythonfmu (FMI 2.0) or
pythonfmu3 (FMI 3.0).

>>> export_python_fmu("quarter_car.py", "out/", solver="rk4", solver_dt=1e-4)
...                                                                 # doctest: +SKIP
>>> export_python_fmu("mypackage.models:build", "out/", fmi_version=3)  # doctest: +SKIP

The model is a model file (as ``cosim run`` takes it) or an importable
``package.module:function``.  The FMU carries the model's own modules: the model file or
module and every local module it imports (not the standard library, not installed
distributions), in ``resources/cosim_model/`` (:mod:`fmus.pybundle`); before the FMU is
written its model is built from that copy in a clean Python (no ``PYTHONPATH``, another
folder), so the FMU runs wherever cosim is installed.

For diagrams of blocks with a C description, prefer the generated-C export (no Python
at run time).  This path takes any block, at the price the FMU's documentation
(``documentation/README.txt``) states: the importing tool must embed a CPython
compatible with the wrapper (3.x), with ``cosim`` (and any installed package the model
imports) installed; the FMU says ``needsExecutionTool="true"``.  Needs the
``fmi-export`` extra.  Where the model cannot be built (a module missing there), the
FMU's instantiation fails with the reason on stderr and in the FMU's log.

=================  =====================================  =================================
                   ``fmi_version=2`` (default)            ``fmi_version=3``
=================  =====================================  =================================
wrapper            pythonfmu 0.7                          pythonfmu3 0.3
slave              :class:`fmus.pyslave.CosimSlave`       :class:`fmus.pyslave3.CosimSlave3`
ports              scalar floats                          floats, integers, bools, arrays
feedthrough        not declared (all inputs)              ``Output`` dependencies
outputs read       as at the end of the last step         evaluated again for the inputs
after set inputs                                          set since (no state change)
state              get/set/serialize                      get/set/serialize
instances          one per process (declared)             several per process
start time         from ``fmi2SetupExperiment``           t = 0, or the first step's time
=================  =====================================  =================================

Both: inputs, outputs and the leaf blocks' scalar float parameters (tunable) with their
units; inputs held over each communication step; the internal solver fixed at export.
The slaves' docstrings list the details, the limitations and what was measured.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from cosim.errors import BuildError

#: FMI 3: the FMU's ``canBeInstantiatedOnlyOncePerProcess`` (measured false: see
#: :mod:`fmus.pyslave3`)
ONLY_ONCE_PER_PROCESS_FMI3 = False

_README = {2: """\
cosim model exported as an FMI 2.0 Co-Simulation FMU through pythonfmu.

Requirements on the importing machine (needsExecutionTool="true"):
  * the tool must load a CPython 3 library into its process (pythonfmu's wrapper);
  * that Python must have 'cosim' installed (the package that exported this FMU) and the
    installed packages the model imports; the model's own modules are in
    resources/cosim_model ({bundled});
  * one instance per process (pythonfmu 0.7's wrapper);
  * binaries are shipped for linux64 and win64 only.

Model: {target}; internal solver {solver}{dt}; inputs are held over each
communication step.
""", 3: """\
cosim model exported as an FMI 3.0 Co-Simulation FMU through pythonfmu3.

Requirements on the importing machine (needsExecutionTool="true"):
  * the tool must load a CPython 3 library into its process (pythonfmu3's wrapper): the
    Linux binary does not link libpython, so a tool that is not itself a Python process
    must have it loaded globally (e.g. LD_PRELOAD=/path/to/libpython3.11.so);
  * that Python must have 'cosim' installed (the package that exported this FMU) and the
    installed packages the model imports; the model's own modules are in
    resources/cosim_model ({bundled}); pythonfmu3 is inside the FMU;
  * binaries are shipped for x86_64-linux and x86_64-windows only.

Model: {target}; internal solver {solver}{dt}; inputs are held over each
communication step.  Several instances may run in one process.  The wrapper does not
pass the start time to the model: the model initializes at t = 0 and, if the first
step starts later, starts again there.
"""}

#: the FMU's slave script (pythonfmu3 finds the class by 'Fmi3Slave' among its bases)
_SCRIPT = {
    2: '''"""{doc}"""
try:
    from fmus.pyslave import CosimSlave
except ImportError as exc:  # said on stderr too: a host may show no FMU log
    import sys
    print(f"cosim FMU {name!r}: cannot start: {{exc}}; this FMU runs cosim's simulator: "
          f"install cosim in the Python that runs it ({{sys.executable}})", file=sys.stderr)
    raise


class {name}(CosimSlave):
    target = {target}
    solver = {solver}
    solver_dt = {solver_dt}
    description = {description}
{experiment}''',
    3: '''"""{doc}"""
from pythonfmu3 import Fmi3Slave

try:
    from fmus.pyslave3 import CosimSlave3
except ImportError as exc:  # said on stderr too: a host may show no FMU log
    import sys
    print(f"cosim FMU {name!r}: cannot start: {{exc}}; this FMU runs cosim's simulator: "
          f"install cosim in the Python that runs it ({{sys.executable}})", file=sys.stderr)
    raise


class {name}(CosimSlave3, Fmi3Slave):
    target = {target}
    solver = {solver}
    solver_dt = {solver_dt}
    model_description = {description}
{experiment}''',
}


def export_python_fmu(target: str, dest: str | Path, *, solver: str | None = None,
                      solver_dt: float | None = None, model_name: str | None = None,
                      description: str = "", fmi_version: int = 2,
                      function: str | None = None, check: bool = True) -> Path:
    """Build ``<model_name>.fmu`` in directory ``dest`` (or at ``dest`` if it ends in
    ``.fmu``) from the model ``target``: a model file (``function``: its diagram
    function, default as ``cosim run``) or ``"package.module:function"``.

    The model's local modules are bundled in the FMU (module docstring).  ``solver``,
    ``solver_dt``: the internal integrator and its step (default: the model's
    ``SIMULATION`` solver and ``dt``, as ``cosim run``; else ``"rk4"`` and one step per
    communication step, also ``solver_dt=0``).  ``fmi_version``: 2 (pythonfmu,
    :mod:`fmus.pyslave`) or 3 (pythonfmu3, :mod:`fmus.pyslave3`).  ``check``: build the
    bundled model in a clean Python first (:func:`fmus.pybundle.check_in_clean_python`,
    about a second).  Returns the path.
    """
    if fmi_version not in (2, 3):
        raise BuildError(f"export_python_fmu: fmi_version must be 2 or 3, got {fmi_version!r}")
    package = "pythonfmu" if fmi_version == 2 else "pythonfmu3"
    try:
        builder = importlib.import_module(f"{package}.builder").FmuBuilder
    except ImportError:
        raise BuildError(f"export_python_fmu(fmi_version={fmi_version}) needs {package}: "
                         "pip install 'cosim[fmi-export]'") from None
    if fmi_version == 3 and not builder.has_binary():
        # e.g. pythonfmu3 imported from an FMU's resources (a pythonfmu3 FMU run in this
        # process puts them first on sys.path): that copy has no binaries
        where = Path(importlib.import_module(package).__file__).parent
        raise BuildError(f"export_python_fmu: the pythonfmu3 imported from {where} has no "
                         "binary for this platform; export from a process that has not run "
                         "a pythonfmu3 FMU, with pythonfmu3 installed")
    from .pybundle import (
        BUNDLE,
        CONFIG_FILE,
        ModelLoadError,
        build_here,
        check_in_clean_python,
        find_model,
        write_bundle,
    )
    ref = find_model(target, function)
    try:
        diagram, simulation = build_here(ref)
    except BuildError as exc:
        raise BuildError(f"export_python_fmu: cannot build the diagram from {target!r}: "
                         f"{exc}") from None
    solver = solver or simulation.get("solver", "rk4")
    solver_dt = simulation.get("dt") if solver_dt is None else (solver_dt or None)
    _check_ports(diagram, fmi_version)
    name = model_name or re.sub(r"\W", "_", diagram.name)
    if not name.isidentifier():
        raise BuildError(f"export_python_fmu: model name {name!r} is not an identifier")
    text = description or f"cosim diagram {diagram.name}"
    dest = Path(dest)
    final = dest if dest.suffix == ".fmu" else dest / f"{name}.fmu"
    path_before = list(sys.path)  # the builders instantiate the slave here: it adds paths
    try:
        with tempfile.TemporaryDirectory() as tmp:
            bundle = Path(tmp) / BUNDLE
            bundle.mkdir()
            bundled = write_bundle(ref, bundle)
            script = Path(tmp) / f"{name}_slave.py"
            script.write_text(_SCRIPT[fmi_version].format(
                doc=description or f"cosim diagram {diagram.name} ({target})", name=name,
                target=repr(target), solver=repr(solver), solver_dt=repr(solver_dt),
                description=repr(text), experiment=_experiment(simulation, fmi_version)))
            config = Path(tmp) / "cfg" / CONFIG_FILE
            config.parent.mkdir()
            config.write_text(json.dumps({"target": target, "solver": solver,
                                          "solver_dt": solver_dt, "model": ref.config()}))
            docs = Path(tmp) / "documentation"
            docs.mkdir()
            dt = f" at {solver_dt:g} s" if solver_dt else ", one step per communication step"
            (docs / "README.txt").write_text(_README[fmi_version].format(
                bundled=", ".join(bundled), target=target, solver=solver, dt=dt))
            if fmi_version == 2:  # measured: a second instance fails (fmus.pyslave)
                options = dict(canGetAndSetFMUstate=True, canSerializeFMUstate=True,
                               canBeInstantiatedOnlyOncePerProcess=True)
            else:
                options = dict(canGetAndSetFMUState=True, canSerializeFMUState=True,
                               canBeInstantiatedOnlyOncePerProcess=ONLY_ONCE_PER_PROCESS_FMI3)
            from . import pyslave
            pyslave.REPORT_TO_STDERR = False  # the builder instantiates the slave here
            try:
                fmu = builder.build_FMU(script, dest=Path(tmp) / "out",
                                        documentation_folder=docs,
                                        project_files=[config, bundle], needsExecutionTool=True,
                                        canHandleVariableCommunicationStepSize=True, **options)
            except ModelLoadError as exc:
                raise BuildError(f"export_python_fmu: the FMU would not run elsewhere: built "
                                 f"from the modules bundled in it (not the data files it "
                                 f"reads), {exc}") from None
            finally:
                pyslave.REPORT_TO_STDERR = True
            if check:
                resources = Path(tmp) / "check"
                with zipfile.ZipFile(fmu) as z:
                    z.extractall(resources, [m for m in z.namelist()
                                             if m.startswith(("resources/cosim_model",
                                                              f"resources/{CONFIG_FILE}"))])
                check_in_clean_python(resources / "resources", list(diagram.outputs))
            final.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(fmu, final)
    finally:
        sys.path[:] = path_before
    return final


def _experiment(simulation: dict, fmi_version: int) -> str:
    """The slave class's ``default_experiment`` from the model file's ``SIMULATION``
    (``t_end`` the stopTime, ``dt`` the stepSize: what FMPy and ``cosim fmu simulate`` run
    by default, as ``cosim run`` of the file does), or nothing without a ``t_end``."""
    t_end = simulation.get("t_end")
    if t_end is None:
        return ""
    package = "pythonfmu" if fmi_version == 2 else "pythonfmu3"
    attribute = "default_experiment" if fmi_version == 2 else "cosim_experiment"
    dt = simulation.get("dt")
    step = f", step_size={float(dt)!r}" if isinstance(dt, int | float) and dt > 0 else ""
    return (f"    from {package} import DefaultExperiment\n"
            f"    {attribute} = DefaultExperiment(start_time=0.0, "
            f"stop_time={float(t_end)!r}{step})\n")


def _check_ports(diagram: Any, fmi_version: int) -> None:
    """Ports the wrapper of ``fmi_version`` can carry, else a BuildError naming them."""
    ports = list(diagram.inputs.items()) + list(diagram.outputs.items())
    if fmi_version == 2:
        bad = [f"{n} {p.shape}" for n, p in ports if p.shape != ()]
        if bad:
            raise BuildError(f"export_python_fmu: diagram '{diagram.name}' has array ports "
                             f"({', '.join(bad)}); export scalar ports only (split the "
                             "arrays with a FunctionBlock) or export to FMI 3 "
                             "(fmi_version=3)")
    else:
        bad = [f"{n} {p.dtype}" for n, p in ports if p.dtype.kind not in "fiub"]
        if bad:
            raise BuildError(f"export_python_fmu: diagram '{diagram.name}' has ports of "
                             f"types FMI 3 has no variable for ({', '.join(bad)}); export "
                             "float, integer or bool ports")
    if not diagram.outputs:
        raise BuildError(f"export_python_fmu: diagram '{diagram.name}' exports no outputs")
