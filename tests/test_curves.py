"""Gain-by-rank curves (cumgain.curves) and the ranking they are built on (evaluator.rank).

Expected values are the SPEC's worked examples (J&K 2002, section 2; the slides'
nDCG example), hand computations written as formulas, and cross-checks against the
scalar kernels of cumgain.evaluate (a separate code path from the vector kernels).
"""
import math
import warnings

import numpy as np
import pytest

import cumgain
from cumgain import curves
from cumgain.datasets import demo_collection
from cumgain.engine.evaluator import TopicsWarning, rank
from cumgain.exceptions import InputError

G_PAPER = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
I_PAPER = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]
LOG2_3 = math.log2(3)


def _truncate2(values):
    return np.floor(np.asarray(values) * 100 + 1e-9) / 100


# ---------------------------------------------------------------- the SPEC's worked examples

def test_paper_cg_and_ideal_cg():
    result = curves.from_gains({"G'": [G_PAPER]}, [I_PAPER], "CG", depth=13)
    assert result.runs["G'"][:10].tolist() == [3, 5, 8, 8, 8, 9, 11, 13, 16, 16]
    assert result.ideal.tolist() == [3, 6, 9, 11, 13, 15, 16, 17, 18, 19, 19, 19, 19]
    assert result.ranks.tolist() == list(range(1, 14))


def test_paper_dcg_and_ideal_dcg_base_2():
    result = curves.from_gains({"G'": [G_PAPER]}, [I_PAPER], "DCG", depth=12, base=2)
    assert result.runs["G'"][:10].round(2).tolist() == [3, 5, 6.89, 6.89, 6.89, 7.28, 7.99,
                                                        8.66, 9.61, 9.61]
    # the paper truncates: 10.5256 prints as 10.52
    assert _truncate2(result.ideal).tolist() == [3, 6, 7.89, 8.89, 9.75, 10.52, 10.88, 11.21,
                                                 11.53, 11.83, 11.83, 11.83]


def test_paper_ncg():
    result = curves.from_gains({"G'": [G_PAPER]}, [I_PAPER], "nCG", depth=10)
    assert result.runs["G'"].round(2).tolist() == [1, 0.83, 0.89, 0.73, 0.62, 0.6, 0.69, 0.76,
                                                   0.89, 0.84]
    assert result.ideal.tolist() == [1.0] * 10


def test_slides_ndcg_and_the_ideal_order():
    result = curves.from_gains({"run": [[2, 1, 2, 0]], "ideal order": [[2, 2, 1, 0]]},
                               [[0, 1, 2, 2]], "nDCG", depth=4)
    assert round(result.runs["run"][3], 4) == 0.9203
    assert result.runs["ideal order"].tolist() == [1.0] * 4


# ---------------------------------------------------------------- two topics by hand
# topic A: run gains <1, 0, 1>, judged gains {1, 1}; topic B: run <0, 3, 0>, judged {3, 3}.
# CG_A = <1, 1, 2>, CG_B = <0, 3, 3>; ideal CG_A = <1, 2, 2>, ideal CG_B = <3, 6, 6>.
# TOIS discount, b = 2: df = <1, 1, log2 3>.

RUNS = {"r": [[1, 0, 1], [0, 3, 0]]}
JUDGED = [[1, 1], [3, 3]]


def test_two_topics_cg_and_dcg():
    cg_curves = curves.from_gains(RUNS, JUDGED, "CG", depth=3, topics=["A", "B"])
    assert cg_curves.runs["r"].tolist() == [(1 + 0) / 2, (1 + 3) / 2, (2 + 3) / 2]
    assert cg_curves.ideal.tolist() == [(1 + 3) / 2, (2 + 6) / 2, (2 + 6) / 2]
    assert cg_curves.topics == ("A", "B")
    dcg_curves = curves.from_gains(RUNS, JUDGED, "DCG", depth=3, base=2)
    assert dcg_curves.runs["r"] == pytest.approx([0.5, 2.0, (1 + 1 / LOG2_3 + 3) / 2], abs=1e-15)
    assert dcg_curves.ideal.tolist() == [2.0, 4.0, 4.0]
    assert (cg_curves.order, dcg_curves.discount, cg_curves.discount) == (None, "tois", "none")


def test_two_topics_both_averaging_orders():
    first = curves.from_gains(RUNS, JUDGED, "nCG", depth=3, order="normalise_then_average")
    assert first.runs["r"] == pytest.approx([(1 / 1 + 0 / 3) / 2, (1 / 2 + 3 / 6) / 2,
                                             (2 / 2 + 3 / 6) / 2], abs=1e-15)
    second = curves.from_gains(RUNS, JUDGED, "nCG", depth=3, order="average_then_normalise")
    assert second.runs["r"] == pytest.approx([0.5 / 2, 2 / 4, 2.5 / 4], abs=1e-15)
    assert first.ideal.tolist() == second.ideal.tolist() == [1.0, 1.0, 1.0]
    ndcg = curves.from_gains(RUNS, JUDGED, "nDCG", depth=3, order="average_then_normalise")
    assert ndcg.runs["r"][2] == pytest.approx((1 + 1 / LOG2_3 + 3) / 2 / 4, abs=1e-15)
    assert ndcg.order == "average_then_normalise"


def test_per_topic_vectors_and_long_frames():
    pd = pytest.importorskip("pandas")
    result = curves.from_gains(RUNS, JUDGED, "nCG", depth=3, topics=["A", "B"], per_topic=True)
    assert result.per_topic["r"].tolist() == [[1, 0.5, 1], [0, 0.5, 0.5]]
    assert result.ideal_per_topic.tolist() == [[1, 1, 1], [1, 1, 1]]
    frame = result.to_dataframe(per_topic=True)
    assert list(frame.columns) == ["topic", "run", "rank", "value"]
    assert len(frame) == 2 * 2 * 3          # (run + ideal) x topics x ranks
    row = frame[(frame.topic == "B") & (frame.run == "r") & (frame["rank"] == 2)]
    assert row.value.tolist() == [0.5]
    assert frame[frame.run == "ideal"].value.tolist() == [1.0] * 6
    averaged = result.to_dataframe()
    assert list(averaged.columns) == ["run", "rank", "value"]
    assert averaged[averaged.run == "r"].value.tolist() == pytest.approx([0.5, 0.5, 0.75])
    assert isinstance(averaged, pd.DataFrame)
    plain = curves.from_gains(RUNS, JUDGED, "nCG", depth=3)
    assert plain.per_topic is None
    with pytest.raises(InputError, match="per_topic=True"):
        plain.to_dataframe(per_topic=True)


def test_curves_are_read_only():
    result = curves.from_gains(RUNS, JUDGED, "CG", depth=3, per_topic=True)
    with pytest.raises(ValueError):
        result.runs["r"][0] = 99
    with pytest.raises(ValueError):
        result.ideal[0] = 99


def test_gain_mapping_of_levels():
    result = curves.from_gains({"r": [[3, 0, 1]]}, [[1, 3, 2, 0]], "CG", depth=3,
                               mapping="0-1-10-100")
    assert result.runs["r"].tolist() == [100, 100, 101]
    assert result.ideal.tolist() == [100, 110, 111]
    assert result.gains == "0-1-10-100"


def test_zero_ideal_topics():
    # topic B has no judged gain > 0: its normalised values are zero_ideal
    runs = {"r": [[1, 0], [0, 0]]}
    judged = [[1], [0, 0]]
    counted = curves.from_gains(runs, judged, "nCG", depth=2)
    assert counted.runs["r"].tolist() == [0.5, 0.5]
    assert counted.ideal.tolist() == [0.5, 0.5]     # no run can do better than the ideal
    skipped = curves.from_gains(runs, judged, "nCG", depth=2, zero_ideal=float("nan"))
    assert skipped.runs["r"].tolist() == [1.0, 1.0]
    assert skipped.ideal.tolist() == [1.0, 1.0]
    assert counted.relevant_counts.tolist() == [1, 0]


def test_runs_shorter_than_the_depth_are_padded():
    result = curves.from_gains({"r": [[2]]}, [[2, 1]], "CG", depth=4)
    assert result.runs["r"].tolist() == [2, 2, 2, 2]
    assert result.ideal.tolist() == [2, 3, 3, 3]


@pytest.mark.parametrize("kwargs, message", [
    (dict(measure="MAP"), "measure must be one of"),
    (dict(depth=0), "depth must be"),
    (dict(order="both"), "order must be one of"),
    (dict(measure="nDCG", base=1), "base"),
    (dict(measure="DCG", discount="sqrt"), "unknown discount"),
    (dict(run_gains={"ideal": [[1]], }), "cannot be named 'ideal'"),
    (dict(run_gains={}), "no runs"),
    (dict(run_gains={"r": [1, 0]}), "single list"),
    (dict(run_gains={"r": [[1], [0], [1]]}), "3 topics but judged has 2"),
    (dict(topics=["only one"]), "1 topic names for 2 topics"),
])
def test_bad_input_is_an_input_error(kwargs, message):
    arguments = dict(run_gains=RUNS, judged=JUDGED, measure="nCG", depth=3)
    arguments.update(kwargs)
    with pytest.raises(InputError, match=message):
        curves.from_gains(arguments.pop("run_gains"), arguments.pop("judged"), **arguments)


# ---------------------------------------------------------------- end to end

def test_curves_equal_evaluate_at_every_reading_rank():
    """The curves (vector kernels) against cumgain.evaluate's means (scalar kernels),
    normalising per topic then averaging, on the demo collection."""
    collection = demo_collection()
    ranks = (1, 2, 7, 30, 100, 150)             # 150 is past the runs' 100 documents
    computed = curves.compute_many(collection.qrels, collection.runs, depth=150,
                                   gains="0-1-10-100", discount="tois", base=2)
    spelled = {"CG": "CG@{k}(gains=0-1-10-100)", "nCG": "nCG@{k}(gains=0-1-10-100)",
               "DCG": "DCG@{k}(discount=tois,base=2,gains=0-1-10-100)",
               "nDCG": "nDCG@{k}(discount=tois,base=2,gains=0-1-10-100)"}
    for run in collection.runs:
        names = [spelling.format(k=k) for spelling in spelled.values() for k in ranks]
        result = cumgain.evaluate(collection.qrels, collection.runs[run], names)
        for measure, spelling in spelled.items():
            for k in ranks:
                assert computed[measure].runs[run][k - 1] == pytest.approx(
                    result.means[spelling.format(k=k)], rel=1e-12, abs=1e-12)
    assert computed["nDCG"].topics == collection.topics


def test_compute_from_trec_files_equals_compute_from_dicts(tmp_path):
    collection = demo_collection()
    paths = collection.write_trec(tmp_path)
    from_files = curves.compute(paths["qrels"], {"good": paths["good"], "poor": paths["poor"]},
                                "nDCG", depth=50, gains="exponential")
    from_dicts = curves.compute(collection.qrels, {"good": collection.runs["good"],
                                                   "poor": collection.runs["poor"]},
                                "nDCG", depth=50, gains="exponential")
    for run in ("good", "poor"):
        np.testing.assert_array_equal(from_files.runs[run], from_dicts.runs[run])
    np.testing.assert_array_equal(from_files.ideal, from_dicts.ideal)


def test_the_qrels_file_is_read_once_for_every_run(tmp_path, monkeypatch):
    from cumgain import trec_io                 # (where prepare_qrels reads the file)
    collection = demo_collection()
    paths = collection.write_trec(tmp_path)
    reads = []
    real = trec_io.native_qrels
    monkeypatch.setattr(trec_io, "native_qrels", lambda *a, **k: reads.append(a) or real(*a, **k))
    runs = {"good": paths["good"], "poor": paths["poor"]}
    computed = curves.compute(paths["qrels"], runs, "nDCG", depth=50)
    assert len(reads) == 1
    for run in runs:
        np.testing.assert_array_equal(
            computed.runs[run],
            curves.compute(collection.qrels, {run: collection.runs[run]}, "nDCG",
                           depth=50).runs[run])


def test_unjudged_and_negative_levels_gain_nothing():
    qrels = {"q": {"a": 2, "b": -1, "c": 1}}
    run = {"q": {"a": 0.9, "b": 0.8, "x": 0.7, "c": 0.6}}     # x is not judged
    result = curves.compute(qrels, {"r": run}, "CG", depth=4, gains="0-1-10-100")
    assert result.runs["r"].tolist() == [10, 10, 10, 11]
    assert result.ideal.tolist() == [10, 11, 11, 11]
    assert result.relevant_counts.tolist() == [2]


def test_tie_averaging_shares_the_gain_of_a_tied_group():
    qrels = {"q": {"a": 3, "b": 0, "c": 1}}
    run = {"q": {"a": 0.5, "b": 0.5, "c": 0.1}}
    result = curves.compute(qrels, {"r": run}, "CG", depth=3, ties="average")
    assert result.runs["r"].tolist() == [1.5, 3.0, 4.0]       # a and b share (3 + 0) / 2
    by_docno = curves.compute(qrels, {"r": run}, "CG", depth=3)   # docno descending: b, a
    assert by_docno.runs["r"].tolist() == [0.0, 3.0, 4.0]


def test_runs_must_share_the_topics():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    full = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    partial = {"q1": {"a": 1.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        with pytest.raises(InputError, match="different topics.*topics='qrels'"):
            curves.compute(qrels, {"full": full, "partial": partial}, "CG", depth=1)
        result = curves.compute(qrels, {"full": full, "partial": partial}, "CG", depth=1,
                                topics="qrels")
    assert result.runs["full"].tolist() == [1.0]
    assert result.runs["partial"].tolist() == [0.5]          # q2 missing: scores 0


def test_rankings_against_different_qrels_are_refused():
    run = {"q": {"a": 1.0, "b": 0.5}}
    rankings = {"one": rank({"q": {"a": 1}}, run), "two": rank({"q": {"a": 1, "b": 2}}, run)}
    with pytest.raises(InputError, match="different qrels"):
        curves.from_rankings(rankings, "CG", depth=2)


def test_no_common_topic():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        with pytest.raises(InputError, match="no topic has both results and judgments"):
            curves.compute({"q1": {"a": 1}}, {"r": {"q2": {"a": 1.0}}}, "CG", depth=1)


# ---------------------------------------------------------------- readings

def test_rank_reaching():
    curve = [0.0, 1.0, 1.0, 2.0, 3.0]
    assert curves.rank_reaching(curve, 2.0) == 4
    assert curves.rank_reaching(curve, 1.0) == 2
    assert curves.rank_reaching(curve, 0.0) == 1
    assert curves.rank_reaching(curve, 3.5) is None
    with pytest.raises(InputError, match="1-D"):
        curves.rank_reaching([[1.0]], 1.0)
    with pytest.raises(InputError, match="finite"):
        curves.rank_reaching(curve, float("nan"))


# one topic, judged gains {1, 1, 1}: ideal CG <1, 2, 3, 3, 3, 3>
# run "early": gains <0, 1, 0, 1, 1, 0>: CG <0, 1, 1, 2, 3, 3>
# run "late":  gains <0, 0, 0, 0, 0, 1>: CG <0, 0, 0, 0, 0, 1>
READING = curves.from_gains({"early": [[0, 1, 0, 1, 1, 0]], "late": [[0, 0, 0, 0, 0, 1]]},
                            [[1, 1, 1]], "CG", depth=6)


def test_horizontal_reading_against_the_ideal():
    assert curves.horizontal_reading(READING, 1) == {"early": 2, "late": 6}
    assert curves.horizontal_reading(READING, 2) == {"early": 4, "late": None}
    assert curves.horizontal_reading(READING, 3) == {"early": 5, "late": None}
    assert curves.horizontal_reading(READING, 6) == {"early": 5, "late": None}


def test_horizontal_reading_against_any_target():
    assert curves.horizontal_reading(READING, target=2.5) == {"early": 5, "late": None}
    # "the user has to examine N documents of the late run to get what the early run
    # gives at rank 2" (section 3.5): the target is a run's own value
    assert curves.horizontal_reading(READING, target=READING.runs["early"][1]) == \
        {"early": 2, "late": 6}
    with pytest.raises(InputError, match="exactly one"):
        curves.horizontal_reading(READING, 1, target=1.0)
    with pytest.raises(InputError, match="exactly one"):
        curves.horizontal_reading(READING)
    with pytest.raises(InputError, match="from 1 to the curves' depth 6"):
        curves.horizontal_reading(READING, 7)


def test_stopping_rank_is_the_largest_recall_base():
    # topic A has 2 judged gains > 0, topic B 5
    judged = [[3, 0, 1], [1, 1, 1, 1, 0, 2]]
    runs = {"r": [[0], [0]]}
    assert curves.stopping_rank(curves.from_gains(runs, judged, "CG", depth=10)) == 5
    assert curves.stopping_rank(curves.from_gains(runs, judged, "nDCG", depth=10)) == 5
    assert curves.stopping_rank(curves.from_gains(runs, judged, "CG", depth=4)) == 4  # capped
    # under 0-0-0-1 only level 3 has a gain: one document in A, none in B
    assert curves.stopping_rank(curves.from_gains(runs, judged, "CG", depth=10,
                                                  mapping="0-0-0-1")) == 1
    nothing = curves.from_gains(runs, [[0], [0, 0]], "CG", depth=10)
    assert curves.stopping_rank(nothing) == 0


def test_stopping_rank_is_where_the_averaged_ideal_turns_horizontal():
    collection = demo_collection()
    most = max(sum(level > 0 for level in judged.values())
               for judged in collection.qrels.values())
    for measure in ("CG", "DCG"):
        result = curves.compute(collection.qrels, collection.runs, measure, depth=200)
        stop = curves.stopping_rank(result)
        assert stop == most
        steps = np.diff(result.ideal)
        assert (steps[:stop - 1] > 0).all()          # rises up to the stopping rank
        assert (steps[stop - 1:] == 0).all()         # flat after it


def test_vertical_gaps():
    result = curves.from_gains(RUNS, JUDGED, "CG", depth=3)   # run <0.5, 2, 2.5>, ideal <2, 4, 4>
    assert {run: gaps.tolist() for run, gaps in curves.vertical_gaps(result, [1, 3]).items()} \
        == {"r": [2 - 0.5, 4 - 2.5]}
    relative = curves.vertical_gaps(result, [1, 3], relative=True)
    assert relative["r"].tolist() == [1.5 / 2, 1.5 / 4]
    assert curves.vertical_gaps(result, 2)["r"].tolist() == [2.0]
    nothing = curves.from_gains({"r": [[0, 0]]}, [[0]], "CG", depth=2)
    assert math.isnan(curves.vertical_gaps(nothing, [1], relative=True)["r"][0])
    with pytest.raises(InputError, match="rank must be"):
        curves.vertical_gaps(result, [0])


def test_area_to_the_normalised_ideal():
    result = curves.from_gains(RUNS, JUDGED, "nCG", depth=3)   # <0.5, 0.5, 0.75>
    assert curves.area_to_ideal(result) == {"r": pytest.approx(0.5 + 0.5 + 0.25, abs=1e-15)}
    assert curves.area_to_ideal(result, 1) == {"r": 0.5}
    # with an ideal of ones, area = k (1 - avg-pos(v, k)) (eq. 6)
    for k in (1, 2, 3):
        assert curves.area_to_ideal(result, k)["r"] == pytest.approx(
            k * (1 - cumgain.avg_pos(result.runs["r"], k)), abs=1e-15)
    ideal_run = curves.from_gains({"r": [[1, 1, 0], [3, 3, 0]]}, JUDGED, "nDCG", depth=3)
    assert curves.area_to_ideal(ideal_run) == {"r": 0.0}
    with pytest.raises(InputError, match="normalised curves"):
        curves.area_to_ideal(curves.from_gains(RUNS, JUDGED, "CG", depth=3))
    with pytest.raises(InputError, match="k must be"):
        curves.area_to_ideal(result, 4)


# ---------------------------------------------------------------- evaluator.rank

def test_rank_returns_levels_in_rank_order_and_the_recall_base():
    qrels = {"q1": {"a": 2, "b": 0, "c": 1, "d": -1}, "q2": {"e": 1}}
    run = {"q1": {"a": 0.1, "c": 0.9, "x": 0.5, "d": 0.5}, "q2": {"e": 1.0}}
    ranking = rank(qrels, run)
    assert ranking.topics == ("q1", "q2")
    # c (0.9), then the tie x/d by docno descending: x, d; then a
    assert ranking.levels[0].tolist() == [1, 0, 0, 2]
    assert ranking.judged[:4].tolist() == [True, False, False, True]
    assert sorted(ranking.qrels_levels[0].tolist()) == [-1, 0, 1, 2]
    assert ranking.gains("0-1-10-100")[0].tolist() == [1, 0, 0, 10]
    assert sorted(ranking.judged_gains("0-1-10-100")[0].tolist()) == [0, 0, 1, 10]
    assert ranking.levels[1].tolist() == [1]


def test_rank_native_and_reference_paths_agree(tmp_path):
    pd = pytest.importorskip("pandas")
    collection = demo_collection()
    paths = collection.write_trec(tmp_path)
    native = rank(paths["qrels"], paths["fair"])               # the C reader
    qrels_frame = pd.DataFrame([(t, d, r) for t, docs in collection.qrels.items()
                                for d, r in docs.items()],
                               columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame([(t, d, s) for t, docs in collection.runs["fair"].items()
                              for d, s in docs.items()],
                             columns=["query_id", "doc_id", "score"])
    reference = rank(qrels_frame, run_frame)                   # the numpy path
    assert native.topics == reference.topics
    np.testing.assert_array_equal(native.levels.values, reference.levels.values)
    np.testing.assert_array_equal(native.levels.offsets, reference.levels.offsets)
    assert native.levels.values.tolist() == [
        level for levels in collection.ranked_levels("fair") for level in levels]


def test_rank_picks_the_evaluated_topics_and_reports_the_others():
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 3}}
    run = {"q3": {"c": 1.0}, "q1": {"a": 1.0}, "q9": {"z": 1.0}}
    with pytest.warns(TopicsWarning):
        ranking = rank(qrels, run)
    assert ranking.topics == ("q1", "q3")
    assert ranking.levels.values.tolist() == [1, 3]
    assert ranking.judged_gains().values.tolist() == [1, 3]
    assert (ranking.run_only_topics, ranking.missing_topics) == (("q9",), ("q2",))
    complete = rank(qrels, run, topics="qrels", warn=False)
    assert complete.topics == ("q1", "q2", "q3")
    assert [complete.levels[t].tolist() for t in range(3)] == [[1], [], [3]]
    assert [complete.qrels_levels[t].tolist() for t in range(3)] == [[1], [2], [3]]


def test_rank_validates_its_policies():
    with pytest.raises(InputError, match="ties"):
        rank({"q": {"a": 1}}, {"q": {"a": 1.0}}, ties="alphabetical")
    with pytest.raises(InputError, match="depth"):
        rank({"q": {"a": 1}}, {"q": {"a": 1.0}}, depth=-1)


def test_a_deep_curve_needs_memory_for_its_lists_not_its_depth():
    """-M 2000000 on short topics took 2.5 GB: the per-topic vectors are built only to
    the longest list, the curves continued with their last value, bit for bit what the
    full vectors give."""
    import tracemalloc
    rng = np.random.default_rng(5)
    qrels = {f"q{t}": {f"d{i}": int(rng.integers(0, 4)) for i in range(30)} for t in range(50)}
    runs = {name: {f"q{t}": {f"d{i}": float(rng.random()) for i in range(40)} for t in range(50)}
            for name in ("a", "b")}
    for measure in curves.MEASURES:
        for order in ("normalise_then_average", "average_then_normalise"):
            short = curves.compute(qrels, runs, measure, depth=300, order=order)
            full = curves.compute(qrels, runs, measure, depth=300, order=order, per_topic=True)
            for name in runs:
                assert np.array_equal(short.runs[name], full.runs[name])
            assert np.array_equal(short.ideal, full.ideal)
    tracemalloc.start()
    try:
        deep = curves.compute(qrels, runs, "nDCG", depth=2_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 150e6, peak          # (three curves of 16 MB and their copies)
    assert deep.runs["a"][-1] == deep.runs["a"][39] and len(deep.runs["a"]) == 2_000_000


def test_one_default_discount_curves_and_evaluate_agree():
    """nDCG at rank k of a curve is the nDCG@k that evaluate reports, with no discount
    given to either (trec_eval's rule in both)."""
    qrels = {"q1": {"a": 3, "b": 1, "c": 2}, "q2": {"x": 2, "y": 1}}
    run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5, "d": 0.4}, "q2": {"x": 0.1, "y": 0.7, "z": 0.3}}
    curve = curves.compute(qrels, {"r": run}, "nDCG", depth=3).runs["r"]
    means = cumgain.evaluate(qrels, run, ["nDCG@2", "nDCG@3"]).means
    assert curve[1] == pytest.approx(means["nDCG@2"], abs=1e-15)
    assert curve[2] == pytest.approx(means["nDCG@3"], abs=1e-15)
    paper = curves.compute(qrels, {"r": run}, "nDCG", depth=3, discount="tois").runs["r"]
    assert paper[2] != pytest.approx(curve[2])          # b = 2: rank 3 is discounted less
