"""Gain-by-rank plots of :class:`cumgain.curves.Curves`, as in Figures 1-4 of the TOIS article.

One figure per measure (:func:`plot_curves`): one line per run, the ideal curve
dashed, ranks on the x axis, a legend with the run names to the right of the axes, and
the gain scheme and discount base in the figure's title; or the four measures in a
2 x 2 grid (:func:`plot_grid`) with one legend below the panels.
For CG and DCG a dotted vertical line marks the stopping rank (where the ideal curve
turns horizontal) when it falls inside the plot.

Many runs: run i (in the order of ``curves.runs``) always gets style i
(:func:`run_style`), a colour, a line style and a marker; no two of the first 100 runs
share a colour and a marker, and the ideal curve's style (black, dashed) is no run's.
The legend lies outside the axes, in as many columns as it needs to fit the figure
(constrained layout makes room for it; the figure keeps its size). ``highlight=`` (run
names, e.g. those of :func:`best_runs`) draws those runs thick and the others thin and
faded.

matplotlib (>= 3.7) is an optional dependency (``pip install matplotlib``: the plot
extra), imported only when a figure is drawn; the figures use matplotlib's object API (a
:class:`matplotlib.figure.Figure` on an Agg canvas), never pyplot's global state, so
they are safe in scripts, servers and threads. The output format follows the file
extension: ``.png``, ``.svg`` or ``.pdf``. A PNG is ``size`` x ``dpi`` pixels
(6.4 x 4.8 inches at 100 dpi: 640 x 480). A file is written atomically (complete or
not at all, :mod:`cumgain.io.atomic`), and an existing file is refused unless
``overwrite=True``.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from cumgain.common.optional import require
from cumgain.io.atomic import atomic_path, check_file_target
from cumgain.curves import IDEAL, MEASURES, Curves, stopping_rank
from cumgain.exceptions import InputError, naming
from cumgain.common.limits import whole_number

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
FIGURE_SIZE = (6.4, 4.8)        # inches, one measure
GRID_SIZE = (11.0, 8.5)         # inches, the 2 x 2 grid
DPI = 100
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",     # matplotlib's tab10
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")
LINESTYLES = ("-", "-.", ":")          # never "--", the ideal's
IDEAL_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.8}
WIDTH, MARKER_SIZE = 1.4, 4.5          # a run's line, when no run is highlighted
HIGHLIGHTED = {"linewidth": 2.6, "alpha": 1.0, "zorder": 3}
FADED = {"linewidth": 0.9, "alpha": 0.3, "zorder": 2}
LEGEND_FONT = 8.0                      # points
LEGEND_ROW = 1.6 * LEGEND_FONT         # points per legend row (12.4 measured), with room
GRID_LEGEND_COLUMNS = 6
ORDER_LABELS = {"normalise_then_average": "normalised per topic, then averaged",
                "average_then_normalise": "averaged, then normalised"}

PathLike = Union[str, "os.PathLike[str]"]


def _matplotlib():
    """The Figure class and the Agg canvas, or a MissingDependencyError that says what to
    install."""
    figure = require("matplotlib.figure", extra="plot", for_what="plotting")
    backend = require("matplotlib.backends.backend_agg", extra="plot", for_what="plotting")
    return figure.Figure, backend.FigureCanvasAgg


def output_format(path: PathLike) -> str:
    """``"png"``, ``"svg"`` or ``"pdf"``, from the file extension of ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The output file.

    Returns
    -------
    str

    Raises
    ------
    InputError
        Another extension.
    """
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"{os.fspath(path)}: unknown plot format {suffix or '(no extension)'!r};"
                         f" use one of {', '.join(FORMATS)}")
    return FORMATS[suffix]


def _check_size(size: Any, dpi: Any) -> tuple[tuple[float, float], float]:
    try:
        width, height = (float(value) for value in size)
    except (TypeError, ValueError):
        raise InputError(f"size must be (width, height) in inches, got {size!r}") from None
    if not all(math.isfinite(v) and v > 0 for v in (width, height)):
        raise InputError(f"size must be two positive numbers of inches, got {size!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not math.isfinite(dpi) \
            or dpi <= 0:
        raise InputError(f"dpi must be a positive number, got {dpi!r}")
    return (width, height), float(dpi)


def _title(curves: Curves, with_scheme: bool) -> str:
    title = curves.measure
    if curves.order is not None:
        title += f" ({ORDER_LABELS[curves.order]})"
    if with_scheme:
        title += f"\n{curves.scheme}; {len(curves.topics)} topics"
    return title


def run_style(i: int) -> dict:
    """The style of run ``i`` (0-based): ``color``, ``linestyle`` and ``marker``.

    Runs 0-9 are solid lines in the ten colours, each with its own marker; each further
    ten take the next line style and shift the markers by one, so no two of the first
    100 runs share a colour and a marker. No run is black or dashed (:data:`IDEAL_STYLE`).

    Parameters
    ----------
    i : int
        The run's position (0-based).

    Returns
    -------
    dict
        ``color``, ``linestyle`` and ``marker``, as matplotlib takes them.
    """
    block, colour = divmod(i, len(COLOURS))
    return {"color": COLOURS[colour], "linestyle": LINESTYLES[block % len(LINESTYLES)],
            "marker": MARKERS[(colour + block) % len(MARKERS)]}


def check_highlight(runs: Sequence[str], highlight: Union[str, Sequence[str]]) -> list:
    """The names in ``highlight`` (one run name or several), once each, if each is one of
    ``runs``; else an :class:`InputError` (a ValueError) that names it.

    Parameters
    ----------
    runs : sequence of str
        The runs drawn.
    highlight : str or sequence of str
        The names to check.

    Returns
    -------
    list of str

    Raises
    ------
    InputError
        A name that is not one of ``runs``.
    """
    if isinstance(highlight, str):
        highlight = [highlight]
    try:
        names = list(dict.fromkeys(highlight))
    except TypeError:
        raise InputError(f"highlight must be run names, got {highlight!r}") from None
    unknown = [name for name in names if name not in runs]
    if unknown:
        raise InputError(f"no run named {unknown[0]!r} to highlight; the runs are "
                         f"{', '.join(map(repr, runs))}")
    return names


def best_runs(curves: Curves, n: int) -> list:
    """The names of the ``n`` runs whose curves end highest (the value at the last rank,
    the depth), best first; equal values in run order, NaN last. ``n`` may exceed the
    number of runs (then all of them).

    Parameters
    ----------
    curves : Curves
        The curves of the runs.
    n : int
        How many runs.

    Returns
    -------
    list of str
    """
    n = whole_number(n, "n")
    ends = {name: float(values[-1]) for name, values in curves.runs.items()}
    return sorted(ends, key=lambda name: (math.isnan(ends[name]), -ends[name]))[:n]


def _legend_columns(entries: int, height: float) -> int:
    """Columns enough for ``entries`` legend rows to fit in ``height`` inches."""
    rows = max(1, int(0.9 * height * 72 / LEGEND_ROW))
    return math.ceil(entries / rows)


def draw(ax: Any, curves: Curves, *, legend: bool = True,
         highlight: Union[str, Sequence[str]] = ()) -> None:
    """Draw the curves onto a matplotlib Axes: one line per run in :func:`run_style`, the
    ideal dashed, and (``legend``) the legend to the right of the axes: a figure with
    constrained layout makes room for it, another needs ``savefig(...,
    bbox_inches="tight")``. ``highlight``: run names drawn thick, the others thin and
    faded; an unknown name is an :class:`InputError` (a ValueError).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    curves : Curves
        One measure's curves.
    legend : bool, default True
        Draw the legend beside the axes.
    highlight : str or sequence of str, default ()
        Run names drawn thick, the others faded.
    """
    emphasised = check_highlight(list(curves.runs), highlight)
    n = curves.depth
    every = max(1, n // 10)
    for i, (name, values) in enumerate(curves.runs.items()):
        weight = {} if not emphasised else HIGHLIGHTED if name in emphasised else FADED
        style = {**run_style(i), "linewidth": WIDTH, **weight}
        ax.plot(curves.ranks, values, label=name, markersize=MARKER_SIZE,
                markevery=(i % every, every), **style)    # markers staggered between runs
    ax.plot(curves.ranks, curves.ideal, label=IDEAL, **IDEAL_STYLE)
    if not curves.normalised:
        stop = stopping_rank(curves)
        if 0 < stop < n:
            ax.axvline(stop, color="0.55", linestyle=":", linewidth=1.0,
                       label=f"ideal horizontal from rank {stop}")
    ax.set_xlim(0, n)
    top = max([float(curves.ideal.max(initial=0.0))]
              + [float(values.max(initial=0.0)) for values in curves.runs.values()])
    if curves.normalised:
        ax.set_ylim(0, 1.05)
    else:
        ax.set_ylim(0, top * 1.05 if top > 0 else 1.0)
    ax.set_xlabel("rank")
    ax.set_ylabel(curves.measure)
    ax.grid(alpha=0.3)
    if legend:
        entries = len(ax.get_legend_handles_labels()[1])
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0,
                  fontsize=LEGEND_FONT,
                  ncols=_legend_columns(entries, ax.figure.bbox.height / ax.figure.dpi))


def save(figure: Any, path: PathLike, *, dpi: Optional[float] = None,
         overwrite: bool = False) -> Path:
    """Write a figure to ``path`` in the format of its extension (png, svg, pdf), under
    a temporary name renamed to ``path`` when complete; an existing ``path`` is refused
    unless ``overwrite``.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure.
    path : str or os.PathLike
        The output file (png, svg or pdf).
    dpi : float, optional
        Dots per inch of a PNG (the figure's own when None).
    overwrite : bool, default False
        Replace an existing regular file at ``path`` (never a link, FIFO or device).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    InputError
        An unknown extension, or an existing file without ``overwrite``.
    """
    fmt = output_format(path)
    with naming(path), atomic_path(path, overwrite=overwrite) as temp:   # errors name it
        figure.savefig(temp, format=fmt, dpi=dpi if dpi is not None else figure.dpi)
    return Path(os.fspath(path))


def _new_figure(path: Optional[PathLike], size: Sequence[float], dpi: float,
                overwrite: bool) -> tuple:
    """``(figure, dpi)``: an empty figure of ``size`` inches, once ``path`` (if given)
    has a format matplotlib writes and may be written, and ``size`` and ``dpi`` are
    checked."""
    if path is not None:
        output_format(path)
        check_file_target(path, overwrite)
    (width, height), dpi = _check_size(size, dpi)
    Figure, FigureCanvasAgg = _matplotlib()
    figure = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    return figure, dpi


def plot_curves(curves: Curves, path: Optional[PathLike] = None, *,
                size: Sequence[float] = FIGURE_SIZE, dpi: float = DPI,
                title: Optional[str] = None, overwrite: bool = False,
                highlight: Union[str, Sequence[str]] = ()) -> Any:
    """One figure of one measure's curves; written to ``path`` if given (an existing
    file only with ``overwrite=True``). ``highlight``: run names to draw thick, the others
    faded. Returns the :class:`matplotlib.figure.Figure`.

    Parameters
    ----------
    curves : Curves
        One measure's curves.
    path : str or os.PathLike, optional
        Write the figure there (png, svg or pdf by extension).
    size : (float, float), default (6.4, 4.8)
        Width and height in inches.
    dpi : float, default 100
        Dots per inch (a PNG is size x dpi pixels).
    title : str, optional
        The figure's title.
    overwrite : bool, default False
        Replace an existing regular file at ``path`` (never a link, FIFO or device).
    highlight : str or sequence of str, default ()
        Run names drawn thick, the others faded.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InputError
        A bad size, dpi, run name or path.
    MissingDependencyError
        matplotlib is not installed.
    """
    if not isinstance(curves, Curves):
        raise InputError(f"plot_curves takes a Curves object, got {type(curves).__name__}")
    check_highlight(list(curves.runs), highlight)    # before the file is touched
    figure, dpi = _new_figure(path, size, dpi, overwrite)
    ax = figure.add_subplot()
    draw(ax, curves, highlight=highlight)
    figure.suptitle(title if title is not None else _title(curves, with_scheme=True),
                    fontsize="medium")          # centred on the figure, axes and legend
    if path is not None:
        save(figure, path, dpi=dpi, overwrite=overwrite)
    return figure


def _legend_below(figure: Any, handles: list, labels: list) -> None:
    """A figure legend below the panels, in as many columns (up to 6) as fit its width."""
    renderer = figure.canvas.get_renderer()
    for ncols in range(min(len(labels), GRID_LEGEND_COLUMNS), 0, -1):
        legend = figure.legend(handles, labels, loc="outside lower center", ncols=ncols,
                               fontsize=LEGEND_FONT)
        if ncols == 1 or legend.get_window_extent(renderer).width <= 0.98 * figure.bbox.width:
            return
        legend.remove()


def plot_grid(curves_by_measure: Union[Mapping[str, Curves], Sequence[Curves]],
              path: Optional[PathLike] = None, *, size: Sequence[float] = GRID_SIZE,
              dpi: float = DPI, title: Optional[str] = None, overwrite: bool = False,
              highlight: Union[str, Sequence[str]] = ()) -> Any:
    """CG, DCG, nCG and nDCG (those given) in a 2 x 2 grid, in that order, with one
    legend below; written to ``path`` if given (an existing file only with
    ``overwrite=True``). The curves must share the gain scheme, the topics and the runs.
    ``highlight``: run names to draw thick in every panel, the others faded.

    Parameters
    ----------
    curves_by_measure : mapping of str to Curves, or sequence of Curves
        The CG, DCG, nCG and nDCG curves to draw (those given).
    path : str or os.PathLike, optional
        Write the figure there (png, svg or pdf by extension).
    size : (float, float), default (11.0, 8.5)
        Width and height in inches.
    dpi : float, default 100
        Dots per inch (a PNG is size x dpi pixels).
    title : str, optional
        The figure's title.
    overwrite : bool, default False
        Replace an existing regular file at ``path`` (never a link, FIFO or device).
    highlight : str or sequence of str, default ()
        Run names drawn thick, the others faded.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InputError
        A bad size, dpi, run name or path.
    MissingDependencyError
        matplotlib is not installed.
    """
    members = list(curves_by_measure.values()) if isinstance(curves_by_measure, Mapping) \
        else list(curves_by_measure)
    if not members or not all(isinstance(c, Curves) for c in members):
        raise InputError("plot_grid takes Curves objects (one per measure, at least one)")
    by_measure = {c.measure: c for c in members}
    if len(by_measure) != len(members):
        raise InputError("plot_grid takes at most one Curves object per measure")
    first = members[0]
    for other in members[1:]:
        if other.gains != first.gains or other.topics != first.topics \
                or list(other.runs) != list(first.runs):
            raise InputError("the curves of a grid must share the gain scheme, the topics "
                             "and the runs")
    check_highlight(list(first.runs), highlight)
    figure, dpi = _new_figure(path, size, dpi, overwrite)
    axes = figure.subplots(2, 2).reshape(-1)
    legend: dict = {}                   # label -> line, over all panels, in order
    for ax, measure in zip(axes, MEASURES):
        if measure not in by_measure:
            ax.set_axis_off()
            continue
        draw(ax, by_measure[measure], legend=False, highlight=highlight)
        ax.set_title(_title(by_measure[measure], with_scheme=False), fontsize="medium")
        for line in ax.get_lines():
            legend.setdefault(line.get_label(), line)
    _legend_below(figure, list(legend.values()), list(legend))
    discounted = [c for c in members if c.discount != "none"]
    scheme = discounted[0].scheme if discounted else first.scheme
    figure.suptitle(title if title is not None
                    else f"Gain by rank: {scheme}; {len(first.topics)} topics")
    if path is not None:
        save(figure, path, dpi=dpi, overwrite=overwrite)
    return figure
