"""``attention-edu grade PATH... --exercise NAME``: grade a folder of submissions, one row each.

A submission is a ``.py`` file or an exercise notebook (``.ipynb``) that
defines the exercise's function; folders are searched for both. Every
submission is graded in a worker process of its own, and every call of
student code in a child of that worker (see :mod:`.harness`), so a broken
or hostile submission costs one row, never the batch. ``--jobs N`` grades N
submissions at a time; a progress bar runs on stderr. The output is a table,
``--json`` (a list of objects) or ``--csv FILE`` (a gradebook); each row has
``file``, ``passed``, ``attempted``, ``status``, ``hint_id``, ``probe``,
``probes_passed``, ``probes_total``, ``summary``, ``seconds`` and
``error`` (null, or why the submission could not be graded). Exit status 0
when grading completed (whatever the grades), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import selectors
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ...arguments import output_path
from .command import add_submission_options
from .submission import FIELDS, Row, grade_one

__all__ = ["register", "run"]

def register(subparsers: Any) -> None:
    """Add the ``grade`` subcommand to the ``attention-edu`` parser."""
    parser = subparsers.add_parser(
        "grade", help="grade many submissions (.py files, exercise notebooks, folders of them)",
        description="Run one exercise's checker on every submission, each isolated; one row per "
                    "submission. Exit status: 0 when grading completed, 2 on a usage error.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders of submissions")
    parser.add_argument("--exercise", required=True, metavar="NAME", help="exercise name (see check --list)")
    add_submission_options(parser, "function name (default: the exercise's own)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print a JSON list, one object per submission")
    output.add_argument("--csv", metavar="FILE", type=output_path, help="write a CSV gradebook to FILE")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="submissions graded at once")
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


def _worker_command(args: argparse.Namespace) -> list[str]:
    command = [sys.executable, "-m", "attention_edu.checkers.judge.grade", args.exercise,
               "--timeout", str(args.timeout), "--memory", str(args.memory)]
    return command + (["--function", args.function] if args.function else [])


def _grade_all(files: list[str], args: argparse.Namespace, progress: Any) -> list[Row]:
    """Grade ``files`` in ``args.jobs`` worker processes, one file at a time each."""
    rows: dict[str, Row] = {}
    pending = list(reversed(files))
    selector = selectors.DefaultSelector()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                      env.get("PYTHONPATH", "")]))
    workers = []
    for _ in range(max(1, min(args.jobs, len(files)))):
        worker = subprocess.Popen(_worker_command(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1, env=env)
        workers.append(worker)
        selector.register(worker.stdout, selectors.EVENT_READ, worker)
    current: dict[Any, str] = {}

    def feed(worker: Any) -> None:
        if pending:
            current[worker] = pending.pop()
            worker.stdin.write(current[worker] + "\n")
            worker.stdin.flush()
        else:                                     # nothing left: let it end, stop listening to it
            current.pop(worker, None)
            selector.unregister(worker.stdout)
            worker.stdin.close()

    for worker in workers:
        feed(worker)
    while current:
        for key, _ in selector.select():
            worker = key.data
            line = worker.stdout.readline()
            if line:
                row = Row(**json.loads(line))
            else:                                 # the worker died: the file it held gets a row
                selector.unregister(worker.stdout)
                row = Row(current[worker], attempted=True, status="failed",
                          error=f"the grading worker died (exit status {worker.wait()})")
                row.summary = row.error
            rows[current[worker]] = row
            progress.update(1)
            if line:
                feed(worker)
            else:
                current.pop(worker, None)
                if pending:                       # replace the dead worker
                    worker = subprocess.Popen(_worker_command(args), stdin=subprocess.PIPE,
                                              stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
                    workers.append(worker)
                    selector.register(worker.stdout, selectors.EVENT_READ, worker)
                    feed(worker)
    for worker in workers:
        worker.wait()
    return [rows[f] for f in files]


class _NoProgress:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def run(args: argparse.Namespace) -> int:
    """Run the ``grade`` subcommand; returns the exit code."""
    from ..registry import EXERCISES, exercise_name

    name = exercise_name(args.exercise)
    if name not in EXERCISES:
        print(f"attention-edu grade: unknown exercise {args.exercise!r}; valid exercises: "
              f"{', '.join(EXERCISES)}", file=sys.stderr)
        return 2
    args.exercise = name
    files = _submissions(args.paths)
    if not files:
        print("attention-edu grade: no .py or .ipynb files in " + " ".join(args.paths), file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("attention-edu grade: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.no_progress:
        progress = _NoProgress()
    else:
        from tqdm import tqdm
        tqdm.monitor_interval = 0                 # no monitor thread
        progress = tqdm(total=len(files), desc=f"grading {name}", unit="submission", file=sys.stderr)
    try:
        rows = _grade_all(files, args, progress)
    finally:
        progress.close()
    records = [row.record() for row in rows]
    if args.json:
        print(json.dumps(records, indent=2))
    elif args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(records)
        print(f"wrote {len(records)} rows to {args.csv}")
    if not args.json:
        for row in rows:
            grade = f"{row.probes_passed}/{row.probes_total}" if row.probes_total else "-"
            print(f"{row.status:<14} {grade:>6}  {row.file}  {row.hint_id or ''}  {row.error or ''}".rstrip())
        passed = sum(r.passed for r in rows)
        print(f"{passed} of {len(rows)} submissions passed")
    return 0


def _worker(argv: list[str]) -> int:
    """A grading worker: reads one path per line on stdin, writes one JSON row per line on stdout."""
    parser = argparse.ArgumentParser(prog="attention_edu.checkers.judge.grade")
    parser.add_argument("exercise")
    add_submission_options(parser, "function name")
    args = parser.parse_args(argv)
    out = sys.stdout
    for line in sys.stdin:
        path = line.rstrip("\n")
        try:
            row = grade_one(args.exercise, path, args.function, args.timeout, args.memory)
        except Exception as err:  # a bug of ours must not stop the batch either
            row = Row(path, attempted=True, status="failed", error=f"grading failed: {type(err).__name__}: {err}")
        fields = asdict(row)
        out.write(json.dumps(fields) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1:]))
