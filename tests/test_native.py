"""The native reader (cgcore._trec via cumgain.native) against the reference reader.

The native path must accept exactly the files the reference reader accepts, and
give bit-identical evaluations; on anything it does not take it must step aside
(read_ranked returns None) so that the reference reader words the error.
"""
import gzip
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cumgain.evaluator import TopicsWarning, evaluate
from cumgain.exceptions import FormatError
from cumgain.native import read_ranked
from cumgain.trec_io import read_qrels, read_run

MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank",
            "P.1,3,10", "recall.5", "ndcg", "ndcg_cut.3,10", "ndcg_rel", "Rndcg",
            "success.1,5", "nDCG@5(gains=exponential,discount=tois)", "avg_pos_nCG@4"]


def both_ways(qrels_path, run_path, **options):
    """Evaluate from the paths (native) and from reference-read objects."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        native = evaluate(qrels_path, run_path, MEASURES, **options)
        reference = evaluate(read_qrels(qrels_path), read_run(run_path), MEASURES, **options)
    return native, reference


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
levels = st.sampled_from(["0", "1", "2", "3", "-1", "-2", "1.5"])


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
            extra = draw(st.sampled_from(["", " extra", "\r"]))
            run_lines.append(f"{topic} Q0 {docno} {rank + 1} {draw(scores)} tag{topic}{extra}")
    if not qrels_lines:
        qrels_lines.append("1 0 d1 1")
    return qrels_lines, run_lines


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections(), st.sampled_from(["docno_desc", "docno_asc", "input_order", "random"]),
       st.sampled_from(["float64", "float32"]), st.sampled_from([None, 2]), st.booleans(),
       st.sampled_from(["both", "qrels"]))
def test_native_equals_reference(tmp_path, data, ties, precision, depth, judged_only, which):
    qrels_lines, run_lines = data
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    run_path.write_text("\n".join(run_lines) + "\n")
    assert read_ranked(qrels_path, run_path, ties=ties, score_precision=precision, seed=3,
                       depth=depth) is not None
    native, reference = both_ways(qrels_path, run_path, ties=ties, score_precision=precision,
                                  seed=3, depth=depth, judged_only=judged_only, topics=which)
    assert_same(native, reference)


BAD_LINES = [
    "1 0 d1",                   # qrels: too few fields
    "1 0 d1 1 extra",           # qrels: too many
    "1 0 d1 x",                 # non-numeric relevance
    "1 0 d1 nan",
    "1 0 d1 inf",
    "1 0 d1 0x10",
    "1 0 d1 1_0",
    "",                         # blank line in qrels
    "1 0 d\x00 1",
]


@pytest.mark.parametrize("bad", BAD_LINES)
def test_bad_qrels_lines_step_aside_and_the_reference_words_the_error(tmp_path, bad):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text(f"1 0 a 1\n{bad}\n1 0 b 0\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n")
    assert read_ranked(qrels_path, run_path, ties="docno_desc", score_precision="float64",
                       seed=0, depth=None) is None
    with pytest.raises(FormatError, match=r"qrels:2:"):
        evaluate(qrels_path, run_path, ["map"])


@pytest.mark.parametrize("bad", ["1 Q0 b 2 1.0", "1 Q0 b 2 x t", "1 Q0 b 2 nan t",
                                 "1 Q0 b 2 1e t", "1 Q0 a 2 0.5 t"])
def test_bad_run_lines_step_aside(tmp_path, bad):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 1\n")
    run_path.write_text(f"1 Q0 a 1 1.0 t\n{bad}\n")
    assert read_ranked(qrels_path, run_path, ties="docno_desc", score_precision="float64",
                       seed=0, depth=None) is None
    with pytest.raises(FormatError, match=r"run:2:"):
        evaluate(qrels_path, run_path, ["map"])


def test_invalid_utf8_steps_aside(tmp_path):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_bytes(b"1 0 a 1\n1 0 \xff 1\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n")
    assert read_ranked(qrels_path, run_path, ties="docno_desc", score_precision="float64",
                       seed=0, depth=None) is None
    with pytest.raises(FormatError, match="UTF-8"):
        evaluate(qrels_path, run_path, ["map"])


def test_interleaved_run_topics_use_the_reference_path(tmp_path):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 1\n2 0 b 1\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n2 Q0 b 1 1.0 t\n1 Q0 c 2 0.5 t\n")
    assert read_ranked(qrels_path, run_path, ties="docno_desc", score_precision="float64",
                       seed=0, depth=None) is None
    result = evaluate(qrels_path, run_path, ["num_ret", "map"])
    assert result.values["num_ret"].tolist() == [2, 1] and result.means["map"] == 1.0


def test_gzip_and_bom_and_crlf(tmp_path):
    qrels_path, run_path = tmp_path / "qrels.gz", tmp_path / "run"
    with gzip.open(qrels_path, "wt") as stream:
        stream.write("1 0 a 2\r\n1 0 b 1\r\n")
    run_path.write_bytes(b"\xef\xbb\xbf1 Q0 b 1 2.0 t\r\n1 Q0 a 2 1.0 t\r\n")
    assert read_ranked(qrels_path, run_path, ties="docno_desc", score_precision="float64",
                       seed=0, depth=None) is not None
    assert_same(*both_ways(qrels_path, run_path))


def test_duplicates_step_aside(tmp_path):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("1 0 a 1\n")
    run_path.write_text("1 Q0 a 1 1.0 t\n1 Q0 a 2 0.5 t\n")
    with pytest.raises(FormatError, match="duplicate"):
        evaluate(qrels_path, run_path, ["map"])
    with pytest.warns(Warning):
        result = evaluate(qrels_path, run_path, ["num_ret"], duplicates="first")
    assert result.means["num_ret"] == 1


def test_long_lines_and_long_numbers(tmp_path):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    long_docno = "x" * 100_000
    qrels_path.write_text(f"1 0 {long_docno} 1\n")
    run_path.write_text(f"1 Q0 {long_docno} 1 {'1' * 200}.5 t\n1 Q0 b 2 0.{'1' * 300} t\n")
    assert_same(*both_ways(qrels_path, run_path))
