"""Output of ``cumgain evaluate``: a table in any of :data:`cumgain.analysis.formats.FORMATS`.

One row per run (the means), or with ``per_topic`` one row per (run, topic) followed
by the run's ``all`` row. Columns: ``run``, ``topic`` (per-topic output only), then
one per measure, named as the measure was spelled. Counts (``num_*``) print as
integers, text measures (``relstring``, ``runid``) as their text (empty where a measure
has no summary, as ``relstring``). The text, markdown and LaTeX tables round to 4
decimals; CSV, TSV, JSON and JSON lines carry the full float64 value (the shortest text
that reads back to the same double; JSON writes NaN as null).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from cumgain.analysis import formats
from cumgain.analysis.formats import Column

if TYPE_CHECKING:
    from cumgain.engine.results import Evaluation


@dataclass
class Table:
    """Rows of results: ``labels`` (run, and topic when per topic) then ``values``."""

    label_names: tuple[str, ...]
    measure_names: tuple[str, ...]
    kinds: tuple[str, ...]         # per measure: "float", "count" or "text"
    rows: list[tuple[tuple[str, ...], list[Any]]]   # [(labels tuple, values list)]


def new_table(measure_names: Sequence[str], kinds: Sequence[str], per_topic: bool) -> Table:
    labels = ("run", "topic") if per_topic else ("run",)
    return Table(labels, tuple(measure_names), tuple(kinds), [])


def add_result(table: Table, run_label: str, result: Evaluation) -> None:
    """Append one evaluation's rows (per topic first when the table is per topic)."""
    names = table.measure_names
    if len(table.label_names) == 2:
        columns = [np.asarray(result.values[name]).tolist() for name in names]
        for t, topic in enumerate(result.topics):
            table.rows.append(((run_label, topic), [column[t] for column in columns]))
        table.rows.append(((run_label, "all"), [result.means[name] for name in names]))
    else:
        table.rows.append(((run_label,), [result.means[name] for name in names]))


def columns(table: Table) -> list[Column]:
    """The table's columns for :func:`cumgain.analysis.formats.render`."""
    return [Column(name, "label") for name in table.label_names] + \
        [Column(name, kind) for name, kind in zip(table.measure_names, table.kinds)]


def render(table: Table, fmt: str) -> str:
    """The table as text in ``fmt`` (one of :data:`cumgain.analysis.formats.FORMATS`)."""
    rows = [list(labels) + list(values) for labels, values in table.rows]
    return formats.render(columns(table), rows, fmt, digits=4)
