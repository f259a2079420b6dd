"""``hil.can.codec.MessageCodec`` encodes and decodes as cantools does, bit for bit.

Oracle: cantools' ``Message.encode(values, scaling=True, strict=False)`` and
``Message.decode_simple(data, decode_choices=False, scaling=True)``.  Corpus, per seed:
DBC files generated as text and loaded by cantools (strict: no overlapping signals),
messages of 1-64 bytes with 1-8 signals of random start, length, byte order (Intel and
Motorola), sign, scale, offset, IEEE float signals (``SIG_VALTYPE_``), value tables, and
multiplexed messages (which go to cantools itself); values inside and outside each
signal's bits, ints, bools, NumPy scalars and choice names; data of random bytes, of the
right length and of others.  Every result is equal in value and type (NaN where both are
NaN), or both calls raise the same exception type.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

cantools = pytest.importorskip("cantools")

from hil.can.codec import MessageCodec  # noqa: E402

SEEDS = range(8)


def _signal_line(rng: random.Random, name: str, used: set, nbits: int, mux: str = "") -> tuple:
    """A ``SG_`` line that fits (by cantools' own overlap check later), and its value type."""
    kind = rng.random()
    if kind < 0.12 and nbits >= 32:
        length, fl = (32, 1) if rng.random() < 0.6 or nbits < 64 else (64, 2)
    else:
        length, fl = rng.randint(1, min(32, nbits)), 0
    order = rng.choice("01")
    signed = rng.choice("+-") if length > 1 else "+"
    start = rng.randrange(nbits)
    scale = rng.choice((1, 1, 0.5, 0.001, 0.1, 2, 0.0625, 1e-5, 3.3))
    offset = rng.choice((0, 0, -40, 100, 0.5, -1000.25))
    lo = rng.uniform(-1e3, 0)
    hi = lo + rng.uniform(0, 2e3)
    line = (f' SG_ {name} {mux}: {start}|{length}@{order}{signed} ({scale},{offset}) '
            f'[{lo:.3f}|{hi:.3f}] "u" ECU')
    return line, fl


def _dbc(rng: random.Random, n_messages: int) -> str:
    lines = ['VERSION ""', "", "NS_ :", "", "BS_:", "", "BU_: ECU", ""]
    valtypes, vals = [], []
    for k in range(n_messages):
        length = rng.choice((1, 2, 3, 4, 6, 8, 8, 8, 12, 16, 32, 64))
        fid = 0x100 + k
        lines.append(f"BO_ {fid} M{k}: {length} ECU")
        multiplexed = rng.random() < 0.15 and length >= 2
        if multiplexed:
            lines.append(" SG_ mux M : 0|4@1+ (1,0) [0|15] \"\" ECU")
        for j in range(rng.randint(1, 8)):
            mux = f"m{rng.randrange(3)} " if multiplexed and j else ""
            line, fl = _signal_line(rng, f"s{k}_{j}", set(), 8 * length, mux)
            lines.append(line)
            if fl:
                valtypes.append(f"SIG_VALTYPE_ {fid} s{k}_{j} : {fl};")
            elif rng.random() < 0.15:
                vals.append(f'VAL_ {fid} s{k}_{j} 0 "off" 1 "on" ;')
        lines.append("")
    return "\n".join(lines + valtypes + vals) + "\n"


def _messages(seed: int) -> list:
    """Messages of generated DBCs that cantools loads (strict), about 40 per seed."""
    rng = random.Random(seed)
    out = []
    while len(out) < 40:
        for k in range(6):
            text = _dbc(random.Random(rng.random()), 1)
            try:
                db = cantools.database.load_string(text, database_format="dbc", strict=True)
            except Exception:  # noqa: BLE001, S112 - overlapping signals: draw again
                continue
            out.extend(db.messages)
            del k
    return out


def _values(rng: random.Random, msg, codec) -> dict:
    vals = {}
    for s in msg.signals:
        c = s.conversion
        bits = s.length
        lo_raw, hi_raw = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if s.is_signed
                          else (0, (1 << bits) - 1))
        pick = rng.random()
        if c.is_float:
            v = rng.choice((rng.uniform(-1e6, 1e6), 0.0, -0.0, math.inf, math.nan, 1e300))
        elif pick < 0.7:
            v = c.raw_to_scaled(rng.randint(lo_raw, hi_raw), False)
            v = v + rng.uniform(-0.49, 0.49) * (c.scale if hasattr(c, "scale") else 1)
        elif pick < 0.8:
            v = c.raw_to_scaled(hi_raw + rng.randint(1, 5), False)  # past its bits
        elif pick < 0.87:
            v = rng.randint(-5, 5)
        elif pick < 0.92:
            v = rng.random() < 0.5
        elif pick < 0.96:
            v = np.float64(c.raw_to_scaled(rng.randint(lo_raw, hi_raw), False))
        else:
            v = "on" if getattr(c, "choices", None) else float(rng.randint(0, 1))
        vals[s.name] = v
    return vals


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a)
                                                     == math.copysign(1, b))
    return a == b


def _call(f, *args):
    try:
        return "ok", f(*args)
    except Exception as exc:  # noqa: BLE001 - the oracle's exception type is compared
        return "raised", type(exc)


@pytest.mark.parametrize("seed", SEEDS)
def test_encode_and_decode_equal_cantools_on_a_generated_corpus(seed):
    rng = random.Random(1000 + seed)
    messages = _messages(seed)
    direct = sum(MessageCodec(m).direct for m in messages)
    assert direct >= len(messages) // 2, "the corpus exercises the direct path"
    for msg in messages:
        codec = MessageCodec(msg)
        for _ in range(60):
            vals = _values(rng, msg, codec)
            want = _call(lambda v, m=msg: m.encode(v, scaling=True, strict=False), vals)
            got = _call(codec.encode, vals)
            assert want[0] == got[0] and (_same(want[1], got[1]) if want[0] == "ok"
                                          else got == want), \
                f"seed {seed}, {msg.name}, encode {vals}: {got} != {want}"
            n = msg.length if rng.random() < 0.85 else rng.randrange(0, msg.length + 3)
            data = bytes(rng.randrange(256) for _ in range(n))
            want = _call(lambda d, m=msg: m.decode_simple(d, decode_choices=False,
                                                             scaling=True), data)
            got = _call(codec.decode, data)
            assert want[0] == got[0] and (_same(want[1], got[1]) if want[0] == "ok"
                                          else got == want), \
                f"seed {seed}, {msg.name}, decode {data.hex()}: {got} != {want}"


def test_the_bridges_messages_take_the_direct_path():
    from hil.can import ACC_DBC, CanDatabase
    db = CanDatabase(ACC_DBC)
    for name in db.message_names:
        assert MessageCodec(db.message(name)).direct, name
