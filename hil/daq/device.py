"""The DAQ device abstraction: declared channels, single-point ``read``/``write``.

A DAQ device (a card, a Modbus or OPC UA server, or the in-process
:class:`~hil.daq.simulated.SimulatedDaq`) is described by its channels, each a
:class:`ChannelSpec` (name, kind, range, unit, resolution).  :class:`DaqDevice`
owns what is the same for every device: the lifecycle, name lookup (an unknown
name lists the channels), kind checks (writing an input is an error), range
checks under a declared policy, and counters.  A subclass implements only:

=========================  ===================================================
subclass implements        contract
=========================  ===================================================
``_open()`` / ``_close()`` acquire / release the device
``_read(specs)``           return ``{name: value}`` for the given (validated)
                           channels
``_write(values)``         apply ``{name: value}``; values are validated and,
                           under ``out_of_range="clip"``, already clipped
``_reset(specs)``          optional: zero the given counter channels
=========================  ===================================================

Channel kinds and their values:

==============  =========  ===================================================
kind            direction  value
==============  =========  ===================================================
``ai``          input      float in ``unit``, within ``range``
``ao``          output     float in ``unit``; outside ``range`` per the policy
``di``          input      bool
``do``          output     bool (or 0/1)
``counter``     input      int, rising edges since the last reset, wrapping at
                           ``2**resolution_bits`` (default 32 bits)
``pwm_out``     output     ``(duty, frequency)``: duty in [0, 1], frequency in
                           ``unit`` (Hz) within ``range``
``frequency_in``  input    float, the measured frequency in Hz
==============  =========  ===================================================

Quantization of a channel with ``resolution_bits = n`` over ``range = (lo, hi)``
(``ai``, ``ao``; ``pwm_out`` quantizes its duty over [0, 1]):

.. math::

    \\mathrm{code} = \\left\\lfloor \\frac{v - lo}{hi - lo} (2^n - 1) + \\tfrac12
    \\right\\rfloor, \\qquad v_q = lo + \\mathrm{code}\\,\\mathrm{LSB}, \\qquad
    \\mathrm{LSB} = \\frac{hi - lo}{2^n - 1}

(ties round up, so the result does not depend on banker's rounding).

Limitations
-----------
* Single-point, software-timed I/O only: no buffered acquisition, triggers or
  hardware-timed tasks.
* Units are checked for syntax (and Hz-compatibility for frequency kinds), not
  converted: values are in the channel's declared unit.
"""

from __future__ import annotations

import abc
import difflib
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from cosim.units import compatible, parse_unit

from ..errors import BackendError, HILError

__all__ = ["CHANNEL_KINDS", "INPUT_KINDS", "OUTPUT_KINDS", "ChannelSpec", "DaqDevice",
           "DaqCounters", "DaqError", "UnknownChannel", "ChannelKindError", "ChannelRangeError",
           "quantize_code"]

log = logging.getLogger("hil.daq")

INPUT_KINDS = ("ai", "di", "counter", "frequency_in")
OUTPUT_KINDS = ("ao", "do", "pwm_out")
CHANNEL_KINDS = ("ai", "ao", "di", "do", "counter", "pwm_out", "frequency_in")
_RANGED = ("ai", "ao", "pwm_out", "frequency_in")  # kinds that need a range
_HZ_KINDS = ("pwm_out", "frequency_in")
OUT_OF_RANGE_POLICIES = ("raise", "clip")


class DaqError(HILError):
    """Base class of DAQ device errors."""


class UnknownChannel(DaqError, KeyError):
    """A channel name that the device does not have."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ChannelKindError(DaqError, TypeError):
    """A channel used against its kind (writing an input, a bad value type)."""


class ChannelRangeError(DaqError, ValueError):
    """An output value outside its channel's range (policy ``"raise"``)."""


def quantize_code(value: float, lo: float, hi: float, bits: int) -> int:
    """The converter code of ``value`` over ``[lo, hi]`` with ``bits`` bits
    (``value`` must already be within the range)."""
    full = (1 << bits) - 1
    code = math.floor((value - lo) / (hi - lo) * full + 0.5)
    return min(max(code, 0), full)


@dataclass(frozen=True)
class ChannelSpec:
    """One channel of a DAQ device.

    Parameters
    ----------
    name : str
        Unique within the device (``"ai0"``, ``"Dev1/ao0"``, ``"pump.speed"``).
    kind : str
        One of :data:`CHANNEL_KINDS`.
    range : (float, float) or None
        ``(lo, hi)`` with ``lo < hi``; required for ``ai``, ``ao``, ``pwm_out``
        (frequency range) and ``frequency_in``; must be ``None`` for the others.
    unit : str or None
        A unit string that :func:`cosim.units.parse_unit` accepts (``"V"``,
        ``"mA"``, ``"Hz"``); frequency kinds must be Hz-compatible.
    resolution_bits : int or None
        Converter resolution (1..32) for ``ai``/``ao`` (``None``: ideal),
        duty resolution for ``pwm_out``, counter width for ``counter``
        (``None``: 32).
    """

    name: str
    kind: str
    range: tuple[float, float] | None = None
    unit: str | None = None
    resolution_bits: int | None = None
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        where = f"ChannelSpec({self.name!r})"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"ChannelSpec: name must be a non-empty str, got {self.name!r}")
        if self.kind not in CHANNEL_KINDS:
            close = difflib.get_close_matches(str(self.kind), CHANNEL_KINDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"{where}: unknown kind {self.kind!r}; kinds: "
                             f"{', '.join(CHANNEL_KINDS)}{hint}")
        if self.kind in _RANGED:
            if self.range is None:
                raise ValueError(f"{where}: a {self.kind!r} channel needs range=(lo, hi)")
            lo, hi = (float(x) for x in self.range)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ValueError(f"{where}: range must be finite with lo < hi, got {self.range}")
            if self.kind in _HZ_KINDS and lo < 0:
                raise ValueError(f"{where}: a frequency range cannot be negative, got "
                                 f"{self.range}")
            object.__setattr__(self, "range", (lo, hi))
        elif self.range is not None:
            raise ValueError(f"{where}: a {self.kind!r} channel has no range, got {self.range}")
        parse_unit(self.unit)  # raises cosim.errors.UnitError on a bad unit
        if self.kind in _HZ_KINDS and not compatible(self.unit, "Hz"):
            raise ValueError(f"{where}: a {self.kind!r} channel is in Hz; unit {self.unit!r} "
                             f"is not a frequency")
        bits = self.resolution_bits
        if bits is not None:
            if isinstance(bits, bool) or not isinstance(bits, int) or not 1 <= bits <= 64:
                raise ValueError(f"{where}: resolution_bits must be an int in 1..64 or None, "
                                 f"got {bits!r}")
            if self.kind in ("di", "do", "frequency_in"):
                raise ValueError(f"{where}: a {self.kind!r} channel has no resolution_bits")

    @property
    def is_input(self) -> bool:
        return self.kind in INPUT_KINDS

    @property
    def is_output(self) -> bool:
        return self.kind in OUTPUT_KINDS

    @property
    def lsb(self) -> float | None:
        """One code step in ``unit`` (``ai``/``ao`` with a resolution), else ``None``."""
        if self.kind not in ("ai", "ao") or self.resolution_bits is None:
            return None
        lo, hi = self.range
        return (hi - lo) / ((1 << self.resolution_bits) - 1)

    def to_code(self, value: float) -> int:
        """Converter code of ``value`` (clipped to the range first)."""
        if self.lsb is None:
            raise ValueError(f"channel {self.name!r}: only ai/ao channels with "
                             f"resolution_bits have codes")
        lo, hi = self.range
        return quantize_code(min(max(float(value), lo), hi), lo, hi, self.resolution_bits)

    def from_code(self, code: int) -> float:
        """Value of converter ``code``."""
        if self.lsb is None:
            raise ValueError(f"channel {self.name!r}: only ai/ao channels with "
                             f"resolution_bits have codes")
        full = (1 << self.resolution_bits) - 1
        if not 0 <= code <= full:
            raise ValueError(f"channel {self.name!r}: code {code} outside 0..{full}")
        return self.range[0] + code * self.lsb

    def quantize(self, value: float) -> float:
        """``value`` clipped to the range and rounded to the nearest code
        (unchanged but clipped when the channel is ideal)."""
        lo, hi = self.range
        v = min(max(float(value), lo), hi)
        return v if self.lsb is None else self.from_code(self.to_code(v))

    def describe(self) -> str:
        rng = f" [{self.range[0]:g}, {self.range[1]:g}]" if self.range else ""
        unit = f" {self.unit}" if self.unit else ""
        bits = f" {self.resolution_bits} bit" if self.resolution_bits else ""
        return f"{self.name} ({self.kind}{rng}{unit}{bits})"


@dataclass
class DaqCounters:
    """What went through a device since it was created."""

    reads: int = 0  # read() calls
    writes: int = 0  # write() calls
    clipped: int = 0  # output values clipped under out_of_range="clip"
    saturations: int = 0  # input readings clipped at a range end (all channels)
    saturated: dict[str, int] = field(default_factory=dict)  # the same, per channel

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _as_spec(ch: ChannelSpec | Mapping[str, Any]) -> ChannelSpec:
    if isinstance(ch, ChannelSpec):
        return ch
    if isinstance(ch, Mapping):
        return ChannelSpec(**ch)
    raise TypeError(f"a channel must be a ChannelSpec or a mapping of its fields, got {ch!r}")


class DaqDevice(abc.ABC):
    """Abstract base of a DAQ device (see the module docstring).

    Parameters
    ----------
    channels : sequence of ChannelSpec (or of mappings of its fields)
    name : str, optional
        For messages.
    out_of_range : {"raise", "clip"}
        What ``write`` does with an output value outside its range (and a PWM
        duty outside [0, 1]): raise :class:`ChannelRangeError`, or clip it to the
        range and count it in ``counters.clipped``.
    """

    kind = "daq"

    def __init__(self, channels: Iterable[ChannelSpec | Mapping[str, Any]], *,
                 name: str | None = None, out_of_range: str = "raise") -> None:
        specs = tuple(_as_spec(c) for c in channels)
        if not specs:
            raise ValueError(f"{type(self).__name__}: no channels declared")
        seen: dict[str, ChannelSpec] = {}
        for s in specs:
            if s.name in seen:
                raise ValueError(f"{type(self).__name__}: channel {s.name!r} declared twice")
            seen[s.name] = s
        if out_of_range not in OUT_OF_RANGE_POLICIES:
            raise ValueError(f"{type(self).__name__}: out_of_range must be one of "
                             f"{OUT_OF_RANGE_POLICIES}, got {out_of_range!r}")
        self.name = name
        self.out_of_range = out_of_range
        self._specs = specs
        self._by_name = seen
        self._open_flag = False
        self.counters = DaqCounters()

    # ------------------------------------------------------------ subclass API
    @abc.abstractmethod
    def _open(self) -> None: ...

    @abc.abstractmethod
    def _close(self) -> None: ...

    @abc.abstractmethod
    def _read(self, specs: Sequence[ChannelSpec]) -> dict[str, Any]: ...

    @abc.abstractmethod
    def _write(self, values: dict[str, Any]) -> None: ...

    def _reset(self, specs: Sequence[ChannelSpec]) -> None:
        raise DaqError(f"{self.where}: this device cannot reset counters")

    # ------------------------------------------------------------- properties
    @property
    def where(self) -> str:
        named = f" {self.name!r}" if self.name else ""
        return f"{self.kind}{named}"

    @property
    def channels(self) -> tuple[ChannelSpec, ...]:
        return self._specs

    @property
    def is_open(self) -> bool:
        return self._open_flag

    def channel(self, name: str) -> ChannelSpec:
        """The spec of channel ``name``; an unknown name lists the channels."""
        spec = self._by_name.get(name)
        if spec is None:
            names = list(self._by_name)
            close = difflib.get_close_matches(str(name), names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UnknownChannel(
                f"{self.where}: unknown channel {name!r}; channels: "
                f"{', '.join(s.describe() for s in self._specs)}{hint}")
        return spec

    def names(self, kind: str | Iterable[str] | None = None) -> list[str]:
        """Channel names, optionally of the given kind(s), in declaration order."""
        kinds = (kind,) if isinstance(kind, str) else kind
        return [s.name for s in self._specs if kinds is None or s.kind in kinds]

    def __repr__(self) -> str:
        state = "open" if self._open_flag else "closed"
        return f"<{type(self).__name__} {self.where} {len(self._specs)} channels {state}>"

    # --------------------------------------------------------------- lifecycle
    def open(self) -> DaqDevice:
        """Open the device (idempotent)."""
        if not self._open_flag:
            self._open()
            self._open_flag = True
            log.debug("%s: opened", self.where)
        return self

    def close(self) -> None:
        """Close the device (idempotent)."""
        if self._open_flag:
            self._open_flag = False
            self._close()
            log.debug("%s: closed", self.where)

    def __enter__(self) -> DaqDevice:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _require_open(self, op: str) -> None:
        if not self._open_flag:
            raise BackendError(f"{self.where}: {op}() on a closed device; call open() first "
                               f"or use 'with device:'")

    # -------------------------------------------------------------------- I/O
    def read(self, names: str | Iterable[str] | None = None) -> dict[str, Any]:
        """Read channels: ``{name: value}`` in the order asked.  ``None`` reads
        every input channel.  Output channels may be read too: they return the
        value the device applied (quantized, clipped)."""
        self._require_open("read")
        if names is None:
            specs = [s for s in self._specs if s.is_input]
        else:
            specs = [self.channel(n) for n in ([names] if isinstance(names, str) else names)]
        out = self._read(specs)
        self.counters.reads += 1
        return {s.name: out[s.name] for s in specs}

    def validate(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``{name: value}`` for ``write`` and return the values to apply
        (clipped under ``out_of_range="clip"``); raises before touching anything."""
        if not isinstance(values, Mapping):
            raise ChannelKindError(f"{self.where}: write() takes a mapping {{name: value}}, got "
                                   f"{type(values).__name__}")
        checked: dict[str, Any] = {}
        for name, value in values.items():
            spec = self.channel(name)
            if not spec.is_output:
                outs = ", ".join(self.names(OUTPUT_KINDS)) or "none"
                raise ChannelKindError(
                    f"{self.where}: channel {name!r} is an input ({spec.kind}) and cannot be "
                    f"written; output channels: {outs}")
            checked[name] = self._check_value(spec, value)
        return checked

    def write(self, values: Mapping[str, Any]) -> None:
        """Write output channels: ``ao`` floats, ``do`` bools, ``pwm_out``
        ``(duty, frequency)``.  All values are checked before any is applied."""
        self._require_open("write")
        checked = self.validate(values)
        self._write(checked)
        self.counters.writes += 1

    def reset(self, names: str | Iterable[str] | None = None) -> None:
        """Zero counter channels (``None``: all of them)."""
        self._require_open("reset")
        if names is None:
            specs = [s for s in self._specs if s.kind == "counter"]
        else:
            specs = [self.channel(n) for n in ([names] if isinstance(names, str) else names)]
        for s in specs:
            if s.kind != "counter":
                raise ChannelKindError(f"{self.where}: reset({s.name!r}): not a counter "
                                       f"({s.kind}); counters: "
                                       f"{', '.join(self.names('counter')) or 'none'}")
        self._reset(specs)

    # ----------------------------------------------------------------- helpers
    def _range_check(self, spec: ChannelSpec, what: str, v: float, lo: float, hi: float,
                     unit: str | None) -> float:
        if not math.isfinite(v):
            raise ChannelRangeError(f"{self.where}: {spec.name}: {what} {v} is not finite")
        if lo <= v <= hi:
            return v
        u = f" {unit}" if unit else ""
        if self.out_of_range == "clip":
            self.counters.clipped += 1
            return min(max(v, lo), hi)
        raise ChannelRangeError(
            f"{self.where}: {spec.name}: {what} {v:g}{u} outside the range [{lo:g}, {hi:g}]{u}; "
            f"limit the value or open the device with out_of_range='clip'")

    def _check_value(self, spec: ChannelSpec, value: Any) -> Any:
        if spec.kind == "ao":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ChannelKindError(f"{self.where}: {spec.name} (ao) takes a number, got "
                                       f"{value!r}")
            return self._range_check(spec, "value", float(value), *spec.range, spec.unit)
        if spec.kind == "do":
            if value not in (True, False, 0, 1):
                raise ChannelKindError(f"{self.where}: {spec.name} (do) takes a bool, got "
                                       f"{value!r}")
            return bool(value)
        # pwm_out
        try:
            duty, freq = value
            duty, freq = float(duty), float(freq)
        except (TypeError, ValueError):
            raise ChannelKindError(f"{self.where}: {spec.name} (pwm_out) takes (duty, "
                                   f"frequency), got {value!r}") from None
        duty = self._range_check(spec, "duty", duty, 0.0, 1.0, None)
        freq = self._range_check(spec, "frequency", freq, *spec.range, spec.unit or "Hz")
        return duty, freq
