"""The ``cumgain`` command line: one module per subcommand, the shared parts below them.

``cumgain trec_eval`` (:mod:`cumgain.cli.trec_eval`)
    A drop-in for trec_eval 10.0 (also installed as the ``cumgain-trec-eval`` console
    script): the same flags, statuses and output byte for byte for every measure
    cumgain supports. ``--trec-eval-version 9`` reproduces 9.0.8 (pytrec_eval).
``cumgain evaluate QRELS RUN...`` (:mod:`cumgain.cli.evaluate`)
    Everyday evaluation: several runs, measures in any supported spelling, gain
    schemes side by side.
``cumgain compare QRELS RUN...`` (:mod:`cumgain.cli.compare`)
    Significance tests and the paper's Table 2 for a set of runs.
``cumgain curves QRELS RUN...`` (:mod:`cumgain.cli.curves`)
    Averaged CG/DCG/nCG/nDCG curves, their readings, and plots.
``cumgain convert RUN OUT`` (:mod:`cumgain.cli.convert`)
    A TREC run file to (topic-partitioned) Parquet.
``cumgain demo`` (:mod:`cumgain.cli.demo`)
    The paper's worked example and a generated test collection.

Each subcommand module has ``HELP``, ``DESCRIPTION`` and ``add_arguments(parser)`` (which
sets ``handler``). The options they share are defined once in :mod:`cumgain.cli.options`;
exit statuses, errors and output in :mod:`cumgain.cli.base`. Modules import downwards only
(this package -> subcommands -> options -> base).
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from cumgain.cli import compare, convert, curves, demo, evaluate, trec_eval
from cumgain.common import startup
from cumgain.cli.base import (EXIT_INPUT, EXIT_INTERRUPTED, EXIT_NO_MEMORY, EXIT_NO_TOPICS,
                              EXIT_STATUS_HELP, EXIT_USAGE, Failure, Parser, SubcommandParser,
                              run, version)

__all__ = ["main", "main_trec_eval", "EXIT_USAGE", "EXIT_INPUT", "EXIT_NO_MEMORY",
           "EXIT_NO_TOPICS", "EXIT_INTERRUPTED", "Failure"]

SUBCOMMANDS = {"trec_eval": trec_eval, "evaluate": evaluate, "compare": compare,
               "curves": curves, "convert": convert, "demo": demo}


def build_parser() -> Parser:
    parser = Parser(prog="cumgain",
                    description="Graded-relevance IR evaluation: cumulated gain and friends.",
                    epilog="'cumgain COMMAND -h' describes each command.\n\n" + EXIT_STATUS_HELP,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"cumgain {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                     parser_class=SubcommandParser)
    commands.required = True
    for name, module in SUBCOMMANDS.items():
        own_help = name == "trec_eval"      # trec_eval's -h, epilog and exit statuses
        sub = commands.add_parser(name, help=module.HELP, description=module.DESCRIPTION,
                                  add_help=not own_help,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(sub)
        sub.set_defaults(prog=f"cumgain {name}")
        if own_help:
            sub.epilog = trec_eval.EPILOG
        else:
            sub.epilog = (sub.epilog + "\n\n" if sub.epilog else "") + EXIT_STATUS_HELP
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``cumgain`` console script."""
    args = build_parser().parse_args(argv)
    startup.release()
    return run(args.handler, args, args.prog)


def main_trec_eval(argv: Optional[Sequence[str]] = None) -> int:
    """The ``cumgain-trec-eval`` console script."""
    prog = "cumgain-trec-eval"
    parser = Parser(prog=prog, description=trec_eval.DESCRIPTION, epilog=trec_eval.EPILOG,
                    add_help=False, formatter_class=argparse.RawDescriptionHelpFormatter)
    trec_eval.add_arguments(parser)
    parser.set_defaults(prog=prog)
    args = parser.parse_args(argv)
    startup.release()
    return run(args.handler, args, args.prog)


if __name__ == "__main__":
    sys.exit(main())
