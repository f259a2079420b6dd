"""A FunctionBlock whose ``fn`` is a Numba ``cfunc`` (or an ``njit`` function, compiled as
one): the compiled run's C calls its machine code through its address, and the Python loop
calls the same machine code through ctypes, so both compute the same bits.

Limitations: float64 arguments (one per input, the time first with ``needs_time``) and one
float64 result; the address is this process's, so the C is compiled once per process (the
address is part of the cached source) and an exported FMU cannot call it; a ``cfunc``
cannot raise: an error inside it (Numba's ``error_model="python"``: a division by zero) is
printed by Numba and the call returns 0.0, in both loops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .model import CModel, CodegenError

__all__ = ["as_cfunc", "cfunc_c_model", "cfunc_refusal", "is_cfunc", "is_njit"]


def is_cfunc(obj: Any) -> bool:
    """Whether ``obj`` is a Numba ``cfunc`` (without importing Numba)."""
    t = type(obj)
    return t.__name__ == "CFunc" and t.__module__.split(".")[0] == "numba"


def is_njit(obj: Any) -> bool:
    """Whether ``obj`` is a Numba ``njit``/``jit`` dispatcher."""
    t = type(obj)
    return t.__module__.split(".")[0] == "numba" and hasattr(obj, "py_func") and \
        hasattr(obj, "signatures")


def as_cfunc(label: str, fn: Any, n_args: int) -> Any:
    """A ``cfunc`` ``float64(float64, ...)`` of the njit function ``fn`` (its Python
    function compiled again with that signature)."""
    import numba
    sig = numba.float64(*([numba.float64] * n_args))
    try:
        return numba.cfunc(sig)(fn.py_func)
    except Exception as exc:  # noqa: BLE001 - Numba's typing errors, re-raised with the block
        raise TypeError(f"{label}: fn is a Numba njit function, which the block compiles as "
                        f"a cfunc {sig}; Numba could not: {type(exc).__name__}: "
                        f"{str(exc).splitlines()[0] if str(exc) else ''}") from exc


def cfunc_refusal(block: Any) -> str:
    """'' when the block's cfunc can be called from C, else why not."""
    sig = block.cfunc._sig
    n_args = len(block.in_ports) + int(bool(block.needs_time))
    if str(sig.return_type) != "float64" or any(str(a) != "float64" for a in sig.args):
        return f"its Numba cfunc has the signature {sig}: only float64 arguments and result"
    if len(sig.args) != n_args:
        return f"its Numba cfunc takes {len(sig.args)} arguments, the block passes {n_args}"
    if len(block.out_ports) != 1:
        return f"its Numba cfunc returns one float, the block has {len(block.out_ports)} outputs"
    for p in (*block.in_ports, *block.out_ports):
        if p.shape != () or np.dtype(p.dtype).kind != "f":
            return f"its port {p.name!r} is not a scalar float"
    return ""


def cfunc_c_model(block: Any, cg: Any) -> CModel:
    """The C calling the block's cfunc through its address (this process only)."""
    why = cfunc_refusal(block)
    if why:
        raise CodegenError(f"FunctionBlock '{block.path}': {why}")
    if not getattr(cg, "in_process", False):
        raise CodegenError(f"FunctionBlock '{block.path}': its fn is a Numba cfunc, whose "
                           "machine code lives in this Python process; generated C for "
                           "another process (an FMU) cannot call it")
    args = ([cg.t] if block.needs_time else []) + [cg.u(p) for p in block.in_ports]
    proto = "double (*)(" + (", ".join(["double"] * len(args)) or "void") + ")"
    addr = int(block.cfunc.address)
    out = block.out_ports[0]
    return CModel(outputs={out.name: f"{cg.y(out)} = (({proto})(uintptr_t){addr}ULL)"
                                     f"({', '.join(args)});"},
                  time_dependent=bool(block.needs_time))
