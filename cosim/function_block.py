"""``FunctionBlock``: stateless algebra from a plain Python function.

    y = fn(u_1, ..., u_n)            (or fn(t, u_1, ..., u_n) with ``needs_time``)

The compiler calls ``fn`` directly with the input values (floats for scalar
ports), which makes this the cheapest kind of Python block.

C form (the compiled Simulator, the FMU export): ``fn`` is translated into C when every
operation has an exact C equivalent for scalar float ports (:mod:`cosim.codegen.pyfunc`:
arithmetic, ``**``, ``%``, ``//``, comparisons, conditional expressions and ``if`` with
returns, ``abs``/``min``/``max``, the ``math`` functions with C-library equivalents, a
few NumPy functions, int/float constants from globals and closures).  The constants it reads
are frozen at build time, as parameters are.  A Numba ``cfunc`` (float64 arguments and
result) or ``njit`` function is called by address from C and through ctypes by the Python
loop: the same machine code (:mod:`cosim.codegen.numba_form`).  Anything else keeps the
diagram in the Python loop, the reason in ``diagnostics["compiled"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .block import Block, check_name


def _specs(spec: Any) -> list[tuple[str, dict]]:
    """``["u", ("v", "m"), {"name": "w", "unit": "N", "shape": 3}]`` -> [(name, kwargs)]."""
    if isinstance(spec, str):
        spec = [spec]
    out = []
    for s in spec:
        if isinstance(s, str):
            out.append((s, {}))
        elif isinstance(s, dict):
            d = dict(s)
            out.append((d.pop("name"), d))
        else:
            name, unit = s[0], s[1]
            out.append((name, {"unit": unit}))
    return out


class FunctionBlock(Block):
    """Stateless block computing its outputs with ``fn``.

    Ports
    -----
    in   declared by ``inputs`` (names, ``(name, unit)`` pairs or dicts with
         ``name``, ``unit``, ``shape``, ``dtype``)
    out  declared by ``outputs``; every output depends on every input

    Parameters
    ----------
    name : str
    fn : callable
        ``fn(*inputs)`` returning one value, or a tuple for several outputs.
    inputs, outputs : sequence
        Port specifications (default one input ``u`` and one output ``y``).
    needs_time : bool
        Call ``fn(t, *inputs)`` with the time in seconds.

    A Numba ``cfunc`` ``float64(float64, ...)`` given as ``fn`` is kept as :attr:`cfunc`
    and called through ``cfunc.ctypes`` (its machine code, not its Python function); an
    ``njit`` function is compiled as such a cfunc first (a cfunc cannot raise: Numba prints
    an error inside it and returns 0.0).  Limitations of the C form: see the module
    docstring and docs/concepts/compiled-runs.md.
    """

    def __init__(self, name: str, fn: Callable, inputs: Sequence | str = ("u",),
                 outputs: Sequence | str = ("y",), needs_time: bool = False) -> None:
        super().__init__(name)
        if not callable(fn):
            raise TypeError(f"FunctionBlock '{name}': fn must be callable, got {fn!r}")
        self.needs_time = needs_time
        self.in_ports = [self.declare_input(check_name(n, "port"), **kw)
                         for n, kw in _specs(inputs)]
        #: the Numba cfunc ``fn`` is (or was compiled into), else None
        self.cfunc = None
        if type(fn).__module__.split(".")[0] == "numba":
            from .codegen.numba_form import as_cfunc, is_cfunc, is_njit
            if is_njit(fn):
                fn = as_cfunc(f"FunctionBlock '{name}'", fn,
                              len(self.in_ports) + int(bool(needs_time)))
            if is_cfunc(fn):
                self.cfunc, fn = fn, fn.ctypes
        self.fn = fn
        out_specs = _specs(outputs)
        self.n_out = len(out_specs)
        self.out_ports = []
        for i, (n, kw) in enumerate(out_specs):
            calc = self._make_calc(i)
            self.out_ports.append(self.declare_output(n, calc, **kw))

    def _make_calc(self, i: int) -> Callable:
        def calc(ctx: Any) -> Any:
            args = [ctx.input(p) for p in self.in_ports]
            y = self.fn(ctx.time, *args) if self.needs_time else self.fn(*args)
            return y if self.n_out == 1 else y[i]
        return calc
