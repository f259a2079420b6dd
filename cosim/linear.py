"""Linear models and the fusion of connected linear blocks.

A block that is linear time-invariant returns a :class:`LinearModel` from
``linear_model(ctx)``.  The evaluator fuses each connected set of such blocks
into one affine state-space system.  With the blocks' own models stacked
(block-diagonal ``A, B, C, D``), internal wiring ``w = P y + Q v + r`` (``w``:
all member inputs, ``y``: all member outputs, ``v``: the external inputs,
``r``: unit-conversion offsets), the outputs solve

.. math::

    (I - D P)\\, y = C x + D Q v + D r

exactly (a linear algebraic loop among linear blocks needs no iteration), and

.. math::

    \\dot x = (A + B P C_y) x + B (P D_y + Q) v + B (P f_y + r),
    \\qquad y = C_y x + D_y v + f_y .

:func:`rk_propagator` turns an explicit Runge-Kutta tableau applied to
``x' = A x + B v(t)`` into ``x_{n+1} = Phi x_n + sum_m Gamma_m v(t_n + c_m h)``:
the same method, one matrix product per step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .errors import AlgebraicLoopError

SPARSE_FROM = 150  # fused systems with more rows than this use scipy.sparse


@dataclass
class LinearModel:
    """``x' = A x + B u``, ``y = C x + D u`` of one block.

    ``inputs``/``outputs``/``states`` list the port and state handles in the
    order of the columns/rows (each contributes its size).
    """

    A: Any
    B: Any
    C: Any
    D: Any
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    states: list = field(default_factory=list)

    def __post_init__(self) -> None:
        nx = sum(h.size for h in self.states)
        nu = sum(p.size for p in self.inputs)
        ny = sum(p.size for p in self.outputs)
        self.A = np.asarray(self.A, dtype=float).reshape(nx, nx)
        self.B = np.asarray(self.B, dtype=float).reshape(nx, nu)
        self.C = np.asarray(self.C, dtype=float).reshape(ny, nx)
        self.D = np.asarray(self.D, dtype=float).reshape(ny, nu)


@dataclass
class FusedSystem:
    """Result of :func:`fuse`; matrices dense or CSR sparse."""

    A: Any
    B: Any
    e: np.ndarray  # constant derivative term
    Cy: Any
    Dy: Any
    fy: np.ndarray
    state_index: np.ndarray  # positions in the global state vector
    v_slots: list[int]  # external input slots, in v order
    v_sizes: list[int]
    y_ports: list  # output ports in y order
    y_offsets: list[int]
    blocks: list


def _mat(m: Any, sparse: bool) -> Any:
    return sp.csr_matrix(m) if sparse else (m.toarray() if sp.issparse(m) else np.asarray(m))


def fuse(blocks: list, models: list[LinearModel], plan: Any) -> FusedSystem:
    """Fuse linear blocks (one connected component) into one affine system."""
    y_ports, y_off, w_ports, w_off, states = [], {}, [], {}, []
    ny = nw = 0
    for m in models:
        for p in m.outputs:
            y_off[p] = ny
            y_ports.append(p)
            ny += p.size
        for p in m.inputs:
            w_off[p] = nw
            w_ports.append(p)
            nw += p.size
        states.extend(m.states)
    nx = sum(h.size for h in states)
    big = max(nx, ny, nw) > SPARSE_FROM
    # block-diagonal stacks with explicit shapes (scipy's block_diag drops empty blocks)
    A, B, C, D = (_blockdiag([getattr(m, k) for m in models]) for k in "ABCD")

    member_outputs = set(y_ports)
    v_slots, v_sizes, v_col = [], [], {}
    P = sp.lil_matrix((nw, ny))
    r = np.zeros(nw)
    qrows, qcols, qvals = [], [], []
    for p in w_ports:
        src, scale, bias = plan.feed.get(p, (p, 1.0, 0.0))  # unconnected: its own slot
        row = w_off[p]
        if src in member_outputs:
            col = y_off[src]
            for k in range(p.size):
                P[row + k, col + k] = scale
            r[row:row + p.size] += bias
        else:
            slot = plan.input_slot[p]
            if slot not in v_col:
                v_col[slot] = sum(v_sizes)
                v_slots.append(slot)
                v_sizes.append(p.size)
            col = v_col[slot]
            for k in range(p.size):
                qrows.append(row + k)
                qcols.append(col + k)
                qvals.append(1.0)
    nv = sum(v_sizes)
    Q = sp.csr_matrix((qvals, (qrows, qcols)), shape=(nw, nv))
    P = P.tocsr()

    DP = (D @ P).tocsc()
    Dr = D @ r
    DQ = D @ Q
    if DP.nnz == 0:
        Cy, Dy, fy = C, DQ, Dr
    else:
        Mmat = (sp.identity(ny, format="csc") - DP)
        try:
            lu = sp.linalg.splu(Mmat)
        except RuntimeError as exc:
            raise AlgebraicLoopError(
                "linear algebraic loop is singular (I - D P not invertible) among blocks "
                + ", ".join(f"'{b.path}'" for b in blocks)) from exc
        Cy = sp.csr_matrix(lu.solve(C.toarray())) if C.shape[1] else sp.csr_matrix((ny, 0))
        Dy = sp.csr_matrix(lu.solve(DQ.toarray())) if nv else sp.csr_matrix((ny, 0))
        fy = lu.solve(Dr)
    fy = np.asarray(fy).reshape(-1)
    Af = A + B @ P @ Cy
    Bf = B @ (P @ Dy + Q)
    e = np.asarray(B @ (P @ fy + r)).reshape(-1)
    index = np.concatenate([np.arange(*plan.cstate_index[h][:2]) for h in states]) \
        if states else np.zeros(0, dtype=int)
    return FusedSystem(_mat(Af, big), _mat(Bf, big), e, _mat(Cy, big), _mat(Dy, big),
                       fy, index, v_slots, v_sizes, y_ports, [y_off[p] for p in y_ports],
                       list(blocks))


def _blockdiag(mats: list[np.ndarray]) -> sp.csr_matrix:
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out = sp.lil_matrix((rows, cols))
    i = j = 0
    for m in mats:
        if m.size:
            out[i:i + m.shape[0], j:j + m.shape[1]] = m
        i += m.shape[0]
        j += m.shape[1]
    return out.tocsr()


def rk_propagator(A: Any, B: Any, e: np.ndarray, tableau: tuple, h: float):
    """Exact one-step map of an explicit RK method on ``x' = A x + B v(t) + e``.

    Returns ``(Phi, [(c, Gamma), ...], g)`` with
    ``x_{n+1} = Phi x_n + sum Gamma v(t_n + c h) + g``; stages with equal ``c``
    share one ``Gamma``.
    """
    a, b, c = tableau
    s = len(b)
    sparse = sp.issparse(A)
    n = A.shape[0]
    eye = sp.identity(n, format="csr") if sparse else np.eye(n)
    K, L, E = [], [], []  # k_i = K_i x + sum_m L_i[m] v_m + E_i
    for i in range(s):
        acc_k = None
        acc_l = [None] * s
        acc_e = np.zeros(n)
        for j in range(i):
            if a[i][j] == 0.0:
                continue
            acc_k = a[i][j] * K[j] if acc_k is None else acc_k + a[i][j] * K[j]
            for m in range(s):
                if L[j][m] is not None:
                    acc_l[m] = a[i][j] * L[j][m] if acc_l[m] is None else \
                        acc_l[m] + a[i][j] * L[j][m]
            acc_e = acc_e + a[i][j] * E[j]
        Ki = A + h * (A @ acc_k) if acc_k is not None else A
        Li = [None if acc_l[m] is None else h * (A @ acc_l[m]) for m in range(s)]
        Li[i] = B if Li[i] is None else Li[i] + B
        Ei = e + h * (A @ acc_e)
        K.append(Ki)
        L.append(Li)
        E.append(np.asarray(Ei).reshape(-1))
    Phi = eye
    g = np.zeros(n)
    gam: dict[float, Any] = {}
    for i in range(s):
        if b[i] == 0.0:
            continue
        Phi = Phi + h * b[i] * K[i]
        g = g + h * b[i] * E[i]
        for m in range(s):
            if L[i][m] is not None:
                term = h * b[i] * L[i][m]
                cm = float(c[m])
                gam[cm] = term if cm not in gam else gam[cm] + term
    if sparse:
        Phi = sp.csr_matrix(Phi)
        gam = {k: sp.csr_matrix(v) for k, v in gam.items()}
    return Phi, sorted(gam.items()), np.asarray(g).reshape(-1)
