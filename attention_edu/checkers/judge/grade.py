"""``attention-edu grade PATH... --exercise NAME``: grade a folder of submissions, one row each.

A submission is a ``.py`` file or an exercise notebook (``.ipynb``); folders are searched for
both. Each is graded in a sandboxed interpreter of its own (see :mod:`.remote`), ``--jobs N`` at
a time. Rows are bound to the files given here and built by the judge alone; the gradebook
(``--csv FILE``, ``--gradescope FILE``) is written once, atomically (a temporary file, then a
rename), after every process of every submission is gone. Each run draws a seed for the hidden
probes (``--seed S`` repeats a run; ``--per-student`` mixes in each file's name). Ctrl-C writes
the rows done so far and exits 130. Exit status 0 when grading completed, 2 on a usage error
(including a path that does not exist or ``--require-sandbox`` without the filesystem layer).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import signal
import sys
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable

from ...arguments import output_path, written_atomically
from ..records import fresh_seed, student_seed
from . import remote
from .command import add_submission_options, filesystem_layer
from .gradescope import results
from .submission import FIELDS, Row, grade_one

__all__ = ["register", "run", "write_atomically"]


def register(subparsers: Any) -> None:
    """Add the ``grade`` subcommand to the ``attention-edu`` parser."""
    parser = subparsers.add_parser(
        "grade", help="grade many submissions (.py files, exercise notebooks, folders of them)",
        description="Run one exercise's checker on every submission, each in a sandboxed interpreter "
                    "of its own; one row per submission. Exit status: 0 when grading completed, 2 on a "
                    "usage error, 130 on Ctrl-C (after writing the rows done).")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders of submissions")
    parser.add_argument("--exercise", required=True, metavar="NAME", help="exercise name (see check --list)")
    add_submission_options(parser, "function name (default: the exercise's own)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print a JSON list, one object per submission")
    output.add_argument("--csv", metavar="FILE", type=output_path, help="write a CSV gradebook to FILE")
    parser.add_argument("--gradescope", metavar="FILE", type=output_path,
                        help="write Gradescope's results.json for the (single) submission to FILE")
    parser.add_argument("--per-student", action="store_true", help="mix each file's name into its seed")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="submissions graded at once")
    parser.add_argument("--require-sandbox", action="store_true",
                        help="refuse to grade without the filesystem sandbox (Landlock)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def _submissions(paths: list[str]) -> list[str]:
    found: list[str] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found += sorted(str(p) for p in path.rglob("*") if p.suffix in (".py", ".ipynb")
                            and p.is_file() and ".ipynb_checkpoints" not in p.parts)
        else:
            found.append(text)
    return list(dict.fromkeys(found))


def _progress(total: int, name: str, quiet: bool) -> Callable[[], None]:
    """A progress bar on stderr: tqdm's when it is installed, else a counter line; nothing if quiet."""
    if quiet or not sys.stderr.isatty():
        return lambda: None
    try:
        from tqdm import tqdm
    except ImportError:                           # tqdm is optional: a plain counter instead
        done = [0]

        def count() -> None:
            done[0] += 1
            print(f"\rgrading {name}: {done[0]}/{total}", end="\n" if done[0] == total else "",
                  file=sys.stderr, flush=True)
        return count
    tqdm.monitor_interval = 0                     # no monitor thread
    bar = tqdm(total=total, desc=f"grading {name}", unit="submission", file=sys.stderr)
    return lambda: (bar.update(1), bar.n == total and bar.close())


def _grade_all(files: list[str], args: argparse.Namespace, seed_of: Callable[[str], int],
               tick: Callable[[], None]) -> tuple[dict[str, Row], bool]:
    """Grade ``files`` ``args.jobs`` at a time: (rows done, interrupted by Ctrl-C)."""
    rows: dict[str, Row] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(files))))
    futures = {pool.submit(grade_one, args.exercise, f, args.function, args.timeout, args.memory,
                           seed_of(f)): f for f in files}
    pending = set(futures)
    try:
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                rows[futures[future]] = future.result()
                tick()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)      # one Ctrl-C is enough: now clean up
        remote.stop_all()
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)
        return rows, True
    pool.shutdown(wait=True)
    return rows, False


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it and a rename."""
    with written_atomically(path) as partial:
        partial.write_text(text, encoding="utf-8", newline="")


def _csv(records: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS)
    writer.writeheader()
    for record in records:
        writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in record.items()})
    return buffer.getvalue()


def _usage(message: str) -> int:
    print(f"attention-edu grade: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run the ``grade`` subcommand; returns the exit code."""
    from .. import EXERCISES, exercise_name

    name = exercise_name(args.exercise)
    if name not in EXERCISES:
        return _usage(f"unknown exercise {args.exercise!r}; valid exercises: {', '.join(EXERCISES)}")
    args.exercise = name
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        return _usage(f"no such file or folder: {', '.join(missing)}")
    files = _submissions(args.paths)
    if not files:
        return _usage("no .py or .ipynb files in " + " ".join(args.paths))
    if args.jobs < 1:
        return _usage("--jobs must be at least 1")
    layer = filesystem_layer()
    if args.require_sandbox and layer is not None:
        return _usage(f"--require-sandbox: the filesystem sandbox is not available here ({layer})")
    seed = fresh_seed() if args.seed is None else args.seed
    seed_of = (lambda f: student_seed(seed, f)) if args.per_student else (lambda f: seed)
    rows, interrupted = _grade_all(files, args, seed_of, _progress(len(files), name, args.no_progress))
    done = [rows[f] for f in files if f in rows]
    for row in done if args.require_sandbox else ():
        if "landlock" not in row.sandbox and row.error is None:   # the layer failed for this one
            row.passed, row.status, row.error = False, "failed", "graded without the filesystem sandbox"
    records = [row.record() for row in done]
    layers = ", ".join(done[0].sandbox) if done and done[0].sandbox else "none"
    print(f"graded {len(done)} of {len(files)} with seed {seed}{' (per student)' if args.per_student else ''};"
          f" sandbox layers: {layers}", file=sys.stderr)
    if args.json:
        print(json.dumps(records, indent=2))
    if args.csv:
        write_atomically(args.csv, _csv(records))
        print(f"wrote {len(records)} row{'' if len(records) == 1 else 's'} to {args.csv}")
    if args.gradescope and done:
        write_atomically(args.gradescope, json.dumps(results(EXERCISES[name], done[0]), indent=2))
        print(f"wrote Gradescope results for {done[0].file} to {args.gradescope}")
    if not args.json:
        for row in done:
            grade = f"{row.probes_passed}/{row.probes_total}" if row.probes_total else "-"
            print(f"{row.status:<14} {grade:>6}  {row.file}  {row.hint_id or ''}  {row.error or ''}".rstrip())
        print(f"{sum(r.passed for r in done)} of {len(done)} submissions passed")
    if interrupted:
        print(f"attention-edu grade: interrupted; wrote the {len(done)} rows done of {len(files)}", file=sys.stderr)
        return 130
    return 0
