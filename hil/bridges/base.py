"""What every bridge block shares: the injected backend, the sample rate, error policy.

A bridge is an ordinary sampled :class:`cosim.Block` whose ports are declared up front
with their units, and whose I/O goes through a :class:`hil.backend.Backend` given to it
(opened by the caller, by ``cosim hil run``'s ``io.open``, or by a test: the block never
creates its transport, so the same diagram runs on ``virtual`` CAN in CI and on an
adapter on the bench).

Timing at a sample hit ``t_k`` (the engine evaluates outputs, then runs updates):

* a **receiving** bridge reads everything that arrived since ``t_{k-1}`` when its
  outputs are evaluated at ``t_k``, so blocks downstream see the fresh values *in the
  same hit*.  The receive path goes one way: its outputs are one group
  (:meth:`Bridge.declare_received`) whose calc, at the hit's first evaluation, calls
  :meth:`Bridge.receive` once: one :meth:`~hil.backend.Backend.receive_batch` of the
  frames the bridge accepts (the backend filters them), decoded and stored
  (``_store``); every port is then a read of the store (``_outputs``).  A DAQ input
  reads its device once instead (single-point: ``_fetch``);
* a **sending** bridge writes in its periodic update at ``t_k``, after the outputs of
  the hit were evaluated, so it sends what the diagram computed at ``t_k``.

A receive-compute-send chain in one diagram therefore adds no sample of delay; the
transport and the other side's rate do.

The device state is outside the context: bridges declare an opaque state without
save/restore, so a scheduler that would roll back (step control with rollback) refuses
with an error naming the block instead of replaying I/O.

Skipped frames: while the real-time runner integrates through frames it skipped
(``overrun="skip"``), it calls :meth:`Bridge.suppress_io`: a receiver keeps its values and
reads at the next frame that runs, a sender sends nothing (no burst of late frames).

Every bridge reports ``io_figures()`` for the run's verdict (:mod:`hil.verdict`): outages
(link losses), and for receivers stale episodes, frames lost and bad frames.

Implementers' checklist
-----------------------
1. Subclass :class:`Bridge`, set ``kind``, call ``super().__init__(name, backend,
   period_s, ...)`` first; never create the transport (it is injected, opened).
2. A receiver: set ``_accept`` to the frame keys it decodes (the backend drops the
   others), declare its outputs with :meth:`Bridge.declare_received` (one group, units
   up front), decode one hit's frames into its store in ``_store(frames, t)``
   (``None``: the read failed) and return the port values from the store in
   ``_outputs()``, with no I/O; a device that is sampled rather than streamed
   overrides ``_fetch`` (as :class:`~hil.bridges.daq.DaqInput`).
3. A sender: declare inputs with units and send in a periodic update, skipping the
   frames :meth:`Bridge.suppress_io` suppresses.
4. Route backend errors through ``_failed`` (the ``on_error`` policy) and ``_retry``;
   report ``stats()`` and ``io_figures()``.

Error policy ``on_error`` (backend errors: disconnects, bus-off, timeouts):

``"raise"``  stop the run with the error, naming the block (the default);
``"hold"``   count it in :attr:`Bridge.errors`, log once per outage, keep the last
             values (receivers then go stale, which their own policy handles), and
             call ``backend.recover()`` (when the backend has it) at most every
             ``recover_every_s`` of simulated time.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from cosim import Block
from cosim.errors import ParameterError

from ..backend import MAX_BATCH
from ..errors import HILError

__all__ = ["Bridge", "BridgeError", "ERROR_POLICIES"]

log = logging.getLogger("hil.bridges")

ERROR_POLICIES = ("raise", "hold")
#: frames read per sample hit at most (a flood cannot stall a frame forever)
MAX_FRAMES_PER_HIT = MAX_BATCH


class BridgeError(HILError):
    """A bridge block could not do its I/O (names the block, the backend and the cause)."""


def check_period(kind: str, name: str, period_s: Any, offset_s: Any) -> tuple[float, float]:
    try:
        period, offset = float(period_s), float(offset_s)
    except (TypeError, ValueError):
        raise ParameterError(f"{kind} '{name}': period_s and offset_s must be numbers, got "
                             f"{period_s!r}, {offset_s!r}") from None
    if not (math.isfinite(period) and period > 0.0):
        raise ParameterError(f"{kind} '{name}': period_s must be a positive number of seconds, "
                             f"got {period_s!r}")
    return period, offset


class Bridge(Block):
    """Base of the bridge blocks (see the module docstring).

    Parameters
    ----------
    backend : hil.backend.Backend
        The transport, opened by the caller before the run starts.
    period_s, offset_s : float
        Sample period and offset of the bridge's I/O.
    on_error : {"raise", "hold"}
    recover_every_s : float
        With ``"hold"``: the least simulated time between ``backend.recover()`` calls.
    """

    kind = "Bridge"

    def __init__(self, name: str, backend: Any, period_s: float, *, offset_s: float = 0.0,
                 on_error: str = "raise", recover_every_s: float = 0.1) -> None:
        super().__init__(name)
        self.period_s, self.offset_s = check_period(self.kind, name, period_s, offset_s)
        for attr in ("read", "write", "is_open"):
            if not hasattr(backend, attr):
                raise ParameterError(f"{self.kind} '{name}': backend must be a hil Backend "
                                     f"(read/write/is_open), got {type(backend).__name__}")
        if on_error not in ERROR_POLICIES:
            raise ParameterError(f"{self.kind} '{name}': on_error must be one of "
                                 f"{', '.join(ERROR_POLICIES)}, got {on_error!r}")
        self.backend = backend
        self.on_error = on_error
        self.recover_every_s = float(recover_every_s)
        #: backend errors absorbed under ``on_error="hold"``
        self.errors = 0
        #: successful ``backend.recover()`` calls
        self.recoveries = 0
        self.last_error: BaseException | None = None
        #: outages: the I/O failed after working (each counted once: a link loss)
        self.outages = 0
        self._down = False
        self._suppressed = False  # the runner skips frames: no I/O
        self._accept: set | None = None  # frame keys a receiver decodes (the backend filters)
        self._last_recover = -math.inf
        self._tick: int | None = None  # the last tick a receiver read
        # the device is state outside the context, and it cannot be rolled back
        self.declare_opaque_state("device")

    def __getattr__(self, name: str) -> Any:
        """Ports by attribute (``rx.range``, ``tx.throttle``) when no attribute of that
        name exists; ``block.output(name)`` / ``block.input(name)`` always work."""
        decl = self.__dict__.get("_decl")
        if decl is None or name.startswith("_"):
            raise AttributeError(name)
        if name in decl.outputs:
            return decl.outputs[name]
        if name in decl.inputs:
            return decl.inputs[name]
        ports = ", ".join([*decl.inputs, *decl.outputs])
        raise AttributeError(f"{type(self).__name__} '{self.name}' has no attribute or port "
                             f"{name!r}; ports: {ports}")

    # ------------------------------------------------------------------ helpers
    @property
    def where(self) -> str:
        return f"{self.kind} '{self.path}' on {getattr(self.backend, 'where', self.backend)}"

    def _require_open(self) -> None:
        if not self.backend.is_open:
            state = getattr(getattr(self.backend, "state", None), "value", "closed")
            raise BridgeError(f"{self.where}: the backend is {state}; open it before the run "
                              f"(with backend: ..., backend.open(), or io.open in a "
                              f"'cosim hil run' file)")

    def _failed(self, exc: BaseException, op: str, t: float) -> None:
        """Apply the error policy to a backend error raised during ``op`` at time ``t``."""
        if self.on_error == "raise" or not isinstance(exc, HILError):
            raise BridgeError(f"{self.where}: {op} failed at t = {t:.6g} s: {exc}; "
                              f"on_error='hold' keeps running on stale values") from exc
        self.errors += 1
        self.last_error = exc
        if not self._down:
            self.outages += 1
            log.warning("%s: %s failed at t = %.6g s (%s); holding values", self.where, op, t,
                        exc)
            self._down = True

    def _retry(self, t: float) -> None:
        """Before I/O under ``"hold"``: a backend faulted by an earlier error (a bus-off)
        is recovered here, at most every ``recover_every_s``, so the first I/O after the
        outage does not fail for the stale fault."""
        if not self._down or self.on_error != "hold":
            return
        state = getattr(getattr(self.backend, "state", None), "value", "open")
        recover = getattr(self.backend, "recover", None)
        if state != "faulted" or recover is None:
            return
        if t - self._last_recover < self.recover_every_s - 1e-9:
            return
        self._last_recover = t
        try:
            recover()
        except HILError as again:
            log.debug("%s: recover at t = %.6g s failed: %s", self.where, t, again)
            return
        self.recoveries += 1
        log.warning("%s: backend recovered at t = %.6g s", self.where, t)

    # ---------------------------------------------------------------- receivers
    def declare_received(self, specs: list[dict]) -> tuple:
        """Declare a receiver's outputs (``specs``: :meth:`cosim.Block.declare_outputs`
        dicts, in port order) as one group: each evaluation at a hit calls
        :meth:`_sample` once for all of them."""
        if type(self)._fetch is Bridge._fetch and not all(
                hasattr(self.backend, a) for a in ("receive_batch", "check")):
            raise ParameterError(f"{self.kind} '{self.name}': a receiver's backend must be a "
                                 f"hil Backend (receive_batch, check), got "
                                 f"{type(self.backend).__name__}")
        if self._accept is not None and getattr(self.backend, "frame_key", None) is None:
            raise ParameterError(f"{self.kind} '{self.name}': {self.backend.where}'s frames "
                                 f"carry no id to select them by; give a backend of frames "
                                 f"with ids (a CAN backend)")
        return self.declare_outputs(specs, self._sample, depends_on=())

    def _sample(self, ctx: Any) -> tuple:
        """The receiver's outputs at ``ctx``: :meth:`receive` at the hit's first
        evaluation, then the stored values (:meth:`_outputs`, a pure read)."""
        if self._tick != ctx.ticks and not self._suppressed:
            self.receive(ctx)
        return self._outputs()

    def receive(self, ctx: Any) -> None:
        """Read the transport once for the hit at ``ctx``: everything that arrived
        since the last hit (:meth:`_fetch`), decoded and stored (:meth:`_store`);
        errors go through the policy (then ``_store(None, t)``: nothing arrived)."""
        first = self._tick is None
        self._tick = ctx.ticks
        if first:
            self._require_open()
        if self._down:
            self._retry(ctx.time)
        try:
            got = self._fetch()
        except HILError as exc:
            self._failed(exc, self.receive_op, ctx.time)
            got = None
        else:
            if self._down:
                self._ok()
        self._store(got, ctx.time)

    #: what a failed :meth:`_fetch` is called in messages
    receive_op = "receive"

    def _fetch(self) -> Any:
        """What arrived since the last hit: one :meth:`~hil.backend.Backend.receive_batch`
        of the frames this bridge accepts (a reader thread's error surfaces first)."""
        b = self.backend
        b.check()
        return b.receive_batch(MAX_FRAMES_PER_HIT, self._accept)

    def _store(self, got: Any, t: float) -> None:
        """Decode and store what :meth:`_fetch` returned (``None``: the read failed)."""
        raise NotImplementedError(f"{type(self).__name__} receives nothing")

    def _outputs(self) -> tuple:
        """The values of the outputs of :meth:`declare_received`, from the store."""
        raise NotImplementedError(f"{type(self).__name__} receives nothing")

    def _ok(self) -> None:
        if self._down:
            log.warning("%s: I/O works again", self.where)
            self._down = False

    def stats(self) -> dict:
        """Counters of this bridge (for summaries and tests)."""
        return {"errors": self.errors, "recoveries": self.recoveries, "outages": self.outages}

    def suppress_io(self, on: bool) -> None:
        """While on, the bridge neither reads nor sends (the real-time runner's skipped
        frames: the model integrates through them, the I/O frames are dropped)."""
        self._suppressed = bool(on)

    def io_figures(self) -> dict:
        """Counters for the run's verdict (:mod:`hil.verdict`)."""
        fig = {"link_losses": self.outages}
        fresh = getattr(self, "fresh", None)
        if isinstance(fresh, Freshness):
            # a message never received in a whole run (past the start-up grace) is a stale
            # episode too: a controller that never started is not a passing run
            never = sum(1 for k in fresh.keys if fresh.count[k] == 0
                        and fresh.t0 is not None and fresh.t - fresh.t0 > fresh.startup_s)
            fig["stale_episodes"] = sum(fresh.stale_events.values()) + never
            if fresh.episodes:
                fig["stale_at"] = [tuple(ep) for ep in fresh.episodes]
        return fig


STALE_POLICIES = ("hold", "safe", "raise")
#: stale episodes kept with their times per receiver (all are counted)
MAX_EPISODES = 20


class Freshness:
    """Staleness bookkeeping of a receiving bridge, per key (a CAN message, a serial
    record): ages in simulated time, a startup grace, stale-event counts and the value
    policy (``"hold"``, ``"safe"``, ``"raise"``) of the module docstring of
    :mod:`hil.bridges.can`."""

    def __init__(self, owner: Bridge, keys: list[str], limits: dict[str, float],
                 on_stale: str, startup_s: float) -> None:
        if on_stale not in STALE_POLICIES:
            raise ParameterError(f"{owner.kind} '{owner.name}': on_stale must be one of "
                                 f"{', '.join(STALE_POLICIES)}, got {on_stale!r}")
        for k, lim in limits.items():
            if not (isinstance(lim, int | float) and lim > 0.0):
                raise ParameterError(f"{owner.kind} '{owner.name}': stale_after_s for {k} must "
                                     f"be a positive number of seconds, got {lim!r}")
        self.owner = owner
        self.keys = list(keys)
        self.limits = {k: float(v) for k, v in limits.items()}
        self.on_stale = on_stale
        self.startup_s = float(startup_s)
        self.last_rx: dict[str, float] = {}
        self.count = {k: 0 for k in keys}
        self.stale_events = {k: 0 for k in keys}
        #: the first stale episodes, ``[key, t_last_received, t_received_again or None]``
        #: (bounded)
        self.episodes: list[list] = []
        self.fresh = {k: False for k in keys}
        self.t0: float | None = None
        self.t = 0.0

    def received(self, key: str, t: float) -> None:
        self.last_rx[key] = t
        self.count[key] += 1

    def in_startup(self, key: str) -> bool:
        return key not in self.last_rx and self.t - (self.t0 or 0.0) <= self.startup_s

    def update(self, t: float) -> None:
        """Recompute freshness at ``t``; raises under ``"raise"``."""
        if self.t0 is None:
            self.t0 = t
        self.t = t
        for k in self.keys:
            last = self.last_rx.get(k)
            fresh = last is not None and t - last <= self.limits[k] + 1e-12
            if self.fresh[k] and not fresh:
                self.stale_events[k] += 1
                if len(self.episodes) < MAX_EPISODES:
                    self.episodes.append([k, last, None])
            elif fresh and not self.fresh[k] and self.episodes:
                for ep in reversed(self.episodes):
                    if ep[0] == k:
                        if ep[2] is None:
                            ep[2] = t
                        break
            self.fresh[k] = fresh
            if not fresh and self.on_stale == "raise" and not self.in_startup(k):
                from ..can.cyclic import StaleSignal
                age = math.inf if last is None else t - last
                what = ("never received" if last is None else
                        f"last received {age * 1e3:.1f} ms ago")
                raise StaleSignal(f"{self.owner.where}: {k} is stale at t = {t:.6g} s ({what}, "
                                  f"limit {self.limits[k] * 1e3:.1f} ms); the sender stopped "
                                  f"or the link is down", signal=k, age=age)

    def value(self, key: str, last: float, safe: float | None, initial: float) -> float:
        """The value a port of ``key`` shows now under the policy."""
        if self.fresh[key] or self.on_stale == "hold":
            return last
        if self.in_startup(key):
            return initial
        return last if safe is None else safe

    def all_fresh(self) -> float:
        return float(all(self.fresh.values()))
