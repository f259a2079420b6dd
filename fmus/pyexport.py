"""Export any diagram as an FMI 2.0 Co-Simulation FMU through pythonfmu.

>>> export_python_fmu("examples.my_model:build", "out/", solver="rk4", solver_dt=1e-4)
...                                                                 # doctest: +SKIP

For diagrams of blocks with a C description, prefer the generated-C export (no Python
at run time).  This path takes any block, at the price the FMU's documentation states:
the importing tool must embed a CPython compatible with pythonfmu's wrapper (3.x), with
``cosim`` and the model's module installed; the FMU says ``needsExecutionTool="true"``.
The slave is :class:`fmus.pyslave.CosimSlave` (its docstring lists what is exported and
the limitations).  Needs the ``fmi-export`` extra (pythonfmu).
"""

from __future__ import annotations

import json
import re
import tempfile
import textwrap
from pathlib import Path

from cosim.errors import BuildError

_README = """\
cosim model exported as an FMI 2.0 Co-Simulation FMU through pythonfmu.

Requirements on the importing machine (needsExecutionTool="true"):
  * the tool must load a CPython 3 library into its process (pythonfmu's wrapper);
  * that Python must have 'cosim' installed (the package that exported this FMU) and the
    model's module '{module}' importable;
  * binaries are shipped for linux64 and win64 only.

Model: {target}; internal solver {solver}{dt}; inputs are held over each
communication step.
"""


def export_python_fmu(target: str, dest: str | Path, *, solver: str = "rk4",
                      solver_dt: float | None = None, model_name: str | None = None,
                      description: str = "") -> Path:
    """Build ``<model_name>.fmu`` in directory ``dest`` (or at ``dest`` if it ends in
    ``.fmu``) from the diagram factory ``target`` (``"package.module:function"``,
    importable here and on the target machine).  ``solver``, ``solver_dt``: the internal
    integrator (``solver_dt`` None: one step per communication step).  Returns the path.
    """
    try:
        from pythonfmu.builder import FmuBuilder
    except ImportError:
        raise BuildError("export_python_fmu needs pythonfmu: pip install 'cosim[fmi-export]'"
                         ) from None
    from .pyslave import CONFIG_FILE, load_factory
    try:
        diagram = load_factory(target)
    except (ImportError, AttributeError, ValueError) as exc:
        raise BuildError(f"export_python_fmu: cannot build the diagram from {target!r}: "
                         f"{exc}; give an importable 'package.module:function'") from None
    bad = [f"{n} {p.shape}" for n, p in list(diagram.inputs.items())
           + list(diagram.outputs.items()) if p.shape != ()]
    if bad:
        raise BuildError(f"export_python_fmu: diagram '{diagram.name}' has array ports "
                         f"({', '.join(bad)}); export scalar ports only (split the arrays "
                         "with a FunctionBlock)")
    if not diagram.outputs:
        raise BuildError(f"export_python_fmu: diagram '{diagram.name}' exports no outputs")
    name = model_name or re.sub(r"\W", "_", diagram.name)
    if not name.isidentifier():
        raise BuildError(f"export_python_fmu: model name {name!r} is not an identifier")
    dest = Path(dest)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / f"{name}_slave.py"
        script.write_text(textwrap.dedent(f'''\
            """{description or f"cosim diagram {diagram.name} ({target})"}"""
            from fmus.pyslave import CosimSlave


            class {name}(CosimSlave):
                target = {target!r}
                solver = {solver!r}
                solver_dt = {solver_dt!r}
                description = {(description or f"cosim diagram {diagram.name}")!r}
            '''))
        config = Path(tmp) / "cfg" / CONFIG_FILE
        config.parent.mkdir()
        config.write_text(json.dumps({"target": target, "solver": solver,
                                      "solver_dt": solver_dt}))
        docs = Path(tmp) / "documentation"
        docs.mkdir()
        dt = f" at {solver_dt:g} s" if solver_dt else ", one step per communication step"
        (docs / "README.txt").write_text(_README.format(
            module=target.partition(":")[0], target=target, solver=solver, dt=dt))
        out_dir = dest if dest.suffix != ".fmu" else dest.parent
        out_dir.mkdir(parents=True, exist_ok=True)
        fmu = FmuBuilder.build_FMU(script, dest=dest, documentation_folder=docs,
                                   project_files=[config],
                                   needsExecutionTool=True, canGetAndSetFMUstate=True,
                                   canSerializeFMUstate=True,
                                   canHandleVariableCommunicationStepSize=True)
    return Path(fmu)
