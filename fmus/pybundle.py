"""The model's own Python modules inside a Python FMU (:mod:`fmus.pyexport`).

A Python FMU rebuilds its diagram where it runs, so it needs the model's code there.  At
export, :func:`find_model` resolves the model, a model file (as ``cosim run`` takes it)
or an importable ``package.module:function``, and :func:`local_modules` follows its
``import`` statements (also those inside functions, and those of the modules it reaches)
to every *local* module: one that is neither in the standard library nor in an installed
distribution (cosim, numpy, ...: the target must have those installed).  :func:`write_bundle`
copies their sources, package folders included, into ``resources/cosim_model/`` of the
FMU, and :func:`check_in_clean_python` builds the diagram from that copy in a fresh
interpreter (``python -I``: no ``PYTHONPATH``, no current folder) before the FMU is
written, so that an FMU that would not run elsewhere is never made.

Where the FMU runs, :func:`load_diagram` puts the bundle first on ``sys.path`` and builds
the diagram as ``cosim run`` does (:func:`cosim.cli.load_model` for a model file); a
failure is a :class:`ModelLoadError` that names the missing module and what to install.

Limitations: modules imported by a computed name (``importlib.import_module(name)``,
``__import__``) are not found, nor data files the model reads (the check in a clean
interpreter fails on those the diagram needs when it is built); compiled local modules
(``.so``, ``.pyd``) are not bundled (a warning names them); two FMUs run in one process
whose bundles hold modules of the same name share the one imported first.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim.errors import BuildError, CosimError, CosimWarning

#: the bundle's folder in the FMU's resources
BUNDLE = "cosim_model"

#: the model's configuration in the FMU's resources folder (solver, step, where the model
#: is: :meth:`ModelRef.config` under ``model``)
CONFIG_FILE = "cosim_model.json"


class ModelLoadError(CosimError):
    """The FMU's model cannot be built where the FMU runs (a module is missing, the model
    file fails); the message says which and what to do."""


@dataclass(frozen=True)
class ModelRef:
    """A model to export: ``target`` as given, the diagram ``function`` (None: the model
    file's default), and either the model ``file`` (its path) or the ``module`` name.
    ``search``: folders searched first for the model's imports (the model file's folder,
    as ``cosim run`` has it; for a module the current folder, as ``python -m`` has it)."""

    target: str
    function: str | None
    file: str | None = None
    module: str | None = None
    search: tuple[str, ...] = ()

    def config(self) -> dict:
        """How the FMU finds the model in its bundle (``cosim_model.json``'s ``model``)."""
        return {"bundle": BUNDLE, "function": self.function,
                "file": os.path.basename(self.file) if self.file else None,
                "module": self.module}


def find_model(model: str, function: str | None = None) -> ModelRef:
    """``model`` as a :class:`ModelRef`: a model file (``.py``, an existing file) or
    ``package.module:function``."""
    if os.path.isfile(model) or model.endswith(".py"):
        if not os.path.isfile(model):
            raise BuildError(f"model file {model!r} not found")
        path = os.path.abspath(model)
        return ModelRef(model, function, file=path, search=(os.path.dirname(path),))
    mod, colon, fn = model.partition(":")
    if not colon or not mod or not fn.isidentifier():
        raise BuildError(f"model {model!r}: give a model file (FILE.py) or an importable "
                         "'package.module:function'")
    if function is not None and function != fn:
        raise BuildError(f"--function {function} and the function {fn!r} of {model!r} "
                         "disagree; give one")
    return ModelRef(model, fn, module=mod, search=(os.getcwd(),))


def build_here(ref: ModelRef) -> tuple[Any, dict]:
    """The diagram and the model's ``SIMULATION`` dict, built in this process."""
    if ref.file:
        from cosim.cli import load_model
        return load_model(ref.file, ref.function)
    added = [p for p in ref.search if p not in sys.path]
    sys.path[:0] = added  # while the model is imported and built (it may import lazily)
    try:
        try:
            mod = importlib.import_module(ref.module)
        except ImportError as exc:
            raise BuildError(f"{exc}; give a 'package.module:function' importable from here "
                             "(the current folder or PYTHONPATH), or the model file itself"
                             ) from None
        fn = getattr(mod, ref.function, None)
        if not callable(fn):
            raise BuildError(f"module {ref.module!r} has no function {ref.function!r}")
        try:
            diagram = fn()
        except CosimError:
            raise
        except Exception as exc:
            raise BuildError(f"{ref.function}() failed: {type(exc).__name__}: {exc}") from exc
    finally:
        for p in added:
            sys.path.remove(p)
    return diagram, dict(getattr(mod, "SIMULATION", {}) or {})


# ----------------------------------------------------------------- export side
def local_modules(ref: ModelRef) -> tuple[dict[str, Path], list[str]]:
    """``({path in the bundle: source file}, [compiled local modules, not bundled])``: the
    model's module and the local modules it imports, directly or not (module docstring).
    Nothing is imported: the modules are found on the path."""
    extra = list(ref.search)
    files: dict[str, Path] = {}
    compiled: list[str] = []
    seen: set[str] = set()
    if ref.file:
        files[os.path.basename(ref.file)] = Path(ref.file)
        todo = [(None, Path(ref.file), False)]
    else:
        todo = []
        _visit(ref.module, extra, files, compiled, seen, todo)
    while todo:
        name, path, is_pkg = todo.pop()
        package = name if is_pkg else (name.rpartition(".")[0] if name else None)
        for dep in _imports(path, package):
            _visit(dep, extra, files, compiled, seen, todo)
    return files, compiled


def _visit(name: str, extra: list[str], files: dict, compiled: list, seen: set,
           todo: list) -> None:
    """Add module ``name`` and its parent packages to the bundle when local."""
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        mod = ".".join(parts[:i])
        if mod in seen:
            continue
        seen.add(mod)
        spec = None if _installed(mod) else _spec(mod, extra)
        if spec is None or not _is_local(spec):
            if spec is None or i == 1:
                return  # not found (an optional import), or installed: nothing below it
            continue
        origin = spec.origin
        if not origin or origin in ("built-in", "frozen"):
            continue  # a namespace package: a folder, nothing to copy
        if not origin.endswith(".py"):
            compiled.append(f"{mod} ({origin})")
            continue
        is_pkg = spec.submodule_search_locations is not None
        rel = "/".join(parts[:i]) + ("/__init__.py" if is_pkg else ".py")
        files[rel] = Path(origin)
        todo.append((mod, Path(origin), is_pkg))


def _spec(name: str, extra: list[str]) -> Any:
    """Where ``name`` would be imported from, the folders ``extra`` first (the model file's
    folder, as ``cosim run`` puts it), found on the path without importing anything (not
    from ``sys.modules``, which may hold another module of the same name)."""
    from importlib.machinery import PathFinder
    parts = name.split(".")
    try:
        spec = PathFinder.find_spec(parts[0], extra + [p or os.getcwd() for p in sys.path])
        for i in range(1, len(parts)):
            if spec is None or spec.submodule_search_locations is None:
                return None
            spec = PathFinder.find_spec(".".join(parts[:i + 1]),
                                        list(spec.submodule_search_locations))
    except (ImportError, ValueError, OSError):
        return None
    return spec


_INSTALLED: set[str] | None = None


def _installed(name: str) -> bool:
    """In the standard library or in an installed distribution (cosim, numpy, ...)."""
    global _INSTALLED
    top = name.partition(".")[0]
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        return True
    if _INSTALLED is None:
        from importlib.metadata import packages_distributions
        _INSTALLED = set(packages_distributions())
    return top in _INSTALLED


def _is_local(spec: Any) -> bool:
    """Not under a site-packages folder (a module installed without metadata)."""
    where = spec.origin or next(iter(spec.submodule_search_locations or []), "")
    return not any(p in ("site-packages", "dist-packages") for p in Path(where).parts)


def _imports(path: Path, package: str | None) -> list[str]:
    """The modules a source file imports (``from X import y``: X, and X.y in case y is a
    submodule); relative imports resolved against ``package``."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not package:
                    continue
                try:
                    base = importlib.util.resolve_name("." * node.level + (node.module or ""),
                                                       package)
                except (ImportError, ValueError):
                    continue
            else:
                base = node.module or ""
            if base:
                out.append(base)
            out += [f"{base}.{a.name}" if base else a.name for a in node.names
                    if a.name != "*"]
    return out


def write_bundle(ref: ModelRef, dest: Path) -> list[str]:
    """Copy the model's local modules to ``dest`` (the bundle folder); returns their paths
    in the bundle (a warning names compiled local modules, which are left out)."""
    files, compiled = local_modules(ref)
    for rel, src in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    if compiled:
        warnings.warn(f"compiled local modules are not bundled in the FMU: "
                      f"{', '.join(compiled)}; install them where the FMU runs",
                      CosimWarning, stacklevel=3)
    return sorted(files)


def check_in_clean_python(resources: Path, outputs: list[str], timeout_s: float = 300.0
                          ) -> None:
    """Build the diagram from the bundle in ``resources`` in a fresh interpreter (``-I``,
    in an empty folder) and compare its outputs with ``outputs``; a failure is a
    :class:`~cosim.errors.BuildError` with the reason.  When cosim itself is importable
    only through ``PYTHONPATH`` (a source tree, not installed), the check cannot run: a
    warning says so."""
    code = ("import json, sys\n"
            "try:\n    from fmus.pybundle import load_diagram\n"
            "except ImportError as exc:\n    print(exc); sys.exit(3)\n"
            "d = load_diagram(sys.argv[1])\n"
            "print(json.dumps(sorted(d.outputs)))\n")
    with tempfile.TemporaryDirectory(prefix="cosim-fmu-check-") as empty:
        try:
            r = subprocess.run([sys.executable, "-I", "-c", code, str(resources)], cwd=empty,
                               capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise BuildError(f"the bundled model did not build within {timeout_s:g} s in a "
                             "clean Python") from None
    if r.returncode == 3:
        warnings.warn(f"the FMU's bundle was not checked in a clean Python: cosim is not "
                      f"installed there ({r.stdout.strip()}); the FMU needs cosim installed "
                      "where it runs", CosimWarning, stacklevel=3)
        return
    if r.returncode != 0:
        lines = [ln for ln in (r.stderr or r.stdout).strip().splitlines() if ln.strip()]
        reason = next((ln.split(": ", 1)[1] for ln in reversed(lines)
                       if ln.startswith(("fmus.pybundle.ModelLoadError",
                                         "ModelLoadError"))), lines[-1] if lines else "?")
        raise BuildError(f"the FMU would not run elsewhere: in a clean Python (no PYTHONPATH, "
                         f"another folder) its bundled model fails: {reason}")
    got = json.loads(r.stdout.strip().splitlines()[-1])
    if got != sorted(outputs):
        raise BuildError(f"the bundled model builds a diagram with outputs {got}, not "
                         f"{sorted(outputs)} as here: the bundle holds another version of "
                         "a module")


# ------------------------------------------------------------------- run side
def load_diagram(resources: str | os.PathLike, config: dict | None = None) -> Any:
    """The diagram of the FMU whose resources folder is ``resources`` (``config``: the
    ``model`` entry of its ``cosim_model.json``, read if not given); a failure is a
    :class:`ModelLoadError` saying what is missing and what to do."""
    resources = str(resources)
    if config is None:
        with open(os.path.join(resources, CONFIG_FILE), encoding="utf-8") as f:
            config = json.load(f)["model"]
    bundle = os.path.join(resources, config["bundle"])
    if bundle not in sys.path:
        sys.path.insert(0, bundle)  # stays: the model may import lazily while it runs
    what = config["file"] or f"{config['module']}:{config['function']}"
    try:
        if config["file"]:
            from cosim.cli import load_model
            return load_model(os.path.join(bundle, config["file"]), config["function"])[0]
        mod = importlib.import_module(config["module"])
        return getattr(mod, config["function"])()
    except ModuleNotFoundError as exc:
        raise ModelLoadError(_missing(what, exc.name, bundle)) from exc
    except CosimError as exc:
        cause = exc.__cause__
        if isinstance(cause, ModuleNotFoundError):
            raise ModelLoadError(_missing(what, cause.name, bundle)) from exc
        raise ModelLoadError(f"model {what}: {exc}") from exc
    except Exception as exc:
        raise ModelLoadError(f"model {what}: {type(exc).__name__}: {exc}") from exc


def _missing(what: str, name: str | None, bundle: str) -> str:
    """The message for a module missing where the FMU runs."""
    bundled = sorted(str(p.relative_to(bundle)) for p in Path(bundle).rglob("*.py"))
    return (f"the FMU's model {what} needs the module {name!r}, which is neither bundled "
            f"in the FMU (resources/{BUNDLE}: {', '.join(bundled) or 'nothing'}) nor "
            f"installed in the Python that runs it ({sys.executable}); install it there "
            f"({sys.executable} -m pip install ...)")
