"""``cumgain curves``: averaged CG/DCG/nCG/nDCG curves, their readings, plots.

Prints, per measure, a table with one row per run and reading rank k: the run's
averaged value and the ideal's at k, the gap between them (points and share of the
ideal), and for CG/DCG the horizontal reading (the rank at which the run reaches
the ideal's value at k); for nCG/nDCG the area between the ideal and each curve;
and the stopping rule; ``-f`` gives them as one table in any output format. ``--plot``
also draws the curves (PNG, SVG or PDF; needs matplotlib).
See :mod:`cumgain.curves` for the definitions.
"""
from __future__ import annotations

import argparse
import math
from typing import Optional, Sequence

from cumgain.cli import options
from cumgain.common.progress import progress_bar
from cumgain.cli.base import EXIT_INPUT, EXIT_NO_TOPICS, EXIT_USAGE, Failure, positive_int, \
    refuse_existing, topic_notes, write_output

HELP = "averaged CG/DCG/nCG/nDCG curves, their readings, plots"
DESCRIPTION = """\
Averaged gain-by-rank curves (CG, DCG, nCG, nDCG; Jarvelin & Kekalainen 2002,
Figures 1-4) of one or more runs against one qrels, with the ideal curve, and the
readings the paper takes from them: the value and the gap to the ideal at chosen
ranks, the horizontal reading (the rank at which a run reaches what the ideal gains
by rank k), the area between the normalised ideal and each normalised curve, and
the stopping rule (the rank where the averaged ideal curve turns horizontal).
--plot draws the curves as PNG, SVG or PDF (needs matplotlib); --measure all draws
the four measures in a 2 x 2 grid. Each run has its own colour, line style and
marker, the legend lies beside the plot, and --highlight or --top draws chosen runs
thick and the others faded. The discount is trec_eval's by default, as in
`cumgain evaluate`; the paper's figures use --discount tois (b = 2). Runs are named
by their run tag where all its lines agree, else by file name (made unique). Files
are written whole or not at all, and an existing file is replaced only with
--overwrite."""

DEFAULT_READING_RANKS = (10, 20, 50, 100)


def _ranks(text: str) -> tuple:
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of ranks")
    return tuple(positive_int(part) for part in parts)


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
    from cumgain.curves import DEFAULT_DEPTH
    from cumgain.vectors import AVERAGING_ORDERS

    options.add_inputs(parser)
    parser.add_argument("-m", "--measure", dest="measures", action="append", type=_curve_kind,
                        metavar="MEASURE",
                        help="the curve: CG, DCG, nCG, nDCG (default) or all (the four in a "
                             "2 x 2 grid); repeatable")
    options.add_gains(parser, "default: identity; several give one set of curves per scheme")
    options.add_relevance(parser, depth_default=DEFAULT_DEPTH, level=False,
                          depth_help=f"the last rank of the curves (default {DEFAULT_DEPTH}); "
                                     "documents below it are left out, as trec_eval -M")
    parser.add_argument("--order", choices=AVERAGING_ORDERS, default=AVERAGING_ORDERS[0],
                        help="averaging order of nCG/nDCG (default normalise_then_average; "
                             "the paper's figures: average_then_normalise)")
    parser.add_argument("--at", type=_ranks, metavar="K,K,...",
                        help="ranks of the readings (default: those of "
                             + ",".join(map(str, DEFAULT_READING_RANKS))
                             + " within the depth)")
    parser.add_argument("--area-to", type=positive_int, metavar="K",
                        help="last rank of the area to the ideal (default: the depth)")
    parser.add_argument("--plot", metavar="FILE",
                        help="draw the curves to FILE (.png, .svg or .pdf; needs matplotlib)")
    parser.add_argument("--size", type=_size, metavar="W,H",
                        help="figure size in inches (default 6.4,4.8; 11,8.5 for a grid)")
    parser.add_argument("--dpi", type=_positive_float, default=100.0,
                        help="resolution of a PNG (default 100)")
    parser.add_argument("--highlight", action="append", default=[], metavar="RUN",
                        help="on the plot, draw run RUN (named as in the table) thick and the "
                             "others thin and faded; repeatable")
    parser.add_argument("--top", type=positive_int, metavar="N",
                        help="on the plot, highlight the N runs whose curves end highest (the "
                             "value at the last rank, --depth; with several curves, of the "
                             "nDCG curve if drawn, else the first; equal values: the first "
                             "given); with --highlight, those too")
    options.add_topics(parser, command="curves")
    options.add_ranking(parser, command="curves")
    options.add_output(parser)
    options.add_progress(parser)
    parser.set_defaults(handler=run_curves)


def _curve_kind(text: str) -> str:
    """A curve's measure name in any case (``ndcg`` -> ``nDCG``), or ``all``."""
    from cumgain.curves import MEASURES
    canonical = {measure.lower(): measure for measure in MEASURES}
    canonical["all"] = "all"
    if text.lower() not in canonical:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a curve: choose from {', '.join(MEASURES)} or all")
    return canonical[text.lower()]


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
    from cumgain.common.optional import require
    from cumgain.engine.evaluator import rank
    from cumgain.exceptions import InputError
    from cumgain.gains import gain_mapping
    from cumgain.trec_io import prepare_qrels
    from cumgain.io.run_names import run_names
    from cumgain.vectors import discount_divisors

    kinds = list(dict.fromkeys(args.measures or ["nDCG"]))
    measures = list(curves_module.MEASURES) if "all" in kinds else kinds
    schemes = list(dict.fromkeys(args.gains or ["identity"]))
    discount = options.discount(args) or "trec_eval"
    base = 2.0 if args.base is None else args.base
    topics = options.topic_policy(args)
    options.check_inputs(args, distinct_runs=True)
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
    if len(set(args.runs)) != len(args.runs):
        twice = next(path for path in args.runs if args.runs.count(path) > 1)
        raise Failure(EXIT_USAGE, f"run {twice} is given twice")
    try:
        for scheme in schemes:
            gain_mapping(scheme)
        discount_divisors(discount, base, 1)
        if args.plot is not None:
            from cumgain.plot import output_format
            output_format(args.plot)
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None
    if args.output is not None:
        options.refuse_output(args)
    if (args.highlight or args.top is not None) and args.plot is None:
        raise Failure(EXIT_USAGE, "--highlight and --top mark runs on the plot: add --plot FILE")
    if args.plot is not None:
        refuse_existing(args.plot, args.overwrite)
        require("matplotlib", extra="plot", for_what="--plot")  # before the work, not after

    qrels = prepare_qrels(args.qrels)
    ranked = []
    with progress_bar(len(args.runs), args.prog, options.show_progress(args)) as progress:
        for path in args.runs:
            ranked.append(rank(qrels, path, topics=topics, ties=args.ties, depth=depth,
                               seed=args.seed, score_precision=args.score_precision,
                               warn=False))
            progress.update()
    names = run_names(args.runs, ranked)
    if curves_module.IDEAL in names:
        raise Failure(EXIT_USAGE, f"a run cannot be named {curves_module.IDEAL!r} (the ideal "
                                  "curve's name); rename its file or its run tag")
    try:
        from cumgain.plot import check_highlight
        check_highlight(names, args.highlight)
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None
    rankings = dict(zip(names, ranked))
    if not any(ranking.topics for ranking in ranked):
        raise Failure(EXIT_NO_TOPICS, "no topic has both results and judgments; nothing to plot")
    for name, ranking in rankings.items():
        for text in topic_notes(name, ranking, topics):
            options.note(args, text)
    rankings = _on_one_topic_set(args, rankings)
    if not next(iter(rankings.values())).topics:
        raise Failure(EXIT_NO_TOPICS, "the runs have no topic in common; nothing to plot")
    computed = {}
    for scheme in schemes:
        for measure in measures:
            key = measure if len(schemes) == 1 else f"{measure}, gains {scheme}"
            computed[key] = curves_module.from_rankings(
                rankings, measure, depth=depth, gains=scheme, discount=discount, base=base,
                order=args.order)
    if args.format == "table":
        sections = [readings_text(curves, ranks, args.area_to) for curves in computed.values()]
        text = "\n".join(sections) + "\n" + stopping_text(next(iter(computed.values())))
    else:
        text = readings_table(computed, ranks, args.area_to, args.format)
    if args.plot is not None:
        from cumgain import plot
        highlight = list(args.highlight)
        if args.top is not None:        # by the one curve, or by nDCG (else the first)
            first = "nDCG" if "nDCG" in measures else measures[0]
            ranked_by = next(c for c in computed.values() if c.measure == first)
            highlight = list(dict.fromkeys(highlight + plot.best_runs(ranked_by, args.top)))
        if len(computed) == 1:
            plot.plot_curves(next(iter(computed.values())), args.plot, overwrite=args.overwrite,
                             size=args.size or plot.FIGURE_SIZE, dpi=args.dpi,
                             highlight=highlight)
        else:
            plot.plot_grid(computed, args.plot, overwrite=args.overwrite,
                           size=args.size or plot.GRID_SIZE, dpi=args.dpi, highlight=highlight)
        options.note(args, f"wrote {args.plot}")
    write_output(text, args.output, args.overwrite)
    return 0


def _on_one_topic_set(args: argparse.Namespace, rankings: dict) -> dict:
    """The rankings on one topic set (the curves share one ideal curve): the topics every
    run has with --intersect, else an error when the runs' topics differ."""
    common = set.intersection(*(set(ranking.topics) for ranking in rankings.values()))
    if args.intersect:
        return {name: ranking.on_topics(sorted(common)) for name, ranking in rankings.items()}
    if any(len(ranking.topics) != len(common) for ranking in rankings.values()):
        counts = ", ".join(f"{name} {len(ranking.topics)}" for name, ranking in rankings.items())
        raise Failure(EXIT_INPUT, f"the runs cover different topics ({counts}; {len(common)} "
                                  "common to all), and the curves share one ideal curve: use "
                                  "--intersect to keep the common topics, or --topics qrels "
                                  "(-c) to score a run's missing topics 0")
    return rankings


def readings_table(computed: dict, ranks: Sequence[int], area_to: Optional[int],
                   fmt: str) -> str:
    """The readings of every set of curves as one table in ``fmt`` (a row per curve set,
    run and rank; the area to the ideal, per run, on each of its rows)."""
    from cumgain.analysis import formats
    from cumgain.curves import area_to_ideal, horizontal_reading, vertical_gaps

    columns = [formats.Column(name, kind) for name, kind in (
        ("curves", "label"), ("run", "label"), ("rank", "count"), ("value", "float"),
        ("ideal", "float"), ("gap", "float"), ("gap_share", "float"), ("reached_at", "count"),
        ("area_to_ideal", "float"))]
    rows = []
    for key, curves in computed.items():
        gaps = vertical_gaps(curves, ranks)
        shares = vertical_gaps(curves, ranks, relative=True)
        reached = {k: horizontal_reading(curves, k) for k in ranks}
        areas = area_to_ideal(curves, area_to or curves.depth) if curves.normalised else {}
        for name, curve in curves.runs.items():
            for j, k in enumerate(ranks):
                rows.append([key, name, k, curve[k - 1], curves.ideal[k - 1], gaps[name][j],
                             shares[name][j], None if curves.normalised else reached[k][name],
                             areas.get(name)])
    first = next(iter(computed.values()))
    notes = [f"{first.scheme}; {len(first.topics)} topics, ranks 1-{first.depth}",
             "reached_at: the first rank at which the run's curve reaches the ideal's value "
             "at that rank (empty: not within the depth, or a normalised curve)",
             f"area_to_ideal: ranks 1-{area_to or first.depth} (normalised curves only)",
             stopping_text(first).strip()]
    return formats.render(columns, rows, fmt, digits=4, notes=notes)
