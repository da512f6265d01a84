"""The transformer's commands: ``train --task sort|induction`` and ``heads FILE.npz "text"``.

    attention-edu train --task sort --seed 0 --out sort.npz --json
    attention-edu heads sort.npz 5031        # the output and every head's weights as text

``train`` with a transformer task is dispatched here by the seq2seq ``train``
command (the task chooses the model); it prints the held-out exact match and
the head scores; with ``--json``, those go to stderr and stdout is one JSON
object alone. ``heads`` warns on stderr, as ``translate`` does, when the text is
not like the sources the model was trained on. Exit 0 on success, 2 on
a usage error (bad text for ``heads``, or a file for ``heads`` that is missing or not a
transformer checkpoint, as ``translate`` does), 1 when a checkpoint cannot be written or
training fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..arguments import written_atomically
from ..seq2seq.translate_command import text_heatmap
from .checkpoint import CheckpointError, load
from .heads import head_scores
from .tasks import LENGTHS
from .training import train

__all__ = ["register", "run", "run_train", "warnings_for"]


def run_train(args: argparse.Namespace) -> int:
    """Carry out ``attention-edu train`` for a transformer task; returns the exit code."""
    try:
        low, high = LENGTHS[args.task]
        model, history = train(args.task, args.seed, steps=args.steps, batch_size=args.batch_size,
                               eval_size=args.eval_per_length * (high - low + 1), progress=not args.quiet)
        scores = head_scores(model, args.task, seed=args.seed + 1)
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
    summary = sys.stderr if args.json else sys.stdout  # with --json, stdout is the JSON alone
    print(f"{args.task} with a transformer ({model.config.layers} layers x {model.config.heads} heads, "
          f"d_model {model.config.d_model}{', MLP' if model.config.mlp else ', attention only'}), seed "
          f"{args.seed}: {history['steps']} steps in {history['seconds']:.1f} s; held-out exact match "
          f"{history['exact_match']:.1%}, answer tokens right {history['answer_accuracy']:.1%}", file=summary)
    print("heads (layer.head): weight on previous token / induction target / source of output; accuracy lost "
          "when ablated", file=summary)
    for s in scores:
        print(f"  {s['layer']}.{s['head']}: {s['previous_token']:.2f} / {s['induction']:.2f} / "
              f"{s['source_of_output']:.2f}; {s['accuracy_drop']:+.1%}", file=summary)
    if args.out is not None:
        print(f"saved {args.out}", file=summary)
    if args.json:
        metrics = {key: history[key] for key in ("task", "seed", "steps", "batch_size", "config", "weight_decay",
                                                 "curriculum", "seconds", "train_seconds", "exact_match", "answer_accuracy")}
        metrics.update(final_loss=history["loss"][-1], head_scores=scores,
                       out=None if args.out is None else str(args.out))
        print(json.dumps(metrics))
    return 0


def warnings_for(task: str, text: str) -> list[str]:
    """Why the output for ``text`` may be a guess: ``task``'s model was trained on other sources.

    >>> warnings_for("induction", "abca")
    ['the induction model was trained on 6 to 12 distinct letters; "abca" has 4, and repeats one, so the output is a guess']
    >>> warnings_for("sort", "5031")
    []
    """
    low, high = LENGTHS[task]
    problems = [] if low <= len(text) <= high else [f"has {len(text)}"]
    if task == "induction" and len(set(text)) < len(text):
        problems.append("repeats one" if len(problems) == 0 else "and repeats one")
    if not problems:
        return []
    kind = "distinct letters" if task == "induction" else "digits"
    told = f'"{text}" ' + ", ".join(problems)
    return [f"the {task} model was trained on {low} to {high} {kind}; {told}, so the output is a guess"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``heads`` subcommand to the ``attention-edu`` parser."""
    p = subparsers.add_parser(
        "heads", help="run a trained transformer on a text and show every head's attention",
        description="Greedy output of a transformer saved by 'attention-edu train --task sort|induction "
                    "--out', with each layer's and head's attention weights as a text heatmap.")
    p.add_argument("checkpoint", type=Path, metavar="FILE.npz", help="a transformer saved by train --out")
    p.add_argument("text", help="the source: digits for sort, distinct letters a-t for induction")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Carry out ``attention-edu heads``; returns the exit code."""
    try:
        model = load(args.checkpoint)
    except CheckpointError as err:
        print(f"attention-edu heads: {err}", file=sys.stderr)
        return 2
    try:
        tokens, weights = model.attend(args.text)
    except ValueError as err:
        print(f"attention-edu heads: {err}", file=sys.stderr)
        return 2
    for warning in warnings_for(model.config.task, args.text):
        print(f"attention-edu heads: warning: {warning}", file=sys.stderr)
    text = "".join(tokens)
    print(text[len(args.text) + 2:])
    for layer in range(weights.shape[0]):
        for head in range(weights.shape[1]):
            print(f"\nlayer {layer}, head {head}: a row per query token, a column per key token")
            print(text_heatmap(weights[layer, head], text, text))
    return 0
