"""Results folders: a command never replaces another run's results unless asked.

Every command that writes a results folder (``cosim run``, ``cosim fmu simulate``,
``cosim sweep``, ``cosim hil run``) claims it with :func:`claim` before its work starts.
The claim writes ``cosim_run.json`` in the folder: the command, its source (the model file
or FMU, as an absolute path), the files it writes and the command line.  A folder is taken
when

* it is new or holds none of the files the command writes;
* it holds the results of the same command on the same source (running a command again
  replaces its own results; a resumable command, the sweep, continues them);
* ``force`` is given (``--force``): the other run's files are removed first.

Otherwise :func:`claim` raises :class:`~cosim.errors.OutputError` naming the run whose
results the folder holds and the two ways out (another ``--out``, or ``--force``).  A
folder written before claims existed (results but no ``cosim_run.json``) counts as
another run's, except for a resumable command whose own marker file (the sweep's
``study.json``) is there.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass

from .errors import OutputError

#: the claim file in every results folder
MARKER = "cosim_run.json"


def add_force_option(parser, *, resumes: bool = False) -> None:
    """Add ``--force`` (take a folder holding another run's results) to a command's
    ``argparse`` parser, with the one help text every results-writing command shares;
    ``resumes``: the command continues its own results (the sweep)."""
    more = "; the same sweep again resumes without it" if resumes else ""
    parser.add_argument("--force", action="store_true",
                        help=f"write into --out even when it holds another command's "
                             f"results (they are removed{more})")


@dataclass(frozen=True)
class Claim:
    """A claimed results folder: ``folder``, and what it held before (``replaced``: a
    description of the run whose results are replaced, ``""`` when there was none)."""

    folder: str
    replaced: str = ""

    def note(self) -> str:
        """`` (replacing ...)`` for the command's summary, or ``""``."""
        return f" (replacing {self.replaced})" if self.replaced else ""


def claim(folder: str, command: str, source: str, outputs: list[str], *,
          force: bool = False, resumable: bool = False, own_marker: str | None = None,
          argv: list[str] | None = None) -> Claim:
    """Take ``folder`` for the results of ``command`` on ``source`` (module docstring).

    Parameters
    ----------
    folder : str
        The results folder (created if missing).
    command : str
        The command, e.g. ``"cosim run"``.
    source : str
        The model file or FMU the results come from (compared as an absolute path).
    outputs : list of str
        The files the command writes in the folder.
    force : bool
        Replace another run's results (``--force``).
    resumable : bool
        The command continues its own earlier results (never removes them).
    own_marker : str, optional
        A file that marks a folder of this command written before claims existed.
    argv : list of str, optional
        The command line to record (default ``sys.argv``).

    Returns
    -------
    Claim
    """
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create output folder {folder!r}: {exc.strerror}; choose "
                          "another --out folder or fix permissions") from None
    source = os.path.abspath(source)
    marker = os.path.join(folder, MARKER)
    old = _read(marker)
    present = [f for f in outputs if os.path.exists(os.path.join(folder, f))]
    replaced, stale = "", []
    if old is not None:
        same = old.get("command") == command and old.get("source") == source
        if not same:
            who = f"`{old.get('command')} {old.get('source')}` ({old.get('started', '?')})"
            if not force:
                raise OutputError(f"output folder {folder!r} holds the results of {who}; "
                                  "choose another --out folder, or add --force to replace "
                                  "them")
            replaced, stale = f"the results of {who}", list(old.get("outputs", []))
        elif not resumable:
            replaced, stale = "the results of its previous run", list(old.get("outputs", []))
    elif present and not (resumable and own_marker
                          and os.path.exists(os.path.join(folder, own_marker))):
        if not force:
            raise OutputError(f"output folder {folder!r} already holds {', '.join(present)} "
                              f"of a run that did not record its command (no {MARKER}); "
                              "choose another --out folder, or add --force to replace them")
        replaced, stale = f"the files {', '.join(present)}", present
    for name in stale:  # the other run's files go, so that none is taken for ours
        path = os.path.join(folder, os.path.basename(name))
        if os.path.isfile(path):
            os.remove(path)
    record = {"command": command, "source": source, "outputs": list(outputs),
              "argv": list(sys.argv if argv is None else argv),
              "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    tmp = marker + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    os.replace(tmp, marker)
    return Claim(folder, replaced)


def _read(marker: str) -> dict | None:
    if not os.path.exists(marker):
        return None
    try:
        with open(marker, encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}  # unreadable: another run's, as far as we can tell
