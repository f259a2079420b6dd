"""A deterministic, in-process DAQ device: the virtual twin for tests and CI.

:class:`SimulatedDaq` models the converter and wiring effects a test needs,
and nothing random unless asked for (and then seeded):

* **AO** values are clipped (per the ``out_of_range`` policy) and quantized to
  the channel's DAC code; reading an AO returns that quantized value.
* **AI** reads the value of the wired AO (or the value set with
  :meth:`SimulatedDaq.set_input`, or 0), adds Gaussian noise of the declared
  standard deviation from a per-channel seeded stream, clips to the AI range
  (each clip counted in ``counters.saturations`` / ``counters.saturated``) and
  quantizes to the ADC code.
* **DI** reads the wired DO (or :meth:`set_input`, or ``False``).
* **counter** counts rising edges of its wired source since the last
  :meth:`reset`: of a DO (each False -> True write), or of a PWM output over
  time (one rising edge at the start of every period), wrapping at
  ``2**resolution_bits``.
* **pwm_out** ``(duty, frequency)``; **frequency_in** wired to it measures the
  frequency the way a period-counting input does: ``f_meas = f_tb / round(f_tb
  / f)`` with ``f_tb = timebase_hz``.  A PWM at duty 0 or 1 (no edges) or
  frequency 0 measures 0 Hz.

Time comes from ``clock``: an object with ``now_ns()`` (the :mod:`hil.runner`
clocks), a callable returning seconds, or ``None``: a manual clock, moved by
:meth:`SimulatedDaq.advance`, that starts at 0 s.

PWM timing model: a PWM started at :math:`t_0` (from off) has rising edges at
:math:`t_0 + k/f`, :math:`k = 0, 1, \\ldots`; a new ``(duty, frequency)``
written while it runs takes effect at the end of the current period (as
glitch-free PWM hardware latches it), so edge counts stay exact across changes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .device import ChannelSpec, DaqDevice, quantize_code

__all__ = ["SimulatedDaq"]

# which source kinds may drive which destination kinds
_WIRING_RULES: dict[str, tuple[str, ...]] = {
    "ao": ("ai",),
    "do": ("di", "counter"),
    "pwm_out": ("counter", "frequency_in"),
}


class _Pwm:
    """Rising-edge bookkeeping of one PWM output (times in seconds)."""

    def __init__(self) -> None:
        self.duty = 0.0
        self.freq = 0.0
        self.t0 = 0.0  # time of edge k = 0 of the current segment
        self.closed = 0  # edges of earlier segments

    @property
    def running(self) -> bool:
        return self.freq > 0 and 0 < self.duty < 1

    def edges(self, t: float) -> int:
        """Rising edges since creation up to and including time ``t``."""
        if not self.running or t < self.t0:
            return self.closed
        return self.closed + math.floor((t - self.t0) * self.freq + 1e-9) + 1

    def set(self, duty: float, freq: float, t: float) -> None:
        if self.running:
            n = math.floor((t - self.t0) * self.freq + 1e-9) + 1 if t >= self.t0 else 0
            self.closed += n
            t_next = self.t0 + n / self.freq  # end of the current period
        else:
            t_next = t
        self.duty, self.freq, self.t0 = duty, freq, t_next


class SimulatedDaq(DaqDevice):
    """A simulated DAQ device (see the module docstring).

    Parameters
    ----------
    channels : sequence of ChannelSpec (or mappings of its fields)
    wiring : mapping, optional
        ``{source: destination}`` (or ``{source: [destinations]}``):
        ``ao -> ai``, ``do -> di | counter``, ``pwm_out -> counter |
        frequency_in``.  A destination has at most one source.
    noise : mapping, optional
        ``{ai_name: std}``: Gaussian noise standard deviation in the channel unit.
    seed : int
        Seed of the noise streams (one independent stream per AI channel, so a
        channel's sequence does not depend on what else is read).
    clock : object with ``now_ns()``, callable returning seconds, or None
        Time for PWM edges; ``None``: a manual clock moved by :meth:`advance`.
    timebase_hz : float
        Timebase of frequency measurement.
    out_of_range, name
        See :class:`~hil.daq.device.DaqDevice`.

    Examples
    --------
    >>> from hil.daq import ChannelSpec, SimulatedDaq
    >>> daq = SimulatedDaq([ChannelSpec("ao0", "ao", (-10, 10), "V", 16),
    ...                     ChannelSpec("ai0", "ai", (-10, 10), "V", 16)],
    ...                    wiring={"ao0": "ai0"})
    >>> with daq:
    ...     daq.write({"ao0": 1.0})
    ...     round(daq.read(["ai0"])["ai0"], 6)
    0.999924
    """

    kind = "daq-sim"

    def __init__(self, channels: Iterable[ChannelSpec | Mapping[str, Any]], *,
                 wiring: Mapping[str, str | Sequence[str]] | None = None,
                 noise: Mapping[str, float] | None = None, seed: int = 0,
                 clock: Any = None, timebase_hz: float = 100e6,
                 out_of_range: str = "raise", name: str | None = None) -> None:
        super().__init__(channels, name=name, out_of_range=out_of_range)
        self.source: dict[str, str] = {}  # destination -> source
        for src, dsts in (wiring or {}).items():
            s = self.channel(src)
            allowed = _WIRING_RULES.get(s.kind, ())
            for dst in [dsts] if isinstance(dsts, str) else list(dsts):
                d = self.channel(dst)
                if d.kind not in allowed:
                    ok = " or ".join(allowed) if allowed else "nothing (it is an input)"
                    raise ValueError(f"{self.where}: cannot wire {src} ({s.kind}) -> {dst} "
                                     f"({d.kind}); a {s.kind} can drive {ok}")
                if dst in self.source:
                    raise ValueError(f"{self.where}: {dst} is wired from both "
                                     f"{self.source[dst]} and {src}")
                self.source[dst] = src
        self.noise: dict[str, float] = {}
        for n, std in (noise or {}).items():
            if self.channel(n).kind != "ai":
                raise ValueError(f"{self.where}: noise on {n!r}: only ai channels are noisy")
            if not (math.isfinite(std) and std >= 0):
                raise ValueError(f"{self.where}: noise std on {n!r} must be >= 0, got {std}")
            self.noise[n] = float(std)
        if not timebase_hz > 0:
            raise ValueError(f"{self.where}: timebase_hz must be > 0, got {timebase_hz}")
        self.timebase_hz = float(timebase_hz)
        self.seed = seed
        self._now = self._make_clock(clock)
        self._manual_t = 0.0
        self._outputs: dict[str, Any] = {}
        self._inputs: dict[str, Any] = {}
        self._do_edges: dict[str, int] = {}
        self._pwm: dict[str, _Pwm] = {}
        self._counter_base: dict[str, int] = {}
        self._rngs: dict[str, np.random.Generator] = {}
        self._init_state()

    # ------------------------------------------------------------------- time
    def _make_clock(self, clock: Any) -> Callable[[], float]:
        if clock is None:
            self._manual = True
            return lambda: self._manual_t
        self._manual = False
        if hasattr(clock, "now_ns"):
            return lambda: clock.now_ns() * 1e-9
        if callable(clock):
            return lambda: float(clock())
        raise TypeError(f"{self.where}: clock must have now_ns(), be a callable returning "
                        f"seconds, or be None; got {clock!r}")

    @property
    def time(self) -> float:
        """The device's current time in seconds."""
        return self._now()

    def advance(self, dt: float) -> float:
        """Move the manual clock on by ``dt`` seconds; returns the new time."""
        if not self._manual:
            raise RuntimeError(f"{self.where}: advance() needs the manual clock (clock=None); "
                               f"this device follows an external clock")
        if dt < 0:
            raise ValueError(f"{self.where}: advance({dt}): time cannot go back")
        self._manual_t += dt
        return self._manual_t

    # ------------------------------------------------------------------ state
    def _init_state(self) -> None:
        """Power-on state: outputs at 0 / False / PWM off, counters 0, noise reseeded."""
        self._outputs = {}
        for s in self.channels:
            if s.kind == "ao":
                self._outputs[s.name] = s.quantize(min(max(0.0, s.range[0]), s.range[1]))
            elif s.kind == "do":
                self._outputs[s.name] = False
            elif s.kind == "pwm_out":
                self._outputs[s.name] = (0.0, 0.0)
        self._do_edges = {n: 0 for n in self.names("do")}
        self._pwm = {n: _Pwm() for n in self.names("pwm_out")}
        self._counter_base = {n: 0 for n in self.names("counter")}
        ais = self.names("ai")
        streams = np.random.SeedSequence(self.seed).spawn(len(ais))
        self._rngs = {n: np.random.default_rng(ss) for n, ss in zip(ais, streams, strict=True)}

    def power_cycle(self) -> None:
        """Back to the power-on state (outputs, counters, noise streams)."""
        self._init_state()

    def set_input(self, name: str, value: Any) -> None:
        """Drive an unwired input from the test (a plant model): ``ai`` float,
        ``di`` bool.  (Counters and frequency inputs count wired outputs only.)"""
        spec = self.channel(name)
        if spec.kind not in ("ai", "di"):
            raise ValueError(f"{self.where}: set_input({name!r}): only ai and di channels, "
                             f"not {spec.kind}")
        if name in self.source:
            raise ValueError(f"{self.where}: set_input({name!r}): it is wired from "
                             f"{self.source[name]}; write that output instead")
        self._inputs[name] = bool(value) if spec.kind == "di" else float(value)

    # ----------------------------------------------------------- DaqDevice API
    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def _write(self, values: dict[str, Any]) -> None:
        t = self._now()
        for name, v in values.items():
            spec = self.channel(name)
            if spec.kind == "ao":
                self._outputs[name] = spec.quantize(v)
            elif spec.kind == "do":
                if v and not self._outputs[name]:
                    self._do_edges[name] += 1
                self._outputs[name] = v
            else:  # pwm_out
                duty, freq = v
                if spec.resolution_bits is not None:
                    full = (1 << spec.resolution_bits) - 1
                    duty = quantize_code(duty, 0.0, 1.0, spec.resolution_bits) / full
                self._pwm[name].set(duty, freq, t)
                self._outputs[name] = (duty, freq)

    def _read(self, specs: Sequence[ChannelSpec]) -> dict[str, Any]:
        t = self._now()
        return {s.name: self._read_one(s, t) for s in specs}

    def _reset(self, specs: Sequence[ChannelSpec]) -> None:
        t = self._now()
        for s in specs:
            self._counter_base[s.name] = self._edges(self.source.get(s.name), t)

    # ----------------------------------------------------------------- models
    def _edges(self, src: str | None, t: float) -> int:
        if src is None:
            return 0
        if src in self._do_edges:
            return self._do_edges[src]
        return self._pwm[src].edges(t)

    def _saturated(self, name: str) -> None:
        self.counters.saturations += 1
        self.counters.saturated[name] = self.counters.saturated.get(name, 0) + 1

    def _read_one(self, s: ChannelSpec, t: float) -> Any:
        if s.is_output:
            return self._outputs[s.name]
        src = self.source.get(s.name)
        if s.kind == "ai":
            v = self._outputs[src] if src else self._inputs.get(s.name, 0.0)
            std = self.noise.get(s.name, 0.0)
            if std:
                v += std * float(self._rngs[s.name].standard_normal())
            lo, hi = s.range
            if v < lo or v > hi:
                self._saturated(s.name)
            return s.quantize(v)
        if s.kind == "di":
            return bool(self._outputs[src]) if src else self._inputs.get(s.name, False)
        if s.kind == "counter":
            bits = s.resolution_bits or 32
            return (self._edges(src, t) - self._counter_base[s.name]) % (1 << bits)
        # frequency_in
        pwm = self._pwm[src] if src else None
        if pwm is None or not pwm.running:
            return 0.0
        f = self.timebase_hz / max(1, round(self.timebase_hz / pwm.freq))
        lo, hi = s.range
        if f < lo or f > hi:
            self._saturated(s.name)
            f = min(max(f, lo), hi)
        return f
