"""The evaluator's policies and measures on small hand-made inputs.

Expected values are written as formulas. Large-scale exactness against trec_eval
and pytrec_eval lives in test_trec_eval_golden.py and test_compat_pytrec_eval.py.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import cumgain
from cumgain import InputError
from cgcore._convert import topic_dicts
from cumgain.engine.evaluator import TopicsWarning, _byte_order, evaluate

log2 = math.log2
QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": 3}, "q2": {"x": 1, "y": -1}}
RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.8, "z": 0.5}, "q2": {"y": 2.0, "w": 1.0, "x": 0.5}}


def ev(measures, qrels=QRELS, run=RUN, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        return evaluate(qrels, run, measures, **options)


def test_binary_measures_by_formula():
    result = ev(["P_2", "P_5", "recall_2", "map", "recip_rank", "Rprec", "success_1",
                 "num_ret", "num_rel", "num_rel_ret", "num_q"]).per_topic()
    # q1 ranking: a(0.9, rel 2), then b and c tie at 0.8 -> docno descending: c(1), b(0), z
    q1 = result["q1"]
    assert q1["P_2"] == 2 / 2 and q1["P_5"] == 2 / 5
    assert q1["recall_2"] == 2 / 3            # R = 3 (a, c, d)
    assert q1["map"] == (1 / 1 + 2 / 2) / 3
    assert q1["recip_rank"] == 1.0 and q1["success_1"] == 1.0
    assert q1["Rprec"] == 2 / 3
    assert (q1["num_ret"], q1["num_rel"], q1["num_rel_ret"], q1["num_q"]) == (4, 3, 2, 1)
    # q2: y (judged -1: not relevant), w (unjudged), x (relevant) -> rank 3
    assert result["q2"]["recip_rank"] == 1 / 3
    assert result["q2"]["map"] == (1 / 3) / 1


def test_trec_ndcg_by_formula():
    result = ev(["ndcg", "ndcg_cut_2", "dcg", "ideal_dcg"]).per_topic()["q1"]
    dcg = 2 / log2(2) + 1 / log2(3)
    ideal = 3 / log2(2) + 2 / log2(3) + 1 / log2(4)
    assert result["dcg"] == dcg and result["ideal_dcg"] == ideal
    assert result["ndcg"] == dcg / ideal
    assert result["ndcg_cut_2"] == (2 + 1 / log2(3)) / (3 + 2 / log2(3))


def test_relevance_level_changes_binary_measures_not_gains():
    plain, strict = ev(["P_2", "ndcg"]), ev(["P_2", "ndcg"], relevance_level=2)
    assert plain.per_topic()["q1"]["P_2"] == 1.0
    assert strict.per_topic()["q1"]["P_2"] == 0.5
    assert plain.values["ndcg"].tolist() == strict.values["ndcg"].tolist()


@pytest.mark.parametrize("ties, first_three", [
    ("docno_desc", ["a", "c", "b"]),
    ("docno_asc", ["a", "b", "c"]),
    ("input_order", ["a", "b", "c"]),
])
def test_tie_rules(ties, first_three):
    gains = {"a": 2, "b": 0, "c": 1}
    result = ev(["CG@2"], ties=ties).per_topic()["q1"]
    assert result["CG@2"] == gains[first_three[0]] + gains[first_three[1]]


def test_docno_order_is_bytes_not_numbers():
    qrels = {"q": {"d10": 1}}
    run = {"q": {"d2": 1.0, "d10": 1.0}}   # "d2" > "d10" as bytes: d2 ranks first
    assert ev(["recip_rank"], qrels, run).means["recip_rank"] == 0.5


def test_random_ties_are_seeded():
    run = {"q1": {doc: 1.0 for doc in "abcdefgh"}}
    qrels = {"q1": {"a": 1}}
    first = ev(["recip_rank"], qrels, run, ties="random", seed=7).means["recip_rank"]
    assert ev(["recip_rank"], qrels, run, ties="random", seed=7).means["recip_rank"] == first
    values = {ev(["recip_rank"], qrels, run, ties="random", seed=s).means["recip_rank"]
              for s in range(20)}
    assert len(values) > 1


def test_average_ties_give_the_expected_gain():
    # b (0) and c (1) tie at ranks 2-3: each position gets gain 0.5
    result = ev(["DCG@3", "P_3", "P_2"], ties="average").per_topic()["q1"]
    assert result["DCG@3"] == 2 / log2(2) + 0.5 / log2(3) + 0.5 / log2(4)
    assert result["P_2"] == (1 + 0.5) / 2
    with pytest.raises(InputError, match="ties='average'"):
        ev(["map"], ties="average")


def test_average_ties_match_sklearn():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 4, size=(1, 30))
    scores = rng.integers(0, 5, size=(1, 30)).astype(float)
    qrels = {"q": {f"d{i}": int(labels[0, i]) for i in range(30)}}
    run = {"q": {f"d{i}": float(scores[0, i]) for i in range(30)}}
    ours = ev(["DCG@10"], qrels, run, ties="average").means["DCG@10"]
    assert ours == pytest.approx(sklearn_metrics.dcg_score(labels, scores, k=10), rel=1e-12)


def test_float32_precision_makes_near_equal_scores_tie():
    qrels = {"q": {"d1": 1}}
    run = {"q": {"d1": 1.000000002, "d2": 1.000000001}}
    assert ev(["recip_rank"], qrels, run).means["recip_rank"] == 1.0
    assert ev(["recip_rank"], qrels, run, score_precision="float32").means["recip_rank"] == 0.5


def test_depth_cut_after_ranking():
    result = ev(["num_ret", "P_5", "recip_rank"], depth=2).per_topic()
    assert result["q1"]["num_ret"] == 2
    assert result["q2"]["recip_rank"] == 0.0     # x was at rank 3


def test_judged_only_closes_the_gaps():
    result = ev(["num_ret", "recip_rank"], judged_only=True).per_topic()
    assert result["q1"]["num_ret"] == 3              # z dropped
    assert result["q2"]["recip_rank"] == 1.0         # y (-1) and w (unjudged) dropped
    per_measure = ev(["RR", "RR(judged_only=True)"]).per_topic()["q2"]
    assert per_measure == {"RR": 1 / 3, "RR(judged_only=True)": 1.0}


def test_topic_policies_and_reports():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {}}
    run = {"q1": {"a": 1.0}, "q9": {"c": 1.0}}
    with pytest.warns(TopicsWarning, match="1 run topics have no judgments"):
        both = evaluate(qrels, run, ["P_1", "num_rel"])
    assert both.topics == ("q1",) and both.means["P_1"] == 1.0
    assert both.run_only_topics == ("q9",)
    assert both.missing_topics == ("q2",)
    assert both.empty_qrels_topics == ("q3",)
    every = ev(["P_1", "num_rel", "gm_map"], qrels, run, topics="qrels")
    assert every.topics == ("q1", "q2")
    assert every.means["P_1"] == 0.5 and every.means["num_rel"] == 2
    assert every.means["gm_map"] == pytest.approx(math.exp((0 + math.log(1e-5)) / 2))
    with pytest.raises(InputError, match="topics differ"):
        evaluate(qrels, run, ["P_1"], topics="strict")


def test_topic_order_is_byte_order():
    qrels = {t: {"a": 1} for t in ["10", "2", "1"]}
    run = {t: {"a": 1.0} for t in ["2", "10", "1"]}
    assert ev(["P_1"], qrels, run).topics == ("1", "10", "2")


def test_a_topic_with_only_negative_judgments_scores_zero():
    result = ev(["ndcg", "map", "P_5", "Rndcg", "ndcg_rel"], {"q": {"a": -2}},
                {"q": {"a": 1.0, "b": 0.5}}).per_topic()["q"]
    assert set(result.values()) == {0.0}


def test_gain_table_renames_and_sorts_fractional_gains_correctly():
    qrels = {"q": {"a": 1, "b": 2, "c": 3}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    result = ev(["ndcg.1=0.5,2=0.9,3=0.7"], qrels, run)
    name = "ndcg_1=0.5,2=0.9,3=0.7"
    dcg = 0.5 + 0.9 / log2(3) + 0.7 / 2
    ideal = 0.9 + 0.7 / log2(3) + 0.5 / 2     # correctly sorted (trec_eval mis-sorts these)
    assert result.means[name] == pytest.approx(dcg / ideal, rel=1e-15)


def test_gain_table_unlisted_levels_keep_their_level():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    result = ev(["ndcg.1=3"], qrels, run).means["ndcg_1=3"]
    assert result == pytest.approx((2 + 3 / log2(3)) / (3 + 2 / log2(3)), rel=1e-15)


def test_jk_family_reproduces_the_paper_example():
    levels = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
    recall_base = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]
    qrels = {"t": {f"j{i}": level for i, level in enumerate(recall_base)}}
    # the run retrieves judged documents with the paper's gains, in order
    pools = {level: [f"j{i}" for i, l in enumerate(recall_base) if l == level]
             for level in range(4)}
    ranking = [pools[level].pop() for level in levels]
    run = {"t": {doc: 100.0 - rank for rank, doc in enumerate(ranking)}}
    names = ["CG@7", "DCG@10(discount=tois,base=2)", "nCG@4", "nDCG@10(discount=tois)",
             "avg_pos_nCG@10"]
    result = ev(names, qrels, run).means
    assert result["CG@7"] == 11
    assert round(result["DCG@10(discount=tois,base=2)"], 2) == 9.61
    assert result["nCG@4"] == 8 / 11
    assert result["nDCG@10(discount=tois)"] == pytest.approx(
        cumgain.ndcg(levels, recall_base)[9], rel=1e-15)
    assert result["avg_pos_nCG@10"] == pytest.approx(
        cumgain.avg_pos(cumgain.ncg(levels, recall_base), 10), rel=1e-15)


def test_gain_schemes_in_measure_names():
    result = ev(["nDCG@3(gains=0-1-10-100)", "nDCG(dcg='exp-log2')@3",
                 "nDCG@3(gains=exponential)"]).per_topic()["q1"]
    dcg = 10 / 1 + 1 / log2(3) + 0 / 2     # a (2 -> 10), c (1 -> 1), b (0)
    ideal = 100 + 10 / log2(3) + 1 / 2
    assert result["nDCG@3(gains=0-1-10-100)"] == pytest.approx(dcg / ideal, rel=1e-15)
    assert result["nDCG(dcg='exp-log2')@3"] == result["nDCG@3(gains=exponential)"]


def test_ir_measures_spellings_equal_trec_eval_ones():
    result = ev(["nDCG@3", "ndcg_cut_3", "P@2", "P_2", "AP", "map", "RR", "recip_rank",
                 "R@2", "recall_2", "AP@2", "map_cut_2"]).means
    for ir_name, trec_name in [("nDCG@3", "ndcg_cut_3"), ("P@2", "P_2"), ("AP", "map"),
                               ("RR", "recip_rank"), ("R@2", "recall_2"), ("AP@2", "map_cut_2")]:
        assert result[ir_name] == result[trec_name]


def test_unknown_measure_lists_close_matches():
    with pytest.raises(InputError, match="did you mean.*ndcg_cut"):
        ev(["ndgc_cut_10"])


def test_bad_policies():
    for options, message in [({"ties": "alphabetical"}, "ties"),
                             ({"score_precision": "float8"}, "score_precision"),
                             ({"topics": "some"}, "topics"),
                             ({"depth": -1}, "depth"),
                             ({"relevance_level": "high"}, "relevance_level")]:
        with pytest.raises(InputError, match=message):
            ev(["P_5"], **options)


def test_duplicate_documents_in_a_run_file_are_an_error(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("q Q0 a 1 2.0 t\nq Q0 b 2 1.0 t\nq Q0 a 3 0.5 t\n")
    with pytest.raises(ValueError, match="a"):
        evaluate(qrels, run, ["P_5"])


def test_results_convert_to_a_dataframe():
    pytest.importorskip("pandas")
    frame = ev(["P_2", "map"]).to_dataframe()
    assert list(frame.columns) == ["P_2", "map"]
    assert list(frame.index) == ["q1", "q2"]


def test_per_topic_dicts_hold_every_value_as_a_python_float():
    """per_topic() (built in C, cgcore._convert) is the plain comprehension over the
    per-measure arrays, for no measures, one, and several; other dtypes take the
    comprehension itself."""
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}}
    run = {"q1": {"a": 0.5, "b": 0.9}, "q2": {"c": 0.1, "x": 0.2}, "q3": {"y": 1.0}}
    for names in (["P_1"], ["P_1", "ndcg", "recip_rank", "num_ret"]):
        result = evaluate(qrels, run, names, warn=False)
        expected = {topic: {name: float(result.values[name][t]) for name in names}
                    for t, topic in enumerate(result.topics)}
        got = result.per_topic()
        assert got == expected and list(got) == list(result.topics)
        assert all(type(value) is float for row in got.values() for value in row.values())
    result.values["num_ret"] = result.values["num_ret"].astype(np.int64)
    assert result.per_topic()["q2"]["num_ret"] == 2 and \
        type(result.per_topic()["q2"]["num_ret"]) is int
    assert topic_dicts(("q1", "q2"), (), np.zeros((0, 2))) == {"q1": {}, "q2": {}}
    with pytest.raises(ValueError, match="shape"):
        topic_dicts(("q1",), ("P_1",), np.zeros((1, 2)))


# ---------------------------------------------------------------- topic order

# ids with long shared prefixes, NUL bytes, non-ASCII and empty ids, so that many share
# their first 8 bytes (the key) and must be compared whole
topic_ids = st.lists(st.one_of(st.text(max_size=12),
                               st.builds(lambda p, s: p + s,
                                         st.sampled_from(["", "topic-00", "1234567", "\x00",
                                                          "é", "ab\x00\x00"]),
                                         st.text("0129\x00é\U0001f600", max_size=4))),
                     unique=True, max_size=60)


@given(topic_ids)
def test_topic_byte_order_equals_sorting_the_ids(ids):
    """Topics are put in trec_eval's order (their UTF-8 bytes, which is Python's order
    of str) by their first 8 bytes and then by comparing those that share them."""
    assert _byte_order(ids).tolist() == sorted(range(len(ids)), key=ids.__getitem__)
    assert sorted(ids) == sorted(ids, key=str.encode)


def test_topic_order_in_results_is_byte_order():
    qrels = {t: {"d": 1} for t in ["10", "9", "topic-000001b", "topic-000001a", "é", "z"]}
    for topics in (list(qrels), list(reversed(qrels))):   # the same order as the qrels's, or not
        run = {t: {"d": 1.0} for t in topics}
        assert list(evaluate(qrels, run, ["P_1"]).topics) == sorted(qrels, key=str.encode)


def test_avg_pos_at_a_huge_cut_off_needs_memory_for_the_lists_only():
    """avg_pos_nDCG@100000000 on two documents took 10 s and 3.9 GB: each topic's
    vector is constant past its lists, added as one product; below that cut-off the
    value is the vector API's avg_pos, bit for bit."""
    import tracemalloc
    qrels = {"q": {"d1": 2, "d2": 1, "d3": 3}, "r": {"e": 1}}
    run = {"q": {"d1": 1.0, "d2": 0.5, "x": 0.7}, "r": {"e": 0.1, "f": 0.9}}
    tracemalloc.start()
    try:
        result = cumgain.evaluate(qrels, run, ["avg_pos_nDCG@100000000",
                                               "avg_pos_nCG@100000000"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6, peak
    for family, vectors in (("nCG", cumgain.ncg), ("nDCG", cumgain.ndcg)):
        for t, topic in enumerate(("q", "r")):
            ranking = cumgain.rank(qrels, run)
            gains = ranking.levels[t]
            judged = sorted(qrels[topic].values(), reverse=True)
            vector = vectors(gains, judged, 3) if family == "nCG" else \
                vectors(gains, judged, 3, discount="trec_eval")
            reach = max(len(run[topic]), len(qrels[topic]))
            expected = (sum(vector[:reach].tolist())        # (rank order, then the tail)
                        + (100000000 - reach) * vector[reach - 1]) / 100000000
            assert result.values[f"avg_pos_{family}@100000000"][t] == expected
            small = cumgain.evaluate(qrels, run, [f"avg_pos_{family}@5"]).values
            assert small[f"avg_pos_{family}@5"][t] == cumgain.avg_pos(
                vectors(gains, judged, 5) if family == "nCG"
                else vectors(gains, judged, 5, discount="trec_eval"), 5)
