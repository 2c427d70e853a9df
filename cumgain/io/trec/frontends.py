"""Qrels and runs from pytrec_eval-style dicts and pandas DataFrames, checked by the
rules written in :mod:`cumgain.trec_io` (which dispatches to these).
"""
from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any, Callable

import numpy as np

from cumgain.io import columns
from cumgain.common.optional import require
from cumgain.io.trec.tables import Qrels, Run, _assemble, _check_policy
from cumgain.exceptions import InputError
from cumgain.types import DuplicatePolicy


# --------------------------------------------------------------------------- dicts

def qrels_from_dict(d: Mapping[Any, Mapping[Any, Any]], *, source: str = "<dict>") -> Qrels:
    """Qrels from a pytrec_eval-style ``{qid: {docid: relevance}}`` dict.

    Ids become ``str``; relevance values must be finite real numbers (not bool).
    A topic with an empty inner dict is kept with zero rows.

    >>> q = qrels_from_dict({"1": {"d1": 2, "d2": 0}, 2: {}})
    >>> q.topics, q.offsets.tolist(), q.relevance.tolist()
    (('1', '2'), [0, 2, 2], [2.0, 0.0])
    """
    topics, offsets, docnos, values = _from_dict(d, source, "relevance", finite=True)
    return Qrels(topics, offsets, docnos, values, source, None)


def run_from_dict(d: Mapping[Any, Mapping[Any, Any]], *, source: str = "<dict>") -> Run:
    """A run from a pytrec_eval-style ``{qid: {docid: score}}`` dict.

    Ids become ``str``; scores must be real numbers (not bool), not NaN; the
    tag is ``""``.

    >>> r = run_from_dict({"q1": {"d1": 0.5, "d2": 1.5}})
    >>> r.topics, r.docnos.tolist(), r.scores.tolist()
    (('q1',), ['d1', 'd2'], [0.5, 1.5])
    """
    topics, offsets, docnos, values = _from_dict(d, source, "score", finite=False)
    return Run(topics, offsets, docnos, values, "", source, None)


def _from_dict(d, source: str, name: str, finite: bool):
    if not isinstance(d, Mapping):
        raise InputError(
            f"{source}: expected a mapping {{qid: {{docid: {name}}}}}, got {type(d).__name__}")
    topics: dict[str, Any] = {}
    docnos: list[str] = []
    value_parts = []
    counts = []
    for qid, docs in d.items():
        topic = str(qid)
        _check_text([topic], lambda _: f"{source}: topic {topic!r}")
        if topic in topics:
            raise InputError(
                f"{source}: topic ids {topics[topic]!r} and {qid!r} are both {topic!r} "
                f"once converted to str")
        topics[topic] = qid
        if not isinstance(docs, Mapping):
            raise InputError(
                f"{source}: topic {qid!r} must map docids to {name} values, "
                f"got {type(docs).__name__}")
        ids = list(map(str, docs))
        _check_text(ids, lambda i: f"{source}: topic {qid!r}, docid {ids[i]!r}")
        if len(set(ids)) != len(ids):
            firsts: dict[str, Any] = {}
            for key in docs:
                other = firsts.setdefault(str(key), key)
                if other is not key:
                    raise InputError(
                        f"{source}: in topic {qid!r}, docids {other!r} and {key!r} are both "
                        f"{str(key)!r} once converted to str")
        raw = list(docs.values())
        if set(map(type, raw)) <= {int, float}:
            try:
                values = np.array(raw, dtype=np.float64)
            except OverflowError:
                values = None
        else:
            values = None
        if values is None or (not np.isfinite(values).all() if finite
                              else np.isnan(values).any()):
            values = np.array(
                [_number(value, lambda key=key: f"{source}: topic {qid!r}, docid {key!r}",
                         finite, name)
                 for key, value in docs.items()], dtype=np.float64)
        docnos.extend(ids)
        value_parts.append(values.reshape(-1))
        counts.append(len(ids))
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    docno_array = np.empty(len(docnos), dtype=object)
    docno_array[:] = docnos
    values = np.concatenate(value_parts) if value_parts else np.zeros(0)
    return tuple(topics), offsets, docno_array, np.ascontiguousarray(values, dtype=np.float64)


# --------------------------------------------------------------------------- DataFrames

def qrels_from_dataframe(df: Any, *, duplicates: DuplicatePolicy = "error") -> Qrels:
    """Qrels from a pandas DataFrame with columns ``query_id, doc_id, relevance``.

    Other columns are ignored. ``duplicates`` is as in :func:`read_qrels`.
    """
    _check_policy(duplicates)
    source = columns.source_name(df)
    topics, offsets, docnos, values = _from_frame(columns.as_pandas(df, "relevance"),
                                                  "relevance", True, duplicates, source)
    return Qrels(topics, offsets, docnos, values, source, None)


def run_from_dataframe(df: Any, *, duplicates: DuplicatePolicy = "error") -> Run:
    """A run from a pandas DataFrame with columns ``query_id, doc_id, score``.

    Other columns are ignored. ``duplicates`` is as in :func:`read_run`.
    """
    _check_policy(duplicates)
    source = columns.source_name(df)
    topics, offsets, docnos, values = _from_frame(columns.as_pandas(df, "score"), "score",
                                                  False, duplicates, source)
    return Run(topics, offsets, docnos, values, "", source, None)


def _from_frame(df: Any, value_column: str, finite: bool, duplicates: DuplicatePolicy,
                source: str):
    pd = require("pandas", extra="pandas", for_what="reading a DataFrame")

    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}")
    needed = ("query_id", "doc_id", value_column)
    missing = [column for column in needed if column not in df.columns]
    if missing:
        raise InputError(
            f"{source}: missing column(s) {missing}; need {list(needed)}, "
            f"found {list(df.columns)}")
    columns = {}
    for column in needed:
        series = df[column]
        if isinstance(series, pd.DataFrame):
            raise InputError(f"{source}: column {column!r} appears more than once")
        columns[column] = series
    ids = {}
    for column in ("query_id", "doc_id"):
        array = columns[column].to_numpy(dtype=object)
        missing_ids = pd.isna(array)
        if missing_ids.any():
            i = int(np.argmax(missing_ids))
            raise InputError(f"{source}: {column} is missing at row {i} (0-based position)")
        ids[column] = list(map(str, array))
        _check_text(ids[column], lambda i, column=column:
                    f"{source}: row {i} (0-based position), {column} {ids[column][i]!r}")
    qids, docnos = ids["query_id"], ids["doc_id"]

    def describe(i: int) -> str:
        return f"{source}: row {i} (query_id {qids[i]!r}, doc_id {docnos[i]!r})"

    series = columns[value_column]
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputError(f"{source}: column {value_column!r} is boolean; it must hold numbers")
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_complex_dtype(
            series.dtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(values) if finite else np.isnan(values)
        if bad.any():
            i = int(np.argmax(bad))
            what = "NaN or missing" if np.isnan(values[i]) else "infinite; it must be finite"
            raise InputError(f"{describe(i)}: {value_column} is {what}")
    else:
        raw = series.to_numpy(dtype=object)
        values = np.array(
            [_number(value, lambda i=i: describe(i), finite, value_column)
             for i, value in enumerate(raw)], dtype=np.float64)
    order = dict.fromkeys(qids)
    index = {qid: t for t, qid in enumerate(order)}
    tidx = np.fromiter(map(index.__getitem__, qids), np.int64, len(qids))
    topics = tuple(order)
    offsets, docno_array, values, _ = _assemble(
        source, topics, tidx, docnos, values, None, duplicates, "doc_id", "query_id")
    return topics, offsets, docno_array, values


# --------------------------------------------------------------------------- checks

def _is_number(value: Any) -> bool:
    return isinstance(value, (Real, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))


def _number(value: Any, describe: Callable[[], str], finite: bool, name: str) -> float:
    if not _is_number(value):
        raise InputError(
            f"{describe()}: {name} must be a real number, got {type(value).__name__} {value!r}")
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError) as error:
        raise InputError(f"{describe()}: {name} {_short_repr(value)} cannot be a float64: "
                         f"{error}") from None
    if number != number:
        raise InputError(f"{describe()}: {name} is NaN")
    if finite and number in (float("inf"), float("-inf")):
        raise InputError(f"{describe()}: {name} {value!r} is infinite; it must be finite")
    return number


def _short_repr(value: Any) -> str:
    """``repr(value)``, an int of more than 30 digits shortened to its first 20 and its
    number of digits (a 401-digit int is not worth printing whole)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 30:
        digits = len(str(abs(value)))
        return f"{str(value)[:20 + (value < 0)]}... ({digits} digits)"
    return repr(value)


def _check_text(ids: list[str], describe: Callable[[int], str]) -> None:
    """Raise an InputError naming the first id (``describe(i)`` says which) that has no
    UTF-8 bytes: a str holding a lone surrogate (``os.fsdecode`` makes them of bytes
    that are not UTF-8), which neither a file nor the native reader can hold."""
    try:
        "".join(ids).encode("utf-8")
        return
    except UnicodeEncodeError:
        pass
    for i, text in enumerate(ids):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InputError(
                f"{describe(i)} is not valid text: a lone surrogate "
                f"{text[error.start]!r} at position {error.start}, which has no UTF-8 "
                f"bytes") from None
