"""The Parquet layout cumgain writes and reads (``cumgain convert``,
:func:`cumgain.dask.write_parquet`, :func:`cumgain.dask.evaluate`): the writer's options,
the rows per file, the ids' dtype, a loaded table as a Dask frame in that layout, and the
rows of each file written.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Union

import numpy as np

from cumgain.common.optional import require
from cumgain.io.trec.tables import Qrels, Run

if TYPE_CHECKING:
    import dask.dataframe as dd

DEFAULT_ROWS_PER_FILE = 1_000_000
#: How cumgain writes Parquet (pyarrow's writer options). Compression LZ4 (Parquet's
#: LZ4_RAW), which pyarrow decodes about twice as fast as Snappy (12 against 22 ms for a
#: 625k-row run file) for 3% more bytes; every current Parquet reader (pyarrow, Polars,
#: DuckDB, Spark >= 3.4) takes it. Dictionary encoding for the columns whose values
#: repeat (query ids, scores, levels), not for the doc ids (mostly distinct: a dictionary
#: fills up and the writer falls back to plain, and decoding both costs more): 10M rows
#: decode in 0.16-0.18 s instead of 0.20-0.23 s, in 4% fewer bytes (benchmarks/README.md).
PARQUET_OPTIONS = {"compression": "lz4", "use_dictionary": ["query_id", "score", "relevance"]}
STRINGS = "string[pyarrow]"     # the ids' dtype, as Dask converts str columns to write them


def rows_by_file(folder: str) -> dict[str, int]:
    """``{file name: rows}`` of the Parquet files in ``folder``, from their footers."""
    pq = require("pyarrow.parquet", extra="dask", for_what="reading Parquet metadata")
    return {name: pq.read_metadata(os.path.join(folder, name)).num_rows
            for name in os.listdir(folder) if name.endswith(".parquet")}


def dask_frame(table: Union[Run, Qrels], value_name: str, values: np.ndarray,
                partition_by_topic: bool, rows_per_file: int) -> dd.DataFrame:
    """The table as a Dask DataFrame in the layout :func:`cumgain.dask.write_parquet`
    describes."""
    pd = require("pandas", extra="dask", for_what="writing Parquet")
    dd = require("dask.dataframe", extra="dask", for_what="writing Parquet")
    counts = np.diff(table.offsets)
    rows = np.arange(len(values))
    topics = np.array(table.topics, dtype=object)
    if partition_by_topic:
        order = np.array(sorted(range(len(topics)), key=table.topics.__getitem__), dtype=np.int64)
        starts, counts = table.offsets[:-1][order], counts[order]
        first = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)])[:-1], counts)
        rows = first + np.arange(counts.sum(), dtype=np.int64)
        topics = topics[order]
    frame = pd.DataFrame({"query_id": pd.array(np.repeat(topics, counts).tolist(), dtype=str),
                          "doc_id": pd.array(table.docnos[rows].tolist(), dtype=str),
                          value_name: values[rows]})
    if partition_by_topic:
        return dd.from_pandas(frame.set_index("query_id"), chunksize=rows_per_file)
    return dd.from_pandas(frame, chunksize=rows_per_file, sort=False)
