"""Train the small transformers notebook 14 loads, with the command line's defaults, and save them.

    python scripts/make_transformer_checkpoints.py        # three models (a few minutes on 2 cores)
    python scripts/make_transformer_checkpoints.py --only induction --only induction-unmasked

Writes ``attention_edu/transformer/checkpoints/``: ``sort.npz`` and
``induction.npz`` (``attention-edu train``'s defaults, seed 0),
``induction-unmasked.npz`` (the same, trained without the causal mask) and
``histories.json``: per model the weight decay, the loss and accuracy curves, the training
seconds, the held-out exact match and answer accuracy, and the head scores
(held-out seed 1). Each file is well under 1 MB (float32).
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from attention_edu import transformer

OUT = Path(__file__).resolve().parents[1] / "attention_edu" / "transformer" / "checkpoints"
MODELS = {"sort": ("sort", True), "induction": ("induction", True), "induction-unmasked": ("induction", False)}
KEPT = ("task", "seed", "steps", "batch_size", "config", "weight_decay", "train_seconds", "exact_match",
        "answer_accuracy", "loss", "accuracy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=MODELS, help="train only these (repeatable)")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    index = OUT / "histories.json"
    histories = json.loads(index.read_text()) if index.exists() else {}
    for name, (task, causal) in MODELS.items():
        if args.only and name not in args.only:
            continue
        model, history = transformer.train(task, seed=0, causal=causal, progress=True)
        model.save(OUT / f"{name}.npz")
        kept = {key: history[key] for key in KEPT}
        kept["head_scores"] = transformer.head_scores(model, task, seed=1)
        kept["machine"] = f"{platform.machine()}, {platform.python_version()}"
        histories[name] = kept
        print(f"{name}: exact match {history['exact_match']:.3f}, answer accuracy "
              f"{history['answer_accuracy']:.3f}, {history['train_seconds']:.0f} s")
    index.write_text(json.dumps(histories, indent=1) + "\n")


if __name__ == "__main__":
    main()
