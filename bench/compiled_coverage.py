"""Which example diagrams the compiled Simulator runs (``bench core``'s coverage target).

Every module of ``examples/`` with a ``build()`` that returns a diagram (or a tuple holding
one) is built and initialized with ``Simulator(diagram, solver="rk4", dt=1 ms,
compiled=True)``: it runs in C, or the error says why not.  A reason is *Python-only* when
every block it names is a ``FunctionBlock`` or a block class defined outside the libraries
(``cosim``, ``blocks``): user code in Python, which the goal excludes; any other reason (a
library block without a C form, a zero crossing, a monitor, a variable-step need) counts
against the goal.  The examples' own solvers and steps are not used: the question is
whether their diagrams can run in C.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _diagram(obj):
    from cosim.diagram import Diagram
    if isinstance(obj, Diagram):
        return obj
    if isinstance(obj, (tuple, list)):
        return next((x for x in obj if isinstance(x, Diagram)), None)
    return None


def _python_only(reason: str, diagram) -> bool:
    """Whether every block the reason names is user Python (module docstring)."""
    if "without a C form" not in reason:
        return False
    named = re.findall(r"'([^']+)' \((\w+)\)", reason)
    if not named:
        return False
    for path, _cls in named:
        try:
            blk = diagram.find(path)
        except Exception:  # noqa: BLE001 - a name the diagram does not resolve
            return False
        mod = type(blk).__module__
        if type(blk).__name__ != "FunctionBlock" and mod.split(".")[0] in ("cosim", "blocks"):
            return False
    return " more" not in reason  # a truncated list: not all checked


def scan() -> list[dict]:
    """``[{"example", "compiled", "python_only", "reason"}]`` for every example diagram."""
    from cosim import Simulator
    from cosim.errors import BuildError
    root = str(EXAMPLES.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        name = path.stem
        try:
            mod = importlib.import_module(f"examples.{name}")
        except Exception:  # noqa: BLE001 - an example needing an extra: not a diagram here
            continue
        build = getattr(mod, "build", None)
        if not callable(build):
            continue
        try:
            d = _diagram(build())
        except TypeError:  # build() needs arguments: not an argument-free diagram
            continue
        if d is None:
            continue
        try:
            Simulator(d, solver="rk4", dt=1e-3, compiled=True).initialize()
            out.append({"example": name, "compiled": True, "python_only": False,
                        "reason": ""})
        except BuildError as exc:
            why = str(exc).split("the run cannot be compiled: ", 1)[-1]
            out.append({"example": name, "compiled": False,
                        "python_only": _python_only(why, d), "reason": why[:300]})
        except Exception as exc:  # noqa: BLE001 - initialization of the example failed
            out.append({"example": name, "compiled": False, "python_only": False,
                        "reason": f"{type(exc).__name__}: {str(exc)[:240]}"})
    return out


def coverage(rows: list[dict]) -> float | None:
    """The share of example diagrams that run compiled, of those that name no Python-only
    block."""
    judged = [r for r in rows if not r["python_only"]]
    return sum(r["compiled"] for r in judged) / len(judged) if judged else None


if __name__ == "__main__":  # pragma: no cover - a report for the developer
    rows = scan()
    for r in rows:
        state = "C" if r["compiled"] else "python-only" if r["python_only"] else "MISS"
        print(f"{r['example']:28s} {state:12s} {r['reason'][:150]}")
    print("coverage", coverage(rows))
