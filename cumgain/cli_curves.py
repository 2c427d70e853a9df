"""``cumgain curves``: averaged CG/DCG/nCG/nDCG curves, their readings, plots.

Prints, per measure, a table with one row per run and reading rank k: the run's
averaged value and the ideal's at k, the gap between them (points and share of the
ideal), and for CG/DCG the horizontal reading (the rank at which the run reaches
the ideal's value at k); for nCG/nDCG the area between the ideal and each curve;
and the stopping rule. ``--out`` also draws the curves (PNG, SVG or PDF; needs matplotlib).
See :mod:`cumgain.curves` for the definitions.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Optional, Sequence

HELP = "averaged CG/DCG/nCG/nDCG curves, their readings, plots"
DESCRIPTION = """\
Averaged gain-by-rank curves (CG, DCG, nCG, nDCG; Jarvelin & Kekalainen 2002,
Figures 1-4) of one or more runs against one qrels, with the ideal curve, and the
readings the paper takes from them: the value and the gap to the ideal at chosen
ranks, the horizontal reading (the rank at which a run reaches what the ideal gains
by rank k), the area between the normalised ideal and each normalised curve, and
the stopping rule (the rank where the averaged ideal curve turns horizontal).
--out writes the curves as PNG, SVG or PDF (needs matplotlib); --measure all draws
the four measures in a 2 x 2 grid. The file is written whole or not at all, and an
existing file is replaced only with --overwrite."""

MEASURE_CHOICES = ("cg", "dcg", "ncg", "ndcg", "all")
DEFAULT_READING_RANKS = (10, 20, 50, 100)


def _ranks(text: str) -> tuple:
    from cumgain.cli import _positive_int
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of ranks")
    return tuple(_positive_int(part) for part in parts)


def _size(text: str) -> tuple:
    parts = text.replace("x", ",").split(",")
    try:
        width, height = (float(part) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTH,HEIGHT in inches") from None
    if not all(math.isfinite(v) and v > 0 for v in (width, height)):
        raise argparse.ArgumentTypeError(f"{text!r}: width and height must be positive")
    return width, height


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from cumgain.cli import _positive_int
    from cumgain.curves import DEFAULT_DEPTH
    from cumgain.evaluator import SCORE_PRECISIONS, TIE_RULES, TOPIC_POLICIES
    from cumgain.vectors import AVERAGING_ORDERS, DISCOUNT_RULES

    parser.add_argument("qrels", help="the qrels file")
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run files")
    parser.add_argument("-m", "--measure", type=str.lower, choices=MEASURE_CHOICES,
                        default="ndcg", help="the curve: cg, dcg, ncg, ndcg (default) or all")
    parser.add_argument("-g", "--gains", default="identity", metavar="SCHEME",
                        help="gain mapping: identity (default: gain = level), exponential, "
                             "or levels' gains like 0-1-10-100")
    parser.add_argument("--discount", choices=sorted(DISCOUNT_RULES), default="tois",
                        help="DCG discount (default tois: the paper's rule)")
    parser.add_argument("--base", type=float, default=2.0, metavar="B",
                        help="logarithm base of the tois and note discounts (default 2)")
    parser.add_argument("-n", "--depth", type=_positive_int, default=DEFAULT_DEPTH, metavar="N",
                        help=f"the last rank of the curves (default {DEFAULT_DEPTH})")
    parser.add_argument("--order", choices=AVERAGING_ORDERS, default=AVERAGING_ORDERS[0],
                        help="averaging order of nCG/nDCG (default normalise_then_average; "
                             "the paper's figures: average_then_normalise)")
    parser.add_argument("--at", type=_ranks, metavar="K,K,...",
                        help="ranks of the readings (default: those of "
                             + ",".join(map(str, DEFAULT_READING_RANKS))
                             + " within the depth)")
    parser.add_argument("--area-to", type=_positive_int, metavar="K",
                        help="last rank of the area to the ideal (default: the depth)")
    parser.add_argument("-o", "--out", metavar="FILE",
                        help="write the curves to FILE (.png, .svg or .pdf; needs matplotlib)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace FILE if it exists (a link there is replaced, not followed)")
    parser.add_argument("--size", type=_size, metavar="W,H",
                        help="figure size in inches (default 6.4,4.8; 11,8.5 for all)")
    parser.add_argument("--dpi", type=_positive_float, default=100.0,
                        help="resolution of a PNG (default 100)")
    parser.add_argument("--topics", choices=TOPIC_POLICIES, default="both",
                        help="both (default: topics in run and qrels; every run must have the "
                             "same), qrels (every qrels topic, missing ones score 0) or strict")
    parser.add_argument("--ties", choices=TIE_RULES, default="docno_desc",
                        help="order of equal scores (default: trec_eval's docno_desc)")
    parser.add_argument("--seed", type=int, help="seed for --ties random")
    parser.add_argument("--score-precision", choices=SCORE_PRECISIONS, default="float64",
                        help="float64 (trec_eval 10) or float32 (trec_eval 9, pytrec_eval)")
    parser.set_defaults(handler=run_curves)


def _run_names(paths: Sequence[str]) -> list:
    """Each run's label: its file name, or the path as given when file names collide."""
    from cumgain.cli import EXIT_USAGE, Failure

    if len(set(paths)) != len(paths):
        twice = next(path for path in paths if paths.count(path) > 1)
        raise Failure(EXIT_USAGE, f"run {twice} is given twice")
    names = ["<stdin>" if path == "-" else os.path.basename(path) or path for path in paths]
    if len(set(names)) != len(names):
        names = ["<stdin>" if path == "-" else path for path in paths]
    return names


def _format_value(value: float, normalised: bool) -> str:
    return f"{value:.4f}" if normalised else f"{value:.2f}"


def _aligned(rows: list, right: Sequence[bool]) -> list:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if r else cell.ljust(w)
                      for cell, w, r in zip(row, widths, right)).rstrip() for row in rows]


def readings_text(curves, ranks: Sequence[int], area_to: Optional[int] = None) -> str:
    """The readings of one measure's curves as a text table (see the module docstring)."""
    from cumgain.curves import area_to_ideal, horizontal_reading, vertical_gaps

    n = curves.depth
    normalised = curves.normalised
    scheme = curves.scheme
    if curves.order is not None:
        scheme += f", {curves.order}"
    lines = [f"{curves.measure} curves: {len(curves.runs)} run{'s' * (len(curves.runs) != 1)}, "
             f"{len(curves.topics)} topics, ranks 1-{n}; {scheme}", ""]
    gaps = vertical_gaps(curves, ranks)
    shares = vertical_gaps(curves, ranks, relative=True)
    reached = {k: horizontal_reading(curves, k) for k in ranks}
    rows = [["run", "rank", "value", "ideal", "gap", "gap %"]
            + ([] if normalised else ["reached at"])]
    for name, curve in curves.runs.items():
        for j, k in enumerate(ranks):
            share = shares[name][j]
            reach = reached[k][name]
            rows.append([name, str(k), _format_value(curve[k - 1], normalised),
                         _format_value(curves.ideal[k - 1], normalised),
                         _format_value(gaps[name][j], normalised),
                         "-" if math.isnan(share) else f"{100 * share:.1f}%"]
                        + ([] if normalised else ["-" if reach is None else str(reach)]))
    lines += _aligned(rows, [False] + [True] * (len(rows[0]) - 1))
    if not normalised:
        lines.append(f"(reached at: the first rank at which the run's curve reaches the ideal's "
                     f"value at that rank; - = not within {n})")
    if normalised:
        k = area_to or n
        areas = area_to_ideal(curves, k)
        lines.append("")
        rows = [["run", f"area to the ideal, ranks 1-{k}"]]
        rows += [[name, f"{area:.4f}"] for name, area in areas.items()]
        lines += _aligned(rows, [False, True])
    return "\n".join(lines) + "\n"


def stopping_text(curves) -> str:
    """The stopping rule, in words."""
    from cumgain.curves import stopping_rank

    stop = stopping_rank(curves)
    most = int(curves.relevant_counts.max(initial=0))
    if stop == 0:
        return ("stopping rule: no topic has a judged document with gain > 0; the ideal curve "
                "is flat from rank 1\n")
    if most > curves.depth:
        return (f"stopping rule: the averaged ideal curve still rises at rank {curves.depth} "
                f"(a topic has {most} judged documents with gain > 0)\n")
    return (f"stopping rule: the averaged ideal curve turns horizontal at rank {stop} (the "
            "largest number of judged documents with gain > 0 in one topic); nothing more can "
            "be gained past it\n")


def run_curves(args: argparse.Namespace) -> int:
    """``cumgain curves``: compute the curves, print the readings, plot on request."""
    from cumgain import curves as curves_module
    from cumgain._optional import require
    from cumgain.cli import (EXIT_NO_TOPICS, EXIT_USAGE, Failure, _topic_notes, _write_text,
                             refuse_existing)
    from cumgain.exceptions import InputError
    from cumgain.gains import gain_mapping
    from cumgain.vectors import discount_divisors

    canonical = {measure.lower(): measure for measure in curves_module.MEASURES}
    measures = list(curves_module.MEASURES) if args.measure == "all" else \
        [canonical[args.measure]]
    if [args.qrels, *args.runs].count("-") > 1:
        raise Failure(EXIT_USAGE, "only one input can be standard input ('-')")
    depth = args.depth
    if args.at is None:
        ranks = tuple(k for k in DEFAULT_READING_RANKS if k <= depth) or (depth,)
    else:
        ranks = args.at
        beyond = [k for k in ranks if k > depth]
        if beyond:
            raise Failure(EXIT_USAGE, f"--at {beyond[0]} is beyond the depth {depth} "
                                      "(raise --depth)")
    if args.area_to is not None and args.area_to > depth:
        raise Failure(EXIT_USAGE, f"--area-to {args.area_to} is beyond the depth {depth}")
    try:
        gain_mapping(args.gains)
        discount_divisors(args.discount, args.base, 1)
        if args.out is not None:
            from cumgain.plot import output_format
            output_format(args.out)
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None
    if args.out is not None:
        refuse_existing(args.out, args.overwrite)
        require("matplotlib", extra="plot", for_what="--out")   # before the work, not after

    names = _run_names(args.runs)
    runs = dict(zip(names, args.runs))
    if any(name == curves_module.IDEAL for name in names):
        raise Failure(EXIT_USAGE, f"a run cannot be labelled {curves_module.IDEAL!r} (the "
                                  "ideal curve's label); rename the file")
    rankings = curves_module.rank_runs(args.qrels, runs, topics=args.topics, ties=args.ties,
                                       score_precision=args.score_precision, seed=args.seed,
                                       warn=False)
    for name, ranking in rankings.items():
        for note in _topic_notes(name, ranking, args.topics):
            print(f"{args.prog}: {note}", file=sys.stderr)
    first = next(iter(rankings.values()))
    if not first.topics:
        raise Failure(EXIT_NO_TOPICS, "no topic has both results and judgments; nothing to plot")
    computed = {measure: curves_module.from_rankings(
        rankings, measure, depth=depth, gains=args.gains, discount=args.discount,
        base=args.base, order=args.order) for measure in measures}

    sections = [readings_text(curves, ranks, args.area_to) for curves in computed.values()]
    text = "\n".join(sections) + "\n" + stopping_text(next(iter(computed.values())))
    if args.out is not None:
        from cumgain import plot
        if len(computed) == 1:
            plot.plot_curves(computed[measures[0]], args.out, overwrite=args.overwrite,
                             size=args.size or plot.FIGURE_SIZE, dpi=args.dpi)
        else:
            plot.plot_grid(computed, args.out, overwrite=args.overwrite,
                           size=args.size or plot.GRID_SIZE, dpi=args.dpi)
        text += f"wrote {args.out}\n"
    _write_text(text)
    return 0
