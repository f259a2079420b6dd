"""Issue 31 item 6: a user's folder named like one of the project's packages (``fmus/``
where people keep their FMU files, ``hil/`` for logs...) beside a script, or in the current
folder, does not hide the package, in the development set-up (``make venv``) and in a
plain ``pip install`` into a fresh virtual environment.

Such a folder (no ``__init__.py``) is a namespace package candidate: Python takes it only
when no regular package of that name is found anywhere on ``sys.path``.  setuptools'
editable install finds the project through an import hook that Python asks only after
that search, so the empty folder won; ``make venv`` adds a hook that finds the clone's
packages as an installed copy is found (``cosim/_checkout.py``).  In both set-ups a
folder of the user's *with* an ``__init__.py`` is the user's own package and wins, as any
package earlier on ``sys.path`` does.  The installed distribution holds ``cosim``,
``blocks``, ``fmus`` and ``hil`` (``examples`` and ``bench`` are not installed: a folder of
theirs hides nothing a user imports, and the development set-up does not make them
importable outside the clone either).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("cosim", "blocks", "fmus", "hil")

SCRIPT = textwrap.dedent("""
    import sys
    from fmus import load_fmu, fmu_info
    from cosim import DiagramBuilder, Simulator
    from blocks.sources import Constant
    import hil, hil.can
    import cosim, blocks, fmus
    for m in (cosim, blocks, fmus, hil):
        assert m.__file__ is not None, (m.__name__, list(m.__path__))  # not a namespace
        assert m.__file__.startswith(sys.argv[1]), (m.__name__, m.__file__)
    b = DiagramBuilder("d")
    b.add(Constant("c", 1.0))
    Simulator(b.build(), solver="euler", dt=0.1).run(0.2)
    print("REAL", *[m.__file__ for m in (cosim, blocks, fmus, hil)])
""")


def _user_folder(tmp_path: pathlib.Path) -> pathlib.Path:
    """A user's project: a script beside folders named like every package (FMU files in
    ``fmus/``, logs in ``hil/``, ...)."""
    user = tmp_path / "project"
    for name in PACKAGES + ("examples", "bench"):
        (user / name).mkdir(parents=True)
        (user / name / "data.txt").write_text("the user's files\n")
    (user / "fmus" / "Model.fmu").write_bytes(b"PK\x05\x06" + bytes(18))
    (user / "run.py").write_text(SCRIPT)
    return user


def _runs(python: str, user: pathlib.Path, where: str) -> list[str]:
    """The failures of the script run three ways: from its folder, from elsewhere (its
    folder is first on sys.path either way), and as ``-c`` in the folder (the current
    folder first on sys.path); and of ``python -m cosim --help`` in the folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    runs = [([python, "run.py", where], user), ([python, str(user / "run.py"), where],
                                                user.parent),
            ([python, "-c", SCRIPT, where], user), ([python, "-m", "cosim", "--help"], user)]
    # the user's own package (an __init__.py) wins, as it does over any installed package
    own = user.parent / "own"
    (own / "hil").mkdir(parents=True, exist_ok=True)
    (own / "hil" / "__init__.py").write_text("MINE = 1\n")
    (own / "mine.py").write_text("import hil\nassert hil.MINE == 1\nprint('REAL')\n")
    runs.append(([python, "mine.py"], own))
    failed = []
    for argv, cwd in runs:
        r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=300)
        ok = r.returncode == 0 and ("REAL" in r.stdout or argv[-1] == "--help")
        if not ok:
            failed.append(f"{' '.join(argv[1:3])} in {cwd}: {(r.stdout + r.stderr)[-800:]}")
    return failed


def test_the_development_setup_is_not_hidden_by_a_users_folders(tmp_path):
    user = _user_folder(tmp_path)
    failed = _runs(sys.executable, user, str(ROOT))
    assert not failed, (
        "a folder named like a package hides it in this development set-up; `make venv` "
        "adds the start-up hook (_cosim_checkout.pth, cosim/_checkout.py), a bare "
        "`pip install -e .` does not:\n" + "\n".join(failed))
    # and the clone's other folders stay out of reach, as for an installed package
    r = subprocess.run([sys.executable, "-c", "import bench"], cwd=user.parent / "own",
                       capture_output=True,
                       text=True, env={k: v for k, v in os.environ.items()
                                       if k != "PYTHONPATH"})
    assert r.returncode == 1 and "No module named 'bench'" in r.stderr, r.stderr


@pytest.mark.slow
def test_a_plain_install_is_not_hidden_by_a_users_folders(tmp_path):
    """``pip install`` of the package (no dependencies: those of this interpreter are made
    visible to the new environment) into a fresh venv, then the user's script."""
    if os.environ.get("COSIM_SKIP_INSTALL_TEST"):
        pytest.skip("COSIM_SKIP_INSTALL_TEST is set")
    src = tmp_path / "src"
    src.mkdir()
    for name in PACKAGES:
        shutil.copytree(ROOT / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True,
                          check=True).stdout.strip()
    # this interpreter's packages (pip, numpy, fmpy...) as a plain path entry: its .pth
    # files (the development checkout's) are not read from there
    pathlib.Path(site, "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"]
                                                         + "\n")
    pip = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", str(src)],
                         capture_output=True, text=True, timeout=900)
    if pip.returncode and ("Could not find a version" in pip.stderr
                           or "No matching distribution" in pip.stderr
                           or "Failed to establish a new connection" in pip.stderr):
        pytest.skip(f"the package registry cannot be reached (build backend): "
                    f"{pip.stderr[-300:]}")
    assert pip.returncode == 0, pip.stderr[-3000:]
    assert (pathlib.Path(site) / "fmus" / "__init__.py").is_file()
    user = _user_folder(tmp_path)
    failed = _runs(str(py), user, site)
    assert not failed, "\n".join(failed)
