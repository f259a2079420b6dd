"""An optional package that is missing stops the command before its work starts, in one
line that names the extra to install (issue 23: ``cosim sweep`` used to fail only after
running every simulation, HDF5 output with a traceback).

Each case runs the CLI in a child process whose imports of the named packages fail (a
meta-path finder installed before anything else), as on a machine without the extra.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BLOCKER = textwrap.dedent("""
    import importlib.abc, os, sys
    BLOCK = set(os.environ["COSIM_TEST_BLOCK"].split(","))
    class _Missing(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in BLOCK:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, _Missing())
    for m in [m for m in sys.modules if m.split(".")[0] in BLOCK]:
        del sys.modules[m]
""")

MODEL = textwrap.dedent("""
    from blocks import Constant, Integrator
    from cosim import DiagramBuilder

    SIMULATION = {"t_end": 1.0, "dt": 0.01}

    def build(k=1.0):
        b = DiagramBuilder("m")
        c = b.add(Constant("c", k))
        i = b.add(Integrator("i"))
        b.connect(c.y, i.u)
        return b.build()
""")


def _cosim(tmp: Path, blocked: str, *argv: str) -> subprocess.CompletedProcess:
    code = BLOCKER + "from cosim.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    env = {**os.environ, "COSIM_TEST_BLOCK": blocked,
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp)])}
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def model(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def _one_line(out: subprocess.CompletedProcess, extra: str) -> str:
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2, out.stdout + out.stderr
    assert len(err) == 1 and err[0].startswith("cosim") and "Traceback" not in out.stderr, \
        out.stderr
    assert f"pip install 'cosim[{extra}]'" in err[0], err[0]
    return err[0]


def test_hdf5_output_without_h5py(model):
    out = _cosim(model, "h5py", "run", "model.py", "--format", "csv,hdf5", "--out", "o")
    assert "h5py" in _one_line(out, "hdf5")
    assert "wall time" not in out.stdout  # nothing was simulated
    assert not (model / "o" / "results.csv").exists()


def test_dask_backend_without_dask(model):
    out = _cosim(model, "dask,distributed", "sweep", "model.py", "--param", "k=1,2",
                 "--backend", "dask", "--out", "o", "-q")
    assert "Dask" in _one_line(out, "dist")
    assert not (model / "o" / "journal.jsonl").exists() \
        or not (model / "o" / "journal.jsonl").read_text().strip()  # no run ran


def test_python_fmu_export_without_pythonfmu(model):
    out = _cosim(model, "pythonfmu,pythonfmu3", "fmu", "export", "model:build", "--via",
                 "python", "o.fmu")
    assert "pythonfmu" in _one_line(out, "fmi-export")
    assert not (model / "o.fmu").exists()


def test_sweep_without_pyarrow_writes_csv_and_says_so(model):
    out = _cosim(model, "pyarrow", "sweep", "model.py", "--param", "k=1,2", "--out", "o",
                 "-q")
    assert out.returncode == 0, out.stderr
    assert (model / "o" / "results.csv").exists()
    assert not (model / "o" / "results.parquet").exists()
    assert "table: o/results.csv" in out.stdout


def test_every_extra_named_in_a_message_exists():
    """The messages name extras that pyproject.toml defines (and ``all`` has them all)."""
    import re
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    named = set()
    for pkg in ("cosim", "blocks", "fmus", "hil"):
        for p in (ROOT / pkg).rglob("*.py"):
            named |= set(re.findall(r"cosim\[([a-z0-9-]+)\]", p.read_text()))
    assert named, "no message names an extra"
    assert named <= set(extras), f"unknown extras named: {sorted(named - set(extras))}"
    everything = set(extras["all"])
    for name in named - {"all"}:
        assert set(extras[name]) <= everything, f"'all' misses the {name} extra"
