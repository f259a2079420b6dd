"""Build the corpus of FMUs written by other exporters (not by this project), at test time.

Five exporters, each pinned in the ``test`` extra of ``pyproject.toml`` (the versions are
checked by :func:`exporter_versions`):

* **pythonfmu** 0.7.0 -- FMI 2.0 Co-Simulation FMUs from a Python class, among them its
  README's ``PythonSlave`` exactly as the README writes it;
* **pythonfmu3** 0.3.4 -- FMI 3.0 Co-Simulation and Model Exchange FMUs from a Python class,
  among them its README's two examples;
* **FMPy** 0.3.32 -- its container writer (``fmpy.container_fmu``: an FMI 2.0 CS container of
  FMI 3.0 components, as FMPy's own test writes it);
* **unifmu** 0.0.3 -- ``unifmu generate python``: its Python backend's template FMU (an
  adder of every FMI 2 type), on its ``zmq`` backend (pyzmq; the ``grpc`` default needs grpcio);
* **fmu-manipulation-toolbox** 2.0 -- ``fmucontainer`` containers from a CSV description (the
  format of its docs), as FMI 2.0 and as FMI 3.0 containers, and ``fmutool`` renaming the ports
  of the Reference Feedthrough FMU (ME and CS; its documented dump/edit/rename workflow).

:data:`CATALOGUE` lists the FMUs.  The containers and the renamed FMUs hold the Modelica
Reference FMUs (built from the vendored sources by ``tests/conformance/build.py``) and the C
test model ``Oscillator`` (``tests/fmu_builders.py``).  :func:`build_corpus` returns
``{fmu id: CorpusFMU}``; an FMU that cannot be built here is a :class:`CorpusFMU` with
``skip`` saying which exporter and why (its cases are skipped with that reason, never
silently dropped).
"""

from __future__ import annotations

import importlib.metadata
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

#: the exporters of the corpus and the version each is pinned to (``pyproject.toml``)
EXPORTERS = {"pythonfmu": "0.7.0", "pythonfmu3": "0.3.4", "FMPy": "0.3.32",
             "fmu-manipulation-toolbox": "2.0", "unifmu": "0.0.3"}
_DISTRIBUTION = {"pythonfmu": "pythonfmu", "pythonfmu3": "pythonfmu3", "FMPy": "fmpy",
                 "fmu-manipulation-toolbox": "fmu_manipulation_toolbox", "unifmu": "unifmu"}


@dataclass
class CorpusFMU:
    """One FMU of the corpus: where it is, who wrote it, or why it could not be built."""

    id: str
    exporter: str
    fmi: int
    what: str                      # one line for the docs table
    path: Path | None = None
    skip: str = ""                 # non-empty: "<exporter>: why it cannot be built here"
    error: str = ""                # non-empty: the build failed (its cases fail with this)


def exporter_versions() -> dict[str, str | None]:
    """``{exporter: installed version or None}``."""
    out = {}
    for name, dist in _DISTRIBUTION.items():
        try:
            out[name] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


# ----------------------------------------------------------------- pythonfmu (FMI 2.0)
#: pythonfmu's README example, as the README writes it (variability left unset)
PF2_README = '''
from pythonfmu import Fmi2Causality, Fmi2Slave, Boolean, Integer, Real, String


class PythonSlave(Fmi2Slave):

    author = "John Doe"
    description = "A simple description"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

        self.intOut = 1
        self.realOut = 3.0
        self.booleanVariable = True
        self.stringVariable = "Hello World!"
        self.register_variable(Integer("intOut", causality=Fmi2Causality.output))
        self.register_variable(Real("realOut", causality=Fmi2Causality.output))
        self.register_variable(Boolean("booleanVariable", causality=Fmi2Causality.local))
        self.register_variable(String("stringVariable", causality=Fmi2Causality.local))

    def do_step(self, current_time, step_size):
        return True
'''

#: a lag that starts at steady state from its input: y(0) = u(0)
PF2_LAG = '''
import math

from pythonfmu import Fmi2Causality, Fmi2Initial, Fmi2Slave, Fmi2Variability, Real


class Lag(Fmi2Slave):
    """y' = (u - y) / tau with y(0) = u(0); exact for an input held over the step."""

    description = "first-order lag initialised at steady state from its input"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tau = 0.5
        self.u = 0.0
        self.y = 0.0
        self.register_variable(Real("tau", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.fixed))
        self.register_variable(Real("u", causality=Fmi2Causality.input))
        self.register_variable(Real("y", causality=Fmi2Causality.output,
                                    initial=Fmi2Initial.calculated))

    def exit_initialization_mode(self):
        self.y = self.u

    def do_step(self, current_time, step_size):
        self.y = self.u + (self.y - self.u) * math.exp(-step_size / self.tau)
        return True
'''

#: every FMI 2 type on an input and an output, and a parameter of each numeric type
PF2_TYPES = '''
from pythonfmu import (Boolean, Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer, Real,
                       String)


class Types2(Fmi2Slave):
    """Outputs after each step from the inputs held over it: r = g u_r, i = n u_i,
    b = not u_b, s = u_s repeated n times."""

    description = "every FMI 2 type on inputs and outputs"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.g = 2.0
        self.n = 3
        self.u_r, self.u_i, self.u_b, self.u_s = 0.0, 0, False, ""
        self.r, self.i, self.b, self.s = 0.0, 0, True, ""
        d, p = Fmi2Variability.discrete, Fmi2Causality.parameter
        self.register_variable(Real("g", causality=p, variability=Fmi2Variability.tunable))
        self.register_variable(Integer("n", causality=p, variability=Fmi2Variability.fixed))
        self.register_variable(Real("u_r", causality=Fmi2Causality.input))
        self.register_variable(Integer("u_i", causality=Fmi2Causality.input, variability=d))
        self.register_variable(Boolean("u_b", causality=Fmi2Causality.input, variability=d))
        self.register_variable(String("u_s", causality=Fmi2Causality.input, variability=d))
        self.register_variable(Real("r", causality=Fmi2Causality.output))
        self.register_variable(Integer("i", causality=Fmi2Causality.output, variability=d))
        self.register_variable(Boolean("b", causality=Fmi2Causality.output, variability=d))
        self.register_variable(String("s", causality=Fmi2Causality.output, variability=d))

    def do_step(self, current_time, step_size):
        self.r = self.g * self.u_r
        self.i = self.n * self.u_i
        self.b = not self.u_b
        self.s = self.u_s * self.n
        return True
'''


#: only Boolean inputs: a set/reset latch that counts the steps it is set
PF2_LATCH = '''
from pythonfmu import Boolean, Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer


class Latch(Fmi2Slave):
    """q = set or (q and not reset) after each step; n counts the steps ending with q."""

    description = "set/reset latch: Boolean inputs only"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.set = False
        self.reset = False
        self.q = False
        self.n = 0
        d = Fmi2Variability.discrete
        self.register_variable(Boolean("set", causality=Fmi2Causality.input, variability=d))
        self.register_variable(Boolean("reset", causality=Fmi2Causality.input, variability=d))
        self.register_variable(Boolean("q", causality=Fmi2Causality.output, variability=d))
        self.register_variable(Integer("n", causality=Fmi2Causality.output, variability=d))

    def do_step(self, current_time, step_size):
        self.q = self.set or (self.q and not self.reset)
        self.n += int(self.q)
        return True
'''


# ----------------------------------------------------------------- pythonfmu3 (FMI 3.0)
#: pythonfmu3's README Co-Simulation example, as the README writes it
PF3_README = '''
from pythonfmu3 import Fmi3Causality, Fmi3Slave, Boolean, Int32, Float64, String


class PythonSlave(Fmi3Slave):

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

        self.author = "John Doe"
        self.description = "A simple description"

        self.time = 0.0
        self.intOut = 1
        self.realOut = 3.0
        self.booleanVariable = True
        self.stringVariable = "Hello World!"
        self.register_variable(Float64("time", causality=Fmi3Causality.independent))
        self.register_variable(Int32("intOut", causality=Fmi3Causality.output))
        self.register_variable(Float64("realOut", causality=Fmi3Causality.output))
        self.register_variable(Boolean("booleanVariable", causality=Fmi3Causality.local))
        self.register_variable(String("stringVariable", causality=Fmi3Causality.local))

    def do_step(self, current_time, step_size):
        return True
'''

#: pythonfmu3's README Model Exchange example (Van der Pol), as the README writes it (lines
#: wrapped at 100 columns) but for its imports: the README's lack ``Fmi3Initial`` and
#: ``Fmi3Variability`` (a NameError as written)
PF3_README_ME = '''
from pythonfmu3 import Fmi3Causality, Fmi3SlaveBase, Float64, ModelExchange
from pythonfmu3 import Fmi3Initial, Fmi3Variability
from typing import List


class PythonSlaveMX(Fmi3SlaveBase, ModelExchange):

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

        self.author = "John Doe"
        self.description = "A simple description"

        self.time = 0.0
        self.mu = 1.0
        self.x0 = 2
        self.x1 = 0
        self.derx0 = 0.0
        self.derx1 = 0.0

        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Float64("x0", causality=Fmi3Causality.output, start=2,
                                       variability=Fmi3Variability.continuous,
                                       initial=Fmi3Initial.exact))
        self.register_variable(Float64("x1", causality=Fmi3Causality.output, start=0,
                                       variability=Fmi3Variability.continuous,
                                       initial=Fmi3Initial.exact))
        self.register_variable(Float64("derx0", causality=Fmi3Causality.local,
                                       variability=Fmi3Variability.continuous, derivative=1))
        self.register_variable(Float64("derx1", causality=Fmi3Causality.local,
                                       variability=Fmi3Variability.continuous, derivative=2))
        self.register_variable(Float64("mu", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.fixed))


    def get_continuous_state_derivatives(self) -> List[float]:
        self.derx0 = self.x1
        self.derx1 = self.mu * ((1 - self.x0**2) * self.x1) - self.x0
        return [self.derx0, self.derx1]
'''

PF3_TYPES = '''
from pythonfmu3 import (Boolean, Fmi3Causality, Fmi3Slave, Fmi3Variability, Float64, Int32,
                        Int64, String, UInt64)


class Types3(Fmi3Slave):
    """Outputs after each step from the inputs held over it: r = g u_r, i = n u_i,
    l = u_l - 1, w = u_w + 1, b = not u_b, s = u_s repeated n times."""

    description = "FMI 3 types on inputs and outputs"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.g = 2.0
        self.n = 3
        self.u_r, self.u_i, self.u_l, self.u_w, self.u_b, self.u_s = 0.0, 0, 0, 0, False, ""
        self.r, self.i, self.l, self.w, self.b, self.s = 0.0, 0, 0, 0, True, ""
        d, p, i, o = (Fmi3Variability.discrete, Fmi3Causality.parameter, Fmi3Causality.input,
                      Fmi3Causality.output)
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Float64("g", causality=p, variability=Fmi3Variability.tunable))
        self.register_variable(Int32("n", causality=p, variability=Fmi3Variability.fixed))
        self.register_variable(Float64("u_r", causality=i, start=0.0))
        self.register_variable(Int32("u_i", causality=i, variability=d, start=0))
        self.register_variable(Int64("u_l", causality=i, variability=d, start=0))
        self.register_variable(UInt64("u_w", causality=i, variability=d, start=0))
        self.register_variable(Boolean("u_b", causality=i, variability=d, start=False))
        self.register_variable(String("u_s", causality=i, variability=d, start=""))
        self.register_variable(Float64("r", causality=o))
        self.register_variable(Int32("i", causality=o, variability=d))
        self.register_variable(Int64("l", causality=o, variability=d))
        self.register_variable(UInt64("w", causality=o, variability=d))
        self.register_variable(Boolean("b", causality=o, variability=d))
        self.register_variable(String("s", causality=o, variability=d))

    def do_step(self, current_time, step_size):
        self.r = self.g * self.u_r
        self.i = self.n * self.u_i
        self.l = self.u_l - 1
        self.w = self.u_w + 1
        self.b = not self.u_b
        self.s = self.u_s * self.n
        self.time = current_time + step_size
        return True
'''

PF3_DECAY_ME = '''
from pythonfmu3 import (Fmi3Causality, Fmi3Initial, Fmi3SlaveBase, Fmi3Variability, Float64,
                        ModelExchange)


class DecayME(Fmi3SlaveBase, ModelExchange):
    """x' = -k x + u, x(0) = 1, y = 3 x (Model Exchange)."""

    description = "linear decay driven by an input"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.k = 2.0
        self.x = 1.0
        self.der_x = 0.0
        self.u = 0.0
        self.y = 3.0
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Float64("x", causality=Fmi3Causality.local, start=1.0,
                                       variability=Fmi3Variability.continuous,
                                       initial=Fmi3Initial.exact))
        self.register_variable(Float64("der_x", causality=Fmi3Causality.local,
                                       variability=Fmi3Variability.continuous, derivative=1))
        self.register_variable(Float64("k", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.tunable, start=2.0))
        self.register_variable(Float64("u", causality=Fmi3Causality.input, start=0.0))
        self.register_variable(Float64("y", causality=Fmi3Causality.output,
                                       variability=Fmi3Variability.continuous,
                                       getter=lambda: 3.0 * self.x))

    def get_continuous_state_derivatives(self):
        self.der_x = -self.k * self.x + self.u
        return [self.der_x]
'''


def _pythonfmu(source: str, dest: Path, fmi: int, module: str) -> Path:
    """pythonfmu (``fmi=2``) or pythonfmu3 building the class in ``source`` saved as
    ``<module>.py``.  The module names differ across the corpus: both tools import the slave's
    module by name into the importing process's interpreter, so two FMUs whose scripts share a
    name (the READMEs' ``pythonslave.py``) cannot run in one process -- the second gets the
    first one's class."""
    import tempfile
    if fmi == 2:
        from pythonfmu.builder import FmuBuilder
    else:
        from pythonfmu3.builder import FmuBuilder
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as td:
        script = Path(td) / f"{module}.py"
        script.write_text(textwrap.dedent(source))
        return Path(FmuBuilder.build_FMU(script, dest=dest))


# ----------------------------------------------------------------- FMPy's container writer
def fmpy_container(feedthrough3: Path, dest: Path) -> Path:
    """FMPy 0.3.32's container of two FMI 3 Feedthrough FMUs in series (``u`` -> instance1
    -> instance2 -> ``y``), written as FMPy's own container test writes it."""
    from fmpy import read_model_description
    from fmpy.container_fmu.cli import create_container_fmu
    from fmpy.container_fmu.config import Component, Configuration, Connection
    from fmpy.model_description import (
        CoSimulation,
        DefaultExperiment,
        ModelDescription,
        ModelVariable,
    )
    u = ModelVariable(type="Real", variability="continuous", causality="input", name="u",
                      start="1.0")
    y = ModelVariable(type="Real", variability="continuous", causality="output", name="y",
                      initial="calculated")
    md = ModelDescription(fmiVersion="2.0", modelName="FeedthroughChain",
                          instantiationToken="{6f1f2c6e-3c2b-4b7c-9a55-1d2c3e4f5a6b}",
                          defaultExperiment=DefaultExperiment(stopTime="1", stepSize="0.1"),
                          coSimulation=CoSimulation(fixedInternalStepSize=0.1),
                          modelVariables=[ModelVariable(type="Real", variability="continuous",
                                                        causality="independent", name="time"),
                                          u, y])
    cmd = read_model_description(feedthrough3)
    cv = {v.name: v for v in cmd.modelVariables}
    a = Component(name="instance1", filename=feedthrough3, modelDescription=cmd)
    b = Component(name="instance2", filename=feedthrough3, modelDescription=cmd)
    cfg = Configuration(parallelDoStep=False, modelDescription=md, components=[a, b],
                        connections=[Connection(a, [cv["Float64_continuous_output"]], b,
                                                [cv["Float64_continuous_input"]])],
                        variableMappings={u: [(a, cv["Float64_continuous_input"])],
                                          y: [(b, cv["Float64_continuous_output"])]})
    work = dest / "fmpy_container"
    work.mkdir(parents=True, exist_ok=True)
    out = dest / "FMPyContainer.fmu"
    create_container_fmu(cfg, work, out)
    return out


# ----------------------------------------------------------------- fmu-manipulation-toolbox
#: the container description in the CSV format of the toolbox's docs: the input ``u``
#: through the Reference Feedthrough into the oscillator's force; the oscillator's ``x``
#: and the feedthrough's output are the container's outputs
FMT_CSV = """rule;from_fmu;from_port;to_fmu;to_port
FMU;Feedthrough.fmu;;;
FMU;Oscillator.fmu;;;
INPUT;;u;Feedthrough.fmu;Float64_continuous_input
LINK;Feedthrough.fmu;Float64_continuous_output;Oscillator.fmu;F
OUTPUT;Oscillator.fmu;x;;x
OUTPUT;Feedthrough.fmu;Float64_continuous_output;;f
"""

#: the containers' internal step [s]
FMT_STEP = 0.01


def fmt_container(feedthrough2: Path, oscillator: Path, dest: Path, fmi: int) -> Path:
    """fmu-manipulation-toolbox's ``fmucontainer`` on :data:`FMT_CSV` (FMI ``fmi`` container,
    auto-wiring off: only the rules above)."""
    from fmu_manipulation_toolbox.assembly import Assembly
    work = dest / f"fmt{fmi}"
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(feedthrough2, work / "Feedthrough.fmu")
    shutil.copy(oscillator, work / "Oscillator.fmu")
    name = f"FMTContainer{fmi}"
    (work / f"{name}.csv").write_text(FMT_CSV)
    asm = Assembly(f"{name}.csv", default_step_size=FMT_STEP, default_auto_link=False,
                   default_auto_input=False, default_auto_output=False, fmu_directory=work)
    asm.make_fmu(fmi_version=fmi)
    return work / f"{name}.fmu"


#: ``fmutool -rename-from-csv``: the Reference Feedthrough's ports renamed (the toolbox's
#: documented workflow: ``-dump-csv``, edit the ``newName`` column, ``-rename-from-csv``)
RENAMES = {"Float64_continuous_input": "u", "Float64_continuous_output": "y",
           "Int32_input": "n_in", "Int32_output": "n_out", "Boolean_input": "b_in",
           "Boolean_output": "b_out", "Enumeration_input": "e_in", "Enumeration_output": "e_out",
           "String_input": "s_in", "String_output": "s_out", "Int8_input": "i8_in",
           "Int8_output": "i8_out", "UInt16_input": "u16_in", "UInt16_output": "u16_out",
           "Int64_input": "i64_in", "Int64_output": "i64_out", "UInt64_input": "u64_in",
           "UInt64_output": "u64_out"}


def fmt_renamed(feedthrough: Path, dest: Path, fmi: int) -> Path:
    """``fmutool`` (fmu-manipulation-toolbox) renaming the ports of the Reference
    Feedthrough FMU (ME and CS) by :data:`RENAMES`, through its command line."""
    import csv
    import subprocess
    import sys
    work = dest / f"renamed{fmi}"
    work.mkdir(parents=True, exist_ok=True)
    tool = [sys.executable, "-c", "from fmu_manipulation_toolbox.cli.fmutool import fmutool; "
            "fmutool()"]
    dump, out = work / "names.csv", work / f"Renamed{fmi}.fmu"
    for args in (["-input", str(feedthrough), "-dump-csv", str(dump)], None):
        if args is None:
            with open(dump, newline="") as f:
                rows = list(csv.reader(f, delimiter=";"))
            for r in rows[1:]:
                r[1] = RENAMES.get(r[0], r[1])
            with open(dump, "w", newline="") as f:
                csv.writer(f, delimiter=";").writerows(rows)
            args = ["-input", str(feedthrough), "-rename-from-csv", str(dump),
                    "-output", str(out)]
        p = subprocess.run(tool + args, capture_output=True, text=True, timeout=120)
        if p.returncode:
            raise RuntimeError(f"fmutool {' '.join(args)} failed:\n{p.stdout}{p.stderr}")
    return out


# ----------------------------------------------------------------- unifmu
def unifmu_adder(dest: Path) -> Path:
    """``unifmu generate python``: the template FMU of unifmu's Python backend, switched to
    its ``zmq`` backend in ``resources/launch.toml`` (the file unifmu's docs have users edit)
    and started with this interpreter (``python3`` from ``PATH`` by default), zipped as unifmu's
    docs say."""
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", "import zmq"], capture_output=True, text=True)
    if p.returncode:
        raise _Unavailable("its Python backend needs pyzmq (pip install -e '.[test]')")
    work = dest / "unifmu" / "adder"
    shutil.rmtree(work, ignore_errors=True)  # unifmu writes a new folder only
    work.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([sys.executable, "-c", "from unifmu.cli import main; main()",
                        "generate", "python", str(work)], capture_output=True, text=True,
                       timeout=120)
    if p.returncode:
        raise RuntimeError(f"unifmu generate python failed:\n{p.stdout}{p.stderr}")
    launch = work / "resources" / "launch.toml"
    text = launch.read_text()
    old_backend, old_cmd = 'backend = "grpc"', 'linux = ["python3", "backend_schemaless_rpc.py"]'
    assert old_backend in text and old_cmd in text, text
    launch.write_text(text.replace(old_backend, 'backend = "zmq"').replace(
        old_cmd, f'linux = ["{sys.executable}", "backend_schemaless_rpc.py"]'))
    from tests.fmu_builders import zip_dir
    return zip_dir(work, dest / "unifmu" / "UnifmuAdder.fmu")


# ----------------------------------------------------------------- the corpus
#: ``{fmu id: (exporter, FMI version, what it is)}``
CATALOGUE = {
    "pf2-readme": ("pythonfmu", 2, "README's `PythonSlave` as the README writes it "
                   "(variability of Integer/Boolean/String left unset)"),
    "pf2-lag": ("pythonfmu", 2, "lag initialised from its input, y(0) = u(0); a parameter"),
    "pf2-types": ("pythonfmu", 2, "Real, Integer, Boolean, String inputs and outputs; "
                  "Real and Integer parameters"),
    "pf2-latch": ("pythonfmu", 2, "set/reset latch: Boolean inputs only, Boolean and "
                  "Integer outputs"),
    "unifmu-adder": ("unifmu", 2, "`unifmu generate python` template: a + b of Real, Integer, "
                     "Boolean, String (concatenation) inputs"),
    "pf3-readme": ("pythonfmu3", 3, "README's Co-Simulation `PythonSlave` as the README "
                   "writes it"),
    "pf3-readme-me": ("pythonfmu3", 3, "README's Model Exchange Van der Pol `PythonSlaveMX` "
                      "(the README's missing imports added)"),
    "pf3-types": ("pythonfmu3", 3, "Float64, Int32, Int64, UInt64, Boolean, String inputs and "
                  "outputs; parameters"),
    "pf3-decay-me": ("pythonfmu3", 3, "Model Exchange x' = -k x + u, y = 3 x"),
    "fmpy-container": ("FMPy", 2, "container (FMI 2) of two FMI 3 Reference Feedthrough FMUs "
                       "in series, as FMPy's own test writes it"),
    "fmt-container2": ("fmu-manipulation-toolbox", 2, "`fmucontainer` (FMI 2) from a CSV: "
                       "Reference Feedthrough -> Oscillator, starts from its input"),
    "fmt-container3": ("fmu-manipulation-toolbox", 3, "`fmucontainer` (FMI 3) from the same "
                       "CSV"),
    "fmt-renamed2": ("fmu-manipulation-toolbox", 2, "`fmutool -rename-from-csv` on the "
                     "Reference Feedthrough (FMI 2, ME and CS): every FMI 2 type"),
    "fmt-renamed3": ("fmu-manipulation-toolbox", 3, "`fmutool -rename-from-csv` on the "
                     "Reference Feedthrough (FMI 3, ME and CS): Float32, Float64, Int8, UInt8, "
                     "Int16, UInt16, Int32, UInt32, Int64, UInt64, Boolean, Enumeration, "
                     "String"),
}


def build_corpus(dest: Path, reference_fmus: dict | None) -> dict[str, CorpusFMU]:
    """Build every FMU of the corpus in ``dest``; ``reference_fmus``: ``{(fmi, model): path}``
    of the Reference FMUs (``None``: they cannot be built here, the containers are skipped)."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    versions = exporter_versions()
    out: dict[str, CorpusFMU] = {}

    def make(fid: str, build) -> None:
        exporter, fmi, what = CATALOGUE[fid]
        entry = CorpusFMU(fid, exporter, fmi, what)
        have = versions[exporter]
        if have is None:
            entry.skip = f"{exporter}: not installed (pip install -e '.[test]')"
        elif have != EXPORTERS[exporter]:
            entry.skip = (f"{exporter}: version {have} installed, the corpus is pinned to "
                          f"{EXPORTERS[exporter]} (pip install -e '.[test]')")
        else:
            try:
                entry.path = Path(build())
            except _Unavailable as exc:
                entry.skip = f"{exporter}: {exc}"
            except Exception as exc:  # noqa: BLE001 - a failed build fails that FMU's cases
                entry.error = f"{exporter} failed to build {fid}: {type(exc).__name__}: {exc}"
        out[fid] = entry

    src = {"pf2-readme": PF2_README, "pf2-lag": PF2_LAG, "pf2-types": PF2_TYPES,
           "pf2-latch": PF2_LATCH,
           "pf3-readme": PF3_README, "pf3-readme-me": PF3_README_ME, "pf3-types": PF3_TYPES,
           "pf3-decay-me": PF3_DECAY_ME}
    for fid, text in src.items():
        make(fid, lambda fid=fid, text=text: _pythonfmu(text, dest / fid, CATALOGUE[fid][1],
                                                        fid.replace("-", "_")))

    def ref(fmi: int, model: str) -> Path:
        if reference_fmus is None:
            raise _Unavailable("its container holds the Reference FMUs, which cannot be "
                               "built here (cmake or a C compiler is missing)")
        return reference_fmus[(fmi, model)]

    def oscillator() -> Path:
        if shutil.which("gcc") is None:
            raise _Unavailable("its container holds the C test FMU Oscillator: gcc is missing")
        from tests.fmu_builders import build_c_fmu
        return build_c_fmu("oscillator", dest / "components")

    make("unifmu-adder", lambda: unifmu_adder(dest))
    make("fmpy-container", lambda: fmpy_container(ref(3, "Feedthrough"), dest))
    for fmi in (2, 3):
        make(f"fmt-container{fmi}",
             lambda fmi=fmi: fmt_container(ref(2, "Feedthrough"), oscillator(), dest, fmi))
        make(f"fmt-renamed{fmi}", lambda fmi=fmi: fmt_renamed(ref(fmi, "Feedthrough"), dest, fmi))
    assert set(out) == set(CATALOGUE), sorted(set(CATALOGUE) ^ set(out))
    return out


class _Unavailable(RuntimeError):
    """A tool the FMU needs is missing here."""
