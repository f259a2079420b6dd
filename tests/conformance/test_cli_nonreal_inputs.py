"""``cosim fmu simulate --input`` with files of non-Real columns only (issue 31, item 2).

A corpus over types x interfaces x cell spellings: the Reference FMUs' Feedthrough (FMI 2
and 3, Co-Simulation and Model Exchange) fed a file whose only column is one Integer (every
FMI 3 width, its extremes), Boolean (cells ``0``/``1`` and ``true``/``false``, as FMPy reads
them), Enumeration, String (commas, quotes, a newline, spaces and an empty string, as the
csv module quotes them) or Binary (hex digits, with and without ``0x``) input; the output
is read back from the results CSV.  The output equals the input, so the exact answer at each
output time is the file's value there (held, never interpolated).  Co-Simulation is also
checked against ``fmpy.simulate_fmu`` with the same input, with the event convention of
each side stated: the master settles the feedthrough at each communication point, so its
value at ``t_k`` is the input's right value there, ``u(t_k)``; FMPy samples the outputs
after ``doStep`` from inputs set at the step's start (FMI 3: it also stops at the file's
change times), so at a grid time right after a change it shows the value before it.  Both
must agree exactly at every grid time whose last step saw no change of the input (FMPy
0.3.32 also adds rows at the change times of FMI 3 runs: only the grid times compare).
"""

from __future__ import annotations

import numpy as np
import pytest

from cosim.cli import main
from cosim.writers import read_csv
from tests.conformance.nonreal_values import TIMES
from tests.conformance.nonreal_values import VALUES as NUMERIC

fmpy = pytest.importorskip("fmpy")

STEP = 0.1
T_END = 1.0
VALUES = {
    **NUMERIC,
    # text as CSV quotes it (a comma, a quote, a newline, spaces kept), bytes as hex digits
    "String": ["alpha", "beta, with a comma", "", ' "q"\nü '],
    "Binary": [b"\x00\xff", b"", b"ab", b"\n"],
}
FMI2 = ("Int32", "Boolean", "Enumeration", "String")
#: not compared with FMPy: its Input plays no String or Binary column, its recorder keeps none
TEXT = ("String", "Binary")

CASES = [(3, t, itf) for t in VALUES for itf in ("cs", "me")] + \
        [(2, t, itf) for t in FMI2 for itf in ("cs", "me")]


def _cell(x, words: bool) -> str:
    if isinstance(x, bool):
        return ("true" if x else "false") if words else str(int(x))
    if isinstance(x, bytes):
        return ("0x" if words else "") + x.hex()
    return str(x)


def _write(path, typ: str, words: bool = False) -> None:
    import csv
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["time", f"{typ}_input"])
        w.writerows([repr(t), _cell(v, words)] for t, v in zip(TIMES, VALUES[typ]))


def _expected(typ: str, t) -> list:
    idx = np.searchsorted(TIMES, np.asarray(t) + 1e-12, side="right") - 1
    return [VALUES[typ][i] for i in idx]


def _simulate(fmu, tmp_path, itf: str, csv) -> object:
    out = tmp_path / f"out_{itf}"
    args = ["fmu", "simulate", str(fmu), "--interface-type", itf, "--input", str(csv),
            "--t-end", str(T_END), "--out", str(out), "-q"]
    args += ["--step", str(STEP)] if itf == "cs" else ["--dt", str(STEP)]
    assert main(args) == 0
    return read_csv(out / "results.csv")


@pytest.mark.parametrize("fmi,typ,itf", CASES,
                         ids=[f"fmi{f}-{t}-{i}" for f, t, i in CASES])
def test_a_file_of_one_non_real_column(reference_fmus, tmp_path, capsys, fmi, typ, itf):
    fmu = reference_fmus[(fmi, "Feedthrough")]
    spellings = (False, True) if typ in ("Boolean", "Binary") else (False,)
    for words in spellings:
        csv = tmp_path / f"in_{int(words)}.csv"
        _write(csv, typ, words)
        res = _simulate(fmu, tmp_path, itf, csv)
        got = res[f"{typ}_output"]
        assert got.dtype.kind == ("O" if typ in TEXT else "b" if typ == "Boolean" else "i"
                                  if min(VALUES[typ]) < 0 or max(VALUES[typ]) < 2**63
                                  else "u"), got.dtype
        assert got.tolist() == _expected(typ, res.time), (words, capsys.readouterr().err)


@pytest.mark.parametrize("fmi,typ", [(f, t) for f, t, i in CASES
                                     if i == "cs" and t not in TEXT])
def test_co_simulation_agrees_with_fmpy(reference_fmus, tmp_path, fmi, typ):
    fmu = reference_fmus[(fmi, "Feedthrough")]
    csv = tmp_path / "in.csv"
    _write(csv, typ)
    res = _simulate(fmu, tmp_path, "cs", csv)
    dt = {"Boolean": np.bool_, "Enumeration": np.int64}.get(typ) or np.dtype(typ.lower())
    signal = np.array(list(zip(TIMES, VALUES[typ])),
                      dtype=[("time", np.float64), (f"{typ}_input", dt)])
    ref = fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=T_END,
                            output_interval=STEP, input=signal,
                            output=[f"{typ}_output"])
    grid = np.round(np.asarray(res.time) / STEP).astype(int)
    assert np.allclose(grid * STEP, res.time) and grid.tolist() == list(range(len(grid)))
    rows = {int(round(t / STEP)): k for k, t in enumerate(ref["time"])
            if abs(t / STEP - round(t / STEP)) < 1e-9}  # the last row at each grid time
    ours = res[f"{typ}_output"].tolist()
    theirs = [ref[f"{typ}_output"][rows[k]].item() for k in grid.tolist()]
    changed = [k > 0 and any((k - 1) * STEP < tc <= k * STEP + 1e-12 for tc in TIMES[1:])
               for k in grid.tolist()]
    compared = [k for k, c in enumerate(changed) if not c]
    assert len(compared) >= len(grid) - len(TIMES) + 1
    assert [ours[k] for k in compared] == [theirs[k] for k in compared]
    assert ours == _expected(typ, res.time)
