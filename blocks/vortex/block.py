r"""The :class:`VortexFlow` block: a discrete vortex method as a sampled subsystem.

The flow (:class:`~blocks.vortex.flow.DiscreteVortexFlow`) advances with its own fixed
step ``dt`` in a periodic update; the body's rigid motion is read from the inputs at
each hit :math:`t_n` and the force, moment and vortex count computed there are held
until the next hit (sampled outputs: a data-exchange delay of one flow step for a
structure that reads them, the usual explicit fluid-structure coupling; a recorder sees
at :math:`t_{n+1}` the values of the update at :math:`t_n`).  The whole flow
state (vortex arrays, reservoir, impulse history, random generator) is one discrete
state, copied at every update, so checkpoints and rollback of the context work.

Ports: :class:`VortexFlow`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block

from .flow import DiscreteVortexFlow
from .panels import rigid_motion


class VortexFlow(Block):
    r"""A rigid body in 2-D vortex flow, stepped every ``flow.dt`` (module docstring; the
    method: :mod:`blocks.vortex.flow`).  Force and moment per unit span from the vortex
    impulse:

    .. math::

        \mathbf F = -\frac{d\mathbf P}{dt} + \rho A \frac{d\mathbf V_c}{dt}, \qquad
        \mathbf P = \rho \sum_k \Gamma_k\,(y_k, -x_k), \qquad
        M = -\frac{dL}{dt}, \qquad L = -\frac{\rho}{2}\sum_k \Gamma_k\,|\mathbf x_k|^2

    Ports
    -----
    in   position          (2,) [m]           body frame origin in the world frame
    in   velocity          (2,) [m/s]         velocity of that origin
    in   angle             scalar [rad]       rotation of the body frame (counter-clockwise)
    in   angular_velocity  scalar [rad/s]
    out  force             (2,) [N/m]         fluid force on the body per unit span; sampled
    out  moment            scalar [N]         moment about the world origin per unit span
                                              (N m/m); sampled
    out  n_vortices        scalar [no unit]   number of free vortices; sampled

    No output reads an input directly (``depends_on=()``): no algebraic loop with a
    structure model that feeds the motion back.

    Parameters
    ----------
    name : str
    flow : DiscreteVortexFlow
        Body, free stream, step and the method's options; ``flow.dt`` is the period.
    """

    def __init__(self, name: str, flow: DiscreteVortexFlow) -> None:
        super().__init__(name)
        if not isinstance(flow, DiscreteVortexFlow):
            from cosim.errors import ParameterError
            raise ParameterError(f"VortexFlow '{name}': flow must be a DiscreteVortexFlow, "
                                 f"got {type(flow).__name__}")
        self.flow = flow
        self.position = self.declare_input("position", shape=(2,), unit="m")
        self.velocity = self.declare_input("velocity", shape=(2,), unit="m/s")
        self.angle = self.declare_input("angle", unit="rad")
        self.angular_velocity = self.declare_input("angular_velocity", unit="rad/s")
        self.state = self.declare_discrete_state("flow", flow.initial_state())
        self.force = self.declare_output(
            "force", lambda ctx: np.array(ctx.discrete(self.state).force, dtype=float),
            shape=(2,), unit="N/m", depends_on=())
        self.moment = self.declare_output(
            "moment", lambda ctx: float(ctx.discrete(self.state).moment), unit="N",
            depends_on=())
        self.n_vortices = self.declare_output(
            "n_vortices", lambda ctx: float(ctx.discrete(self.state).n_free), depends_on=())
        self.declare_periodic_update(flow.dt, self._update)

    def _update(self, ctx: Any) -> None:
        motion = rigid_motion(self.flow.body, ctx.input(self.position), ctx.input(self.angle),
                              ctx.input(self.velocity), ctx.input(self.angular_velocity))
        s = ctx.discrete(self.state).copy()
        self.flow.step(s, motion)
        ctx.set_discrete(self.state, s)
