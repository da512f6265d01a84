"""``attention-edu check EXERCISE FILE`` and ``attention-edu grade PATH... --exercise NAME`` (docs/teachers.md).

``grade`` writes the gradebook (:mod:`.gradebook`) once, atomically, after every process of every submission is
gone. The exit
statuses are in :func:`register`'s descriptions; SIGTERM and SIGHUP are handled as Ctrl-C, which while ``grade`` runs
only stops the grading (:func:`~attention_edu.arguments.signals_noted`): the rows done are always written.
"""

import argparse
import json
import os
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from ...arguments import (non_negative_int, output_path, positive_int, positive_megabytes, positive_seconds,
                          signals_noted, working_folder_was_on_path)
from ..records import fresh_seed
from ..result import say
from . import escape, list_submissions
from .gradebook import Row, write_gradebook
from .harness import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT
from .sandbox import available_layers, landlock_abi, namespaces_allowed
from .submission import DEFAULT_BUDGET, grade_one, stop_all

__all__ = ["register", "run_check", "run_grade", "filesystem_layer"]


def register(subparsers: Any) -> None:
    """Add the ``check`` and ``grade`` subcommands to the ``attention-edu`` parser."""
    check = subparsers.add_parser(
        "check", help="check an exercise solution defined in a Python file or notebook",
        description="Run the exercise's checker on a function defined in FILE (.py or .ipynb), in a sandboxed "
                    "interpreter of its own. Exit status: 0 pass, 1 fail or not attempted, 2 usage error.")
    check.add_argument("exercise", nargs="?", help="exercise name, e.g. softmax (see --list)")
    check.add_argument("file", nargs="?", help="Python file or notebook that defines the function")
    check.add_argument("--verbose", action="store_true", help="also say which sandbox layers were active")
    check.add_argument("--list", action="store_true", help="list the exercises and exit")
    grade = subparsers.add_parser(
        "grade", help="grade many submissions (.py files, exercise notebooks, folders of them)",
        description="Run one exercise's checker on every submission, each in a sandboxed interpreter "
                    "of its own; one row per submission. Exit status: 0 when grading completed, 1 when the gradebook "
                    "could not be written, 2 on a usage error, 130 on Ctrl-C (after writing the rows done).")
    grade.add_argument("paths", nargs="+", metavar="PATH", help="files or folders of submissions")
    grade.add_argument("--exercise", required=True, metavar="NAME", help="exercise name (see check --list)")
    output = grade.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print a JSON list, one object per submission")
    output.add_argument("--csv", metavar="FILE", type=output_path, help="write a CSV gradebook to FILE")
    grade.add_argument("--gradescope", metavar="FILE", type=output_path, help="write Gradescope's results.json to FILE")
    grade.add_argument("--per-student", action="store_true", help="mix each file's name and contents into its seed")
    grade.add_argument("--jobs", type=positive_int, default=1, metavar="N", help="submissions graded at once")
    grade.add_argument("--require-sandbox", action="store_true", help="refuse to grade without Landlock's sandbox")
    grade.add_argument("--no-progress", action="store_true", help="no progress bar")
    for parser, run in ((check, run_check), (grade, run_grade)):
        parser.add_argument("--function", metavar="NAME", help="function name (default: the exercise's own)")
        parser.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                            help=f"time limit per call of the function (default {DEFAULT_TIMEOUT:g})")
        parser.add_argument("--budget", type=positive_seconds, default=DEFAULT_BUDGET, metavar="SECONDS",
                            help=f"time for loading and every call in all (default {DEFAULT_BUDGET:g})")
        parser.add_argument("--memory", type=positive_megabytes, default=DEFAULT_MEMORY_MB, metavar="MB",
                            help=f"memory beyond 512 MB for the interpreter (default {DEFAULT_MEMORY_MB})")
        parser.add_argument("--seed", type=non_negative_int, metavar="S",
                            help="seed of the hidden probes (default: fresh)")
        parser.set_defaults(run=run)


def filesystem_layer() -> str | None:
    """None when Landlock can restrict the student's interpreter here, else why not."""
    return None if landlock_abi() else "the kernel offers no Landlock"


def _usage(command: str, message: str) -> int:
    say(f"attention-edu {command}: {message}", stderr=True)
    return 2


#: Why check and grade refuse to run on Windows.
NOT_POSIX = ("needs Linux or macOS: each submission runs under a launcher that forks and sets resource limits "
             "(on Windows, run it in WSL; a notebook's check_<exercise>(fn) works everywhere)")


def run_check(args: argparse.Namespace) -> int:
    """Run the ``check`` subcommand; returns the exit code."""
    from .. import EXERCISES, exercise_name
    if args.list:
        for exercise in EXERCISES.values():
            print(f"{exercise.name:<30} {exercise.signature}")
        return 0
    if os.name != "posix":
        return _usage("check", NOT_POSIX)
    valid = ", ".join(EXERCISES)
    if not args.exercise or not args.file:
        return _usage("check", f"give an exercise and a file, e.g. attention-edu check softmax mine.py; "
                               f"exercises: {valid}")
    name = exercise_name(args.exercise)
    if name not in EXERCISES:
        return _usage("check", f"unknown exercise {args.exercise!r}; valid exercises: {valid}")
    if os.path.isdir(args.file) or Path(args.file).suffix.lower() not in (".py", ".ipynb"):
        return _usage("check", f"{args.file} is not a .py file or an .ipynb notebook")
    if refusal := _importable("check", [], [args.file]):
        return refusal
    seed = fresh_seed() if args.seed is None else args.seed
    row = grade_one(name, args.file, args.function, args.timeout, args.memory, seed, args.budget)
    if row.usage and "defines no function" not in row.error:       # no such file, a file it may not read
        return _usage("check", row.error)
    if row.usage:                                   # no function of that name
        advice = "give --function one of the functions found" if args.function else "pass --function NAME"
        return _usage("check", f"{row.error}; name it {args.function or EXERCISES[name].function} or {advice}")
    say(row.message)
    if args.verbose:
        print(f"(hidden cases drawn with seed {seed}; sandbox layers: {', '.join(row.sandbox) or 'none'})")
    return 0 if row.passed and row.error is None else 1


def _grade_all(files: dict[str, Any], args: argparse.Namespace, seed: int,
               stop: threading.Event) -> tuple[dict[str, Row], bool]:
    """Grade ``files`` ``args.jobs`` at a time (each with its own seed under ``--per-student``), with a progress bar
    on a terminal, until ``stop`` is set (Ctrl-C): (rows done, interrupted)."""
    from tqdm import tqdm
    tqdm.monitor_interval = 0                     # no monitor thread
    bar = tqdm(total=len(files), desc=f"grading {args.exercise}", unit="submission", file=sys.stderr,
               disable=args.no_progress or not (sys.stderr and sys.stderr.isatty()))     # None: 2>&-
    rows: dict[str, Row] = {}
    halt = threading.Event()      # set once the loop below has stopped collecting rows: a row cut short is not one
    with ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(files)))) as pool:  # leaving it waits for all
        futures = {pool.submit(grade_one, args.exercise, f, args.function, args.timeout, args.memory, seed,
                               args.budget, args.per_student, listed, halt): f for f, listed in files.items()}
        pending = set(futures)
        while pending and not stop.is_set():
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            for future in done:
                rows[futures[future]] = future.result()
                bar.update(1)
        if pending:
            stop_all(halt)                                     # its sandboxes running end, and their calls with them
            pool.shutdown(wait=False, cancel_futures=True)     # those not started never start
    bar.close()
    return rows, bool(pending)


def run_grade(args: argparse.Namespace) -> int:
    """Run the ``grade`` subcommand; returns the exit code."""
    from .. import EXERCISES, exercise_name
    if os.name != "posix":
        return _usage("grade", NOT_POSIX)
    name = exercise_name(args.exercise)
    if name not in EXERCISES:
        return _usage("grade", f"unknown exercise {args.exercise!r}; valid exercises: {', '.join(EXERCISES)}")
    args.exercise = name
    if any(out is not None and out.suffix.lower() in (".py", ".ipynb") for out in (args.csv, args.gradescope)):
        return _usage("grade", "--csv and --gradescope write a gradebook, never a .py or .ipynb (a submission's name)")
    if missing := [p for p in args.paths if not os.path.exists(p)]:
        return _usage("grade", f"no such file or folder: {', '.join(missing)}")
    if not (listed := list_submissions(args.paths)) and not args.gradescope:     # Gradescope: a row says why, below
        return _usage("grade", "no .py or .ipynb files in " + " ".join(args.paths))
    if refusal := _importable("grade", args.paths, listed):
        return refusal
    if args.jobs > 1 and not (namespaces_allowed() and available_layers()["mount-namespace"].startswith("active")):
        args.jobs = 1     # no tmpfs of its own: a worker that filled the shared TMPDIR would fail those beside it
    if (layer := filesystem_layer()) is not None:
        if args.require_sandbox:
            return _usage("grade", f"--require-sandbox: the filesystem sandbox is not available here ({layer})")
        say(f"attention-edu grade: warning: no filesystem sandbox here ({layer}); the marks rest on the other "
            f"layers (docs/teachers.md), and --require-sandbox would refuse to grade", stderr=True)
    return _grade_and_write(args, name, listed)


def _importable(command: str, paths: list[str], listed: Any) -> int | None:
    """Exit status 2, said, where a folder of submissions, or one holding a folder given, is on Python's import path
    (PYTHONPATH: the grader would import a student's tqdm.py from it; red teams 47 and 48), or where the working folder
    holds the files or is the folder given and was on the path when the command began (PYTHONPATH=":"; red team 52,
    though the command took it off); else None."""
    on_path = {os.path.realpath(entry or os.curdir) for entry in sys.path if isinstance(entry, str)}
    given = [path for path in paths if os.path.isdir(path)] + [os.path.dirname(file) or os.curdir for file in listed]
    here = os.path.realpath(os.curdir)
    if working_folder_was_on_path() and any(os.path.realpath(folder) == here for folder in given):
        on_path.add(here)
    folders = given + [os.path.dirname(os.path.abspath(path)) for path in paths if os.path.isdir(path)]
    if folder := next((folder for folder in folders if os.path.realpath(folder) in on_path), None):
        return _usage(command, f"{escape(folder, False)} holds submissions and is on Python's import path, so a "
                               "student's tqdm.py there would be imported by the grader: take it off (PYTHONPATH, "
                               "or a Python started there) and run attention-edu from another folder")
    return None


def _grade_and_write(args: argparse.Namespace, name: str, listed: dict[str, Any]) -> int:
    """Grade the submissions ``listed``, write the gradebook and print the rows; the exit code."""
    from .. import EXERCISES
    seed, files = fresh_seed() if args.seed is None else args.seed, list(listed)
    several = bool(args.gradescope) and len(files) != 1     # the grader does not choose one: none runs its budget
    names = escape(", ".join(Path(f).name for f in files[:5]) + ", ..." * (len(files) > 5), False)
    came = f"{len(files)} files came in ({names})" if files else "no .py or .ipynb file came in"
    why = f"{came}: submit one .py or .ipynb that defines {args.function or EXERCISES[name].function}"
    with signals_noted() as stop:       # until the gradebook is written, a Ctrl-C only stops the grading
        rows, interrupted = _grade_all({} if several else listed, args, seed, stop)
        done = [rows[f] for f in files if f in rows] if not several else [  # the names escaped, as grade_one's rows'
            Row(escape(f, False), seed=seed, error=why) for f in files]
        for row in done:
            if args.require_sandbox and "landlock" not in row.sandbox and row.error is None:
                row.passed, row.status, row.probes_passed = False, "failed", 0     # no Landlock for this one
                row.error = "graded without the filesystem sandbox"
        records = [row.record() for row in done]
        scored = Row(names or "no .py or .ipynb file", seed=seed, error=why) if several else next(iter(done), None)
        wrote, unwritten = write_gradebook(args.csv, args.gradescope, EXERCISES[name], records, scored)
    # the rest prints, which a stalled pipe can hold: a Ctrl-C ends it at once, as anywhere (red team 45)
    layers = ", ".join(next((row.sandbox for row in done if row.sandbox), [])) or "none (no submission ran)"
    told = "the seed given" if args.per_student and args.seed is not None else f"seed {seed}"   # a course's secret:
    try:
        say(f"graded {0 if several else len(done)} of {len(files)} with {told}"     # not in Gradescope's log (44)
            f"{' (per student)' if args.per_student else ''}; sandbox layers: {layers}", stderr=True)
        if args.json:
            print(json.dumps(records, indent=2))
        for stderr, line in wrote:
            say(line, stderr=stderr)
        if not args.json:
            for row in done:
                grade = f"{row.probes_passed}/{row.probes_total}" if row.probes_total else "-"
                say(f"{row.status:<14} {grade:>6}  {row.file}  {row.hint_id or ''}  {row.error or ''}".rstrip())
            print(f"{sum(r.passed for r in done)} of {len(done)} submissions passed", flush=True)
    except BrokenPipeError:         # a reader gone (| head): the exit status below still tells (red team 46)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())     # so that the final flush cannot fail
    if interrupted or stop.is_set():            # stop alone: once every row was done, which the gradebook holds
        left = [escape(Path(f).name, False) for f in files if f not in rows] if interrupted else []
        book = "the gradebook could not be written" if unwritten else "the gradebook holds those rows only"   # (46)
        say(f"attention-edu grade: interrupted; graded {len(done)} of {len(files)}, and {book} (not graded: "
            f"{', '.join(left[:5])}{', ...' * (len(left) > 5)})" if left else f"attention-edu grade: interrupted "
            f"after grading; {'no gradebook could be written' if unwritten else 'the gradebook holds every row'}",
            stderr=True)
        return 130
    return 1 if unwritten else 0
