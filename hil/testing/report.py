"""The HTML report of a HIL test run: each test's verdict, its steps, the signals plotted
around each check (the deciding instant marked), the runner's telemetry, links to the
measurement files.

Written in two stages so that parallel test processes (pytest-xdist) can share a folder:
:func:`write_test` stores one test's record (``tests/<id>.json``), its plots
(``plots/<id>-<k>.png``, matplotlib, Agg) and its measurement (``mf4/<id>.mf4``) as the
test ends; :func:`write_index` assembles ``index.html`` from every record in the folder
at the end of the session.

A check's plot shows the signals the check read (at most four, one panel each) from 3 s
before to 3 s after its deciding instant (the failing sample, or where it held), with that
instant marked by a vertical line (red: failed, green: passed) and labelled with its time.

Limitations: static files (no zoom; open the MF4 in asammdf's viewer for that); a plot
per check costs about 0.1 s; records of an earlier run left in the folder are included
(give a fresh folder per run).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

__all__ = ["write_test", "write_index", "plot_check", "safe_name"]

#: seconds shown on each side of a check's deciding instant
PLOT_SPAN_S = 3.0
#: signals plotted per check at most
PLOT_SIGNALS = 4


def safe_name(nodeid: str) -> str:
    """A test id as a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[-120:]


def _check_names(res: Any, trace: Any) -> list[str]:
    names = [n for n in (res.window.names if res.window is not None else []) if n in trace]
    return names[:PLOT_SIGNALS]


def plot_check(res: Any, trace: Any, path: Path) -> str | None:
    """The signals of one check around its deciding instant (module docstring)."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    names = _check_names(res, trace)
    if not names or res.when is None or not len(trace):
        return None
    t0, t1 = res.when - PLOT_SPAN_S, res.when + PLOT_SPAN_S
    i0, i1 = trace.span(max(t0, trace.start), min(t1, trace.end))
    if i1 <= i0:
        return None
    t = trace.t[i0:i1]
    fig, axes = plt.subplots(len(names), 1, figsize=(7.5, 1.6 + 1.4 * len(names)),
                             sharex=True, squeeze=False)
    color = "tab:green" if res.passed else "tab:red"
    for ax, n in zip(axes[:, 0], names):
        ax.plot(t, trace[n][i0:i1], lw=1.2)
        unit = trace.unit(n)
        ax.set_ylabel(f"{n}" + (f" [{unit}]" if unit else ""), fontsize=8)
        ax.axvline(res.when, color=color, lw=1.5, ls="--")
        ax.grid(alpha=0.3)
    word = "passed" if res.passed else "FAILED"
    axes[0, 0].set_title(f"{res.name} {word} at t = {res.when:.3f} s", fontsize=9,
                         color=color)
    axes[-1, 0].set_xlabel("time [s]")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path.name


def write_test(folder: Any, nodeid: str, outcome: str, duration: float, rig: Any = None,
               message: str = "") -> Path:
    """One test's record, plots and measurement (module docstring); returns the record."""
    folder = Path(folder)
    name = safe_name(nodeid)
    rec: dict[str, Any] = {"nodeid": nodeid, "outcome": outcome, "duration_s": duration,
                           "message": message, "steps": [], "checks": [], "runs": [],
                           "mf4": None, "rig": None}
    if rig is not None:
        rec["rig"] = f"{rig.spec.name} ({rig.spec.mode})"
        rec["steps"] = [[float(t), s] for t, s in rig.steps]
        trace = rig.trace()
        for k, res in enumerate(rig.checks):
            png = None
            try:
                png = plot_check(res, trace, folder / "plots" / f"{name}-{k}.png")
            except Exception as exc:  # noqa: BLE001 - a plot that fails is said, not fatal
                rec["message"] += f"\n(plot of check {k} failed: {exc})"
            rec["checks"].append({"passed": bool(res.passed), "message": res.message,
                                  "when": res.when, "margin": res.margin, "unit": res.unit,
                                  "plot": f"plots/{png}" if png else None})
        rec["runs"] = [{"t_end": r["t_end"], "summary": r["summary"],
                        "verdict": r["verdict_line"]} for r in rig.runs]
        try:
            (folder / "mf4").mkdir(parents=True, exist_ok=True)
            rig.write_mf4(folder / "mf4" / f"{name}.mf4")
            rec["mf4"] = f"mf4/{name}.mf4"
        except Exception as exc:  # noqa: BLE001 - asammdf missing: said in the report
            rec["message"] += f"\n(no measurement file: {exc})"
    out = folder / "tests" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=1, default=float))
    return out


_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
.verdict { font-weight: bold; padding: 0.1em 0.5em; border-radius: 3px; color: white; }
.verdict.passed { background: #2a7d2e; } .verdict.failed { background: #b3261e; }
.verdict.skipped, .verdict.xfailed { background: #777; }
.verdict.xpassed { background: #b36b00; }
div.check { margin: 0.6em 0; padding-left: 0.6em; border-left: 4px solid #2a7d2e; }
div.check.failed { border-left-color: #b3261e; }
section.test { border-top: 1px solid #ccc; margin-top: 1.2em; padding-top: 0.6em; }
pre { background: #f6f6f6; padding: 0.5em; white-space: pre-wrap; font-size: 85%; }
h2 { overflow-wrap: anywhere; }
table { border-collapse: collapse; font-size: 90%; }
td, th { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: left; }
img.plot { display: block; margin: 0.4em 0; max-width: 100%; }
"""


def _test_html(r: dict) -> str:
    e = html.escape
    out = [f'<section class="test" id="{e(safe_name(r["nodeid"]))}">',
           f'<h2>{e(r["nodeid"])} <span class="verdict {e(r["outcome"])}">'
           f'{e(r["outcome"].upper())}</span></h2>',
           f'<p>rig: {e(r["rig"] or "none")}; {r["duration_s"]:.2f} s</p>']
    if r["message"]:
        out.append(f'<pre class="message">{e(r["message"])}</pre>')
    if r["steps"]:
        out.append('<h3>Steps</h3><table class="steps"><tr><th>t [s]</th><th>step</th></tr>')
        out += [f"<tr><td>{t:.3f}</td><td>{e(s)}</td></tr>" for t, s in r["steps"]]
        out.append("</table>")
    if r["checks"]:
        out.append("<h3>Checks</h3>")
        for c in r["checks"]:
            word = "passed" if c["passed"] else "failed"
            out.append(f'<div class="check {word}"><p><span class="verdict {word}">'
                       f'{word.upper()}</span> {e(c["message"])}</p>')
            if c["plot"]:
                out.append(f'<img class="plot" src="{e(c["plot"])}" alt="signals around '
                           f'the check at t = {c["when"]:.3f} s ({word})">')
            out.append("</div>")
    if r["runs"]:
        out.append("<h3>Telemetry</h3>")
        for run in r["runs"]:
            out.append(f'<pre class="telemetry">to t = {run["t_end"]:.3f} s: '
                       f'{e(run["summary"])}\n{e(run["verdict"])}</pre>')
    if r["mf4"]:
        out.append(f'<p>Measurement: <a class="mf4" href="{e(r["mf4"])}">'
                   f'{e(r["mf4"])}</a> (ASAM MDF 4)</p>')
    out.append("</section>")
    return "\n".join(out)


def write_index(folder: Any, title: str = "HIL test report") -> Path:
    """``index.html`` from every test record in ``folder`` (module docstring)."""
    folder = Path(folder)
    recs = [json.loads(p.read_text()) for p in sorted((folder / "tests").glob("*.json"))]
    counts: dict[str, int] = {}
    for r in recs:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    e = html.escape
    rows = "".join(f'<tr><td><a href="#{e(safe_name(r["nodeid"]))}">{e(r["nodeid"])}</a></td>'
                   f'<td><span class="verdict {e(r["outcome"])}">{e(r["outcome"].upper())}'
                   f'</span></td><td>{len(r["checks"])}</td></tr>' for r in recs)
    total = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no HIL tests"
    body = (f"<h1>{e(title)}</h1><p class=\"totals\">{e(total)}</p>"
            f'<table class="summary"><tr><th>test</th><th>verdict</th><th>checks</th></tr>'
            f"{rows}</table>" + "".join(_test_html(r) for r in recs))
    page = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{e(title)}</title>"
            f"<style>{_CSS}</style></head><body>{body}</body></html>")
    out = folder / "index.html"
    out.write_text(page)
    return out


def outcome_of(passed: bool, failed: bool, skipped: bool, xfail: bool) -> str:
    if skipped:
        return "xfailed" if xfail else "skipped"
    if failed:
        return "failed"
    return "xpassed" if xfail else "passed"
