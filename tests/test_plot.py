"""Plots of the curves (cumgain.plot): files, formats, sizes, and what is drawn."""
import struct
import subprocess
import sys

import pytest

from cumgain import curves
from cumgain.exceptions import InputError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# two topics; judged gains {1, 1} and {3, 3}: the ideal CG turns horizontal at rank 2
RUNS = {"first": [[1, 0, 1], [0, 3, 0]], "second": [[0, 0, 1], [3, 0, 0]]}
JUDGED = [[1, 1], [3, 3]]


def _png_size(data: bytes) -> tuple:
    """Width and height from the IHDR chunk (bytes 16-24 of a PNG)."""
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _curves(measure, **kwargs):
    return curves.from_gains(RUNS, JUDGED, measure, depth=6, mapping="0-1-10-100", **kwargs)


def _all_measures():
    return {measure: _curves(measure) for measure in curves.MEASURES}


def test_importing_draws_nothing_and_needs_no_matplotlib(tmp_path):
    code = ("import sys, cumgain, cumgain.curves, cumgain.plot, cumgain.cli.curves, cumgain.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    # cwd: not the checkout, whose cgcore/ has no compiled modules in a fresh clone
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=tmp_path)
    assert done.stdout.strip() == "[]"


def test_plotting_never_touches_pyplot(tmp_path):
    pytest.importorskip("matplotlib")
    code = ("import sys; from cumgain import curves, plot; "
            "c = curves.from_gains({'r': [[1, 0]]}, [[1]], 'CG', depth=2); "
            f"plot.plot_curves(c, {str(tmp_path / 'x.png')!r}); "
            "print('matplotlib.pyplot' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=tmp_path)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("size, dpi, pixels", [((4, 3), 50, (200, 150)),
                                               ((6.4, 4.8), 100, (640, 480))])
def test_png_has_the_requested_pixel_size(tmp_path, size, dpi, pixels):
    pytest.importorskip("matplotlib")
    from cumgain import plot
    path = tmp_path / "curves.png"
    plot.plot_curves(_curves("nDCG"), path, size=size, dpi=dpi)
    assert _png_size(path.read_bytes()) == pixels


def test_grid_png_size(tmp_path):
    pytest.importorskip("matplotlib")
    from cumgain import plot
    path = tmp_path / "grid.png"
    plot.plot_grid(_all_measures(), path, dpi=40)
    assert _png_size(path.read_bytes()) == (11 * 40, round(8.5 * 40))


@pytest.mark.parametrize("suffix, magic", [(".svg", b"<?xml"), (".pdf", b"%PDF-"),
                                           (".PNG", PNG_MAGIC)])
def test_format_follows_the_extension(tmp_path, suffix, magic):
    pytest.importorskip("matplotlib")
    from cumgain import plot
    path = tmp_path / f"curves{suffix}"
    plot.plot_curves(_curves("CG"), path)
    data = path.read_bytes()
    assert data.startswith(magic)
    assert len(data) > 1000
    if suffix == ".svg":
        assert b"<svg" in data[:2000]


def test_unknown_format_is_refused_before_drawing(tmp_path):
    from cumgain import plot
    target = tmp_path / "curves.jpg"
    with pytest.raises(InputError, match="unknown plot format '.jpg'"):
        plot.plot_curves(_curves("CG"), target)
    assert not target.exists()
    with pytest.raises(InputError, match="no extension"):
        plot.output_format("curves")


def test_an_existing_file_is_replaced_only_when_asked(tmp_path):
    pytest.importorskip("matplotlib")
    from cumgain import plot
    path = tmp_path / "curves.png"
    path.write_bytes(b"mine")
    with pytest.raises(InputError, match="curves.png exists; pass overwrite=True"):
        plot.plot_curves(_curves("CG"), path)
    with pytest.raises(InputError, match="curves.png exists; pass overwrite=True"):
        plot.plot_grid(_all_measures(), path)
    assert path.read_bytes() == b"mine"
    plot.plot_grid(_all_measures(), path, dpi=20, overwrite=True)
    assert path.read_bytes()[:8] == PNG_MAGIC
    assert [p.name for p in tmp_path.iterdir()] == ["curves.png"]


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_save_leaves_no_file(tmp_path, monkeypatch, error):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from cumgain import plot

    def savefig(self, fname, **kwargs):
        with open(fname, "wb") as out:
            out.write(PNG_MAGIC)
        raise error

    monkeypatch.setattr(Figure, "savefig", savefig)
    with pytest.raises(type(error)):
        plot.plot_curves(_curves("CG"), tmp_path / "new.png")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "old.png").write_bytes(b"mine")
    with pytest.raises(type(error)):
        plot.plot_curves(_curves("CG"), tmp_path / "old.png", overwrite=True)
    assert [p.name for p in tmp_path.iterdir()] == ["old.png"]
    assert (tmp_path / "old.png").read_bytes() == b"mine"


def test_one_line_per_run_and_the_ideal_dashed():
    pytest.importorskip("matplotlib")
    from cumgain import plot
    figure = plot.plot_curves(_curves("CG"))
    (ax,) = figure.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines) == ["first", "second", "ideal", "ideal horizontal from rank 2"]
    assert lines["ideal"].get_linestyle() == "--"
    # levels <1, 0, 1> and <0, 3, 0> under 0-1-10-100: CG <1, 1, 2, ...> and <0, 100, 100, ...>
    assert lines["first"].get_ydata().tolist() == [(1 + 0) / 2, (1 + 100) / 2] + [(2 + 100) / 2] * 4
    assert lines["ideal"].get_xdata().tolist() == [1, 2, 3, 4, 5, 6]
    assert [text.get_text() for text in ax.get_legend().get_texts()] == list(lines)
    assert ax.get_xlabel() == "rank"
    assert "gains 0-1-10-100" in figure.get_suptitle()


def test_title_names_the_gains_and_the_base():
    pytest.importorskip("matplotlib")
    from cumgain import plot
    figure = plot.plot_curves(_curves("nDCG", base=10, order="average_then_normalise"))
    title = figure.get_suptitle()        # centred on the figure: axes and legend
    assert "nDCG" in title and "gains 0-1-10-100" in title and "b = 10" in title
    assert "averaged, then normalised" in title
    lines = [line.get_label() for line in figure.axes[0].get_lines()]
    assert lines == ["first", "second", "ideal"]      # no stopping line on normalised curves
    assert plot.plot_curves(_curves("CG"), title="mine").get_suptitle() == "mine"


def test_grid_of_the_four_measures():
    pytest.importorskip("matplotlib")
    from cumgain import plot
    figure = plot.plot_grid(_all_measures())
    assert [ax.get_title().split()[0] for ax in figure.axes] == ["CG", "DCG", "nCG", "nDCG"]
    assert "gains 0-1-10-100" in figure.get_suptitle() and "b = 2" in figure.get_suptitle()
    # one legend for the grid, below the panels
    assert all(ax.get_legend() is None for ax in figure.axes)
    (legend,) = figure.legends
    assert [text.get_text() for text in legend.get_texts()] == [
        "first", "second", "ideal", "ideal horizontal from rank 2"]
    partial = plot.plot_grid([_curves("nCG"), _curves("nDCG")])
    assert [ax.axison for ax in partial.axes] == [False, False, True, True]


def test_grid_refuses_mixed_curves():
    from cumgain import plot
    other = curves.from_gains(RUNS, JUDGED, "DCG", depth=6, mapping="0-1-2-3")
    with pytest.raises(InputError, match="share the gain scheme"):
        plot.plot_grid([_curves("CG"), other])
    with pytest.raises(InputError, match="one Curves object per measure"):
        plot.plot_grid([_curves("CG"), _curves("CG")])
    with pytest.raises(InputError, match="takes Curves"):
        plot.plot_grid([])


@pytest.mark.parametrize("size, dpi", [((0, 3), 100), ((4,), 100), ("big", 100), ((4, 3), 0)])
def test_bad_size_or_dpi(size, dpi):
    from cumgain import plot
    with pytest.raises(InputError):
        plot.plot_curves(_curves("CG"), size=size, dpi=dpi)


def test_without_matplotlib_the_error_says_what_to_install(monkeypatch):
    from cumgain import plot
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends",
                 "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)     # import raises ImportError
    with pytest.raises(ImportError, match="pip install"):
        plot.plot_curves(_curves("CG"))


def test_draw_onto_a_users_axes():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from cumgain import plot
    figure = Figure()
    ax = figure.add_subplot()
    plot.draw(ax, _curves("nCG"), legend=False)
    assert ax.get_legend() is None
    assert [line.get_label() for line in ax.get_lines()] == ["first", "second", "ideal"]
    assert ax.get_ylim() == (0, 1.05)


# Many runs: styles, legend, emphasis

def _many(count, measure="CG", name="run{:02d}"):
    """``count`` runs on two topics, depth 20: run r finds gain g = 3 (r + 1) / count at
    ranks 1-10 of the first topic and 3-8 of the second, and ends higher than run r - 1;
    the ideal (gain 3 at ranks 1-10 and 1-6) turns horizontal at rank 10."""
    judged = [[3] * 10, [3] * 6]
    gains = {name.format(r): [[3 * (r + 1) / count] * 10, [0, 0] + [3 * (r + 1) / count] * 6]
             for r in range(count)}
    return curves.from_gains(gains, judged, measure, depth=20)


def test_twenty_runs_and_the_ideal_have_distinct_styles():
    pytest.importorskip("matplotlib")
    from cumgain import plot
    (ax,) = plot.plot_curves(_many(20)).axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    styles = [(line.get_color(), line.get_linestyle(), line.get_marker())
              for line in lines.values()][:21]                 # 20 runs and the ideal
    assert len(set(styles)) == 21
    runs = styles[:20]
    assert len({(colour, marker) for colour, _, marker in runs}) == 20
    ideal = (lines["ideal"].get_color(), lines["ideal"].get_linestyle())
    assert ideal == ("black", "--")
    assert all(colour != "black" and style != "--" for colour, style, _ in runs)
    # run i gets style i, whatever the other runs
    assert [plot.run_style(i) for i in range(20)] == [
        {"color": c, "linestyle": s, "marker": m} for c, s, m in runs]
    (ax,) = plot.plot_curves(_many(3)).axes
    assert [line.get_color() for line in ax.get_lines()[:3]] == [c for c, _, _ in runs[:3]]


def test_run_styles_are_distinct_for_a_hundred_runs():
    from cumgain import plot
    styles = [plot.run_style(i) for i in range(100)]
    assert len({(s["color"], s["marker"]) for s in styles}) == 100
    assert all(s["color"] != plot.IDEAL_STYLE["color"]
               and s["linestyle"] != plot.IDEAL_STYLE["linestyle"] for s in styles)


def _inside(inner, outer) -> bool:
    return (outer.x0 <= inner.x0 and inner.x1 <= outer.x1
            and outer.y0 <= inner.y0 and inner.y1 <= outer.y1)


@pytest.mark.slow
@pytest.mark.parametrize("count", [3, 10, 17, 20])
@pytest.mark.parametrize("grid, size, name", [(False, (6.4, 4.8), "run{:02d}"),
                                              (False, (4, 3), "run{:02d}"),
                                              (False, (6.4, 4.8), "bm25_rm3_k{:02d}_tuned.run"),
                                              (True, (11, 8.5), "run{:02d}"),
                                              (True, (11, 8.5), "bm25_rm3_k{:02d}_tuned.run")])
def test_the_legend_lies_whole_in_the_figure_beside_the_axes(tmp_path, count, grid, size,
                                                             name):
    pytest.importorskip("matplotlib")
    from cumgain import plot
    path = tmp_path / "curves.png"
    if grid:
        figure = plot.plot_grid({m: _many(count, m, name) for m in curves.MEASURES}, path,
                                size=size, dpi=50)
        (legend,) = figure.legends
    else:
        figure = plot.plot_curves(_many(count, "CG", name), path, size=size, dpi=50)
        legend = figure.axes[0].get_legend()
    assert len(legend.get_texts()) == count + 2          # the runs, the ideal, the stop
    figure.canvas.draw()
    box = legend.get_window_extent(figure.canvas.get_renderer())
    width, height = _png_size(path.read_bytes())
    assert (width, height) == (round(size[0] * 50), round(size[1] * 50))
    assert (figure.bbox.width, figure.bbox.height) == (width, height)
    assert _inside(box, figure.bbox)
    for ax in figure.axes:
        assert not box.overlaps(ax.bbox)                  # never over the data area
        if size != (4, 3):      # there, 20 runs' legend takes 2 of the 4 inches and more
            assert ax.bbox.width > 0.4 * width / (2 if grid else 1)


def _legend_columns(figure) -> int:
    figure.canvas.draw()
    texts = (figure.legends or [figure.axes[0].get_legend()])[0].get_texts()
    return len({round(text.get_window_extent().x0) for text in texts})


def test_a_tall_legend_takes_several_columns():
    pytest.importorskip("matplotlib")
    from cumgain import plot
    assert _legend_columns(plot.plot_curves(_many(20))) == 1
    assert _legend_columns(plot.plot_curves(_many(20), size=(4, 3))) == 2
    assert _legend_columns(plot.plot_curves(_many(40))) == 2
    assert _legend_columns(plot.plot_grid([_many(20, "nDCG")])) == 6
    long_names = [_many(20, "nDCG", "bm25_rm3_k{:02d}_tuned.run")]
    assert _legend_columns(plot.plot_grid(long_names)) == 5     # 6 would not fit the width


def _weights(figure, run_count):
    return {line.get_label(): (line.get_linewidth(), line.get_alpha())
            for ax in figure.axes for line in ax.get_lines()[:run_count + 1]}


def test_highlight_draws_the_named_runs_thick_and_the_others_faded():
    pytest.importorskip("matplotlib")
    from cumgain import plot
    many = _many(5)
    plain = _weights(plot.plot_curves(many), 5)
    assert plain == {**{f"run{r:02d}": (plot.WIDTH, None) for r in range(5)},
                     "ideal": (plot.IDEAL_STYLE["linewidth"], None)}
    thick = (plot.HIGHLIGHTED["linewidth"], plot.HIGHLIGHTED["alpha"])
    faded = (plot.FADED["linewidth"], plot.FADED["alpha"])
    marked = _weights(plot.plot_curves(many, highlight=["run03", "run01"]), 5)
    assert marked == {"run00": faded, "run01": thick, "run02": faded, "run03": thick,
                      "run04": faded, "ideal": plain["ideal"]}
    assert _weights(plot.plot_curves(many, highlight="run04"), 5)["run04"] == thick
    grid = plot.plot_grid([_many(5, m) for m in curves.MEASURES], highlight=("run02",))
    for ax in grid.axes:
        widths = [line.get_linewidth() for line in ax.get_lines()[:5]]
        assert widths == [faded[0], faded[0], thick[0], faded[0], faded[0]]
    assert [t.get_alpha() for t in grid.legends[0].get_lines()[:3]] == [0.3, 0.3, 1.0]


def test_unknown_highlight_names_are_refused_before_drawing(tmp_path):
    from cumgain import plot
    target = tmp_path / "curves.png"
    with pytest.raises(ValueError, match="no run named 'run09' to highlight; the runs are "
                                         "'run00', 'run01', 'run02'"):
        plot.plot_curves(_many(3), target, highlight=["run01", "run09"])
    with pytest.raises(InputError, match="no run named 'r'"):
        plot.plot_grid([_many(3, "CG")], target, highlight=["r"])
    with pytest.raises(InputError, match="highlight must be run names"):
        plot.plot_curves(_many(3), target, highlight=7)
    assert not target.exists()


def test_best_runs_end_highest():
    from cumgain import plot
    many = _many(4)              # run r ends higher than run r - 1
    assert plot.best_runs(many, 2) == ["run03", "run02"]
    assert plot.best_runs(many, 9) == ["run03", "run02", "run01", "run00"]
    tied = curves.from_gains({"a": [[1, 0]], "b": [[0, 3]], "c": [[3, 0]]}, [[3, 1]], "CG",
                             depth=2)          # CG at rank 2: a 1, b 3, c 3
    assert plot.best_runs(tied, 2) == ["b", "c"]
    with pytest.raises(InputError, match="n must be a positive integer"):
        plot.best_runs(many, 0)
