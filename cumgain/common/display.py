"""Short reprs and notebook tables of result objects (:class:`~cumgain.Evaluation`,
:class:`~cumgain.stats.Comparison`, :class:`~cumgain.report.Report`,
:class:`~cumgain.curves.Curves`), bounded however many topics, runs or measures they hold:
a repr is at most :data:`REPR_CHARS` characters, a table at most :data:`HTML_ROWS` rows.
"""
from __future__ import annotations

import html
from typing import Any, Iterable, Sequence

import numpy as np

REPR_CHARS = 300        # the longest a repr may be
NAME_CHARS = 40         # a longer name or label is cut, ending in "..."
HTML_ROWS = 50          # a notebook table shows this many rows, then counts the rest
REPR_ITEMS = 6          # a repr shows this many means at most
_MORE = ", ... (+999999 more)>"     # room kept for the end of a repr


def shorten(text: Any, limit: int = NAME_CHARS) -> str:
    """``str(text)``, cut to ``limit`` characters."""
    text = str(text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def number(value: Any) -> str:
    """A mean as text: a float with 4 decimals (a whole number without; 4 significant
    digits from 1e6 on), a string quoted, anything else as it prints."""
    if isinstance(value, (float, np.floating)):
        if abs(value) >= 1e6:
            return f"{value:.4g}"
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.4f}"
    return shorten(repr(value) if isinstance(value, str) else value)


def count(n: int, word: str) -> str:
    """``"1 topic"``, ``"5000 topics"``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def listing(names: Sequence[Any], limit: int = 4) -> str:
    """``"a, b, c"``, or the first ``limit`` names and how many more."""
    shown = ", ".join(shorten(name) for name in names[:limit])
    return shown + (f", ... (+{len(names) - limit} more)" if len(names) > limit else "")


def summary(head: str, items: Iterable[tuple[Any, Any]]) -> str:
    """``<head name=value, name=value, ... (+n more)>``: the first :data:`REPR_ITEMS`
    items, or fewer to stay within :data:`REPR_CHARS` characters."""
    pieces = [f"{shorten(name)}={number(value)}" for name, value in items]
    text = "<" + shorten(head, REPR_CHARS // 2)
    for shown, piece in enumerate(pieces):
        separator = " " if shown == 0 else ", "
        if shown == REPR_ITEMS or \
                len(text) + len(separator) + len(piece) + len(_MORE) > REPR_CHARS:
            return text + f"{separator}... (+{len(pieces) - shown} more)>"
        text += separator + piece
    return text + ">"


def html_table(caption: str, header: Sequence[str], rows: Sequence[Sequence[Any]],
               notes: Sequence[str] = ()) -> str:
    """A small HTML table, every text escaped: the first :data:`HTML_ROWS` rows, then a
    row counting the rest; ``notes`` below it. A cell is text, or ``(text, marker)``
    shown with the marker as a superscript, or ``(text, marker, True)``, its text bold."""
    def cell(value: Any, tag: str) -> str:
        text, marker, bold = (value + (False,))[:3] if isinstance(value, tuple) \
            else (value, "", False)
        sup = f"<sup>{html.escape(str(marker))}</sup>" if marker else ""
        shown = f"<b>{html.escape(str(text))}</b>" if bold else html.escape(str(text))
        return f"<{tag}>{shown}{sup}</{tag}>"

    lines = ["<table>"]
    if caption:
        lines.append(f"<caption>{html.escape(caption)}</caption>")
    lines.append("<thead><tr>" + "".join(cell(name, "th") for name in header)
                 + "</tr></thead>")
    lines.append("<tbody>")
    for row in rows[:HTML_ROWS]:
        lines.append("<tr>" + cell(row[0], "th") + "".join(cell(v, "td") for v in row[1:])
                     + "</tr>")
    if len(rows) > HTML_ROWS:
        lines.append(f'<tr><td colspan="{len(header)}">... ({len(rows) - HTML_ROWS} more '
                     "rows)</td></tr>")
    lines.append("</tbody>")
    if notes:
        lines.append(f'<tfoot><tr><td colspan="{len(header)}">'
                     + "<br>".join(html.escape(note) for note in notes) + "</td></tr></tfoot>")
    lines.append("</table>")
    return "\n".join(lines)


def means_table(caption: str, label: str, means: Iterable[tuple[Any, Any]],
                value_label: str = "mean") -> str:
    """:func:`html_table` of ``(name, mean)`` pairs."""
    return html_table(caption, (label, value_label),
                      [(name, number(value)) for name, value in means])
