"""The exact step of a linear diagram: when the whole continuous part is fused linear
groups driven by state-independent inputs (:mod:`cosim.evaluator`), an explicit
Runge-Kutta step is one matrix product (:func:`cosim.linear.rk_propagator`):

.. math:: x_{n+1} = \\Phi x_n + \\sum_m \\Gamma_m v(t_n + c_m h) + g

:func:`assemble` puts the groups' ``A, B, e`` into the system's, :class:`Propagator`
steps it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp


def assemble(groups: list, n: int) -> tuple:
    """``(A, B, e)`` of ``dx/dt = A x + B v + e`` for the fused ``groups`` over the ``n``
    continuous states, ``v`` the groups' external inputs in order (sparse when a group is)."""
    big = any(sp.issparse(g.A) for g in groups)
    nv = sum(z for g in groups for z in g.v_sizes)
    A: Any = sp.lil_matrix((n, n)) if big else np.zeros((n, n))
    B: Any = sp.lil_matrix((n, nv)) if big else np.zeros((n, nv))
    e = np.zeros(n)
    col = 0
    for g in groups:
        idx = g.state_index
        nvg = sum(g.v_sizes)
        if idx.size:
            A[np.ix_(idx, idx)] = g.A.toarray() if sp.issparse(g.A) else g.A
            if nvg:
                B[np.ix_(idx, np.arange(col, col + nvg))] = \
                    g.B.toarray() if sp.issparse(g.B) else g.B
            e[idx] += g.e
        col += nvg
    if big:
        A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    return A, B, e


class Propagator:
    """``x_{n+1} = Phi x_n + sum_m Gamma_m v(t_n + c_m h) + g`` (see rk_propagator).

    ``[Phi | Gamma_0 | Gamma_1 | ...]`` is stored as one matrix ``M`` so a step
    is one product with ``z = [x, v(t+c_0 h), v(t+c_1 h), ...]``.
    """

    def __init__(self, Phi, gammas, g, vfun, nv):
        self.cs = [c for c, _ in gammas]
        self.g = g
        self.vfun = vfun
        self.nv = nv
        self.n = Phi.shape[0]
        mats = [Phi] + ([gm for _, gm in gammas] if nv else [])
        self.M = sp.hstack(mats, format="csr") if sp.issparse(Phi) else np.hstack(mats)
        self.Phi = Phi
        self.G = (self.M[:, self.n:] if nv else None)
        self.z = np.zeros(self.M.shape[1])
        self.has_g = bool(np.any(g))

    def steps(self, ctx, s, tick: int, x: np.ndarray, h: int, count: int,
              ns: float) -> tuple[int, np.ndarray, bool]:
        """``count`` steps of ``h`` ticks from ``tick``; ``(tick, x, finite)`` at the end.

        For a segment without sample hits or breakpoints.  In chunks: the inputs
        at all stage times are evaluated first (the input at the end of a step,
        stage ``c = 1``, is the input at the start of the next, ``c = 0``, and is
        evaluated once), their contribution ``Gamma v`` is one matrix product,
        then ``x <- Phi x + (Gamma v)_k``.  Stops early at a non-finite state.
        """
        nv, cs, vfun, Phi, G = self.nv, self.cs, self.vfun, self.Phi, self.G
        reuse = nv > 0 and cs[0] == 0.0 and cs[-1] == 1.0
        g = self.g if self.has_g else None
        isfinite = math.isfinite
        hs = h * ns
        done = 0
        while done < count:
            m = min(count - done, 1024)
            U = None
            if nv:
                vals: list = []
                add = vals.append if nv == 1 else vals.extend
                last = None
                for i in range(m):
                    t = (tick + i * h) * ns
                    ctx.mode_time = t
                    for j, c in enumerate(cs):
                        if j == 0 and last is not None:
                            v = last
                        else:
                            ctx.time = t + c * hs
                            v = vfun(ctx, s)
                        add(v)
                    if reuse:
                        last = v
                U = np.ascontiguousarray((G @ np.array(vals, dtype=float).reshape(m, -1).T).T)
                if g is not None:
                    U += g
            for i in range(m):
                x = Phi @ x
                if U is not None:
                    x += U[i]
                elif g is not None:
                    x += g
                if not isfinite(x @ x):
                    return tick + (i + 1) * h, x, False
            tick += m * h
            done += m
        return tick, x, True

    def step(self, ctx, s, t: float, x: np.ndarray, h: float) -> np.ndarray:
        z = self.z
        n = self.n
        z[:n] = x
        nv = self.nv
        if nv == 1:
            vfun = self.vfun
            for j, c in enumerate(self.cs):
                ctx.time = t + c * h
                z[n + j] = vfun(ctx, s)
        elif nv:
            vs = []
            vfun = self.vfun
            for c in self.cs:
                ctx.time = t + c * h
                vs.extend(vfun(ctx, s))
            z[n:] = vs
        xn = self.M @ z
        if self.has_g:
            xn += self.g
        return xn
