"""The fast path for TREC files and plain dicts: parse, rank and join in C
(``cgcore._trec``).

:func:`read_ranked` streams the qrels and the run through the native reader and
returns every run topic already ranked (score descending, then the tie rule), cut at
the depth and joined with its judgments. It returns None when the native path
cannot take the input (standard input, a run whose topics are not contiguous, the
"first" duplicates policy) or finds a problem; the caller then reads the files with
the pure-Python reference reader (:mod:`cumgain.trec_io`), which handles those
inputs and words every error with file, line and text.

:class:`PreparedQrels` is a qrels dict whose native table is built once, for
evaluating many runs against the same judgments (the pytrec_eval drop-in).
"""
from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from cgcore import _trec

TIE_CODES = {"docno_desc": _trec.TIES_DOCNO_DESC, "average": _trec.TIES_DOCNO_DESC,
             "docno_asc": _trec.TIES_DOCNO_ASC, "input_order": _trec.TIES_INPUT_ORDER,
             "random": _trec.TIES_RANDOM}


@dataclass
class RankedInput:
    """Every run topic ranked and joined, and the judgments grouped by topic."""

    run_topics: list              # in order of appearance in the run
    run_offsets: np.ndarray       # ranked rows of run topic i: run_offsets[i]:run_offsets[i+1]
    levels: np.ndarray            # relevance level per ranked row (0 if not judged)
    judged: np.ndarray            # in the qrels with a level >= 0
    scores: Optional[np.ndarray]  # as compared (after float32 rounding); kept for ties="average"
    tag: str
    qrels_topics: Sequence[str]   # in order of appearance in the qrels
    qrels_offsets: np.ndarray     # judgments of qrels topic i (read-only)
    qrels_levels: np.ndarray      # (read-only)


@dataclass(frozen=True)
class NativeQrels:
    """A finished qrels table and its judgments grouped by topic. Only read once
    built, so one instance serves any number of rankings, in any number of threads."""

    table: Any                    # _trec.QrelsTable
    topics: tuple                 # in order of appearance in the qrels
    offsets: np.ndarray           # judgments of topic i: offsets[i]:offsets[i+1] (read-only)
    levels: np.ndarray            # (read-only)


def _is_file(path: Any) -> bool:
    if not isinstance(path, (str, os.PathLike)):
        return False
    path = os.fspath(path)
    return path != "-" and os.path.isfile(path)


BLOCK = 1 << 23          # read about 8 MiB at a time
GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"


def _blocks(stream):
    """Blocks of whole lines (a memoryview each, no copy of the block). A line longer
    than a block is gathered piece by piece and joined once (linear in its length)."""
    unfinished: list = []       # the pieces of a line that has not ended yet
    first = True
    while True:
        chunk = stream.read(BLOCK)
        if not chunk:
            break
        if first:
            chunk, first = (chunk[len(BOM):] if chunk.startswith(BOM) else chunk), False
        cut = chunk.rfind(b"\n") + 1
        if cut == 0:
            unfinished.append(chunk)
            continue
        if unfinished:
            head = sum(len(piece) for piece in unfinished)
            data = b"".join(unfinished + [chunk])
            cut += head
        else:
            data = chunk
        unfinished = [data[cut:]] if cut < len(data) else []
        yield memoryview(data)[:cut]
    if unfinished:
        yield memoryview(b"".join(unfinished))


def _feed(parser, path) -> bool:
    """Feed a whole file (plain or gzip); False if the parser stopped or the file is
    not readable as such (the reference reader then reports why)."""
    source = os.fsdecode(os.fspath(path))
    with open(source, "rb") as raw:
        gzipped = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
        try:
            for block in _blocks(stream):
                if parser.feed(block) != _trec.STATUS_OK:
                    return False
        except (OSError, EOFError, zlib.error):
            return False
    return parser.finish() == _trec.STATUS_OK


def _add(parser, source) -> bool:
    """Feed a file path or a plain dict of dicts; False if the parser stopped."""
    if type(source) is dict:
        if parser.add_dict(source) != _trec.STATUS_OK:
            return False
        return parser.finish() == _trec.STATUS_OK
    return _feed(parser, source)


def native_qrels(qrels: Any, indexed: bool = False) -> Optional[NativeQrels]:
    """Read judgments (a TREC file, or a dict with str ids and int/float levels) in C;
    or None when the reference reader must take over. ``indexed``: keep every topic's
    docno index, for a table many runs will be ranked against."""
    if not (_is_file(qrels) or type(qrels) is dict):
        return None
    if type(qrels) is dict and any(len(docs) == 0 for docs in qrels.values()):
        return None     # empty qrels topics are reported by the reference path
    table = _trec.QrelsTable(indexed)
    if not _add(table, qrels) or (table.n_rows == 0 and type(qrels) is not dict):
        return None
    offsets, levels = table.grouped()
    offsets.flags.writeable = levels.flags.writeable = False
    return NativeQrels(table, tuple(table.topics()), offsets, levels)


class PreparedQrels(dict):
    """Judgments ``{qid: {docno: level}}`` whose native table is built once, as
    pytrec_eval's ``RelevanceEvaluator`` reads its qrels once: every run evaluated
    against them skips reading the judgments again.

    The topics' dicts are kept as they are, not copied (a copy would double the
    judgments' memory); other mappings are copied into plain dicts, which the native
    reader takes. Treat them as read-only once prepared: the table is not rebuilt if
    they change. ``native`` is None when the native reader does not take these
    judgments (other id or level types, a topic without judgments, ...); each
    evaluation then takes the reference path, which ends as it does for the original
    (a result or the same error).
    """

    def __init__(self, qrels: Mapping):
        super().__init__(
            (qid, dict(docs) if isinstance(docs, Mapping) and type(docs) is not dict else docs)
            for qid, docs in qrels.items())
        self.native: Optional[NativeQrels] = native_qrels(dict(self), indexed=True)

    def __reduce__(self):
        return PreparedQrels, (dict(self),)


def read_ranked(qrels: Any, run: Any, *, ties: str, score_precision: str,
                seed: int, depth: Optional[int], duplicates: str = "error"
                ) -> Optional[RankedInput]:
    """Read (TREC files, dicts with str ids and int/float values, or
    :class:`PreparedQrels`), rank and join in C; or None when the reference reader
    must take over."""
    if duplicates != "error" or not (_is_file(run) or type(run) is dict):
        return None
    judgments = qrels.native if isinstance(qrels, PreparedQrels) else native_qrels(qrels)
    if judgments is None:
        return None
    ranker = _trec.RunRanker(judgments.table, TIE_CODES[ties], score_precision == "float32",
                             -1 if depth is None else depth, seed, ties == "average")
    if not _add(ranker, run) or (ranker.n_lines == 0 and type(run) is not dict):
        return None
    run_topics, run_offsets, levels, judged, scores, tag = ranker.result()
    return RankedInput(run_topics, run_offsets, levels, judged, scores, tag,
                       judgments.topics, judgments.offsets, judgments.levels)
