"""The ``cumgain`` command line: one module, one argument parser per subcommand.

Subcommands
-----------
``cumgain trec_eval``
    A drop-in for trec_eval 10.0 (also installed as the ``cumgain-trec-eval`` console
    script): the same flags, and the same output byte for byte for every measure
    cumgain supports. ``--trec-eval-version 9`` reproduces 9.0.8 (pytrec_eval).
``cumgain evaluate QRELS RUN...``
    Everyday evaluation: several runs, measures in any supported spelling, gain
    schemes side by side, output as an aligned table, TSV, CSV or JSON lines.
``cumgain demo``
    The paper's worked example, then a generated test collection (50 topics, three
    runs) evaluated end to end; the averaged curves go to a PNG if matplotlib is there.

``cumgain compare QRELS RUN...`` (:mod:`cumgain.cli_compare`)
    Significance tests and the paper's Table 2 for a set of runs.
``cumgain curves QRELS RUN...`` (:mod:`cumgain.cli_curves`)
    Averaged CG/DCG/nCG/nDCG curves, their readings, and plots.
``cumgain convert RUN OUT.parquet`` (:mod:`cumgain.cli_convert`)
    A TREC run file to (topic-partitioned) Parquet.

Each of the last three lives in its own module with ``HELP``, ``DESCRIPTION`` and
``add_arguments(parser)`` (which sets ``handler``); errors go through the same
:func:`_run` and :class:`Failure` as here.

Errors
------
A user error (a malformed or unreadable file, an unknown measure, a bad option)
prints one line on stderr, ``<prog>: error: <file>:<line>: <what is wrong>``, and
exits non-zero, without a traceback. Exit statuses follow trec_eval: 1 for usage
errors (of ``cumgain`` and of every subcommand, named by its prog: ``cumgain
evaluate: error: ...``), unknown or unsupported measures and optional dependencies
that are not installed, 2 for unreadable or malformed input, 7 when no topic has
both results and judgments; 3 when the memory ran out (the line names the file
being read and the bytes asked for, when known); 130 when interrupted.
:data:`EXIT_STATUS_HELP` says so at the end of every ``-h``.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from cumgain.exceptions import CumgainError, InputError, MissingDependencyError, naming

# The worked example of Jarvelin & Kekalainen (2002), section 2.
PAPER_LEVELS = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
PAPER_RECALL_BASE = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]

EXIT_USAGE = 1          # trec_eval: usage, illegal measure
EXIT_INPUT = 2          # trec_eval: cannot read / malformed file
EXIT_NO_MEMORY = 3      # the memory ran out (a MemoryError)
EXIT_NO_TOPICS = 7      # trec_eval 9.0.8: "No queries with both results and relevance info"
EXIT_INTERRUPTED = 130
EXIT_STATUS_HELP = textwrap.fill(
    f"Exit status: 0 ok; {EXIT_USAGE} usage error (a bad option or argument, an unknown "
    "measure, an output that exists without --overwrite, an optional dependency not "
    f"installed); {EXIT_INPUT} unreadable or malformed input, or an output that cannot be "
    f"written; {EXIT_NO_MEMORY} out of memory; {EXIT_NO_TOPICS} no topic in both the run "
    f"and the qrels; {EXIT_INTERRUPTED} interrupted.", width=79)

DEFAULT_MEASURES = ("nDCG@10", "P@10", "AP", "RR")
LARGE_INPUT_BYTES = 16 << 20   # show a progress bar (on a terminal) from this much input
DEMO_RANKS = (1, 5, 10, 20, 50)
DEMO_SCHEMES = ("0-1-1-1", "0-1-2-3", "0-1-10-100")
DEMO_PLOT_NAME = "cumgain-demo-curves.png"      # in a new folder from tempfile.mkdtemp


class Failure(Exception):
    """A user error with its exit status; printed as one line, never as a traceback."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, named by its prog, and exit
    with :data:`EXIT_USAGE`."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} -h)\n")


class _SubcommandParser(_Parser):
    """A subcommand's parser: it reports arguments it does not know itself (argparse
    leaves them to the top-level parser, whose message would name ``cumgain``)."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error("unrecognized arguments: " + " ".join(extras))
        return namespace, extras


def refuse_existing(path, overwrite: bool) -> None:
    """A usage error if ``path`` exists (a dangling link counts) and --overwrite is not
    given; cumgain.atomic makes the same check again when it writes."""
    if not overwrite and os.path.lexists(path):
        raise Failure(EXIT_USAGE, f"{os.fspath(path)} exists; pass --overwrite to replace it")


def _one_line(text: str) -> str:
    return " ".join(str(text).split("\n"))


def _describe_os_error(error: OSError) -> str:
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


STDOUT = "standard output"      # the name a failed write to stdout gives in messages


class _NamedOutput:
    """sys.stdout while a command runs: a write or flush that fails without a file name
    (a full disk, a file size limit: ``[Errno 27] File too large``) names
    ``standard output``."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        with naming(STDOUT):
            return self._stream.write(text)

    def flush(self) -> None:
        with naming(STDOUT):
            self._stream.flush()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _run(handler: Callable, args: argparse.Namespace, prog: str) -> int:
    """Call a subcommand; turn user errors into one line on stderr and an exit status."""
    stdout, sys.stdout = sys.stdout, _NamedOutput(sys.stdout)
    try:
        status = handler(args)
        sys.stdout.flush()
        return status or 0
    except Failure as failure:
        message, status = str(failure), failure.status
    except MissingDependencyError as error:
        message, status = str(error), EXIT_USAGE
    except MemoryError as error:    # OutOfMemoryError names the file; any other says so
        message = str(error) if isinstance(error, CumgainError) \
            else "out of memory" + (f": {error}" if str(error) else "")
        status = EXIT_NO_MEMORY
    except CumgainError as error:
        message, status = str(error), EXIT_INPUT
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        _drop_stdout()
        return 0
    except OSError as error:
        message, status = _describe_os_error(error), EXIT_INPUT
        if error.filename == STDOUT:    # what could not be written would fail again at exit
            _drop_stdout()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        sys.stdout = stdout
    print(f"{prog}: error: {_one_line(message)}", file=sys.stderr)
    return status


def _drop_stdout() -> None:
    """Point stdout's file descriptor at the null device."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _write_text(text: str) -> None:
    """Write to stdout as UTF-8 bytes with "\n" line ends, whatever the platform; all of
    it (an unbuffered stdout, under ``python -u``, may take part of a write: the rest
    is written again, and a write that then fails names ``standard output``)."""
    buffer = getattr(sys.stdout, "buffer", None)
    with naming(STDOUT):
        if buffer is None:
            sys.stdout.write(text)
            return
        sys.stdout.flush()
        data = memoryview(text.encode("utf-8"))
        while len(data):
            written = buffer.write(data)
            data = data[written if written is not None else 0:]
        buffer.flush()


def _number(text: str):
    """An int if the text is one, else a float (for -l)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _truncated(text: str) -> int:
    """A number truncated toward zero, as C's atol reads trec_eval's -l and -M ("2.5" -> 2);
    unlike atol, text that is not a number is an error, not 0."""
    value = _number(text)
    return value if isinstance(value, int) else int(value)


def _truncated_positive(text: str) -> int:
    value = _truncated(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _version() -> str:
    from cumgain import __version__
    return __version__


def _topic_list(topics: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(topics[:limit])
    return shown + (f", ... ({len(topics) - limit} more)" if len(topics) > limit else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# ============================================================== cumgain trec_eval

def _trec_eval_parser(prog: str) -> _Parser:
    from cumgain import cli_trec_eval
    parser = _Parser(prog=prog, description=cli_trec_eval.DESCRIPTION,
                     epilog=cli_trec_eval.EPILOG, add_help=False,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    cli_trec_eval.add_arguments(parser)
    parser.set_defaults(prog=prog)
    return parser


def main_trec_eval(argv: Optional[Sequence[str]] = None) -> int:
    """The ``cumgain-trec-eval`` console script."""
    parser = _trec_eval_parser("cumgain-trec-eval")
    args = parser.parse_args(argv)
    return _run(args.handler, args, args.prog)


# ============================================================== cumgain evaluate

EVALUATE_DESCRIPTION = """\
Evaluate one or more runs against qrels (TREC files, plain or gzipped; '-' is
standard input) and print one row per run, or per topic with -q. Measures may be
spelled as in trec_eval (ndcg_cut.10, P_5, map), ir_measures (nDCG@10, P@5, AP, RR)
or Jarvelin & Kekalainen (CG@10, nDCG@10(discount=tois, base=2)). The diversity
measures (alpha_nDCG@20, ERR_IA@20, ...) read the qrels as subtopic judgments
(qid subtopic docno rel, ndeval's format), the others as ordinary qrels. --gains,
--discount and --base apply to the graded measures (nDCG, DCG, CG, nCG, avg_pos_*,
and trec_eval's ndcg, ndcg_cut, dcg); give --gains several times to get the schemes
side by side. Topics left out or scored 0 are listed on stderr."""


def _add_evaluate_arguments(parser: argparse.ArgumentParser) -> None:
    from cumgain.evaluator import SCORE_PRECISIONS, TIE_RULES, TOPIC_POLICIES
    from cumgain.measures import DISCOUNT_NAMES
    from cumgain.report_table import FORMATS

    parser.add_argument("qrels", help="the qrels file")
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run files")
    parser.add_argument("-m", "--measure", dest="measures", action="append", metavar="MEASURE",
                        help="a measure in any supported spelling; repeatable (default: "
                             + ", ".join(DEFAULT_MEASURES) + ")")
    parser.add_argument("-g", "--gains", action="append", metavar="SCHEME",
                        help="gain scheme for the graded measures: identity (default), "
                             "exponential, or levels' gains like 0-1-10-100; repeatable")
    parser.add_argument("--discount", choices=DISCOUNT_NAMES,
                        help="discount of the graded measures (default trec_eval: "
                             "1/log2(i+1); tois: the paper's rule)")
    parser.add_argument("--base", type=float, metavar="B",
                        help="logarithm base of the tois and note discounts (default 2)")
    parser.add_argument("-f", "--format", choices=FORMATS, default="table",
                        help="output format (default: table)")
    parser.add_argument("-q", "--per-topic", action="store_true",
                        help="one row per topic, then the run's 'all' row")
    parser.add_argument("-l", "--relevance-level", type=_number, default=1, metavar="N",
                        help="relevant means level >= N for binary measures (default 1)")
    parser.add_argument("-J", "--judged-only", action="store_true",
                        help="drop unjudged documents before evaluating (trec_eval -J)")
    parser.add_argument("-M", "--depth", type=_positive_int, metavar="N",
                        help="keep the top N documents per topic (trec_eval -M)")
    parser.add_argument("-c", "--complete", action="store_true",
                        help="evaluate every qrels topic; missing ones score 0 "
                             "(same as --topics qrels)")
    parser.add_argument("--topics", choices=TOPIC_POLICIES,
                        help="both (default: topics in run and qrels), qrels, or strict")
    parser.add_argument("--ties", choices=TIE_RULES, default="docno_desc",
                        help="order of equal scores (default: trec_eval's docno_desc)")
    parser.add_argument("--seed", type=int, help="seed for --ties random")
    parser.add_argument("--score-precision", choices=SCORE_PRECISIONS, default="float64",
                        help="float64 (trec_eval 10) or float32 (trec_eval 9, pytrec_eval)")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress bar on stderr: auto shows it for large inputs when "
                             "stderr is a terminal")
    parser.set_defaults(handler=run_evaluate)


_GRADED_DISPLAY = {"nDCG": "nDCG", "ndcg": "nDCG", "ndcg_cut": "nDCG", "CG": "CG", "DCG": "DCG",
                   "dcg": "DCG", "nCG": "nCG", "avg_pos_nCG": "avg_pos_nCG",
                   "avg_pos_nDCG": "avg_pos_nDCG"}
_DISCOUNTED = ("nDCG", "DCG", "avg_pos_nDCG")
_GAIN_TABLE_ONLY = ("ndcg_rel", "Rndcg", "ideal_dcg")


def _format_gains(gains) -> str:
    if isinstance(gains, str):
        return gains
    return "{" + ",".join(f"{level:g}:{gain:g}" for level, gain in gains) + "}"


def _with_options(spelling: str, gains: Optional[Sequence[str]], discount: Optional[str],
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


class _Progress:
    """A one-line progress bar on stderr (or nothing)."""

    def __init__(self, total: int, enabled: bool, prog: str):
        self.total, self.enabled, self.prog, self.done = total, enabled, prog, 0

    def step(self, label: str) -> None:
        if not self.enabled:
            return
        self.done += 1
        width = 24
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        text = f"\r{self.prog} [{bar}] {self.done}/{self.total} {label}"
        sys.stderr.write(text[:120].ljust(80))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            sys.stderr.write("\r" + " " * 80 + "\r")
            sys.stderr.flush()


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
    from cumgain import report_table
    from cumgain.evaluator import evaluate
    from cumgain.measures import parse_measures
    from cumgain.native import prepare_qrels

    prog = args.prog
    if args.complete and args.topics not in (None, "qrels"):
        raise Failure(EXIT_USAGE, f"-c means --topics qrels; it contradicts --topics {args.topics}")
    topics = "qrels" if args.complete else (args.topics or "both")
    if [args.qrels, *args.runs].count("-") > 1:
        raise Failure(EXIT_USAGE, "only one input can be standard input ('-')")
    try:
        from cumgain.gains import gain_mapping
        for scheme in args.gains or ():
            gain_mapping(scheme)
        requested = list(args.measures or DEFAULT_MEASURES)
        spellings, applied = [], False
        for spelling in requested:
            variants, applies = _with_options(spelling, args.gains, args.discount, args.base)
            spellings.extend(variants)
            applied = applied or applies
        options = [flag for flag, value in (("--gains", args.gains),
                                            ("--discount", args.discount),
                                            ("--base", args.base)) if value is not None]
        if options and not applied:
            raise InputError(f"{'/'.join(options)} applies to none of the measures "
                             f"({', '.join(requested)}); use a graded measure such as nDCG@10")
        measures = parse_measures(spellings)
    except InputError as error:
        raise Failure(EXIT_USAGE, str(error)) from None

    size = _input_bytes([args.qrels, *args.runs])
    show = args.progress == "always" or (
        args.progress == "auto" and sys.stderr.isatty() and size is not None
        and size >= LARGE_INPUT_BYTES)
    progress = _Progress(1 + len(args.runs), show, prog)
    table = report_table.new_table([m.name for m in measures], [m.kind for m in measures],
                                   args.per_topic)
    # the diversity measures read the qrels file as subtopic judgments, the others as qrels
    diverse = [s for s in spellings if parse_measures([s])[0].spec.input == "subtopics"]
    plain = [s for s in spellings if s not in diverse]
    if diverse and plain and args.qrels == "-":
        raise Failure(EXIT_USAGE, "the diversity measures and the others read the qrels "
                                  "twice (as subtopic judgments and as qrels): give a file, "
                                  "not standard input")
    notes = []
    try:
        judgments = []
        if plain:
            judgments.append((prepare_qrels(args.qrels), plain))
        if diverse:
            from cumgain.diversity import load_subtopics
            judgments.append((load_subtopics(args.qrels), diverse))
        progress.step("<stdin>" if args.qrels == "-" else args.qrels)
        for path in args.runs:
            label = "<stdin>" if path == "-" else path
            result = _joined([
                evaluate(qrels, path, names, relevance_level=args.relevance_level,
                         judged_only=args.judged_only, depth=args.depth, topics=topics,
                         ties=args.ties, seed=args.seed, score_precision=args.score_precision,
                         warn=False)
                for qrels, names in judgments])
            progress.step(label)
            if not result.topics:
                raise Failure(EXIT_NO_TOPICS, f"{label}: no topic of the run is in "
                                              f"{judgments[0][0].source}; nothing to evaluate")
            notes.extend(_topic_notes(label, result, topics))
            report_table.add_result(table, label, result)
    finally:
        progress.close()
        for note in notes:
            print(f"{prog}: {note}", file=sys.stderr)
    import io
    text = io.StringIO()
    report_table.write(table, text, args.format)
    _write_text(text.getvalue())
    return 0


def _joined(results: list):
    """One :class:`Evaluation` of the measures of several (of one run against the same
    qrels file read two ways): the topics of any, in byte order, NaN where a topic is
    not among one's topics; the topic lists of each."""
    if len(results) == 1:
        return results[0]
    from cumgain.evaluator import Evaluation

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


def _topic_notes(label: str, result, topics: str) -> list:
    notes = []
    if result.run_only_topics:
        run_only = list(result.run_only_topics)
        notes.append(f"{label}: {_plural(len(run_only), 'run topic')} without judgments, "
                     f"not evaluated: {_topic_list(run_only)}")
    if result.missing_topics:
        missing = list(result.missing_topics)
        fate = "scored 0" if topics == "qrels" else "skipped"
        notes.append(f"{label}: {_plural(len(missing), 'qrels topic')} missing from the run, "
                     f"{fate}: {_topic_list(missing)}")
    if result.empty_qrels_topics:
        empty = list(result.empty_qrels_topics)
        notes.append(f"{label}: {_plural(len(empty), 'qrels topic')} without judgments: "
                     f"{_topic_list(empty)}")
    return notes


# ============================================================== cumgain demo

def _format_vector(vector: np.ndarray) -> str:
    return " ".join(f"{value:6.2f}" for value in vector)


def _demo_paper(out) -> None:
    import cumgain

    print("1. The worked example of Jarvelin & Kekalainen (2002), section 2", file=out)
    print(f"\nG'  = {PAPER_LEVELS}  (gain = relevance level 0-3)", file=out)
    ideal = cumgain.ideal_gains(PAPER_RECALL_BASE, depth=10)
    rows = [
        ("CG'", cumgain.cg(PAPER_LEVELS)),
        ("DCG' (b=2)", cumgain.dcg(PAPER_LEVELS, base=2)),
        ("CG_I'", cumgain.cg(ideal)),
        ("DCG_I' (b=2)", cumgain.dcg(ideal, base=2)),
        ("nCG'", cumgain.ncg(PAPER_LEVELS, PAPER_RECALL_BASE)),
        ("nDCG' (b=2)", cumgain.ndcg(PAPER_LEVELS, PAPER_RECALL_BASE, base=2)),
    ]
    print(f"{'rank':<14}" + " ".join(f"{rank:6d}" for rank in range(1, 11)), file=out)
    for name, vector in rows:
        print(f"{name:<14}{_format_vector(vector)}", file=out)


def _demo_measure(kind: str, k: int) -> str:
    return {"CG": f"CG@{k}", "DCG": f"DCG@{k}(discount=tois,base=2)", "nCG": f"nCG@{k}",
            "nDCG": f"nDCG@{k}(discount=tois,base=2)"}[kind]


def _demo_collection(out) -> dict:
    """Evaluate the generated collection; print the tables; return the results."""
    from cumgain.datasets import RUN_DEPTH, demo_collection
    from cumgain.evaluator import evaluate

    collection = demo_collection()
    levels = [level for topic in collection.topics for level in collection.qrels[topic].values()]
    counts = np.bincount(levels, minlength=4)
    print(f"\n2. A generated test collection (cumgain.datasets.demo_collection): "
          f"{len(collection.topics)} topics, {len(levels)} judgments graded 0-3 "
          f"({', '.join(f'level {i}: {n}' for i, n in enumerate(counts))}), and three runs "
          f"of {RUN_DEPTH} documents per topic (some never judged): good, fair and poor.",
          file=out)
    kinds = ("CG", "DCG", "nCG", "nDCG")
    spellings = [_demo_measure(kind, k) for kind in kinds for k in DEMO_RANKS]
    spellings += [f"nDCG@10(discount=tois,base=2,gains={scheme})" for scheme in DEMO_SCHEMES]
    spellings.append("ndcg_cut_10")
    results = {run: evaluate(collection.qrels, collection.runs[run], spellings, warn=False)
               for run in collection.runs}

    print(f"\nMeans over the {len(collection.topics)} topics (gain = relevance level; DCG "
          "with the paper's discount, b = 2):", file=out)
    print(f"{'run':<6}{'measure':<9}" + "".join(f"{'@' + str(k):>9}" for k in DEMO_RANKS),
          file=out)
    for run, result in results.items():
        for i, kind in enumerate(kinds):
            values = [result.means[_demo_measure(kind, k)] for k in DEMO_RANKS]
            print(f"{run if i == 0 else '':<6}{kind:<9}"
                  + "".join(f"{value:9.4f}" if kind.startswith("n") else f"{value:9.2f}"
                            for value in values), file=out)

    print("\nnDCG@10 under the paper's gain schemes (its discount, b = 2), and trec_eval's "
          "ndcg_cut_10 (gain = level, 1/log2(i+1)):", file=out)
    headers = list(DEMO_SCHEMES) + ["ndcg_cut_10"]
    print(f"{'run':<6}" + "".join(f"{header:>13}" for header in headers), file=out)
    for run, result in results.items():
        values = [result.means[f"nDCG@10(discount=tois,base=2,gains={scheme})"]
                  for scheme in DEMO_SCHEMES] + [result.means["ndcg_cut_10"]]
        print(f"{run:<6}" + "".join(f"{value:13.4f}" for value in values), file=out)
    return results


def demo_curves(collection=None, depth: Optional[int] = None) -> dict:
    """The averaged CG, DCG, nCG and nDCG curves (gain = level; the paper's discount,
    b = 2; normalised per topic, then averaged) of the demo runs, with the ideal:
    ``{measure: cumgain.curves.Curves}``, over ranks 1..depth (default: the run depth)."""
    from cumgain import curves
    from cumgain.datasets import RUN_DEPTH, demo_collection

    collection = collection or demo_collection()
    return curves.compute_many(collection.qrels, collection.runs, curves.MEASURES,
                               depth=depth or RUN_DEPTH, discount="tois", base=2, warn=False)


def _plot_curves(path: Optional[Path], overwrite: bool) -> Path:
    """Write the four measures' curves (a 2 x 2 grid) to ``path`` (None: into a new
    private folder made by :func:`tempfile.mkdtemp`); return where. Without matplotlib,
    a :class:`MissingDependencyError`."""
    from cumgain import plot
    figure = plot.plot_grid(demo_curves())
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="cumgain-demo-")) / DEMO_PLOT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    return plot.save(figure, path, overwrite=overwrite)


def _check_demo_outputs(plot: Optional[Path], data_dir: Optional[Path], overwrite: bool) -> None:
    """Refuse, before any work, an output the demo may not write."""
    from cumgain.datasets import demo_collection
    from cumgain.plot import output_format
    if plot is not None:
        try:
            output_format(plot)
        except InputError as error:
            raise Failure(EXIT_USAGE, str(error)) from None
        refuse_existing(plot, overwrite)
    if data_dir is not None:
        for path in demo_collection().trec_paths(data_dir).values():
            refuse_existing(path, overwrite)


def run_demo(out=None, plot: Optional[Path] = None, data_dir: Optional[Path] = None, *,
             draw: bool = True, overwrite: bool = False) -> None:
    """Print the paper's worked example, then evaluate the generated collection.

    ``draw``: plot the curves, to ``plot`` (default: a new private temporary folder).
    ``data_dir``: also write the collection there as TREC files. Existing files are
    replaced only with ``overwrite``; every file is written atomically.
    """
    out = sys.stdout if out is None else out
    _check_demo_outputs(plot if draw else None, data_dir, overwrite)
    print("cumgain demo: cumulated gain (CG, DCG, nCG, nDCG)\n", file=out)
    _demo_paper(out)
    _demo_collection(out)
    if draw:
        try:
            written = _plot_curves(None if plot is None else Path(plot), overwrite)
        except MissingDependencyError as error:
            print(f"\nCurves: {error} - no PNG written", file=out)
        else:
            print(f"\nCurves (mean CG, DCG, nCG and nDCG by rank, per run, and the ideal): "
                  f"wrote {written}", file=out)
    if data_dir is not None:
        from cumgain.datasets import demo_collection
        paths = demo_collection().write_trec(data_dir, overwrite=overwrite)
        runs = " ".join(str(paths[name]) for name in paths if name != "qrels")
        print(f"\nThe collection as TREC files: {data_dir}. Try:\n"
              f"  cumgain evaluate {paths['qrels']} {runs} -m nDCG@10 -m P@10 -g 0-1-2-3 "
              f"-g 0-1-10-100", file=out)


def _add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plot", type=Path, metavar="PNG",
                        help="where to write the curves if matplotlib is installed "
                             f"(default: {DEMO_PLOT_NAME} in a new private temporary folder)")
    parser.add_argument("--no-plot", dest="draw", action="store_false",
                        help="do not write the curves")
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="also write the generated collection there as TREC files")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the plot and the TREC files if they exist")
    parser.set_defaults(handler=lambda args: run_demo(
        plot=args.plot, data_dir=args.data_dir, draw=args.draw, overwrite=args.overwrite))


# ============================================================== cumgain

def _build_parser() -> _Parser:
    parser = _Parser(prog="cumgain",
                     description="Graded-relevance IR evaluation: cumulated gain and friends.",
                     epilog="'cumgain COMMAND -h' describes each command.\n\n"
                            + EXIT_STATUS_HELP,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"cumgain {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                     parser_class=_SubcommandParser)
    commands.required = True
    from cumgain import cli_trec_eval
    trec_eval = commands.add_parser(      # its epilog gives trec_eval's exit statuses
        "trec_eval", help=cli_trec_eval.HELP, description=cli_trec_eval.DESCRIPTION,
        epilog=cli_trec_eval.EPILOG, add_help=False,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    cli_trec_eval.add_arguments(trec_eval)
    evaluate = commands.add_parser(
        "evaluate", help="evaluate runs: any measure, gain schemes side by side, "
                         "table/TSV/CSV/JSON lines", description=EVALUATE_DESCRIPTION)
    _add_evaluate_arguments(evaluate)
    demo = commands.add_parser(
        "demo", help="the paper's worked example and a generated test collection",
        description="Print the paper's worked example, then evaluate a generated test "
                    "collection (50 topics, three runs) and plot its curves.")
    _add_demo_arguments(demo)
    subcommands = {"trec_eval": trec_eval, "evaluate": evaluate, "demo": demo}
    from cumgain import cli_compare, cli_convert, cli_curves
    for name, module in (("compare", cli_compare), ("curves", cli_curves),
                         ("convert", cli_convert)):
        subcommands[name] = commands.add_parser(
            name, help=module.HELP, description=module.DESCRIPTION,
            formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(subcommands[name])
    for name, sub in subcommands.items():
        sub.set_defaults(prog=f"cumgain {name}")
        if name != "trec_eval":
            sub.epilog = (sub.epilog + "\n\n" if sub.epilog else "") + EXIT_STATUS_HELP
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``cumgain`` console script."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    return _run(args.handler, args, args.prog)


if __name__ == "__main__":
    sys.exit(main())
