"""``cumgain convert``: a TREC run (or qrels) file to Parquet, partitioned by topic if asked.

A run is streamed (:func:`cumgain.convert.convert_run`: never held whole, unless its
topics are not contiguous); qrels are read whole (:func:`cumgain.trec_io.load_qrels`) and
written through Dask (:func:`cumgain.dask.write_parquet`). Both are read by the reference
reader's grammar, so a malformed line is reported with file and line; the layout is
described in :func:`cumgain.dask.write_parquet`.
"""
from __future__ import annotations

import argparse

from cumgain.cli.base import positive_int

HELP = "a TREC run (or qrels) file to Parquet, partitioned by topic if asked"
DESCRIPTION = """\
Convert a TREC run file (qid iter docno rank score tag; plain or gzip; '-' is standard
input) to a folder of Parquet files with columns query_id, doc_id, score (with --qrels:
a qrels file to query_id, doc_id, relevance). Ids are strings, values float64, and each
topic's rows keep their input order.

--partition-by-topic sorts the topics by id, writes query_id as the index and puts
whole topics in each file part.<i>.parquet (about --rows-per-file rows; a topic never
spans two files), so cumgain.dask.evaluate reads the folder without shuffling it.
Without it, rows keep the file's topic order, --rows-per-file rows per file.

OUT appears only when complete: it is written as a hidden sibling folder
(.OUT.cumgain-tmp-*), gets its manifest _cumgain_manifest.json last, and is renamed
into place. An existing OUT is refused unless --overwrite, and even then replaced only
if it is a dataset cumgain wrote (its manifest lists every file in it), not the current
directory or a parent of it, and does not hold RUN."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from cumgain.convert import DEFAULT_ROWS_PER_FILE
    parser.add_argument("input", metavar="RUN", help="the TREC run file (or qrels with --qrels)")
    parser.add_argument("output", metavar="OUT", help="the Parquet folder to write")
    parser.add_argument("--partition-by-topic", action="store_true",
                        help="whole topics per file, sorted by id, query_id as the index")
    parser.add_argument("--qrels", action="store_true",
                        help="the input is a qrels file (qid iter docno rel)")
    parser.add_argument("--rows-per-file", type=positive_int, default=DEFAULT_ROWS_PER_FILE,
                        metavar="N", help=f"rows per Parquet file (default {DEFAULT_ROWS_PER_FILE:,})")
    parser.add_argument("--duplicates", choices=("error", "first", "last"), default="error",
                        help="a docno twice in a topic: an error (default), or keep the first or the last")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace OUT if it is a dataset cumgain wrote")
    parser.set_defaults(handler=run_convert)


def run_convert(args: argparse.Namespace) -> int:
    """``cumgain convert``: a run streamed (cumgain.convert), qrels read whole and written
    through Dask."""
    from cumgain.common.optional import require
    from cumgain.io.atomic import check_folder
    from cumgain.cli.base import refuse_existing
    from cumgain.scale.manifest import check_replaceable

    refuse_existing(args.output, args.overwrite, folder=True)
    # What --overwrite may replace is checked before the (long) read, and again when the
    # dataset is written.
    check_folder(args.output, overwrite=True, replaceable=check_replaceable,
                 protect=[args.input])
    layout = "partitioned by topic" if args.partition_by_topic else "in file order"
    if not args.qrels:
        require("pyarrow", extra="dask", for_what="cumgain convert")
        from cumgain.convert import convert_run
        done = convert_run(args.input, args.output, partition_by_topic=args.partition_by_topic,
                           rows_per_file=args.rows_per_file, duplicates=args.duplicates,
                           overwrite=args.overwrite)
        files, rows, topics, source = done.files, done.rows, done.topics, done.source
    else:
        for module in ("dask.dataframe", "pyarrow"):     # dask writes Parquet with pyarrow
            require(module, extra="dask", for_what="cumgain convert --qrels")
        from cumgain.dask import write_parquet
        from cumgain.trec_io import load_qrels
        table = load_qrels(args.input, duplicates=args.duplicates)
        files = write_parquet(table, args.output, partition_by_topic=args.partition_by_topic,
                              rows_per_file=args.rows_per_file, overwrite=args.overwrite)
        rows, topics, source = table.offsets[-1], len(table.topics), table.source
    print(f"{source}: {rows:,} rows, {topics:,} topics -> {args.output} ({files:,} Parquet "
          f"file{'s' if files != 1 else ''}, {layout})")
    return 0
