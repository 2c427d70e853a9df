"""Columnar inputs: pandas DataFrames, Arrow tables and record batches, Polars
DataFrames, and any object with ``__arrow_c_stream__`` (the Arrow PyCapsule
interface), read by the compiled ranker straight from their Arrow buffers.

Columns: the query id (``query_id``, or ``qid``, ``q_id``), the document id
(``doc_id``, or ``docno``, ``docid``) and the value (``score`` for a run;
``relevance``, or ``rel``, ``label``, for qrels); the first of each list present is
used, other columns are ignored. :func:`renamed` names them explicitly.

Arrow is the common form: pyarrow (the ``arrow`` extra) converts the input to a
table without copying Arrow data (a pandas ``string[pyarrow]`` or ``str`` column, a
Polars column, a Parquet read), and :func:`text_column` hands a string column's
offsets and bytes to C as they are. Dictionary-encoded (categorical) ids are read
through their indices; integer ids are cast to their decimal text (as ``str()``
writes them); numbers of any width become float64 (exact). A table of several chunks
is combined first (one copy of its columns). What the native ranker does not take
(nulls, float or boolean ids, non-numeric values, ids that are not UTF-8) makes
:func:`arrow_columns` return None: the reference reader then converts the input to
pandas and words the error (row and column). Without pyarrow, a pandas DataFrame
takes the reference reader; the other kinds need pyarrow.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from cgcore import _columns
from cumgain.common.optional import require
from cumgain.exceptions import InputError

if TYPE_CHECKING:
    import pandas as pd

#: the accepted names of each column, in order of preference
NAMES: dict[str, tuple[str, ...]] = {"query_id": ("query_id", "qid", "q_id"),
         "doc_id": ("doc_id", "docno", "docid"),
         "score": ("score",),
         "relevance": ("relevance", "rel", "label")}


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def is_columnar(obj: Any) -> bool:
    """Whether ``obj`` is a table this module reads (without importing anything)."""
    if isinstance(obj, (str, bytes, dict)):
        return False
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(obj, pandas.DataFrame):
        return True
    if _module_of(obj) in ("pyarrow", "polars"):
        return type(obj).__name__ in ("Table", "RecordBatch", "RecordBatchReader",
                                      "DataFrame")
    return hasattr(obj, "__arrow_c_stream__") or isinstance(obj, Renamed)


def source_name(obj: Any) -> str:
    """How errors name a table: ``<DataFrame>``, ``<pyarrow.Table>``, ..."""
    if isinstance(obj, Renamed):
        return obj.source or source_name(obj.table)
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(obj, pandas.DataFrame):
        return "<DataFrame>"
    return f"<{_module_of(obj)}.{type(obj).__name__}>"


@dataclass(frozen=True, eq=False)
class Renamed:
    """A table whose columns have other names: ``renamed(df, query_id="topic",
    doc_id="passage", score="bm25")``."""

    table: Any
    names: tuple[tuple[str, str], ...]  # ((our name, its column), ...)
    source: Optional[str] = None        # how errors name it (a file), if not by its type


def renamed(table: Any, *, query_id: Optional[str] = None, doc_id: Optional[str] = None,
            score: Optional[str] = None, relevance: Optional[str] = None) -> Renamed:
    """``table`` with its query id, document id, score (run) or relevance (qrels) columns
    named explicitly, for :func:`cumgain.evaluate` and the loaders.

    Parameters
    ----------
    table : DataFrame or Arrow table
        A pandas or Polars DataFrame or an Arrow table.
    query_id, doc_id : str, optional
        The names of its query id and document id columns.
    score : str, optional
        The name of its score column (a run).
    relevance : str, optional
        The name of its relevance column (qrels).

    Returns
    -------
    Renamed
        The table with the names, read in place by the evaluators.

    Raises
    ------
    InputError
        A name the table does not have.
    """
    if isinstance(table, Renamed):
        raise InputError("rename the table once")
    if not is_columnar(table):
        raise InputError(f"renamed() takes a DataFrame or an Arrow table, got "
                         f"{type(table).__name__}")
    given = {"query_id": query_id, "doc_id": doc_id, "score": score, "relevance": relevance}
    for name, column in given.items():
        if column is not None and not isinstance(column, str):
            raise InputError(f"renamed(): {name} must be a column name (a str), got "
                             f"{column!r}")
    return Renamed(table, tuple((k, v) for k, v in given.items() if v is not None))


def pick_columns(found: Sequence[str], value: str, source: str,
                 names: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """The columns of ``found`` to read for query id, doc id and ``value`` ("score"
    or "relevance"), or an InputError listing what is missing."""
    explicit = dict(names)
    chosen: list[Any] = []        # (each a str once none is missing)
    missing: list[str] = []
    for name in ("query_id", "doc_id", value):
        if name in explicit:
            column = explicit[name] if explicit[name] in found else None
        else:
            column = next((alias for alias in NAMES[name] if alias in found), None)
        if column is None:
            missing.append(explicit.get(name, name))
        chosen.append(column)
    if missing:
        need = [explicit.get(name, "/".join(NAMES[name]))
                for name in ("query_id", "doc_id", value)]
        raise InputError(f"{source}: missing column(s) {missing}; need {need}, found "
                         f"{list(found)}")
    duplicated = [column for column in chosen if list(found).count(column) > 1]
    if duplicated:
        raise InputError(f"{source}: column {duplicated[0]!r} appears more than once")
    return chosen


def as_pandas(obj: Any, value: str) -> pd.DataFrame:
    """A pandas DataFrame with the columns ``query_id, doc_id, <value>`` of any table
    this module reads (for the reference reader)."""
    source = source_name(obj)
    names = obj.names if isinstance(obj, Renamed) else ()
    table = obj.table if isinstance(obj, Renamed) else obj
    pd = require("pandas", extra="pandas", for_what="reading a DataFrame")
    if not isinstance(table, pd.DataFrame):
        table = _arrow_table(table, source).to_pandas()
    chosen = pick_columns(list(table.columns), value, source, names)
    frame = table[chosen]
    frame.columns = ["query_id", "doc_id", value]
    return frame


def _arrow_table(obj: Any, source: str):
    pa = require("pyarrow", extra="arrow", for_what=f"reading {source}")
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    if isinstance(obj, pa.RecordBatchReader):
        return obj.read_all()
    if hasattr(obj, "__arrow_c_stream__"):     # Polars: its string views, in place
        return pa.RecordBatchReader.from_stream(obj).read_all()    # (pa.table imports
                                                                    # pandas)
    if _module_of(obj) == "polars" and hasattr(obj, "to_arrow"):
        return obj.to_arrow()
    raise InputError(f"{source}: not a table cumgain reads")


@dataclass
class ArrowColumns:
    """The three columns of a table, as the compiled ranker reads them."""

    query_ids: Any          # _columns.TextColumn
    doc_ids: Any            # _columns.TextColumn
    values: np.ndarray      # float64
    source: str
    keep: Any               # the Arrow data the columns point into

    def __len__(self) -> int:
        return len(self.values)


def arrow_columns(obj: Any, value: str) -> Optional[ArrowColumns]:
    """The columns of a table for the native ranker, or None where the reference
    reader must take it (see the module's docstring). Missing columns are an
    InputError here; pyarrow missing is a MissingDependencyError, except for a pandas
    DataFrame (None)."""
    source = source_name(obj)
    names = obj.names if isinstance(obj, Renamed) else ()
    table = obj.table if isinstance(obj, Renamed) else obj
    pandas = sys.modules.get("pandas")
    is_pandas = pandas is not None and isinstance(table, pandas.DataFrame)
    if is_pandas:
        chosen = pick_columns(list(table.columns), value, source, names)
        in_place = _pandas_in_place(table, chosen, source)
        if in_place is not None:
            return in_place
        try:
            import pyarrow as pa
        except ImportError:
            return None
        try:
            table = pa.Table.from_pandas(table[chosen], preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError):
            return None     # mixed objects, say: the reference reader words it
    else:
        table = _arrow_table(table, source)
        chosen = pick_columns(list(table.column_names), value, source, names)
        table = table.select(chosen)
    query_ids, doc_ids = (text_column(table.column(i)) for i in (0, 1))
    values = number_column(table.column(2))
    if query_ids is None or doc_ids is None or values is None:
        return None
    return ArrowColumns(query_ids, doc_ids, values, source, table)


def _pandas_in_place(frame: Any, chosen: list, source: str) -> Optional[ArrowColumns]:
    """A pandas frame whose id columns hold Python strs (object dtype, pandas before 3)
    and whose value column is numeric: read in place, without pyarrow (the strs' UTF-8
    bytes, the values as float64); None otherwise."""
    import pandas as pd
    ids = [frame[column] for column in chosen[:2]]
    values = frame[chosen[2]]
    if any(series.dtype != object for series in ids) or pd.api.types.is_bool_dtype(
            values.dtype) or not pd.api.types.is_numeric_dtype(values.dtype) \
            or isinstance(values.dtype, pd.api.extensions.ExtensionDtype):
        return None
    query_ids, doc_ids = (_columns.TextColumn.of_strs(np.ascontiguousarray(
        series.to_numpy(dtype=object))) for series in ids)
    if not (query_ids.valid and doc_ids.valid):
        return None
    numbers = np.ascontiguousarray(values.to_numpy(dtype=np.float64))
    return ArrowColumns(query_ids, doc_ids, numbers, source, frame)


def _one_chunk(chunked: Any):
    """A ChunkedArray as one Array (combined, a copy, if it has several chunks)."""
    import pyarrow as pa
    if chunked.num_chunks == 1:
        return chunked.chunk(0)
    if pa.types.is_dictionary(chunked.type):
        chunked = chunked.unify_dictionaries()
    return chunked.combine_chunks()


def text_column(chunked: Any) -> Optional[Any]:
    """An id column as a _columns.TextColumn over its Arrow buffers, or None (nulls, a
    type whose text is not what ``str()`` writes, ids that are not valid)."""
    import pyarrow as pa
    array = _one_chunk(chunked)
    if array.null_count:
        return None
    kind = array.type
    if pa.types.is_dictionary(kind):
        dictionary = array.dictionary
        if dictionary.null_count or not (_is_text(dictionary.type)
                                         or pa.types.is_integer(dictionary.type)):
            return None
        indices = array.indices
        if not pa.types.is_int32(indices.type):
            indices = indices.cast(pa.int32())
        indices = _buffer_values(indices, np.int32)
        if str(dictionary.type) == "string_view":
            column = _view_column(dictionary, indices)
        else:
            offsets, data = _string_buffers(_as_string(dictionary))
            column = _columns.TextColumn(offsets, data, indices)
    elif str(kind) == "string_view":
        column = _view_column(array)
    elif _is_text(kind) or pa.types.is_integer(kind):
        column = _columns.TextColumn(*_string_buffers(_as_string(array)))
    else:
        return None
    return column if column.valid else None


def _view_column(array: Any, indices: Optional[np.ndarray] = None):
    """A string_view array (Polars' strings) as a TextColumn over its views and data
    buffers, in place."""
    buffers = array.buffers()
    views = np.frombuffer(buffers[1], np.uint8)[16 * array.offset:16 * (array.offset
                                                                       + len(array))]
    data = [buffer for buffer in buffers[2:] if buffer is not None]
    addresses = np.array([buffer.address for buffer in data], np.uintp)
    sizes = np.array([buffer.size for buffer in data], np.int64)
    return _columns.TextColumn(None, None, indices, views, addresses, sizes, data)


def _is_text(kind: Any) -> bool:
    import pyarrow as pa
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) \
        or str(kind) == "string_view"


def _as_string(array: Any):
    """A string or large_string array of the same text (string views and integers
    cast: integers to the digits ``str()`` writes)."""
    import pyarrow as pa
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return array
    return array.cast(pa.large_string())


def _string_buffers(array: Any) -> tuple:
    """(offsets of the array's slice, data bytes) of a string or large_string array."""
    import pyarrow as pa
    _, offsets, data = array.buffers()
    dtype = np.int32 if pa.types.is_string(array.type) else np.int64
    offsets = np.frombuffer(offsets, dtype)[array.offset:array.offset + len(array) + 1]
    data = np.frombuffer(data, np.uint8) if data is not None and data.size \
        else np.zeros(0, np.uint8)
    return offsets, data


def _buffer_values(array: Any, dtype) -> np.ndarray:
    """A primitive array without nulls as a numpy view of its buffer."""
    values = np.frombuffer(array.buffers()[1], dtype)
    return values[array.offset:array.offset + len(array)]


def number_column(chunked: Any) -> Optional[np.ndarray]:
    """A value column as float64 (a view of a float64 column's buffer; other widths
    converted, exactly), or None (nulls, booleans, anything not a number)."""
    import pyarrow as pa
    array = _one_chunk(chunked)
    kind = array.type
    if array.null_count or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return None
    values = _buffer_values(array, _NUMPY_TYPES[str(kind)])
    return values if values.dtype == np.float64 else values.astype(np.float64)


#: the numpy dtype of each Arrow number type's buffer
_NUMPY_TYPES = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
                "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
                "uint64": np.uint64, "halffloat": np.float16, "float": np.float32,
                "double": np.float64}
