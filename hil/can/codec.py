"""One DBC message's encode and decode on the bridges' hot path, with cantools' own parts.

A bridge encodes and decodes the same message at every hit, always with the same options
(physical values, no strict range check, no choice names).  cantools' ``Message.encode``
and ``decode_simple`` spend most of their time on work that does not change between calls
(the option checks, the container and multiplexer cases, dictionary merges).
:class:`MessageCodec` binds, once, the parts of the message they end up using: its compiled
bit layouts (``bitstruct``'s formats, big- and little-endian) and each signal's conversion,
and calls them in the order cantools calls them:

* ``encode(values)``: ``raw[s] = conversion.numeric_scaled_to_raw(values[s])`` per signal,
  then ``int.from_bytes(big.pack(raw), "big") | int.from_bytes(little.pack(raw), "little")``
  as ``length`` bytes, big-endian (``cantools.database.utils.encode_data`` and
  ``Message.encode``);
* ``decode(data)``: ``big.unpack(data)`` and ``little.unpack(data[::-1])`` merged, then
  ``conversion.raw_to_scaled(raw, False)`` per signal (``decode_data``).

A layout with no signal of its byte order is not called (it packs to zeros, which the
``|`` leaves out, and unpacks to nothing).

So the bytes and the values are cantools' own, bit for bit (tested on a generated corpus
of messages and values against ``Message.encode``/``decode_simple``).  Everything else is
cantools' call itself: a container or multiplexed message, a message without signals, a
value that is not exactly ``int`` or ``float`` (a choice name, a ``NamedSignalValue``, a
NumPy scalar), data of another length than the message's, and any error (cantools raises
its own ``EncodeError``/``DecodeError``).

Limitation: only the options the bridges use (``scaling=True``, ``strict=False``, no
padding; ``decode_choices=False``, no truncation).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MessageCodec"]


class MessageCodec:
    """``encode(values) -> bytes`` and ``decode(data) -> dict`` of one cantools message
    (module docstring)."""

    def __init__(self, message: Any) -> None:
        self.message = message
        codecs = getattr(message, "_codecs", None)
        self.direct = bool(
            codecs is not None and not message.is_container and not codecs["multiplexers"]
            and codecs["signals"])
        if not self.direct:
            return
        formats = codecs["formats"]
        signals = codecs["signals"]
        # a layout without a signal packs to zeros and unpacks to nothing: not called
        big = any(s.byte_order == "big_endian" for s in signals)
        little = any(s.byte_order != "big_endian" for s in signals)
        self._pack_big = formats.big_endian.pack if big else None
        self._pack_little = formats.little_endian.pack if little else None
        self._unpack_big = formats.big_endian.unpack if big else None
        self._unpack_little = formats.little_endian.unpack if little else None
        self._to_raw = [(s.name, s.conversion.numeric_scaled_to_raw) for s in signals]
        self._to_scaled = [(s.name, s.conversion.raw_to_scaled) for s in signals]
        self._length = int(message.length)

    def encode(self, values: Any) -> bytes:
        """``message.encode(values, scaling=True, strict=False)``."""
        if self.direct:
            raw = {}
            try:
                for name, to_raw in self._to_raw:
                    v = values[name]
                    if type(v) is not float and type(v) is not int:
                        break
                    raw[name] = to_raw(v)
                else:
                    pb, pl = self._pack_big, self._pack_little
                    packed = (0 if pb is None else int.from_bytes(pb(raw), "big")) | (
                        0 if pl is None else int.from_bytes(pl(raw), "little"))
                    return packed.to_bytes(self._length, "big")
            except Exception:  # noqa: BLE001, S110 - cantools' call below raises its own
                pass
        return self.message.encode(values, scaling=True, strict=False)

    def decode(self, data: bytes) -> dict:
        """``message.decode_simple(data, decode_choices=False, scaling=True)``."""
        if self.direct and len(data) == self._length:
            try:
                ub, ul = self._unpack_big, self._unpack_little
                if ub is None:
                    unpacked = ul(data[::-1])
                elif ul is None:
                    unpacked = ub(data)
                else:
                    unpacked = {**ub(data), **ul(data[::-1])}
                out = {}
                for name, to_scaled in self._to_scaled:
                    value = unpacked.get(name)
                    if value is not None:
                        out[name] = to_scaled(value, False)
                return out
            except Exception:  # noqa: BLE001, S110 - cantools' call below raises its own
                pass
        return self.message.decode_simple(data, decode_choices=False, scaling=True)
