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
                            "-n", "5", "--at", "1,3")
    assert status == 0, err
    assert out.startswith("CG curves: 2 runs, 2 topics, ranks 1-5; gains identity\n")
    # run rank value ideal gap gap% reached-at
    assert _rows(out, "A.run") == [["A.run", "1", "1.50", "2.00", "0.50", "25.0%", "2"],
                                   ["A.run", "3", "3.00", "4.00", "1.00", "25.0%", "-"]]
    assert _rows(out, "B.run") == [["B.run", "1", "1.50", "2.00", "0.50", "25.0%", "2"],
                                   ["B.run", "3", "3.50", "4.00", "0.50", "12.5%", "-"]]
    assert "not within 5" in out
    assert "turns horizontal at rank 3" in out          # t1 has 3 judged documents with gain > 0
    assert err == ""


def test_ncg_area_and_both_orders(capsys, files):
    # nCG of A per topic: t1 <1, 3/5, 5/6, 5/6, 5/6>, t2 <0, 1/2, 1/2, 1/2, 1/2>
    status, out, _ = _run(capsys, files["qrels"], files["A"], "-m", "nCG", "-n", "5",
                          "--at", "2")
    assert status == 0
    assert _rows(out, "A.run")[0] == ["A.run", "2", f"{(3 / 5 + 1 / 2) / 2:.4f}", "1.0000",
                                      f"{1 - (3 / 5 + 1 / 2) / 2:.4f}",
                                      f"{100 * (1 - (3 / 5 + 1 / 2) / 2):.1f}%"]
    averaged = [(1 + 0) / 2, (3 / 5 + 1 / 2) / 2] + [(5 / 6 + 1 / 2) / 2] * 3
    area = sum(1 - v for v in averaged)
    assert _rows(out, "A.run")[1] == ["A.run", f"{area:.4f}"]
    assert "normalise_then_average" in out.splitlines()[0]

    status, out, _ = _run(capsys, files["qrels"], files["A"], "-m", "ncg", "-n", "5",
                          "--at", "2", "--order", "average_then_normalise", "--area-to", "1")
    assert _rows(out, "A.run")[0][2] == f"{2 / 3.5:.4f}"
    assert _rows(out, "A.run")[1] == ["A.run", f"{1 - 1.5 / 2:.4f}"]
    assert "ranks 1-1" in out


def test_gain_scheme_and_discount(capsys, files):
    # 0-1-10-100, DCG with the TOIS rule, b = 2 (df = 1, 1 at ranks 1, 2): at rank 2,
    # A: t1 <100, 0> -> 100, t2 <0, 1> -> 1; ideal t1 <100, 10>, t2 <1, 1>
    status, out, _ = _run(capsys, files["qrels"], files["A"], "-m", "dcg", "-g", "0-1-10-100",
                          "-n", "5", "--at", "2")
    assert status == 0
    assert out.splitlines()[0].endswith("gains 0-1-10-100, discount tois, b = 2")
    assert _rows(out, "A.run")[0][:4] == ["A.run", "2", f"{(100 + 1) / 2:.2f}",
                                          f"{(110 + 2) / 2:.2f}"]


def test_all_measures_and_a_grid(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "grid.svg"
    status, out, _ = _run(capsys, files["qrels"], files["A"], files["B"], "-m", "all",
                          "-n", "5", "--out", str(target))
    assert status == 0
    headers = [line.split()[0] for line in out.splitlines() if " curves: " in line]
    assert headers == ["CG", "DCG", "nCG", "nDCG"]
    assert out.count("stopping rule") == 1
    assert out.rstrip().endswith(f"wrote {target}")
    assert target.read_bytes().startswith(b"<?xml")


def test_png_with_the_requested_size(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curves.png"
    status, _, err = _run(capsys, files["qrels"], files["A"], "-n", "5", "--out", str(target),
                          "--size", "4,3", "--dpi", "50")
    assert status == 0, err
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (200, 150)


def test_default_reading_ranks_stay_within_the_depth(capsys, files):
    status, out, _ = _run(capsys, files["qrels"], files["A"], "-n", "20")
    assert status == 0
    assert [row[1] for row in _rows(out, "A.run")[:2]] == ["10", "20"]


@pytest.mark.parametrize("argv, status, message", [
    (["--at", "9", "-n", "5"], 1, "--at 9 is beyond the depth 5"),
    (["--area-to", "9", "-n", "5"], 1, "--area-to 9 is beyond the depth 5"),
    (["-g", "0-1-x"], 1, "unknown gain scheme"),
    (["--base", "1"], 1, "base"),
    (["--out", "curves.jpg"], 1, "unknown plot format"),
])
def test_usage_errors(capsys, files, argv, status, message):
    got, out, err = _run(capsys, files["qrels"], files["A"], *argv)
    assert got == status
    assert message in err
    assert err.count("\n") == 1 and out == ""


@pytest.mark.parametrize("argv, message", [(["-m", "map"], "invalid choice"),
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
    status, _, err = _run(capsys, files["qrels"], files["A"], str(partial), "-n", "5")
    assert status == 2
    assert "different topics" in err and "topics='qrels'" in err
    status, out, err = _run(capsys, files["qrels"], files["A"], str(partial), "-n", "5",
                            "--topics", "qrels", "-m", "cg", "--at", "1")
    assert status == 0
    assert "1 qrels topic missing from the run, scored 0: t2" in err
    assert _rows(out, "C.run")[0][2] == f"{(3 + 0) / 2:.2f}"


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
    status, out, err = _run(capsys, files["qrels"], files["A"], "--out", str(target))
    assert status == 1 and "needs matplotlib" in err and out == ""
    assert not target.exists()


def test_out_refuses_an_existing_file_unless_asked(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curves.png"
    target.write_bytes(b"my old plot")
    status, out, err = _run(capsys, files["qrels"], files["A"], "-n", "5", "--out", str(target))
    assert status == 1 and out == ""
    assert err == f"cumgain curves: error: {target} exists; pass --overwrite to replace it\n"
    assert target.read_bytes() == b"my old plot"
    status, out, _ = _run(capsys, files["qrels"], files["A"], "-n", "5", "--out", str(target),
                          "--overwrite")
    assert status == 0 and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A.run", "B.run", "curves.png",
                                                          "qrels.txt"]


def test_out_never_follows_a_link(capsys, files, tmp_path):
    pytest.importorskip("matplotlib")
    victim, link = tmp_path / "victim.txt", tmp_path / "curves.png"
    victim.write_text("precious")
    link.symlink_to(victim)
    status, _, err = _run(capsys, files["qrels"], files["A"], "-n", "5", "--out", str(link))
    assert status == 1 and "exists; pass --overwrite" in err
    dangling = tmp_path / "dangling.png"
    dangling.symlink_to(tmp_path / "nowhere.png")
    status, _, err = _run(capsys, files["qrels"], files["A"], "-n", "5", "--out", str(dangling))
    assert status == 1 and "exists; pass --overwrite" in err
    assert not (tmp_path / "nowhere.png").exists()
    status, _, _ = _run(capsys, files["qrels"], files["A"], "-n", "5", "--out", str(link),
                        "--overwrite")
    assert status == 0 and not link.is_symlink()         # the link is replaced, not followed
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
    status, out, err = _run(capsys, files["qrels"], files["A"], "-n", "5", "--out", str(target),
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
