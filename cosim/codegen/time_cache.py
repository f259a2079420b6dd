"""Outputs that are functions of time only, evaluated once per distinct time in the C.

A fixed step evaluates the outputs the derivatives read at every solver stage, and all
outputs at every major point.  Part of a diagram often depends on nothing but time: sources
and the blocks fed only by them (a sine through a chain of nonlinear maps into an integrator).
Their values at a stage are a function of ``(t, mt, p)`` (time, mode time, parameters), and
the stages repeat times: RK4's are ``t, t + h/2, t + h/2, t + h``, its first one is the major
point's time, and its last one is usually bit for bit the next major point's.  The C skips an
evaluation of such an op when the values in ``s[]`` were computed at the same time, so a
stateless chain under RK4 is evaluated twice a step instead of five times.  The results are
the same bits: the skipped op would compute the values already there.

An op (:class:`~cosim.codegen.program.Op`) is *time-only* when

* it is not sampled (a held output changes at sample hits, not with time);
* a block op: the block has no continuous, discrete or opaque states and no zero
  crossings, and its C names none of ``x``, ``xd``, ``dx``, ``S``, ``M`` (state, the model)
  nor an external function (``COSIM_EXTERN``: compiled code we cannot see into);
* a fused linear group: it has no states;
* every signal it reads is written by a time-only op (never an exported input, a held
  output or a state-dependent signal).

RK4's look-ahead: its stages after the first are at two new times, ``t + h/2`` (twice) and
``t + h``.  Right after the first stage the C evaluates the time-only ops the derivatives read
at both (``cosim_tc_ahead``), op by op, the first time's values into ``s[]`` (key 0) and the
second's into a shadow array; before the fourth stage it copies the shadow's values of those
ops into ``s[]`` (``cosim_tc_take``) and moves key 0 to ``t + h``.  The exact linear step
(:mod:`cosim.codegen.propagate_c`) pairs its stage times 1 and 2 the same way.  The same ops
are evaluated at the same times with the same arguments (the same bits), but the two
evaluations of an op are independent and written next to each other, so the CPU overlaps
them: a chain of latency-bound calls (``tanh`` after ``tanh``) takes little more than half
the time.  The take checks that key 0 still holds the first time (nothing between has
cleared it), else the fourth stage evaluates as before.  The shadow lives in the model, not
in ``ModelState``: it is used within one step and never outlives it.

The C keeps two keys in ``ModelState`` (``tc_ok``, ``tc_t``, ``tc_mt``): key 0 for the
time-only ops the derivatives read (``cosim_eval_deriv`` and ``cosim_eval`` evaluate them),
key 1 for all time-only ops (``cosim_eval`` only).  A key holds the bits of the time (and of
the mode time when a time-only op reads ``mt``) the values were computed at.  Parameters are
the only other input: setting any (``cosim_var_ptr`` on the parameter area) clears both keys,
as do a reset and a hand-over from Python (:meth:`cosim.codegen.state.StateMap.push`); a
saved state carries its keys with the signals they describe.
"""

from __future__ import annotations

import re
from typing import Any

#: RK4's look-ahead is generated (module docstring); off: each stage evaluates as before (the
#: tests compare both, bit for bit)
LOOKAHEAD = True

#: C text that reads the model's state, the model itself or compiled code outside the source
_NOT_TIME_ONLY = re.compile(r"\b(x|xd|dx|S|M)\b|COSIM_EXTERN")
_READS_MT = re.compile(r"\bmt\b")


class TimeOnly:
    """Which ops of a program are time-only, decided in evaluation order (see the module
    docstring); ``reads_mt``: some time-only op reads the mode time."""

    def __init__(self) -> None:
        self.slots: set[int] = set()
        self.reads_mt = False

    def conv(self, reads: Any, slots: Any) -> bool:
        return self._mark(all(k in self.slots for k in reads), slots, "")

    def group(self, g: Any, slots: Any) -> bool:
        return self._mark(not g.state_index.size and all(v in self.slots for v in g.v_slots),
                          slots, "")

    def node(self, n: Any, sampled: bool, code: str) -> bool:
        b = n.block
        ok = (not sampled and not b.continuous_states and not b.discrete_states
              and not b.opaque_states and not b.zero_crossings
              and all(k in self.slots for k in n.reads)
              and _NOT_TIME_ONLY.search(code) is None)
        return self._mark(ok, n.slots, code)

    def _mark(self, ok: bool, slots: Any, code: str) -> bool:
        if ok:
            self.slots.update(slots)
            self.reads_mt = self.reads_mt or _READS_MT.search(code) is not None
        return ok


def guarded(op: Any, body: str) -> str:
    """``body`` of a time-only ``op`` run only when its key misses (:func:`keys`)."""
    return f"if (!tc_hit[{0 if op.for_derivatives else 1}]) {body}"


def keys(which: tuple[int, ...]) -> tuple[str, str]:
    """The C before and after an evaluation of the time-only ops of the keys ``which``."""
    hits = ", ".join(f"cosim_tc_hit(S, {k})" if k in which else "0" for k in (0, 1))
    return (f"const int tc_hit[2] = {{{hits}}};",
            "\n".join(f"cosim_tc_set(S, {k});" for k in which))


def ahead_ops(ops: list) -> list:
    """The ops the look-ahead evaluates: the time-only ops the derivatives read (key 0);
    none when :data:`LOOKAHEAD` is off."""
    if not LOOKAHEAD:
        return []
    return [op for op in ops if op.time_only and op.for_derivatives and not op.groups]


def _ranges(offsets: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for k in sorted(set(offsets)):
        if out and out[-1][0] + out[-1][1] == k:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((k, 1))
    return out


def lookahead(ops: list, comment: Any, indent: Any) -> str:
    """C of ``cosim_tc_ahead(M, ta, tb)`` and ``cosim_tc_take(M, ta, tb)`` (module
    docstring) for the look-ahead ``ops`` (:func:`ahead_ops`, not empty); ``comment`` and
    ``indent`` format the C as the other generated functions."""
    pairs = []
    for op in ops:
        for s, t in (("tc_sa_", "ta"), ("tc_sb_", "tb")):
            pairs.append(f"{{  /* {comment(op.comment)} at {t} */\n"
                         f"    double *const s = {s};\n    const double t = {t};\n"
                         "    (void)s; (void)t;\n" + indent("{\n" + indent(op.code) + "\n}")
                         + "\n}")
    copies = "\n".join(f"memcpy(S->s + {a}, M->tc_b + {a}, {n} * sizeof(double));"
                       for a, n in _ranges([k for op in ops for k in op.writes]))
    ahead = ("static void cosim_tc_ahead(Model *M, double ta, double tb) {\n" + indent(
        "ModelState *S = &M->st;\n"
        "double *const tc_sa_ = S->s, *const tc_sb_ = M->tc_b;\n"
        "const double *p = S->p;\nconst double mt = S->mode_time;\n(void)p; (void)mt;\n"
        + "\n".join(pairs)
        + "\nS->tc_ok[0] = 1;\nS->tc_t[0] = ta;\nS->tc_mt[0] = mt;") + "\n}")
    take = ("static void cosim_tc_take(Model *M, double ta, double tb) {\n" + indent(
        "ModelState *S = &M->st;\n"
        "if (!S->tc_ok[0] || memcmp(&S->tc_t[0], &ta, sizeof(double)) != 0) return;\n"
        + copies + "\nS->tc_t[0] = tb;") + "\n}")
    return ahead + "\n\n" + take
