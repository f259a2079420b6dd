"""Issue 31 item 3 on real FMUs: what FMPy runs loads (with one warning naming the rule
and the section of the FMU's standard), ``cosim fmu info`` never refuses, and where the
refusal is right the hint applies and ``validate='none'`` / ``--validate none`` runs it.

The model-description corpus (every rule broken one at a time against FMPy's reader) is
``tests/unit/fmus/test_description_corpus.py``.
"""

import warnings

import numpy as np
import pytest

from cosim.cli import main
from cosim.writers import read_csv
from fmus import load_fmu
from fmus.errors import FMUWarning, ModelDescriptionError
from tests.fmu_builders import build_pythonfmu, rewrite_fmu

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

# pythonfmu's README example: Integer/Boolean/String variables without a variability
from tests.corpus.exporters import PF2_README as README  # noqa: E402

# an Integer input echoed to an output; rewritten below into an Enumeration input
# declared continuous (FMPy's validation refuses it too)
ECHO = '''
from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer


class Echo(Fmi2Slave):

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.mode = 1
        self.out = 1
        self.register_variable(Integer("mode", causality=Fmi2Causality.input,
                                       variability=Fmi2Variability.discrete))
        self.register_variable(Integer("out", causality=Fmi2Causality.output,
                                       variability=Fmi2Variability.discrete))

    def do_step(self, current_time, step_size):
        self.out = self.mode
        return True
'''

MD = "modelDescription.xml"


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("lenient")
    readme = build_pythonfmu(README, d / "readme")
    echo = build_pythonfmu(ECHO, d / "echo")
    with __import__("zipfile").ZipFile(echo) as z:
        text = z.read(MD).decode()
    i = text.index('<ScalarVariable name="mode"')
    j = text.index("</ScalarVariable>", i)
    var = text[i:j]
    assert 'variability="discrete"' in var and "<Integer" in var, var
    new = var.replace('variability="discrete"', 'variability="continuous"').replace(
        "<Integer", '<Enumeration declaredType="Mode"')
    types = ('<TypeDefinitions><SimpleType name="Mode"><Enumeration><Item name="a" value="1"/>'
             '<Item name="b" value="2"/></Enumeration></SimpleType></TypeDefinitions>\n'
             '\t<LogCategories>')
    enum = rewrite_fmu(echo, d / "EnumContinuous.fmu", replace={MD: (var, new)})
    enum = rewrite_fmu(enum, d / "EnumContinuous2.fmu",
                       replace={MD: ("<LogCategories>", types)})
    return {"readme": readme, "enum": enum}


def _master(sub, t_end=0.1):
    from cosim import MasterScheduler
    return MasterScheduler([sub], [], 0.01, extrapolation=0, progress=False).run(t_end)


def test_pythonfmu_readme_fmu_loads_with_one_warning_and_runs_as_fmpy(fmus):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sub = load_fmu(fmus["readme"], name="p")
    mine = [w for w in caught if issubclass(w.category, FMUWarning)]
    assert len(mine) == 1, [str(w.message) for w in mine]
    text = str(mine[0].message)
    assert text.count("[rule: only Real/Float variables can be continuous (FMI 2.0 section "
                      "2.2.7)]") == 1, text
    assert "'intOut'" in text and "variability='discrete'" in text
    assert sub.info.variable("intOut").variability == "discrete"
    res = _master(sub)
    ref = fmpy.simulate_fmu(str(fmus["readme"]), stop_time=0.1, output_interval=0.01,
                            validate=False)
    np.testing.assert_array_equal(res.signals["p.intOut"][-1], ref["intOut"][-1])
    np.testing.assert_array_equal(res.signals["p.realOut"][-1], ref["realOut"][-1])


def test_pythonfmu_readme_fmu_on_the_command_line(fmus, tmp_path, capsys):
    assert main(["fmu", "info", str(fmus["readme"])]) == 0
    assert capsys.readouterr().err.count("FMI 2.0 section 2.2.7") == 1
    assert main(["fmu", "simulate", str(fmus["readme"]), "-q", "--t-end", "0.1",
                 "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert err.count("FMI 2.0 section 2.2.7") == 1, err  # one note for the run
    assert read_csv(tmp_path / "o" / "results.csv")["intOut"][-1] == 1


def test_a_right_refusal_has_a_hint_that_applies_and_runs_with_it(fmus, tmp_path, capsys):
    """An Enumeration input declared continuous: refused (FMPy's validation refuses it
    too), the hint names validate='none', and that runs it: the input reaches the FMU."""
    with pytest.raises(ModelDescriptionError) as exc:
        load_fmu(fmus["enum"])
    msg = str(exc.value)
    assert "variable 'mode'" in msg and "(FMI 2.0 section 2.2.7)" in msg
    assert "validate='none'" in msg and "--validate none" in msg
    assert "validate='warn'" not in msg  # the default: a hint that cannot help
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sub = load_fmu(fmus["enum"], name="e", validate="none", start={"mode": 2})
    assert any("validate='none'" in str(w.message) for w in caught)
    assert sub.info.variable("mode").variability == "discrete"  # set at communication points
    assert _master(sub).signals["e.out"][-1] == 2
    # the command line: refused with the option's spelling, runs with it, info never refuses
    argv = ["fmu", "simulate", str(fmus["enum"]), "-q", "--t-end", "0.05", "--set", "mode=2",
            "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert "--validate none" in capsys.readouterr().err
    assert main(argv + ["--validate", "none"]) == 0
    assert read_csv(tmp_path / "o" / "results.csv")["out"][-1] == 2
    assert main(["fmu", "info", str(fmus["enum"])]) == 0
    out = capsys.readouterr().out
    assert "1 of them break rules for which loading refuses the FMU" in out, out
    assert main(["fmu", "simulate", str(fmus["readme"]), "-q", "--validate", "strict",
                 "--out", str(tmp_path / "s")]) == 2
    assert "validate='warn'" in capsys.readouterr().err


def test_info_of_an_unreadable_model_description_lists_its_problems(fmus, tmp_path, capsys):
    """A variable without a valueReference (fmpy cannot read it): info says what the FMU is
    and why it cannot be loaded, with exit status 0."""
    bad = rewrite_fmu(fmus["readme"], tmp_path / "NoRef.fmu", replace={MD: (
        'name="realOut" valueReference="1"', 'name="realOut"')})
    assert main(["fmu", "info", str(bad)]) == 0
    out = capsys.readouterr().out
    assert "model 'PythonSlave', FMI 2.0" in out
    assert "error: variable 'realOut'" in out and "no valueReference" in out
