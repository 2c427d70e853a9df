"""``cumgain compare``: significance tests and the paper's Table 2 for a set of runs.

Evaluates every run on every measure x gain scheme, compares the runs topic by topic
(:func:`cumgain.stats.compare`) and prints a report (:mod:`cumgain.report`): the paper's
Table 2 (means, each with the keys of the runs it beats, ``*`` p < 0.05, ``**`` p < 0.01), the
baseline layout with ``--baseline``, or every pair's numbers with ``--pairs``.

Without ``-m``, the defaults follow the paper's Table 2 (J&K 2002, section 3.6): avg-pos of
the nCG and nDCG vectors (TOIS discount, b = 2) up to rank 200, under three gain schemes
(measures named with ``-m`` are computed as named; other schemes only with ``-g``), tested
with Friedman's test (Conover's pairs, Holm's correction). The gain schemes adapt to the
qrels' highest level L: binary (0 then L ones), ratio (0-1-10-...-10^(L-1)) and
highest level only (L zeros then 1); for graded 0-3 qrels these are the paper's
0-1-1-1, 0-1-10-100 and 0-0-0-1. Qrels with non-integer levels get the identity gain.
Runs are named by :func:`cumgain.io.run_names.run_names` (the run tag where all its lines
agree, else the file name, made unique).
"""
from __future__ import annotations

import argparse
from typing import Optional, Sequence

import numpy as np

from cumgain.cli import options
from cumgain.cli.base import EXIT_INPUT, EXIT_NO_TOPICS, EXIT_USAGE, Failure, topic_notes, \
    write_output

HELP = "significance tests and the paper's Table 2 for a set of runs"
DESCRIPTION = """\
Compare runs topic by topic and print the paper's Table 2: one row per measure x
gain scheme, the runs' means over topics, each mean followed by the keys of the runs it
is significantly better than ('0.532 bc** d*': better than b and c at p < 0.01 and than
d at p < 0.05, after correction; the legend names the keys). A table too wide for 120
columns turns (a row per run). CSV, TSV and JSON give the pairs in words; --pairs every
pair's numbers.

Without -m, the defaults follow the paper: avg-pos up to rank 200 of the nCG and nDCG
vectors (TOIS discount, b = 2), the gain schemes binary, ratio and highest-level-only
adapted to the qrels' top level L (0-1-1-1, 0-1-10-100, 0-0-0-1 for levels 0-3).
Measures named with -m are computed as named (as `cumgain evaluate` does), under other
gain schemes only with -g. Friedman's test with Conover's pairs and Holm's
correction. Runs are named by their run tag where all its lines agree, else by file
name (made unique). Topics left out are listed on stderr; --progress shows the
randomization test's and the bootstrap's progress."""

EPILOG = """\
examples:
  cumgain compare qrels.txt runA runB runC
  cumgain compare qrels.txt run* --test anova --format latex
  cumgain compare qrels.txt base.run new.run --baseline base --test randomization
  cumgain compare qrels.txt run* -m nDCG@10 -m AP --test wilcoxon --pairs --format csv

tests: friedman (omnibus; pairs by --posthoc conover|nemenyi), anova (repeated
measures; pairs by Tukey's HSD), ttest, wilcoxon, randomization (pairs only).
A pair after an omnibus test is marked only if the omnibus test is significant
at the same level."""

DEFAULT_MEASURES = ("avg_pos_nCG@200", "avg_pos_nDCG@200(discount=tois, base=2)")


def paper_gain_schemes(levels: np.ndarray) -> list:
    """The paper's three gain schemes for qrels whose highest level is L: binary
    ``0-1-...-1``, ratio ``0-1-10-...-10^(L-1)``, highest only ``0-...-0-1`` (duplicates
    dropped); ``["identity"]`` when a judged level >= 0 is not an integer.

    >>> paper_gain_schemes(np.array([0, 1, 2, 3]))
    ['0-1-1-1', '0-1-10-100', '0-0-0-1']
    >>> paper_gain_schemes(np.array([0, 2, 1, -1]))
    ['0-1-1', '0-1-10', '0-0-1']
    """
    judged = np.asarray(levels, dtype=np.float64)
    judged = judged[judged >= 0]
    top = judged.max(initial=0.0)
    if np.any(judged != np.round(judged)) or top < 1:
        return ["identity"]
    top = int(top)
    schemes = ["-".join(["0"] + ["1"] * top),
               "-".join(["0"] + [str(10 ** i) for i in range(top)]),
               "-".join(["0"] * top + ["1"])]
    return list(dict.fromkeys(schemes))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from cumgain.stats import CORRECTIONS, TESTS, ZERO_METHODS

    parser.epilog = EPILOG
    options.add_inputs(parser, "run files (at least two)")
    options.add_measures(parser, DEFAULT_MEASURES)
    options.add_gains(parser, "default: the measures as named with -m, as `cumgain evaluate` "
                              "computes them; without -m, the paper's three schemes for the "
                              "qrels' levels")
    parser.add_argument("--test", choices=TESTS, default="friedman",
                        help="friedman (default), anova, ttest, wilcoxon or randomization")
    parser.add_argument("--posthoc", choices=("conover", "nemenyi"),
                        help="pairs after --test friedman: conover (default) or nemenyi")
    parser.add_argument("--correction", choices=CORRECTIONS, default="holm",
                        help="multiple-comparison correction of the pairs (default holm; "
                             "bh = Benjamini-Hochberg)")
    parser.add_argument("--baseline", metavar="RUN",
                        help="compare every run with this one (a run name or file as given) "
                             "and print the baseline layout with superscript markers")
    parser.add_argument("--pairs", action="store_true",
                        help="print every pair's numbers (statistic, p, corrected p, means, "
                             "relative difference, practical significance) instead")
    parser.add_argument("--digits", type=int, default=3, metavar="N",
                        help="decimals of the means in the text formats (default 3, as the "
                             "paper)")
    parser.add_argument("--permutations", type=int, default=10_000, metavar="N",
                        help="resamples of the randomization test (default 10000)")
    parser.add_argument("--zero-method", choices=ZERO_METHODS, default="wilcox",
                        help="Wilcoxon's handling of zero differences (scipy's zero_method)")
    options.add_relevance(parser)
    options.add_topics(parser, command="compare")
    options.add_ranking(parser, command="compare")
    options.add_output(parser, default_format="markdown")
    options.add_progress(parser)
    parser.set_defaults(handler=run_compare)


def _row_spellings(measures: Sequence[str], gains: Sequence[str], discount: Optional[str],
                   base: Optional[float], explicit: bool) -> list:
    """One spelling per gain scheme (outer) and measure (inner), as the paper's Table 2
    orders its rows; measures the schemes do not apply to appear once."""
    from cumgain.exceptions import InputError

    spellings, applied = [], False
    for scheme in gains:
        for measure in measures:
            variants, applies = options.with_gain_options(measure, [scheme], discount, base)
            spellings.extend(variants)
            applied = applied or applies
    if explicit and not applied:
        raise InputError(f"--gains applies to none of the measures ({', '.join(measures)}); "
                         "use a graded measure such as nDCG@10")
    return list(dict.fromkeys(spellings))


def run_compare(args: argparse.Namespace) -> int:
    """``cumgain compare``: evaluate, compare, print one report."""
    from cumgain import report, stats
    from cumgain.engine.evaluator import evaluate
    from cumgain.exceptions import InputError
    from cumgain.gains import gain_mapping
    from cumgain.measures import parse_measures
    from cumgain.trec_io import prepare_qrels
    from cumgain.io.run_names import run_names

    if len(args.runs) < 2:
        raise Failure(EXIT_USAGE, "give at least two runs to compare")
    if args.posthoc and args.test != "friedman":
        pairs = "Tukey's HSD" if args.test == "anova" else "no post-hoc step"
        raise Failure(EXIT_USAGE, f"--posthoc goes with --test friedman (--test {args.test} "
                                  f"has {pairs})")
    options.check_inputs(args, distinct_runs=True)
    topic_policy = options.topic_policy(args)
    if args.output is not None:
        options.refuse_output(args)
    if args.permutations < 1:
        raise Failure(EXIT_USAGE, f"--permutations must be at least 1, got {args.permutations}")
    if not 0 <= args.digits <= 17:
        raise Failure(EXIT_USAGE, f"--digits must be from 0 to 17, got {args.digits}")
    measures = list(args.measures or DEFAULT_MEASURES)
    try:
        parse_measures(measures)
        for scheme in args.gains or ():
            gain_mapping(scheme)
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None

    discount = options.discount(args)
    qrels = prepare_qrels(args.qrels)
    try:
        if args.gains:                  # the schemes asked for, one row per scheme
            spellings = _row_spellings(measures, list(args.gains), discount, args.base,
                                       explicit=True)
        elif args.measures:             # the measures as named, as `cumgain evaluate`
            spellings = options.measure_spellings(args, DEFAULT_MEASURES)
        else:                           # the paper's Table 2
            spellings = _row_spellings(measures, paper_gain_schemes(qrels.relevance),
                                       discount, args.base, explicit=False)
        # rows are labelled by the canonical measure names (the spelling without spaces,
        # as the columns of `cumgain evaluate`); "P.5,10" gives two rows
        row_names = list(dict.fromkeys(m.name for m in parse_measures(spellings)))
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None

    results = []
    for path in args.runs:
        label = options.input_label(path)
        result = evaluate(qrels, path, spellings, topics=topic_policy,
                          relevance_level=args.relevance_level, judged_only=args.judged_only,
                          depth=args.depth, ties=args.ties, seed=args.seed,
                          score_precision=args.score_precision, warn=False)
        if not result.topics:
            raise Failure(EXIT_NO_TOPICS, f"{label}: no topic of the run is in "
                                          f"{qrels.source}; nothing to compare")
        results.append(result)
    names = run_names(args.runs, results)
    for name, result in zip(names, results):
        for text in topic_notes(name, result, topic_policy):
            options.note(args, text)
    evaluations = {name: (path, result) for name, path, result in zip(names, args.runs, results)}

    baseline = None
    if args.baseline is not None:
        matches = [name for name, (path, _) in evaluations.items()
                   if args.baseline in (name, path)]
        if not matches:
            raise Failure(EXIT_USAGE, f"--baseline {args.baseline!r} is none of the runs "
                                      f"({', '.join(evaluations)})")
        baseline = matches[0]

    results = {name: result for name, (_, result) in evaluations.items()}
    covered = {name: set(result.topics) for name, result in results.items()}
    common = set.intersection(*covered.values())
    if not args.intersect and any(len(topics) != len(common) for topics in covered.values()):
        counts = ", ".join(f"{name} {len(topics)}" for name, topics in covered.items())
        raise Failure(EXIT_INPUT, f"the runs cover different topics ({counts}; {len(common)} "
                                  "common to all): use --intersect to compare on the common "
                                  "topics, or -c to score a run's missing topics 0")
    rows = []
    for name in row_names:
        rows.append((name, stats.compare(
            results, name, test=args.test, posthoc=args.posthoc,
            correction=args.correction, baseline=baseline,
            topics="intersect" if args.intersect else "strict",
            zero_method=args.zero_method, n_permutations=args.permutations, seed=args.seed,
            progress=options.show_progress(args))))
    if args.pairs:
        table = report.pairwise_table(rows, digits=max(args.digits, 4))
    elif baseline is not None:
        table = report.baseline_table(rows, baseline, digits=args.digits)
    else:
        table = report.significance_table(rows, digits=args.digits)
    write_output(render(table, args.format), args.output, args.overwrite)
    return 0


def render(table, fmt: str) -> str:
    """A report in any output format: ``table`` (aligned text), markdown and LaTeX as the
    report writes them (runs as keys, marks after the means, a legend below); CSV, TSV,
    JSON and JSON lines from its records (full precision, the significance in words, the
    tests' details as columns)."""
    from cumgain.analysis import formats
    if fmt in ("markdown", "latex", "csv"):
        return table.render("md" if fmt == "markdown" else fmt)
    if fmt == "table":
        return table.to_text()
    header, records = table._records()
    columns = [formats.Column(name, _kind([record[i] for record in records]))
               for i, name in enumerate(header)]
    columns[0] = formats.Column(header[0], "label")
    return formats.render(columns, records, fmt, digits=table.digits, notes=table.notes)


def _kind(values: list) -> str:
    """A records column's kind: count (ints), float (numbers) or text."""
    present = [value for value in values if value is not None]
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "count"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "float"
    return "text"
