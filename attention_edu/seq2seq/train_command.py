"""``attention-edu train``: train a seq2seq model from scratch and report its held-out exact match.

    attention-edu train --task reverse --attention bahdanau --seed 0 --out model.npz
    attention-edu train --task dates --attention none --json     # stdout: one JSON line of metrics

A progress bar (loss, next-character accuracy, time left) goes to stderr;
results go to stdout (with ``--json``, the JSON alone: the summary goes to
stderr). Exit 0 on success, 2 on a usage error (an ``--out`` whose
folder is missing or read-only is one, refused before training), 1 when the
checkpoint cannot be written or training fails.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..arguments import non_negative_int, output_path, positive_int, written_atomically
from ..transformer.tasks import TASKS as TRANSFORMER_TASKS
from ..transformer.curriculum import DEFAULT_CURRICULA
from ..transformer.training import DEFAULT_STEPS as TRANSFORMER_STEPS
from .config import ATTENTIONS
from .tasks import TASKS
from .training import DEFAULT_STEPS, train

__all__ = ["register", "run"]

#: Steps the induction curriculum adds after its default ones (the help states them).
LATE_STEPS = DEFAULT_CURRICULA["induction"].late_steps(TRANSFORMER_STEPS["induction"])


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` subcommand to the ``attention-edu`` parser."""
    p = subparsers.add_parser(
        "train", help="train a seq2seq model or a transformer from scratch in NumPy",
        description="Train a GRU encoder-decoder (tasks reverse and dates, with or without attention) or a "
                    "transformer (tasks sort and induction) on a task generated in code and report its "
                    "exact match on held-out sources.")
    p.add_argument("--task", choices=TASKS + TRANSFORMER_TASKS, default="reverse",
                   help="what to learn (default reverse); sort and induction train a transformer")
    p.add_argument("--attention", choices=ATTENTIONS, default=None,
                   help="the decoder's attention (default bahdanau; seq2seq tasks only)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of data and parameters (default 0)")
    p.add_argument("--steps", type=positive_int, default=None,
                   help=f"training steps (default {DEFAULT_STEPS['reverse']} for reverse, "
                        f"{DEFAULT_STEPS['dates']} for dates, {TRANSFORMER_STEPS['sort']} for sort, "
                        f"{TRANSFORMER_STEPS['induction']} for induction, then {LATE_STEPS} more with sources at late "
                        "positions)")
    p.add_argument("--batch-size", type=positive_int, default=64, help="pairs per step (default 64)")
    p.add_argument("--eval-per-length", type=positive_int, default=200, metavar="N",
                   help="held-out sources per length (reverse, sort, induction; 10 N dates) (default 200)")
    p.add_argument("--out", type=output_path, metavar="FILE.npz", help="save the trained model here")
    p.add_argument("--json", action="store_true",
                   help="print the metrics as one JSON line, alone on stdout (the summary goes to stderr)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Carry out ``attention-edu train``; returns the exit code."""
    if args.task in TRANSFORMER_TASKS:  # the task chooses the model
        if args.attention is not None:
            print(f"attention-edu train: --attention applies to the seq2seq tasks ({', '.join(TASKS)}); "
                  f"{args.task} trains a transformer, whose attention is its own", file=sys.stderr)
            return 2
        from ..transformer.command import run_train
        return run_train(args)
    args.attention = args.attention or "bahdanau"
    try:
        model, history = train(args.task, args.attention, args.seed, steps=args.steps,
                               batch_size=args.batch_size, eval_per_length=args.eval_per_length,
                               progress=not args.quiet)
    except (ValueError, FloatingPointError) as err:
        print(f"attention-edu train: {err}", file=sys.stderr)
        return 1
    if args.out is not None:
        try:
            with written_atomically(args.out) as partial:  # Ctrl-C leaves no half-written file
                model.save(partial)
        except OSError as err:
            print(f"attention-edu train: cannot write {args.out}: {err}", file=sys.stderr)
            return 1
    metrics = {key: history[key] for key in (
        "task", "attention", "seed", "steps", "batch_size", "seconds", "train_seconds",
        "seconds_per_step", "exact_match", "exact_match_by_length")}
    metrics["final_loss"] = history["loss"][-1]
    metrics["out"] = None if args.out is None else str(args.out)
    summary = sys.stderr if args.json else sys.stdout  # with --json, stdout is the JSON alone
    print(f"{args.task} with attention {args.attention}, seed {args.seed}: {history['steps']} steps "
          f"in {history['seconds']:.1f} s; held-out exact match {history['exact_match']:.1%}", file=summary)
    print("by source length: " + "  ".join(
        f"{n}: {share:.0%}" for n, share in history["exact_match_by_length"].items()), file=summary)
    if args.out is not None:
        print(f"saved {args.out}", file=summary)
    if args.json:
        print(json.dumps(metrics))
    return 0
