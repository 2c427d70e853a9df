"""`cumgain convert`: a TREC run (or qrels) file to Parquet, partitioned by topic if asked.

The Parquet files are read back with pyarrow alone and compared with the text file
split by hand; the topic-partitioned layout must keep whole topics per file, sorted ids
and each topic's lines in file order, and evaluate on Dask exactly like the text file.
"""
from __future__ import annotations

import errno
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dask.dataframe")

import cumgain
from cumgain import cli
from cumgain.exceptions import InputError

MANIFEST = "_cumgain_manifest.json"

GOLDEN = Path(__file__).resolve().parent / "golden"


def run_main(capsys, *args):
    status = cli.main(["convert", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def run_file(tmp_path) -> Path:
    """Topics interleaved and out of order; ties; a comment and a blank line."""
    rng = np.random.default_rng(3)
    lines = ["# a comment\n", "\n"]
    for i in range(300):
        topic = ["12", "3", "101", "7", "20"][rng.integers(0, 5)]
        lines.append(f"{topic} Q0 doc{i} {i} {round(float(rng.normal(2, 1)), 1)!r} mytag\n")
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    return path


def rows_of(path: Path) -> list:
    """(topic, docno, score) of each data line, in file order."""
    rows = []
    for line in path.read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            rows.append((fields[0], fields[2], float(fields[4])))
    return rows


def parquet_files(folder: Path) -> list:
    return sorted(folder.glob("part.*.parquet"), key=lambda p: int(p.name.split(".")[1]))


def test_partition_by_topic_layout(capsys, run_file, tmp_path):
    out = tmp_path / "run.parquet"
    status, stdout, stderr = run_main(capsys, run_file, out, "--partition-by-topic",
                                      "--rows-per-file", 50)
    assert status == 0 and stderr == ""
    files = parquet_files(out)
    assert stdout == (f"{run_file}: 300 rows, 5 topics -> {out} ({len(files)} Parquet files, "
                      "partitioned by topic)\n")
    expected = rows_of(run_file)
    seen, topics_in_order = set(), []
    for path in files:
        table = pq.read_table(path).to_pydict()
        assert set(table) == {"query_id", "doc_id", "score"}
        file_topics = list(dict.fromkeys(table["query_id"]))
        assert not set(file_topics) & seen                      # whole topics per file
        seen |= set(file_topics)
        topics_in_order += file_topics
        for topic in file_topics:                                # lines in file order
            mine = [(q, d, s) for q, d, s in zip(table["query_id"], table["doc_id"],
                                                 table["score"]) if q == topic]
            assert mine == [row for row in expected if row[0] == topic]
    assert topics_in_order == sorted({row[0] for row in expected})   # "101" < "12" < "20"
    assert len(files) >= 3


def test_file_order_layout(capsys, run_file, tmp_path):
    out = tmp_path / "flat"
    status, stdout, _ = run_main(capsys, run_file, out, "--rows-per-file", 128)
    assert status == 0 and "(3 Parquet files, in file order)" in stdout
    rows = []
    for path in parquet_files(out):
        table = pq.read_table(path).to_pydict()
        assert list(table) == ["query_id", "doc_id", "score"]    # no index column
        rows += list(zip(table["query_id"], table["doc_id"], table["score"]))
    expected = rows_of(run_file)
    first_seen = list(dict.fromkeys(row[0] for row in expected))
    assert rows == sorted(expected, key=lambda row: first_seen.index(row[0]))   # stable


def test_qrels(capsys, tmp_path):
    out = tmp_path / "qrels.parquet"
    status, stdout, _ = run_main(capsys, GOLDEN / "tiny.qrels", out, "--qrels",
                                 "--partition-by-topic")
    assert status == 0 and "Parquet file, partitioned by topic" in stdout
    table = pq.read_table(parquet_files(out)[0]).to_pydict()
    expected = [line.split() for line in (GOLDEN / "tiny.qrels").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    by_topic = sorted(expected, key=lambda fields: fields[0])
    assert list(zip(table["query_id"], table["doc_id"], table["relevance"])) == \
        [(q, d, float(r)) for q, _, d, r in by_topic]


def test_round_trip_evaluates_like_the_text_file(capsys, run_file, tmp_path):
    import cumgain.dask as cgd
    qrels = {t: {f"doc{i}": i % 4 for i in range(0, 300, 3)} for t in ("3", "7", "12", "20")}
    out = tmp_path / "run.parquet"
    assert run_main(capsys, run_file, out, "--partition-by-topic", "--rows-per-file", 40)[0] == 0
    measures = ["map", "ndcg_cut_10", "P_5", "nDCG@10(discount=tois, gains=0-1-10-100)"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", cgd.ShuffleWarning)
        lazy = cgd.evaluate(qrels, out, measures, ties="input_order", warn=False)
    result = lazy.compute(scheduler="sync")
    reference = cumgain.evaluate(qrels, run_file, measures, ties="input_order", warn=False)
    assert result.topics == reference.topics and result.run_only_topics == ("101",)
    for name in reference.values:
        assert np.array_equal(result.values[name], reference.values[name])
        assert result.means[name] == reference.means[name]


def test_malformed_line_is_one_line_with_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 two t\n")
    status, stdout, stderr = run_main(capsys, bad, tmp_path / "out")
    assert status == cli.EXIT_INPUT and stdout == ""
    assert stderr == f"cumgain convert: error: {bad}:2: score 'two' is not a number: " \
                     "'q1 Q0 d2 2 two t'\n"
    assert not (tmp_path / "out").exists()


def test_qrels_flag_reads_the_qrels_grammar(capsys, tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 t\n")
    status, _, stderr = run_main(capsys, run, tmp_path / "out", "--qrels")
    assert status == cli.EXIT_INPUT
    assert stderr == (f"cumgain convert: error: {run}:1: expected 4 fields (qid iter docno rel), "
                      "found 6: 'q1 Q0 d1 1 2.0 t'\n")


def test_duplicates_policy(capsys, tmp_path):
    dup = tmp_path / "dup.txt"
    dup.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\n")
    status, _, stderr = run_main(capsys, dup, tmp_path / "out")
    assert status == cli.EXIT_INPUT and "duplicate docno 'd1' in topic 'q1': lines 1 and 2" in stderr
    with pytest.warns(cumgain.trec_io.DuplicatesDroppedWarning):
        status, _, _ = run_main(capsys, dup, tmp_path / "out", "--duplicates", "first")
    assert status == 0
    assert pq.read_table(tmp_path / "out").to_pydict()["score"] == [2.0]


def test_existing_output_needs_overwrite(capsys, run_file, tmp_path):
    out = tmp_path / "out"
    assert run_main(capsys, run_file, out, "--rows-per-file", 100)[0] == 0
    old = {p.name for p in out.iterdir()}
    status, _, stderr = run_main(capsys, run_file, out)
    assert status == cli.EXIT_USAGE
    assert stderr == f"cumgain convert: error: {out} exists; pass --overwrite to replace it\n"
    assert {p.name for p in out.iterdir()} == old
    status, stdout, _ = run_main(capsys, run_file, out, "--overwrite", "--rows-per-file", 1000)
    assert status == 0 and "(1 Parquet file, in file order)" in stdout
    assert {p.name for p in out.iterdir()} == {"part.0.parquet", MANIFEST}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "run.txt"]   # nothing aside


# ---------------------------------------------------------------- complete or absent

KILL_AFTER_TWO_FILES = """
import os, sys, time
import pyarrow.parquet as pq
real, written = pq.write_table, []
def write_table(*args, **kwargs):
    real(*args, **kwargs)
    written.append(1)
    if len(written) == 2:                  # two part files on disk: tell the test, wait
        open(sys.argv[1], "w").close()
        time.sleep(120)
pq.write_table = write_table
from cumgain.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_a_killed_convert_leaves_nothing_a_reader_accepts(run_file, tmp_path):
    """SIGKILL once two of the six part files are written: OUT does not exist, and the
    unfinished folder cumgain leaves beside it is refused by the readers."""
    import cumgain.dask as cgd
    out, ready = tmp_path / "out", tmp_path / "ready"
    process = subprocess.Popen([sys.executable, "-c", KILL_AFTER_TWO_FILES, str(ready),
                                "convert", str(run_file), str(out), "--partition-by-topic",
                                "--rows-per-file", "50"], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert process.poll() is None and time.monotonic() < deadline, "no part written"
            time.sleep(0.02)
    finally:
        process.kill()
        process.wait()
    assert not out.exists()
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".out.cumgain-tmp-")]
    parts = list(leftovers[0].glob("part.*.parquet")) if len(leftovers) == 1 else []
    assert len(parts) >= 2
    for run in (leftovers[0], *parts):
        with pytest.raises(InputError, match="an unfinished cumgain dataset"):
            cgd.evaluate({"3": {"doc1": 1}}, run, ["map"], warn=False)


def test_a_failed_write_leaves_no_output(capsys, run_file, tmp_path, monkeypatch):
    """The disk fills up after two part files: an error naming the cause, no OUT, and
    no temporary folder left beside it."""
    real, written = pq.write_table, []

    def write_table(*args, **kwargs):
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(args[1]))
        written.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pq, "write_table", write_table)
    out = tmp_path / "out"
    status, stdout, stderr = run_main(capsys, run_file, out, "--partition-by-topic",
                                      "--rows-per-file", 50)
    assert status == cli.EXIT_INPUT and stdout == "" and "No space left on device" in stderr
    assert stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]


def test_overwrite_refuses_a_folder_with_other_files(capsys, run_file, tmp_path):
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "a.txt").write_text("mine")
    (out / "sub" / "b.txt").write_text("mine too")
    status, stdout, stderr = run_main(capsys, run_file, out, "--overwrite")
    assert status == cli.EXIT_INPUT and stdout == ""
    assert stderr == (f"cumgain convert: error: {out} holds files cumgain did not write (no "
                      f"{MANIFEST}); cumgain replaces only a dataset it wrote: choose another "
                      "folder or remove it yourself\n")
    assert (out / "a.txt").read_text() == "mine" and (out / "sub" / "b.txt").exists()


def test_overwrite_refuses_a_dataset_with_files_added(capsys, run_file, tmp_path):
    out = tmp_path / "out"
    assert run_main(capsys, run_file, out)[0] == 0
    (out / "notes.txt").write_text("mine")
    status, _, stderr = run_main(capsys, run_file, out, "--overwrite")
    assert status == cli.EXIT_INPUT
    assert stderr == (f"cumgain convert: error: {out} holds files cumgain did not write "
                      "(notes.txt); not replaced: choose another folder or remove them "
                      "yourself\n")
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("target, message", [
    (".", ". is the current directory or one of its parents; cumgain will not replace it"),
    ("..", ".. is the current directory or one of its parents; cumgain will not replace it"),
    ("data", "data holds the input data/run.txt; cumgain will not replace it"),
])
def test_overwrite_refuses_the_current_folder_and_the_inputs_folder(
        capsys, run_file, tmp_path, monkeypatch, target, message):
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "data" / "run.txt").write_bytes(run_file.read_bytes())
    monkeypatch.chdir(work)
    status, stdout, stderr = run_main(capsys, "data/run.txt", target, "--overwrite")
    assert status == cli.EXIT_INPUT and stdout == ""
    assert stderr == f"cumgain convert: error: {message}\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["data", "run.txt", "run.txt",
                                                           "work"]


def test_overwrite_refuses_a_file_or_a_link(capsys, run_file, tmp_path):
    (tmp_path / "file").write_text("mine")
    assert run_main(capsys, run_file, tmp_path / "dataset")[0] == 0
    (tmp_path / "link").symlink_to(tmp_path / "dataset")
    for name in ("file", "link"):
        status, _, stderr = run_main(capsys, run_file, tmp_path / name, "--overwrite")
        assert status == cli.EXIT_INPUT
        assert stderr == (f"cumgain convert: error: {tmp_path / name} is not a folder "
                          "cumgain wrote; cumgain will not replace it\n")
    assert (tmp_path / "file").read_text() == "mine" and (tmp_path / "link").is_symlink()


def test_missing_input_and_bad_options(capsys, tmp_path):
    status, _, stderr = run_main(capsys, tmp_path / "nope.txt", tmp_path / "out")
    assert status == cli.EXIT_INPUT
    assert stderr == f"cumgain convert: error: {tmp_path / 'nope.txt'}: No such file or directory\n"
    with pytest.raises(SystemExit) as exit_:
        cli.main(["convert", "run.txt", "out", "--rows-per-file", "0"])
    assert exit_.value.code == cli.EXIT_USAGE
    assert "--rows-per-file: '0' must be at least 1" in capsys.readouterr().err


@pytest.mark.slow
def test_a_write_past_the_file_size_limit_names_the_output(tmp_path):
    """Past `ulimit -f` (or on a full disk) pyarrow's error names no file: the command
    says which output it could not write, and leaves none behind."""
    pytest.importorskip("pyarrow")
    import resource
    lines = "".join(f"q{i % 50} Q0 d{i} {i} {i} t\n" for i in range(100_000))
    (tmp_path / "big.run").write_text(lines)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    done = subprocess.run([sys.executable, "-m", "cumgain", "convert", "big.run", "out.parquet"],
                          cwd=tmp_path, capture_output=True, text=True, preexec_fn=limit,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("cumgain convert: error: out.parquet: ")
    assert "too large" in done.stderr.lower() and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.run"]
