"""Comparison reports: the paper's Table 2 for any set of runs, and more.

Each function takes the rows of a report, one :class:`~cumgain.stats.Comparison` per
row (typically a measure under a gain scheme, as the paper's "nCG (0-1-10-100)"): a
``{label: Comparison}`` dict, a list of ``(label, Comparison)`` pairs, or one Comparison
(labelled by its measure). Every row must compare the same runs in the same order.

* :func:`significance_table`, the paper's Table 2: the runs' means over topics, rows =
  measure x gain scheme and columns = runs (or, when that is too wide for a terminal,
  rows = runs), each mean followed by the keys of the runs it is significantly better
  than: ``0.342 cd** f*``, with ``**`` p < 0.01, ``*`` p < 0.05 after the comparison's
  correction (and, for a protected comparison, only when the omnibus test is significant
  at the same level). Its CSV names the pairs in words: ``D, E > A **``.
* :func:`baseline_table`: the baseline first, then every other run with a superscript
  marker when it differs significantly from the baseline: ``+`` better, ``-`` worse,
  followed by the stars (``0.343^{+**}``).
* :func:`pairwise_table`: one line per row and pair with every number of the pair
  (statistic, p, corrected p, means, differences, practical significance, CI).

Each returns a :class:`Report`, which renders as markdown (:meth:`Report.to_markdown`),
aligned plain text (:meth:`Report.to_text`), LaTeX with booktabs rules and markers as
superscripts (:meth:`Report.to_latex`), CSV (:meth:`Report.to_csv`, full precision,
markers in their own ``<run> sig`` columns, omnibus results as columns) or a pandas
DataFrame with the CSV's columns (:meth:`Report.to_dataframe`).
"""
from __future__ import annotations

import csv
import io
import math
import string
import textwrap
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from cumgain.common import display
from cumgain.common.optional import require
from cumgain.exceptions import InputError
from cumgain.stats import SINGLE_STEP, Comparison

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("md", "latex", "csv", "text")
DEFAULT_FORMAT = "md"       # str(report), and cumgain compare without -f
WIDTH = 120                 # characters: significance_table's markdown fits a terminal this wide
RUNS_AS = ("auto", "columns", "rows")
#: (alpha, mark) pairs, strictest first
SIGNIFICANCE_LEVELS: tuple[tuple[float, str], ...] = ((0.01, "**"), (0.05, "*"))

TEST_NAMES = {
    "friedman": "Friedman test",
    "anova": "repeated-measures ANOVA",
    "ttest": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "paired randomization test",
}
POSTHOC_NAMES = {"conover": "Conover's post-hoc comparisons",
                 "nemenyi": "Nemenyi's post-hoc comparisons", "tukey": "Tukey's HSD"}
CORRECTION_NAMES = {"holm": "Holm's correction", "bonferroni": "Bonferroni correction",
                    "bh": "Benjamini-Hochberg correction", "none": "no correction",
                    SINGLE_STEP: "single-step studentized range p-values"}


__all__ = ["Cell", "DEFAULT_FORMAT", "Report", "SIGNIFICANCE_LEVELS", "WIDTH",
           "baseline_table", "pair_marks", "pairwise_table", "run_keys", "run_marks",
           "significance_table", "significance_text"]


@dataclass(frozen=True)
class Cell:
    """One table cell: a number (``style`` "fixed": the report's decimals; "general": 3
    significant digits, for p-values) or text, and an optional superscript ``marker``.

    Attributes
    ----------
    value : float, str or None
        The number or text shown.
    marker : str
        A superscript after the value (significance marks).
    style : {"fixed", "general"}
        How a number is printed.
    """

    value: Union[float, str, None]
    marker: str = ""
    style: str = "fixed"


#: A report's row: its label, its cells (one per column) and its extra values (one per
#: extra column).
ReportRow = tuple[str, tuple[Cell, ...], tuple[Any, ...]]


@dataclass(frozen=True, repr=False)
class Report:
    """A rendered-on-demand table: ``rows`` of ``(label, cells, extras)``; ``columns`` are
    shown in every format, ``extra_columns`` (machine-readable details such as the omnibus
    statistic) only in CSV and the DataFrame; ``notes`` are the legend.

    ``records``: the CSV and DataFrame's ``(header, rows)`` when they are not the table
    shown (:func:`significance_table` shows marks, its CSV names the pairs).
    ``width``: the longest line of the markdown and the text, in characters (None: no
    limit).

    ``str(report)`` is the markdown table (:data:`DEFAULT_FORMAT`); the repr a short
    summary; in a notebook, the table in HTML.

    Attributes
    ----------
    index_name : str
        The header of the label column.
    columns : tuple of str
        The columns shown in every format.
    rows : tuple
        ``(label, cells, extras)`` per row.
    notes : tuple of str
        The legend lines.
    extra_columns : tuple of str
        Columns shown only in CSV and the DataFrame.
    digits : int
        Decimals of the fixed-style numbers.
    records : tuple, optional
        The CSV's and DataFrame's ``(header, rows)`` when they differ from the table.
    width : int, optional
        The longest line of the markdown and text, in characters.
    """

    index_name: str
    columns: tuple[str, ...]
    rows: tuple[ReportRow, ...]
    notes: tuple[str, ...] = ()
    extra_columns: tuple[str, ...] = ()
    digits: int = 3
    records: Optional[tuple] = None
    width: Optional[int] = None

    # ---------------------------------------------------------------- text cells
    def _text(self, cell: Cell) -> str:
        value = cell.value
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if math.isnan(value):
            return "nan"
        if cell.style == "general":
            return f"{value:.3g}"
        return f"{value:.{self.digits}f}"

    def _aligned(self, escape: Any) -> tuple:
        """The header, the columns of text (row labels first), whether each is
        right-aligned, and their widths. A marker follows its value after a space; in a table with
        markers, numbers are left-aligned as blocks (the values aligned, then their
        markers)."""
        header = [escape(self.index_name)] + [escape(c) for c in self.columns]
        right = [False] + [all(isinstance(cells[i].value, (int, float)) or cells[i].value
                               is None for _, cells, _ in self.rows)
                           for i in range(len(self.columns))]
        marked = any(cell.marker for _, cells, _ in self.rows for cell in cells)
        columns = [[escape(label) for label, _, _ in self.rows]]
        for i in range(len(self.columns)):
            values = [escape(self._text(cells[i])) for _, cells, _ in self.rows]
            marks = [escape(cells[i].marker) for _, cells, _ in self.rows]
            value_width = max(map(len, values), default=0)
            mark_width = max(map(len, marks), default=0)
            if marked and right[i + 1]:
                values = [value.rjust(value_width)
                          + ((" " + mark).ljust(mark_width + 1) if mark_width else "")
                          for value, mark in zip(values, marks)]
                right[i + 1] = False
            columns.append(values)
        widths = [max([len(name), *map(len, cells)]) for name, cells in zip(header, columns)]
        return header, columns, right, widths

    def _legend(self, prefix: str, escape: Any) -> list:
        """The notes, one a line or, with ``width``, wrapped to it."""
        lines = []
        for note in self.notes:
            text = prefix + escape(note)
            lines.extend(textwrap.wrap(text, self.width, subsequent_indent=" " * len(prefix),
                                       break_long_words=False, break_on_hyphens=False)
                         if self.width else [text])
        return lines

    def to_markdown(self) -> str:
        """A GitHub-flavoured markdown table, then the legend as a list. A marker follows
        its value after a space; in a table with markers, numbers are left-aligned as
        blocks (the values aligned, then their markers). With ``width``, a table wider
        than that is split into several (each with the row labels) and the legend lines
        are wrapped."""
        header, columns, right, widths = self._aligned(_md_escape)

        def table(chosen: list) -> list:
            def line(cells: list) -> str:
                return "| " + " | ".join(cells[i].rjust(widths[i]) if right[i]
                                         else cells[i].ljust(widths[i]) for i in chosen) + " |"
            rule = "|" + "|".join("-" * (widths[i] + 1) + ":" if right[i]
                                  else ":" + "-" * (widths[i] + 1) for i in chosen) + "|"
            return [line(header), rule] + [line([column[r] for column in columns])
                                           for r in range(len(self.rows))]

        lines = []
        for block in _column_blocks(widths, self.width, gap=3, edge=4):
            lines += ([""] if lines else []) + table([0] + block)
        if self.notes:
            lines += [""] + self._legend("- ", _md_escape)
        return "\n".join(lines) + "\n"

    def to_text(self) -> str:
        """Aligned plain text, columns two spaces apart (the command line's ``table``
        format): the markdown's layout without its rules and escapes; the legend below."""
        header, columns, right, widths = self._aligned(str)

        def line(cells: list, chosen: list) -> str:
            return "  ".join(cells[i].rjust(widths[i]) if right[i] else cells[i].ljust(widths[i])
                             for i in chosen).rstrip()

        lines = []
        for block in _column_blocks(widths, self.width, gap=2, edge=0):
            chosen = [0] + block
            lines += ([""] if lines else []) + [line(header, chosen)] + \
                [line([column[r] for column in columns], chosen) for r in range(len(self.rows))]
        if self.notes:
            lines += [""] + self._legend("", str)
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``); the legend follows as
        LaTeX comments, to paste into a caption."""
        def cell_text(cell: Cell) -> str:
            text = _latex_escape(self._text(cell))
            marker = cell.marker.replace(" ", "\\,")
            return text + (f"$^{{{marker}}}$" if marker else "")

        numeric = [all(isinstance(cells[i].value, (int, float)) or cells[i].value is None
                       for _, cells, _ in self.rows) for i in range(len(self.columns))]
        spec = "l" + "".join("r" if right else "l" for right in numeric)
        lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
                 " & ".join([_latex_escape(self.index_name)]
                            + [_latex_escape(c) for c in self.columns]) + " \\\\",
                 "\\midrule"]
        for label, cells, _ in self.rows:
            lines.append(" & ".join([_latex_escape(label)] + [cell_text(c) for c in cells])
                         + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        lines.extend(f"% {note}" for note in self.notes)
        return "\n".join(lines) + "\n"

    # ---------------------------------------------------------------- data
    def _records(self) -> tuple:
        """The CSV / DataFrame header and rows: values at full precision, markers in a
        ``<column> sig`` column after each column that has any (or ``records``)."""
        if self.records is not None:
            header, records = self.records
            return list(header), [list(record) for record in records]
        marked = [any(cells[i].marker for _, cells, _ in self.rows)
                  for i in range(len(self.columns))]
        header = [self.index_name]
        for column, has_marker in zip(self.columns, marked):
            header.append(column)
            if has_marker:
                header.append(f"{column} sig")
        header.extend(self.extra_columns)
        records = []
        for label, cells, extras in self.rows:
            record = [label]
            for cell, has_marker in zip(cells, marked):
                record.append(cell.value)
                if has_marker:
                    record.append(cell.marker)
            record.extend(extras)
            records.append(record)
        return header, records

    def to_csv(self) -> str:
        """Comma-separated, full float64 precision (``repr``), empty for a missing value."""
        header, records = self._records()
        stream = io.StringIO()
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(header)
        for record in records:
            writer.writerow(["" if value is None else repr(float(value))
                             if isinstance(value, float) else value for value in record])
        return stream.getvalue()

    def to_dataframe(self) -> pd.DataFrame:
        """A pandas DataFrame with the CSV's columns, indexed by the row labels (needs pandas)."""
        pd = require("pandas", extra="pandas", for_what="Report.to_dataframe()")

        header, records = self._records()
        frame = pd.DataFrame(records, columns=header)
        return frame.set_index(self.index_name)

    def render(self, fmt: str) -> str:
        """The report as text in ``fmt``: one of :data:`FORMATS`."""
        if fmt == "md":
            return self.to_markdown()
        if fmt == "latex":
            return self.to_latex()
        if fmt == "csv":
            return self.to_csv()
        if fmt == "text":
            return self.to_text()
        raise InputError(f"format must be one of {FORMATS}, got {fmt!r}")

    def __str__(self) -> str:
        return self.render(DEFAULT_FORMAT)

    def __repr__(self) -> str:
        labels = [label for label, _, _ in self.rows]
        text = (f"<Report: {display.count(len(self.rows), 'row')} x "
                f"{display.count(len(self.columns), 'column')}; "
                f"{display.shorten(self.index_name)}: {display.listing(labels, 3)}; "
                f"columns: {display.listing(self.columns, 3)}")
        return display.shorten(text, display.REPR_CHARS - 1) + ">"

    def _repr_html_(self) -> str:
        rows = [(label, *((self._text(cell), cell.marker) for cell in cells))
                for label, cells, _ in self.rows]
        return display.html_table("", (self.index_name, *self.columns), rows, self.notes)


_LATEX_SPECIAL = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#",
                  "_": "\\_", "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}",
                  "^": "\\textasciicircum{}", ">": "$>$", "<": "$<$"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")


def _column_blocks(widths: list, limit: Optional[int], gap: int, edge: int) -> list:
    """The columns after the first (the row labels), in groups whose lines are at most
    ``limit`` characters (one group if no limit): a line is the label's width plus
    ``edge``, plus each column's width and ``gap`` (markdown ``| label | a | b |``: gap 3,
    edge 4; text ``label  a  b``: gap 2, edge 0)."""
    used = widths[0] + edge
    blocks = [[]]
    for i in range(1, len(widths)):
        if limit is not None and blocks[-1] and used + widths[i] + gap > limit:
            blocks.append([])
            used = widths[0] + edge
        blocks[-1].append(i)
        used += widths[i] + gap
    return blocks


# ============================================================== rows and marks

def _row_list(rows: Any) -> list:
    """``[(label, Comparison)]`` from a Comparison, a dict or a list of pairs; same runs."""
    if isinstance(rows, Comparison):
        rows = [(rows.measure or "score", rows)]
    elif isinstance(rows, dict):
        rows = list(rows.items())
    else:
        rows = list(rows)
    if not rows:
        raise InputError("a report needs at least one comparison")
    for entry in rows:
        if not (isinstance(entry, tuple) and len(entry) == 2
                and isinstance(entry[1], Comparison)):
            raise InputError("report rows must be (label, Comparison) pairs, a "
                             "{label: Comparison} dict or one Comparison")
    runs = rows[0][1].runs
    for label, comparison in rows:
        if comparison.runs != runs:
            raise InputError(f"row {label!r} compares runs {list(comparison.runs)}, "
                             f"the first row {list(runs)}; every row must compare the same "
                             "runs in the same order")
    return [(str(label), comparison) for label, comparison in rows]


def _check_levels(levels: Sequence[tuple[float, str]]) -> tuple[tuple[float, str], ...]:
    levels = tuple(sorted(((float(alpha), str(mark)) for alpha, mark in levels)))
    if not levels or any(not 0 < alpha < 1 for alpha, _ in levels):
        raise InputError(f"significance levels must be (alpha, mark) pairs with 0 < alpha < 1, "
                         f"got {levels!r}")
    for _, mark in levels:          # marks follow run keys (letters, digits, commas)
        if not mark or any(char.isalnum() or char.isspace() or char == "," for char in mark):
            raise InputError(f"a significance mark must be symbols such as '*', without "
                             f"letters, digits, commas or spaces, got {mark!r}")
    if len({mark for _, mark in levels}) != len(levels):
        raise InputError(f"each significance level needs its own mark, got {levels!r}")
    return levels


def pair_marks(comparison: Comparison,
               levels: Sequence[tuple[float, str]] = SIGNIFICANCE_LEVELS
               ) -> dict[tuple[Optional[str], Optional[str]], str]:
    """``{(winner, loser): mark}`` for every pair significant at some level, with the mark
    of the strictest level it passes (:meth:`Comparison.significant`, which applies the
    correction and the omnibus gate).

    Parameters
    ----------
    comparison : Comparison
        A result of :func:`cumgain.stats.compare`.
    levels : sequence of (float, str), default SIGNIFICANCE_LEVELS
        The significance levels and their marks, strictest first ((0.01, "**"), (0.05, "*")).

    Returns
    -------
    dict
        ``{(winner, loser): mark}``.
    """
    marks: dict[tuple[Optional[str], Optional[str]], str] = {}
    for alpha, mark in _check_levels(levels):
        for result in comparison.significant(alpha):
            marks.setdefault((result.winner, result.loser), mark)
    return marks


def significance_text(comparison: Comparison,
                      levels: Sequence[tuple[float, str]] = SIGNIFICANCE_LEVELS) -> str:
    """The paper's last column: ``"D, E > A **; D > B *"``.

    Each significant pair appears once, with the mark of the strictest level it passes;
    runs beating the same runs at the same level are listed together. Groups with
    stricter marks come first, then by the run order of their first loser.

    Parameters
    ----------
    comparison : Comparison
        A result of :func:`cumgain.stats.compare`.
    levels : sequence of (float, str), default SIGNIFICANCE_LEVELS
        The significance levels and their marks, strictest first ((0.01, "**"), (0.05, "*")).

    Returns
    -------
    str
    """
    levels = _check_levels(levels)
    order = {run: i for i, run in enumerate(comparison.runs)}
    strictness = {mark: i for i, (_, mark) in enumerate(levels)}
    winners_of = {}                      # (loser, mark) -> winners
    for (winner, loser), mark in pair_marks(comparison, levels).items():
        winners_of.setdefault((loser, mark), []).append(winner)
    losers_of = {}                       # (winners, mark) -> losers
    for (loser, mark), winners in winners_of.items():
        key = (tuple(sorted(winners, key=order.get)), mark)
        losers_of.setdefault(key, []).append(loser)
    groups = sorted(losers_of.items(), key=lambda item: (
        strictness[item[0][1]], min(order[loser] for loser in item[1]),
        order[item[0][0][0]]))
    return "; ".join(
        f"{', '.join(winners)} > {', '.join(sorted(losers, key=order.get))} {mark}"
        for (winners, mark), losers in groups)


def run_keys(runs: Sequence[str]) -> dict[str, str]:
    """``{run: key}``: the short keys of :func:`significance_table`, ``a``, ``b``, ``c``, ...
    in run order, or ``1``, ``2``, ``3``, ... for more than 26 runs.

    Parameters
    ----------
    runs : sequence of str
        The run names, in order.

    Returns
    -------
    dict of str to str
    """
    if len(runs) <= len(string.ascii_lowercase):
        return dict(zip(runs, string.ascii_lowercase))
    return {run: str(number) for number, run in enumerate(runs, start=1)}


def run_marks(comparison: Comparison,
              levels: Sequence[tuple[float, str]] = SIGNIFICANCE_LEVELS) -> dict[str, str]:
    """``{run: marks}``: the keys (:func:`run_keys`) of the runs each run is significantly
    better than, grouped by the strictest level each pair passes (:func:`pair_marks`),
    strictest first: ``"cd** f*"`` is better than c and d at ``**``, than f at ``*`` only.
    Letter keys are written together, number keys with commas (``"3,4** 6*"``).

    Parameters
    ----------
    comparison : Comparison
        A result of :func:`cumgain.stats.compare`.
    levels : sequence of (float, str), default SIGNIFICANCE_LEVELS
        The significance levels and their marks, strictest first ((0.01, "**"), (0.05, "*")).

    Returns
    -------
    dict of str to str
    """
    levels = _check_levels(levels)
    runs = comparison.runs
    keys = run_keys(runs)
    joiner = "" if len(runs) <= len(string.ascii_lowercase) else ","
    beaten = pair_marks(comparison, levels)
    marks = {}
    for run in runs:
        groups = []
        for _, mark in levels:
            losers = [keys[loser] for loser in runs if beaten.get((run, loser)) == mark]
            if losers:
                groups.append(joiner.join(losers) + mark)
        marks[run] = " ".join(groups)
    return marks


def _marks_note(levels: tuple, n_runs: int) -> str:
    """The legend of :func:`run_marks`, with an example in the levels' own marks."""
    b, c, d = ("b", "c", "d") if n_runs <= len(string.ascii_lowercase) else ("2", "3", "4")
    joiner = "" if n_runs <= len(string.ascii_lowercase) else ","
    strict, loose = levels[0][1], levels[-1][1]
    if len(levels) == 1:
        return (f"after a mean: the keys of the runs it is significantly better than "
                f"(e.g. {b}{joiner}{c}{strict}: better than {b} and {c})")
    return (f"after a mean: the keys of the runs it is significantly better than, by the "
            f"strictest level passed (e.g. {b}{joiner}{c}{strict} {d}{loose}: better than {b} "
            f"and {c} at {strict}, than {d} at {loose})")


def _method_note(comparison: Comparison) -> str:
    text = TEST_NAMES[comparison.test]
    if comparison.posthoc:
        text += f", {POSTHOC_NAMES[comparison.posthoc]}"
    text += f", {CORRECTION_NAMES[comparison.correction]}"
    if comparison.protected and comparison.omnibus is not None:
        text += "; a pair is marked only if the omnibus test is significant at the same level"
    return text


def _omnibus_note(label: str, comparison: Comparison) -> Optional[str]:
    omnibus = comparison.omnibus
    if omnibus is None:
        return None
    df = ", ".join(f"{value:g}" for value in omnibus.df)
    symbol = "chi2" if omnibus.test == "friedman" else "F"
    return (f"{label}: {TEST_NAMES[omnibus.test]}, {symbol}({df}) = {omnibus.statistic:.3f}, "
            f"p = {omnibus.p_value:.3g}, {omnibus.n_topics} topics")


def _notes(rows: list, levels: tuple, extra: Sequence[str] = ()) -> tuple:
    marks = ", ".join(f"{mark} p < {alpha:g}" for alpha, mark in reversed(levels))
    methods = []
    for _, comparison in rows:
        note = _method_note(comparison)
        if note not in methods:
            methods.append(note)
    notes = [f"{marks}: {method}" for method in methods]
    notes.extend(extra)
    notes.extend(note for note in (_omnibus_note(label, c) for label, c in rows) if note)
    counts = {len(c.table.topics) for _, c in rows}
    if all(c.omnibus is None for _, c in rows):
        notes.append(f"topics per row: {', '.join(str(n) for n in sorted(counts))}")
    for label, comparison in rows:
        for run, topics in comparison.table.dropped.items():
            notes.append(f"{label}: {run}: {display.count(len(topics), 'topic')} not covered "
                         "by every run left out")
    return tuple(notes)


def _omnibus_extras(comparison: Comparison) -> list:
    omnibus = comparison.omnibus
    name = comparison.test + (f"+{comparison.posthoc}" if comparison.posthoc else "")
    if omnibus is None:
        return [name, comparison.correction, None, None, len(comparison.table.topics)]
    return [name, comparison.correction, omnibus.statistic, omnibus.p_value, omnibus.n_topics]


_OMNIBUS_COLUMNS = ("test", "correction", "statistic", "p_value", "topics")


# ============================================================== the layouts

def significance_table(rows: Any, *, digits: int = 3,
                       levels: Sequence[tuple[float, str]] = SIGNIFICANCE_LEVELS,
                       runs_as: str = "auto", width: Optional[int] = WIDTH) -> Report:
    """The paper's Table 2 with compact marks: the runs' means over topics, each followed
    by the keys of the runs it is significantly better than (:func:`run_marks`:
    ``0.342 cd** f*``); the runs are keyed a, b, c, ... (:func:`run_keys`).

    ``runs_as``: ``"columns"``, the paper's layout (a row per comparison, a column per
    run, the keys in a legend line); ``"rows"``, a row per run labelled ``(a) name`` and a
    column per comparison; ``"auto"`` (default): ``"columns"`` when that markdown fits
    ``width`` characters, else ``"rows"`` (17 runs never fit 120 characters as columns:
    their means alone, ``| 0.343 `` each, take 136). A markdown table wider than ``width``
    is split into several and the legend lines are wrapped (``width=None``: no limit).

    The CSV and the DataFrame have one row per comparison in either layout: the means at
    full precision, ``significance`` naming every significant pair
    (:func:`significance_text`, ``"D, E > A **"``) and the omnibus test's columns.

    Parameters
    ----------
    rows : Comparison, mapping of str to Comparison, or sequence of (str, Comparison)
        The comparisons, one per table row (labelled by their measure).
    digits : int, default 3
        Decimals of the means.
    levels : sequence of (float, str), default SIGNIFICANCE_LEVELS
        The significance levels and their marks, strictest first ((0.01, "**"), (0.05, "*")).
    runs_as : {"auto", "columns", "rows"}, default "auto"
        The layout.
    width : int or None, default WIDTH
        The widest markdown line, in characters (None: no limit).

    Returns
    -------
    Report

    Raises
    ------
    InputError
        Comparisons of different runs, a bad layout, width or level.
    """
    row_list = _row_list(rows)
    levels = _check_levels(levels)
    digits = _check_digits(digits)
    if runs_as not in RUNS_AS:
        raise InputError(f"runs_as must be one of {RUNS_AS}, got {runs_as!r}")
    if width is not None and (isinstance(width, bool) or not isinstance(width, int)
                              or width < 1):
        raise InputError(f"width must be a positive integer or None, got {width!r}")
    runs = row_list[0][1].runs
    keys = run_keys(runs)
    marks = [run_marks(comparison, levels) for _, comparison in row_list]
    records = (("measure", *runs, "significance", *_OMNIBUS_COLUMNS),
               tuple((label, *(comparison.means[run] for run in runs),
                      significance_text(comparison, levels), *_omnibus_extras(comparison))
                     for label, comparison in row_list))
    legend = _marks_note(levels, len(runs))
    by_columns = Report(
        "measure", tuple(runs),
        tuple((label, tuple(Cell(comparison.means[run], marked[run]) for run in runs), ())
              for (label, comparison), marked in zip(row_list, marks)),
        (f"runs: {', '.join(f'({keys[run]}) {run}' for run in runs)}", legend)
        + _notes(row_list, levels), digits=digits, records=records, width=width)
    if runs_as == "columns" or (runs_as == "auto" and _fits(by_columns, width)):
        return by_columns
    return Report(
        "run", tuple(label for label, _ in row_list),
        tuple((f"({keys[run]}) {run}",
               tuple(Cell(comparison.means[run], marked[run])
                     for (_, comparison), marked in zip(row_list, marks)), ())
              for run in runs),
        (legend,) + _notes(row_list, levels), digits=digits, records=records, width=width)


def _fits(report: Report, width: Optional[int]) -> bool:
    """Whether the report's markdown table (not its legend) is at most ``width`` wide."""
    if width is None:
        return True
    text = replace(report, notes=(), width=None).to_markdown()
    return max(len(line) for line in text.splitlines()) <= width


def baseline_table(rows: Any, baseline: str, *, digits: int = 3,
                   levels: Sequence[tuple[float, str]] = SIGNIFICANCE_LEVELS) -> Report:
    """The baseline's mean first, then each other run's mean with a superscript marker when
    it differs significantly from the baseline: ``+`` (better) or ``-`` (worse) and the stars
    of the strictest level passed. Works on all-pairs comparisons and on comparisons made
    with ``baseline=`` (then the correction family is only the runs against the baseline).

    Parameters
    ----------
    rows : Comparison, mapping of str to Comparison, or sequence of (str, Comparison)
        The comparisons, one per table row (labelled by their measure).
    baseline : str
        The run the others are compared with.
    digits : int, default 3
        Decimals of the means.
    levels : sequence of (float, str), default SIGNIFICANCE_LEVELS
        The significance levels and their marks, strictest first ((0.01, "**"), (0.05, "*")).

    Returns
    -------
    Report

    Raises
    ------
    InputError
        A baseline that is not one of the runs, or a pair the comparisons lack.
    """
    row_list = _row_list(rows)
    levels = _check_levels(levels)
    runs = row_list[0][1].runs
    if baseline not in runs:
        raise InputError(f"baseline {baseline!r} is not one of the runs {list(runs)}")
    systems = [run for run in runs if run != baseline]
    body = []
    for label, comparison in row_list:
        means = comparison.means
        marks = pair_marks(comparison, levels)
        cells = [Cell(means[baseline])]
        for run in systems:
            comparison.pair(run, baseline)          # the pair must be in the comparison
            if (run, baseline) in marks:
                marker = "+" + marks[(run, baseline)]
            elif (baseline, run) in marks:
                marker = "-" + marks[(baseline, run)]
            else:
                marker = ""
            cells.append(Cell(means[run], marker))
        body.append((label, tuple(cells), tuple(_omnibus_extras(comparison))))
    legend = (f"+ / -: significantly better / worse than the baseline {baseline}",)
    return Report("measure", (baseline, *systems), tuple(body),
                  _notes(row_list, levels, legend), _OMNIBUS_COLUMNS, _check_digits(digits))


_PAIR_COLUMNS = ("run_a", "run_b", "test", "statistic", "p_value", "p_corrected", "mean_a",
                 "mean_b", "mean_difference", "relative_difference_%", "practical",
                 "direction", "significance")


def pairwise_table(rows: Any, *, digits: int = 4,
                   levels: Sequence[tuple[float, str]] = SIGNIFICANCE_LEVELS) -> Report:
    """One line per comparison and pair with every number of the pair; with bootstrap CIs
    when the comparisons have them (``ci_low``, ``ci_high``).

    Parameters
    ----------
    rows : Comparison, mapping of str to Comparison, or sequence of (str, Comparison)
        The comparisons, one per table row (labelled by their measure).
    digits : int, default 4
        Decimals of the numbers.
    levels : sequence of (float, str), default SIGNIFICANCE_LEVELS
        The significance levels and their marks, strictest first ((0.01, "**"), (0.05, "*")).

    Returns
    -------
    Report
    """
    row_list = _row_list(rows)
    levels = _check_levels(levels)
    with_ci = any(result.ci is not None for _, c in row_list for result in c.pairs)
    columns = _PAIR_COLUMNS + (("ci_low", "ci_high") if with_ci else ())
    body = []
    for label, comparison in row_list:
        marks = pair_marks(comparison, levels)
        for result in comparison.pairs:
            mark = marks.get((result.winner, result.loser), "")
            cells = [Cell(result.run_a), Cell(result.run_b), Cell(result.test),
                     Cell(result.statistic), Cell(result.p_value, style="general"),
                     Cell(result.p_corrected, style="general"), Cell(result.mean_a),
                     Cell(result.mean_b), Cell(result.mean_difference),
                     Cell(result.relative_difference, style="general"), Cell(result.practical),
                     Cell(result.direction), Cell(mark)]
            if with_ci:
                ci = result.ci
                cells += [Cell(ci.low if ci else None), Cell(ci.high if ci else None)]
            body.append((label, tuple(cells), ()))
    return Report("measure", columns, tuple(body), _notes(row_list, levels), (),
                  _check_digits(digits))


def _check_digits(digits: Any) -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 17:
        raise InputError(f"digits must be an integer from 0 to 17, got {digits!r}")
    return digits
