"""The options every subcommand shares, defined once so that each means the same
everywhere (``evaluate``, ``compare``, ``curves``; ``trec_eval`` keeps trec_eval's own).

=====================  ====================================================================
inputs                 ``QRELS RUN...`` (``-`` is standard input, once)
measures               ``-m/--measure`` (repeatable; any supported spelling)
gains                  ``-g/--gains`` (repeatable), ``--discount``, ``--base``
topics                 ``-c/--complete`` (= ``--topics qrels``), ``--topics``, ``--intersect``
relevance              ``-l/--relevance-level``, ``-J/--judged-only``, ``-M/--depth``
ranking                ``--ties``, ``--seed``, ``--score-precision``
output                 ``-f/--format``, ``-o/--output``, ``--overwrite``
progress               ``--progress auto|always|never``, ``--quiet``
=====================  ====================================================================

Each ``add_*`` function adds one group to a subcommand's parser; the functions below
them read the parsed values back (:func:`topic_policy`, :func:`discount`, ...).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

from cumgain.cli.base import EXIT_USAGE, Failure, number, positive_int
from cumgain.exceptions import InputError
from cumgain.analysis.formats import ALIASES, FORMATS

# --discount's names: the measures' names and the vector API's aliases of them
DISCOUNT_ALIASES = {"jk": "tois", "jk2002": "tois", "research_note": "note",
                    "log2(i+1)": "trec_eval"}
PROGRESS_CHOICES = ("auto", "always", "never")


def add_inputs(parser: argparse.ArgumentParser, runs_help: str = "run files") -> None:
    parser.add_argument("qrels", help="the qrels file ('-': standard input)")
    parser.add_argument("runs", nargs="+", metavar="RUN", help=runs_help)


def add_measures(parser: argparse.ArgumentParser, default: Sequence[str],
                 what: str = "a measure in any supported spelling") -> None:
    parser.add_argument("-m", "--measure", dest="measures", action="append", metavar="MEASURE",
                        help=f"{what}; repeatable (default: {', '.join(default)})")


def add_gains(parser: argparse.ArgumentParser, default_help: str) -> None:
    """``-g`` (repeatable: the schemes side by side), ``--discount`` and ``--base`` of the
    graded measures."""
    from cumgain.measures import DISCOUNT_NAMES
    parser.add_argument("-g", "--gains", action="append", metavar="SCHEME",
                        help="gain scheme of the graded measures: identity (gain = level), "
                             "exponential (2^level - 1), or levels' gains like 0-1-10-100; "
                             f"repeatable, one result per scheme ({default_help})")
    parser.add_argument("--discount", choices=DISCOUNT_NAMES + tuple(DISCOUNT_ALIASES),
                        metavar="RULE",
                        help="discount of the graded measures: trec_eval (default: "
                             "1/log2(i+1)), tois or jk (the paper's: none before rank b, "
                             "then 1/log_b(i)), note (1/log_b(i+b-1)), rank (1/i), none")
    parser.add_argument("--base", type=float, metavar="B",
                        help="logarithm base b of the tois and note discounts (default 2)")


#: What --intersect does where the runs cover different topics, by subcommand.
INTERSECT_HELP = {
    "evaluate": "keep only the topics every run has (default: each run is reported on its "
                "own topics)",
    "compare": "keep only the topics every run has (default: stop when the runs cover "
               "different topics, as a paired test needs the same topics)",
    "curves": "keep only the topics every run has (default: stop when the runs cover "
              "different topics, as the curves share one ideal curve)",
}
#: What --seed makes reproducible, by subcommand.
SEED_HELP = {
    "evaluate": "seed of --ties random (default 0: the same order every time)",
    "compare": "seed of everything random: --ties random, the randomization test and the "
               "bootstrap (default 0: the same output every time)",
    "curves": "seed of --ties random (default 0: the same order every time)",
}


def add_topics(parser: argparse.ArgumentParser, many_runs: bool = True,
               command: str = "evaluate") -> None:
    from cumgain.engine.ranking_rules import TOPIC_POLICIES
    parser.add_argument("-c", "--complete", action="store_true",
                        help="evaluate every qrels topic; a run missing one scores 0 on it "
                             "(same as --topics qrels)")
    parser.add_argument("--topics", choices=TOPIC_POLICIES,
                        help="both (default: topics in the run and the qrels), qrels (every "
                             "qrels topic), strict (the run and the qrels must have the same)")
    if many_runs:
        parser.add_argument("--intersect", action="store_true", help=INTERSECT_HELP[command])


def add_relevance(parser: argparse.ArgumentParser, depth_default: Optional[int] = None,
                  depth_help: str = "keep the top N documents per topic (trec_eval -M)",
                  level: bool = True) -> None:
    """``-l`` and ``-J`` (where binary relevance and unjudged documents matter: not for
    the curves, ``level=False``, where giving them says why) and ``-M``."""
    if not level:
        for flag in ("-l", "-J"):
            parser.add_argument(flag, action=_NotForCurves, nargs=0 if flag == "-J" else 1,
                                help=argparse.SUPPRESS)
    if level:
        parser.add_argument("-l", "--relevance-level", type=number, default=1, metavar="N",
                            help="relevant means level >= N for the binary measures "
                                 "(default 1)")
        parser.add_argument("-J", "--judged-only", action="store_true",
                            help="drop unjudged documents before evaluating (trec_eval -J)")
    parser.add_argument("-M", "--depth", type=positive_int, default=depth_default,
                        metavar="N", help=depth_help)


class _NotForCurves(argparse.Action):
    """``-l`` / ``-J`` given to ``curves``: a usage error that says why they do not apply."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} does not apply to curves: a curve sums graded gains "
                     "(-g) over every retrieved document, judged or not, with no binary "
                     "relevance level (use -M to cut the ranking)")


def add_ranking(parser: argparse.ArgumentParser, command: str = "evaluate") -> None:
    from cumgain.engine.ranking_rules import SCORE_PRECISIONS, TIE_RULES
    parser.add_argument("--ties", choices=TIE_RULES, default="docno_desc",
                        help="order of equal scores (default: trec_eval's docno_desc); "
                        "expected: the exact mean over every order of each group of equal "
                        "scores; optimistic / pessimistic: the best / worst order")
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP[command])
    parser.add_argument("--score-precision", choices=SCORE_PRECISIONS, default="float64",
                        help="float64 (trec_eval 10), float32 (trec_eval 9, pytrec_eval), "
                        "float16 or bfloat16 (scores as a half-precision model emits them)")


def add_output(parser: argparse.ArgumentParser, default_format: str = "table") -> None:
    parser.add_argument("-f", "--format", type=lambda text: ALIASES.get(text, text),
                        choices=FORMATS, default=default_format, metavar="FORMAT",
                        help=f"{', '.join(FORMATS)} (md = markdown; default: "
                             f"{default_format}); the text formats round, csv, tsv, json "
                             "and jsonl carry full precision")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the results to FILE (whole or not at all) instead of "
                             "standard output")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace output files that exist (else an error)")


def add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress", choices=PROGRESS_CHOICES, default="auto",
                        help="progress on stderr: auto (default) when stderr is a terminal, "
                             "always, never")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress and no notes on stderr (errors still are)")


# ---------------------------------------------------------------- reading them back

_GRADED_DISPLAY = {"nDCG": "nDCG", "ndcg": "nDCG", "ndcg_cut": "nDCG", "CG": "CG", "DCG": "DCG",
                   "dcg": "DCG", "nCG": "nCG", "avg_pos_nCG": "avg_pos_nCG",
                   "avg_pos_nDCG": "avg_pos_nDCG"}
_DISCOUNTED = ("nDCG", "DCG", "avg_pos_nDCG")
_GAIN_TABLE_ONLY = ("ndcg_rel", "Rndcg", "ideal_dcg")


def _format_gains(gains) -> str:
    if isinstance(gains, str):
        return gains
    return "{" + ",".join(f"{level:g}:{gain:g}" for level, gain in gains) + "}"


def with_gain_options(spelling: str, gains: Optional[Sequence[str]], discount: Optional[str],
                  base: Optional[float]) -> tuple:
    """The spellings to evaluate for one ``-m`` argument under --gains/--discount/--base,
    and whether the options apply to it.

    Graded measures get one spelling per gain scheme, written in the ir_measures form
    (``nDCG@10(discount=tois, gains=0-1-10-100)``); others are returned unchanged.
    Parameters written in the measure itself win over the options.
    """
    from cumgain.measures import parse_measure

    measures = parse_measure(spelling)
    if not (gains or discount or base is not None):
        return [spelling], False
    if not any(m.family in _GRADED_DISPLAY or m.family in _GAIN_TABLE_ONLY for m in measures):
        return [spelling], False
    compact = "".join(spelling.split())
    out = []
    for measure in measures:
        if measure.family in _GAIN_TABLE_ONLY:
            raise InputError(
                f"measure {spelling!r}: --gains/--discount/--base do not apply to "
                f"{measure.family}; give it a gain table such as {measure.family}.1=1,2=10,3=100")
        display = _GRADED_DISPLAY[measure.family]
        explicit_gains = measure.gains is not None
        if explicit_gains and measure.gain_fallback == "identity" and (discount or base):
            raise InputError(
                f"measure {spelling!r}: a trec_eval gain table cannot take --discount/--base; "
                "write it as nDCG(gains={1:3,2:9}, discount=...)")
        if explicit_gains and not (discount or base):
            out.append(spelling if len(measures) == 1 else measure.name)
            continue
        params = []
        if measure.relevance_level is not None:
            params.append(f"rel={measure.relevance_level:g}")
        if measure.judged_only is not None:
            params.append(f"judged_only={measure.judged_only}")
        if display in _DISCOUNTED:
            chosen = measure.discount if "discount=" in compact or discount is None \
                else discount
            if chosen != "trec_eval":
                params.append(f"discount={chosen}")
            chosen_base = measure.base if "base=" in compact or base is None else base
            if chosen_base != 2.0:
                if chosen not in ("tois", "note"):
                    raise InputError(f"measure {spelling!r}: a base applies to the tois and note "
                                     f"discounts only, not to {chosen}; add --discount tois")
                params.append(f"base={chosen_base:g}")
        schemes = [measure.gains] if explicit_gains else (gains or [None])
        for scheme in schemes:
            scheme_params = params + ([f"gains={_format_gains(scheme)}"] if scheme else [])
            name = display + (f"@{measure.cutoff}" if measure.cutoff else "")
            if scheme_params:
                name += "(" + ", ".join(scheme_params) + ")"
            out.append(name)
    return out, True



def measure_spellings(args: argparse.Namespace, default: Sequence[str]) -> list:
    """The measures to evaluate: each ``-m`` under ``-g``/``--discount``/``--base`` (a
    usage error if they apply to none of them)."""
    from cumgain.gains import gain_mapping
    from cumgain.measures import parse_measures
    try:
        for scheme in args.gains or ():
            gain_mapping(scheme)
        requested = list(args.measures or default)
        out, applied = [], False
        for spelling in requested:
            variants, applies = with_gain_options(spelling, args.gains,
                                                          discount(args), args.base)
            out.extend(variants)
            applied = applied or applies
        given = [flag for flag, value in (("--gains", args.gains),
                                          ("--discount", args.discount),
                                          ("--base", args.base)) if value is not None]
        if given and not applied:
            raise InputError(f"{'/'.join(given)} applies to none of the measures "
                             f"({', '.join(requested)}); use a graded measure such as nDCG@10")
        parse_measures(out)
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None
    return out


def topic_policy(args: argparse.Namespace) -> str:
    """``--topics``, with ``-c`` meaning ``qrels`` (a usage error if they contradict)."""
    if args.complete and args.topics not in (None, "qrels"):
        raise Failure(EXIT_USAGE, f"-c means --topics qrels; it contradicts --topics {args.topics}")
    return "qrels" if args.complete else (args.topics or "both")


def discount(args: argparse.Namespace) -> Optional[str]:
    """``--discount`` under its measure name (``jk`` -> ``tois``), or None."""
    return DISCOUNT_ALIASES.get(args.discount, args.discount)


def check_inputs(args: argparse.Namespace, distinct_runs: bool = False) -> None:
    """Standard input can be read once only; with ``distinct_runs`` (compare, curves),
    no run file may be given twice (under any name: a link, another path), which would
    compare a run with itself."""
    if [args.qrels, *args.runs].count("-") > 1:
        raise Failure(EXIT_USAGE, "only one input can be standard input ('-')")
    if not distinct_runs:
        return
    seen: dict = {}
    for path in args.runs:
        try:
            info = os.stat(path) if path != "-" else None
        except OSError:
            continue                    # (reading it says what is wrong)
        key = (info.st_dev, info.st_ino) if info is not None else "-"
        if key in seen:
            same = "" if seen[key] == path else f" (as {seen[key]})"
            raise Failure(EXIT_USAGE, f"the run {path} is given twice{same}: a run compared "
                                      "with itself")
        seen[key] = path


def show_progress(args: argparse.Namespace):
    """What the library's ``progress=`` takes: False, True or "auto" (a terminal only)."""
    if args.quiet or args.progress == "never":
        return False
    return True if args.progress == "always" else "auto"


def note(args: argparse.Namespace, text: str) -> None:
    """A note on stderr (topics left out, files written), unless ``--quiet``."""
    if not args.quiet:
        print(f"{args.prog}: {text}", file=sys.stderr)


def refuse_output(args: argparse.Namespace) -> None:
    """A usage error, before any work, if ``-o FILE`` exists and ``--overwrite`` is not given."""
    from cumgain.cli.base import refuse_existing
    refuse_existing(args.output, args.overwrite)


def on_common_topics(args: argparse.Namespace, labels: Sequence[str], results: list) -> list:
    """``--intersect``: each evaluation kept on the topics every run has (a note says how
    many were dropped; none in common is a usage error)."""
    common = set.intersection(*(set(result.topics) for result in results))
    if not common:
        raise Failure(EXIT_USAGE, "--intersect: the runs have no topic in common")
    for label, result in zip(labels, results):
        dropped = len(result.topics) - len(common)
        if dropped:
            note(args, f"{label}: {dropped} topic{'s' * (dropped != 1)} not in every run, "
                       "left out (--intersect)")
    return [result.on_topics(sorted(common)) for result in results]


def input_label(path: str) -> str:
    return "<stdin>" if path == "-" else path
