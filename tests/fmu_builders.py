"""Build the FMUs the FMU-import tests use (made by tools we did not write, at test time).

* :func:`build_c_fmu`: a hand-written C model (``tests/fmu_sources/<model>.h`` +
  ``<model>.xml``) around the FMI 2.0 ME+CS template ``fmi2_template.c``, compiled with
  gcc against the FMI headers that ship inside fmpy, zipped as an FMU (sources included).
* :func:`build_pythonfmu`: a Python class exported with pythonfmu (FMI 2.0 CS) or
  pythonfmu3 (FMI 3.0 CS or ME).
* :func:`zip_dir`, :func:`rewrite_fmu`: helpers to make broken FMUs from good ones.

The session fixtures in ``tests/unit/fmus/conftest.py`` and ``tests/system/conftest.py``
call these once per test session.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import textwrap
import zipfile
from pathlib import Path

SOURCES = Path(__file__).parent / "fmu_sources"


def fmpy_headers() -> Path:
    import fmpy
    return Path(fmpy.__file__).parent / "c-code"


def zip_dir(src: Path, dst: Path) -> Path:
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(src.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(src).as_posix())
    return dst


def build_c_fmu(model: str, dest: Path, *, fmi: int = 2, binary: bool = True,
                xml: str | None = None, name: str | None = None) -> Path:
    """Compile ``fmu_sources/<model>.h`` into ``dest/<ModelIdentifier>.fmu``.

    ``fmi=2`` uses ``<model>.xml`` and ``fmi2_template.c``; ``fmi=3`` uses
    ``<model>3.xml`` and ``fmi3_template.c``.  ``xml`` replaces the model description
    text; ``binary=False`` leaves the binary out (a source-only FMU).
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    suffix = "" if fmi == 2 else "3"
    text = xml if xml is not None else (SOURCES / f"{model}{suffix}.xml").read_text()
    mid = re.search(r'modelIdentifier="(\w+)"', text).group(1)
    template = f"fmi{fmi}_template.c"
    platform = "linux64" if fmi == 2 else "x86_64-linux"
    with tempfile.TemporaryDirectory() as td:
        root = Path(td) / "fmu"
        src = root / "sources"
        src.mkdir(parents=True)
        (root / "modelDescription.xml").write_text(text)
        shutil.copy(SOURCES / template, src / template)
        shutil.copy(SOURCES / f"{model}.h", src / "model.h")
        if binary:
            out = root / "binaries" / platform
            out.mkdir(parents=True)
            cmd = ["gcc", "-O2", "-shared", "-fPIC", "-fvisibility=default",
                   f"-I{fmpy_headers()}", f"-I{src}", str(src / template),
                   "-o", str(out / f"{mid}.so"), "-lm"]
            subprocess.run(cmd, check=True, capture_output=True, text=True)
        return zip_dir(root, dest / f"{name or mid}.fmu")


def build_pythonfmu(source: str, dest: Path, *, fmi: int = 2, **options) -> Path:
    """Export the class in ``source`` (Python text) with pythonfmu (``fmi=2``) or pythonfmu3.

    ``options`` are the builders' model options, e.g. ``canGetAndSetFMUstate=True``
    (pythonfmu) / ``canGetAndSetFMUState=True`` (pythonfmu3).
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    cls = re.search(r"^class (\w+)", source, re.M).group(1)
    with tempfile.TemporaryDirectory() as td:
        script = Path(td) / f"{cls.lower()}_model.py"
        script.write_text(textwrap.dedent(source))
        if fmi == 2:
            from pythonfmu.builder import FmuBuilder
        else:
            from pythonfmu3.builder import FmuBuilder
        opts = {k: str(v).lower() if isinstance(v, bool) else v for k, v in options.items()}
        return Path(FmuBuilder.build_FMU(script, dest=dest, **opts))


def rewrite_fmu(src: Path, dst: Path, *, replace: dict | None = None,
                drop: tuple = (), add: dict | None = None) -> Path:
    """Copy an FMU archive, replacing entries' text, dropping entries or adding raw entries."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if any(info.filename.startswith(d) for d in drop):
                continue
            data = zin.read(info)
            for name, (old, new) in (replace or {}).items():
                if info.filename == name:
                    text = data.decode()
                    assert old in text, (old, name)
                    data = text.replace(old, new).encode()
            zout.writestr(info, data)
        for name, data in (add or {}).items():
            zout.writestr(name, data)
    return dst


# ----------------------------------------------------------------- Python models
LIM_M2 = '''
import math

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer, Real


class LimMass2(Fmi2Slave):
    """LIM oscillator mass 2: m2 x2'' = -k2 x2 - c2 v2 + fc, RK4 with `substeps` steps."""

    author = "cosim tests"
    description = "LIM two-mass oscillator, mass 2 (pythonfmu)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.m2 = 1.0
        self.k2 = 1000.0
        self.c2 = 0.0
        self.fc = 0.0
        self.x2 = 0.0
        self.v2 = -100.0
        self.substeps = 10
        self.register_variable(Real("m2", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.fixed))
        self.register_variable(Real("k2", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.tunable))
        self.register_variable(Real("c2", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.tunable))
        self.register_variable(Integer("substeps", causality=Fmi2Causality.parameter,
                                       variability=Fmi2Variability.fixed))
        self.register_variable(Real("fc", causality=Fmi2Causality.input))
        self.register_variable(Real("x2", causality=Fmi2Causality.output))
        self.register_variable(Real("v2", causality=Fmi2Causality.output))

    def _f(self, x, v):
        return v, (-self.k2 * x - self.c2 * v + self.fc) / self.m2

    def do_step(self, current_time, step_size):
        h = step_size / self.substeps
        x, v = self.x2, self.v2
        for _ in range(self.substeps):
            k1 = self._f(x, v)
            k2 = self._f(x + 0.5 * h * k1[0], v + 0.5 * h * k1[1])
            k3 = self._f(x + 0.5 * h * k2[0], v + 0.5 * h * k2[1])
            k4 = self._f(x + h * k3[0], v + h * k3[1])
            x += h / 6.0 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            v += h / 6.0 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        self.x2, self.v2 = x, v
        return True
'''

LIM_M2_FMI3 = '''
from pythonfmu3 import Fmi3Causality, Fmi3Slave, Fmi3Variability, Float64, Unit


class LimMass2v3(Fmi3Slave):
    """LIM oscillator mass 2 as an FMI 3.0 CS FMU (pythonfmu3), RK4 with 10 sub-steps."""

    author = "cosim tests"
    description = "LIM two-mass oscillator, mass 2 (pythonfmu3)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.m2 = 1.0
        self.k2 = 1000.0
        self.fc = 0.0
        self.x2 = 0.0
        self.v2 = -100.0
        self.register_units([Unit("m", m=1), Unit("m/s", m=1, s=-1), Unit("N", kg=1, m=1, s=-2),
                             Unit("kg", kg=1), Unit("N/m", kg=1, s=-2)])
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Float64("m2", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.fixed, unit="kg"))
        self.register_variable(Float64("k2", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.tunable, unit="N/m"))
        self.register_variable(Float64("fc", causality=Fmi3Causality.input, unit="N"))
        self.register_variable(Float64("x2", causality=Fmi3Causality.output, unit="m"))
        self.register_variable(Float64("v2", causality=Fmi3Causality.output, unit="m/s"))

    def _f(self, x, v):
        return v, (-self.k2 * x + self.fc) / self.m2

    def do_step(self, current_time, step_size):
        h = step_size / 10
        x, v = self.x2, self.v2
        for _ in range(10):
            k1 = self._f(x, v)
            k2 = self._f(x + 0.5 * h * k1[0], v + 0.5 * h * k1[1])
            k3 = self._f(x + 0.5 * h * k2[0], v + 0.5 * h * k2[1])
            k4 = self._f(x + h * k3[0], v + h * k3[1])
            x += h / 6.0 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            v += h / 6.0 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        self.x2, self.v2 = x, v
        self.time = current_time + step_size
        return True
'''

DAHLQUIST_ME3 = '''
from pythonfmu3 import (Fmi3Causality, Fmi3Initial, Fmi3SlaveBase, Fmi3Variability, Float64,
                        ModelExchange)


class Decay3(Fmi3SlaveBase, ModelExchange):
    """x' = -k x + u, y = x (FMI 3.0 Model Exchange by pythonfmu3)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.k = 2.0
        self.x = 1.0
        self.derx = 0.0
        self.u = 0.0
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Float64("x", causality=Fmi3Causality.output, start=1,
                                       variability=Fmi3Variability.continuous,
                                       initial=Fmi3Initial.exact))
        self.register_variable(Float64("derx", causality=Fmi3Causality.local,
                                       variability=Fmi3Variability.continuous, derivative=1))
        self.register_variable(Float64("k", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.fixed))
        self.register_variable(Float64("u", causality=Fmi3Causality.input, start=0))

    def get_continuous_state_derivatives(self):
        self.derx = -self.k * self.x + self.u
        return [self.derx]
'''

SLOW_OR_FAILING = '''
import time

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer, Real


class Misbehave(Fmi2Slave):
    """y = u; mode 1: raise in do_step from t >= 0.05 (fmi2Error), mode 2: sleep forever."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.u = 0.0
        self.y = 0.0
        self.mode = 0
        self.register_variable(Integer("mode", causality=Fmi2Causality.parameter,
                                       variability=Fmi2Variability.fixed))
        self.register_variable(Real("u", causality=Fmi2Causality.input))
        self.register_variable(Real("y", causality=Fmi2Causality.output))

    def do_step(self, current_time, step_size):
        if current_time >= 0.05 - 1e-12:
            if self.mode == 1:
                raise ValueError(f"cannot go on at t = {current_time:g}: input u = {self.u}")
            if self.mode == 2:
                while True:
                    time.sleep(1.0)
        self.y = self.u
        return True
'''


# ----------------------------------------------------------------- the session set
class FMUSet:
    """The test FMUs, each built on first use into one directory (once per session)."""

    C_MODELS = {"Oscillator": ("oscillator", 2), "BouncingBall": ("bouncing_ball", 2),
                "LoopA": ("loop_a", 2), "Faulty": ("faulty", 2),
                "Oscillator3": ("oscillator", 3), "BouncingBall3": ("bouncing_ball", 3)}

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._paths: dict[str, Path] = {}

    def __getitem__(self, name: str) -> Path:
        p = self._paths.get(name)
        if p is None:
            p = self._paths[name] = self._build(name)
        return p

    def _build(self, name: str) -> Path:
        d = self.root
        if name in self.C_MODELS:
            model, fmi = self.C_MODELS[name]
            return build_c_fmu(model, d, fmi=fmi)
        if name == "LimMass2":
            return build_pythonfmu(LIM_M2, d, fmi=2, canGetAndSetFMUstate=True,
                                   canSerializeFMUstate=True)
        if name == "LimMass2v3":
            # pythonfmu3 0.3.4 writes canHandleVariableCommunicationStepSize from a stale
            # loop variable ("false" here): the rewrite states what the slave does
            raw = build_pythonfmu(LIM_M2_FMI3, d / "raw", fmi=3, canGetAndSetFMUState=True,
                                  canSerializeFMUState=True)
            return rewrite_fmu(raw, d / "LimMass2v3.fmu", replace={"modelDescription.xml": (
                'canHandleVariableCommunicationStepSize="false"',
                'canHandleVariableCommunicationStepSize="true"')})
        if name == "Decay3":
            return build_pythonfmu(DAHLQUIST_ME3, d, fmi=3)
        if name == "Misbehave":
            return build_pythonfmu(SLOW_OR_FAILING, d, fmi=2)
        raise KeyError(name)


_SESSION: dict[str, FMUSet] = {}


def session_fmus(tmp_path_factory) -> FMUSet:
    """One :class:`FMUSet` per test session (shared by the unit and system tests)."""
    if "fmus" not in _SESSION:
        if shutil.which("gcc") is None:
            import pytest
            pytest.skip("gcc is needed to build the test FMUs")
        _SESSION["fmus"] = FMUSet(tmp_path_factory.mktemp("test_fmus"))
    return _SESSION["fmus"]
