"""The tangent program of a generated-C model: the FMU's directional derivatives.

``cosim_jvp(M, ts, tx, tdx)`` propagates tangents through the diagram in evaluation
order, at the current time and state: given the tangents of the inputs (``ts`` at the
inputs' signal offsets) and of the continuous states (``tx``), it writes the tangent of
every signal (``ts``) and of the state derivatives (``tdx``):

* unit conversions and fused linear groups (every linear block when ``fuse_linear``):
  their own matrices, so linear parts are exact (the diagram's Jacobian);
* every other block (nonlinear ones, and linear blocks outside fused groups): a central
  difference of the block's own C along the tangents of its inputs and states
  (``cosim_fd_block`` in ``templates/core.c``, step cbrt(eps) (1 + max|value|) /
  max|tangent|): O(h^2) for smooth blocks, the mean of the two slopes at a kink within
  the step;
* sampled blocks: held between their hits, tangent 0.

The FMI wrappers seed the knowns, call it and read the unknowns
(``cosim_directional`` in ``templates/core.c``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .model import affine, c_float

_LOCALS = """ModelState *S = &M->st;
double *s = S->s;
double *xd = S->xd;
const double *p = S->p;
const double t = S->time;
const double mt = S->mode_time;
const double *x = S->x;
(void)S; (void)s; (void)xd; (void)p; (void)t; (void)mt; (void)x; (void)dx;"""


def _indent(code: str, n: int = 4) -> str:
    pad = " " * n
    return "\n".join(pad + line if line else line for line in code.splitlines())


def _ints(name: str, values: list[int]) -> str:
    return f"static const int {name}[] = {{{', '.join(map(str, values or [0]))}}};"


def tangent_source(prog: Any, ev: Any) -> str:
    """C text of the block functions and of ``cosim_jvp`` (``ev``: the program's
    :class:`~cosim.evaluator.Evaluator`)."""
    plan = prog.plan
    fns: list[str] = []
    body: list[str] = []

    def elems(slots: Any) -> list[int]:
        return [prog.slot_offset[k] + i for k in slots for i in range(plan.slot_ports[k].size)]

    def states(b: Any) -> list[int]:
        out = []
        for h in b.continuous_states:
            a, e, _ = plan.cstate_index[h]
            out.extend(range(a, e))
        return out

    def fd_call(code: str, what: str, ins: list[int], xs: list[int], outs: list[int],
                into_dx: bool) -> str:
        k = len(fns)
        fns.append(f"/* {what} */\nstatic void cosim_tb{k}(Model *M, double *dx) {{\n"
                   + _indent(_LOCALS + "\n{\n" + _indent(code) + "\n}") + "\n}")
        return (f"{{ /* {what}: central difference */\n"
                + _indent(f"{_ints('in_', ins)}\n{_ints('xs_', xs)}\n{_ints('out_', outs)}\n"
                          f"cosim_fd_block(M, cosim_tb{k}, {int(into_dx)}, in_, {len(ins)}, "
                          f"xs_, {len(xs)}, out_, {len(outs)}, ts, tx, "
                          f"{'tdx' if into_dx else 'ts'});")
                + "\n}")

    def tnames(names: list[str]) -> list[str]:
        return ["t" + n for n in names]  # s[..] -> ts[..], x[..] -> tx[..]

    for kind, payload, samp in ev.ops:
        if kind == "conv":
            n = payload
            src, dst = n.reads[0], n.slots[0]
            for i in range(plan.slot_ports[dst].size):
                body.append(f"ts[{prog.slot_offset[dst] + i}] = {c_float(n.scale)} * "
                            f"ts[{prog.slot_offset[src] + i}];")
        elif kind == "group":
            gi, nodes = payload
            g = ev.groups[gi]
            Cy, Dy = _dense(g.Cy), _dense(g.Dy)
            txs = [f"tx[{int(i)}]" for i in g.state_index]
            tvs = tnames(prog._v_names(g))
            for n in nodes:
                for port, k in zip(n.ports, n.slots, strict=True):
                    off = g.y_offsets[g.y_ports.index(port)]
                    for i in range(port.size):
                        r = off + i
                        body.append(f"ts[{prog.slot_offset[k] + i}] = "
                                    f"{affine(Cy[r], txs, Dy[r], tvs)};")
        elif kind == "node" and samp is None:
            n = payload
            cm = prog.cmodel(n.block)
            code = "\n".join(cm.outputs[p.name] for p in n.ports)
            body.append(fd_call(code, f"block '{n.block.path}' outputs", elems(n.reads),
                                states(n.block), elems(n.slots), False))
    for g in ev.groups:
        if not g.state_index.size:
            continue
        A, B = _dense(g.A), _dense(g.B)
        txs = [f"tx[{int(i)}]" for i in g.state_index]
        tvs = tnames(prog._v_names(g))
        for r, j in enumerate(g.state_index):
            body.append(f"tdx[{int(j)}] = {affine(A[r], txs, B[r], tvs)};")
    for b in ev.nonfused_state_blocks:
        cm = prog.cmodel(b)
        ins = elems([plan.input_slot[p] for p in b.inputs.values()])
        xs = states(b)
        body.append(fd_call(cm.derivatives, f"block '{b.path}' derivatives", ins, xs, xs,
                            True))
    jvp = ("static void cosim_jvp(Model *M, double *ts, const double *tx, double *tdx) {\n"
           + _indent("(void)M; (void)ts; (void)tx; (void)tdx; (void)cosim_fd_block;\n"
                     + "\n".join(body)) + "\n}")
    return "\n\n".join(fns + [jvp])


def _dense(m: Any) -> np.ndarray:
    return m.toarray() if hasattr(m, "toarray") else np.asarray(m, dtype=float)
