"""SSP step size and solver annotations: cosim's, OMSimulator's (2 and 3), and the others.

OMSimulator writes ``ssc:Annotation type="org.openmodelica"`` with ``oms:SimulationInformation``
(see :mod:`fmus.ssp.annotations`); what cosim cannot use is a note, never an error.
"""

from __future__ import annotations

import re
import zipfile

import numpy as np
import pytest

pytest.importorskip("fmpy")

from fmus.ssp import SSPError, export_ssp, export_system, load_ssp, read_ssp  # noqa: E402
from tests.fmu_builders import rewrite_fmu  # noqa: E402

SSD = "SystemStructure.ssd"
CONNS = [("lag.y", "osc.F"), ("osc.x", "lag.u", (3.0, 0.5)), ("osc.v", "v_out")]
OMS = ('<ssd:Annotations><ssc:Annotation type="org.openmodelica"><oms:Annotations xmlns:oms='
       '"https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd">'
       "{}</oms:Annotations></ssc:Annotation></ssd:Annotations>")


@pytest.fixture(scope="module")
def pair(fmu_files, tmp_path_factory):
    """LoopA (lag) and Oscillator (osc), with cosim's step annotation (1 ms)."""
    d = tmp_path_factory.mktemp("ssp_ann")
    return export_ssp(d / "pair.ssp", {"lag": fmu_files["LoopA"], "osc": fmu_files["Oscillator"]},
                      CONNS, parameters={"osc": {"k": 100.0}}, name="pair", stop=0.5,
                      step_s=1e-3)


@pytest.fixture(scope="module")
def plain(fmu_files, tmp_path_factory):
    """The same without a step annotation."""
    d = tmp_path_factory.mktemp("ssp_plain")
    return export_ssp(d / "plain.ssp", {"lag": fmu_files["LoopA"],
                                        "osc": fmu_files["Oscillator"]},
                      CONNS, name="pair", stop=1.0)


def _system_annotation(src, dst, inner):
    return rewrite_fmu(src, dst, replace={SSD: ("</ssd:Connections>\n  </ssd:System>",
                                                "</ssd:Connections>" + OMS.format(inner)
                                                + "</ssd:System>")})


def test_annotations_of_other_tools_are_notes_not_errors(pair, tmp_path):
    other = ('<ssd:Annotations><ssc:Annotation type="com.example.layout"><ex:Layout '
             'xmlns:ex="urn:example" zoom="2"/></ssc:Annotation></ssd:Annotations>')
    oms = ('<ssd:Annotations><ssc:Annotation type="org.openmodelica"><oms:Annotations xmlns:oms='
           '"https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd">'
           '<oms:SimulationInformation><oms:Tlm freq="2"/></oms:SimulationInformation>'
           "</oms:Annotations></ssc:Annotation></ssd:Annotations>")
    exp = ('<ssd:DefaultExperiment startTime="0.0" stopTime="0.5"><ssd:Annotations>'
           '<ssc:Annotation type="org.openmodelica"><oms:Annotations xmlns:oms="urn:oms">'
           '<oms:SimulationInformation resultFile="pair_res.mat" bufferSize="10"/>'
           "</oms:Annotations></ssc:Annotation></ssd:Annotations></ssd:DefaultExperiment>")
    text = zipfile.ZipFile(pair).read(SSD).decode()
    text = text.replace("</ssd:ParameterBindings>\n      </ssd:Component>",
                        f"</ssd:ParameterBindings>{other}</ssd:Component>", 1)
    text = text.replace("</ssd:Connections>\n  </ssd:System>",
                        f"</ssd:Connections>{oms}</ssd:System>")
    text = text.replace('<ssd:DefaultExperiment startTime="0.0" stopTime="0.5"/>', exp)
    p = rewrite_fmu(pair, tmp_path / "a.ssp", replace={SSD: (zipfile.ZipFile(pair).read(
        SSD).decode(), text)})
    s = read_ssp(p)
    notes = "\n".join(s.notes)
    assert re.search(r"SystemStructure.ssd line \d+: component 'osc': annotation of type "
                     "'com.example.layout' ignored", notes)
    assert re.search(r"line \d+: system 'pair': OMSimulator setting 'Tlm' ignored", notes)
    assert re.search(r"line \d+: DefaultExperiment: OMSimulator's resultFile, bufferSize "
                     "ignored", notes)
    assert (s.step_s, s.stop) == (1e-3, 0.5)  # cosim's own annotation still read
    assert load_ssp(s).run(0.002).time[-1] == 0.002


def test_an_omsimulator_fixed_step_master_gives_the_macro_step_and_the_tolerance(plain,
                                                                                 tmp_path):
    p = _system_annotation(plain, tmp_path / "ma.ssp", '<oms:SimulationInformation>'
                           '<oms:FixedStepMaster description="oms-ma" stepSize="0.002000" '
                           'relativeTolerance="0.000010"/></oms:SimulationInformation>')
    s = read_ssp(p)
    assert (s.step_s, s.tolerance, s.step_control) == (0.002, 1e-5, None)
    m = load_ssp(s)
    assert m.H == 2_000_000 and {sub.tolerance for sub in m.subsystems} == {1e-5}
    assert load_ssp(plain).H == 1_000_000  # without it: the FMU's DefaultExperiment step


def test_an_omsimulator_variable_step_master_becomes_cosims_step_control(plain, tmp_path):
    """oms-mav's step limits and tolerance go to a StepController ("extrapolation"), its
    initial step is the first macro step; the export refuses to drop it silently."""
    from cosim import StepController
    p = _system_annotation(plain, tmp_path / "mav.ssp", '<oms:SimulationInformation>'
                           '<oms:VariableStepMaster description="oms-mav" '
                           'initialStepSize="0.001000" minimumStepSize="0.000100" '
                           'maximumStepSize="0.050000" relativeTolerance="0.000100"/>'
                           "</oms:SimulationInformation>")
    s = read_ssp(p)
    assert s.step_control == {"h0": 1e-3, "h_min": 1e-4, "h_max": 0.05, "rtol": 1e-4}
    m = load_ssp(s)
    sc = m.step_control
    assert isinstance(sc, StepController) and sc.method == "extrapolation"
    assert (sc.rtol, sc.h_min_s, sc.h_max_s, m.H) == (1e-4, 1e-4, 0.05, 1_000_000)
    res = m.run()
    steps = np.diff(res.time)
    assert res.time[-1] == 1.0 and steps.max() > 4 * steps.min()  # the step was controlled
    with pytest.raises(SSPError, match="cannot write the variable-step master of the "
                                       "annotation; give step_s="):
        export_system(s, tmp_path / "out.ssp")
    assert read_ssp(export_system(s, tmp_path / "out.ssp", step_s=0.01)).step_s == 0.01


@pytest.mark.parametrize("solver, method, dt, rtol", [
    ('<oms:VariableStepSolver description="cvode" relativeTolerance="0.000001" '
     'minimumStepSize="0.000001" maximumStepSize="0.010000" initialStepSize="0.000001"/>',
     "bdf", None, 1e-6),
    ('<oms:VariableStepSolver description="euler" relativeTolerance="0.000100" '
     'minimumStepSize="0.000100" maximumStepSize="0.000500" initialStepSize="0.000100"/>',
     "euler", 5e-4, None),
    ('<oms:FixedStepSolver description="euler" stepSize="0.000250"/>', "euler", 2.5e-4, None),
])
def test_an_omsimulator_sc_system_integrates_its_components_through_model_exchange(
        plain, tmp_path, solver, method, dt, rtol):
    """OMSimulator 2: a system with a VariableStepSolver/FixedStepSolver is strongly coupled:
    its FMUs (implementation "any") run through Model Exchange, in one unit."""
    p = _system_annotation(plain, tmp_path / "sc.ssp",
                           f"<oms:SimulationInformation>{solver}</oms:SimulationInformation>")
    p = rewrite_fmu(p, tmp_path / "any.ssp", replace={SSD: ('implementation="CoSimulation"',
                                                             'implementation="any"')})
    s = read_ssp(p)
    assert {c.unit for c in s.components.values()} == {"pair_me"}
    sv = s.solvers["pair_me"]
    assert (sv.method, sv.dt, sv.rtol) == (method, dt, rtol)
    if method == "bdf":
        assert "OMSimulator's cvode runs as cosim's 'bdf'" in "\n".join(s.notes)
        assert "cvode's minimumStepSize and initialStepSize are not used" in "\n".join(s.notes)
    res = load_ssp(s, step_s=1e-3).run(0.05)
    assert res["osc.x"][0] == 0.1 and res["osc.x"][-1] < 0.1
    # no master annotation, every component ME: the master communicates at the solver step
    assert load_ssp(s).H == round((dt or 0.01) * 1e9)


def test_omsimulator3_named_solvers_and_their_errors(plain, tmp_path):
    """OMSimulator 3: solvers defined by name on the system, components refer to them."""
    defs = ('<oms:SimulationInformation name="me1" method="euler" fixedStepSize="0.0001"/>'
            '<oms:SimulationInformation name="ma" method="oms_ma" fixedStepSize="0.005" '
            'tolerance="1e-07"/>')
    ref = ('<ssd:Annotations><ssc:Annotation type="org.openmodelica"><oms:Annotations '
           'xmlns:oms="urn:oms"><oms:SimulationInformation name="{}"/></oms:Annotations>'
           "</ssc:Annotation></ssd:Annotations></ssd:Component>")
    p = _system_annotation(plain, tmp_path / "d.ssp", defs)
    text = zipfile.ZipFile(p).read(SSD).decode()
    new = text.replace("</ssd:Connectors>\n      </ssd:Component>",
                       "</ssd:Connectors>" + ref.format("me1"), 1)  # lag: the ME solver
    new = new.replace("</ssd:Connectors>\n      </ssd:Component>",
                      "</ssd:Connectors>" + ref.format("ma"), 1)    # osc: the master
    new = new.replace('source="resources/LoopA.fmu" implementation="CoSimulation"',
                      'source="resources/LoopA.fmu" implementation="any"')
    p2 = rewrite_fmu(p, tmp_path / "n.ssp", replace={SSD: (text, new)})
    s = read_ssp(p2)
    assert (s.components["lag"].unit, s.components["osc"].unit) == ("me1", None)
    assert (s.solvers["me1"].method, s.solvers["me1"].dt) == ("euler", 1e-4)
    assert (s.step_s, s.tolerance) == (0.005, 1e-7)
    bad = rewrite_fmu(p, tmp_path / "b.ssp", replace={SSD: (text, new.replace(
        'name="me1"/>', 'name="me2"/>'))})
    with pytest.raises(SSPError, match=r"line \d+: component 'lag' \(resources/LoopA.fmu\): "
                                       "refers to OMSimulator solver 'me2', which no system "
                                       "defines; valid names: me1, ma"):
        read_ssp(bad)
    odd = _system_annotation(plain, tmp_path / "o.ssp",
                             '<oms:SimulationInformation name="s" method="rk4"/>')
    with pytest.raises(SSPError, match=r"line \d+: system 'pair': OMSimulator solver 's' has "
                                       "method 'rk4'; cosim maps cvode, euler, oms-ma"):
        read_ssp(odd)
