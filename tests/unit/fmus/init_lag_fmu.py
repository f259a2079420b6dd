"""The steady-state lag FMU of the initialization tests (``tests/fmu_sources/init_lag.h``).

``x' = (K u - x) / T``, ``y = x + D u``, ``x(0) = K u(0)`` computed in Initialization Mode:
the FMU starts at steady state from its input, so its initial output is right only when the
importer sets the input before ``exitInitializationMode`` (as FMPy does).  :func:`build`
writes the model description for FMI 2 or 3 (ME + CS), with or without the direct
feedthrough ``D u`` in ``ModelStructure`` (without it an output depends on the input only at
initialization, through ``InitialUnknowns``).
"""

from __future__ import annotations

from pathlib import Path

from tests.fmu_builders import build_c_fmu

GUID = "{0b1d7a2e-3c4f-4e5a-9b6c-7d8e9f0a1b21}"


def _xml2(K: float, T: float, D: float, ft: bool) -> str:
    deps = "1 3" if ft else "1"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="InitLag" guid="{GUID}"
  description="lag starting at steady state from its input (cosim test FMU)"
  generationTool="hand-written C (tests/fmu_sources)" numberOfEventIndicators="0">
  <ModelExchange modelIdentifier="InitLag" canGetAndSetFMUstate="true"
    completedIntegratorStepNotNeeded="true"/>
  <CoSimulation modelIdentifier="InitLag" canHandleVariableCommunicationStepSize="true"
    canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.01"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="0"
      causality="local" variability="continuous" initial="calculated"><Real/></ScalarVariable>
    <ScalarVariable name="der(x)" valueReference="1"
      causality="local"><Real derivative="1"/></ScalarVariable>
    <ScalarVariable name="u" valueReference="2"
      causality="input"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="y" valueReference="3"
      causality="output"><Real/></ScalarVariable>
    <ScalarVariable name="K" valueReference="4"
      causality="parameter" variability="fixed"><Real start="{K!r}"/></ScalarVariable>
    <ScalarVariable name="T" valueReference="5"
      causality="parameter" variability="fixed"><Real start="{T!r}"/></ScalarVariable>
    <ScalarVariable name="D" valueReference="6"
      causality="parameter" variability="fixed"><Real start="{D!r}"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs>
      <Unknown index="4" dependencies="{deps}"/>
    </Outputs>
    <Derivatives>
      <Unknown index="2" dependencies="1 3"/>
    </Derivatives>
    <InitialUnknowns>
      <Unknown index="1" dependencies="3"/>
      <Unknown index="2" dependencies="3"/>
      <Unknown index="4" dependencies="3"/>
    </InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"""


def _xml3(K: float, T: float, D: float, ft: bool) -> str:
    deps = "0 2" if ft else "0"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="InitLag" instantiationToken="{GUID}"
  description="lag starting at steady state from its input (cosim test FMU)"
  generationTool="hand-written C (tests/fmu_sources)">
  <ModelExchange modelIdentifier="InitLag" canGetAndSetFMUState="true"/>
  <CoSimulation modelIdentifier="InitLag" canHandleVariableCommunicationStepSize="true"
    canGetAndSetFMUState="true" canSerializeFMUState="true"/>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.01"/>
  <ModelVariables>
    <Float64 name="time" valueReference="7"
      causality="independent" variability="continuous"/>
    <Float64 name="x" valueReference="0"
      causality="local" variability="continuous" initial="calculated"/>
    <Float64 name="der(x)" valueReference="1"
      causality="local" variability="continuous" derivative="0"/>
    <Float64 name="u" valueReference="2"
      causality="input" variability="continuous" start="0"/>
    <Float64 name="y" valueReference="3"
      causality="output" variability="continuous"/>
    <Float64 name="K" valueReference="4"
      causality="parameter" variability="fixed" start="{K!r}"/>
    <Float64 name="T" valueReference="5"
      causality="parameter" variability="fixed" start="{T!r}"/>
    <Float64 name="D" valueReference="6"
      causality="parameter" variability="fixed" start="{D!r}"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="3" dependencies="{deps}"/>
    <ContinuousStateDerivative valueReference="1"/>
    <InitialUnknown valueReference="0" dependencies="2"/>
    <InitialUnknown valueReference="1" dependencies="2"/>
    <InitialUnknown valueReference="3" dependencies="2"/>
  </ModelStructure>
</fmiModelDescription>
"""


def build(dest: Path, *, fmi: int = 2, feedthrough: bool = False,
          name: str = "InitLag") -> Path:
    """The lag FMU (ME + CS) in ``dest/<name>.fmu``; parameters ``K`` (start 1), ``T``
    (0.5 s) and ``D`` (0), set with ``parameters=`` (``start_values=`` for FMPy)."""
    xml = (_xml2 if fmi == 2 else _xml3)(1.0, 0.5, 0.0, feedthrough)
    return build_c_fmu("init_lag", Path(dest), fmi=fmi, xml=xml, name=name)


#: The lag as pythonfmu's README writes a slave (FMI 2 CS): its initial value is computed in
#: ``exit_initialization_mode``, so in Initialization Mode its output is still the old one.
PY_LAG = '''
import math

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real


class PyLag(Fmi2Slave):
    """y' = (K u - y) / T, y(0) = K u(0) (set when leaving Initialization Mode)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.u = 0.0
        self.y = 0.0
        self.K = 1.0
        self.T = 0.5
        self.register_variable(Real("u", causality=Fmi2Causality.input))
        self.register_variable(Real("y", causality=Fmi2Causality.output))
        self.register_variable(Real("K", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.fixed))
        self.register_variable(Real("T", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.fixed))

    def exit_initialization_mode(self):
        self.y = self.K * self.u

    def do_step(self, current_time, step_size):
        target = self.K * self.u  # the input held over the step: the exact solution
        self.y = target + (self.y - target) * math.exp(-step_size / self.T)
        return True
'''

#: The same with pythonfmu3 (FMI 3 CS).
PY_LAG3 = '''
import math

from pythonfmu3 import Fmi3Causality, Fmi3Slave, Fmi3Variability, Float64


class PyLag3(Fmi3Slave):
    """y' = (K u - y) / T, y(0) = K u(0) (set when leaving Initialization Mode)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.u = 0.0
        self.y = 0.0
        self.K = 1.0
        self.T = 0.5
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Float64("u", causality=Fmi3Causality.input, start=0.0))
        self.register_variable(Float64("y", causality=Fmi3Causality.output))
        self.register_variable(Float64("K", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.fixed, start=1.0))
        self.register_variable(Float64("T", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.fixed, start=0.5))

    def exit_initialization_mode(self):
        self.y = self.K * self.u

    def do_step(self, current_time, step_size):
        target = self.K * self.u
        self.y = target + (self.y - target) * math.exp(-step_size / self.T)
        self.time = current_time + step_size
        return True
'''


def build_python(dest: Path, *, fmi: int = 2) -> Path:
    """The pythonfmu (``fmi=2``) or pythonfmu3 (``fmi=3``) lag, as their READMEs build one."""
    from tests.fmu_builders import build_pythonfmu
    return build_pythonfmu(PY_LAG if fmi == 2 else PY_LAG3, Path(dest), fmi=fmi)


def build_container(dest: Path, n: int = 2) -> Path:
    """FMPy's container FMU (FMI 3 CS, ``fmpy.container_fmu``) of ``n`` FMI 3 lags in series:
    input ``u`` -> lag0 -> ... -> output ``y``.  Its ``ModelStructure`` is filled (FMPy's
    writer writes what it is given; left empty it is issue 31 item 3's case).  Needs FMPy's
    container binary for this platform (FMPy >= 0.3.22)."""
    import uuid

    from fmpy import read_model_description
    from fmpy.container_fmu import Configuration
    from fmpy.container_fmu.cli import create_container_fmu
    from fmpy.container_fmu.config import Component, Connection
    from fmpy.model_description import (
        CoSimulation,
        DefaultExperiment,
        ModelDescription,
        ModelVariable,
        Unknown,
    )
    dest = Path(dest)
    paths = [build(dest / f"lag{i}", fmi=3, name=f"lag{i}") for i in range(n)]
    comps = [Component(name=f"lag{i}", filename=p, modelDescription=read_model_description(p))
             for i, p in enumerate(paths)]
    var = [{v.name: v for v in c.modelDescription.modelVariables} for c in comps]
    md = ModelDescription(fmiVersion="3.0", modelName="Container",
                          instantiationToken=str(uuid.uuid4()))
    md.coSimulation = CoSimulation(modelIdentifier="container_fmu")
    md.coSimulation.fixedInternalStepSize = 0.01
    md.defaultExperiment = DefaultExperiment(startTime="0", stopTime="1", stepSize="0.01")
    t = ModelVariable(name="time", causality="independent", variability="continuous",
                      type="Float64")
    u = ModelVariable(name="u", causality="input", variability="continuous", type="Float64",
                      start="0")
    y = ModelVariable(name="y", causality="output", variability="continuous", type="Float64")
    md.modelVariables = [t, u, y]
    md.outputs = [Unknown(index=3, variable=y)]
    md.initialUnknowns = [Unknown(index=3, variable=y)]
    conns = [Connection(comps[i], [var[i]["y"]], comps[i + 1], [var[i + 1]["u"]])
             for i in range(n - 1)]
    cfg = Configuration(parallelDoStep=False, modelDescription=md, components=comps,
                        connections=conns,
                        variableMappings={u: [(comps[0], var[0]["u"])],
                                          y: [(comps[-1], var[-1]["y"])]})
    work = dest / "container"
    work.mkdir(parents=True, exist_ok=True)
    out = dest / "Container.fmu"
    create_container_fmu(cfg, work, out)
    return out
