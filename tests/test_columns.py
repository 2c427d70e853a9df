"""Columnar inputs (cumgain.io.columns): pandas DataFrames of every id kind, pyarrow
Tables, RecordBatches and readers, Polars DataFrames and any ``__arrow_c_stream__``
object are ranked by the compiled ranker straight from their Arrow buffers, and
evaluate bit for bit as the same rows read from a TREC file, under every tie policy;
tables whose columns the native ranker does not read in place are checked and converted
by the reference front-end, then ranked natively; either way the values are those of
the reference reader (cumgain.reference.reading) on the same table, and the errors its
errors, worded as for files (row and column instead of line)."""
from __future__ import annotations

import math
import sys
import random
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cumgain
from cumgain.io import columns

from cumgain.io.native import reader as native

from cumgain.reference import reading as reference_reading
from cumgain.engine.evaluator import TopicsWarning, evaluate
from cumgain.exceptions import InputError
from cumgain.trec_io import load_run

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

MEASURES = ["map", "ndcg_cut.5,10", "P.5", "recip_rank", "bpref", "ERR@20", "RBP(p=0.8)",
            "Rprec", "num_rel_ret", "infAP"]
#: the measures defined under ties="average" (the order within tied groups does not count)
AVERAGE_MEASURES = ["ndcg_cut.5,10", "P.5", "num_rel_ret", "ndcg", "recall.10"]
TIES = ["docno_desc", "docno_asc", "input_order", "random", "average"]


def _generated(seed: int, n_topics: int = 7, ungrouped: bool = False):
    """(qrels rows, run rows) with tied scores, unjudged and pooled (-1) documents."""
    rng = random.Random(seed)
    qrels, run = [], []
    for t in range(n_topics):
        topic = f"q{t}" if t % 3 else str(100 + t)
        docs = [f"d{rng.randrange(60)}" for _ in range(40)]
        docs = list(dict.fromkeys(docs))
        for doc in docs[:25]:
            qrels.append((topic, doc, rng.choice([0, 0, 1, 2, 3, -1])))
        for doc in rng.sample(docs, min(len(docs), 30)) + [f"u{i}" for i in range(5)]:
            run.append((topic, doc, float(rng.randrange(8))))
    if ungrouped:
        rng.shuffle(run)
    return qrels, run


def _write(tmp_path, qrels, run):
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text("".join(f"{t} 0 {d} {v}\n" for t, d, v in qrels))
    r.write_text("".join(f"{t} Q0 {d} {i + 1} {s!r} tag\n" for i, (t, d, s) in enumerate(run)))
    return str(q), str(r)


def _frames(qrels, run):
    qrels_frame = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    return qrels_frame, run_frame


def _kinds(frame: "pd.DataFrame") -> dict:
    """The same rows as every table kind the ranker reads."""
    object_frame = frame.astype({"query_id": object, "doc_id": object})
    arrow = pa.Table.from_pandas(object_frame, preserve_index=False)
    kinds = {
        "pandas-object": object_frame,
        "pandas-arrow-string": frame.astype({"query_id": "string[pyarrow]",
                                             "doc_id": "string[pyarrow]"}),
        "pandas-categorical": frame.astype({"query_id": "category", "doc_id": "category"}),
        "pyarrow-table": arrow,
        "pyarrow-large-string": arrow.cast(pa.schema(
            [pa.field(n, pa.large_string() if n != arrow.column_names[2] else t)
             for n, t in zip(arrow.column_names, arrow.schema.types)])),
        "pyarrow-chunked": pa.Table.from_batches(arrow.to_batches(max_chunksize=17)),
        "pyarrow-sliced": pa.concat_tables([arrow.slice(0, 0), arrow]).slice(0),
        "pyarrow-dictionary": arrow.set_column(
            0, "query_id", arrow.column("query_id").dictionary_encode()),
        "record-batch": arrow.combine_chunks().to_batches()[0],
        "record-batch-reader": lambda: pa.RecordBatchReader.from_batches(
            arrow.schema, arrow.to_batches(max_chunksize=50)),
        "arrow-c-stream": _Stream(arrow),
    }
    try:
        import polars as pl
    except ImportError:
        pass
    else:
        kinds["polars"] = pl.from_arrow(arrow)
    return kinds


class _Stream:
    """Only the Arrow PyCapsule interface, as a library unknown to cumgain has it."""

    def __init__(self, table):
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


def _values(evaluation) -> dict:
    return {name: evaluation.values[name].tolist() for name in evaluation.values}


def _evaluate(qrels, run, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        measures = AVERAGE_MEASURES if options.get("ties") == "average" else MEASURES
        return evaluate(qrels, run, measures, **options)


def _reference(qrels, run, **options):
    """The reference reader's evaluation of the same inputs (the oracle)."""
    with reference_reading.using_reference_reader():
        return _evaluate(qrels, run, **options)


def _assert_as_the_reference_reader(qrels, run, **options):
    """The native evaluation of the inputs equals the reference reader's, topic for
    topic, bit for bit; returns it."""
    got, expected = _evaluate(qrels, run, **options), _reference(qrels, run, **options)
    assert got.topics == expected.topics
    assert (got.run_only_topics, got.missing_topics) == \
        (expected.run_only_topics, expected.missing_topics)
    assert _values(got) == _values(expected)
    return got


def _fresh(kind):
    return kind() if callable(kind) else kind


@pytest.mark.parametrize("ties", TIES)
def test_every_kind_evaluates_as_the_file_under_every_tie_policy(tmp_path, ties):
    qrels_rows, run_rows = _generated(1)
    qrels_path, run_path = _write(tmp_path, qrels_rows, run_rows)
    qrels_frame, run_frame = _frames(qrels_rows, run_rows)
    expected = _evaluate(qrels_path, run_path, ties=ties, seed=7)
    for name, kind in _kinds(run_frame).items():
        got = _evaluate(qrels_path, _fresh(kind), ties=ties, seed=7)
        assert got.topics == expected.topics, name
        assert _values(got) == _values(expected), name
    for name, kind in _kinds(qrels_frame).items():
        got = _evaluate(_fresh(kind), run_path, ties=ties, seed=7)
        assert _values(got) == _values(expected), name


@pytest.mark.parametrize("kind", ["pandas-arrow-string", "pyarrow-table", "pandas-categorical",
                                  "record-batch-reader", "arrow-c-stream", "polars"])
def test_the_native_ranker_takes_the_table(kind):
    """Not the reference reader in disguise: read_ranked ranks the table in C."""
    qrels_rows, run_rows = _generated(2)
    qrels_frame, run_frame = _frames(qrels_rows, run_rows)
    kinds = _kinds(run_frame)
    if kind not in kinds:
        pytest.skip("polars is not installed")
    ranked = native.read_ranked(_fresh(_kinds(qrels_frame)[kind]), _fresh(kinds[kind]),
                                ties="docno_desc", score_precision="float64", seed=0,
                                depth=None)
    assert ranked is not None
    assert ranked.run_topics == list(dict.fromkeys(t for t, _, _ in run_rows))


@pytest.mark.parametrize("ties", ["input_order", "docno_asc", "random"])
def test_interleaved_topics_rank_as_the_reference_reader_ranks_them(ties):
    """Rows not grouped by topic (a shuffled table): grouped in C, each topic's rows in
    row order; the reference reader on the same DataFrame agrees."""
    qrels_rows, run_rows = _generated(3, ungrouped=True)
    qrels_frame, run_frame = _frames(qrels_rows, run_rows)
    table = pa.Table.from_pandas(run_frame, preserve_index=False)
    assert native.read_ranked(qrels_frame, table, ties=ties, score_precision="float64",
                              seed=3, depth=None) is not None
    got = _evaluate(qrels_frame, table, ties=ties, seed=3)
    reference = _reference(qrels_frame, run_frame, ties=ties, seed=3)
    assert got.topics == reference.topics
    assert _values(got) == _values(reference)
    _assert_as_the_reference_reader(qrels_frame, table, ties=ties, seed=3)


@pytest.mark.parametrize("options", [{"depth": 5}, {"score_precision": "float32"},
                                     {"threads": 2}, {"topics": "qrels"}])
def test_options_as_for_files(tmp_path, options):
    qrels_rows, run_rows = _generated(4, n_topics=600)
    qrels_path, run_path = _write(tmp_path, qrels_rows, run_rows)
    _, run_frame = _frames(qrels_rows, run_rows)
    table = pa.Table.from_pandas(run_frame, preserve_index=False)
    expected = _evaluate(qrels_path, run_path, **options)
    got = _evaluate(qrels_path, table, **options)
    assert _values(got) == _values(expected)


def test_threads_cut_the_topics_in_ranges_into_one_output():
    qrels_rows, run_rows = _generated(5, n_topics=1500, ungrouped=True)
    qrels_frame, run_frame = _frames(qrels_rows, run_rows)
    one = native.read_ranked(qrels_frame, run_frame, ties="docno_desc",
                             score_precision="float64", seed=0, depth=None, threads=1)
    two = native.read_ranked(qrels_frame, run_frame, ties="docno_desc",
                             score_precision="float64", seed=0, depth=None, threads=2)
    assert one.run_topics == two.run_topics
    for field in ("run_offsets", "levels", "judged"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field))


@pytest.mark.parametrize("names, value", [
    (("qid", "docno", "score"), "run"), (("q_id", "doc_id", "score"), "run"),
    (("qid", "docno", "label"), "qrels"), (("query_id", "doc_id", "rel"), "qrels")])
def test_ir_measures_pyterrier_and_ranx_column_names(tmp_path, names, value):
    qrels_rows, run_rows = _generated(6)
    qrels_path, run_path = _write(tmp_path, qrels_rows, run_rows)
    rows = run_rows if value == "run" else qrels_rows
    table = pa.table({name: list(column) for name, column in zip(names, zip(*rows))})
    expected = _evaluate(qrels_path, run_path)
    got = _evaluate(qrels_path, table) if value == "run" else _evaluate(table, run_path)
    assert _values(got) == _values(expected)


def test_columns_named_explicitly(tmp_path):
    qrels_rows, run_rows = _generated(6)
    qrels_path, run_path = _write(tmp_path, qrels_rows, run_rows)
    frame = pd.DataFrame(run_rows, columns=["topic", "passage", "bm25"])
    frame["score"] = 0.0        # a column of our name that is not the one meant
    got = _evaluate(qrels_path, columns.renamed(frame, query_id="topic", doc_id="passage",
                                                score="bm25"))
    assert _values(got) == _values(_evaluate(qrels_path, run_path))
    with pytest.raises(InputError, match=r"missing column\(s\) \['nope'\]"):
        _evaluate(qrels_path, columns.renamed(frame, query_id="nope", doc_id="passage",
                                              score="bm25"))


def test_missing_columns_are_listed():
    frame = pa.table({"qid": ["1"], "score": [1.0]})
    with pytest.raises(InputError, match=r"<pyarrow.Table>: missing column\(s\) \['doc_id'\]"):
        load_run(frame)


def _error(run) -> str:
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(InputError) as caught:
        _evaluate(qrels, run)
    return str(caught.value)


@pytest.mark.parametrize("make", [pa.table, lambda d: pd.DataFrame(d).convert_dtypes(
    dtype_backend="pyarrow")])
def test_malformed_columns_are_input_errors_naming_the_row(make):
    ok = {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]}
    assert "row 1" in _error(make({**ok, "doc_id": ["a", None, "c"]}))
    assert "row 2" in _error(make({**ok, "query_id": ["1", "1", None]}))
    message = _error(make({**ok, "score": [1.0, float("nan"), 3.0]}))
    assert "row 1" in message and "NaN" in message
    message = _error(make({**ok, "score": [1.0, None, 3.0]}))
    assert "row 1" in message
    message = _error(make({**ok, "doc_id": ["a", "a", "c"]}))
    assert "duplicate" in message and "'a'" in message
    assert "boolean" in _error(make({**ok, "score": [True, False, True]}))
    message = _error(make({**ok, "score": ["1", "x", "3"]}))
    assert "row 0" in message or "row 1" in message


def test_duplicates_first_keeps_the_first_row():
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    run = pa.table({"query_id": ["1", "1", "1"], "doc_id": ["a", "a", "b"],
                    "score": [1.0, 3.0, 2.0]})
    with pytest.warns(UserWarning, match="dropped 1 duplicate"):
        got = evaluate(qrels, run, ["recip_rank"], duplicates="first")
    assert got.means["recip_rank"] == 1.0


def test_ids_the_file_reader_would_not_read_are_read_as_the_reference_reader_reads_them():
    """An id with a NUL or a line separator: ids of a table are text, like a dict's, so
    both readers take them; the native ranker reads them, with the reference reader's
    numbers."""
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a\x00b"], "relevance": [1]})
    run = pa.table({"query_id": ["1", "1"], "doc_id": ["x\u2028", "a\x00b"],
                    "score": [2.0, 1.0]})
    ranked = native.read_ranked(qrels, run, ties="docno_desc", score_precision="float64",
                                seed=0, depth=None)
    assert ranked.run_topics == ["1"] and ranked.judged.tolist() == [False, True]
    assert _assert_as_the_reference_reader(qrels, run).means["recip_rank"] == 0.5
    assert evaluate(qrels, run, ["recip_rank"]).means["recip_rank"] == 0.5


def test_integer_ids_read_as_their_digits_and_float_ids_as_str_writes_them():
    qrels = pd.DataFrame({"query_id": [7, 7], "doc_id": [1, 2], "relevance": [1, 0]})
    run = pa.table({"query_id": pa.array([7, 7], pa.int16()), "doc_id": [2, 1],
                    "score": pa.array([2, 1], pa.uint8())})
    assert native.read_ranked(qrels, run, ties="docno_desc", score_precision="float64",
                              seed=0, depth=None).run_topics == ["7"]
    assert evaluate(qrels, run, ["recip_rank"]).means["recip_rank"] == 0.5
    _assert_as_the_reference_reader(qrels, run)
    floats = pd.DataFrame({"query_id": [7.0], "doc_id": ["1"], "score": [1.0]})
    assert native.read_ranked(qrels, floats, ties="docno_desc", score_precision="float64",
                              seed=0, depth=None).run_topics == ["7.0"]
    assert load_run(floats).topics == ("7.0",)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)      # "7.0" is not qrels topic "7"
        _assert_as_the_reference_reader(qrels, floats)
    judged = pd.DataFrame({"query_id": ["7.0", "7.0"], "doc_id": ["1", "2"],
                           "relevance": [1, 0]})
    assert _assert_as_the_reference_reader(judged, floats).topics == ("7.0",)


def test_text_column_refuses_buffers_that_do_not_hold_together():
    from cgcore import _columns
    data = np.frombuffer(b"abcdef", np.uint8)
    assert _columns.TextColumn(np.array([0, 3, 6], np.int32), data).valid
    assert not _columns.TextColumn(np.array([0, 4, 3], np.int32), data).valid     # backwards
    assert not _columns.TextColumn(np.array([0, 3, 7], np.int64), data).valid     # past data
    assert not _columns.TextColumn(np.array([-1, 3], np.int64), data).valid
    assert not _columns.TextColumn(np.array([0, 3, 6], np.int32), data,
                                   np.array([0, 2], np.int32)).valid           # index
    assert not _columns.TextColumn(np.array([0, 2], np.int32),
                                   np.frombuffer(b"\xff\xfe", np.uint8)).valid  # not UTF-8
    with pytest.raises(ValueError):
        _columns.group_rows(_columns.TextColumn(np.array([0, 4, 3], np.int32), data))


def test_group_rows_keeps_row_order_within_each_topic():
    from cgcore import _columns
    words = ["b", "a", "b", "c", "a", "b"]
    array = pa.array(words)
    offsets, data = columns._string_buffers(array)
    starts, order = _columns.group_rows(_columns.TextColumn(offsets, data))
    assert starts.tolist() == [0, 3, 5, 6] and order.tolist() == [0, 2, 5, 1, 4, 3]
    offsets, data = columns._string_buffers(pa.array(sorted(words)))
    starts, order = _columns.group_rows(_columns.TextColumn(offsets, data))
    assert starts.tolist() == [0, 2, 5, 6] and order is None


ids = st.text(st.characters(codec="utf-8", exclude_characters="\x00\x85\u2028\u2029"),
              min_size=1, max_size=4).filter(lambda s: s.strip() == s and " " not in s
                                             and "\t" not in s and "\n" not in s
                                             and "\r" not in s and "\x0b" not in s
                                             and "\x0c" not in s and not s.startswith("#"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.sampled_from(["1", "2", "q3"]), ids,
                               st.integers(0, 3), st.integers(-2, 5)), min_size=1, max_size=40),
       ties=st.sampled_from(TIES))
def test_file_dict_and_columns_agree(tmp_path, rows, ties):
    """Generated tables: the file, the dicts and the columns give the same values."""
    run_rows = list({(t, d): (t, d, float(s)) for t, d, _, s in rows}.values())
    qrels_rows = list({(t, d): (t, d, r) for t, d, r, _ in rows}.values())
    qrels_path, run_path = _write(tmp_path, qrels_rows, sorted(run_rows, key=lambda r: r[0]))
    grouped = sorted(run_rows, key=lambda r: r[0])
    qrels_dict, run_dict = {}, {}
    for t, d, r in qrels_rows:
        qrels_dict.setdefault(t, {})[d] = r
    for t, d, s in grouped:
        run_dict.setdefault(t, {})[d] = s
    qrels_frame, run_frame = _frames(qrels_rows, grouped)
    by_file = _evaluate(qrels_path, run_path, ties=ties, seed=1)
    by_dict = _evaluate(qrels_dict, run_dict, ties=ties, seed=1)
    by_columns = _evaluate(pa.Table.from_pandas(qrels_frame),
                           pa.Table.from_pandas(run_frame), ties=ties, seed=1)
    assert by_file.topics == by_columns.topics == by_dict.topics
    expected = _values(by_file)
    assert _values(by_columns) == expected
    if ties != "input_order":       # a dict's documents are in insertion order too, but
        assert _values(by_dict) == expected     # the file's lines are in run_rows' order
    for name in expected:
        assert all(isinstance(v, float) and not math.isinf(v) for v in expected[name])


def test_pandas_object_columns_are_read_in_place_without_pyarrow(tmp_path, monkeypatch):
    """pandas before 3 holds strings as Python objects: their UTF-8 bytes are read in
    place (no pyarrow needed, no copy of the strings)."""
    qrels_rows, run_rows = _generated(8, ungrouped=True)
    qrels_path, run_path = _write(tmp_path, qrels_rows, run_rows)
    qrels_frame, run_frame = (frame.astype({"query_id": object, "doc_id": object})
                              for frame in _frames(qrels_rows, run_rows))
    expected = _evaluate(qrels_frame, run_frame)
    monkeypatch.setitem(sys.modules, "pyarrow", None)       # import pyarrow fails
    assert native.read_ranked(qrels_frame, run_frame, ties="docno_desc",
                              score_precision="float64", seed=0, depth=None) is not None
    assert _values(_evaluate(qrels_frame, run_frame)) == _values(expected)
    reference = _reference(qrels_frame, run_frame)
    assert _values(reference) == _values(expected)


def test_mixed_object_ids_are_converted_as_the_reference_reader_converts_them():
    """Object columns of str and int ids: converted by the reference front-end (str(5)
    is "5"), then ranked natively, with the reference reader's numbers."""
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["5", "b"], "relevance": [1, 1]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": pd.Series([5, "b"], dtype=object),
                        "score": [2.0, 1.0]})
    ranked = native.read_ranked(qrels, run, ties="docno_desc", score_precision="float64",
                                seed=0, depth=None)
    assert ranked.run_topics == ["1"] and ranked.judged.tolist() == [True, True]
    assert evaluate(qrels, run, ["num_rel_ret"]).means["num_rel_ret"] == 2   # str(5) = "5"
    _assert_as_the_reference_reader(qrels, run)


def test_object_columns_with_non_ascii_ids(tmp_path):
    qrels_rows = [("q1", "dé1", 2), ("q1", "d2", 1), ("𝔮2", "d1", 1)]
    run_rows = [("q1", "d2", 3.0), ("q1", "dé1", 1.0), ("𝔮2", "d1", 2.0), ("𝔮2", "x", 2.0)]
    qrels_path, run_path = _write(tmp_path, qrels_rows, run_rows)
    qrels_frame, run_frame = (frame.astype({"query_id": object, "doc_id": object})
                              for frame in _frames(qrels_rows, run_rows))
    assert native.read_ranked(qrels_frame, run_frame, ties="docno_desc",
                              score_precision="float64", seed=0, depth=None) is not None
    assert _values(_evaluate(qrels_frame, run_frame)) == \
        _values(_evaluate(qrels_path, run_path))
    lone = run_frame.copy()
    lone.loc[0, "doc_id"] = "d\udcff"
    with pytest.raises(InputError, match="lone surrogate"):
        _evaluate(qrels_frame, lone)


def test_prepared_table_qrels_serve_many_runs(tmp_path):
    import pickle
    from cumgain import prepare_qrels
    qrels_rows, run_rows = _generated(9)
    qrels_path, run_path = _write(tmp_path, qrels_rows, run_rows)
    qrels_frame, run_frame = _frames(qrels_rows, run_rows)
    renamed = columns.renamed(qrels_frame.rename(columns={"relevance": "grade"}),
                              relevance="grade")
    for table in (pa.Table.from_pandas(qrels_frame), renamed):
        prepared = prepare_qrels(table)
        assert isinstance(prepared, native.PreparedQrelsTable)
        assert prepared.topics == tuple(dict.fromkeys(t for t, _, _ in qrels_rows))
        expected = _reference(qrels_path, run_path)
        for run in (run_path, run_frame, pa.Table.from_pandas(run_frame)):
            assert _values(_evaluate(prepared, run)) == _values(expected)
        # a run with a repeated row, its duplicate dropped: as the reference reader does
        repeated = pd.concat([run_frame, run_frame.iloc[:1]])
        with pytest.warns(UserWarning, match="dropped") as native_warnings:
            first = evaluate(prepared, repeated, MEASURES, duplicates="first", warn=False)
        with pytest.warns(UserWarning, match="dropped") as reference_warnings:
            reference = reference_reading.evaluate(table, repeated, MEASURES,
                                                   duplicates="first", warn=False)
        assert [str(w.message) for w in native_warnings] == \
            [str(w.message) for w in reference_warnings]
        assert _values(first) == _values(reference) == _values(expected)
        again = pickle.loads(pickle.dumps(prepared))
        assert isinstance(again, native.PreparedQrelsTable)
        assert _values(_evaluate(again, run_path)) == _values(expected)


def test_judgments_prepared_once_are_not_indexed_and_not_checked_again(tmp_path, monkeypatch):
    """prepare_qrels_once (cumgain.dask's judgments): read and checked without the index
    of every topic, the same numbers for every run; pickled, rebuilt in the other process
    without the duplicate check (finish(unique=True)), and still without the index."""
    import pickle
    qrels_rows, run_rows = _generated(10)
    qrels_path, run_path = _write(tmp_path, qrels_rows, run_rows)
    qrels_frame, run_frame = _frames(qrels_rows, run_rows)
    expected = _values(_evaluate(qrels_path, run_path))
    once = native.prepare_qrels_once(pa.Table.from_pandas(qrels_frame))
    assert isinstance(once, native.PreparedQrelsTable) and not once.native.table.indexed
    assert cumgain.prepare_qrels(pa.Table.from_pandas(qrels_frame)).native.table.indexed
    for run in (run_path, run_frame, run_path):
        assert _values(_evaluate(once, run)) == expected
    rebuilt = []
    read = native._columns_qrels
    monkeypatch.setattr(native, "_columns_qrels", lambda qrels, indexed, unique=False: (
        rebuilt.append((indexed, unique)) or read(qrels, indexed, unique)))
    again = pickle.loads(pickle.dumps(once))
    assert rebuilt == [(False, True)] and not again.native.table.indexed
    assert again.topics == once.topics
    assert np.array_equal(again.relevance, once.relevance)
    assert _values(_evaluate(again, run_path)) == expected
    assert native.prepare_qrels_once(pa.table({"query_id": ["q1"], "doc_id": [None],
                                               "relevance": [1.0]})) is None


def test_a_table_finished_unique_is_not_checked():
    """QrelsTable.finish(unique=True) trusts that the judgments hold no duplicate (the
    process that read them checked): a duplicate is not looked for, as finish(check=True)
    finds it."""
    from cgcore import _qrels, _trec
    table = pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "relevance": [1.0, 2.0]})
    statuses = []
    for options in ({}, {"unique": True}, {"check": False, "unique": True}):
        qrels = _qrels.QrelsTable(False)
        read = columns.arrow_columns(table, "relevance")
        assert qrels.add_columns(read.query_ids, read.doc_ids, read.values) == _trec.STATUS_OK
        statuses.append(qrels.finish(**options))
    assert statuses == [_trec.STATUS_DUPLICATE, _trec.STATUS_OK, _trec.STATUS_OK]
