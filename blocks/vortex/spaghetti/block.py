"""The segmented strip in the wall gap as a block (:mod:`blocks.vortex.spaghetti`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, refuse

from .beam import SegmentedBeam


# --------------------------------------------------------------------------- the block
class SpaghettiBeam(Block):
    r"""The segmented beam in the wall gap as a block (the model: :mod:`blocks.vortex.spaghetti`).

    .. math::

        M(q)\,\ddot q + h(q,\dot q) = Q, \qquad q = (y_0, \varphi_1, \dots, \varphi_{n_b}),
        \qquad \dot X_0 = V

    (finite segments in minimal coordinates; :math:`Q` from the hinge springs and
    dampers, the gap and guide contacts and the quasi-steady fluid force).

    Ports
    -----
    in   speed           scalar [m/s]     drive speed of the driven end along +X (> 0:
                                          drawn out)
    in   acceleration    scalar [m/s^2]   its rate of change (only with
                                          ``drive_acceleration=True``)
    out  tip             (2,) [m]         free-end position; state only
    out  tip_y           scalar [m]       free-end Y (the tip displacement); state only
    out  tip_deflection  scalar [m]       free end's distance from the beam tangent at the
                                          wall (elastic deflection of the wetted part);
                                          state only
    out  nodes           (n_b+1, 2) [m]   node positions (driven end first); state only
    out  angles          (n_b,) [rad]     segment angles; state only
    out  wetted_length   scalar [m]       length of beam in the fluid (X > 0); state only
    out  contact_force   (2,) [N/m]       total contact force on the beam (per unit span);
                                          reads speed
    out  fluid_force     (2,) [N/m]       total fluid force (lift + drag) on the beam;
                                          reads speed

    The forces read ``speed`` (the driven end's velocity enters the contact damping and
    the fluid boundary condition).

    Parameters
    ----------
    beam : SegmentedBeam
        The model (material, segments, fluid, gap and guide).
    wetted_length_m : float
        Length [m] already outside the wall at t = 0 (for the default initial state).
    tip_impulse : float
        Y impulse [N s per m span] at the free end at t = 0 (for the default initial
        state).
    initial_state : array, optional
        ``[X0, y0, φ..., ẏ0, φ̇...]``; default: :meth:`SegmentedBeam.initial_state` with
        ``wetted_length_m`` and ``tip_impulse``.
    drive_acceleration : bool
        Declare the input ``acceleration`` [m/s²], the drive's Ẍ0 (e.g. a run-up); it acts
        on every segment as the body force -m Ẍ0 along X.  Without it the drive speed is
        taken as piecewise constant.
    """

    argument_checks = {"wetted_length_m": NON_NEGATIVE}

    def __init__(self, name: str, beam: SegmentedBeam, wetted_length_m: float = 0.125,
                 tip_impulse: float = 0.0, initial_state: Any = None,
                 drive_acceleration: bool = False) -> None:
        super().__init__(name)
        self.beam = beam
        n = beam.n
        if initial_state is None and wetted_length_m > beam.length_m:
            raise refuse(self, "wetted_length_m", wetted_length_m,
                         f"a length in [0, {beam.length_m:g}] m, the beam's length")
        x = (beam.initial_state(wetted_length_m, tip_impulse) if initial_state is None
             else np.asarray(initial_state, float))
        if x.shape != (2 * n + 3,):
            raise ParameterError(f"SpaghettiBeam '{name}': initial_state needs {2 * n + 3} "
                                 f"values, got shape {x.shape}")
        self.speed = self.declare_input("speed", unit="m/s",
                                        description="drive speed along +X (> 0 draws out)")
        self.acceleration = (self.declare_input("acceleration", unit="m/s^2",
                                                description="drive acceleration along +X")
                             if drive_acceleration else None)
        self.x = self.declare_continuous_state("x", x)
        st = ()
        self.declare_output("tip", lambda c: self._nodes(c)[-1], shape=(2,), unit="m",
                            depends_on=st)
        self.declare_output("tip_y", lambda c: float(self._nodes(c)[-1, 1]), unit="m",
                            depends_on=st)
        self.declare_output("tip_deflection",
                            lambda c: self.beam.tip_deflection(np.asarray(c.state(self.x))),
                            unit="m", depends_on=st)
        self.declare_output("nodes", self._nodes, shape=(n + 1, 2), unit="m", depends_on=st)
        self.declare_output("angles", lambda c: np.array(c.state(self.x)[2:n + 2]),
                            shape=(n,), unit="rad", depends_on=st)
        self.declare_output("wetted_length", self._wetted, unit="m", depends_on=st)
        self.declare_outputs(
            [dict(name="contact_force", shape=(2,), unit="N/m"),
             dict(name="fluid_force", shape=(2,), unit="N/m")], self._forces,
            depends_on=("speed",))

    def _nodes(self, ctx: Any) -> np.ndarray:
        x = np.asarray(ctx.state(self.x))
        _, q, _ = self.beam.split(x)
        xs, ys = self.beam.nodes(x[0], q)
        return np.column_stack((xs, ys))

    def _wetted(self, ctx: Any) -> float:
        xs = self._nodes(ctx)[:, 0]
        s0 = self.beam.wetted_start(xs)
        return 0.0 if s0 is None else self.beam.length_m - s0

    def _forces(self, ctx: Any):
        ev = self.beam.evaluate(np.asarray(ctx.state(self.x)), float(ctx.input(self.speed)))
        c, f = ev["contact"], ev["fluid"]
        return np.array([c.real, c.imag]), np.array([f.real, f.imag])

    def derivatives(self, ctx: Any) -> np.ndarray:
        acc = 0.0 if self.acceleration is None else float(ctx.input(self.acceleration))
        return self.beam.rhs(np.asarray(ctx.state(self.x)), float(ctx.input(self.speed)), acc)

