"""One rule names runs everywhere: the run tag where all its lines agree, else the file
name, made unique (cumgain.io.run_names), in every subcommand and in the Python API."""
from __future__ import annotations

import csv
import io

import pytest

from cumgain import curves

from cumgain.io.native import parts as _native_parts

from cumgain.io.native import reader as native

from cumgain.reference import reading as reference_reading

from cumgain.io import run_names
from cumgain.cli import main
from cumgain.engine.evaluator import evaluate
from cumgain.trec_io import load_run, read_run

QRELS = "q1 0 a 2\nq1 0 b 1\nq2 0 c 1\nq2 0 d 0\n"


def _run(tags: list) -> str:
    docs = [("q1", "a"), ("q1", "b"), ("q1", "x"), ("q2", "c"), ("q2", "d"), ("q2", "y")]
    return "".join(f"{q} Q0 {d} {i} {10 - i} {tag}\n"
                   for i, ((q, d), tag) in enumerate(zip(docs, tags)))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "sub").mkdir()
    paths = {"qrels": tmp_path / "qrels"}
    paths["qrels"].write_text(QRELS)
    contents = {"bm25.run": ["BM25"] * 6, "mixed.run": ["A"] * 5 + ["B"],
                "twin.run": ["BM25"] * 6, "sub/bm25.run": ["QL"] * 5 + ["BM25"]}
    for name, tags in contents.items():
        paths[name] = tmp_path / name
        paths[name].write_text(_run(tags))
    return {name: str(path) for name, path in paths.items()}


def test_the_rule():
    assert run_names.run_names(["a.run", "b.run"], ["X", "Y"]) == ["X", "Y"]
    assert run_names.run_names(["a.run", "b.run"], ["X", ""]) == ["X", "b.run"]
    # the same tag twice: file names; the same file name twice: paths; the same path: numbered
    assert run_names.run_names(["a.run", "b.run", "c.run"], ["X", "X", "Y"]) == \
        ["a.run", "b.run", "Y"]
    assert run_names.run_names(["p/a.run", "q/a.run"], ["X", "X"]) == ["p/a.run", "q/a.run"]
    assert run_names.run_names(["a.run", "a.run"], ["", ""]) == ["a.run", "a.run#2"]
    assert run_names.run_names(["-"], [""]) == ["<stdin>"]
    assert run_names.run_names([{"q": {}}], [""]) == ["dict"]


@pytest.mark.parametrize("parts", [False, True])
def test_the_readers_know_whether_the_tags_agree(files, monkeypatch, parts):
    """The compiled reader (also when it reads a file in parts, on threads, a part
    boundary at any line; and a loaded Run) and the reference reader agree on every
    file."""
    if parts:
        monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    threads = 3 if parts else 1
    for name, agree in (("bm25.run", True), ("mixed.run", False), ("sub/bm25.run", False)):
        result = evaluate(files["qrels"], files[name], ["P@2"], threads=threads, warn=False)
        ranked = native.read_ranked(files["qrels"], files[name], ties="docno_desc",
                                    score_precision="float64", seed=0, depth=None,
                                    threads=threads)
        assert ranked.tags_agree is agree, name
        assert result.run_tags_agree is agree, name
        assert read_run(files[name]).tags_agree is agree
        reference = reference_reading.evaluate(files["qrels"], files[name], ["P@2"],
                                               warn=False)
        assert reference.run_tags_agree is agree
        assert result.run_tag == ranked.tag == reference.run_tag    # the last line's
                                                                    # (trec_eval's runid)
        loaded = evaluate(files["qrels"], load_run(files[name]), ["P@2"], warn=False)
        assert (loaded.run_tags_agree, loaded.run_tag) == (agree, reference.run_tag)


def _names(out: str, fmt: str = "csv") -> list:
    rows = list(csv.reader(io.StringIO(out)))
    return [row[0] for row in rows[1:]]


def test_every_subcommand_names_runs_alike(files, capsys):
    runs = [files["bm25.run"], files["mixed.run"], files["sub/bm25.run"]]
    # bm25.run by its tag; mixed.run and sub/bm25.run (tags that differ) by their file names
    expected = ["BM25", "mixed.run", "bm25.run"]
    assert main(["evaluate", files["qrels"], *runs, "-m", "P@2", "-f", "csv"]) == 0
    assert _names(capsys.readouterr().out) == expected
    assert main(["compare", files["qrels"], *runs, "-m", "P@2", "-f", "csv", "--test",
                 "ttest"]) == 0
    header = next(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert [name for name in header[1:] if not name.endswith(" sig")][:3] == expected
    assert main(["curves", files["qrels"], *runs, "-M", "3", "--at", "2"]) == 0
    out = capsys.readouterr().out
    assert all(f"\n{name} " in out for name in expected)
    assert list(curves.rank_runs(files["qrels"], runs, warn=False)) == expected


def test_colliding_tags_fall_back_to_file_names_then_paths(files, capsys):
    runs = [files["bm25.run"], files["twin.run"]]
    assert main(["evaluate", files["qrels"], *runs, "-m", "P@2", "-f", "csv"]) == 0
    assert _names(capsys.readouterr().out) == ["bm25.run", "twin.run"]
    same_name = run_names.run_names([files["bm25.run"], files["sub/bm25.run"]], ["", ""])
    assert same_name == [files["bm25.run"], files["sub/bm25.run"]]
