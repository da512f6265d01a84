"""``attention-edu examples``: list, show and export the worked-example catalogue.

    attention-edu examples                  table of id, status, source
    attention-edu examples ID               one example step by step
    attention-edu examples --json [ID]      the catalogue (or one entry) as JSON
    attention-edu examples --errata-md PATH write the errata page
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys

from ..arguments import output_path
from . import catalogue
from .errata import errata_markdown
from .example import STATUSES

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``examples`` subcommand to the ``attention-edu`` parser."""
    p = subparsers.add_parser(
        "examples", help="list, show or export the chapters' worked examples",
        description="The chapters' worked examples, recomputed and checked against the "
                    "printed values.")
    p.add_argument("id", nargs="?", help="show this example step by step (e.g. dot.cat-sat-mat)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--errata-md", metavar="PATH", type=output_path,
                   help="write the errata page (Markdown) to PATH and exit")
    p.set_defaults(run=run)


def _table(examples: tuple[catalogue.Example, ...]) -> str:
    width = max(len(e.id) for e in examples)
    lines = [f"{'id':<{width}}  {'status':<12}  source", "-" * (width + 60)]
    lines += [f"{e.id:<{width}}  {e.status:<12}  {e.source}" for e in examples]
    counts = {s: sum(e.status == s for e in examples) for s in STATUSES}
    lines.append("")
    words = {"erratum": "errata"}  # "7 errata", as the README counts them
    lines.append(", ".join(f"{n} {words.get(s, s)}" for s, n in counts.items()) + f" ({len(examples)} examples)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Carry out ``attention-edu examples``; returns the exit code."""
    if args.errata_md is not None:
        args.errata_md.write_text(errata_markdown(), encoding="utf-8")
        print(f"wrote {args.errata_md}")
        return 0
    if args.id is not None:
        try:
            example = catalogue.get(args.id)
        except KeyError:
            close = difflib.get_close_matches(args.id, catalogue.ids(), n=3, cutoff=0.4)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            print(f"attention-edu examples: no worked example {args.id!r}; {hint}"
                  f"`attention-edu examples` lists all {len(catalogue.ids())}", file=sys.stderr)
            return 2
        print(json.dumps(example.to_dict(), indent=2) if args.json else example.show())
        return 0
    examples = catalogue.entries()
    if args.json:
        print(json.dumps([e.to_dict() for e in examples], indent=2))
    else:
        print(_table(examples))
    return 0
