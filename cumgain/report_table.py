"""Output of ``cumgain evaluate``: an aligned table, TSV, CSV or JSON lines.

One row per run (the means), or with ``per_topic`` one row per (run, topic) followed
by the run's ``all`` row. Columns: ``run``, ``topic`` (per-topic output only), then
one per measure, named as the measure was spelled. Counts (``num_*``) print as
integers, text measures (``relstring``, ``runid``) as their text (empty where a measure
has no summary, as ``relstring``). The table rounds to 4 decimals; TSV, CSV and JSON
lines carry the full float64 value (the shortest text that reads back to the same
double).
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from typing import Sequence, TextIO

import numpy as np

FORMATS = ("table", "tsv", "csv", "jsonl")


@dataclass
class Table:
    """Rows of results: ``labels`` (run, and topic when per topic) then ``values``."""

    label_names: tuple
    measure_names: tuple
    kinds: tuple                   # per measure: "float", "count" or "text"
    rows: list                     # [(labels tuple, values list)]


def new_table(measure_names: Sequence[str], kinds: Sequence[str], per_topic: bool) -> Table:
    labels = ("run", "topic") if per_topic else ("run",)
    return Table(labels, tuple(measure_names), tuple(kinds), [])


def add_result(table: Table, run_label: str, result) -> None:
    """Append one evaluation's rows (per topic first when the table is per topic)."""
    names = table.measure_names
    if len(table.label_names) == 2:
        columns = [np.asarray(result.values[name]).tolist() for name in names]
        for t, topic in enumerate(result.topics):
            table.rows.append(((run_label, topic), [column[t] for column in columns]))
        table.rows.append(((run_label, "all"), [result.means[name] for name in names]))
    else:
        table.rows.append(((run_label,), [result.means[name] for name in names]))


def _exact(value, kind: str):
    """The value as JSON and CSV carry it: int for counts, str (or None) for text."""
    if kind == "text":
        return value
    return int(value) if kind == "count" else float(value)


def _rounded(value, kind: str) -> str:
    """The value as the table shows it."""
    if kind == "text":
        return "" if value is None else str(value)
    return str(int(value)) if kind == "count" else f"{value:.4f}"


def write(table: Table, stream: TextIO, fmt: str) -> None:
    """Write ``table`` to ``stream`` in format ``fmt`` (one of :data:`FORMATS`)."""
    header = list(table.label_names) + list(table.measure_names)
    if fmt == "jsonl":
        for labels, values in table.rows:
            record = dict(zip(table.label_names, labels))
            record.update((name, _exact(value, kind)) for name, value, kind
                          in zip(table.measure_names, values, table.kinds))
            stream.write(json.dumps(record) + "\n")
    elif fmt in ("tsv", "csv"):
        writer = csv.writer(stream, delimiter="\t" if fmt == "tsv" else ",",
                            lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(header)
        for labels, values in table.rows:
            writer.writerow(list(labels) + [
                ("" if value is None else str(value)) if kind == "text"
                else repr(_exact(value, kind)) for value, kind in zip(values, table.kinds)])
    elif fmt == "table":
        body = [list(labels) + [_rounded(value, kind)
                                for value, kind in zip(values, table.kinds)]
                for labels, values in table.rows]
        widths = [max([len(cell) for cell in column], default=0)
                  for column in zip(header, *body)]
        n_labels = len(table.label_names)

        def line(cells):
            parts = [cell.ljust(width) if i < n_labels else cell.rjust(width)
                     for i, (cell, width) in enumerate(zip(cells, widths))]
            return "  ".join(parts).rstrip()
        stream.write(line(header) + "\n")
        for cells in body:
            stream.write(line(cells) + "\n")
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of {FORMATS}")
