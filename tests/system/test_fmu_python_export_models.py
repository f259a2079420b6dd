"""Python FMUs exported from model files and packages run anywhere (issue 30, items 1-2).

`cosim fmu export quarter_car.py x.fmu --via python` refused a model file; with
`quarter_car:build` it needed PYTHONPATH at export and at run time, and a missing module
showed as fmpy's bare "Failed to instantiate model" (`cosim fmu validate --instantiate`
said valid in the model's folder, INVALID elsewhere, blaming the instantiation token).

The corpus: a model file importing sibling helper modules (one through the other), a
module of a package with relative and absolute imports of its package, a model file in a
package folder, each exported as FMI 2 and FMI 3 from its own folder by the command line.
The oracle is FMPy: each FMU simulated by ``fmpy.simulate_fmu`` in a fresh interpreter
(``python -I``: no PYTHONPATH, no current folder on the path) in another folder equals
``cosim run`` of the same model.  Every FMU runs in a child process (pythonfmu's wrappers
may abort at exit after an unload, see fmus.pyslave3).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")
pytest.importorskip("pythonfmu3")

from cosim.writers import read_csv  # noqa: E402
from tests.fmu_builders import rewrite_fmu  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]

PARAMS = 'PARAMS = {"m": 250.0, "k": 16000.0, "c": 1000.0, "f": 500.0}\n'

#: a forced mass-spring-damper in blocks (the helper every model uses)
OSCILLATOR = '''
def oscillator(b, name, p):
    """x'' = (f sin(2 pi t) - c x' - k x) / m; returns the position port."""
    from blocks.continuous import Integrator
    from blocks.math import Gain, Sum
    from blocks.sources import Sine
    f = b.add(Sine(f"{name}_f", p["f"], 1.0))
    s = b.add(Sum(f"{name}_s", "+--"))
    a = b.add(Gain(f"{name}_a", 1.0 / p["m"]))
    v = b.add(Integrator(f"{name}_v", 0.0))
    x = b.add(Integrator(f"{name}_x", X0))
    k = b.add(Gain(f"{name}_k", p["k"]))
    c = b.add(Gain(f"{name}_c", p["c"]))
    b.connect(f.y, s.ins[0])
    b.connect(k.y, s.ins[1])
    b.connect(c.y, s.ins[2])
    b.connect(s.y, a.u)
    b.connect(a.y, v.u)
    b.connect(v.y, x.u)
    b.connect(x.y, k.u)
    b.connect(v.y, c.u)
    return x.y
'''

#: folder -> {file: source}; the model of each case and the column of its output
FILES = {
    "sibling": {
        "qc_params.py": PARAMS,
        "qc_blocks.py": "import numpy as np\n\nX0 = float(np.float64(0.01))\n" + OSCILLATOR,
        "quarter_car.py": textwrap.dedent('''
            import qc_blocks
            from cosim import DiagramBuilder

            SIMULATION = {"t_end": 1.0, "dt": 1e-3}


            def build():
                from qc_params import PARAMS  # imported inside the function
                b = DiagramBuilder("quarter_car")
                b.export_output(qc_blocks.oscillator(b, "body", PARAMS), "z")
                return b.build()
            '''),
    },
    "pkg": {
        "proj/__init__.py": "",
        "proj/common.py": PARAMS,
        "proj/models/__init__.py": "from . import helpers  # noqa: F401\n",
        "proj/models/helpers.py": "X0 = 0.02\n" + OSCILLATOR,
        "proj/models/car.py": textwrap.dedent('''
            from cosim import DiagramBuilder

            from proj.common import PARAMS

            from .helpers import oscillator

            SIMULATION = {"t_end": 1.0, "dt": 5e-4, "solver": "heun"}


            def build():
                b = DiagramBuilder("car")
                b.export_output(oscillator(b, "wheel", PARAMS), "zw")
                return b.build()
            '''),
        # `cosim run` of the package's model: a model file that imports it
        "run_car.py": ("from proj.models import car\n\nSIMULATION = car.SIMULATION\n\n\n"
                       "def build():\n    return car.build()\n"),
        # a model file in the package's folder, importing its sibling as cosim run does
        "proj/models/plain.py": textwrap.dedent('''
            import helpers
            from cosim import DiagramBuilder

            SIMULATION = {"t_end": 0.5, "dt": 1e-3}
            P = {"m": 100.0, "k": 4000.0, "c": 100.0, "f": 50.0}


            def build():
                b = DiagramBuilder("plain")
                b.export_output(helpers.oscillator(b, "mass", P), "x")
                return b.build()
            '''),
    },
}

#: (case, folder, model argument, `cosim run` file, output name, recorded column,
#:  the files the bundle must hold)
CASES = [
    ("file", "sibling", "quarter_car.py", "quarter_car.py", "z", "body_x.y",
     {"quarter_car.py", "qc_blocks.py", "qc_params.py"}),
    ("package", "pkg", "proj.models.car:build", "run_car.py", "zw", "wheel_x.y",
     {"proj/__init__.py", "proj/common.py", "proj/models/__init__.py",
      "proj/models/helpers.py", "proj/models/car.py"}),
    ("file-in-package", "pkg", "proj/models/plain.py", "proj/models/plain.py", "x",
     "mass_x.y", {"plain.py", "helpers.py"}),
]


def _write(folder: pathlib.Path, files: dict) -> None:
    for rel, text in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def cosim(*argv: str, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    """The cosim command in a child, in ``cwd``, without PYTHONPATH (as a user runs it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "cosim", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


#: FMPy in a fresh interpreter: results as JSON, then out without the interpreter's exit
FMPY = """
import json, os, sys
from fmpy import simulate_fmu
r = simulate_fmu(sys.argv[1], stop_time=float(sys.argv[2]), output_interval=float(sys.argv[3]))
print(json.dumps({n: [float(x) for x in r[n]] for n in r.dtype.names}))
sys.stdout.flush()
os._exit(0)
"""


def fmpy_clean(fmu: pathlib.Path, t_end: float, h: float, cwd: pathlib.Path
               ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-c", FMPY, str(fmu), repr(t_end), repr(h)],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    for folder, files in FILES.items():
        _write(root / folder, files)
    return root


@pytest.mark.parametrize("fmi", ["2", "3"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_an_exported_python_fmu_runs_anywhere_and_equals_cosim_run(case, fmi, corpus,
                                                                   tmp_path):
    name, folder, model, run_file, output, column, bundled = case
    here = corpus / folder
    fmu = tmp_path / f"{name}{fmi}.fmu"
    r = cosim("fmu", "export", model, str(fmu), "--via", "python", "--fmi", fmi, cwd=here)
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(fmu) as z:
        got = {n.removeprefix("resources/cosim_model/") for n in z.namelist()
               if n.startswith("resources/cosim_model/")}
    assert got == bundled
    # the oracle: cosim run of the same model, with its SIMULATION settings
    r = cosim("run", run_file, "--out", str(tmp_path / "run"), "-q", cwd=here)
    assert r.returncode == 0, r.stderr
    ref = read_csv(tmp_path / "run" / "results.csv")
    t_end, h = float(ref.time[-1]), float(ref.time[1] - ref.time[0])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = fmpy_clean(fmu, t_end, h, elsewhere)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(res["time"]) == len(ref.time)
    np.testing.assert_allclose(res["time"], ref.time, rtol=0, atol=1e-12)
    z = np.asarray(ref.signals[column])
    assert np.max(np.abs(z)) > 1e-3  # the model moves
    # same solver, same step, same tick grid: the same numbers (measured: identical)
    np.testing.assert_allclose(res[output], z, rtol=1e-12, atol=1e-15)


def test_a_model_file_with_a_missing_import_is_refused_at_export(tmp_path):
    (tmp_path / "broken.py").write_text("import helper_that_is_not_there\n\n\ndef build():\n"
                                        "    pass\n")
    r = cosim("fmu", "export", "broken.py", "x.fmu", "--via", "python", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "importing the model file failed (line 1): ModuleNotFoundError: No module named " \
           "'helper_that_is_not_there'" in r.stderr
    assert not (tmp_path / "x.fmu").exists()


def test_a_model_that_needs_a_data_file_is_refused_at_export(tmp_path):
    """Only modules are bundled: a model reading a file beside it would fail elsewhere."""
    (tmp_path / "table.csv").write_text("0,1\n1,2\n")
    (tmp_path / "dm.py").write_text(textwrap.dedent('''
        from pathlib import Path

        import numpy as np
        from blocks.sources import Constant
        from cosim import DiagramBuilder

        K = np.loadtxt(Path(__file__).with_name("table.csv"), delimiter=",")[1, 1]


        def build():
            b = DiagramBuilder("dm")
            b.export_output(b.add(Constant("c", float(K))).y, "y")
            return b.build()
        '''))
    r = cosim("fmu", "export", "dm.py", "x.fmu", "--via", "python", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "the FMU would not run elsewhere" in r.stderr and "table.csv" in r.stderr
    assert not (tmp_path / "x.fmu").exists()


@pytest.fixture(scope="module")
def broken_fmus(corpus, tmp_path_factory):
    """The sibling case's FMUs without one bundled helper (as if it were missing)."""
    d = tmp_path_factory.mktemp("broken")
    out = {}
    for fmi in ("2", "3"):
        good = d / f"good{fmi}.fmu"
        r = cosim("fmu", "export", "quarter_car.py", str(good), "--via", "python", "--fmi",
                  fmi, cwd=corpus / "sibling")
        assert r.returncode == 0, r.stderr
        out[fmi] = rewrite_fmu(good, d / f"qc{fmi}.fmu",
                               drop=("resources/cosim_model/qc_params.py",))
    return out


MISSING = "needs the module 'qc_params', which is neither bundled in the FMU"


@pytest.mark.parametrize("fmi", ["2", "3"])
def test_a_missing_module_is_named_where_the_fmu_runs(fmi, broken_fmus, tmp_path):
    """FMPy without debug logging said only "Failed to instantiate model"."""
    r = fmpy_clean(broken_fmus[fmi], 0.1, 1e-3, tmp_path)
    assert r.returncode != 0
    assert MISSING in r.stderr, r.stderr[-3000:]


@pytest.mark.parametrize("fmi", ["2", "3"])
def test_validate_instantiate_reports_the_missing_module_not_the_token(fmi, broken_fmus,
                                                                       tmp_path):
    r = cosim("fmu", "validate", str(broken_fmus[fmi]), "--instantiate", cwd=tmp_path)
    assert r.returncode == 1
    problem = next(ln for ln in r.stdout.splitlines() if ln.startswith("  error: "))
    assert MISSING in problem and "check the instantiation token" not in problem, problem


@pytest.mark.parametrize("fmi", ["2", "3"])
@pytest.mark.parametrize("where", ["in-process", "out-of-process"])
def test_simulate_and_validate_work_from_any_folder(fmi, where, corpus, tmp_path):
    """The FMI 2 Python FMU failed in process (the load check spent pythonfmu 0.7's one
    instance per process) and worked out of process; both now, from any folder."""
    fmu = tmp_path / "qc.fmu"
    assert cosim("fmu", "export", "quarter_car.py", str(fmu), "--via", "python", "--fmi", fmi,
                 cwd=corpus / "sibling").returncode == 0
    r = cosim("fmu", "validate", str(fmu), "--instantiate", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.rstrip().endswith(": valid"), r.stdout + r.stderr
    extra = ["--out-of-process"] if where == "out-of-process" else []
    r = cosim("fmu", "simulate", str(fmu), "--t-end", "1", "--step", "1e-3", "--out", "res",
              "-q", *extra, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    res = read_csv(tmp_path / "res" / "results.csv")
    ref = cosim("run", "quarter_car.py", "--out", str(tmp_path / "run"), "-q",
                cwd=corpus / "sibling")
    assert ref.returncode == 0, ref.stderr
    z = read_csv(tmp_path / "run" / "results.csv").signals["body_x.y"]
    np.testing.assert_allclose(res.signals["z"], z, rtol=1e-12, atol=1e-15)


def test_an_fmi2_python_fmu_that_does_not_declare_one_instance_runs_in_process(corpus,
                                                                              tmp_path):
    """FMUs of pythonfmu 0.7 exported before cosim declared
    canBeInstantiatedOnlyOncePerProcess (or by pythonfmu directly) say "false": the load
    check must not spend their one instance on a trial either."""
    fmu = tmp_path / "qc.fmu"
    assert cosim("fmu", "export", "quarter_car.py", str(fmu), "--via", "python",
                 cwd=corpus / "sibling").returncode == 0
    old = rewrite_fmu(fmu, tmp_path / "old.fmu", replace={"modelDescription.xml": (
        'canBeInstantiatedOnlyOncePerProcess="true"',
        'canBeInstantiatedOnlyOncePerProcess="false"')})
    r = cosim("fmu", "simulate", str(old), "--t-end", "0.1", "--out", "res", "-q",
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("model", ["quarter_car.py", "quarter_car:build"])
def test_the_cosim_script_exports_both_forms_from_the_models_folder(model, corpus, tmp_path):
    """The issue's commands, through the installed `cosim` script (whose path, unlike
    `python -m`'s, does not hold the current folder) and without PYTHONPATH."""
    script = pathlib.Path(sys.executable).with_name("cosim")
    if not script.exists():
        pytest.skip("cosim is not installed as a console script here")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    fmu = tmp_path / "qc.fmu"
    r = subprocess.run([str(script), "fmu", "export", model, str(fmu), "--via", "python"],
                       cwd=corpus / "sibling", env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    r = fmpy_clean(fmu, 0.1, 1e-3, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]


#: FMPy with its defaults (the FMU's DefaultExperiment): the last time and every output
FMPY_DEFAULTS = """
import json, os, sys
from fmpy import simulate_fmu
r = simulate_fmu(sys.argv[1])
print(json.dumps({n: float(r[n][-1]) for n in r.dtype.names}))
sys.stdout.flush()
os._exit(0)
"""

#: a model file whose SIMULATION is not FMPy's default (t_end 2.5 s, not 1 s)
SPRING = """
from blocks.continuous import Integrator
from blocks.math import Gain, Sum
from blocks.sources import Step
from cosim import DiagramBuilder

SIMULATION = {"t_end": 2.5, "dt": 5e-4}


def build():
    b = DiagramBuilder("spring")
    f = b.add(Step("f", time_s=0.1, final=10.0))
    s = b.add(Sum("s", "+--"))
    v = b.add(Integrator("v", 0.0))
    x = b.add(Integrator("x", 0.0))
    c = b.add(Gain("c", 2.0))
    k = b.add(Gain("k", 40.0))
    b.connect(f.y, s.ins[0])
    b.connect(c.y, s.ins[1])
    b.connect(k.y, s.ins[2])
    b.connect(s.y, v.u)
    b.connect(v.y, x.u)
    b.connect(v.y, c.u)
    b.connect(x.y, k.u)
    b.export_output(x.y, "z")
    return b.build()
"""


@pytest.mark.parametrize("via, fmi", [("c", "2"), ("c", "3"), ("python", "2"),
                                      ("python", "3")])
def test_fmpy_with_its_defaults_runs_what_cosim_run_runs(via, fmi, tmp_path):
    """An FMU exported from a model file carries the file's SIMULATION as its
    DefaultExperiment (stopTime = t_end, stepSize = dt): `fmpy simulate x.fmu` and `cosim
    fmu simulate x.fmu` without options run what `cosim run` of the file runs (they ran to
    1 s, FMPy's default, instead of the file's t_end)."""
    if via == "c" and __import__("shutil").which("gcc") is None:
        pytest.skip("gcc is needed for the generated-C FMU")
    (tmp_path / "spring.py").write_text(SPRING)
    fmu = tmp_path / f"spring_{via}{fmi}.fmu"
    r = cosim("fmu", "export", "spring.py", str(fmu), "--via", via, "--fmi", fmi,
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = cosim("run", "spring.py", "--out", str(tmp_path / "run"), "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ref = read_csv(tmp_path / "run" / "results.csv")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = subprocess.run([sys.executable, "-I", "-c", FMPY_DEFAULTS, str(fmu)], cwd=elsewhere,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    last = json.loads(r.stdout.strip().splitlines()[-1])
    assert float(ref.time[-1]) == 2.5 and last["time"] == pytest.approx(2.5, abs=1e-12)
    z = float(np.asarray(ref.signals["x.y"])[-1])
    assert abs(z) > 1e-3
    # Python FMUs run cosim's own solver, the generated C the same RK4 in C: the same
    # numbers up to the order of the C compiler's operations
    assert last["z"] == pytest.approx(z, rel=1e-12, abs=1e-15)
    r = cosim("fmu", "simulate", str(fmu), "--out", str(tmp_path / "sim"), "-q",
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert float(read_csv(tmp_path / "sim" / "results.csv").time[-1]) == 2.5
