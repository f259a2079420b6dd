"""Command line: ``python -m bench SUITE [--quick] [--json PATH] [--repeats N] ...``.

Exit status: 0 on success, 1 if a case failed with an error (missing peers and
features our engine lacks are not errors), 2 with ``--check-targets`` if a measured
target was missed.
"""

from __future__ import annotations

import os

# One BLAS thread unless the caller says otherwise (set before NumPy is imported): the
# figures are per core, and a multi-threaded dense mat-vec on a loaded 2-core machine
# produced 50x outliers.  The values used are recorded in the environment block.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

from . import harness  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    names = harness.suite_names()
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmarks of the cosim engine against peer tools in the same run.")
    p.add_argument("suite", choices=[*names, "all"],
                   help="suite to run ('all' = every registered suite)")
    p.add_argument("--quick", action="store_true",
                   help="fewer repeats, shorter or estimated slow peer cases (< 1 min)")
    p.add_argument("--repeats", type=int, default=None, metavar="N",
                   help="repeats per measurement (default 3 quick, 5 full)")
    p.add_argument("--budget", type=float, default=-1.0, metavar="SECONDS",
                   help="stop repeating a measurement after this much time, keeping at "
                        "least one sample (default 3 quick, 60 full; 0 = no budget)")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    p.add_argument("--markdown", action="store_true",
                   help="print a README-ready markdown table instead of the text table")
    p.add_argument("--from-json", metavar="PATH",
                   help="do not run anything: print the results stored in PATH")
    p.add_argument("--check-targets", action="store_true",
                   help="exit with status 2 if a measured target is not met")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def _docs(doc: dict) -> list[dict]:
    return doc["results"] if doc.get("suite") == "all" else [doc]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            doc = json.load(f)
        if args.suite != "all":
            docs = [d for d in _docs(doc) if d.get("suite") == args.suite]
            if not docs:
                print(f"no results for suite {args.suite!r} in {args.from_json}",
                      file=sys.stderr)
                return 1
            doc = docs[0]
    else:
        options = harness.Options.for_mode(args.quick, args.repeats, args.budget,
                                           progress=not args.quiet)
        names = harness.suite_names() if args.suite == "all" else [args.suite]
        docs = [harness.run_suite(name, options) for name in names]
        doc = docs[0] if args.suite != "all" else {
            "suite": "all", "quick": options.quick, "env": harness.env_info(),
            "results": docs}
        if args.json:
            path = harness.write_json(args.json, doc)
            print(f"results written to {path}", file=sys.stderr)

    render = harness.format_markdown if args.markdown else harness.format_table
    print("\n\n".join(render(d) for d in _docs(doc)))

    errors = [e for d in _docs(doc) for e in harness.errors_in(d)]
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    if errors:
        return 1
    missed = [t["name"] for d in _docs(doc) for t in d.get("targets", []) if t["met"] is False]
    if args.check_targets and missed:
        print("targets not met: " + "; ".join(missed), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
