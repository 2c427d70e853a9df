"""The native reader (cgcore._trec via cumgain.io.native.reader) against the reference reader.

The native path reads every input itself (there is no fallback): on what the reference
reader (:mod:`cumgain.reference.reading`, the oracle) accepts it must give
bit-identical evaluations, and on what the reference reader refuses it must raise the
same error, word for word. The same holds for plain dicts and for qrels prepared once
(PreparedQrels).
"""
import ctypes
import dataclasses
import gc
import gzip
import io
import json
import math
import os
import pickle
import re
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter, OrderedDict

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

import cumgain
from cumgain import trec_io
from cgcore import _lines, _qrels, _trec, _vectors
from cumgain.io.native import blocks as _native_blocks
from cumgain.io.native import parts as _native_parts
from cumgain.io.native import reader as native
from cumgain.reference import reading as reference_reading
from cumgain.engine.evaluator import TopicsWarning, evaluate
from cumgain.exceptions import FormatError, InputError
from cumgain.measures import parse_measures
from cumgain.io.native.reader import PreparedQrels, RankedInput, read_ranked
from cumgain.trec_io import load_run

MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank",
            "P.1,3,10", "recall.5", "ndcg", "ndcg_cut.3,10", "ndcg_rel", "Rndcg",
            "success.1,5", "nDCG@5(gains=exponential,discount=tois)", "avg_pos_nCG@4"]


def both_ways(qrels, run, measures=MEASURES, **options):
    """Evaluate the same inputs with the native reader and with the reference reader."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        native = evaluate(qrels, run, measures, **options)
        reference = reference_reading.evaluate(qrels, run, measures, **options)
    return native, reference


READ = dict(ties="docno_desc", score_precision="float64", seed=0, depth=None)
_READ_OPTIONS = ("ties", "score_precision", "seed", "depth", "duplicates", "threads")


def reference_error(qrels, run, measures=("map",), **options) -> Exception:
    """The error the reference reader raises for these inputs (it must raise one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        with pytest.raises(Exception) as caught:
            reference_reading.evaluate(qrels, run, list(measures), **options)
    return caught.value


def raises_the_reference_error(qrels, run, measures=("map",), **options) -> Exception:
    """read_ranked and evaluate() on the inputs both raise the reference reader's error
    for them: the same type, the same message. Returns that error."""
    expected = reference_error(qrels, run, measures, **options)
    read_options = {**READ, **{k: v for k, v in options.items() if k in _READ_OPTIONS}}
    for attempt in (lambda: read_ranked(qrels, run, **read_options),
                    lambda: evaluate(qrels, run, list(measures), **options)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TopicsWarning)
            with pytest.raises(Exception) as caught:
                attempt()
        assert type(caught.value) is type(expected), (caught.value, expected)
        assert str(caught.value) == str(expected)
    return expected


def assert_same(native, reference):
    assert native.topics == reference.topics
    assert native.run_tag == reference.run_tag
    assert (native.run_only_topics, native.missing_topics) == \
        (reference.run_only_topics, reference.missing_topics)
    for name in reference.values:
        np.testing.assert_array_equal(native.values[name], reference.values[name], err_msg=name)
        assert native.means[name] == reference.means[name] or \
            (math.isnan(native.means[name]) and math.isnan(reference.means[name]))


docnos = st.sampled_from(["d1", "d2", "d10", "D1", "a", "é", "doc#1", "z" * 40])
topics = st.sampled_from(["1", "2", "10", "q"])
scores = st.sampled_from(["1", "1.0", "0.5", "-2", "1e3", "1.0000000002", "1.0000000001",
                          "100000001", "100000000", "3.14159265358979", "inf", ".5", "5."])
levels = st.sampled_from(["0", "1", "2", "3", "9", "-1", "-2", "1.5", "127", "-128", "128", "-0",
                          "1e2", "07", "+1", "2."])   # int8 levels but for 1.5, 128 and -0
                                                      # (see Levels); one digit: _push_small_level


@st.composite
def collections(draw):
    """A valid qrels and run (topics contiguous in the run, no duplicate docnos)."""
    qrels_lines, run_lines = [], []
    for topic in draw(st.lists(topics, min_size=1, max_size=4, unique=True)):
        for docno in draw(st.lists(docnos, max_size=6, unique=True)):
            sep = draw(st.sampled_from([" ", "\t", "  "]))
            qrels_lines.append(f"{topic}{sep}0 {docno} {draw(levels)}")
    for topic in draw(st.lists(topics, min_size=1, max_size=4, unique=True)):
        for rank, docno in enumerate(draw(st.lists(docnos, min_size=1, max_size=7, unique=True))):
            extra = draw(st.sampled_from(["", " extra", "\r", " 1.5 words"]))
            run_lines.append(f"{topic} Q0 {docno} {rank + 1} {draw(scores)} tag{topic}{extra}")
    if not qrels_lines:
        qrels_lines.append("1 0 d1 1")
    return qrels_lines, run_lines


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections(), st.sampled_from(["docno_desc", "docno_asc", "input_order", "random"]),
       st.sampled_from(["float64", "float32"]), st.sampled_from([None, 2]), st.booleans(),
       st.sampled_from(["both", "qrels"]))
def test_native_equals_reference(tmp_path, data, ties, precision, depth, judged_only, which):
    qrels_lines, run_lines = data
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    run_path.write_text("\n".join(run_lines) + "\n")
    assert isinstance(read_ranked(qrels_path, run_path, ties=ties, score_precision=precision,
                                  seed=3, depth=depth), RankedInput)
    native, reference = both_ways(qrels_path, run_path, ties=ties, score_precision=precision,
                                  seed=3, depth=depth, judged_only=judged_only, topics=which)
    assert_same(native, reference)


BAD_LINES = [
    "1 0 d1",                   # qrels: too few fields
    "1 0 d1 1 extra",           # qrels: too many
    "1 0 d1 x",                 # non-numeric relevance
    "1 0 d1 -",                 # one byte, not a digit
    "1 0 d1 .",
    "1 0 d1 :",                 # the byte after '9'
    "1 0 d1 nan",
    "1 0 d1 inf",
    "1 0 d1 0x10",
    "1 0 d1 1_0",
    "",                         # blank line in qrels
    "1 0 d\x00 1",
    "1 0 d\u20281 1",           # a Unicode line separator (U+2028, U+0085, U+2029)
    "1 0 d1 1\u0085",
    "\u2029",
]


@pytest.mark.parametrize("bad", BAD_LINES)
def test_bad_qrels_lines_raise_the_reference_readers_error(tmp_path, bad):
    """The native reader stops at the bad line and words the error as the reference
    reader does, naming file and line."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text(f"1 0 a 1\n{bad}\n1 0 b 0\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n")
    error = raises_the_reference_error(qrels_path, run_path)
    assert isinstance(error, FormatError) and re.search(r"qrels:2:", str(error))
    assert (error.path, error.line_number) == (str(qrels_path), 2)


@pytest.mark.parametrize("bad", ["1 Q0 b 2 1.0", "1 Q0 b 2 x t", "1 Q0 b 2 nan t",
                                 "1 Q0 b 2 1e t", "1 Q0 a 2 0.5 t", "1 Q0 b\u2028 2 1.0 t",
                                 "1 Q0 b c 2 1.0 t", "1 Q0 b 2 1.0 inf x"])
def test_bad_run_lines_raise_the_reference_readers_error(tmp_path, bad):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 1\n")
    run_path.write_text(f"1 Q0 a 1 1.0 t\n{bad}\n")
    error = raises_the_reference_error(qrels_path, run_path)
    assert isinstance(error, FormatError) and re.search(r"run:2:", str(error))
    assert (error.path, error.line_number) == (str(run_path), 2)


def test_invalid_utf8_raises_the_reference_readers_error(tmp_path):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_bytes(b"1 0 a 1\n1 0 \xff 1\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n")
    error = raises_the_reference_error(qrels_path, run_path)
    assert isinstance(error, FormatError) and "UTF-8" in str(error)


@pytest.mark.parametrize("threads", [1, 2])
def test_interleaved_run_topics_are_read_natively_as_the_reference_reader_reads_them(
        tmp_path, threads):
    """A run topic that comes back after another: the native reader reads the file
    again holding its lines by topic, and ranks as the reference reader does."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 1\n2 0 b 1\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n2 Q0 b 1 1.0 t\n1 Q0 c 2 0.5 t\n")
    ranked = read_ranked(qrels_path, run_path, threads=threads, **READ)
    assert ranked.run_topics == ["1", "2"] and ranked.run_offsets.tolist() == [0, 2, 3]
    result, reference = both_ways(qrels_path, run_path, threads=threads)
    assert_same(result, reference)
    assert result.values["num_ret"].tolist() == [2, 1] and result.means["map"] == 1.0


def test_gzip_and_bom_and_crlf(tmp_path):
    qrels_path, run_path = tmp_path / "qrels.gz", tmp_path / "run"
    with gzip.open(qrels_path, "wt") as stream:
        stream.write("1 0 a 2\r\n1 0 b 1\r\n")
    run_path.write_bytes(b"\xef\xbb\xbf1 Q0 b 1 2.0 t\r\n1 Q0 a 2 1.0 t\r\n")
    assert read_ranked(qrels_path, run_path, ties="docno_desc", score_precision="float64",
                       seed=0, depth=None) is not None
    assert_same(*both_ways(qrels_path, run_path))


def _corrupt_gzip(text: bytes) -> bytes:
    """``text`` gzipped, 40 bytes in the middle of the compressed data overwritten: zlib
    gives garbled text for a while before it finds the error."""
    data = bytearray(gzip.compress(text, mtime=0))
    data[len(data) // 2: len(data) // 2 + 40] = b"\xff" * 40
    return bytes(data)


@pytest.mark.parametrize("form", ["file", "stream"])
@pytest.mark.parametrize("bad_file", ["qrels", "run"])
def test_corrupt_gzip_data_raises_the_reference_readers_error(tmp_path, bad_file, form):
    """Corrupt gzip data in a qrels or run file, or in a binary stream of it: the
    reference reader's error, word for word."""
    qrels = b"".join(b"1 0 doc%07d %d\n" % (i, i % 3) for i in range(3000))
    run = b"".join(b"1 Q0 doc%07d %d %.6f tag\n" % (i, i, 1 / (i + 1)) for i in range(3000))
    qrels_path, run_path = tmp_path / "qrels.gz", tmp_path / "run.gz"
    qrels_path.write_bytes(_corrupt_gzip(qrels) if bad_file == "qrels" else gzip.compress(qrels))
    run_path.write_bytes(_corrupt_gzip(run) if bad_file == "run" else gzip.compress(run))

    def inputs():       # (a stream is read once: a fresh one each time)
        if form == "file":
            return qrels_path, run_path
        if bad_file == "qrels":
            return io.BytesIO(qrels_path.read_bytes()), run_path
        return qrels_path, io.BytesIO(run_path.read_bytes())

    expected = reference_error(*inputs())
    assert isinstance(expected, FormatError) and "corrupt gzip data" in str(expected)
    for attempt in (lambda: read_ranked(*inputs(), **READ),
                    lambda: evaluate(*inputs(), ["map"])):
        with pytest.raises(FormatError) as error:
            attempt()
        assert str(error.value) == str(expected)


def test_duplicates_raise_or_are_dropped_as_the_reference_reader_does(tmp_path):
    """A docno twice in a run topic: the reference reader's error; with "first" or
    "last", the same warning and the same values as the reference reader."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 1\n1 0 b 0\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 0.7 t\n1 Q0 a 3 0.5 t\n")
    error = raises_the_reference_error(qrels_path, run_path)
    assert isinstance(error, FormatError) and "duplicate" in str(error)
    for policy in ("first", "last"):
        with pytest.warns(Warning) as native_warnings:
            result = evaluate(qrels_path, run_path, ["num_ret", "recip_rank"],
                              duplicates=policy)
        with pytest.warns(Warning) as reference_warnings:
            reference = reference_reading.evaluate(qrels_path, run_path,
                                                   ["num_ret", "recip_rank"],
                                                   duplicates=policy)
        assert [str(w.message) for w in native_warnings] == \
            [str(w.message) for w in reference_warnings]
        assert_same(result, reference)
        # the first keeps a at 1.0 (ranked first), the last at 0.5 (after b, not relevant)
        assert result.means["num_ret"] == 2
        assert result.means["recip_rank"] == (1.0 if policy == "first" else 0.5)


def test_long_lines_and_long_numbers(tmp_path):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    long_docno = "x" * 100_000
    qrels_path.write_text(f"1 0 {long_docno} 1\n")
    run_path.write_text(f"1 Q0 {long_docno} 1 {'1' * 200}.5 t\n1 Q0 b 2 0.{'1' * 300} t\n")
    assert_same(*both_ways(qrels_path, run_path))


# ------------------------------------------------------------------ plain dicts

# Docnos whose byte order the 8-byte prefix comparison alone cannot settle (equal
# first 8 bytes, one a prefix of another, NUL bytes, multi-byte UTF-8), short ones
# (fewer than 4 bytes) and the empty docno. (No docno ends in NUL: the reference
# path's numpy str arrays would drop it, and a file cannot hold one.)
DICT_DOCNOS = ["", "a", "ab", "abc", "abcd", "abcd\x00e", "abcdefg", "abcdefgh",
               "abcdefgh\x00i", "abcdefghi", "abcdefgg", "abcdefgi", "abcdefgh" * 5,
               "abcdefgh" * 5 + "x", "é", "éa", "日本語テキスト", "\U0001F600", "d1", "d10", "d2",
               "D1", "10", "9"]
dict_scores = st.sampled_from([0.5, 0.25, 1, 2, -1.0, 1.0000000001, 1.0000000002, 1e300,
                               float("inf"), float("-inf"), -0.0, 0.0])


@st.composite
def dict_collections(draw):
    """A qrels dict and a run dict; some topics long (tie groups past the insertion sort's
    16), scores in any order."""
    qrels, run = {}, {}
    for topic in draw(st.lists(topics, min_size=1, max_size=3, unique=True)):
        judged = draw(st.lists(st.sampled_from(DICT_DOCNOS), min_size=1, max_size=12,
                               unique=True))
        qrels[topic] = {d: draw(st.sampled_from([-1, 0, 1, 2, 3, 1.5])) for d in judged}
    for topic in draw(st.lists(topics, min_size=1, max_size=3, unique=True)):
        docs = draw(st.lists(st.sampled_from(DICT_DOCNOS), min_size=1, max_size=len(DICT_DOCNOS),
                             unique=True))
        if draw(st.booleans()):
            docs += [f"x{i}" for i in range(draw(st.integers(17, 60)))]
        palette = draw(st.lists(dict_scores, min_size=1, max_size=3))
        run[topic] = {d: draw(st.sampled_from(palette)) for d in docs}
    return qrels, run


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(dict_collections(), st.sampled_from(["docno_desc", "docno_asc", "input_order", "random"]),
       st.sampled_from(["float64", "float32"]), st.sampled_from([None, 3, 30]), st.booleans())
def test_dicts_native_equals_reference(data, ties, precision, depth, judged_only):
    qrels, run = data
    assert isinstance(read_ranked(qrels, run, ties=ties, score_precision=precision, seed=3,
                                  depth=depth), RankedInput)
    options = dict(ties=ties, score_precision=precision, seed=3, depth=depth,
                   judged_only=judged_only)
    assert_same(*both_ways(qrels, run, **options))


@pytest.mark.parametrize("value", [10 ** 400, -10 ** 400, 2 ** 1024],
                         ids=["1e400", "-1e400", "2^1024"])
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_an_int_no_float64_holds_is_the_same_input_error_on_both_dict_paths(which, value):
    """The C path once raised a raw OverflowError from PyLong_AsDouble; the reference
    path an InputError naming the topic and document. Both now give the latter."""
    qrels, run = {"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.5, "d2": 1.5}}
    (qrels if which == "qrels" else run)["q1"]["d2"] = value
    name = "relevance" if which == "qrels" else "score"
    error = raises_the_reference_error(qrels, run)
    assert isinstance(error, InputError)
    assert re.search(rf"<dict>: topic 'q1', docid 'd2': {name} .*digits\) cannot be a "
                     rf"float64", str(error))


@pytest.mark.parametrize("where", ["qrels topic", "qrels docno", "run topic", "run docno"])
def test_a_lone_surrogate_in_a_dict_id_is_the_same_input_error_on_both_paths(where):
    """A str with a lone surrogate has no UTF-8 bytes, which the ids are compared by:
    an InputError naming the topic or document on both paths (the C path once raised
    UnicodeEncodeError, the reference path evaluated)."""
    bad = "x\udcff"
    qrels, run = {"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.5, "d2": 1.5}}
    target = qrels if where.startswith("qrels") else run
    if where.endswith("topic"):
        target[bad] = target.pop("q1")
        named = r"topic 'x\\udcff'"
    else:
        target["q1"][bad] = target["q1"].pop("d2")
        named = r"topic 'q1', docid 'x\\udcff'"
    pattern = rf"<dict>: {named} is not valid text: a lone surrogate '\\udcff' at position 1"
    error = raises_the_reference_error(qrels, run)
    assert isinstance(error, InputError) and re.search(pattern, str(error))


def test_a_lone_surrogate_in_a_dataframe_id_is_an_input_error():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q1", "q1"],
                          "doc_id": pd.Series(["d1", "d\ud800"], dtype=object),
                          "score": [1.0, 2.0]})
    with pytest.raises(InputError, match=r"row 1 .*doc_id 'd\\ud800' is not valid text"):
        load_run(frame)


def _ranked_columns(ranker):
    topics, offsets, levels, judged, scores, _ = ranker.result()
    return topics, offsets.tolist(), levels.tolist(), judged.tolist(), scores.tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(DICT_DOCNOS), dict_scores, max_size=8),
                min_size=1, max_size=7),
       st.lists(st.integers(0, 7), max_size=4), st.sampled_from(["docno_desc", "random"]))
def test_a_run_dict_ranked_in_topic_ranges_ranks_as_one_ranker(topic_docs, cuts, ties):
    """RunRanker.add_dict(run, first, stop): rankers of consecutive topic ranges (some
    empty), appended in order, give one ranker's columns."""
    run = {f"t{i}": docs for i, docs in enumerate(topic_docs)}
    table = _qrels.QrelsTable(True)
    assert table.add_dict({"t0": {"a": 2, "b": 1}, "t3": {"é": 1}}) == _trec.STATUS_OK
    assert table.finish() == _trec.STATUS_OK

    def ranker():
        return _trec.RunRanker(table, native.TIE_CODES[ties], False, -1, 7, True)

    whole = ranker()
    assert whole.add_dict(run) == _trec.STATUS_OK and whole.finish() == _trec.STATUS_OK
    bounds = [0] + sorted(min(cut, len(run)) for cut in cuts) + [len(run)]
    parts = [ranker() for _ in bounds[1:]]
    for part, first, stop in zip(parts, bounds, bounds[1:]):
        assert part.add_dict(run, first, stop) == _trec.STATUS_OK
        assert part.finish() == _trec.STATUS_OK
    for part in parts[1:]:
        assert parts[0].append(part) == _trec.STATUS_OK
    assert _ranked_columns(parts[0]) == _ranked_columns(whole)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(DICT_DOCNOS), dict_scores, max_size=8),
                min_size=1, max_size=7),
       st.lists(st.integers(0, 7), max_size=4), st.sampled_from([-1, 0, 1, 3]),
       st.booleans(), st.booleans())
def test_rankers_of_topic_ranges_writing_into_one_output_rank_as_one_ranker(
        topic_docs, cuts, depth, keep_scores, wide):
    """RunRanker.write_rows_into: the rankers of consecutive topic ranges (some empty)
    write their rows (cut at the depth, as dict_rows counts them) straight into the
    caller's arrays (levels of the table's dtype: int8 for small whole levels, else
    float64); appended in order, they give one ranker's columns, and the result is
    those arrays, the rows never moved."""
    run = {f"t{i}": docs for i, docs in enumerate(topic_docs)}
    table = _qrels.QrelsTable(False)
    assert table.add_dict({"t0": {"a": 2, "b": 0.5 if wide else 1},
                           "t3": {"é": 1}}) == _trec.STATUS_OK
    assert table.finish() == _trec.STATUS_OK

    def ranker():
        return _trec.RunRanker(table, _trec.TIES_DOCNO_DESC, True, depth, 7, keep_scores)

    whole = ranker()
    assert whole.add_dict(run) == _trec.STATUS_OK and whole.finish() == _trec.STATUS_OK
    bounds = [0] + sorted(min(cut, len(run)) for cut in cuts) + [len(run)]
    parts = [ranker() for _ in bounds[1:]]
    rows = parts[0].dict_rows(run, bounds)
    assert rows == [sum(len(docs) if depth < 0 else min(depth, len(docs))
                        for docs in topic_docs[first:stop])
                    for first, stop in zip(bounds, bounds[1:])]
    assert parts[0].levels_dtype == (np.float64 if wide else np.int8)
    levels = np.full(sum(rows), -1, parts[0].levels_dtype)
    judged = np.full(sum(rows), 7, np.uint8)
    scores = np.full(sum(rows), -1.0) if keep_scores else None
    at = 0
    for part, first, stop, n in zip(parts, bounds, bounds[1:], rows):
        part.write_rows_into(levels, judged, scores, at, n)
        at += n
        assert part.add_dict(run, first, stop) == _trec.STATUS_OK
        assert part.finish() == _trec.STATUS_OK
    for part in parts[1:]:
        assert parts[0].append(part) == _trec.STATUS_OK
    topics, offsets, got_levels, got_judged, got_scores, _ = parts[0].result()
    expected = whole.result()
    assert (topics, offsets.tolist()) == (expected[0], expected[1].tolist())
    assert got_levels.tolist() == expected[2].tolist() == levels.tolist()
    assert got_judged.tolist() == expected[3].tolist() == judged.astype(bool).tolist()
    assert got_judged.dtype == np.bool_ and got_levels.dtype == levels.dtype
    if keep_scores:
        assert got_scores.tolist() == expected[4].tolist() == scores.tolist()
    else:
        assert got_scores is None and expected[4] is None
    if len(levels):
        assert np.shares_memory(got_levels, levels) and np.shares_memory(got_judged, judged)
        assert not keep_scores or np.shares_memory(got_scores, scores)


def _two_rankers_into_one_output(run, rows):
    table = _qrels.QrelsTable(False)
    assert table.add_dict({"t0": {"a": 1}}) == _trec.STATUS_OK and table.finish() == _trec.STATUS_OK
    rankers = [_trec.RunRanker(table, _trec.TIES_DOCNO_DESC, True, -1, 0, False)
               for _ in rows]
    levels, judged = np.zeros(sum(rows), np.int8), np.zeros(sum(rows), np.uint8)
    for ranker, at, n in zip(rankers, [0, rows[0]], rows):
        ranker.write_rows_into(levels, judged, None, at, n)
    return rankers


def test_a_ranker_given_fewer_rows_than_its_range_ranks_stops():
    """More rows than counted (a run dict changed after dict_rows) stop the ranker,
    never write past its rows; fewer rows than counted leave a gap, and appending the
    next range's then stops, as does appending rows that do not follow: then the run
    dict is checked and converted by the reference front-end and ranked again."""
    run = {"t0": {"a": 1.0, "b": 2.0}, "t1": {"c": 1.0, "d": 2.0}}
    first, second = _two_rankers_into_one_output(run, [1, 2])
    assert first.add_dict(run, 0, 1) != _trec.STATUS_OK        # 2 rows, room for 1
    first, second = _two_rankers_into_one_output(run, [3, 2])
    assert first.add_dict(run, 0, 1) == _trec.STATUS_OK and first.finish() == _trec.STATUS_OK
    assert second.add_dict(run, 1, 2) == _trec.STATUS_OK and second.finish() == _trec.STATUS_OK
    assert first.append(second) != _trec.STATUS_OK            # a row short before it
    first, second = _two_rankers_into_one_output(run, [2, 2])
    assert first.add_dict(run, 0, 1) == _trec.STATUS_OK and first.finish() == _trec.STATUS_OK
    assert second.add_dict(run, 1, 2) == _trec.STATUS_OK and second.finish() == _trec.STATUS_OK
    assert second.append(first) != _trec.STATUS_OK            # not the rows that follow


def test_write_rows_into_checks_its_arguments():
    table = _qrels.QrelsTable(False)
    assert table.add_dict({"t0": {"a": 1}}) == _trec.STATUS_OK and table.finish() == _trec.STATUS_OK
    ranker = _trec.RunRanker(table, _trec.TIES_DOCNO_DESC, True, -1, 0, True)
    levels, judged = np.zeros(3, np.int8), np.zeros(3, np.uint8)
    with pytest.raises(ValueError, match="numpy array of"):
        ranker.write_rows_into(np.zeros(3), judged, np.zeros(3), 0, 3)  # not the table's
    with pytest.raises(ValueError, match="do not fit"):
        ranker.write_rows_into(levels, judged, np.zeros(3), 1, 3)
    with pytest.raises(ValueError, match="do not fit"):
        ranker.write_rows_into(levels, judged, np.zeros(2), 0, 3)    # scores too short
    with pytest.raises(ValueError, match="keeps scores"):
        ranker.write_rows_into(levels, judged, None, 0, 3)
    assert ranker.add_dict({"t0": {"a": 1.0}}) == _trec.STATUS_OK
    with pytest.raises(ValueError, match="before anything is ranked"):
        ranker.write_rows_into(levels, judged, np.zeros(3), 0, 3)
    assert ranker.dict_rows({"t0": {"a": 1.0}, "t1": [("a", 1.0)]}, [0, 2]) is None


def test_run_dicts_ranked_in_batches_and_in_threads_equal_the_reference(monkeypatch):
    """add_dict ranks the topics it collects in batches of about DICT_BATCH documents
    (the GIL released meanwhile), and read_ranked splits a run dict's topics between
    threads: topics smaller and larger than a batch, one without documents, every
    split, the same evaluation as the reference reader's."""
    batch = _trec.DICT_BATCH
    sizes = [3, batch - 3, 1, 0, 2 * batch + 5, 17, batch, 40]
    run = {f"q{t}": {f"d{(d * 7919) % (size + 1)}-{d}": float((d * 31) % 97) for d in range(size)}
           for t, size in enumerate(sizes)}
    qrels = {f"q{t}": {f"d{(d * 7919) % (size + 1)}-{d}": d % 4 for d in range(0, size, 3)}
             for t, size in enumerate(sizes) if size}
    reference = _reference_evaluation(qrels, run, score_precision="float32")
    monkeypatch.setattr(native, "DICT_TOPICS_PER_THREAD", 1)
    for threads in (1, 2, 3, 40):
        assert isinstance(read_ranked(qrels, run, ties="docno_desc", score_precision="float32",
                                      seed=0, depth=None, threads=threads), RankedInput)
        assert_same(_evaluation(qrels, run, score_precision="float32", threads=threads),
                    reference)


@pytest.mark.parametrize("bad_topic", [0, 2, 5])
def test_a_bad_run_dict_entry_in_any_thread_raises_the_reference_readers_error(
        monkeypatch, bad_topic):
    """A value the ranker does not take, in whichever thread's topic range: the run is
    checked by the reference front-end, whose error is raised."""
    monkeypatch.setattr(native, "DICT_TOPICS_PER_THREAD", 1)
    run = {f"q{t}": {"a": 1.0, "b": 2.0} for t in range(6)}
    run[f"q{bad_topic}"]["c"] = "high"
    for threads in (1, 3):
        error = raises_the_reference_error({"q1": {"a": 1}}, run, threads=threads)
        assert isinstance(error, InputError) and "high" in str(error)


def test_native_arrays_outlive_the_native_objects():
    """The ranked columns are handed over without a copy: they stay valid (and
    writable, like any array) after the ranker is gone. The grouped judgments are
    read-only and outlive their table."""
    ranked = read_ranked({"q": {"a": 2, "c": 1}}, {"q": {"a": 0.5, "b": 0.5, "c": 0.9}},
                         ties="docno_desc", score_precision="float64", seed=0, depth=None)
    table = _qrels.QrelsTable()
    assert table.add_dict({"q": {"x": 3, "y": 0}, "r": {"z": 1}}) == _trec.STATUS_OK
    assert table.feed(b"q 0 w 2\n") == _trec.STATUS_OK and table.finish() == _trec.STATUS_OK
    offsets, levels = table.grouped()
    del table
    gc.collect()
    # c (0.9) first, then the tie b, a in docno-descending order
    assert ranked.levels.tolist() == [1.0, 0.0, 2.0]
    assert ranked.judged.tolist() == [True, False, True]
    assert ranked.run_offsets.tolist() == [0, 3]
    ranked.levels[0] = 5.0
    assert ranked.levels[0] == 5.0
    # topic q's rows (x, y, then w from the file) before r's
    assert offsets.tolist() == [0, 3, 4] and levels.tolist() == [3.0, 0.0, 2.0, 1.0]
    for column in (offsets, levels):        # shared with the table while it lives
        with pytest.raises(ValueError):
            column.flags.writeable = True
    assert not offsets.flags.writeable and not levels.flags.writeable


judgment_lines = st.lists(st.one_of(
    st.tuples(st.sampled_from("123456"), st.sampled_from(["a", "b", "c", "d", "e", "f"])),
    st.just(None)), max_size=40)        # None: a comment line


@settings(deadline=None)
@given(judgment_lines, st.integers(1, 4), st.booleans())
def test_duplicate_check_in_threads_names_the_first_duplicate_line(lines, threads, indexed):
    """However many threads check the topics (each a range), a duplicate stops the
    table, which names the first repeat by line (as the reference reader does), with
    the line of that docno's first occurrence, counting comment lines, and counts every
    repeat; topics may be interleaved."""
    text = "".join("# note\n" if line is None else f"{line[0]} 0 {line[1]} 1\n"
                   for line in lines)
    first_line, repeats = {}, []        # (topic, docno) -> line; (line, topic, docno)
    for number, line in enumerate(lines, start=1):
        if line is None:
            continue
        if line in first_line:
            repeats.append((number, *line))
        first_line.setdefault(line, number)
    table = _qrels.QrelsTable(indexed)
    assert table.feed(text.encode()) == _trec.STATUS_OK
    old, _qrels.CHECK_ROWS_PER_THREAD = _qrels.CHECK_ROWS_PER_THREAD, 1
    try:
        status = table.finish(threads)
    finally:
        _qrels.CHECK_ROWS_PER_THREAD = old
    if not repeats:
        assert status == _trec.STATUS_OK and table.first_duplicate() is None
        return
    repeat, topic, docno = min(repeats)
    assert status == _trec.STATUS_DUPLICATE and table.status_line == repeat
    assert table.first_duplicate() == (topic, docno, first_line[topic, docno], repeat)
    assert table.n_duplicates == len(repeats)


@pytest.mark.parametrize("indexed", [False, True])
def test_qrels_tables_find_duplicates_with_or_without_a_kept_index(indexed):
    """The duplicate check names the line of the second occurrence, whichever way the
    table is built; an indexed table ranks like one without."""
    table = _qrels.QrelsTable(indexed)
    assert table.feed(b"1 0 a 1\n2 0 a 1\n1 0 b 0\n1 0 a 2\n") == _trec.STATUS_OK
    assert table.finish() == _trec.STATUS_DUPLICATE and table.status_line == 4
    run = {"1": {"a": 1.0, "b": 2.0, "c": 0.5}, "3": {"a": 1.0}}
    columns = []
    for indexed_table in (False, True):
        table = _qrels.QrelsTable(indexed_table)
        assert table.indexed == indexed_table
        assert table.add_dict({"1": {"a": 2, "b": 0}, "2": {"a": 1}}) == _trec.STATUS_OK
        assert table.finish() == _trec.STATUS_OK
        ranker = _trec.RunRanker(table, _trec.TIES_DOCNO_DESC, False, -1, 0, False)
        assert ranker.add_dict(run) == _trec.STATUS_OK and ranker.finish() == _trec.STATUS_OK
        topics, offsets, levels, judged, _, _ = ranker.result()
        columns.append((topics, offsets.tolist(), levels.tolist(), judged.tolist()))
    # topic 1: b (2.0, judged 0), a (1.0, level 2), c (unjudged); topic 3 has no judgments
    assert columns[0] == columns[1] == (["1", "3"], [0, 3, 4], [0.0, 2.0, 0.0, 0.0],
                                        [True, True, False, False])


# ------------------------------------------------------------------ prepared qrels

def _evaluation(qrels, run, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        return evaluate(qrels, run, MEASURES, **options)


def _reference_evaluation(qrels, run, measures=MEASURES, **options):
    """The reference reader's evaluation of the same inputs (the oracle)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        return reference_reading.evaluate(qrels, run, measures, **options)


def test_prepared_qrels_evaluate_like_the_plain_dict(tmp_path):
    qrels = {"1": {"a": 2, "b": 0, "c": 1}, "2": {"a": 1}, "3": {"z": -1, "y": 3}}
    runs = [{"1": {"a": 0.1, "c": 0.9, "d": 0.9}, "3": {"y": 1.0}, "4": {"a": 1.0}},
            {"2": {"b": 1, "a": 1}}]
    run_path = tmp_path / "run"
    run_path.write_text("1 Q0 c 1 2.0 t\n1 Q0 a 2 1.0 t\n2 Q0 a 1 5 t\n")
    prepared = PreparedQrels(qrels)
    assert prepared == qrels and prepared.native is not None
    for run in runs + [run_path]:
        for options in ({}, {"ties": "docno_asc", "depth": 1},
                        {"score_precision": "float32", "judged_only": True}):
            assert_same(_evaluation(prepared, run, **options), _evaluation(qrels, run, **options))
    # other mappings are copied into plain dicts, which the native reader takes
    ordered = PreparedQrels({qid: OrderedDict(docs) for qid, docs in qrels.items()})
    assert ordered == qrels and ordered.native is not None
    assert all(type(docs) is dict for docs in ordered.values())
    assert_same(_evaluation(ordered, runs[0]), _evaluation(qrels, runs[0]))


def test_prepared_qrels_keep_the_dicts_and_read_them_once():
    """The topics' dicts are not copied; the table built from them serves every
    evaluation, with the same numbers each time."""
    qrels = {"1": {"a": 2, "b": 1}, "2": {"c": 1}}
    prepared = PreparedQrels(qrels)
    assert prepared["1"] is qrels["1"] and prepared["2"] is qrels["2"]
    run = {"1": {"b": 2.0, "c": 1.0, "a": 0.5}, "2": {"c": 3}}
    first = _evaluation(prepared, run)
    assert_same(first, _evaluation(qrels, run))
    assert_same(_evaluation(prepared, run), first)


@pytest.mark.parametrize("qrels", [{"1": {"a": np.int64(1)}}, {1: {"a": 1}},
                                   {"1": {"a": 1}, "2": {}}, {"1": {"a": float("nan")}},
                                   {"1": {"a": 10 ** 400}}, {"1": {"a\udcff": 1}},
                                   {"1\udcff": {"a": 1}}, {"1": {"a": True}},
                                   {"1": {"a": "1"}}])
def test_prepared_qrels_of_odd_dicts_evaluate_or_raise_as_the_reference_reader(qrels):
    """Ids that are not str, levels that are not int or float, a topic without
    judgments, values or ids no judgment may have: converted (or refused) once, when
    prepared; the evaluations are the reference reader's on the plain dict, bit for bit,
    and a bad one raises the reference reader's error, word for word, from
    PreparedQrels (as from evaluate() on the dict)."""
    run = {"1": {"a": 1.0}}
    try:
        expected = _reference_evaluation(qrels, run)
    except InputError as error:
        with pytest.raises(InputError) as prepared_error:
            PreparedQrels(qrels)
        assert type(prepared_error.value) is type(error)
        assert str(prepared_error.value) == str(error)
        raises_the_reference_error(qrels, run)
    else:
        prepared = PreparedQrels(qrels)
        assert prepared.native is not None
        assert_same(_evaluation(prepared, run), expected)
        assert_same(_evaluation(qrels, run), expected)


def test_prepared_qrels_share_read_only_judgments_and_pickle():
    prepared = PreparedQrels({"1": {"a": 2, "b": 0}, "2": {"c": 1}})
    native = prepared.native
    assert native.topics == ("1", "2") and native.offsets.tolist() == [0, 2, 3]
    assert native.levels.tolist() == [2.0, 0.0, 1.0]
    assert not native.offsets.flags.writeable and not native.levels.flags.writeable
    copy = pickle.loads(pickle.dumps(prepared))
    assert type(copy) is PreparedQrels and copy == prepared and copy.native is not None
    run = {"1": {"a": 1.0}}
    assert_same(_evaluation(copy, run), _evaluation(prepared, run))


# ---------------------------------------------------------------- the 64-byte scanner

line_bytes = st.lists(st.sampled_from([b" ", b"\t", b"\r", b"\x0b", b"\x0c", b"\n", b"a",
                                       b"7", b".", b"\x00", b"\x1f", b"\x80", b"\xc3\xa9",
                                       b"\xff", b"#", b"Q0"]), max_size=80).map(b"".join)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(line=line_bytes, padding=st.sampled_from([b"", b"x" * 64, b"\n" * 64, b" " * 70]))
def test_the_64_byte_scanner_splits_as_the_scalar_splitter(line, padding):
    """Whenever the SIMD scanner takes a line, it returns what the byte loop returns:
    field count (or -1 for a carriage return before a field), the first fields'
    bounds, and the line length; bytes after the newline never matter."""
    text = line + padding
    fast = _lines.split_line(text, True)
    if fast is not None:
        assert fast == _lines.split_line(text, False)


def test_the_64_byte_scanner_takes_the_usual_lines_and_declines_the_rest():
    usual = b"1000 Q0 7187158 1 14.32 run\n" + b"x" * 64
    if not _trec.SIMD:          # the portable build (CUMGAIN_NO_SIMD, ARM, MSVC) declines
        assert _lines.split_line(usual, True) is None        # every line: the scalar
        assert _lines.split_line(usual, False) == \
            (6, [(0, 4), (5, 7), (8, 15), (16, 17), (18, 23), (24, 27)], 27)   # splitter
        return
    assert _lines.split_line(usual, True) == _lines.split_line(usual, False) == \
        (6, [(0, 4), (5, 7), (8, 15), (16, 17), (18, 23), (24, 27)], 27)
    crlf = b"1 0 d 1\r\n" + b"x" * 64
    assert _lines.split_line(crlf, True) == (4, [(0, 1), (2, 3), (4, 5), (6, 7)], 8)
    assert _lines.split_line(b"1 0\rd 1\n" + b"x" * 64, True)[0] == -1
    assert _lines.split_line(b"a" * 64 + b"\n" + b"x" * 64, True) is None   # too long
    assert _lines.split_line(b"1 0 d 1\n", True) is None                    # near the end
    assert _lines.split_line(b"1 0 d 1\n", False) == (4, [(0, 1), (2, 3), (4, 5), (6, 7)], 7)


@given(st.binary(max_size=200))
def test_the_block_check_finds_any_non_ascii_or_nul_byte(data):
    assert _lines.ascii_no_nul(data) == all(0 < byte < 0x80 for byte in data)


# ---------------------------------------------------------------- a run file in parts


def ranked_arrays(ranked):
    return (ranked.run_topics, ranked.run_offsets.tolist(), ranked.levels.tolist(),
            ranked.judged.tolist(), None if ranked.scores is None else ranked.scores.tolist(),
            ranked.tag)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections(), st.sampled_from(["docno_desc", "input_order", "random", "average"]),
       st.integers(min_value=2, max_value=5), st.lists(st.sampled_from(["", "# note", "  "]),
                                                      max_size=3))
def test_files_read_in_parts_rank_as_one_reader(tmp_path, monkeypatch, data, ties, threads,
                                               extra_lines):
    """Parts of at least one byte (so any line, or any run topic, may begin a part):
    the same arrays as one reader, comment and blank lines anywhere, a BOM at the start."""
    qrels_lines, run_lines = data
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    lines = list(run_lines)
    for k, extra in enumerate(extra_lines):
        lines.insert((k * 7) % (len(lines) + 1), extra)
    run_path.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    qrels_path.write_bytes(b"\xef\xbb\xbf# judgments\n" + qrels_path.read_bytes())
    options = dict(ties=ties, score_precision="float32", seed=5, depth=None)
    whole = read_ranked(qrels_path, run_path, threads=1, **options)
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    parts = read_ranked(qrels_path, run_path, threads=threads, **options)
    assert isinstance(whole, RankedInput) and isinstance(parts, RankedInput)
    assert ranked_arrays(parts) == ranked_arrays(whole)
    assert (parts.qrels_topics, parts.qrels_offsets.tolist(), parts.qrels_levels.tolist()) == \
        (whole.qrels_topics, whole.qrels_offsets.tolist(), whole.qrels_levels.tolist())


@pytest.fixture
def segment_bytes():
    """Set the docno bytes a qrels segment holds (4 GiB in use: its docno starts are
    uint32) for a test, restoring the limit afterwards."""
    previous = _qrels._set_segment_bytes(_qrels.SEGMENT_BYTES)
    yield _qrels._set_segment_bytes
    _qrels._set_segment_bytes(previous)


@pytest.mark.parametrize("interleaved", [False, True])
def test_qrels_past_what_a_segment_holds_raise_an_input_error_naming_the_limit(
        tmp_path, monkeypatch, segment_bytes, interleaved):
    """A qrels part with more docno bytes than a segment holds, or parts whose topics
    must be joined into one segment holding more, stop the native table: an InputError
    naming the file and the layout's limit (nothing steps aside to another reader);
    parts that each fit, not joined, read natively, with the reference reader's
    numbers."""
    qrels_lines = [f"{topic} 0 doc{doc} {doc % 3}" for topic in range(4) for doc in range(30)]
    if interleaved:         # topic 0 again at the end: the parts must be joined
        qrels_lines = qrels_lines[30:] + qrels_lines[:30]
        qrels_lines = qrels_lines[:45] + qrels_lines[90:] + qrels_lines[45:90]
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    run_path.write_text("".join(f"{topic} Q0 doc{doc} {doc} {100 - doc} tag\n"
                                for topic in range(4) for doc in range(0, 40, 2)))
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    expected = _reference_evaluation(qrels_path, run_path)
    assert_same(_evaluation(qrels_path, run_path, threads=2), expected)
    docno_bytes = sum(len(line.split()[2]) for line in qrels_lines)
    assert native.native_qrels(qrels_path, threads=2) is not None
    segment_bytes(docno_bytes - 1)          # each part fits, the whole does not
    too_big = f"{qrels_path}: past what the compiled reader's layout holds ("
    if interleaved:
        with pytest.raises(InputError) as error:
            native.native_qrels(qrels_path, threads=2)
        assert str(error.value).startswith(too_big)
    else:
        assert native.native_qrels(qrels_path, threads=2) is not None
        assert_same(_evaluation(qrels_path, run_path, threads=2), expected)
    for threads in (1, 2):          # one part: too big; parts: too big when joined
        if threads == 2 and not interleaved:
            continue
        with pytest.raises(InputError) as error:
            native.native_qrels(qrels_path, threads=threads)
        assert type(error.value) is InputError and str(error.value).startswith(too_big)
        with pytest.raises(InputError) as evaluated:
            _evaluation(qrels_path, run_path, threads=threads)
        assert str(evaluated.value) == str(error.value)
    assert_same(_reference_evaluation(qrels_path, run_path), expected)   # no such limit
    with pytest.raises(ValueError):
        segment_bytes(_qrels.SEGMENT_BYTES + 1)


class _Part:
    """A stand-in parser: records what was appended to it, in order."""

    def __init__(self, name):
        self.name, self.appended, self.read = name, [], False

    def append(self, other):
        assert self.read and other.read, "a part appended before it was read"
        self.appended.append(other.name)
        return _trec.STATUS_OK


def _join(first, other):
    """parts_in_turn's join of two stand-in parsers: None (joined) or a Stop."""
    status = first.append(other)
    return None if status == _trec.STATUS_OK else _native_blocks.Stop("status", other.name)


@pytest.mark.parametrize("threads", [1, 2, 3, 9])
def test_parts_handed_out_in_turn_are_appended_in_order(threads):
    """Parts finishing out of order (the early ones slowest, as on a slower core) are
    still appended to the first in file order, each once; every part is read once, and
    no part has a Stop (the first parser holds them all)."""
    parsers = [_Part(part) for part in range(8)]
    read, lock = [], threading.Lock()

    def read_part(part):
        time.sleep(0.002 * (8 - part) * (part % 2))
        parsers[part].read = True
        with lock:
            read.append(part)
        return None

    assert _native_parts.parts_in_turn(parsers, threads, read_part, _join) == [None] * 8
    assert sorted(read) == list(range(8))
    assert parsers[0].appended == list(range(1, 8))


def test_parts_in_turn_stop_at_a_failed_part_and_raise_a_helper_error():
    """A part that stops has its Stop in the result, is never appended, and no part
    after it is appended; the parts before it are read through (so that the first stop
    in file order is known). A join that fails is the Stop of the part joined. An
    exception in a helper thread is raised in the caller's."""
    parsers = [_Part(part) for part in range(6)]
    stop = _native_blocks.Stop("line", 2, b"bad")

    def read_unless_3(part):
        parsers[part].read = part != 3
        return None if parsers[part].read else stop

    stops = _native_parts.parts_in_turn(parsers, 2, read_unless_3, _join)
    assert stops[3] is stop and stops[:3] == [None, None, None]
    assert all(parsers[part].read for part in range(3))
    assert 3 not in parsers[0].appended
    assert parsers[0].appended == [1, 2][:len(parsers[0].appended)]

    parsers = [_Part(part) for part in range(5)]

    def read_all(part):
        parsers[part].read = True
        return None

    def join_unless_2(first, other):
        return _native_blocks.Stop("too_big") if other.name == 2 else _join(first, other)

    stops = _native_parts.parts_in_turn(parsers, 1, read_all, join_unless_2)
    assert stops[2] == _native_blocks.Stop("too_big") and parsers[0].appended == [1]
    assert [stops[part] for part in (0, 1)] == [None, None]

    parsers = [_Part(part) for part in range(6)]

    def broken(part):
        if part == 4:
            raise MemoryError("part 4")
        parsers[part].read = True
        return None

    with pytest.raises(MemoryError, match="part 4"):
        _native_parts.parts_in_turn(parsers, 3, broken, _join)


RUN_IN_PARTS = "".join(f"{t} Q0 d{d} {d} {10 - d}.5 tag{t}\n" for t in (1, 2, 3, 4) for d in range(5))


def test_the_parts_start_where_topics_start(tmp_path, monkeypatch):
    run_path = tmp_path / "run"
    run_path.write_text(RUN_IN_PARTS)
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    starts = _native_parts.part_starts(str(run_path), 4)
    text = RUN_IN_PARTS.encode()
    assert starts[0] == 0 and len(starts) >= 2 and starts == sorted(set(starts))
    for start in starts[1:]:
        assert text[start - 1:start] == b"\n"
        previous = text[:start].rstrip(b"\n").rsplit(b"\n", 1)[-1].split()[0]
        assert text[start:].split()[0] != previous
    run_path.write_text("".join(f"1 Q0 d{d} {d} 1.0 t\n" for d in range(50)))   # one topic
    assert _native_parts.part_starts(str(run_path), 4) == [0]


@pytest.mark.parametrize("parts, short", [(16, 4), (8, 4), (5, 4), (4, 4), (2, 4), (1, 4),
                                          (16, 0), (3, 1)])
def test_the_last_parts_handed_out_are_shorter(parts, short):
    """The last ``short`` parts are SHORT_PART_SHARE times shorter than the others,
    give or take a byte of rounding, where there are more parts than that (else all
    are of one size); the parts cover the file."""
    size = 10 ** 9 + 7
    targets = _native_parts._part_targets(size, parts, short)
    lengths = [stop - start for start, stop in zip(targets, targets[1:] + [size])]
    assert targets[0] == 0 and len(targets) == parts and sum(lengths) == size
    n_short = short if parts > short else 0
    long_parts, short_parts = lengths[:parts - n_short], lengths[parts - n_short:]
    assert max(long_parts) - min(long_parts) <= 1
    for length in short_parts:
        assert abs(length * _native_parts.SHORT_PART_SHARE - long_parts[0]) <= \
            _native_parts.SHORT_PART_SHARE


def test_a_file_in_parts_reads_as_one_part_with_short_last_parts(tmp_path, monkeypatch):
    """Parts of any sizes start at topic starts, and the evaluation is the same."""
    run_path, qrels_path = tmp_path / "run", tmp_path / "qrels"
    run_path.write_text("".join(f"{t} Q0 d{d} {d} {(d * 7919 + t) % 97}.25 x\n"
                                for t in range(60) for d in range(30)))
    qrels_path.write_text("".join(f"{t} 0 d{d} {(d + t) % 3}\n"
                                  for t in range(60) for d in range(0, 40, 3)))
    measures = ["map", "ndcg_cut_10", "P_5", "recip_rank"]
    whole = evaluate(qrels_path, run_path, measures, threads=1)
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    assert len(_native_parts.part_starts(str(run_path), _native_parts.parts_for(2), 4)) == 16
    parted = evaluate(qrels_path, run_path, measures, threads=2)
    for measure in measures:
        assert parted.values[measure].tolist() == whole.values[measure].tolist()


class _CountingReader(io.BytesIO):
    def __init__(self, data):
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk


def test_a_part_start_is_looked_for_within_search_bytes_in_a_few_small_reads(monkeypatch):
    """Past a line longer than a read (only its topic is read where a probe lands on
    it); a line longer than PROBE_BYTES in the way, or no other topic within
    SEARCH_BYTES, ends the search: None, after a bounded number of bounded reads."""
    monkeypatch.setattr(_native_parts, "SEARCH_BYTES", 1 << 18)
    long_line = b"1 Q0 " + b"x" * 150_000 + b" 1 1.0 t\n"
    text = b"1 Q0 a 1 2.0 t\n" + long_line + b"2 Q0 b 1 1.0 t\n"
    reader = _CountingReader(text)
    assert _native_parts._next_start(reader, 3) == text.index(b"2 Q0 b")
    monkeypatch.setattr(_native_parts, "PROBE_BYTES", 1 << 16)
    reader = _CountingReader(b"1 Q0 a 1 2.0 t\n1 Q0 " + b"x" * (1 << 20) + b" 1 1.0 t\n2 Q0 b\n")
    assert _native_parts._next_start(reader, 20) is None
    assert reader.bytes_read <= 2 * _native_parts.PROBE_BYTES
    one_topic = b"".join(b"1 Q0 d%d %d 1.0 t\n" % (i, i) for i in range(100_000))
    reader = _CountingReader(one_topic)
    assert _native_parts._next_start(reader, 1000) is None
    assert reader.bytes_read <= 20 * _native_parts._FIRST_READ * 2


def _first_topic_start(text: bytes, offset: int):
    """The first line after the one holding ``offset`` whose topic differs from the data
    line before it, line by line (the old search, the oracle)."""
    position, previous, started = 0, None, False
    for line in text.split(b"\n"):
        if started:
            fields = line.split(None, 1)
            if fields and not fields[0].startswith(b"#"):
                if previous is not None and fields[0] != previous:
                    return position if position - offset <= _native_parts.SEARCH_BYTES \
                        else None
                previous = fields[0]
        started = started or position <= offset <= position + len(line)
        position += len(line) + 1
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"1", b"2", b"10", b"q"]),
                          st.integers(1, 60),
                          st.lists(st.sampled_from([b"", b"  ", b"\t\r", b"# note", b" #x 1",
                                                    b" Q0 " + b"x" * 5000 + b" 1 1 t"]),
                                   max_size=2)),
                min_size=1, max_size=8, unique_by=lambda topic: topic[0]),
       st.sampled_from([b"", b" ", b"\t"]), st.booleans(), st.floats(0, 1))
def test_a_part_start_is_the_first_topic_start_after_the_target(topics, lead, final_newline,
                                                                  where):
    """The bounded search finds what a line-by-line search finds, for topics one after
    another with comment and blank lines, long lines and indentation anywhere."""
    lines = []
    for topic, n, extras in topics:
        for d in range(n):
            lines.append(lead + topic + b" Q0 d%d 1 %d t" % (d, n - d))
            if d == n // 2:             # (a long line: of this topic)
                lines.extend(topic + extra if extra.startswith(b" Q0") else extra
                             for extra in extras)
    text = b"\n".join(lines) + (b"\n" if final_newline else b"")
    offset = min(int(where * len(text)), len(text) - 1)
    assert _native_parts._next_start(io.BytesIO(text), offset) == \
        _first_topic_start(text, offset)


def test_a_one_topic_run_is_not_searched_through(tmp_path, monkeypatch):
    """A run that is one topic has no part start: the search for each part's gives up
    after a few small reads instead of reading SEARCH_BYTES (16 MiB) line by line in
    Python per part (a 5M-line topic took 5.0 s with the default threads, 1.5 s with
    one), so more threads are never slower than one."""
    run_path = tmp_path / "run"
    with open(run_path, "wb") as run:
        for start in range(0, 1_200_000, 100_000):
            run.write(b"".join(b"7 Q0 doc%d %d %d t\n" % (i, i, 10 ** 7 - i)
                               for i in range(start, start + 100_000)))
    bytes_read = []

    class Counting(io.FileIO):
        def read(self, size=-1):
            data = super().read(size)
            bytes_read.append(len(data))
            return data

    monkeypatch.setattr(_native_parts, "open", lambda path, mode: Counting(path, "r"),
                        raising=False)
    assert _native_parts.part_starts(str(run_path), _native_parts.parts_for(4), 8) == [0]
    parts = min(_native_parts.parts_for(4),
                run_path.stat().st_size // _native_parts.PART_BYTES)
    probes = 2 * (_native_parts.SEARCH_BYTES // 4096).bit_length() + 2   # per part, at most
    assert parts > 1 and sum(bytes_read) <= (parts - 1) * probes * 2 * 4096


def test_a_topic_split_between_parts_is_held_by_topic_and_a_bad_line_in_a_later_part_is_named(
        tmp_path, monkeypatch):
    """Parts that cut a topic (as in an interleaved run) are never joined as ranked:
    the file is read again in parts held by topic, which rank as the reference reader
    does; an error in a later part is the reference reader's, with its line number."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 d1 1\n2 0 d2 1\n")
    run_path.write_text(RUN_IN_PARTS)
    middle_of_topic_1 = RUN_IN_PARTS.index("1 Q0 d3")
    cuts = []

    def starts(path, parts, short=0, quiet=False):
        if path == str(run_path):
            cuts.append(parts)
        return [0, middle_of_topic_1] if path == str(run_path) else [0]

    monkeypatch.setattr(_native_parts, "part_starts", starts)
    ranked = read_ranked(qrels_path, run_path, threads=2, **READ)
    assert len(cuts) == 2           # read in parts, then again in parts held by topic
    reference = reference_reading.rank(qrels_path, run_path, warn=False)
    assert ranked.run_topics == ["1", "2", "3", "4"]
    result = evaluate(qrels_path, run_path, ["num_ret"], threads=2, warn=False)
    assert result.values["num_ret"].tolist() == [5, 5]      # topics judged and ranked
    native_result, expected = both_ways(qrels_path, run_path, threads=2)
    assert_same(native_result, expected)
    ranking = cumgain.rank(qrels_path, run_path, threads=2, warn=False)
    assert ranking.topics == reference.topics
    assert ranking.levels.values.tolist() == reference.levels.values.tolist()
    assert ranking.levels.offsets.tolist() == reference.levels.offsets.tolist()
    bad = RUN_IN_PARTS.replace("3 Q0 d2 2 8.5 tag3", "3 Q0 d2 2 x tag3")
    run_path.write_text(bad)
    monkeypatch.setattr(_native_parts, "part_starts", lambda path, parts, short=0, quiet=False:
                        [0, bad.index("3 Q0 d0")] if path == str(run_path) else [0])
    error = raises_the_reference_error(qrels_path, run_path, threads=2)
    assert isinstance(error, FormatError) and re.search(r"run:13:", str(error))


def test_append_joins_finished_rankers_only():
    table = _qrels.QrelsTable()
    assert table.feed(b"1 0 a 1\n") == _trec.STATUS_OK and table.finish() == _trec.STATUS_OK

    def ranker(text):
        made = _trec.RunRanker(table, _trec.TIES_DOCNO_DESC, False, -1, 0)
        assert made.feed(text) == _trec.STATUS_OK
        return made

    first, second, empty = ranker(b"1 Q0 a 1 2 x\n"), ranker(b"2 Q0 a 1 1 y\n"), ranker(b"#\n")
    with pytest.raises(ValueError):
        first.append(second)                   # not finished
    for made in (first, second, empty):
        made.finish()
    with pytest.raises(ValueError):
        first.append(first)
    assert first.append(second) == _trec.STATUS_OK and first.append(empty) == _trec.STATUS_OK
    topics, offsets, levels, _, _, tag = first.result()
    assert (topics, offsets.tolist(), levels.tolist(), tag) == (["1", "2"], [0, 1, 2], [1, 0], "y")
    with pytest.raises(ValueError):
        second.result()                        # handed over to ``first``
    again, twice = ranker(b"1 Q0 a 1 2 x\n"), ranker(b"1 Q0 b 1 2 x\n")
    again.finish(), twice.finish()
    assert again.append(twice) == _trec.STATUS_NOT_GROUPED


@settings(deadline=None, max_examples=60)
@given(st.lists(st.lists(st.integers(0, 80), unique=True, max_size=60), min_size=2,
                max_size=4))
def test_appended_parts_intern_their_topics_as_one_table_would(parts):
    """Appending parts interns their topic ids in order: a qrels table's topics are
    the ordered union, a topic in several parts joined (its rows grouped); a ranker
    stops with NOT_GROUPED at a topic ranked in two parts, else keeps them all in
    order."""
    tables = []
    for part, topics in enumerate(parts):
        table = _qrels.QrelsTable()
        assert table.feed(b"".join(b"t%d 0 d%d 1\n" % (topic, part)
                                   for topic in topics)) == _trec.STATUS_OK
        tables.append(table)
    for table in tables[1:]:
        assert tables[0].append(table) == _trec.STATUS_OK
    assert tables[0].finish() == _trec.STATUS_OK
    union = list(dict.fromkeys(topic for topics in parts for topic in topics))
    assert tables[0].topics() == [f"t{topic}" for topic in union]
    offsets, _ = tables[0].grouped()
    assert np.diff(offsets).tolist() == [sum(topics.count(topic) for topics in parts)
                                         for topic in union]

    def ranker(topics):
        made = _trec.RunRanker(tables[0], _trec.TIES_DOCNO_DESC, False, -1, 0)
        assert made.feed(b"".join(b"t%d Q0 d0 1 1 r\n" % topic for topic in topics)) \
            == _trec.STATUS_OK and made.finish() == _trec.STATUS_OK
        return made

    rankers = [ranker(topics) for topics in parts]
    seen = set(parts[0])
    for made, topics in zip(rankers[1:], parts[1:]):
        status = rankers[0].append(made)        # (a stopped ranker takes no more)
        if seen & set(topics):
            assert status == _trec.STATUS_NOT_GROUPED
            return
        assert status == _trec.STATUS_OK
        seen |= set(topics)
    assert rankers[0].result()[0] == [f"t{topic}" for topics in parts for topic in topics]


@pytest.mark.parametrize("seed", [0, 1])
def test_thousands_of_topic_ids_intern_and_find_their_judgments(seed):
    """Topic ids are interned in a hash table that grows as they come (64 slots at
    first, twice as many each time it is half full): thousands of ids of 1 to 12
    bytes over a small alphabet (many sharing their first bytes), in stretches in
    any order, keep their order of first appearance, their rows, and a run in
    another order finds each topic's judgments."""
    rng = np.random.default_rng(seed)
    ids = list(dict.fromkeys("".join(rng.choice(list("ab1"), size=rng.integers(1, 13)))
                             for _ in range(6000)))
    stretches = [ids[i] for i in rng.integers(0, len(ids), size=9000)]
    table = _qrels.QrelsTable()
    assert table.feed("".join(f"{topic} 0 d{k} {k % 3}\n"
                              for k, topic in enumerate(stretches)).encode()) \
        == _trec.STATUS_OK and table.finish() == _trec.STATUS_OK
    order = list(dict.fromkeys(stretches))
    assert table.topics() == order
    offsets, _ = table.grouped()
    counts = Counter(stretches)
    assert np.diff(offsets).tolist() == [counts[topic] for topic in order]
    first_judged = {}                   # topic -> (its first docno, that row's level)
    for k, topic in enumerate(stretches):
        first_judged.setdefault(topic, (f"d{k}", k % 3))
    run_topics = [ids[i] for i in rng.permutation(len(ids))]
    lines, expected_levels, expected_judged = [], [], []
    for topic in run_topics:           # its first judged docno (if any), then one not
        if topic in first_judged:
            docno, level = first_judged[topic]
            lines.append(f"{topic} Q0 {docno} 1 2.0 r\n")
            expected_levels.append(level)
            expected_judged.append(1)
        lines.append(f"{topic} Q0 unjudged 2 1.0 r\n")
        expected_levels.append(0)
        expected_judged.append(0)
    ranker = _trec.RunRanker(table, _trec.TIES_DOCNO_DESC, False, -1, 0)
    assert ranker.feed("".join(lines).encode()) == _trec.STATUS_OK \
        and ranker.finish() == _trec.STATUS_OK
    topics, offsets, ranked_levels, judged, _, _ = ranker.result()
    assert topics == run_topics
    assert np.asarray(ranked_levels).tolist() == expected_levels
    assert np.asarray(judged).tolist() == expected_judged


def test_threads_must_be_a_positive_integer(tmp_path):
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(InputError, match="threads"):
            evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, ["map"], threads=bad)


def test_qrels_read_in_parts_find_duplicates_and_bad_lines_across_parts(tmp_path, monkeypatch):
    qrels_path = tmp_path / "qrels"
    lines = [f"{t} 0 d{k}{d} {d % 3}" for k, t in enumerate((1, 2, 1, 3)) for d in range(4)]
    qrels_path.write_text("\n".join(lines) + "\n")
    run_path = tmp_path / "run"
    run_path.write_text("1 Q0 d00 1 1.0 t\n")
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    whole = native.native_qrels(qrels_path, threads=1)
    for threads in (2, 3, 7):
        parts = native.native_qrels(qrels_path, threads=threads)
        assert parts.topics == whole.topics == ("1", "2", "3")
        assert parts.offsets.tolist() == whole.offsets.tolist()
        assert parts.levels.tolist() == whole.levels.tolist()
    for bad in ("1 0 d00 2", "1 0 d00"):             # a duplicate of line 1; a bad line
        qrels_path.write_text("\n".join(lines + [bad]) + "\n")
        expected = reference_error(qrels_path, run_path)
        assert isinstance(expected, FormatError) and expected.line_number == len(lines) + 1
        for threads in (1, 3):
            with pytest.raises(FormatError) as error:
                native.native_qrels(qrels_path, threads=threads)
            assert str(error.value) == str(expected)
            raises_the_reference_error(qrels_path, run_path, threads=threads)
    table, later = _qrels.QrelsTable(), _qrels.QrelsTable()
    table.feed(b"1 0 a 1\n"), later.feed(b"2 0 a 1\n1 0 a 0\n")
    assert table.append(later) == _trec.STATUS_OK and later.finish() == _trec.STATUS_APPENDED
    with pytest.raises(ValueError):
        later.grouped()
    with pytest.raises(ValueError):
        table.append(table)
    assert table.finish() == _trec.STATUS_DUPLICATE and table.status_line == 3


@pytest.mark.parametrize("where", ["one part", "first part", "second part", "interleaved"])
@pytest.mark.parametrize("level", ["1", "-128", "127", "1e2", "0.5", "128", "-129", "-0",
                                   "1e300"])
def test_qrels_levels_are_int8_while_small_whole_numbers_else_float64(level, where):
    """A table holds its levels as int8 while each is a whole number in [-128, 127]
    (not -0.0, whose sign int8 drops), the usual graded levels; the first that is not
    widens them all to float64, in whichever part it comes (appended parts, or rows
    moved to group interleaved topics). The levels are those read, either way, and a
    ranking joins them in the table's dtype."""
    lines = [b"1 0 a 2\n", b"1 0 b -128\n", b"2 0 a 127\n", b"2 0 c %s\n" % level.encode(),
             b"2 0 d 0\n"]
    if where == "interleaved":
        lines.append(b"1 0 c 3\n")
    table = _qrels.QrelsTable()
    if where in ("first part", "second part"):
        cut = 4 if where == "first part" else 3
        later = _qrels.QrelsTable()
        table.feed(b"".join(lines[:cut])), later.feed(b"".join(lines[cut:]))
        assert table.append(later) == _trec.STATUS_OK
    else:
        table.feed(b"".join(lines))
    assert table.finish() == _trec.STATUS_OK
    value = float(level)
    small = value.is_integer() and -128 <= value <= 127 \
        and not (value == 0 and math.copysign(1, value) < 0)
    offsets, got = table.grouped()
    assert got.dtype == (np.int8 if small else np.float64)
    expected = [2, -128] + ([3] if where == "interleaved" else []) + [127, value, 0]
    assert got.tolist() == expected and offsets.tolist() == [0, len(expected) - 3,
                                                             len(expected)]
    assert np.signbit(got[-2]) == (math.copysign(1, value) < 0)
    ranker = _trec.RunRanker(table, _trec.TIES_DOCNO_DESC, False, -1, 0, False)
    assert ranker.levels_dtype == got.dtype
    assert ranker.add_dict({"2": {"a": 3.0, "c": 2.0, "x": 1.0}}) == _trec.STATUS_OK
    assert ranker.finish() == _trec.STATUS_OK
    _, _, levels, judged, _, _ = ranker.result()
    assert levels.dtype == got.dtype
    assert levels.tolist() == [127, value, 0]       # a negative level: pooled, unjudged
    assert judged.tolist() == [True, value >= 0, False]


def test_a_released_table_keeps_the_arrays_it_handed_out_and_stops():
    """release() gives a table's memory back at once (a helper thread frees a table
    read for one ranking, see the next test): the grouped arrays handed out
    before stay as they were; the table is stopped, for rankers too."""
    table = _qrels.QrelsTable()
    assert table.feed(b"1 0 a 2\n1 0 b 0\n2 0 c 1\n") == _trec.STATUS_OK
    assert table.finish() == _trec.STATUS_OK
    offsets, levels = table.grouped()
    table.release()
    table.release()                         # once is enough; again does nothing
    gc.collect()
    assert offsets.tolist() == [0, 2, 3] and levels.tolist() == [2, 0, 1]
    assert table.n_rows == 0
    with pytest.raises(ValueError, match="released"):
        table.topics()
    with pytest.raises(ValueError):
        table.grouped()
    with pytest.raises(ValueError):
        _trec.RunRanker(table, _trec.TIES_DOCNO_DESC, False, -1, 0, False)
    unused = _qrels.QrelsTable()             # released before grouped(): all of it goes
    unused.feed(b"1 0 a 2\n"), unused.finish(), unused.release()
    del unused


SAME_TOPICS_CASES = {("b", "a", "c"): True, ("a", "b", "c"): False, ("b", "a"): False,
                     ("b", "a", "c", "x"): False, ("b", "x", "c"): False}


def _evaluated_seeing_the_ranked_input(monkeypatch, tmp_path, run_topics, threads):
    """evaluate() on qrels of topics b, a, c and a run of ``run_topics``, and the
    RankedInput the native reader gave it."""
    from cumgain.engine import evaluator
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{t} 0 d{d} {d % 3}\n" for t in ("b", "a", "c")
                                  for d in range(3)))
    run_path.write_text("".join(f"{t} Q0 d{d} 1 {d} r\n" for t in run_topics
                                for d in range(3)))
    seen: list = []

    def reading(*args, **kwargs):
        seen.append(read_ranked(*args, **kwargs))
        return seen[-1]

    with monkeypatch.context() as patch:
        patch.setattr(evaluator, "read_ranked", reading)
        got = evaluate(qrels_path, run_path, ["map", "ndcg"], warn=False, threads=threads)
    return got, seen[-1], (qrels_path, run_path)


@pytest.mark.parametrize("threads, part_bytes", [(1, _native_parts.PART_BYTES), (2, 1)])
def test_the_same_topics_are_told_in_c(tmp_path, monkeypatch, threads, part_bytes):
    """The ranker tells whether the run ranks exactly the qrels topics in the qrels'
    order (read in one part or several); when they differ, evaluate() decodes the
    qrels' topic ids too. The evaluation is the reference reader's either way, topics
    left out included. (That the qrels ids are not decoded when the topics are the
    same: the next test.)"""
    monkeypatch.setattr(_native_parts, "PART_BYTES", part_bytes)
    for run_topics, same in SAME_TOPICS_CASES.items():
        got, ranked, paths = _evaluated_seeing_the_ranked_input(monkeypatch, tmp_path,
                                                                run_topics, threads)
        expected = reference_reading.evaluate(*paths, ["map", "ndcg"], warn=False)
        assert ranked.same_topics is same
        if not same:
            assert ranked.judgments._topics is not None
        assert got.topics == expected.topics and got.topics == tuple(sorted(got.topics))
        assert (got.run_only_topics, got.missing_topics) == \
            (expected.run_only_topics, expected.missing_topics)
        for name in ("map", "ndcg"):
            assert got.values[name].tolist() == expected.values[name].tolist()


@pytest.mark.parametrize("threads, part_bytes", [(1, _native_parts.PART_BYTES), (2, 1)])
def test_the_qrels_ids_are_not_decoded_when_the_run_ranks_the_same_topics(
        tmp_path, monkeypatch, threads, part_bytes):
    """A run that ranks exactly the qrels topics in the qrels' order: evaluate()
    decodes only the run's topic ids (NativeQrels.topics is never asked for)."""
    monkeypatch.setattr(_native_parts, "PART_BYTES", part_bytes)
    run_topics = next(topics for topics, same in SAME_TOPICS_CASES.items() if same)
    _, ranked, _ = _evaluated_seeing_the_ranked_input(monkeypatch, tmp_path, run_topics,
                                                      threads)
    assert ranked.same_topics
    assert ranked.judgments._topics is None


def test_a_qrels_table_of_its_own_is_released_once_the_work_is_done(tmp_path, monkeypatch):
    """evaluate() has the qrels table it read for itself freed after its measures
    (freeing it while they ran took CPU from them), also when a measure fails;
    rank() right after ranking; prepared qrels are never freed by an evaluation."""
    from cumgain.engine import evaluator
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 2\n1 0 b 0\n2 0 c 1\n")
    run_path.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.0 r\n")
    events: list = []
    tables: list = []                   # each qrels table read, and whether released
    measured, read_qrels = evaluator._measured, native.native_qrels

    def reading(*args, **kwargs):
        ranked = read_ranked(*args, **kwargs)
        release = ranked.release

        def recorded():
            events.append("release")
            release()
        return dataclasses.replace(ranked, release=recorded)

    def measuring(*args, **kwargs):
        events.append("measures")
        return measured(*args, **kwargs)
    def recording(*args, **kwargs):
        judgments = read_qrels(*args, **kwargs)
        tables.append(judgments.table)
        return judgments

    def released(table) -> bool:        # by the helper thread, soon
        deadline = time.monotonic() + 10
        while table.n_rows and time.monotonic() < deadline:
            time.sleep(0.01)
        return table.n_rows == 0

    monkeypatch.setattr(evaluator, "read_ranked", reading)
    monkeypatch.setattr(evaluator, "_measured", measuring)
    monkeypatch.setattr(native, "native_qrels", recording)
    evaluate(qrels_path, run_path, ["P_1"])
    assert events == ["measures", "release"] and released(tables[0])
    events.clear()
    with pytest.raises(InputError, match="not defined under ties='average'"):
        evaluate(qrels_path, run_path, ["map"], ties="average")
    assert events == ["measures", "release"] and released(tables[1])
    events.clear()
    cumgain.rank(qrels_path, run_path)
    assert events == ["release"] and released(tables[2])
    events.clear()
    prepared = cumgain.prepare_qrels(qrels_path)
    evaluate(prepared, run_path, ["P_1"])
    assert events == ["measures", "release"] and prepared.native.table.n_rows == 3  # kept


@settings(deadline=None)
@given(st.lists(st.integers(-128, 127), max_size=20),
       st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-300, 300)))
def test_int8_levels_are_compared_as_float64_would_be(values, level):
    from cumgain.measures.ranked import at_least
    small = np.array(values, dtype=np.int8)
    assert at_least(small, level).tolist() == (small.astype(np.float64) >= level).tolist()


@settings(deadline=None)
@given(judgment_lines, st.sets(st.sampled_from("1234567"), max_size=7), st.booleans(),
       st.integers(1, 3))
@example([("1", "d"), ("1", "a"), ("1", "d")], {"1"}, False, 1)    # judged twice: not
@example([("1", "d"), ("1", "a"), ("1", "d")], {"1"}, True, 1)     # retrieved,
@example([("1", "a"), ("1", "d"), ("1", "a")], {"1"}, False, 1)    # retrieved,
@example([("2", "e"), ("2", "e")], {"1", "3"}, False, 2)           # in no ranked topic
def test_a_table_finished_unchecked_is_checked_by_its_ranking(lines, run_topics, as_dict,
                                                            parts):
    """A table finished without its duplicate check (one run ranked against it): each
    topic a ranker joins is checked as its judgments are joined (a docno the run
    retrieved or not), the rest by check_unused_judgments, so a duplicate judgment
    stops the ranking wherever it is (STATUS_QRELS_DUPLICATE), in a ranked topic or
    not; without one, the ranking is the checked table's and the table counts as
    checked."""
    text = "".join(f"{line[0]} 0 {line[1]} 1\n" for line in lines if line is not None)
    pairs = [line for line in lines if line is not None]
    if not pairs:
        return
    has_duplicate = len(set(pairs)) < len(pairs)
    topics = sorted(run_topics)
    run = {topic: {doc: float(k) for k, doc in enumerate("abcxy")} for topic in topics}

    def run_text(part_topics):
        return "".join(f"{topic} Q0 {doc} 1 {score} t\n" for topic in part_topics
                       for doc, score in run[topic].items()).encode()

    def ranking(check):
        table = _qrels.QrelsTable()
        assert table.feed(text.encode()) == _trec.STATUS_OK
        if table.finish(1, check) != _trec.STATUS_OK:
            return "table"
        cut = [len(topics) * part // parts for part in range(parts + 1)]
        rankers = [_trec.RunRanker(table, _trec.TIES_DOCNO_DESC, False, -1, 0, False)
                   for _ in range(parts)]
        for ranker, first, stop in zip(rankers, cut, cut[1:]):
            status = ranker.add_dict(run, first, stop) if as_dict \
                else ranker.feed(run_text(topics[first:stop]))
            if status == _trec.STATUS_OK:
                status = ranker.finish()
            if status != _trec.STATUS_OK:
                assert status == _trec.STATUS_QRELS_DUPLICATE
                return "ranker"
        for other in rankers[1:]:
            assert rankers[0].append(other) == _trec.STATUS_OK
        status = rankers[0].check_unused_judgments()
        if status != _trec.STATUS_OK:
            assert status == _trec.STATUS_QRELS_DUPLICATE
            return "unused"
        assert rankers[0].check_unused_judgments() == _trec.STATUS_OK   # checked now
        columns = [column.tolist() if hasattr(column, "tolist") else column
                   for column in rankers[0].result()]
        assert rankers[0].same_topics() == (columns[0] == table.topics())
        return columns

    unchecked = ranking(check=False)
    if has_duplicate:
        assert ranking(check=True) == "table"
        duplicated = {topic for topic, doc in pairs if pairs.count((topic, doc)) > 1}
        assert unchecked == ("ranker" if duplicated & set(topics) else "unused")
    else:
        assert unchecked == ranking(check=True)


def test_qrels_duplicates_found_while_ranking_name_their_line(tmp_path, monkeypatch):
    """evaluate() reads a qrels file without the duplicate check (its ranking checks):
    a duplicate judgment in a ranked topic or in one the run does not rank, the
    qrels read in one part or several, is the reference reader's error, naming the
    line; an indexed table cannot skip the check."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    run_path.write_text("".join(f"{t} Q0 d{d} 1 {d} t\n" for t in (1, 2) for d in range(4)))
    for threads, part_bytes in ((1, _native_parts.PART_BYTES), (2, 1), (3, 1)):
        monkeypatch.setattr(_native_parts, "PART_BYTES", part_bytes)
        for topic in (2, 3):                # ranked; not in the run
            lines = [f"{t} 0 d{d} {d % 3}" for t in (1, 2, 3) for d in range(4)]
            lines.insert(10, f"{topic} 0 d1 1")
            qrels_path.write_text("\n".join(lines) + "\n")
            error = raises_the_reference_error(qrels_path, run_path, threads=threads)
            assert isinstance(error, FormatError)
            assert re.search(rf"qrels:11: duplicate docno 'd1' in topic '{topic}'", str(error))
    with pytest.raises(ValueError, match="indexed"):
        _qrels.QrelsTable(True).finish(1, False)


@pytest.mark.parametrize("split_at", range(1, 9))
def test_appended_parts_keep_their_docnos_and_a_topic_split_between_them_is_joined(split_at):
    """An appended table's docnos stay where they were read (a segment per part); a
    topic whose rows continue into the next part (grouped, so nothing moves) is joined
    into one segment at finish: lookups, duplicates and levels as for one table."""
    lines = [b"1 0 a 1\n", b"1 0 b 2\n", b"# note\n", b"1 0 c 0\n", b"2 0 a 3\n",
             b"2 0 z 1\n", b"3 0 q 2\n", b"3 0 r 1\n", b"3 0 s 4\n"]
    run = b"".join(b"%s Q0 %s 1 %d t\n" % (topic, doc, score)
                   for topic in (b"1", b"2", b"3") for score, doc in enumerate(b"a b c q r s z".split()))

    def ranked(table):
        ranker = _trec.RunRanker(table, _trec.TIES_DOCNO_DESC, False, -1, 0, False)
        assert ranker.feed(run) == _trec.STATUS_OK and ranker.finish() == _trec.STATUS_OK
        return [column.tolist() if hasattr(column, "tolist") else column
                for column in ranker.result()]

    whole, first, second = _qrels.QrelsTable(), _qrels.QrelsTable(), _qrels.QrelsTable()
    whole.feed(b"".join(lines)), first.feed(b"".join(lines[:split_at]))
    if split_at < len(lines):
        second.feed(b"".join(lines[split_at:]))
    assert first.append(second) == _trec.STATUS_OK
    assert whole.finish() == first.finish() == _trec.STATUS_OK
    assert [a.tolist() for a in first.grouped()] == [a.tolist() for a in whole.grouped()]
    assert ranked(first) == ranked(whole)
    duplicate = _qrels.QrelsTable(), _qrels.QrelsTable()      # c again, in the second part
    duplicate[0].feed(b"".join(lines[:split_at]))
    duplicate[1].feed(b"".join(lines[split_at:]) + b"1 0 c 2\n")
    assert duplicate[0].append(duplicate[1]) == _trec.STATUS_OK
    assert duplicate[0].finish() == _trec.STATUS_DUPLICATE
    assert duplicate[0].status_line == len(lines) + 1


@pytest.mark.parametrize("ties", ["docno_desc", "docno_asc", "input_order"])
def test_docnos_differing_by_a_trailing_nul_stay_distinct_on_both_paths(ties):
    """numpy's fixed-width strings drop trailing NULs; the reference path must not
    let "a\\x00" and "a" become one document (the native path compares bytes)."""
    qrels = {"q": {"a\x00": 1, "a": 0}}
    run = {"q": {"a\x00": 1.0, "a": 1.0}}
    native_result = evaluate(qrels, run, ["num_rel_ret", "P_1", "map"], ties=ties)
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no duplicate is found, none dropped
        reference = reference_reading.evaluate(qrels, run, ["num_rel_ret", "P_1", "map"],
                                               ties=ties, duplicates="first")
        dropping = evaluate(qrels, run, ["num_rel_ret", "P_1", "map"], ties=ties,
                            duplicates="first")
    assert_same(native_result, reference)
    assert_same(dropping, reference)
    assert native_result.means["num_rel_ret"] == 1.0
    assert native_result.means["P_1"] == (0.0 if ties == "docno_asc" else 1.0)


def test_measures_computed_in_threads_equal_one_thread(tmp_path, monkeypatch):
    """From PARALLEL_MEASURE_ROWS ranked rows up, measures are computed side by side,
    each thread for a range of topics (of about equal rows; topics of very different
    sizes here): same values, under every policy that changes what a range holds."""
    from cumgain.engine import evaluator
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{t} 0 d{d} {(t * d) % 4}\n" for t in range(1, 30)
                                  for d in range(0, 40 + 3 * t, 3)))
    run_path.write_text("".join(f"{t} Q0 d{d} {d} {(d * 7) % 11}.5 x\n" for t in range(1, 30)
                                for d in range(t * t % 50)))
    linear = ["num_ret", "num_rel_ret", "P.1,3,10", "recall.5", "ndcg", "ndcg_cut.3,10",
              "avg_pos_nCG@4"]
    options = [(MEASURES, {}), (MEASURES, {"judged_only": True}), (MEASURES, {"depth": 5}),
               (MEASURES, {"topics": "qrels"}), (linear, {"ties": "average"})]
    ones = [evaluate(qrels_path, run_path, measures, threads=1, warn=False, **policy)
            for measures, policy in options]
    monkeypatch.setattr(evaluator, "PARALLEL_MEASURE_ROWS", 1)
    for threads in (2, 4, 40):
        for (measures, policy), one in zip(options, ones):
            assert_same(evaluate(qrels_path, run_path, measures, threads=threads, warn=False,
                                 **policy), one)
    with pytest.raises(InputError, match="not defined under ties='average'"):
        evaluate(qrels_path, run_path, ["P_5", "map"], ties="average", threads=2, warn=False)


def test_arrays_reused_from_range_to_range_give_each_range_its_own_values(tmp_path,
                                                                          monkeypatch):
    """A thread converts each range's levels into arrays it reuses for its next range
    (cumgain.measures.ranked.Scratch): with one range or with ranges of a topic or so, in one thread
    or two, measures of both judged_only flags and of several relevance levels,
    evaluated together, whose arrays must stay apart, equal each measure alone."""
    from cumgain.engine import evaluator
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{t} 0 d{d} {(t * d) % 5 - 1}\n" for t in range(1, 25)
                                  for d in range(0, 30 + 5 * t, 4)))
    run_path.write_text("".join(f"{t} Q0 d{d} {d} {(d * 7) % 13}.5 x\n"
                                for t in range(1, 25) for d in range((t * 17) % 60 + 1)))
    measures = ["map", "ndcg", "P(rel=2)@5", "nDCG(judged_only=True)@10", "P(rel=3)@10",
                "Rprec", "ndcg_cut.5", "P(judged_only=True)@5", "recip_rank",
                "nDCG(gains=exponential)@5", "num_rel"]
    policies = [{}, {"judged_only": True}, {"relevance_level": 2}]
    for policy in policies:
        alone = {name: evaluate(qrels_path, run_path, [name], threads=1, warn=False, **policy)
                 .values for name in measures}
        for range_rows, threads in ((evaluator.MEASURE_RANGE_ROWS, 1), (40, 1), (40, 2)):
            monkeypatch.setattr(evaluator, "MEASURE_RANGE_ROWS", range_rows)
            monkeypatch.setattr(evaluator, "PARALLEL_MEASURE_ROWS", 1)
            together = evaluate(qrels_path, run_path, measures, threads=threads, warn=False,
                                **policy)
            for name in measures:
                key = parse_measures([name])[0].name
                np.testing.assert_array_equal(together.values[key], alone[name][key],
                                              err_msg=f"{name} {policy} {range_rows} {threads}")


def test_gain_tables_that_differ_only_in_unlisted_levels_are_not_shared():
    """trec_eval's ndcg.1=3,2=9 and ir_measures' nDCG(gains={1:3,2:9}) keep an unlisted
    level's value as its gain; NTCIREVAL's tables (nERR, Q) make it an error. Evaluated
    together, in either order, each keeps its own rule (they once shared the first
    one's table)."""
    qrels, run = {"1": {"a": 1, "b": 5, "c": 2}}, {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    trec_style, table_style = "ndcg.1=3,2=9", "nDCG(gains={1:3,2:9})"
    strict = "nERR(gains={0:0,1:3,2:9})@3"
    alone = evaluate(qrels, run, [trec_style]).means[trec_style.replace(".", "_", 1)]
    both = evaluate(qrels, run, [table_style, trec_style]).means
    assert both[table_style] == both["ndcg_1=3,2=9"] == alone
    for measures in ([trec_style, strict], [strict, trec_style]):
        with pytest.raises(InputError, match="relevance level 5 has no gain"):
            evaluate(qrels, run, measures)
    assert evaluate(qrels, run, [trec_style, "ndcg"]).means["ndcg_1=3,2=9"] == alone


def test_a_gain_mapping_error_names_the_same_level_whatever_the_split(tmp_path, monkeypatch):
    """A level the mapping has no gain for is looked for among the whole batch's levels
    (the smallest first), not each thread's range of topics (found by fuzzing: the
    first range's level was named)."""
    from cumgain.engine import evaluator
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 13\n1 0 b 2\n2 0 c 5\n2 0 d 1\n3 0 e 1\n")
    run_path.write_text("1 Q0 a 1 1 r\n2 Q0 c 1 1 r\n3 Q0 e 1 1 r\n")
    monkeypatch.setattr(evaluator, "PARALLEL_MEASURE_ROWS", 1)
    for measures in (["nDCG@5(gains=0-1-10-100)"], ["nERR(gains={0:0,1:1,2:3})@10"],
                     ["P_1", "nDCG(gains=0-1-10-100)"]):
        for threads in (1, 2, 3):
            with pytest.raises(InputError, match=r"relevance level 5 has no gain"):
                evaluate(qrels_path, run_path, measures, threads=threads, warn=False)
    exponential = ["nDCG@2(gains=exponential)", "ndcg_cut.2"]
    one = evaluate(qrels_path, run_path, exponential, threads=1, warn=False)
    for threads in (2, 3):
        assert_same(evaluate(qrels_path, run_path, exponential, threads=threads, warn=False), one)


@given(st.binary(max_size=40), st.data())
def test_ids_compare_equal_exactly_when_their_bytes_do(a, data):
    """The word-at-a-time comparison of ids, at every length and any differing byte."""
    assert _lines.equal_bytes(a, a)
    if a:
        at = data.draw(st.integers(0, len(a) - 1))
        other = bytearray(a)
        other[at] ^= data.draw(st.integers(1, 255))
        assert not _lines.equal_bytes(a, bytes(other))
    b = data.draw(st.binary(min_size=len(a), max_size=len(a)))
    assert _lines.equal_bytes(a, b) == (a == b)


def test_a_qrels_file_prepared_once_serves_every_run(tmp_path):
    """What the command line uses: the judgments read natively once, for every run,
    an interleaved one too (held by topic), with the reference reader's numbers; a bad
    qrels file raises the reference reader's error."""
    import os
    qrels_path, run_path, interleaved = tmp_path / "qrels", tmp_path / "run", tmp_path / "mix"
    qrels_path.write_text("1 0 a 1\n2 0 b 2\n1 0 c 0\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n1 Q0 c 2 0.5 t\n2 Q0 b 1 1.0 t\n")
    interleaved.write_text("1 Q0 a 1 1.0 t\n2 Q0 b 1 1.0 t\n1 Q0 c 2 0.5 t\n")
    prepared = cumgain.prepare_qrels(qrels_path)
    assert isinstance(prepared, native.PreparedQrelsFile)
    assert os.fspath(prepared) == prepared.source == str(qrels_path)
    assert sorted(prepared.relevance.tolist()) == [0, 1, 2]
    for run in (run_path, interleaved):
        expected = _reference_evaluation(qrels_path, run)
        assert_same(evaluate(prepared, run, MEASURES), expected)
        assert_same(evaluate(qrels_path, run, MEASURES), expected)
    ranked = read_ranked(prepared, interleaved, **READ)
    assert ranked.run_topics == ["1", "2"] and ranked.run_offsets.tolist() == [0, 2, 3]
    qrels_path.write_text("1 0 a 1\n1 0 b\n")
    expected = reference_error(qrels_path, run_path)
    with pytest.raises(FormatError, match=r"qrels:2:") as error:
        cumgain.prepare_qrels(qrels_path)
    assert str(error.value) == str(expected)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections(), st.sampled_from(["docno_desc", "docno_asc", "input_order", "random"]),
       st.sampled_from(["float64", "float32"]), st.sampled_from([None, 2]), st.booleans(),
       st.sampled_from(["both", "qrels"]))
def test_prepared_qrels_file_evaluates_as_the_file(tmp_path, data, ties, precision, depth,
                                                    judged_only, which):
    """cumgain.prepare_qrels: the same evaluation as from the path (the reference
    reader's), run after run, and for a loaded Run."""
    import cumgain
    qrels_lines, run_lines = data
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    run_path.write_text("\n".join(run_lines) + "\n")
    prepared = cumgain.prepare_qrels(qrels_path, threads=2)
    assert isinstance(prepared, native.PreparedQrelsFile)
    options = dict(ties=ties, score_precision=precision, seed=3, depth=depth,
                   judged_only=judged_only, topics=which)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        expected = reference_reading.evaluate(qrels_path, run_path, MEASURES, **options)
        assert_same(evaluate(qrels_path, run_path, MEASURES, **options), expected)
        for _ in range(2):
            assert_same(evaluate(prepared, run_path, MEASURES, **options), expected)
        assert_same(evaluate(prepared, load_run(run_path), MEASURES, **options), expected)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["1", "2", "10", "q", "Q", "é", "z", "e\u0301"]),
                min_size=1, max_size=8, unique=True),
       st.lists(st.lists(st.sampled_from(["1", "2", "10", "q", "Q", "é", "z", "x", "e\u0301"]),
                         min_size=1, max_size=6, unique=True), min_size=1, max_size=3),
       st.sampled_from(["both", "qrels"]))
def test_prepared_qrels_topic_sets_as_the_reference_reader(judged, runs, which):
    """A table prepared once keeps its topic index and sorted topics for every run
    (NativeQrels.topic_index, sorted_topics): the topics evaluated, run only and
    missing, in order, as the reference reader gives them, run after run."""
    import cumgain
    qrels = {topic: {"d1": 1, "d2": 0, "d3": 2} for topic in judged}
    prepared = cumgain.prepare_qrels(qrels)
    assert isinstance(prepared, PreparedQrels) and prepared.native is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        for topics in runs:
            run = {topic: {"d1": 0.5, "d2": 1.0, "x": 0.7} for topic in topics}
            reference = reference_reading.evaluate(qrels, run, MEASURES, topics=which)
            assert_same(evaluate(prepared, run, MEASURES, topics=which), reference)


@pytest.mark.parametrize("ties", ["docno_desc", "input_order", "random"])
@pytest.mark.parametrize("depth", [None, 3])
def test_prepared_qrels_join_or_look_up_by_topic(ties, depth, tmp_path):
    """A prepared table keeps an index; each run topic either joins its judgments
    itself (no more judgments than documents) or looks its documents up in the index
    (more judgments): both give what the reference reader gives, in one ranking."""
    import cumgain
    qrels = {"many": {f"d{i}": (i % 4) - 1 for i in range(50)},          # 50 judged, 10 ranked
             "few": {"d1": 2, "d7": 1, "x": -1, "d3": 0, "zz": 3},        # 5 judged, 30 ranked
             "same": {f"d{i}": i % 3 for i in range(12)},                 # 12 judged, 12 ranked
             "none": {"q": 1}}
    run = {"many": {f"d{i}": float(i % 3) for i in range(0, 20, 2)},
           "few": {f"d{i}": float(i % 5) for i in range(30)},
           "same": {f"d{i}": float(i % 4) for i in range(12)},
           "unjudged": {"d1": 1.0}}
    prepared = cumgain.prepare_qrels(qrels)
    assert prepared.native is not None
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{t} 0 {d} {v}\n" for t, docs in qrels.items()
                                  for d, v in docs.items()))
    run_path.write_text("".join(f"{t} Q0 {d} {i + 1} {v} r\n" for t, docs in run.items()
                                for i, (d, v) in enumerate(docs.items())))
    prepared_file = cumgain.prepare_qrels(qrels_path)
    options = dict(ties=ties, depth=depth, seed=5, topics="qrels")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        reference = reference_reading.evaluate(qrels, run, MEASURES, **options)
        from_file = reference_reading.evaluate(qrels, run_path, MEASURES, **options)
        for judgments in (prepared, prepared_file):
            assert_same(evaluate(judgments, run, MEASURES, **options), reference)
            assert_same(evaluate(judgments, run_path, MEASURES, **options), from_file)
        pd = pytest.importorskip("pandas")
        frame = pd.DataFrame([(t, d, v) for t, docs in run.items() for d, v in docs.items()],
                             columns=["query_id", "doc_id", "score"])
        table = cumgain.prepare_qrels(pd.DataFrame(
            [(t, d, v) for t, docs in qrels.items() for d, v in docs.items()],
            columns=["query_id", "doc_id", "relevance"]))
        assert isinstance(table, native.PreparedQrelsTable)
        assert_same(evaluate(table, frame, MEASURES, **options), reference)


@pytest.mark.parametrize("levels", [[-2, -1, 0, 1, 2, 3], [0, 1, 2, 3, 5, 9]])
def test_gains_of_native_levels_as_the_reference_reader(levels):
    """Mapped gains looked up per byte for the native table's int8 levels (every level
    of the run's judged documents, negative ones too) equal the float64 lookup."""
    qrels = {f"q{t}": {f"d{i}": levels[(i + t) % len(levels)] for i in range(12)}
             for t in range(5)}
    run = {topic: {doc: float((i * 7) % 5) for i, doc in enumerate([*docs, "u1", "u2"])}
           for topic, docs in qrels.items()}
    measures = ["nDCG@10(gains=0-1-10-100-1000-1000-1000-1000-1000-1000)",
                "ndcg.0=0,1=1,2=5,3=9,5=1,9=2", "ERR@5(gains=0-1-2-3-4-5-6-7-8-9)"]
    native_levels = native.read_ranked(qrels, run, ties="docno_desc", score_precision="float64",
                                       seed=0, depth=None).levels
    assert native_levels.dtype == np.int8
    assert_same(*both_ways(qrels, run, measures))


def test_prepare_qrels_takes_what_evaluate_takes(tmp_path):
    """Files and dicts are read natively once, with the reference reader's numbers; a
    bad file raises the reference reader's error (naming file and line); prepared
    qrels come back as they are and pickle (a file is read again on unpickling)."""
    import cumgain
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 1\n1 0 b 2\n2 0 c 1\n")
    run_path.write_text("1 Q0 b 1 2.0 t\n1 Q0 a 2 1.0 t\n2 Q0 x 1 1.0 t\n")
    prepared = cumgain.prepare_qrels(qrels_path)
    assert prepared.topics == ("1", "2") and prepared.relevance.tolist() == [1.0, 2.0, 1.0]
    assert cumgain.prepare_qrels(prepared) is prepared
    assert repr(prepared) == f"PreparedQrelsFile({str(qrels_path)!r}: 2 topics, 3 judgments)"
    copy = pickle.loads(pickle.dumps(prepared))
    assert isinstance(copy, native.PreparedQrelsFile) and copy.source == prepared.source
    expected = _reference_evaluation(qrels_path, run_path)
    assert_same(evaluate(copy, run_path, MEASURES), expected)
    assert_same(evaluate(prepared, run_path, MEASURES), expected)
    np.testing.assert_array_equal(cumgain.rank(prepared, run_path).levels[0],
                                  reference_reading.rank(qrels_path, run_path).levels[0])

    judgments = {"1": {"a": 1, "b": 2}, "2": {"c": 1}}
    prepared_dict = cumgain.prepare_qrels(judgments)
    assert type(prepared_dict) is PreparedQrels and prepared_dict.native is not None
    assert_same(evaluate(prepared_dict, run_path, MEASURES),
                _reference_evaluation(judgments, run_path))

    qrels_path.write_text("1 0 a 1\n1 0 a 2\n2 0 c 1\n")       # a duplicate judgment
    expected_error = reference_error(qrels_path, run_path)
    with pytest.raises(FormatError, match=r"qrels:2:") as error:
        cumgain.prepare_qrels(qrels_path)
    assert str(error.value) == str(expected_error)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for policy in ("first", "last"):
            kept = cumgain.prepare_qrels(qrels_path, duplicates=policy)
            expected = _reference_evaluation(qrels_path, run_path, duplicates=policy)
            assert_same(evaluate(kept, run_path, MEASURES, duplicates=policy), expected)
            assert_same(evaluate(qrels_path, run_path, MEASURES, duplicates=policy), expected)
            assert kept.relevance.tolist() == ([1.0, 1.0] if policy == "first" else [2.0, 1.0])
    for bad in ({"threads": 0}, {"threads": True}, {"duplicates": "latest"}):
        with pytest.raises(InputError):
            cumgain.prepare_qrels(qrels_path, **bad)


@pytest.mark.parametrize("order", [["1", "2", "3", "4"], ["4", "3", "2", "1"],
                                   ["1", "3", "2", "5", "4"], ["2", "9", "3"]])
def test_run_topics_in_any_order_find_their_judgments(tmp_path, order):
    """A run topic is looked for first as the qrels topic after the previous one's,
    then by hashing: in the qrels' order, reversed, skipping, absent from the qrels."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{t} 0 d{t} 1\n{t} 0 e{t} 2\n" for t in "1234"))
    run_path.write_text("".join(f"{t} Q0 e{t} 1 2.0 r\n{t} Q0 d{t} 2 1.0 r\n{t} Q0 z 3 0.5 r\n"
                                for t in order))
    native_result, reference = both_ways(qrels_path, run_path)
    assert_same(native_result, reference)
    run = {t: {f"e{t}": 2.0, f"d{t}": 1.0, "z": 0.5} for t in order}
    qrels = {t: {f"d{t}": 1, f"e{t}": 2} for t in "1234"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        expected = reference_reading.evaluate(qrels, run, MEASURES)
        assert_same(evaluate(qrels, run, MEASURES), expected)
        assert_same(evaluate(PreparedQrels(qrels), run, MEASURES), expected)


class _Trickle:
    """A binary stream that gives at most 8 KiB per read, as a slow pipe or gzip may."""

    def __init__(self, data: bytes):
        self.data, self.position = data, 0

    def read(self, n: int = -1) -> bytes:
        n = len(self.data) - self.position if n < 0 else n
        chunk = self.data[self.position:self.position + min(n, 8192)]
        self.position += len(chunk)
        return chunk

    def readinto(self, buffer) -> int:
        chunk = self.read(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)


@pytest.mark.parametrize("limit", [-1, 3_000_000])
def test_blocks_are_whole_lines_whatever_the_reads(limit):
    """Blocks end at line ends even when each read gives a few KiB and a line is longer
    than the buffer (it grows); the held part of a line is not searched again for a
    newline at each read (that made a long line quadratic); a limit stops exactly."""
    long_line = b"x" * (3 * _native_blocks.BLOCK + 5)
    data = b"\xef\xbb\xbf1 Q0 a 1 1 t\n" + long_line + b"\n2 Q0 b 1 1 t\nlast"
    blocks = [bytes(block) for block in _native_blocks._blocks(_Trickle(data), limit)]
    expected = data[3:] if limit < 0 else data[3:limit]
    assert b"".join(blocks) == expected
    assert all(block.endswith(b"\n") for block in blocks[:-1])


def _page_offset(buffer: bytearray) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer)) % _native_blocks.PAGE


@pytest.mark.parametrize("held", [0, 1, 100, 3 * 4096])
def test_the_carried_line_is_put_where_the_next_read_is_not_aliased(held):
    """_front puts the bytes carried over ALIAS_GAP bytes in exactly when the next read
    would land 1 to 31 bytes past its source's place in a page (slow copies on AMD
    Zen), else at the front; and at the front wherever the buffer has no room."""
    page, gap = _native_blocks.PAGE, _native_blocks.ALIAS_GAP
    buffer = bytearray(4 * page)
    moved = 0
    for offset in range(page):
        front = _native_blocks._front(buffer, held, offset)
        aliased = 0 < (_page_offset(buffer) + held - offset) % page < gap
        assert front == (gap if aliased and gap + held + page <= len(buffer) else 0)
        assert not 0 < (_page_offset(buffer) + front + held - offset) % page < gap or \
            gap + held + page > len(buffer)
        moved += front > 0
    assert moved == (gap - 1 if held < 3 * page else 0)
    assert _native_blocks._front(bytearray(100), 0, 5) == 0


@pytest.mark.parametrize("rotate", [1, 3])
def test_blocks_are_whole_lines_wherever_the_reads_land(rotate, monkeypatch):
    """Blocks are the same whole lines whatever the stream's offset (``origin``), so
    wherever _front puts the line carried over (a byte order mark dropped, a line
    longer than the buffer grown into, the last line unfinished)."""
    fronts = Counter()
    front = _native_blocks._front

    def counted_front(*args):
        placed = front(*args)
        fronts[placed] += 1
        return placed

    monkeypatch.setattr(_native_blocks, "_front", counted_front)
    lines = [b"%d Q0 d%d 1 %d t\n" % (k % 7, k, k) * (1 + k % 3) for k in range(400)]
    data = b"\xef\xbb\xbf" + b"".join(lines[:200]) + b"y" * 20_000 + b"\n" + \
        b"".join(lines[200:]) + b"last"
    buffer = bytearray(3 * _native_blocks.PAGE)
    aliased = (_page_offset(buffer) - 3 - 16) % _native_blocks.PAGE   # (the first read)
    for origin in [aliased, *range(0, _native_blocks.PAGE, 61)]:
        blocks = [bytes(block) for block in _native_blocks._blocks(
            _Trickle(data), buffer=buffer, origin=origin, rotate=rotate)]
        assert b"".join(blocks) == data[3:]
        assert all(block.endswith(b"\n") for block in blocks[:-1])
    assert fronts[_native_blocks.ALIAS_GAP] > 0 and fronts[0] > 0


# ------------------------------------------------------------------ out of memory

_UNDER_LIMIT = r'''
import json, os, resource, sys, time
import cumgain
from cumgain import trec_io
from cumgain.reference import reading as reference_reading
calls = []
# the pure-Python reference reader must not be called (trec_io's public readers are the
# native reader's)
for module, names in ((trec_io, ("_read_file", "_read_qrels_python", "_read_run_python",
                                 "_load_qrels_python", "_load_run_python")),
                      (reference_reading, ("read_qrels", "read_run", "load_qrels",
                                           "load_run", "read_reference"))):
    for name in names:
        real = getattr(module, name, None)
        if real is not None:
            setattr(module, name, lambda *a, real=real, name=name, **k: (calls.append(name),
                                                                          real(*a, **k))[1])
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
headroom = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (size * 1024 + headroom, resource.RLIM_INFINITY))
start = time.perf_counter()
if sys.argv[2] == "cli":
    from cumgain.cli import main
    status = main(["evaluate", sys.argv[3], sys.argv[4], "-m", "map"])
    print(json.dumps({"status": status, "calls": calls}), file=sys.stderr)
    sys.exit(0)
try:
    cumgain.evaluate(sys.argv[3], sys.argv[4], ["map"], threads=1)
    outcome = {"error": None}
except MemoryError as error:
    outcome = {"error": type(error).__name__, "message": str(error),
               "is_memory_error": isinstance(error, MemoryError)}
outcome.update(calls=calls, seconds=time.perf_counter() - start)
print(json.dumps(outcome))
'''


def _one_big_topic(tmp_path, lines):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 d1 1\n1 0 d2 0\n")
    with open(run_path, "w") as run:
        for start in range(0, lines, 100_000):
            run.write("".join(f"1 Q0 d{i} {i + 1} {lines - i} t\n"
                              for i in range(start, min(lines, start + 100_000))))
    return qrels_path, run_path


def _run_under_limit(tmp_path, headroom_mib, *arguments):
    """Run _UNDER_LIMIT in a fresh process whose address space may grow by
    ``headroom_mib`` MiB past its size after the imports (one malloc arena, one
    OpenBLAS thread, so that threads do not reserve address space of their own)."""
    env = {**os.environ, "MALLOC_ARENA_MAX": "1", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", _UNDER_LIMIT, str(headroom_mib), *arguments],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
@pytest.mark.skipif(_vectors.SANITIZED, reason="under ASan (which reserves terabytes "
                    "of address space for its shadow) RLIMIT_AS cannot be set")
def test_out_of_memory_in_the_c_reader_is_a_memory_error_naming_the_file(tmp_path):
    """An allocation that fails in the C reader is a MemoryError at once, naming the
    file and the bytes asked for: not a retry with the pure-Python reader (which needs
    30-50 times the memory and time, and failed with an empty MemoryError)."""
    qrels_path, run_path = _one_big_topic(tmp_path, 400_000)
    completed = _run_under_limit(tmp_path, 64, "api", str(qrels_path), str(run_path))
    assert completed.returncode == 0, completed.stderr
    outcome = json.loads(completed.stdout)
    assert outcome["calls"] == []
    assert outcome["is_memory_error"] and outcome["error"] == "OutOfMemoryError"
    assert outcome["message"].startswith(f"{run_path}: out of memory reading the run: ")
    assert re.search(r"an allocation of [\d,]+ bytes failed", outcome["message"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
@pytest.mark.skipif(_vectors.SANITIZED, reason="under ASan (which reserves terabytes "
                    "of address space for its shadow) RLIMIT_AS cannot be set")
def test_out_of_memory_in_the_command_line_is_one_line_and_its_own_status(tmp_path):
    from cumgain import cli
    qrels_path, run_path = _one_big_topic(tmp_path, 400_000)
    completed = _run_under_limit(tmp_path, 64, "cli", str(qrels_path), str(run_path))
    *printed, report = completed.stderr.strip().splitlines()
    assert json.loads(report) == {"status": cli.EXIT_NO_MEMORY, "calls": []}
    assert len(printed) == 1 and printed[0].startswith(
        f"cumgain evaluate: error: {run_path}: out of memory reading the run: "), printed


@pytest.fixture
def allocation_limit():
    """Set a limit above which every allocation of the C reader fails (the test hook);
    lifted afterwards."""
    yield _trec._set_allocation_limit
    _trec._set_allocation_limit(_trec.NO_ALLOCATION_LIMIT)


REFERENCE_READER = {           # the pure-Python reference reader's entry points, by module
    "trec_io": ("_read_file", "_read_qrels_python", "_read_run_python", "_load_qrels_python",
                "_load_run_python"),
    "reference_reading": ("read_qrels", "read_run", "load_qrels", "load_run",
                          "read_reference")}


def _refuse_the_reference_reader(monkeypatch):
    from cumgain import trec_io

    def refuse(*args, **kwargs):
        raise AssertionError("the reference reader was called after a failure")

    modules = {"trec_io": trec_io, "reference_reading": reference_reading}
    patched = 0
    for module, names in REFERENCE_READER.items():
        for name in names:
            if hasattr(modules[module], name):
                monkeypatch.setattr(modules[module], name, refuse)
                patched += 1
    assert patched, "none of the reference reader's entry points was found"


@pytest.mark.parametrize("form", ["file", "gzip", "dict"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_an_allocation_failing_in_c_raises_at_once_naming_what_was_read(
        tmp_path, monkeypatch, allocation_limit, which, threads, form):
    """Wherever an allocation fails (one part or parts read in threads, files or dicts,
    qrels or run): an OutOfMemoryError, a MemoryError naming the source and the bytes
    asked for; never the reference reader."""
    big = {f"t{t}": {f"doc{t}-{d}": (d % 3) for d in range(20_000)} for t in range(4)}
    small = {"t0": {"doc0-1": 1}}
    qrels, run = (big, small) if which == "qrels" else (small, big)
    run = {topic: {d: float(level) for d, level in docs.items()} for topic, docs in run.items()}
    if form == "dict":
        sources = qrels, run
        named = "<dict>"
        monkeypatch.setattr(native, "DICT_TOPICS_PER_THREAD", 1)
    else:
        qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
        qrels_text = "".join(f"{t} 0 {d} {v}\n" for t, docs in qrels.items()
                             for d, v in docs.items())
        run_text = "".join(f"{t} Q0 {d} 1 {v} x\n" for t, docs in run.items()
                           for d, v in docs.items())
        for path, text in ((qrels_path, qrels_text), (run_path, run_text)):
            data = text.encode()
            path.write_bytes(gzip.compress(data) if form == "gzip" else data)
        sources = qrels_path, run_path
        named = str(qrels_path if which == "qrels" else run_path)
        monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    _refuse_the_reference_reader(monkeypatch)
    limit = 1 << 16
    allocation_limit(limit)
    with pytest.raises(MemoryError) as error:
        evaluate(*sources, ["map"], threads=threads)
    assert isinstance(error.value, cumgain.exceptions.OutOfMemoryError)
    assert error.value.path == named and error.value.requested > limit
    assert str(error.value) == (f"{named}: out of memory reading the {which}: an allocation "
                                f"of {error.value.requested:,} bytes failed")


def test_a_memory_error_outside_c_names_the_file_too(tmp_path, monkeypatch):
    """A MemoryError from the Python side of the native path (a buffer, a numpy array)
    is raised as an OutOfMemoryError naming the file, not retried either."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 1\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n")
    _refuse_the_reference_reader(monkeypatch)

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 8.00 EiB")

    monkeypatch.setattr(_native_blocks, "_blocks", no_memory)
    with pytest.raises(cumgain.exceptions.OutOfMemoryError) as error:
        evaluate(qrels_path, run_path, ["map"])
    assert str(error.value) == (f"{qrels_path}: out of memory reading the qrels "
                                f"(Unable to allocate 8.00 EiB)")
    assert error.value.requested is None


# ------------------------------------------------------------------ the line limit

@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("bad_file", ["qrels", "run"])
def test_a_line_past_the_limit_within_a_block_stops_the_c_reader(tmp_path, monkeypatch,
                                                                 threads, bad_file):
    """A complete line longer than the limit, well inside a block (and in any part):
    the C parser stops at it and raises the reference reader's error, naming it; lines
    of exactly the limit are read natively, with the reference reader's numbers."""
    monkeypatch.setattr(trec_io, "MAX_LINE_BYTES", 60)
    monkeypatch.setattr(_native_parts, "PART_BYTES", 1)
    qrels = [f"{t} 0 d{d} {d % 3}" for t in range(1, 30) for d in range(20)]
    run = [f"{t} Q0 d{d} {d + 1} {30 - d} t" for t in range(1, 30) for d in range(20)]
    lines = qrels if bad_file == "qrels" else run
    at = len(lines) * 2 // 3
    topic = lines[at].split()[0]
    fill = 60 - len(f"{topic} 0 x 1") if bad_file == "qrels" else 60 - len(f"{topic} Q0 x 1 1 t")
    exact = (f"{topic} 0 {'x' * (fill + 1)} 1" if bad_file == "qrels"
             else f"{topic} Q0 {'x' * (fill + 1)} 1 1 t")
    assert len(exact) == 60
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    lines.insert(at, exact)
    qrels_path.write_text("\n".join(qrels) + "\n")
    run_path.write_text("\n".join(run) + "\n")
    options = dict(ties="docno_desc", score_precision="float64", seed=0, depth=None,
                   threads=threads)
    assert isinstance(read_ranked(qrels_path, run_path, **options), RankedInput)
    assert_same(*both_ways(qrels_path, run_path, threads=threads))
    lines[at] = exact.replace("x", "xy", 1)                 # 61 bytes
    qrels_path.write_text("\n".join(qrels) + "\n")
    run_path.write_text("\n".join(run) + "\n")
    bad_path = qrels_path if bad_file == "qrels" else run_path
    error = raises_the_reference_error(qrels_path, run_path, threads=threads)
    assert isinstance(error, FormatError)
    assert re.match(rf"^{re.escape(str(bad_path))}:{at + 1}: line longer than 60 bytes",
                    str(error))


def test_the_native_blocks_stop_growing_past_the_limit():
    """_blocks doubles its buffer for a long line only up to the limit: an unfinished
    line longer than it stops the reading (_LineTooLong), a complete one is the
    parser's to refuse."""
    data = b"1 Q0 a 1 1 t\n" + b"x" * (5 << 20) + b"\n"
    with pytest.raises(_native_blocks._LineTooLong) as error:
        list(_native_blocks._blocks(io.BytesIO(data), max_line=1 << 20))
    assert error.value.prefix == b"x" * (1 << 20)      # the long line's first bytes
    blocks = [bytes(block) for block in _native_blocks._blocks(io.BytesIO(data),
                                                               max_line=6 << 20)]
    assert b"".join(blocks) == data


# ------------------------------------- blank and comment lines passed over in C

_DATA_LINE = re.compile(rb"^[ \t\r\v\f]*[^ \t\r\v\f\n#]", re.MULTILINE)
_LINE_PIECES = [b"\n", b"  \n", b"# c\n", b" # x\n", b"1 Q0 d 1 2 t\n", b"\t\r\n", b"x", b" ",
                b"#", b"\x00", b"\xc3\xa9 1\n", b"\v\f\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_LINE_PIECES), st.sampled_from([1, 1, 2, 30])),
                max_size=12))
def test_first_data_line_is_the_parsers_rule(pieces):
    """_lines.first_data_line (the part prober's search) finds the line a regex of the
    parsers' rule finds: the first whose first non-space byte is neither a newline nor
    "#", from every line start (pieces repeated, so that stretches of blank and comment
    lines span the 64 bytes its scanner takes at a time)."""
    text = b"".join(piece * count for piece, count in pieces)
    for at in [0] + [i + 1 for i, byte in enumerate(text) if byte == 10]:
        found = _DATA_LINE.search(text, at)
        assert _lines.first_data_line(text, at) == (found.start() if found else -1)
    with pytest.raises(ValueError):
        _lines.first_data_line(text, len(text) + 1)


@pytest.mark.parametrize("blank", [b"\n", b"# a comment\n", b"\n\n# c\n \n"])
def test_bad_line_after_many_blank_lines_is_named_by_its_number(tmp_path, blank):
    """Stretches of blank lines are counted in one go: the line named in an error
    after them is still the right one, in a file past a part's size (whose part starts
    are probed for past the blank lines)."""
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n")
    run = tmp_path / "run"
    lines_per_blank = blank.count(b"\n")
    repeats = (10 << 20) // len(blank) + 1         # past PART_BYTES: part starts probed
    run.write_bytes(b"1 Q0 d1 1 2.0 t\n" + blank * repeats + b"1 Q0 d2 2 x t\n")
    with pytest.raises(FormatError, match=rf"run:{2 + lines_per_blank * repeats}:"):
        cumgain.evaluate(str(qrels), str(run), ["map"], threads=2)
    run.write_bytes(blank * repeats)
    with pytest.raises(FormatError, match="no data lines"):
        cumgain.evaluate(str(qrels), str(run), ["map"], threads=2)
