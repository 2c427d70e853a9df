"""Output formats shared by every command: one table written as text, markdown, LaTeX,
CSV, TSV, JSON or JSON lines.

A table is a list of :class:`Column` (a name and a kind) and rows of plain values:

* ``"label"``: text on the left (run names, topics, measures);
* ``"float"``: a number, rounded to ``digits`` decimals in ``table``, ``markdown`` and
  ``latex``, written at full float64 precision (the shortest text that reads back to the
  same double) in ``csv``, ``tsv``, ``json`` and ``jsonl``;
* ``"count"``: an integer; ``"text"``: any text (``None``: empty).

``notes`` (a legend) follow the table in ``table`` and ``markdown``, as comments in
``latex``, and are left out of the machine-readable formats. ``markdown`` may also be
spelled ``md``.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

FORMATS = ("table", "markdown", "latex", "csv", "tsv", "json", "jsonl")
ALIASES = {"md": "markdown"}
KINDS = ("label", "float", "count", "text")


@dataclass(frozen=True)
class Column:
    """A column's ``name``, ``kind`` (one of :data:`KINDS`) and, in the text formats,
    its alignment: ``right`` (default: numbers right, text left)."""

    name: str
    kind: str = "float"
    right: Optional[bool] = None

    @property
    def right_aligned(self) -> bool:
        return self.kind in ("float", "count") if self.right is None else self.right


def canonical(fmt: str) -> str:
    """The format's name in :data:`FORMATS` (``md`` -> ``markdown``); ValueError if unknown."""
    fmt = ALIASES.get(fmt, fmt)
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return fmt


def exact(value: Any, kind: str) -> Any:
    """The value as JSON carries it: int for counts, float for numbers, str or None."""
    if value is None or kind in ("label", "text"):
        return value
    return int(value) if kind == "count" else float(value)


def _full(value: Any, kind: str) -> str:
    """The value as CSV and TSV carry it (floats by ``repr``: full precision)."""
    value = exact(value, kind)
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _rounded(value: Any, kind: str, digits: int) -> str:
    """The value as the text, markdown and LaTeX tables show it."""
    if value is None:
        return ""
    if kind in ("label", "text"):
        return str(value)
    if kind == "count":
        return str(int(value))
    value = float(value)
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


def _json_value(value: Any, kind: str) -> Any:
    """JSON has no NaN nor infinities: they are written as null."""
    value = exact(value, kind)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def render(columns: Sequence[Column], rows: Sequence[Sequence[Any]], fmt: str, *,
           digits: int = 4, notes: Sequence[str] = ()) -> str:
    """The table as text in ``fmt`` (one of :data:`FORMATS` or an alias)."""
    fmt = canonical(fmt)
    names = [column.name for column in columns]
    kinds = [column.kind for column in columns]
    if fmt in ("json", "jsonl"):
        records = [{name: _json_value(value, kind) for name, value, kind
                    in zip(names, row, kinds)} for row in rows]
        if fmt == "json":
            return json.dumps(records, indent=1) + "\n"
        return "".join(json.dumps(record) + "\n" for record in records)
    if fmt in ("csv", "tsv"):
        stream = io.StringIO()
        writer = csv.writer(stream, delimiter="\t" if fmt == "tsv" else ",",
                            lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(names)
        for row in rows:
            writer.writerow([_full(value, kind) for value, kind in zip(row, kinds)])
        return stream.getvalue()
    cells = [[_rounded(value, kind, digits) for value, kind in zip(row, kinds)] for row in rows]
    left = [not column.right_aligned for column in columns]
    if fmt == "table":
        return _text_table(names, cells, left, notes)
    if fmt == "markdown":
        return _markdown(names, cells, left, notes)
    return _latex(names, cells, left, notes)


def _text_table(names: list, cells: list, left: list, notes: Sequence[str]) -> str:
    widths = [max([len(cell) for cell in column], default=0) for column in zip(names, *cells)]

    def line(row: Sequence[str]) -> str:
        return "  ".join(cell.ljust(width) if is_left else cell.rjust(width)
                         for cell, width, is_left in zip(row, widths, left)).rstrip()
    lines = [line(names)] + [line(row) for row in cells]
    if notes:
        lines += [""] + list(notes)
    return "\n".join(lines) + "\n"


def markdown_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")


def _markdown(names: list, cells: list, left: list, notes: Sequence[str]) -> str:
    header = [markdown_escape(name) for name in names]
    body = [[markdown_escape(cell) for cell in row] for row in cells]
    widths = [max(len(row[i]) for row in [header] + body) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(cell.ljust(width) if is_left else cell.rjust(width)
                                 for cell, width, is_left in zip(row, widths, left)) + " |"
    rule = "|" + "|".join((":" + "-" * (width + 1)) if is_left else ("-" * (width + 1) + ":")
                          for width, is_left in zip(widths, left)) + "|"
    lines = [line(header), rule] + [line(row) for row in body]
    if notes:
        lines += [""] + [f"- {markdown_escape(note)}" for note in notes]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#",
                  "_": "\\_", "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}",
                  "^": "\\textasciicircum{}", ">": "$>$", "<": "$<$"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def _latex(names: list, cells: list, left: list, notes: Sequence[str]) -> str:
    spec = "".join("l" if is_left else "r" for is_left in left)
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(latex_escape(name) for name in names) + " \\\\", "\\midrule"]
    lines += [" & ".join(latex_escape(cell) for cell in row) + " \\\\" for row in cells]
    lines += ["\\bottomrule", "\\end{tabular}"]
    lines += [f"% {note}" for note in notes]
    return "\n".join(lines) + "\n"
