"""The ``treebook`` command: build the book, run a notebook under a profile, store a paper-scale
record, run a sweep, check the built book in a browser."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

__all__ = ["main"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="treebook", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser("book", help="execute the notebooks and build the HTML book")
    b.add_argument("--only", nargs="*", help="re-execute only these notebook stems")
    b.add_argument("--jobs", type=int, default=None, help="notebooks executed at once (default: the cores)")

    r = sub.add_parser("run", help="execute one notebook under a parameter profile")
    r.add_argument("notebook", help="notebook stem or path")
    r.add_argument("--profile", default="smoke", help="book, smoke or paper (default: smoke)")
    r.add_argument("--out", default=None, help="folder for the executed notebook and its JSON")
    r.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="override a parameter the notebook declares (VALUE is read as YAML: 1e-3 is a "
                        "number, [1, 2] a list, '1' a string)")
    r.add_argument("--store", action="store_true",
                   help="store the record under results/paper/ (a paper-scale record, with its provenance)")

    st = sub.add_parser("store", help="store a run's JSON record under results/paper/<notebook>.json")
    st.add_argument("record", help="the JSON record written by `treebook run`")
    st.add_argument("--stem", default=None, help="notebook stem (default: the record's file name)")

    c = sub.add_parser("check-book", help="open every page of the built book in headless Chromium")
    c.add_argument("--html", default="_build/html")
    c.add_argument("--out", default="_build/screenshots")

    s = sub.add_parser("sweep", help="run a notebook over a parameter grid, on this machine or on Dask")
    s.add_argument("notebook", help="notebook stem or path")
    s.add_argument("--grid", required=True, help="YAML grid file")
    s.add_argument("--params", default=None, help="YAML of base parameters (or a profile file)")
    s.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler")
    s.add_argument("--workers", type=_positive_int, default=None, help="points run at once on this machine (default 2)")
    s.add_argument("--out", required=True, help="output folder")
    s.add_argument("--no-progress", action="store_true")
    s.add_argument("--fresh-kernels", action="store_true",
                   help="start a fresh kernel per point (default: run it in a process forked from a "
                        "template that has done the notebook's imports, where the platform allows)")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "book":
        from .book import build_book

        build_book(only=args.only, jobs=args.jobs)
    elif args.command == "run":
        from papermill.exceptions import PapermillExecutionError

        from .notebooks import check_parameters, error_line, notebook_path, parse_parameter, run_notebook

        out = args.out if args.out is not None else tempfile.mkdtemp(prefix="treebook-")
        try:
            overrides = check_parameters(args.notebook, {k: parse_parameter(k, v) for k, v in args.param})
            path, res = run_notebook(args.notebook, profile=args.profile, parameters=overrides,
                                     output_dir=out, progress=True)
        except (ValueError, FileNotFoundError) as exc:
            print(f"treebook run: {exc}", file=sys.stderr)
            return 2
        except PapermillExecutionError as exc:
            executed = Path(out).resolve() / f"{notebook_path(args.notebook).stem}.ipynb"
            print(f"treebook run: {args.notebook} failed: {error_line(exc)}\n"
                  f"  the executed notebook, with the whole traceback: {executed}", file=sys.stderr)
            return 1
        print(f"executed: {path}")
        for row in res.get("scorecard", []):
            print(f"  {row['quantity']}: paper {row['paper']}  ours {row['ours']}  [{row.get('verdict')}]")
        if args.store:
            from .results import store_record

            print(f"stored: {store_record(path.with_suffix('.json'))}")
    elif args.command == "store":
        from .results import store_record

        try:
            print(f"stored: {store_record(args.record, stem=args.stem)}")
        except (ValueError, FileNotFoundError) as exc:
            print(f"treebook store: {exc}", file=sys.stderr)
            return 2
    elif args.command == "check-book":
        from .check_book import check_book

        return 1 if check_book(args.html, args.out) else 0
    elif args.command == "sweep":
        from .sweep import SweepLockError, run_sweep

        try:
            table = run_sweep(args.notebook, args.grid, args.out, base_params=args.params,
                              scheduler=args.scheduler, workers=args.workers, progress=not args.no_progress,
                              warm=not args.fresh_kernels)
        except (ValueError, FileNotFoundError, SweepLockError) as exc:
            print(f"treebook sweep: {exc}", file=sys.stderr)
            return 2
        bad = table[table["status"] != "ok"]
        failed = len(bad)
        for row in bad.itertuples():
            point = {k: v for k, v in row._asdict().items()
                     if k not in ("Index", "run_id", "status", "error", "seconds", "notebook")
                     and not (isinstance(v, float) and v != v)}  # NaN: a column of another grid
            print(f"failed: run {row.run_id} {point}: {row.error}\n  traceback: {args.out}/runs/{row.run_id}/error.txt",
                  file=sys.stderr)
        print(f"{len(table)} runs of this grid, {failed} failed; table of every run in {args.out}: "
              f"{args.out}/results.csv")
        return 1 if failed else 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
