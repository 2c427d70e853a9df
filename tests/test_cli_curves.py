"""`cumgain curves`: the readings table, the plots, and the errors (via cli.main).

The fixture, by hand (gain = level; depth 5):

topic t1, judged d1:3 d2:2 d3:0 d4:1; topic t2, judged e1:1 e2:1
  ideal CG: t1 <3, 5, 6, 6, 6>, t2 <1, 2, 2, 2, 2>; average <2, 3.5, 4, 4, 4>
run A: t1 d1 d3 d2 -> <3, 0, 2>, CG <3, 3, 5, 5, 5>;
       t2 e3 (unjudged) e1 -> <0, 1>, CG <0, 1, 1, 1, 1>; average CG <1.5, 2, 3, 3, 3>
run B: t1 d2 d1 -> <2, 3>, CG <2, 5, 5, 5, 5>; t2 e1 e2 tied, docno descending: e2 e1 -> <1, 1>,
       CG <1, 2, 2, 2, 2>; average CG <1.5, 3.5, 3.5, 3.5, 3.5>
"""
import struct
import sys

import pytest

from cumgain.cli import main

QRELS = """t1 0 d1 3
t1 0 d2 2
t1 0 d3 0
t1 0 d4 1
t2 0 e1 1
t2 0 e2 1
"""
RUN_A = """t1 Q0 d1 1 0.9 A
t1 Q0 d3 2 0.8 A
t1 Q0 d2 3 0.7 A
t2 Q0 e3 1 0.9 A
t2 Q0 e1 2 0.8 A
"""
RUN_B = """t1 Q0 d2 1 0.9 B
t1 Q0 d1 2 0.8 B
t2 Q0 e1 1 0.5 B
t2 Q0 e2 2 0.5 B
"""


@pytest.fixture
def files(tmp_path):
    paths = {"qrels": tmp_path / "qrels.txt", "A": tmp_path / "A.run", "B": tmp_path / "B.run"}
    for name, text in (("qrels", QRELS), ("A", RUN_A), ("B", RUN_B)):
        paths[name].write_text(text)
    return {name: str(path) for name, path in paths.items()}


def _rows(out: str, first_column: str) -> list:
    return [line.split() for line in out.splitlines() if line.startswith(first_column + " ")]


def _run(capsys, *argv):
    status = main(["curves", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cg_readings_table(capsys, files):
    status, out, err = _run(capsys, files["qrels"], files["A"], files["B"], "-m", "cg",
                            "-M", "5", "--at", "1,3")
    assert status == 0, err
    assert out.startswith("CG curves: 2 runs, 2 topics, ranks 1-5; gains identity\n")
    # run rank value ideal gap gap% reached-at
    assert _rows(out, "A") == [["A", "1", "1.50", "2.00", "0.50", "25.0%", "2"],
                                   ["A", "3", "3.00", "4.00", "1.00", "25.0%", "-"]]
    assert _rows(out, "B") == [["B", "1", "1.50", "2.00", "0.50", "25.0%", "2"],
                                   ["B", "3", "3.50", "4.00", "0.50", "12.5%", "-"]]
    assert "not within 5" in out
    assert "turns horizontal at rank 3" in out          # t1 has 3 judged documents with gain > 0
    assert err == ""


def test_ncg_area_and_both_orders(capsys, files):
    # nCG of A per topic: t1 <1, 3/5, 5/6, 5/6, 5/6>, t2 <0, 1/2, 1/2, 1/2, 1/2>
    status, out, _ = _run(capsys, files["qrels"], files["A"], "-m", "nCG", "-M", "5",
                          "--at", "2")
    assert status == 0
    assert _rows(out, "A")[0] == ["A", "2", f"{(3 / 5 + 1 / 2) / 2:.4f}", "1.0000",
                                      f"{1 - (3 / 5 + 1 / 2) / 2:.4f}",
                                      f"{100 * (1 - (3 / 5 + 1 / 2) / 2):.1f}%"]
    averaged = [(1 + 0) / 2, (3 / 5 + 1 / 2) / 2] + [(5 / 6 + 1 / 2) / 2] * 3
    area = sum(1 - v for v in averaged)
    assert _rows(out, "A")[1] == ["A", f"{area:.4f}"]
    assert "normalise_then_average" in out.splitlines()[0]

    status, out, _ = _run(capsys, files["qrels"], files["A"], "-m", "ncg", "-M", "5",
                          "--at", "2", "--order", "average_then_normalise", "--area-to", "1")
    assert _rows(out, "A")[0][2] == f"{2 / 3.5:.4f}"
    assert _rows(out, "A")[1] == ["A", f"{1 - 1.5 / 2:.4f}"]
    assert "ranks 1-1" in out


def test_gain_scheme_and_discount(capsys, files):
    # 0-1-10-100, DCG with the TOIS rule, b = 2 (df = 1, 1 at ranks 1, 2): at rank 2,
    # A: t1 <100, 0> -> 100, t2 <0, 1> -> 1; ideal t1 <100, 10>, t2 <1, 1>
    status, out, _ = _run(capsys, files["qrels"], files["A"], "-m", "dcg", "-g", "0-1-10-100",
                          "-M", "5", "--at", "2", "--discount", "tois")
    assert status == 0
    assert out.splitlines()[0].endswith("gains 0-1-10-100, discount tois, b = 2")
    assert _rows(out, "A")[0][:4] == ["A", "2", f"{(100 + 1) / 2:.2f}",
                                          f"{(110 + 2) / 2:.2f}"]


def test_all_measures_and_a_grid(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "grid.svg"
    status, out, err = _run(capsys, files["qrels"], files["A"], files["B"], "-m", "all",
                            "-M", "5", "--plot", str(target))
    assert status == 0
    headers = [line.split()[0] for line in out.splitlines() if " curves: " in line]
    assert headers == ["CG", "DCG", "nCG", "nDCG"]
    assert out.count("stopping rule") == 1
    assert err == f"cumgain curves: wrote {target}\n"
    assert target.read_bytes().startswith(b"<?xml")


def test_png_with_the_requested_size(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curves.png"
    status, _, err = _run(capsys, files["qrels"], files["A"], "-M", "5", "--plot", str(target),
                          "--size", "4,3", "--dpi", "50")
    assert status == 0, err
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (200, 150)


def test_default_reading_ranks_stay_within_the_depth(capsys, files):
    status, out, _ = _run(capsys, files["qrels"], files["A"], "-M", "20")
    assert status == 0
    assert [row[1] for row in _rows(out, "A")[:2]] == ["10", "20"]


@pytest.mark.parametrize("argv, status, message", [
    (["--at", "9", "-M", "5"], 1, "--at 9 is beyond the depth 5"),
    (["--area-to", "9", "-M", "5"], 1, "--area-to 9 is beyond the depth 5"),
    (["-g", "0-1-x"], 1, "unknown gain scheme"),
    (["--base", "1"], 1, "base"),
    (["--plot", "curves.jpg"], 1, "unknown plot format"),
])
def test_usage_errors(capsys, files, argv, status, message):
    got, out, err = _run(capsys, files["qrels"], files["A"], *argv)
    assert got == status
    assert message in err
    assert err.count("\n") == 1 and out == ""


@pytest.mark.parametrize("argv, message", [(["-m", "map"], "'map' is not a curve"),
                                           (["--at", "0"], "must be at least 1"),
                                           (["--at", "10,,20"], "comma-separated"),
                                           (["--size", "4"], "WIDTH,HEIGHT"),
                                           (["--dpi", "-3"], "positive")])
def test_usage_errors_of_the_parser(capsys, files, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["curves", files["qrels"], files["A"], *argv])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_input_errors(capsys, files, tmp_path):
    status, _, err = _run(capsys, files["qrels"], str(tmp_path / "missing.run"))
    assert status == 2 and "missing.run" in err and err.count("\n") == 1
    status, _, err = _run(capsys, files["qrels"], files["A"], files["A"])
    assert status == 1 and "given twice" in err


def test_runs_on_different_topics(capsys, files, tmp_path):
    partial = tmp_path / "C.run"
    partial.write_text("t1 Q0 d1 1 0.9 C\n")
    status, _, err = _run(capsys, files["qrels"], files["A"], str(partial), "-M", "5")
    assert status == 2
    assert "different topics" in err and "--intersect" in err and "--topics qrels" in err
    status, out, err = _run(capsys, files["qrels"], files["A"], str(partial), "-M", "5",
                            "--topics", "qrels", "-m", "cg", "--at", "1")
    assert status == 0
    assert "1 qrels topic missing from the run, scored 0: t2" in err
    assert _rows(out, "C")[0][2] == f"{(3 + 0) / 2:.2f}"


def test_no_common_topic(capsys, files, tmp_path):
    other = tmp_path / "X.run"
    other.write_text("t9 Q0 z 1 0.9 X\n")
    status, _, err = _run(capsys, files["qrels"], str(other))
    assert status == 7
    assert "no topic has both results and judgments" in err


def test_out_without_matplotlib(capsys, files, monkeypatch, tmp_path):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends",
                 "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    target = tmp_path / "curves.png"
    status, out, err = _run(capsys, files["qrels"], files["A"], "--plot", str(target))
    assert status == 1 and "needs matplotlib" in err and out == ""
    assert not target.exists()


def test_out_refuses_an_existing_file_unless_asked(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curves.png"
    target.write_bytes(b"my old plot")
    status, out, err = _run(capsys, files["qrels"], files["A"], "-M", "5", "--plot", str(target))
    assert status == 1 and out == ""
    assert err == f"cumgain curves: error: {target} exists; pass --overwrite to replace it\n"
    assert target.read_bytes() == b"my old plot"
    status, out, _ = _run(capsys, files["qrels"], files["A"], "-M", "5", "--plot", str(target),
                          "--overwrite")
    assert status == 0 and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A.run", "B.run", "curves.png",
                                                          "qrels.txt"]


def test_out_never_follows_a_link(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    victim, link = tmp_path / "victim.txt", tmp_path / "curves.png"
    victim.write_text("precious")
    link.symlink_to(victim)
    dangling = tmp_path / "dangling.png"
    dangling.symlink_to(tmp_path / "nowhere.png")
    for path in (link, dangling):
        for flags in ((), ("--overwrite",)):
            status, _, err = _run(capsys, files["qrels"], files["A"], "-M", "5", "--plot",
                                  str(path), *flags)
            assert status == 1 and "is a symbolic link; cumgain does not write through" in err
    assert link.is_symlink() and dangling.is_symlink()   # neither followed nor replaced
    assert not (tmp_path / "nowhere.png").exists()
    assert victim.read_text() == "precious"


def test_a_failed_write_keeps_the_old_file(capsys, files, tmp_path, monkeypatch):
    """The disk fills up half-way through the PNG: one line on stderr, exit 2, the old
    file as it was and no temporary left."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    def savefig(self, fname, **kwargs):
        with open(fname, "wb") as out:
            out.write(b"\x89PNG\r\n\x1a\n half a plot")
        raise OSError(28, "No space left on device", str(fname))

    monkeypatch.setattr(Figure, "savefig", savefig)
    target = tmp_path / "curves.png"
    target.write_bytes(b"my old plot")
    status, out, err = _run(capsys, files["qrels"], files["A"], "-M", "5", "--plot", str(target),
                            "--overwrite")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "No space left on device" in err
    assert target.read_bytes() == b"my old plot"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A.run", "B.run", "curves.png",
                                                          "qrels.txt"]


def test_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["curves", "-h"])
    assert exit_info.value.code == 0
    assert "stopping rule" in capsys.readouterr().out


# run C: t1 d4 d3 d2 d1 -> <1, 0, 2, 3>, CG at 5: 6; t2 e3 e4 e5 e1 e2 -> <0, 0, 0, 1, 1>,
# CG 2; average CG at rank 5: 4 (A 3, B 3.5), but C finds the relevant documents late:
# nDCG@5 (tois, b = 2) A (4.26/5.63 + 1/2) / 2 = 0.63, B (5/5.63 + 1) / 2 = 0.94,
# C (3.76/5.63 + 0.93/2) / 2 = 0.57
RUN_C = """t1 Q0 d4 1 0.9 C
t1 Q0 d3 2 0.8 C
t1 Q0 d2 3 0.7 C
t1 Q0 d1 4 0.6 C
t2 Q0 e3 1 0.9 C
t2 Q0 e4 2 0.8 C
t2 Q0 e5 3 0.7 C
t2 Q0 e1 4 0.6 C
t2 Q0 e2 5 0.5 C
"""


@pytest.fixture
def plotted(monkeypatch):
    """The highlight= each plot call got, and the line widths of the figure it drew."""
    from cumgain import plot
    calls = []

    def spy(function):
        def wrapper(*args, **kwargs):
            figure = function(*args, **kwargs)
            widths = {line.get_label(): line.get_linewidth()
                      for line in figure.axes[0].get_lines()}
            calls.append((kwargs["highlight"], widths))
            return figure
        return wrapper

    monkeypatch.setattr(plot, "plot_curves", spy(plot.plot_curves))
    monkeypatch.setattr(plot, "plot_grid", spy(plot.plot_grid))
    return calls


@pytest.mark.parametrize("argv, highlighted", [
    (["-m", "cg", "--top", "1"], ["C"]),                     # CG at rank 5: C 4, B 3.5
    (["-m", "all", "--top", "1"], ["B"]),                    # the grid: by nDCG
    (["-m", "cg", "--top", "2"], ["C", "B"]),
    (["-m", "cg", "--top", "9"], ["C", "B", "A"]),
    (["--highlight", "A"], ["A"]),
    (["-m", "cg", "--highlight", "B", "--top", "2", "--highlight", "A"],
     ["B", "A", "C"]),
])
def test_highlight_and_top_emphasise_runs(capsys, files, tmp_path, plotted, argv, highlighted):
    pytest.importorskip("matplotlib")
    from cumgain import plot
    (tmp_path / "C.run").write_text(RUN_C)
    status, _, err = _run(capsys, files["qrels"], files["A"], files["B"], str(tmp_path / "C.run"),
                          "-M", "5", "--plot", str(tmp_path / "c.png"), *argv)
    assert status == 0, err
    ((given, widths),) = plotted
    assert given == highlighted
    assert {name for name in ("A", "B", "C")
            if widths[name] == plot.HIGHLIGHTED["linewidth"]} == set(highlighted)
    assert {name for name in ("A", "B", "C")
            if widths[name] == plot.FADED["linewidth"]} == {"A", "B", "C"} - set(
                highlighted)


def test_no_emphasis_without_highlight_or_top(capsys, files, tmp_path, plotted):
    pytest.importorskip("matplotlib")
    from cumgain import plot
    status, _, _ = _run(capsys, files["qrels"], files["A"], files["B"], "-M", "5",
                        "--plot", str(tmp_path / "c.png"))
    assert status == 0
    ((given, widths),) = plotted
    assert given == [] and widths["A"] == widths["B"] == plot.WIDTH


@pytest.mark.parametrize("argv, message", [
    (["--highlight", "C", "--plot", "{tmp}/c.png"],
     ("cumgain curves: error: no run named 'C' to highlight; the runs are 'A', 'B'\n")),
    (["--highlight", "A"],
     "cumgain curves: error: --highlight and --top mark runs on the plot: add --plot FILE\n"),
    (["--top", "1"],
     "cumgain curves: error: --highlight and --top mark runs on the plot: add --plot FILE\n"),
])
def test_highlight_errors(capsys, files, tmp_path, argv, message):
    if "--plot" in argv:        # (without matplotlib, --plot itself is the error)
        pytest.importorskip("matplotlib")
    argv = [arg.format(tmp=tmp_path) for arg in argv]
    status, out, err = _run(capsys, files["qrels"], files["A"], files["B"], *argv)
    assert (status, out, err) == (1, "", message)
    assert not (tmp_path / "c.png").exists()


def test_top_must_be_positive(capsys, files):
    with pytest.raises(SystemExit) as exit_info:
        main(["curves", files["qrels"], files["A"], "--top", "0"])
    assert exit_info.value.code == 1
    assert "must be at least 1" in capsys.readouterr().err


def test_help_describes_the_emphasis(capsys):
    with pytest.raises(SystemExit):
        main(["curves", "-h"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--highlight RUN" in out and "--top N" in out
    assert "the N runs whose curves end highest" in out


@pytest.mark.parametrize("flag", [["-l", "2"], ["-J"]])
def test_level_and_judged_only_are_refused_saying_why(capsys, files, flag):
    with pytest.raises(SystemExit) as exited:       # (argparse's usage error)
        main(["curves", files["qrels"], files["A"], *flag])
    assert exited.value.code == 1
    assert f"{flag[0]} does not apply to curves: a curve sums graded gains" \
        in capsys.readouterr().err


def test_a_run_given_twice_is_refused(capsys, files, tmp_path):
    alias = tmp_path / "alias.run"
    alias.symlink_to(files["A"])
    for second in (files["A"], str(alias)):
        status, _, err = _run(capsys, files["qrels"], files["A"], second)
        assert status == 1 and "is given twice" in err and "compared with itself" in err


def test_help_says_what_seed_and_intersect_do_here(capsys):
    import argparse
    from cumgain.cli import options
    texts = {}
    for command in ("evaluate", "compare", "curves"):
        parser = argparse.ArgumentParser()
        options.add_topics(parser, command=command)
        options.add_ranking(parser, command=command)
        texts[command] = {action.dest: action.help for action in parser._actions}
    assert "randomization" in texts["compare"]["seed"]
    assert "randomization" not in texts["evaluate"]["seed"]
    assert "randomization" not in texts["curves"]["seed"]
    assert "own topics" in texts["evaluate"]["intersect"]
    assert "ideal curve" in texts["curves"]["intersect"]
    assert "paired test" in texts["compare"]["intersect"]
