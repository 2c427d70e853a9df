"""``cumgain evaluate``: several runs against one qrels, one table of means (or of every
topic with ``-q``), in any output format.

Measures in any supported spelling (trec_eval's, ir_measures', ranx's, the paper's);
``-g`` evaluates the graded ones under several gain schemes side by side. Runs are named
by :func:`cumgain.io.run_names.run_names` (the run tag where all its lines agree, else the
file name, made unique).
"""
from __future__ import annotations

import argparse
import os
from typing import Optional, Sequence

import numpy as np

from cumgain.cli import options
from cumgain.cli.base import EXIT_NO_TOPICS, EXIT_USAGE, Failure, topic_notes, write_output
from cumgain.common.progress import progress_bar

HELP = "evaluate runs: any measure, gain schemes side by side, any output format"
DEFAULT_MEASURES = ("nDCG@10", "P@10", "AP", "RR")
LARGE_INPUT_BYTES = 16 << 20   # show progress (on a terminal) from this much input

DESCRIPTION = """\
Evaluate one or more runs against qrels (TREC files, plain or gzipped; '-' is
standard input) and print one row per run, or per topic with -q. Measures may be
spelled as in trec_eval (ndcg_cut.10, P_5, map), ir_measures (nDCG@10, P@5, AP, RR)
or Jarvelin & Kekalainen (CG@10, nDCG@10(discount=tois, base=2)). The diversity
measures (alpha_nDCG@20, ERR_IA@20, ...) read the qrels as subtopic judgments
(qid subtopic docno rel, ndeval's format), the others as ordinary qrels. --gains,
--discount and --base apply to the graded measures (nDCG, DCG, CG, nCG, avg_pos_*,
and trec_eval's ndcg, ndcg_cut, dcg); give --gains several times to get the schemes
side by side. Runs are named by their run tag where all its lines agree, else by
file name (made unique). Topics left out or scored 0 are listed on stderr."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_inputs(parser)
    options.add_measures(parser, DEFAULT_MEASURES)
    options.add_gains(parser, "default: identity")
    parser.add_argument("-q", "--per-topic", action="store_true",
                        help="one row per topic, then the run's 'all' row")
    options.add_relevance(parser)
    options.add_topics(parser)
    options.add_ranking(parser)
    options.add_output(parser)
    options.add_progress(parser)
    parser.set_defaults(handler=run_evaluate)


def _input_bytes(paths: Sequence[str]) -> Optional[int]:
    total = 0
    for path in paths:
        if path == "-":
            return None
        try:
            total += os.path.getsize(path)
        except OSError:
            return None
    return total


def run_evaluate(args: argparse.Namespace) -> int:
    """``cumgain evaluate``: several runs, one table."""
    from cumgain.analysis import tables as report_table
    from cumgain.engine.evaluator import evaluate
    from cumgain.measures import parse_measures
    from cumgain.trec_io import prepare_qrels
    from cumgain.io.run_names import run_names

    topics = options.topic_policy(args)
    options.check_inputs(args)
    if args.output is not None:
        options.refuse_output(args)
    names = options.measure_spellings(args, DEFAULT_MEASURES)
    measures = parse_measures(names)
    size = _input_bytes([args.qrels, *args.runs])
    wanted = options.show_progress(args)     # auto: a terminal, and a large input
    if wanted == "auto" and (size is None or size < LARGE_INPUT_BYTES):
        wanted = False
    progress = progress_bar(1 + len(args.runs), args.prog, wanted)
    # the diversity measures read the qrels file as subtopic judgments, the others as qrels
    diverse = [s for s in names if parse_measures([s])[0].spec.input == "subtopics"]
    plain = [s for s in names if s not in diverse]
    if diverse and plain and args.qrels == "-":
        raise Failure(EXIT_USAGE, "the diversity measures and the others read the qrels "
                                  "twice (as subtopic judgments and as qrels): give a file, "
                                  "not standard input")
    results = []
    try:
        judgments = []
        if plain:
            judgments.append((prepare_qrels(args.qrels), plain))
        if diverse:
            from cumgain.engine.diversity import load_subtopics
            judgments.append((load_subtopics(args.qrels), diverse))
        progress.update()
        for path in args.runs:
            label = options.input_label(path)
            result = _joined([
                evaluate(qrels, path, spelled, relevance_level=args.relevance_level,
                         judged_only=args.judged_only, depth=args.depth, topics=topics,
                         ties=args.ties, seed=args.seed, score_precision=args.score_precision,
                         warn=False)
                for qrels, spelled in judgments])
            progress.update()
            if not result.topics:
                raise Failure(EXIT_NO_TOPICS, f"{label}: no topic of the run is in "
                                              f"{judgments[0][0].source}; nothing to evaluate")
            results.append(result)
    finally:
        progress.close()
    labels = run_names(args.runs, results)
    for label, result in zip(labels, results):
        for text in topic_notes(label, result, topics):
            options.note(args, text)
    if args.intersect:
        results = options.on_common_topics(args, labels, results)
    table = report_table.new_table([m.name for m in measures], [m.kind for m in measures],
                                   args.per_topic)
    for label, result in zip(labels, results):
        report_table.add_result(table, label, result)
    write_output(report_table.render(table, args.format), args.output, args.overwrite)
    return 0


def _joined(results: list):
    """One :class:`Evaluation` of the measures of several (of one run against the same
    qrels file read two ways): the topics of any, in byte order, NaN where a topic is
    not among one's topics; the topic lists of each."""
    if len(results) == 1:
        return results[0]
    from cumgain.engine.results import Evaluation

    topics = tuple(sorted(set().union(*(result.topics for result in results))))
    values, means = {}, {}
    for result in results:
        index = {topic: t for t, topic in enumerate(result.topics)}
        for measure in result.measures:
            column = np.asarray(result.values[measure.name])
            joined = np.full(len(topics), np.nan, dtype=np.float64) \
                if column.dtype != object else np.array([None] * len(topics), dtype=object)
            for t, topic in enumerate(topics):
                if topic in index:
                    joined[t] = column[index[topic]]
            values[measure.name] = joined
            means[measure.name] = result.means[measure.name]

    def union(name):
        return tuple(sorted(set().union(*(getattr(result, name) for result in results))))
    return Evaluation(topics, tuple(m for result in results for m in result.measures),
                      values, means, union("run_only_topics"), union("missing_topics"),
                      union("empty_qrels_topics"), results[0].run_tag, results[0].policies)
