"""Signal mapping through a DBC file with cantools.

:class:`CanDatabase` loads a DBC (a path or the DBC text) with cantools and
turns physical signal values into ``can.Message`` objects and back; scale,
offset, ranges and byte layout are cantools' (from the DBC).  Each signal's
DBC unit text is mapped onto a cosim unit (:func:`cosim.units.parse_unit`),
through a few DBC spellings (``Nm`` -> ``N*m``, ``kph`` -> ``km/h``, ``-`` ->
``1``); a unit that cosim does not accept keeps the DBC text in
:attr:`SignalInfo.dbc_unit` and has ``unit = None`` (so it is *not* checked
for compatibility), and :attr:`CanDatabase.unit_warnings` says so.

Limitations
-----------
* Multiplexed messages, container messages and signal groups are not handled
  specially (cantools encodes/decodes them, but ``encode`` wants every signal).
* Enumerated values (``VAL_``) decode to their numbers, not their names.
* ``encode`` needs every signal of the message (no implicit defaults);
  :class:`~hil.can.cyclic.CyclicSender` keeps the last values for you.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim.errors import UnitError
from cosim.units import parse_unit

from ..errors import HILError, LayoutError, require

__all__ = ["CanDatabase", "SignalInfo", "UnknownName", "ACC_DBC", "UNIT_ALIASES"]

#: The ACC-over-CAN demo database shipped with the package.
ACC_DBC = Path(__file__).with_name("data") / "acc.dbc"

#: DBC unit spellings that cosim writes differently.
UNIT_ALIASES = {"Nm": "N*m", "kph": "km/h", "-": "1", "Deg": "deg", "degree": "deg",
                "sec": "s", "RPM": "rpm", "Rpm": "rpm"}


class UnknownName(HILError, KeyError):
    """An unknown message or signal name (the message lists the choices)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _choices(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"choices: {', '.join(names)}{hint}"


def _import_cantools() -> Any:
    return require("cantools", who="CAN database", package="cantools")


@dataclass(frozen=True)
class SignalInfo:
    """One DBC signal as cosim sees it."""

    name: str
    message: str
    unit: str | None  # a cosim unit string, or None (none given, or not understood)
    dbc_unit: str | None  # the unit text as written in the DBC
    scale: float
    offset: float
    minimum: float | None
    maximum: float | None
    length: int
    is_signed: bool
    initial: float | None

    @property
    def unit_understood(self) -> bool:
        return self.dbc_unit in (None, "") or self.unit is not None


def _cosim_unit(text: str | None) -> str | None:
    if text is None or not text.strip():
        return None
    text = text.strip()
    cand = UNIT_ALIASES.get(text, text)
    try:
        parse_unit(cand)
    except UnitError:
        return None
    return cand


class CanDatabase:
    """A DBC database: ``encode(message, signals) -> can.Message``, ``decode(msg) -> dict``.

    Parameters
    ----------
    source : str or os.PathLike
        A path to a ``.dbc`` file, or the DBC text itself (recognised by a
        ``BO_`` or ``VERSION`` line).
    strict : bool
        cantools' strict loading (overlapping signals are an error).
    """

    def __init__(self, source: str | os.PathLike[str], *, strict: bool = True) -> None:
        cantools = _import_cantools()
        text = str(source)
        is_text = not isinstance(source, os.PathLike) and ("\n" in text or "BO_ " in text)
        self.source = "<DBC text>" if is_text else text
        try:
            if is_text:
                self.db = cantools.database.load_string(text, database_format="dbc",
                                                        strict=strict)
            else:
                self.db = cantools.database.load_file(text, database_format="dbc",
                                                      strict=strict)
        except FileNotFoundError:
            raise
        except Exception as exc:
            raise LayoutError(f"CAN database {self.source}: cannot "
                              f"load it as DBC ({type(exc).__name__}: {exc})") from exc
        self._messages = {m.name: m for m in self.db.messages}
        self._by_id = {(m.frame_id, bool(m.is_extended_frame)): m for m in self.db.messages}
        self._signals: dict[str, dict[str, SignalInfo]] = {}
        self._by_signal: dict[str, list[SignalInfo]] = {}
        self.unit_warnings: list[str] = []
        for m in self.db.messages:
            infos: dict[str, SignalInfo] = {}
            for s in m.signals:
                unit = _cosim_unit(s.unit)
                info = SignalInfo(s.name, m.name, unit, s.unit, float(s.scale), float(s.offset),
                                  s.minimum, s.maximum, s.length, s.is_signed, s.initial)
                if not info.unit_understood:
                    self.unit_warnings.append(
                        f"{m.name}.{s.name}: DBC unit {s.unit!r} is not a cosim unit; kept "
                        f"as text, not checked")
                infos[s.name] = info
                self._by_signal.setdefault(s.name, []).append(info)
            self._signals[m.name] = infos

    def __repr__(self) -> str:
        return f"<CanDatabase {self.source} messages={list(self._messages)}>"

    @property
    def version(self) -> str:
        """The DBC's ``VERSION`` string (may be empty)."""
        return str(getattr(self.db, "version", "") or "")

    @property
    def fingerprint(self) -> int:
        """A CRC-32 of what two nodes must agree on: every message's id, length and every
        signal's layout, scaling and range (not comments, not node names), and the
        version.  Two nodes with the same fingerprint encode and decode alike."""
        import zlib
        parts = [self.version]
        for m in sorted(self.db.messages, key=lambda m: (m.frame_id, m.name)):
            parts.append(f"{m.name}:{m.frame_id}:{int(m.is_extended_frame)}:{m.length}")
            for sg in m.signals:
                parts.append(f"{sg.name}:{sg.start}:{sg.length}:{sg.byte_order}:"
                             f"{int(sg.is_signed)}:{sg.scale!r}:{sg.offset!r}:"
                             f"{sg.minimum!r}:{sg.maximum!r}")
        return zlib.crc32("|".join(parts).encode()) & 0xFFFFFFFF

    # ------------------------------------------------------------- look-ups
    @property
    def message_names(self) -> list[str]:
        return list(self._messages)

    def message(self, name: str) -> Any:
        """The cantools ``Message`` called ``name``."""
        try:
            return self._messages[name]
        except KeyError:
            raise UnknownName(f"CAN database {self.source}: unknown message {name!r}; "
                              f"{_choices(str(name), self.message_names)}") from None

    def frame_id(self, name: str) -> int:
        return int(self.message(name).frame_id)

    def signals(self, message: str) -> dict[str, SignalInfo]:
        """The signals of ``message`` by name, in DBC order."""
        self.message(message)
        return dict(self._signals[message])

    def signal(self, name: str) -> SignalInfo:
        """A signal by ``"name"`` (unique across messages) or ``"MESSAGE.name"``."""
        msg, dot, sig = name.rpartition(".")
        if dot:
            infos = self.signals(msg)
            if sig not in infos:
                raise UnknownName(f"CAN database {self.source}: message {msg} has no signal "
                                  f"{sig!r}; {_choices(sig, list(infos))}")
            return infos[sig]
        found = self._by_signal.get(name)
        if not found:
            raise UnknownName(f"CAN database {self.source}: unknown signal {name!r}; "
                              f"{_choices(name, sorted(self._by_signal))}")
        if len(found) > 1:
            raise UnknownName(f"CAN database {self.source}: signal {name!r} is in several "
                              f"messages ({', '.join(i.message for i in found)}); write "
                              f"'MESSAGE.{name}'")
        return found[0]

    def units(self, message: str) -> dict[str, str | None]:
        """``{signal: cosim unit or None}`` for ``message``."""
        return {n: i.unit for n, i in self.signals(message).items()}

    def message_for(self, msg: Any) -> Any:
        """The cantools ``Message`` a received ``can.Message`` belongs to."""
        key = (msg.arbitration_id, bool(msg.is_extended_id))
        m = self._by_id.get(key)
        if m is None:
            known = ", ".join(f"{m.name}=0x{m.frame_id:X}" for m in self.db.messages)
            raise UnknownName(f"CAN database {self.source}: no message with "
                              f"{'extended' if key[1] else 'standard'} id "
                              f"0x{msg.arbitration_id:X}; known: {known}")
        return m

    # ---------------------------------------------------------- encode/decode
    def encode_data(self, message: str, signals: Mapping[str, float]) -> bytes:
        """The payload bytes of ``message`` for physical ``signals``."""
        m = self.message(message)
        names = [s.name for s in m.signals]
        unknown = [k for k in signals if k not in self._signals[message]]
        if unknown:
            raise UnknownName(f"CAN database {self.source}: message {message} has no signal "
                              f"{unknown[0]!r}; {_choices(unknown[0], names)}")
        missing = [n for n in names if n not in signals]
        if missing:
            raise LayoutError(f"CAN database {self.source}: {message} needs every signal; "
                              f"missing {', '.join(missing)}")
        try:
            return bytes(m.encode(dict(signals), scaling=True, strict=True))
        except Exception as exc:
            raise LayoutError(f"CAN database {self.source}: cannot encode {message}: "
                              f"{exc}") from exc

    def encode(self, message: str, signals: Mapping[str, float], **msg_fields: Any) -> Any:
        """A ``can.Message`` of ``message`` carrying physical ``signals``
        (``msg_fields`` such as ``timestamp`` or ``channel`` go to ``can.Message``)."""
        from .backend import import_can
        can = import_can()
        m = self.message(message)
        data = self.encode_data(message, signals)
        fields: dict[str, Any] = {"arbitration_id": m.frame_id,
                                  "is_extended_id": bool(m.is_extended_frame),
                                  "is_fd": bool(m.is_fd), "data": data}
        fields.update(msg_fields)
        return can.Message(**fields)

    def decode(self, msg: Any, *, with_units: bool = False) -> dict[str, Any]:
        """``{signal: physical value}`` of a received ``can.Message``; with
        ``with_units``, ``{signal: (value, cosim unit or None)}``."""
        m = self.message_for(msg)
        try:
            values = m.decode(bytes(msg.data), decode_choices=False, scaling=True)
        except Exception as exc:
            raise LayoutError(f"CAN database {self.source}: cannot decode {m.name} "
                              f"(id 0x{m.frame_id:X}, {len(msg.data)} bytes): {exc}") from exc
        if not with_units:
            return dict(values)
        infos = self._signals[m.name]
        return {k: (v, infos[k].unit) for k, v in values.items()}

    def decode_named(self, msg: Any) -> tuple[str, dict[str, Any]]:
        """``(message name, {signal: value})`` of a received ``can.Message``."""
        return self.message_for(msg).name, self.decode(msg)
