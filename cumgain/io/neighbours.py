"""Qrels and runs in the shapes the neighbouring tools hold them, made into what the
readers take:

* **rows**: any iterable of tuples with named fields ``query_id``, ``doc_id`` and
  ``relevance`` (qrels) or ``score`` (runs): ir_measures' ``Qrel`` and ``ScoredDoc``,
  ir_datasets' ``TrecQrel`` and ``GenericScoredDoc`` (a list, a generator,
  ``dataset.qrels_iter()``). Their columns become an Arrow table (pyarrow installed),
  which the compiled ranker reads in place, else a ``{qid: {docid: value}}`` dict. Rows
  with an ``iteration`` field are subtopic judgments where a measure needs them
  (:func:`subtopics_dict`).
* **ranx** ``Qrels`` and ``Run``: their ``{qid: {docid: value}}`` dicts.

Anything else is returned as it is (:func:`adapted`), for the readers to take or refuse.
"""
from __future__ import annotations

import io
import itertools
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from cumgain.exceptions import InputError

#: What qrels and runs may be, for the error that refuses anything else.
QRELS_KINDS = ("a TREC qrels file path", "a binary stream", "a {qid: {docid: relevance}} "
               "mapping", "a pandas or Polars DataFrame", "an Arrow table",
               "ir_measures / ir_datasets qrels rows (Qrel, TrecQrel: query_id, doc_id, "
               "relevance)", "a ranx Qrels", "prepared qrels (cumgain.prepare_qrels)",
               "a loaded Qrels")
RUN_KINDS = ("a TREC run file path", "a binary stream", "a {qid: {docid: score}} mapping",
             "a pandas or Polars DataFrame", "an Arrow table", "ir_measures / ir_datasets "
             "run rows (ScoredDoc: query_id, doc_id, score)", "a ranx Run", "a loaded Run")


def accepted(kind: str) -> str:
    """The kinds of input a ``kind`` ("qrels" or "run") may be, in words."""
    kinds = QRELS_KINDS if kind == "qrels" else RUN_KINDS
    return ", ".join(kinds[:-1]) + " or " + kinds[-1]


def refused(obj: Any, kind: str) -> InputError:
    """The error for qrels (``kind`` "qrels") or a run of no kind the readers take: a text
    stream is told to give its bytes; anything else gets the list of every kind."""
    if isinstance(obj, io.TextIOBase):
        return InputError(f"{kind}: a text stream; give its bytes (sys.stdin.buffer, or a "
                          "file opened with \"rb\")")
    return InputError(f"{'qrels' if kind == 'qrels' else 'a run'} must be {accepted(kind)}, "
                      f"got {type(obj).__name__}")


def is_ranx(obj: Any, name: str) -> bool:
    """Whether ``obj`` is ranx's ``name`` ("Qrels" or "Run"), without importing ranx."""
    return type(obj).__name__ == name and type(obj).__module__.startswith("ranx.")


_EMPTY = ()        # what _first_row gives for an iterator without elements


def _first_row(obj: Any) -> tuple[Optional[Any], Any]:
    """``(first element, the iterable to read whole)`` of a rows iterable, or ``(None,
    obj)`` when ``obj`` is not one: not a str, bytes, mapping or table, and its first
    element a tuple with named fields. An iterator is read one element ahead and
    chained back."""
    if isinstance(obj, (str, bytes, bytearray, Mapping)) or not isinstance(obj, Iterable) \
            or hasattr(obj, "__array__") or hasattr(obj, "__arrow_c_stream__") \
            or hasattr(obj, "read") or hasattr(obj, "columns"):
        return None, obj
    if isinstance(obj, (list, tuple)):
        first = obj[0] if obj else None
        return (first if hasattr(first, "_fields") else None), obj
    iterator = iter(obj)
    try:
        first = next(iterator)
    except StopIteration:
        return None, _EMPTY
    return (first if hasattr(first, "_fields") else None), itertools.chain([first], iterator)


def _columns(rows: Any, first: Any, names: tuple, where: str) -> list:
    """The ``names`` fields of every row, as lists."""
    fields = first._fields
    missing = [name for name in names if name not in fields]
    if missing:
        raise InputError(f"{where}: rows with fields {list(fields)} lack {missing}; "
                         f"need {list(names)}")
    every = list(zip(*rows))            # (one pass, in C: a column per field)
    return [list(every[fields.index(name)]) for name in names]


def _table(columns: list, names: tuple) -> Any:
    """An Arrow table of the columns (ids as strings), or a {qid: {docid: value}} dict
    when pyarrow is not installed."""
    try:
        import pyarrow
    except ImportError:
        table: dict = {}
        for qid, docid, value in zip(*columns):
            table.setdefault(str(qid), {})[str(docid)] = value
        return table
    qids, docids, values = columns
    return pyarrow.table({names[0]: pyarrow.array(qids).cast(pyarrow.string()),
                          names[1]: pyarrow.array(docids).cast(pyarrow.string()),
                          names[2]: pyarrow.array(values)})


def adapted(obj: Any, kind: str) -> Any:
    """``obj`` (qrels if ``kind`` is "qrels", else a run) as a form the readers take: a
    ranx object as its dict, rows as an Arrow table (or a dict); anything else as it
    is."""
    if is_ranx(obj, "Qrels" if kind == "qrels" else "Run"):
        return obj.to_dict()
    if is_ranx(obj, "Run" if kind == "qrels" else "Qrels"):
        raise InputError(f"expected {'qrels' if kind == 'qrels' else 'a run'}, got a ranx "
                         f"{type(obj).__name__}")
    first, rows = _first_row(obj)
    if first is None:
        return {} if rows is _EMPTY else rows   # (an iterator read one ahead: chained back)
    value = "relevance" if kind == "qrels" else "score"
    names = ("query_id", "doc_id", value)
    return _table(_columns(rows, first, names, kind), names)


def subtopics_dict(obj: Any) -> Optional[dict]:
    """``{qid: {subtopic: {docid: relevance}}}`` of rows with an ``iteration`` field
    (ir_measures' and ir_datasets' diversity qrels: the subtopic is the iteration), or
    None when ``obj`` is not such rows."""
    first, rows = _first_row(obj)
    if first is None or "iteration" not in first._fields:
        return None
    qids, iterations, docids, levels = _columns(
        rows, first, ("query_id", "iteration", "doc_id", "relevance"), "subtopic judgments")
    judgments: dict = {}
    for qid, subtopic, docid, level in zip(qids, iterations, docids, levels):
        judgments.setdefault(str(qid), {}).setdefault(str(subtopic), {})[str(docid)] = level
    return judgments
