"""The ``cumgain`` command line. One argument parser per subcommand.

User errors print one line on stderr and exit with status 2; no tracebacks.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

import numpy as np

from cumgain.exceptions import CumgainError

# The worked example of Jarvelin & Kekalainen (2002), section 2.
PAPER_LEVELS = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
PAPER_RECALL_BASE = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]

# A small batch of three topics (relevance levels 0-3, run order) and their recall bases.
DEMO_RUN = [
    [3, 0, 2, 1, 0, 0, 3, 1, 0, 0],
    [0, 1, 0, 0, 2, 0, 0, 0, 1, 0],
    [2, 2, 1, 0, 1, 0, 0, 0, 0, 0],
]
DEMO_RECALL_BASE = [
    [3, 3, 2, 1, 1, 0, 0],
    [2, 1, 1, 1, 0],
    [2, 2, 1, 1, 0, 0],
]


def _format_vector(vector: np.ndarray) -> str:
    return " ".join(f"{value:6.2f}" for value in vector)


def run_demo(out=None) -> None:
    """Print the paper's worked example and a small batch under several gain schemes."""
    import cumgain

    out = sys.stdout if out is None else out
    print("cumgain demo: cumulated-gain vectors (Jarvelin & Kekalainen 2002, section 2)", file=out)
    print(f"\nG'  = {PAPER_LEVELS}  (gain = relevance level 0-3)", file=out)
    rows = [
        ("CG'", cumgain.cg(PAPER_LEVELS)),
        ("DCG' (b=2)", cumgain.dcg(PAPER_LEVELS, base=2)),
        ("CG_I'", cumgain.cg(cumgain.ideal_gains(PAPER_RECALL_BASE, depth=10))),
        ("DCG_I' (b=2)", cumgain.dcg(cumgain.ideal_gains(PAPER_RECALL_BASE, depth=10))),
        ("nCG'", cumgain.ncg(PAPER_LEVELS, PAPER_RECALL_BASE)),
        ("nDCG' (b=2)", cumgain.ndcg(PAPER_LEVELS, PAPER_RECALL_BASE)),
    ]
    print(f"{'rank':<14}" + " ".join(f"{rank:6d}" for rank in range(1, 11)), file=out)
    for name, vector in rows:
        print(f"{name:<14}{_format_vector(vector)}", file=out)

    print("\nA batch of 3 topics, averaged vectors (normalise each topic, then average):", file=out)
    print(f"{'rank':<28}" + " ".join(f"{rank:6d}" for rank in range(1, 11)), file=out)
    for scheme in ("0-1-1-1", "0-1-2-3", "0-1-10-100", "0-0-0-1"):
        for name, function in (("nCG", cumgain.ncg), ("nDCG", cumgain.ndcg)):
            vectors = function(DEMO_RUN, DEMO_RECALL_BASE, 10, mapping=scheme)
            label = f"{name} {scheme}"
            print(f"{label:<28}{_format_vector(cumgain.avg_vect(vectors))}", file=out)
    ndcg10 = cumgain.ndcg_at(DEMO_RUN, DEMO_RECALL_BASE, 10, mapping="0-1-10-100")
    print("\nnDCG@10 per topic (0-1-10-100, b=2): "
          + ", ".join(f"{value:.4f}" for value in ndcg10), file=out)
    print(f"avg-pos(nDCG, 10) per topic: "
          + ", ".join(f"{value:.4f}" for value in cumgain.avg_pos(
              cumgain.ndcg(DEMO_RUN, DEMO_RECALL_BASE, 10, mapping="0-1-10-100"), 10)), file=out)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cumgain",
        description="Graded-relevance IR evaluation: cumulated gain and friends.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    demo = commands.add_parser("demo", help="print CG/DCG/nCG/nDCG vectors for a built-in example")
    demo.set_defaults(handler=lambda args: run_demo())
    return parser


def _version() -> str:
    from cumgain import __version__
    return f"cumgain {__version__}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        args.handler(args)
    except CumgainError as error:
        print(f"cumgain: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
