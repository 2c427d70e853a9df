"""``cumgain trec_eval`` (also the ``cumgain-trec-eval`` console script): a drop-in for
NIST trec_eval 10.0, the same options and the same output byte for byte.

Every number comes from :func:`cumgain.evaluate`; the measure selection and the lines
are :mod:`cumgain.analysis.trec_output`'s. ``--trec-eval-version 9`` reproduces trec_eval 9.0.8,
the version inside pytrec_eval. Errors go through :func:`cumgain.cli.base.run`.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys

import numpy as np

from cumgain.cli.base import truncated, truncated_count, version
from cumgain.exceptions import InputError

HELP = "a drop-in for trec_eval 10.0 (same flags, same output)"
DESCRIPTION = """\
A drop-in for NIST trec_eval 10.0: the same options and the same output, byte for
byte, for every measure of trec_eval 10.0 (and any cumgain measure name, such as
nDCG@10(discount=tois) or CG@5). Qrels and run may be gzipped; '-' reads standard
input. -h with -m measures prints what those measures compute."""

EPILOG = """\
Differences from trec_eval 10.0 (see docs/differences.md):
  * a qrels topic missing from the run is skipped with a warning on stderr
    (trec_eval 10.0 stops with a wrong message); -c scores it 0, as trec_eval does;
  * gain tables whose gains are less than 1 apart (ndcg.1=0.5,2=0.9) are sorted
    correctly (trec_eval's comparator truncates the difference to an integer);
  * relevance 1.9 stays 1.9 (trec_eval reads 1); non-numeric values are an error;
  * where trec_eval divides 0 by 0 (iprec_at_recall, 11pt_avg, Rprec_mult for a topic
    left with no document by -J) the value is 0, not nan;
  * -D (debug output) is not offered.
Exit status: 0 ok, 1 usage or measure error, 2 bad input, 7 no common topic."""

TREC_EVAL_VERSIONS = ("10", "9")
QRELS_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


def _truncated_count(text: str) -> int:
    value = truncated(text)
    if not 0 <= value < 2 ** 53:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 0")
    return value


def _refused(what: str):
    def refuse(text: str) -> str:
        raise argparse.ArgumentTypeError(f"{what} is not offered by cumgain")
    return refuse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-h", "--help", dest="help", action="store_true",
                        help="this help; with -m, what those measures compute")
    parser.add_argument("-q", "--query_eval_wanted", dest="per_topic", action="store_true",
                        help="also print the value of every measure for each topic")
    parser.add_argument("-m", "--measure", dest="measures", action="append",
                        metavar="MEASURE[.PARAMS]",
                        help="a measure or nickname (official, all_trec, set, prefs, "
                             "all_prefs, qrels_jg); repeatable; the default is official. "
                             "Parameters: P.5,10 (cut-offs), ndcg.1=3,2=9 (a gain table), "
                             "iprec_at_recall.0.1,0.5, utility.1,-1,0,0, set_F.0.5, rbp.p=0.8")
    parser.add_argument("-c", "--complete_rel_info_wanted", dest="complete",
                        action="store_true",
                        help="average over every qrels topic; topics missing from the run "
                             "score 0 (and print with -q)")
    parser.add_argument("-l", "--level_for_rel", dest="level", type=truncated, default=1,
                        metavar="N", help="relevant means level >= N for the binary "
                                          "measures (default 1; a fraction is truncated, as "
                                          "trec_eval does); gains never change")
    parser.add_argument("-n", "--nosummary", dest="no_summary", action="store_true",
                        help="do not print the summary ('all') lines")
    parser.add_argument("-J", "--Judged_docs_only", dest="judged_only", action="store_true",
                        help="drop unjudged documents from the ranking before evaluating")
    parser.add_argument("-M", "--Max_retrieved_per_topic", dest="depth",
                        type=truncated_count, metavar="N",
                        help="keep only the top N documents per topic (0: none, every "
                             "measure of the ranking 0, as in trec_eval)")
    parser.add_argument("-N", "--Number_docs_in_coll", dest="collection_size",
                        type=_truncated_count, default=0, metavar="N",
                        help="the number of documents in the collection (utility uses it; "
                             "default 0, as in trec_eval)")
    parser.add_argument("-R", "--Rel_info_format", dest="qrels_format", choices=QRELS_FORMATS,
                        default="qrels", help="qrels (default), qrels_jg (qid jg docno rel: "
                                              "judgment groups), prefs (qid jg jsg docno "
                                              "level), qrels_prefs (qrels read as preferences)")
    parser.add_argument("-T", "--Results_format", choices=("trec_results",),
                        default="trec_results", help="only trec_results exists")
    parser.add_argument("-Z", "--Zscore", dest="zscores", metavar="FILE",
                        help="print z-scores against the means and standard deviations in "
                             "FILE (qid measure mean stddev)")
    parser.add_argument("-o", "--Output_old_results_format", dest="old_format",
                        action="store_true", help="obsolete; accepted and ignored, as in "
                                                  "trec_eval")
    parser.add_argument("-D", "--Debug_level", type=_refused("-D (debug output)"),
                        help=argparse.SUPPRESS)
    parser.add_argument("-v", "--version", action="version",
                        version=f"cumgain-trec-eval {version()} (trec_eval 10.0 output)")
    parser.add_argument("--trec-eval-version", choices=TREC_EVAL_VERSIONS, default="10",
                        help="10 (default) or 9: reproduce trec_eval 9.0.8 / pytrec_eval "
                             "(scores ranked as 32-bit floats; iprec_at_recall and 11pt_avg "
                             "with 9.0.8's recall cut-offs; with -c, topics missing from the "
                             "run count in the means but do not print)")
    parser.add_argument("qrels", nargs="?", help="the qrels file (qid iter docno rel)")
    parser.add_argument("run", nargs="?", help="the run file (qid iter docno rank score tag)")
    parser.set_defaults(handler=run_trec_eval, parser=parser)


def _measure_help(arguments: list) -> str:
    """What the measures named by ``-m`` compute (trec_eval -h -m ...)."""
    from cumgain.analysis import trec_output as report_trec
    from cumgain.measures import parse_measures

    if not arguments:
        return "-- No measures indicated.\n   Request measure documentation using " \
               "<-m measure> on command line\n"
    lines = ["Individual measure documentation for requested measures"]
    seen = set()
    for measure in parse_measures(report_trec.select_measures(arguments).spellings):
        family = measure.spec
        if family.name in seen:
            continue
        seen.add(family.name)
        lines.append(f"{family.name}\n    {family.formula}\n    Source: {family.source}")
    return "\n".join(lines) + "\n"


def _read_qrels(args):
    from cumgain.trec_io import prepare_qrels
    if args.qrels_format == "qrels":
        return prepare_qrels(args.qrels)
    if args.qrels_format == "qrels_jg":
        from cumgain.engine.judgment_groups import load_judgment_groups
        return load_judgment_groups(args.qrels)
    from cumgain.engine.preferences import load_preferences
    return load_preferences(args.qrels, format=args.qrels_format)


def run_trec_eval(args: argparse.Namespace) -> int:
    """``cumgain trec_eval``: evaluate one run and print trec_eval's lines."""
    from cumgain.analysis import trec_output as report_trec
    from cumgain.cli.base import EXIT_NO_TOPICS, EXIT_USAGE, Failure, plural, topic_list, \
        write_text
    from cumgain.engine.evaluator import evaluate
    from cumgain.measures import parse_measures
    from cumgain.trec_io import load_run

    prog = args.prog
    if args.help:
        try:
            text = _measure_help(args.measures or [])
        except InputError as error:
            raise Failure(EXIT_USAGE, str(error)) from None
        write_text(args.parser.format_help() + "\n" + text)
        return 0
    if args.qrels is None or args.run is None:
        raise Failure(EXIT_USAGE, "give a qrels file and a run file (see -h)")
    try:
        selection = report_trec.select_measures(args.measures or [],
                                                version=args.trec_eval_version)
        measures = parse_measures(selection.spellings)
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None
    if args.qrels == "-" and args.run == "-":
        raise Failure(EXIT_USAGE, "the qrels and the run cannot both be standard input ('-')")
    version9 = args.trec_eval_version == "9"
    zscores = None
    if args.zscores is not None:
        from cumgain.analysis.zscores import read_zscores
        zscores = read_zscores(args.zscores)

    qrels = _read_qrels(args)
    run = load_run(args.run) if args.run == "-" else args.run    # a file: the native reader
    result = evaluate(qrels, run, measures, relevance_level=args.level,
                      judged_only=args.judged_only, depth=args.depth,
                      topics="qrels" if args.complete else "both",
                      score_precision="float32" if version9 else "float64",
                      recall_cutoffs="trec_eval9" if version9 else "nearest",
                      collection_size=args.collection_size, warn=False)
    if not result.topics:
        run_source = run.source if args.run == "-" else os.fsdecode(args.run)
        raise Failure(EXIT_NO_TOPICS, f"no topic of {run_source} is in {qrels.source} "
                                      "(trec_eval: No queries with both results and "
                                      "relevance info)")
    if result.missing_topics and not args.complete and not version9:
        missing = list(result.missing_topics)
        one = len(missing) == 1
        print(f"{prog}: warning: {plural(len(missing), 'qrels topic')} missing from the "
              f"run {'was' if one else 'were'} skipped: {topic_list(missing)} "
              f"(trec_eval 10.0 would stop here; use -c to score {'it' if one else 'them'} 0)",
              file=sys.stderr)
    if zscores is not None:
        from cumgain.analysis.zscores import to_zscores
        result = to_zscores(result, zscores)
    hidden = result.missing_topics if (args.complete and version9) else ()
    if hidden:
        result = dataclasses.replace(result, means=report_trec.summary_without(result, hidden))
    # trec_eval's -c quirk: the summary num_rel counts every judgment > 0 of the whole
    # qrels file, whatever -l says (m_num_rel.c, te_calc_avg_num_rel).
    summary_num_rel = None
    if args.complete and args.qrels_format == "qrels":
        summary_num_rel = float(np.count_nonzero(qrels.relevance > 0))
    lines = report_trec.trec_lines(result, per_topic=args.per_topic,
                                   summary=not args.no_summary, hidden_topics=hidden,
                                   summary_num_rel=summary_num_rel,
                                   zscores=zscores is not None)
    chunk = []
    for line in lines:
        chunk.append(line)
        if len(chunk) >= 65536:
            write_text("\n".join(chunk) + "\n")
            chunk = []
    if chunk:
        write_text("\n".join(chunk) + "\n")
    return 0
