"""`cumgain evaluate`: several runs, any measure, gain schemes side by side, four formats.

Values are checked against :func:`cumgain.evaluate` (the engine, tested elsewhere) and,
for the tiny collection in tests/golden, against hand computations; the table layout
against a golden file.
"""
from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import cumgain
from cumgain import cli
from cumgain.cli import evaluate
from cumgain.datasets import demo_collection

GOLDEN = Path(__file__).resolve().parent / "golden"
QRELS = str(GOLDEN / "tiny.qrels")
RUN1 = str(GOLDEN / "tiny.run")
RUN2 = str(GOLDEN / "tiny2.run")


def run_main(capsys, *args):
    status = cli.main(["evaluate", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def api(run, measures, **policies):
    return cumgain.evaluate(QRELS, run, measures, warn=False, **policies)


def test_table_golden(capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    status, out, err = run_main(capsys, "tiny.qrels", "tiny.run", "tiny2.run", "-m", "P@2",
                                "-m", "map", "-m", "num_rel", "-m", "nDCG@3", "-g", "0-1-10-100",
                                "-g", "0-1-2-3", "--discount", "tois")
    assert status == 0
    assert out == (GOLDEN / "tiny.evaluate.table.out").read_text(encoding="utf-8")
    assert err.splitlines() == [
        "cumgain evaluate: tinyrun: 1 run topic without judgments, not evaluated: 5",
        "cumgain evaluate: tinyrun: 1 qrels topic missing from the run, skipped: 3",
        "cumgain evaluate: tiny2: 1 qrels topic missing from the run, skipped: 10",
    ]


def test_hand_computed_values(capsys):
    """tiny2.run ranks d2 (1), d1 (0) for topic 1; f3 (1), f2 (3) for topic 2; g1 (1) for
    topic 3. nDCG@3 with the paper's discount (b = 2: ranks 1 and 2 undiscounted)."""
    status, out, _ = run_main(capsys, QRELS, RUN2, "-m", "nDCG@3", "--discount", "tois",
                              "-m", "P@2", "-f", "jsonl")
    record = json.loads(out)
    assert record["nDCG@3(discount=tois)"] == pytest.approx((1 / 3 + 4 / 4 + 1) / 3, abs=1e-15)
    assert record["P@2"] == pytest.approx((1 / 2 + 2 / 2 + 1 / 2) / 3, abs=1e-15)
    # scheme 0-1-10-100: topic 1 gains (1, 0) against the ideal (10, 1); topic 2 (1, 100)
    status, out, _ = run_main(capsys, QRELS, RUN2, "-m", "nDCG@3", "--discount", "tois",
                              "-g", "0-1-10-100", "-f", "jsonl")
    record = json.loads(out)
    expected = (1 / 11 + 101 / 101 + 1) / 3
    assert record["nDCG@3(discount=tois,gains=0-1-10-100)"] == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl"])
def test_machine_formats_carry_the_exact_values(capsys, fmt):
    measures = ["ndcg_cut.3", "map", "num_ret", "nDCG@3(discount=tois, base=10)"]
    args = [QRELS, RUN1, RUN2, "-q", "-f", fmt]
    for measure in measures:
        args += ["-m", measure]
    status, out, _ = run_main(capsys, *args)
    assert status == 0
    if fmt == "jsonl":
        rows = [json.loads(line) for line in out.splitlines()]
    else:
        rows = list(csv.DictReader(io.StringIO(out), delimiter="\t" if fmt == "tsv" else ","))
    names = ["ndcg_cut_3", "map", "num_ret", "nDCG@3(discount=tois,base=10)"]
    assert list(rows[0]) == ["run", "topic"] + names
    for run, name in ((RUN1, "tinyrun"), (RUN2, "tiny2")):     # named by their run tags
        result = api(run, measures)
        ours = [row for row in rows if row["run"] == name]
        assert [row["topic"] for row in ours] == list(result.topics) + ["all"]
        for row in ours:
            for name in names:
                want = result.means[name] if row["topic"] == "all" else \
                    result.per_topic()[row["topic"]][name]
                got = row[name] if fmt == "jsonl" else (int(row[name]) if name == "num_ret"
                                                        else float(row[name]))
                assert got == want, (run, row["topic"], name)
                if name == "num_ret":
                    assert isinstance(got, int)


def test_gain_schemes_side_by_side_equal_the_api(capsys):
    status, out, _ = run_main(capsys, QRELS, RUN1, "-m", "nDCG@3", "-m", "ndcg", "-m", "P@2",
                              "-g", "0-1-1-1", "-g", "exponential", "-f", "jsonl")
    record = json.loads(out)
    names = ["nDCG@3(gains=0-1-1-1)", "nDCG@3(gains=exponential)", "nDCG(gains=0-1-1-1)",
             "nDCG(gains=exponential)", "P@2"]
    assert list(record) == ["run"] + names
    result = api(RUN1, names)
    for name in names:
        assert record[name] == result.means[name]
    # the trec_eval spelling of a graded measure keeps its meaning: nDCG over the whole run
    assert record["nDCG(gains=exponential)"] == api(RUN1, ["ndcg.1=1,2=3,3=7"]).means[
        "ndcg_1=1,2=3,3=7"]


def test_discount_and_base(capsys):
    status, out, _ = run_main(capsys, QRELS, RUN1, "-m", "nDCG@3", "-m", "DCG@3",
                              "--discount", "tois", "--base", "10", "-f", "jsonl")
    record = json.loads(out)
    result = api(RUN1, ["nDCG@3(discount=tois, base=10)", "DCG@3(discount=tois, base=10)"])
    assert record["nDCG@3(discount=tois,base=10)"] == result.means["nDCG@3(discount=tois,base=10)"]
    assert record["DCG@3(discount=tois,base=10)"] == result.means["DCG@3(discount=tois,base=10)"]
    # with b = 10 every rank below 10 is undiscounted: DCG@3 = CG@3
    assert record["DCG@3(discount=tois,base=10)"] == api(RUN1, ["CG@3"]).means["CG@3"]


def test_parameters_in_the_measure_win_over_the_options(capsys):
    status, out, _ = run_main(capsys, QRELS, RUN1, "-m", "nDCG@3(discount=note, base=3)",
                              "--discount", "tois", "-f", "jsonl")
    assert list(json.loads(out)) == ["run", "nDCG@3(discount=note,base=3)"]


def test_complete_scores_missing_topics_zero(capsys):
    status, out, err = run_main(capsys, QRELS, RUN1, "-c", "-q", "-m", "P@2", "-f", "tsv")
    rows = list(csv.DictReader(io.StringIO(out), delimiter="\t"))
    assert [row["topic"] for row in rows] == ["1", "10", "2", "3", "all"]
    assert float(rows[3]["P@2"]) == 0.0
    assert float(rows[4]["P@2"]) == pytest.approx(1.5 / 4)
    assert "1 qrels topic missing from the run, scored 0: 3" in err


def test_default_measures(capsys):
    status, out, _ = run_main(capsys, QRELS, RUN1)
    assert out.splitlines()[0].split() == ["run", *evaluate.DEFAULT_MEASURES]


def test_demo_collection_files_give_the_dict_results(capsys, tmp_path):
    """The TREC files written by the demo read back to the same numbers as the dicts."""
    collection = demo_collection()
    paths = collection.write_trec(tmp_path)
    status, out, err = run_main(capsys, paths["qrels"], paths["good"], paths["poor"],
                                "-m", "nDCG@10", "-m", "map", "-f", "jsonl")
    assert status == 0 and err == ""
    records = [json.loads(line) for line in out.splitlines()]
    for record, run in zip(records, ("good", "poor")):
        result = cumgain.evaluate(collection.qrels, collection.runs[run], ["nDCG@10", "map"])
        assert record["nDCG@10"] == result.means["nDCG@10"]
        assert record["map"] == result.means["map"]


# ------------------------------------------------------------------ progress bar

def test_progress_bar_only_on_request_or_large_input_on_a_terminal(capsys, monkeypatch):
    args = [QRELS, RUN1, RUN2, "-m", "P@2"]
    status, plain, err = run_main(capsys, *args)
    assert err.count("\r") == 0
    status, out, err = run_main(capsys, *args, "--progress", "always")
    assert out == plain
    assert "/3" in err and "\r" in err          # the qrels and two runs (redrawn at most
                                                # every 0.1 s: the last state may not show)
    # auto: a terminal and a large input
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    status, out, err = run_main(capsys, *args)
    assert "\r" not in err                                 # small input
    monkeypatch.setattr(evaluate, "LARGE_INPUT_BYTES", 10)
    status, out, err = run_main(capsys, *args)
    assert "/3" in err and out == plain
    status, out, err = run_main(capsys, *args, "--progress", "never")
    assert "\r" not in err


# ------------------------------------------------------------------ errors

@pytest.mark.slow
@pytest.mark.parametrize("args, status, fragment", [
    ([QRELS, RUN1, "-m", "nosuch"], 1, "unknown measure 'nosuch'"),
    ([QRELS, RUN1, "-m", "map", "-g", "0-1-1"], 1, "--gains applies to none of the measures"),
    ([QRELS, RUN1, "-g", "frobnicate"], 1, "unknown gain scheme"),
    ([QRELS, RUN1, "-m", "nDCG@3", "--base", "3"], 1, "add --discount tois"),
    ([QRELS, RUN1, "-m", "ndcg_rel", "-g", "0-1-2-3"], 1, "give it a gain table"),
    ([QRELS, RUN1, "-c", "--topics", "strict"], 1, "contradicts"),
    ([QRELS, "-", "-"], 1, "standard input"),
    ([QRELS, str(GOLDEN / "nosuch.run")], 2, "nosuch.run: No such file or directory"),
    ([str(GOLDEN / "bad.qrels"), RUN1], 2, "bad.qrels:3:"),
    ([QRELS, RUN1, str(GOLDEN / "bad.run")], 2, "bad.run:2:"),
    ([QRELS, RUN1, str(GOLDEN / "other.run")], 7, "other.run: no topic of the run"),
    ([QRELS, RUN1, "--topics", "strict"], 2, "topics differ"),
    ([QRELS, RUN1, "-f", "xml"], 1, "invalid choice"),
])
def test_errors_are_one_line_without_traceback(args, status, fragment):
    script = Path(sys.executable).with_name("cumgain")
    completed = subprocess.run([str(script), "evaluate", *args], capture_output=True,
                               text=True, timeout=120)
    assert completed.returncode == status, completed.stderr
    error_lines = [line for line in completed.stderr.splitlines() if "error" in line]
    assert len(error_lines) == 1 and fragment in error_lines[0], completed.stderr
    assert "Traceback" not in completed.stderr
    assert completed.stdout == ""


def test_stdin_and_gzip(tmp_path):
    import gzip
    script = Path(sys.executable).with_name("cumgain")
    data = gzip.compress(Path(RUN1).read_bytes())
    completed = subprocess.run([str(script), "evaluate", QRELS, "-", "-m", "map", "-f", "tsv"],
                               input=data, capture_output=True, timeout=120)
    assert completed.returncode == 0
    row = completed.stdout.decode().splitlines()[1].split("\t")
    assert row[0] == "tinyrun"      # its run tag (every line has it)
    assert float(row[1]) == api(RUN1, ["map"]).means["map"]
    assert math.isclose(float(row[1]), ((1 + 2 / 3) / 2 + 1 + 0.25) / 3)


def test_diversity_measures_read_the_qrels_as_subtopics(capsys, tmp_path):
    """ir_measures' names work on the command line: the diversity measures read the
    qrels file as subtopic judgments, the others as qrels, in one table per topic."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 1 d1 1\nq1 2 d2 1\nq1 2 d3 0\nq2 1 d3 2\nq3 1 d9 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n")
    names = ["alpha_nDCG@20", "P@2", "ERR_IA@20", "Judged@10"]
    status, out, err = run_main(capsys, qrels, run, *[a for n in names for a in ("-m", n)],
                                "-q", "-f", "jsonl")
    assert status == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["topic"] for r in records] == ["q1", "q2", "all"]
    plain = cumgain.evaluate(str(qrels), str(run), ["P@2", "Judged@10"], warn=False)
    diverse = cumgain.evaluate(cumgain.load_subtopics(str(qrels)), str(run),
                               ["alpha_nDCG@20", "ERR_IA@20"], warn=False)
    for result in (plain, diverse):
        for name, column in result.values.items():
            assert [r[name] for r in records[:2]] == list(column)
            assert records[2][name] == result.means[name]
    assert "1 qrels topic missing from the run, skipped: q3" in err


def test_diversity_and_other_measures_need_a_qrels_file(capsys, tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 2.0 r\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO("q1 1 d1 1\n"))
    status, _, err = run_main(capsys, "-", run, "-m", "alpha_nDCG@20", "-m", "P@2")
    assert status == cli.EXIT_USAGE and "give a file, not standard input" in err


def test_output_to_a_stream_is_written_into_and_never_replaced(capsys, tmp_path):
    """-o to a FIFO, /dev/null or a device node: written into, with or without
    --overwrite, and still what it was afterwards; a symbolic link is refused either
    way, and the file it points to is untouched."""
    import os
    import stat
    import threading
    for flags in ((), ("--overwrite",)):
        status, _, err = run_main(capsys, QRELS, RUN1, "-m", "map", "-o", "/dev/null", *flags)
        assert status == 0, err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    status, _, err = run_main(capsys, QRELS, RUN1, "-m", "map", "-o", fifo)
    reader.join(10)
    assert status == 0, err
    assert received and received[0].splitlines()[0].split() == ["run", "map"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    victim, link = tmp_path / "victim.txt", tmp_path / "link.txt"
    victim.write_text("precious")
    link.symlink_to(victim)
    for flags in ((), ("--overwrite",)):
        status, _, err = run_main(capsys, QRELS, RUN1, "-m", "map", "-o", link, *flags)
        assert status == 1 and "is a symbolic link" in err
    assert link.is_symlink() and victim.read_text() == "precious"
    node = tmp_path / "mynull"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        return
    status, _, err = run_main(capsys, QRELS, RUN1, "-m", "map", "-o", node, "--overwrite")
    assert status == 0, err
    assert stat.S_ISCHR(node.lstat().st_mode)


def test_a_gain_mapping_without_a_level_of_the_qrels_is_a_usage_error(capsys):
    """-g 0-1 on judgments graded 0-3: the option does not fit the data (exit 1, as a
    bad option value), not an unreadable file (exit 2)."""
    status, _, err = run_main(capsys, QRELS, RUN1, "-m", "nDCG@3", "-g", "0-1")
    assert status == 1 and "has no gain in mapping 0-1" in err
    with pytest.raises(cumgain.exceptions.GainMappingError):
        api(RUN1, ["nDCG@3(gains=0-1)"])
