"""Train the small models notebook 13 loads, with the command line's defaults, and save them.

    python scripts/make_checkpoints.py            # every model (minutes on 2 cores; each run's seconds go to its record)
    python scripts/make_checkpoints.py --only reverse/bahdanau

Writes ``attention_edu/seq2seq/checkpoints/<task>-<attention>.npz`` (each well
under 1 MB) and ``histories.json``: per model the loss and accuracy curves,
seconds per step and the held-out exact match by source length. Every model
uses ``seq2seq.train``'s defaults (those of ``attention-edu train``) and seed 0.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from attention_edu import seq2seq

OUT = Path(__file__).resolve().parents[1] / "attention_edu" / "seq2seq" / "checkpoints"
MODELS = [("reverse", attention) for attention in seq2seq.ATTENTIONS] + [("dates", "bahdanau"),
                                                                          ("dates", "none")]
KEPT = ("task", "attention", "seed", "steps", "batch_size", "seconds", "train_seconds",
        "seconds_per_step", "exact_match", "exact_match_by_length", "loss", "accuracy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="TASK/ATTENTION",
                        help="train only these models (repeatable)")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    index = OUT / "histories.json"
    histories = json.loads(index.read_text()) if index.exists() else {}
    for task, attention in MODELS:
        name = f"{task}-{attention}"
        if args.only and f"{task}/{attention}" not in args.only:
            continue
        model, history = seq2seq.train(task, attention, seed=0, progress=True)
        model.save(OUT / f"{name}.npz")
        histories[name] = {key: history[key] for key in KEPT}
        for curve in ("loss", "accuracy"):  # four decimals are plenty for a plot, and keep the file small
            histories[name][curve] = [round(value, 4) for value in history[curve]]
        histories[name]["machine"] = f"{platform.machine()}, {platform.python_version()}"
        print(f"{name}: exact match {history['exact_match']:.1%} in {history['seconds']:.0f} s")
        index.write_text(json.dumps(histories, indent=1) + "\n")


if __name__ == "__main__":
    main()
