"""``cosim replay LOG``: a CAN log sent on a bus (or printed decoded).

Found by ``cosim`` through the entry-point group ``cosim.commands`` (``replay``);
``cosim hil run`` is :mod:`hil.cli`.

Sends the frames of a CAN log (any format python-can reads: ``.asc``, ``.blf``, ``.csv``,
``.log``, ``.trc``, ...) on a bus (``--interface``, ``--channel``, ``--bitrate``: any
python-can interface through the ``"can"`` backend) keeping their spacing divided by
``--speed`` (``0`` or ``--fast``: as fast as possible), ``--loop N`` times (0: until
Ctrl-C), ``--only-rx`` for the received frames only.  ``--print`` writes one line per
frame, ``time message signal=value unit ...`` with ``--dbc FILE`` (``--dbc acc``: the
bundled ACC database), raw ``time 0xID [dlc] data`` otherwise; with ``--print`` the
frames are only printed unless a bus is named with ``--interface``/``--channel`` (then
both), and printing alone goes as fast as possible unless ``--speed`` is given.  At the
end: the frames sent and the timing error (send time minus due time).

With ``--dbc`` the log is checked first (:func:`hil.can.log.log_fit`): every id must be in
a message of the DBC (hil's own protocol frames aside: the DBC check, lock-step, the end of
a session), with the message's length, and the log's DBC check frames must name the same
database.  A log that does not fit is refused, saying which ids and lengths do not fit and
which DBC beside the log (or the bundled one) does: decoded with the wrong DBC a log gives
plausible, wrong values (issue 30: the flagship's ``bus.asc`` read with ``--dbc acc`` said
``RADAR range=500 m``).  ``--allow-unknown-ids`` accepts ids the DBC lacks (other nodes'
traffic on a real bus): they are printed raw.

Exit status: 0 done, 1 failed while replaying (the bus), 2 bad input (a log that cannot be
read or does not fit the DBC, a bad option: nothing sent or printed), 130 interrupted.

Limitations
-----------
* ``replay`` paces with ``time.sleep``: bench testing, not a real-time player (late
  frames are sent at once, never dropped); loop ``k + 1`` starts when loop ``k``'s last
  frame is due.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from cosim.errors import CosimError

from .cli import _report
from .errors import HILError

__all__ = ["add_parser", "run"]


def _format_frame(t: float, msg: Any, db: Any, protocol: dict | None = None) -> str:
    raw = f"0x{msg.arbitration_id:03X} [{msg.dlc}] {bytes(msg.data).hex(' ').upper()}"
    if db is None:
        return f"{t:.6f} {raw}"
    try:
        name, values = db.decode_named(msg)
    except HILError as exc:
        what = (protocol or {}).get(msg.arbitration_id) if not msg.is_extended_id else None
        note = f" ({what})" if what else "" if "no message with" in str(exc) else \
            f" (cannot decode: {exc})"
        return f"{t:.6f} {raw}{note}"
    infos = db.signals(name)
    parts = []
    for k, v in values.items():
        unit = infos[k].unit or infos[k].dbc_unit
        unit = f" {unit}" if unit and unit != "1" else ""
        parts.append(f"{k}={v:g}{unit}" if isinstance(v, int | float) else f"{k}={v}{unit}")
    return f"{t:.6f} {name} " + " ".join(parts)


def _wait_until(when: float, clock: Any, spin: float = 5e-4) -> None:
    """Sleep until ``spin`` seconds before ``when``, then spin (sleep alone is late by
    ~0.1-0.3 ms on shared VMs)."""
    coarse = when - spin - clock()
    if coarse > 0:
        time.sleep(coarse)
    while clock() < when:
        pass


class UsageError(CosimError):
    """Bad input, found before anything is sent or printed: exit status 2."""


def _unreadable(path: str, exc: BaseException) -> UsageError:
    return UsageError(f"cannot read {path!r} as a CAN log ({type(exc).__name__}: {exc}); "
                      "python-can reads .asc, .blf, .csv, .db, .log, .mf4, .trc (and "
                      "compressed .gz)")


def _read_frames(path: str, only_rx: bool, cache: bool) -> Any:
    """A function returning the ``(t, msg)`` pairs of the log (read once into memory
    with ``cache``, so that loops do not wait for the file), with read errors made clear."""
    from .can.log import read_log

    def read() -> Any:
        n = 0
        try:
            for pair in read_log(path, only_rx=only_rx):
                yield pair
                n += 1
        except (ValueError, OSError) as exc:
            err = _unreadable(path, exc)
            if n:  # frames went out already: a failure, not bad input
                raise CosimError(f"after {n} frames: {err}") from exc
            raise err from exc

    if not cache:
        return read
    frames = list(read())
    return lambda: iter(frames)


def _fit(path: str, db: Any, only_rx: bool) -> Any:
    from .can.log import log_fit
    try:
        return log_fit(path, db, only_rx=only_rx)
    except (ValueError, OSError) as exc:
        raise _unreadable(path, exc) from exc


def _fitting_dbcs(path: str, used: Any, only_rx: bool) -> tuple[list[str], list[str]]:
    """The DBC files beside the log, and the bundled ACC DBC, other than ``used``:
    ``(--dbc arguments of those that fit the log, files beside it that do not)``."""
    import glob

    from .can.dbc import ACC_DBC, CanDatabase
    folder = os.path.dirname(os.path.abspath(path))
    beside = sorted(glob.glob(os.path.join(folder, "*.dbc")))
    fits, others = [], []
    for p in dict.fromkeys(beside + [str(ACC_DBC)]):
        if os.path.abspath(p) == os.path.abspath(used.source):
            continue
        try:
            ok = _fit(path, CanDatabase(p), only_rx).ok
        except Exception:  # noqa: BLE001 - a DBC that does not load is no suggestion
            continue
        if ok:
            fits.append("acc" if p == str(ACC_DBC) else os.path.relpath(p))
        elif p in beside:
            others.append(os.path.relpath(p))
    return fits, others


def check_fit(path: str, db: Any, label: str, *, only_rx: bool = False,
              allow_unknown: bool = False) -> Any:
    """Refuse a log that does not fit the DBC (module docstring) with what does not fit
    and which DBC does; returns the :class:`~hil.can.log.LogFit`."""
    fit = _fit(path, db, only_rx)
    problems = fit.problems(allow_unknown=allow_unknown)
    if not problems:
        return fit
    more = f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""
    found = (f"of its messages the log has {', '.join(fit.found)} and lacks "
             f"{', '.join(fit.missing) or 'none'}" if fit.found else
             "the log has none of its messages")
    fits, others = _fitting_dbcs(path, db, only_rx)
    if fits:
        names = [f if f != "acc" else "the bundled ACC DBC" for f in fits]
        hint = (f"{' and '.join(names)} fit{'s' if len(fits) == 1 else ''} it: "
                + " or ".join(f"--dbc {f}" for f in fits))
    else:
        hint = (f"{', '.join(others)} beside the log does not fit either; " if others else
                "") + "give the DBC the log was written with"
    if not fits and all(p.startswith(("id ", "extended id ")) for p in problems):
        hint += (" (or --allow-unknown-ids, if the other ids are other nodes' traffic: "
                 "they are then printed raw)")
    raise UsageError(f"{path} does not fit the DBC {label}: " + "; ".join(problems[:4])
                     + more + f"; {found}. Decoded with this DBC its frames would give wrong "
                     f"values; {hint}")


def cmd_replay(args: argparse.Namespace) -> int:
    try:
        return _replay(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - one line, exit 1 (2: bad input)
        _report("cosim replay", exc, args.debug)
        return 2 if isinstance(exc, UsageError) else 1


def _replay(args: argparse.Namespace) -> int:
    import numpy as np
    if not os.path.isfile(args.log):
        raise UsageError(f"log file {args.log!r} not found")
    if args.loop < 0:
        raise UsageError(f"--loop must be >= 0 (0: until Ctrl-C), got {args.loop}")
    send = not args.print or args.interface is not None or args.channel is not None
    if args.fast or args.speed == 0:
        speed = None
    elif args.speed is not None:
        if not args.speed > 0:
            raise UsageError(f"--speed must be > 0 (0: as fast as possible), got {args.speed}")
        speed = args.speed
    else:
        speed = 1.0 if send else None
    db = None
    if args.dbc:
        from .can.dbc import ACC_DBC, CanDatabase
        src = ACC_DBC if args.dbc.lower() == "acc" else args.dbc
        if src is not ACC_DBC and not os.path.isfile(src):
            raise UsageError(f"--dbc {args.dbc!r}: no such file (or 'acc' for the bundled "
                             "ACC database)")
        try:
            db = CanDatabase(src)
        except CosimError as exc:
            raise UsageError(f"--dbc {args.dbc!r}: {exc}") from exc
        check_fit(args.log, db, "acc (the bundled ACC DBC)" if src is ACC_DBC else args.dbc,
                  only_rx=args.only_rx, allow_unknown=args.allow_unknown_ids)
    elif args.allow_unknown_ids:
        raise UsageError("--allow-unknown-ids applies to the check against --dbc; give "
                         "--dbc FILE (or 'acc')")
    protocol = None
    if db is not None:
        from .can.log import protocol_ids
        protocol = protocol_ids()
    backend = None
    if send:
        from .registry import create_backend
        backend = create_backend("can", interface=args.interface or "virtual",
                                 channel=args.channel or "cosim", bitrate=args.bitrate,
                                 fd=args.fd, name="replay")
    clock, lateness = time.perf_counter, []
    n = loops_done = 0
    interrupted = False
    start: float | None = None  # clock time of the log's t = 0 (set at the first frame)
    try:
        if backend is not None:
            backend.open()
        frames = _read_frames(args.log, args.only_rx, cache=args.loop != 1)
        offset = 0.0
        while args.loop == 0 or loops_done < args.loop:
            last, count = 0.0, 0
            for t, msg in frames():
                due = offset + t
                if start is None:
                    start = clock() - (due / speed if speed else 0.0)
                if speed is not None:
                    _wait_until(start + due / speed, clock)
                if backend is not None:
                    backend.write(msg.__class__(
                        timestamp=0.0, arbitration_id=msg.arbitration_id,
                        is_extended_id=msg.is_extended_id,
                        is_remote_frame=msg.is_remote_frame, is_fd=msg.is_fd,
                        bitrate_switch=msg.bitrate_switch,
                        error_state_indicator=msg.error_state_indicator, dlc=msg.dlc,
                        data=msg.data))
                    if speed is not None:
                        lateness.append(clock() - (start + due / speed))
                if args.print:
                    print(_format_frame(due, msg, db, protocol))
                last, count = t, count + 1
                n += 1
            loops_done += 1
            if count == 0:
                break
            offset += last
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if backend is not None:
            backend.close()
    wall = clock() - start if start is not None else 0.0
    what = f"sent on {backend.where}" if backend is not None else "decoded (not sent)"
    pace = "as fast as possible" if speed is None else f"speed {speed:g}x"
    line = (f"replay: {n} frames {what} in {wall:.3f} s ({pace}, {loops_done} loop"
            f"{'s' if loops_done != 1 else ''})")
    if lateness:
        lat = np.abs(np.asarray(lateness)) * 1e6
        line += (f"; timing error mean {lat.mean():.0f} us, p99 "
                 f"{np.percentile(lat, 99):.0f} us, max {lat.max():.0f} us")
    elif speed is None and n and wall > 0:
        line += f"; {n / wall:.0f} frames/s, timing not kept"
    print(line + ("; interrupted" if interrupted else ""), flush=True)
    if n == 0:
        print(f"cosim replay: warning: no frames in {args.log}"
              + (" with --only-rx (the log has no received frames?)" if args.only_rx else ""),
              file=sys.stderr)
    return 130 if interrupted else 0



def add_parser(sub: Any) -> None:
    """Add ``replay`` to the ``cosim`` parser."""
    p = sub.add_parser("replay", help="replay a CAN log onto a bus (or print it decoded)",
                       description="Replay a recorded CAN log (any python-can reader "
                                   "format) onto a bus, or print it decoded with a DBC.")
    p.add_argument("log", help="log file (.asc, .blf, .csv, .log, .trc, ...)")
    p.add_argument("--interface", help="python-can interface (default virtual)")
    p.add_argument("--channel", help="channel (default 'cosim')")
    p.add_argument("--bitrate", type=int, help="bus bit rate [bit/s] (hardware interfaces; "
                                              "default: the interface's)")
    p.add_argument("--fd", action="store_true", help="CAN FD bus")
    p.add_argument("--speed", type=float, help="time scale (default 1; 0: as fast as "
                                               "possible)")
    p.add_argument("--fast", action="store_true", help="as fast as possible")
    p.add_argument("--loop", type=int, default=1, help="replay N times (0: until Ctrl-C)")
    p.add_argument("--only-rx", action="store_true", help="only the received frames")
    p.add_argument("--dbc", help="DBC file for --print ('acc': the bundled ACC DBC); the "
                                 "log must fit it (ids, lengths), else nothing is done")
    p.add_argument("--allow-unknown-ids", action="store_true",
                   help="with --dbc: ids the DBC lacks (other nodes' traffic) are printed "
                        "raw instead of refusing the log")
    p.add_argument("--print", action="store_true",
                   help="print every frame (decoded with --dbc); without --interface/"
                        "--channel the frames are only printed, not sent")
    p.add_argument("--traceback", "--debug", dest="debug", action="store_true",
                   help="show tracebacks")


def run(args: argparse.Namespace) -> int:
    return cmd_replay(args)
