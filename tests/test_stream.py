"""cumgain.stream: bounded-memory evaluation of topic-contiguous run files, and the
external sort that makes any run file topic-contiguous.

The reference is :func:`cumgain.evaluate` on the same file (its native reader and its
reference reader); equality is exact: per-topic values with ``np.array_equal``, means
with ``==``. Errors are compared with the reference reader's own messages.
"""
from __future__ import annotations

import gzip
import heapq
import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import cumgain
from cumgain import stream, trec_io
from cumgain.io.native import blocks as _native_blocks
from cumgain.io.trec import byte_stream as _trec_bytes
from cumgain.reference import reading as reference_reading
from cumgain.exceptions import FormatError, InputError

MEASURES = ["map", "gm_map", "ndcg_cut_10", "P_5", "recip_rank", "num_rel", "num_ret",
            "Rprec", "ndcg", "nDCG@10(discount=tois, base=2, gains=0-1-10-100)",
            "avg_pos_nDCG@20(gains=exponential)", "CG@5"]
LINEAR = ["num_ret", "num_rel_ret", "P_5", "recall_10", "Rprec", "ndcg_cut_10", "CG@5",
          "nDCG@10(discount=tois, gains=0-1-10-100)"]


def write_collection(folder: Path, n_topics: int = 30, docs: int = 80, seed: int = 5,
                     interleave: bool = False) -> tuple:
    """A qrels and a run file; scores with ties (one decimal; some equal as float32
    only); levels -1..3; two run-only and two qrels-only topics. With ``interleave`` the
    run's lines are shuffled, so topics are not contiguous."""
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines = [], []
    for t in range(n_topics):
        docnos = rng.choice(10 * docs, size=docs, replace=False)
        scores = np.round(rng.normal(5, 1, size=docs), 1)
        scores[::11] = 5.0 + 1e-9 * rng.integers(1, 3, size=len(scores[::11]))
        run_lines += [f"{t} Q0 D{d} {i + 1} {float(s)!r} tag{seed}\n"
                      for i, (d, s) in enumerate(zip(docnos, scores))]
        if t >= 2:                                    # topics 0 and 1: run only
            judged = docnos[rng.random(docs) < 0.4]
            levels = rng.choice([-1, 0, 1, 2, 3], size=len(judged), p=[.05, .45, .25, .15, .1])
            qrels_lines += [f"{t} 0 D{d} {r}\n" for d, r in zip(judged, levels)]
    qrels_lines += ["900 0 X1 2\n", "900 0 X2 0\n", "901 0 X3 1\n"]
    if interleave:
        run_lines = [run_lines[i] for i in rng.permutation(len(run_lines))]
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    return qrels, run


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple:
    return write_collection(tmp_path_factory.mktemp("stream"))


def assert_identical(result: cumgain.Evaluation, reference: cumgain.Evaluation) -> None:
    assert result.topics == reference.topics
    for name, expected in reference.values.items():
        assert np.array_equal(result.values[name], expected), name
        assert result.means[name] == reference.means[name], name
    assert (result.run_only_topics, result.missing_topics, result.empty_qrels_topics,
            result.run_tag) == (reference.run_only_topics, reference.missing_topics,
                                reference.empty_qrels_topics, reference.run_tag)
    drawn = {"seed"} if reference.policies["ties"] != "random" else set()
    assert {k: v for k, v in result.policies.items() if k not in drawn} == \
        {k: v for k, v in reference.policies.items() if k not in drawn}


# ---------------------------------------------------------------- the same numbers

@pytest.mark.parametrize("policies", [
    {},
    {"ties": "docno_asc"},
    {"ties": "input_order"},
    {"ties": "random", "seed": 2024},
    {"score_precision": "float32"},
    {"depth": 13, "judged_only": True},
    {"relevance_level": 2},
    {"topics": "qrels"},
], ids=str)
@pytest.mark.parametrize("topics_per_chunk", [1, 7, 1000])
def test_same_numbers_as_evaluate(files, policies, topics_per_chunk):
    qrels, run = files
    result = stream.evaluate_stream(qrels, run, MEASURES, topics_per_chunk=topics_per_chunk,
                                    warn=False, **policies)
    assert_identical(result, cumgain.evaluate(qrels, run, MEASURES, warn=False, **policies))


@pytest.mark.parametrize("policies", [{}, {"topics": "qrels", "judged_only": True}], ids=str)
def test_every_trec_eval_measure_over_a_ranking(files, policies):
    """trec_eval's all_trec (bpref, infAP, iprec_at_recall, relstring, runid, rbp, ...)
    streamed in pieces: the same values, text ones included, and the same means."""
    qrels, run = files
    result = stream.evaluate_stream(qrels, run,
                                    ["runid", "bpref", "gm_bpref", "infAP", "iprec_at_recall",
                                     "relstring", "Rprec_mult", "utility", "11pt_avg", "G",
                                     "rbp", "rbp_resid", "unj", "set_F", "yaap"],
                                    topics_per_chunk=3, warn=False, **policies)
    reference = cumgain.evaluate(qrels, run, [m.name for m in result.measures], warn=False,
                                 **policies)
    assert result.values["relstring"].dtype == object
    assert result.means["runid"] == reference.means["runid"] == reference.run_tag != ""
    assert_identical(result, reference)


def test_average_ties(files):
    qrels, run = files
    result = stream.evaluate_stream(qrels, run, LINEAR, ties="average", topics_per_chunk=4,
                                    warn=False)
    assert_identical(result, cumgain.evaluate(qrels, run, LINEAR, ties="average", warn=False))


def test_qrels_in_any_form(files):
    qrels, run = files
    as_dict = trec_io.read_qrels(qrels).to_dict()
    result = stream.evaluate_stream(as_dict, str(run), ["map", "P_5"], warn=False)
    assert_identical(result, cumgain.evaluate(qrels, run, ["map", "P_5"], warn=False))


def test_gzip_run(files, tmp_path):
    qrels, run = files
    packed = tmp_path / "run.gz"
    packed.write_bytes(gzip.compress(run.read_bytes()))
    result = stream.evaluate_stream(qrels, packed, MEASURES, topics_per_chunk=3, warn=False)
    assert_identical(result, cumgain.evaluate(qrels, run, MEASURES, warn=False))


def test_topics_warning_is_the_evaluators(files):
    qrels, run = files
    with pytest.warns(cumgain.TopicsWarning) as caught:
        stream.evaluate_stream(qrels, run, ["map"])
    with pytest.warns(cumgain.TopicsWarning) as expected:
        cumgain.evaluate(qrels, run, ["map"])
    assert [str(w.message) for w in caught] == [str(w.message) for w in expected]
    assert "2 run topics have no judgments" in str(caught[0].message)


def test_topics_strict(files):
    qrels, run = files
    with pytest.raises(InputError, match=r"topics differ: 2 in the run only \['0', '1'\]"):
        stream.evaluate_stream(qrels, run, ["map"], topics="strict")


def test_missing_topics_under_qrels_policy_take_the_engines_values(files):
    qrels, run = files
    result = stream.evaluate_stream(qrels, run, ["map", "num_rel", "gm_map"], topics="qrels",
                                    warn=False)
    assert result.per_topic()["900"] == {"map": 0.0, "num_rel": 1.0, "gm_map": np.log(1e-5)}


# ---------------------------------------------------------------- input problems

def test_interleaved_topics_are_refused_with_file_and_line(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("a Q0 d1 1 3 t\na Q0 d2 2 2 t\nb Q0 d1 1 3 t\n# note\na Q0 d3 3 1 t\n")
    with pytest.raises(FormatError) as caught:
        stream.evaluate_stream({"a": {"d1": 1}}, run, ["map"])
    assert caught.value.line_number == 5 and caught.value.path == str(run)
    assert "topic 'a' appears again after other topics (its lines began at line 1)" \
        in str(caught.value)
    assert "sort_run_by_topic" in str(caught.value)


@pytest.mark.parametrize("text", [
    "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 x t\n",
    "q1 Q0 d1 1 2.5\n",
    "q1 Q0 d1 1 nan t\n",
    "q1 Q0 d1 1 1 t\nq1 Q0 d\xe9 1 1 t\n".encode("latin-1"),
])
def test_malformed_lines_raise_the_reference_readers_error(tmp_path, text):
    run = tmp_path / "run.txt"
    run.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(FormatError) as expected:
        trec_io.read_run(run)
    with pytest.raises(FormatError) as caught:
        stream.evaluate_stream({"q1": {"d1": 1}}, run, ["map"])
    assert str(caught.value) == str(expected.value)


def test_empty_run_file(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("# nothing\n\n")
    with pytest.raises(FormatError) as expected:
        trec_io.read_run(run)
    with pytest.raises(FormatError) as caught:
        stream.evaluate_stream({"q1": {"d1": 1}}, run, ["map"])
    assert str(caught.value) == str(expected.value)
    assert str(caught.value).endswith("run.txt: no results (the file has no data lines)")


def test_duplicates(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d1 3 9 t\nq2 Q0 d1 1 1 t\n")
    qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d1": 1}}
    with pytest.raises(FormatError) as expected:
        trec_io.read_run(run)
    with pytest.raises(FormatError) as caught:
        stream.evaluate_stream(qrels, run, ["map"])
    assert str(caught.value) == str(expected.value)
    assert "duplicate docno 'd1' in topic 'q1': lines 1 and 3" in str(caught.value)
    with pytest.warns(trec_io.DuplicatesDroppedWarning, match="dropped 1 duplicate"):
        result = stream.evaluate_stream(qrels, run, ["map", "recip_rank"], duplicates="first")
    with pytest.warns(trec_io.DuplicatesDroppedWarning):
        reference = cumgain.evaluate(qrels, run, ["map", "recip_rank"], duplicates="first")
    assert_identical(result, reference)
    assert result.per_topic()["q1"]["recip_rank"] == 1.0     # d1 kept its first score, 3


@pytest.mark.parametrize("arguments, message", [
    ({"topics_per_chunk": 0}, "topics_per_chunk must be a positive integer"),
    ({"topics_per_chunk": True}, "topics_per_chunk must be a positive integer"),
    ({"ties": "first"}, "ties must be one of"),
    ({"measures": ["nope"]}, "unknown measure"),
    ({"duplicates": "latest"}, "duplicates must be one of"),
])
def test_bad_arguments(files, arguments, message):
    qrels, run = files
    measures = arguments.pop("measures", ["map"])
    with pytest.raises(InputError, match=message):
        stream.evaluate_stream(qrels, run, measures, **arguments)


def test_run_path_type(files):
    qrels, _ = files
    with pytest.raises(InputError, match="the run path must be a str, os.PathLike or "
                                         "binary stream, got dict"):
        stream.evaluate_stream(qrels, {"q1": {"d1": 1.0}}, ["map"])


# ---------------------------------------------------------------- the block reader it uses

def test_blocks_hold_the_reference_readers_rows(tmp_path):
    """iter_run_blocks over a topic-contiguous gzip file with comments, blank lines, CRLF
    ends, a BOM, extra fields, a line longer than a block and no final newline, in
    blocks of 64 bytes: the rows, line numbers and tag of the reference reader's
    read_run (cumgain.reference.reading), and each data line's text as written."""
    data_lines = ["\ufeffa Q0 d1 1 2.5 t1", "a Q0 d2 2 -1e3 t1 extra", "b\tQ0 d3 3 inf t2\r",
                  "b Q0 " + "x" * 150 + " 4 .5 t3", "c Q0 d4 5 7 t4"]
    text = (data_lines[0] + "\n# a comment\n\n" + "\n".join(data_lines[1:])).encode()
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(text))
    blocks = list(trec_io.iter_run_blocks(path, block_bytes=64))
    reference = reference_reading.read_run(path)
    assert len(blocks) > 2
    assert [q.decode() for b in blocks for q in b.qids] == \
        np.repeat(reference.topics, np.diff(reference.offsets)).tolist()
    assert [d.decode() for b in blocks for d in b.docnos] == reference.docnos.tolist()
    assert np.array_equal(np.concatenate([b.scores for b in blocks]), reference.scores)
    assert np.concatenate([b.lines for b in blocks]).tolist() == reference.lines.tolist() \
        == [1, 4, 5, 6, 7]
    assert (blocks[-1].tag, blocks[-1].source) == (reference.tag, reference.source) == \
        ("t4", str(path))
    written = [line.lstrip("\ufeff").encode() for line in data_lines]
    assert [line for b in blocks for line in b.line_texts()] == written


def test_blocks_raise_the_reference_readers_errors_in_later_blocks(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q1 Q0 d{i} {i} {i} t\n" for i in range(40)) + "q1 Q0 dx 1 x t\n")
    with pytest.raises(FormatError) as expected:
        trec_io.read_run(run)
    blocks = trec_io.iter_run_blocks(run, block_bytes=100)
    assert next(blocks).lines.tolist()[0] == 1       # the first blocks are fine
    with pytest.raises(FormatError) as caught:
        list(blocks)
    assert str(caught.value) == str(expected.value)
    assert caught.value.line_number == 41


def test_blocks_of_an_empty_file_and_bad_arguments(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("# nothing\n\n")
    with pytest.raises(FormatError) as expected:
        trec_io.read_run(run)
    with pytest.raises(FormatError) as caught:
        list(trec_io.iter_run_blocks(run))
    assert str(caught.value) == str(expected.value)
    with pytest.raises(InputError, match="the run path must be a str, os.PathLike or binary "
                                         "stream, got dict"):
        trec_io.iter_run_blocks({"q1": {"d1": 1.0}})           # at once, not when iterated
    with pytest.raises(InputError, match="block_bytes must be a positive integer"):
        trec_io.iter_run_blocks(run, block_bytes=0)


def test_means_are_the_evaluators_aggregate():
    """One home for the mean: stream combines pieces with cumgain.engine.evaluator.aggregate
    (sequential mean; sum for counts; exp of the mean log for gm_map; a mean over no
    topics is NaN, a sum 0)."""
    from cumgain.engine.results import aggregate
    from cumgain.measures import parse_measures

    assert stream.aggregate is aggregate
    p5, num_rel, gm_map = parse_measures(["P_5", "num_rel", "gm_map"])
    assert aggregate(p5, np.array([0.2, 0.4, 0.6])) == ((0.2 + 0.4) + 0.6) / 3
    assert aggregate(num_rel, np.array([3.0, 4.0])) == 7.0
    assert aggregate(gm_map, np.log([0.25, 0.5])) == pytest.approx(math.sqrt(0.25 * 0.5),
                                                                   rel=1e-15)
    assert math.isnan(aggregate(p5, np.zeros(0))) and aggregate(num_rel, np.zeros(0)) == 0.0


# ---------------------------------------------------------------- external sort

def test_sort_run_by_topic_merges_many_runs(tmp_path):
    """A tiny memory limit makes ~150 sorted temporary files, more than one merge pass
    takes; the output must be each topic's lines in input order, topics in byte order,
    and evaluate the same as the interleaved original."""
    qrels, run = write_collection(tmp_path, n_topics=25, docs=60, interleave=True)
    sorted_path = tmp_path / "sorted.txt"
    limit = 10 * (stream.LINE_OVERHEAD + 30)
    written = stream.sort_run_by_topic(run, sorted_path, memory_limit=limit, temp_dir=tmp_path)
    lines = run.read_text().splitlines()
    expected = sorted(lines, key=lambda line: line.split()[0].encode())   # stable
    assert written == len(lines) > 20 * stream.MERGE_FAN_IN
    assert sorted_path.read_text().splitlines() == expected
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("cumgain-sort-")] == []
    result = stream.evaluate_stream(qrels, sorted_path, MEASURES, ties="input_order",
                                    topics_per_chunk=4, warn=False)
    reference = cumgain.evaluate(qrels, run, MEASURES, ties="input_order", warn=False)
    assert_identical(result, reference)


def test_sort_in_memory_drops_comments_and_reads_gzip(tmp_path):
    run = tmp_path / "run.gz"
    run.write_bytes(gzip.compress(b"b Q0 x 1 1 t\n# c\n\na Q0 y 1 1 t\nb Q0 z 2 0 t\n"))
    assert stream.sort_run_by_topic(run, tmp_path / "out.txt") == 3
    assert (tmp_path / "out.txt").read_text() == "a Q0 y 1 1 t\nb Q0 x 1 1 t\nb Q0 z 2 0 t\n"


def test_sort_reports_malformed_lines_of_the_input(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("b Q0 x 1 1 t\na Q0 y 1 oops t\n")
    with pytest.raises(FormatError, match=r"run.txt:2: score 'oops' is not a number"):
        stream.sort_run_by_topic(run, tmp_path / "out.txt")
    with pytest.raises(InputError, match="memory_limit must be a positive number"):
        stream.sort_run_by_topic(run, tmp_path / "out.txt", memory_limit=0)
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(FormatError, match="no results"):
        stream.sort_run_by_topic(tmp_path / "empty.txt", tmp_path / "out.txt")


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_an_interrupted_sort_leaves_no_output(tmp_path, monkeypatch, error):
    """The merge fails part-way (a full disk, or Ctrl-C at 70%): no output file, no
    temporary, and an existing output (overwrite=True) keeps its old content."""
    _, run = write_collection(tmp_path, n_topics=10, docs=40, interleave=True)
    real = heapq.merge

    def merge(*iterables, key=None):
        for i, line in enumerate(real(*iterables, key=key)):
            if i == 280:
                raise error
            yield line

    monkeypatch.setattr(heapq, "merge", merge)
    limit = 40 * (stream.LINE_OVERHEAD + 30)
    out = tmp_path / "sorted.txt"
    with pytest.raises(type(error)):
        stream.sort_run_by_topic(run, out, memory_limit=limit, temp_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels.txt", "run.txt"]
    out.write_text("old\n")
    with pytest.raises(type(error)):
        stream.sort_run_by_topic(run, out, memory_limit=limit, temp_dir=tmp_path,
                                 overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels.txt", "run.txt", "sorted.txt"]
    assert out.read_text() == "old\n"


def test_sort_refuses_an_existing_output_unless_asked(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("b Q0 x 1 1 t\na Q0 y 1 1 t\n")
    out = tmp_path / "out.txt"
    out.write_text("mine\n")
    with pytest.raises(InputError, match=r"out.txt exists; pass overwrite=True to replace it"):
        stream.sort_run_by_topic(run, out)
    assert out.read_text() == "mine\n"
    assert stream.sort_run_by_topic(run, out, overwrite=True) == 2
    assert out.read_text() == "a Q0 y 1 1 t\nb Q0 x 1 1 t\n"
    assert stream.sort_run_by_topic(run, run, overwrite=True) == 2        # in place
    assert run.read_text() == "a Q0 y 1 1 t\nb Q0 x 1 1 t\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "run.txt"]


# ---------------------------------------------------------------- bounded memory

def write_big_run(path: Path, n_topics: int, docs: int = 1000) -> Path:
    rng = np.random.default_rng(n_topics)
    doc_ids = np.arange(docs)
    with open(path, "w") as out:
        for t in range(n_topics):
            scores = np.round(rng.normal(5, 1, size=docs), 2)
            out.write("".join(f"T{t} Q0 D{d} 0 {float(s)!r} r\n" for d, s in zip(doc_ids, scores)))
    return path


def peak_traced_bytes(function) -> int:
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_memory_does_not_grow_with_the_file(tmp_path, monkeypatch):
    """Peak Python memory (tracemalloc, which sees numpy buffers) for 40k and 160k run
    lines. Streaming holds one read block, one parse piece and one chunk of topics,
    whatever the file's size; the blocks are scaled down here (128 KiB blocks, 32 KiB
    pieces instead of 8 MiB and 1 MiB) so that both files span many of them. The peak
    must not grow with the file (allowance 25% for the per-topic results and allocator
    noise); loading the whole run with the pure-Python reader (reference_reading.read_run,
    whose numpy and Python buffers tracemalloc sees: the compiled reader's C buffers it
    does not) grows linearly, as a control."""
    monkeypatch.setattr(_trec_bytes, "_BATCH", 1 << 17)
    monkeypatch.setattr(_trec_bytes, "_READ", 1 << 15)
    monkeypatch.setattr(stream, "PARSE_BYTES", 1 << 15)
    monkeypatch.setattr(_native_blocks, "BLOCK", 1 << 15)   # the compiled reader's blocks
    qrels = {f"T{t}": {f"D{d}": 1 for d in range(0, 1000, 9)} for t in range(160)}
    small = write_big_run(tmp_path / "small.txt", 40)
    large = write_big_run(tmp_path / "large.txt", 160)

    def streamed(path):
        return peak_traced_bytes(lambda: stream.evaluate_stream(
            qrels, path, ["map", "ndcg_cut_10"], topics_per_chunk=5, warn=False))

    peak_small, peak_large = streamed(small), streamed(large)
    loaded_small = peak_traced_bytes(lambda: reference_reading.read_run(small))
    loaded_large = peak_traced_bytes(lambda: reference_reading.read_run(large))
    assert loaded_large > 2.5 * loaded_small     # the measurement does see growth
    assert peak_large < 1.25 * peak_small
    assert peak_large < loaded_large / 5
