"""The measure registry and parser (cumgain.measures): every trec_eval measure declared,
every spelling read back, parameters a family does not take refused, the regressions
of the wrong numbers found in earlier versions, and properties that the definitions
give (11pt_avg, set_F, infAP)."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import cumgain
from cumgain import InputError, evaluate
from cumgain.measures import FAMILIES, NICKNAMES, TREC_ORDER, parse_measure



# ---------------------------------------------------------------- the registry

def test_every_trec_eval_measure_is_declared_once_with_its_nicknames():
    """trec_eval 10.0 registers 57 measures (measures.c); each is a family here, with
    a trec_eval spelling, and every nickname's members exist."""
    assert len(TREC_ORDER) == len(set(TREC_ORDER)) == 57
    missing = [name for name in TREC_ORDER if name not in FAMILIES]
    assert not missing
    assert all(FAMILIES[name].trec is not None for name in TREC_ORDER)
    for nickname, members in NICKNAMES.items():
        assert set(members) <= set(TREC_ORDER), nickname


@pytest.mark.parametrize("name", TREC_ORDER)
def test_printed_names_read_back_to_the_same_measure(name):
    """The name trec_eval prints for each default measure parses to that measure again
    (the pytrec_eval drop-in and users feed output names back)."""
    for measure in parse_measure(name):
        again = parse_measure(measure.name)
        assert len(again) == 1
        assert (again[0].family, again[0].cutoff, again[0].params, again[0].gains) == \
            (measure.family, measure.cutoff, measure.params, measure.gains)


# ---------------------------------------------------------------- parameters

@pytest.mark.parametrize("spelling, fragment", [
    ("nDCG(rel=2)@10", "nDCG does not take 'rel'"),
    ("P(gains={0:0,1:1})@5", "P does not take 'gains'"),
    ("Bpref(judged_only=True)", "Bpref does not take 'judged_only'"),
    ("map.5", "map takes no parameters"),
    ("RR(rel=1,rel=2)", "rel given twice"),
    ("P@0", "the cut-off must be a whole number >= 1"),
    ("P", None),                                       # trec_eval's P: nine cut-offs
    ("P(rel=2)", "P needs a cut-off"),
    ("IPrec@1.5", "needs a recall level in [0, 1]"),
    ("Bpref@10", "Bpref takes no cut-off"),
    ("utility.1,2,3", "utility takes 4 coefficients"),
    ("set_F.-1", "set_F takes beta >= 0"),
    ("rbp.p=1.5", "p must be in [0, 1]"),
    ("rbp.q=0.5", "rbp takes p and level=gain pairs, not 'q'"),
    ("rbp_resid.1=2", "rbp_resid takes no gain table"),
    ("iprec_at_recall.0.5,0.5", "duplicate cut-offs"),
    ("relstring.x", "'x' is not a number"),
])
def test_parameters_a_family_does_not_take_are_errors(spelling, fragment):
    if fragment is None:
        assert len(parse_measure(spelling)) == 9
        return
    with pytest.raises(InputError, match=re.escape(fragment)):
        parse_measure(spelling)


def test_spellings_of_the_same_measure():
    def key(spelling):
        (measure,) = parse_measure(spelling)
        return measure.family, measure.cutoff, measure.relevance_level, measure.params
    assert key("AP@10") == key("MAP@10") == key("map_cut_10")[:1] + (10, None, ())
    assert key("RR") == ("recip_rank", None, None, ())
    assert key("MRR@10") == ("recip_rank", 10, None, ())
    assert key("NumRet(rel=2)") == ("num_rel_ret", None, 2.0, ())
    assert key("NumRelRet") == ("num_rel_ret", None, None, ())
    assert key("SetP(relative=True)") == key("SetRelP")[:1] + (None, None, ())
    assert key("SetF(beta=0.5)") == ("set_F", None, None, (("beta", 0.5),))
    assert key("IPrec@0.5") == ("iprec_at_recall", None, None, (("at", 0.5),))
    assert parse_measure("iprec_at_recall_0.10")[0].name == "iprec_at_recall_0.10"
    assert [m.name for m in parse_measure("ndcg_cut_20,4")] == ["ndcg_cut_4", "ndcg_cut_20"]
    assert parse_measure("utility_2,-1,0,0")[0].param("values") == (2.0, -1.0, 0.0, 0.0)
    assert parse_measure("ndcg_1=3,2=9")[0].gains == ((1.0, 3.0), (2.0, 9.0))
    assert parse_measure("rbp.p=0.8,1=2")[0].params == (("p", 0.8),)


def test_parsed_spellings_are_remembered_but_never_shared_or_stale():
    """parse_measure remembers each spelling's measures (an evaluation in a loop parses
    once): the list it returns is the caller's own, and a family registered after a
    spelling was looked up is found."""
    from dataclasses import replace

    from cumgain.measures import parse
    from cumgain.measures.base import register
    first = parse_measure("P")
    first.clear()
    assert len(parse_measure("P")) == 9
    with pytest.raises(InputError, match="unknown measure"):
        parse_measure("FuzzProbe")      # remembered as naming nothing
    register(replace(FAMILIES["num_ret"], name="fuzz_probe", trec=None, trec_defaults=(),
                     ir_names=("FuzzProbe",), trec_twin=None, redirect=None))
    try:
        assert parse_measure("FuzzProbe")[0].family == "fuzz_probe"
    finally:
        del FAMILIES["fuzz_probe"]
        parse._parse_compact.cache_clear()


@pytest.mark.parametrize("spelling, suggestions", [
    ("Ndcg@10", ["nDCG@10", "ndcg_cut.10"]),      # (ndcg@10 is ranx's spelling)
    ("Mrr@10", ["RR@10", "MRR@10"]),
    ("BPREF", ["Bpref", "bpref"]),
    ("Map@100", ["AP@100", "map_cut.100"]),
    ("ndcg_cutt.10", ["ndcg_cut.10"]),
])
def test_did_you_mean_lists_each_spelling_once(spelling, suggestions):
    with pytest.raises(InputError) as error:
        parse_measure(spelling)
    listed = str(error.value).split("did you mean ")[1].rstrip("?").split(", ")
    assert listed[:len(suggestions)] == suggestions
    assert len(listed) == len(set(listed))


@pytest.mark.parametrize("spelling", ["nDCG@1O", "ndcg_cut.1O", "nDGC@10", "Map@1x",
                                      "nDCG@10 AP", "P(rel=2)@5x", "Ndcg@10"])
def test_every_suggestion_is_a_measure(spelling):
    """"did you mean" never offers a name that does not parse itself (it offered
    ndcg_cut.1O for nDCG@1O and ndcg_cut.10AP for "nDCG@10 AP")."""
    with pytest.raises(InputError) as error:
        parse_measure(spelling)
    text = str(error.value)
    for suggestion in text.split("did you mean ")[1].rstrip("?").split(", ") \
            if "did you mean" in text else ():
        assert parse_measure(suggestion)


@pytest.mark.parametrize("spelling, listed", [
    ("nDCG@10 AP", "nDCG@10, AP"), ("nDCG@10,AP", "nDCG@10, AP"),
    ("map P.5 recip_rank", "map, P.5, recip_rank"),
])
def test_several_measures_in_one_string_are_named_as_such(spelling, listed):
    with pytest.raises(InputError, match=rf"names several measures \({re.escape(listed)}\); "
                                          r"give each one separately"):
        parse_measure(spelling)


def test_a_cut_off_that_is_not_a_number_says_so():
    with pytest.raises(InputError, match=r"the cut-off '1O' of nDCG is not a number"):
        parse_measure("nDCG@1O")
    with pytest.raises(InputError, match=r"cut-off '1O' is not a whole number"):
        parse_measure("ndcg_cut.1O")


@pytest.mark.parametrize("spelling, parameter", [
    ("Q(beta=0x10)", "beta"), ("Q(beta=1_0)", "beta"), ("SetF(beta=5x)", "beta"),
    ("RBP(p=0x1)", "p"), ("P(rel=1_0)@5", "rel"), ("nDCG(gains={1:0x3})@10", "gains"),
    ("set_F.0x10", "0x10"), ("set_F.1_0", "1_0"), ("set_F.5x", "5x"),
    ("iprec_at_recall.0.5x", "0.5x"), ("utility.2,1,0,0x1", "0x1"),
    ("ndcg.1=3,2=0x9", "2=0x9"), ("Rprec_mult.1_0", "1_0"),
])
def test_a_parameter_is_a_decimal_number_in_every_spelling(spelling, parameter):
    """One rule for every number of every parameter: decimal digits, an optional
    fraction and exponent. ``0x10`` was beta 16 in one spelling and 0 in another;
    ``1_0`` 10 in one and 1 in the other; ``5x`` accepted where ``P.5x`` is refused."""
    with pytest.raises(InputError) as error:
        parse_measure(spelling)
    assert parameter in str(error.value)


@pytest.mark.parametrize("spelling, value", [
    ("Q(beta=10)", 10.0), ("Q(beta=.5)", 0.5), ("Q(beta=5e-1)", 0.5), ("set_F.0.5", 0.5),
    ("set_F.5e-1", 0.5), ("set_F.+2", 2.0),
])
def test_decimal_parameters_read_the_same_in_every_spelling(spelling, value):
    measure, = parse_measure(spelling)
    assert dict(measure.params).get("beta", dict(measure.params).get("values", (None,))[0]) \
        == value


def test_a_gain_scheme_of_thousands_of_levels_is_read_without_recursion():
    """ast.literal_eval read ``gains=0-1-...-2999`` as a chain of subtractions and raised
    a raw RecursionError; it is a scheme like any other now."""
    levels = "-".join(map(str, range(3000)))
    qrels, run = {"q": {"a": 2999, "b": 1}}, {"q": {"a": 0.5, "b": 0.9}}
    got = evaluate(qrels, run, [f"nDCG(gains={levels})@10"]).values
    expected = evaluate(qrels, run, ["nDCG@10"]).values         # (identity gains)
    assert got[f"nDCG(gains={levels})@10"].tolist() == expected["nDCG@10"].tolist()
    deep = "{" * 5000 + "}" * 5000
    with pytest.raises(InputError):
        parse_measure(f"nDCG(gains={deep})@10")


# ---------------------------------------------------------------- regressions

def _ranking(relevant_at: int, n: int = 10) -> tuple:
    qrels = {"q": {f"d{relevant_at}": 1, "x": 0}}
    run = {"q": {f"d{i}": float(n - i) for i in range(1, n + 1)}}
    return qrels, run


def test_rr_at_k_honours_its_cut_off():
    """A relevant document first at rank 5: RR@3 = 0 (it was 0.2: the cut-off was
    ignored), RR@10 = RR = 0.2 (MS MARCO's MRR@10)."""
    qrels, run = _ranking(5)
    result = evaluate(qrels, run, ["RR@3", "RR@5", "RR@10", "RR", "recip_rank", "MRR@4"])
    assert result.values["RR@3"].tolist() == [0.0]
    assert result.values["MRR@4"].tolist() == [0.0]
    assert result.values["RR@5"].tolist() == result.values["RR@10"].tolist() == [0.2]
    assert result.values["RR"].tolist() == result.values["recip_rank"].tolist() == [0.2]


def test_numret_with_rel_counts_the_relevant_retrieved():
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "z": 0.5}}
    result = evaluate(qrels, run, ["NumRet", "NumRet(rel=1)", "NumRet(rel=2)", "NumRelRet",
                                   "num_rel_ret"])
    values = {name: column.tolist() for name, column in result.values.items()}
    assert values == {"NumRet": [4.0], "NumRet(rel=1)": [2.0], "NumRet(rel=2)": [1.0],
                      "NumRelRet": [2.0], "num_rel_ret": [2.0]}


def test_a_mean_over_no_topic_is_nan_and_a_sum_zero():
    result = evaluate({"a": {"d": 1}}, {"b": {"d": 1.0}}, ["map", "num_ret", "gm_map",
                                                           "runid", "relstring"], warn=False)
    assert result.topics == ()
    assert math.isnan(result.means["map"]) and math.isnan(result.means["gm_map"])
    assert result.means["num_ret"] == 0.0
    assert result.means["runid"] == "" and result.means["relstring"] is None


def test_text_measures():
    qrels = {"q": {"a": 12, "b": 0, "c": -1, "d": 3}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "z": 2.0, "d": 1.0}}
    result = evaluate(qrels, run, ["relstring", "relstring.3", "runid"])
    assert result.values["relstring"].tolist() == [">0.-3"]
    assert result.values["relstring_3"].tolist() == [">0."]
    assert result.values["runid"].tolist() == [""] and result.means["runid"] == ""


def test_ties_average_refuses_what_depends_on_the_order_within_ties():
    qrels, run = _ranking(2)
    evaluate(qrels, run, ["P_5", "ndcg_cut_5", "set_P", "relative_P_5"], ties="average")
    for name in ("bpref", "infAP", "iprec_at_recall", "Rprec_mult", "binG", "G", "yaap", "rbp"):
        with pytest.raises(InputError, match="not defined under ties='average'"):
            evaluate(qrels, run, [name], ties="average")


# ---------------------------------------------------------------- definitions by hand

def test_bpref_infap_and_friends_by_hand():
    """Ranking: r1 (relevant), n1 (judged non-relevant), u (pooled, unjudged: -1),
    x (not pooled), r2 (relevant); one more relevant r3 and one non-relevant n2 unretrieved.
    R = 3, judged non-relevant N = 2."""
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1, "n1": 0, "n2": 0, "u": -1}}
    run = {"q": {"r1": 5.0, "n1": 4.0, "u": 3.0, "x": 2.0, "r2": 1.0}}
    result = evaluate(qrels, run, ["bpref", "infAP", "num_nonrel_judged_ret", "unj.2,5",
                                   "binG", "yaap", "set_F", "set_relative_P", "set_map"])
    value = {name: column[0] for name, column in result.values.items()}
    # bpref: r1 has no non-relevant above (1), r2 has one: 1 - min(1, 3) / min(2, 3)
    assert value["bpref"] == (1.0 + (1.0 - 1 / 2)) / 3
    # infAP: r1 at rank 0 counts 1; r2 at rank 4 (j = 4): r = 2, n = 1, u = 1
    e = 0.00001
    term = 1 / 5 + (4 / 5) * ((2 - 1 + 1 + 1) / 4) * ((2 - 1 + e) / (2 - 1 + 1 + 2 * e))
    assert value["infAP"] == (1.0 + term) / 3
    assert value["num_nonrel_judged_ret"] == 1.0
    assert value["unj_2"] == 0.0 and value["unj_5"] == 2 / 5
    assert value["binG"] == (1 / math.log2(3 + 0 - 1) + 1 / math.log2(3 + 4 - 2)) / 3
    s = 1 / 1 + 2 / 5
    assert value["yaap"] == math.log((1 + s) / (1 + 3 - s))
    p, r = 2 / 5, 2 / 3
    assert value["set_F"] == 2 * p * r / (p + r)
    assert value["set_relative_P"] == 2 / 3 and value["set_map"] == 4 / 15


def test_rbp_and_its_residual_by_hand():
    """Graded gains 0..4 are scaled to [0, 1] by the table's range (0, 4)."""
    qrels = {"q": {"a": 4, "b": 0, "c": 2, "u": -1}}
    run = {"q": {"a": 4.0, "z": 3.0, "c": 2.0, "u": 1.0}}
    p = 0.8
    result = evaluate(qrels, run, ["rbp.p=0.8", "rbp_resid.p=0.8", "rbp", "G"])
    value = {name: column[0] for name, column in result.values.items()}
    assert value["rbp_p=0.8"] == (1 - p) * (1.0 * 1 + 0.5 * (p * p))
    assert value["rbp_resid_p=0.8"] == p * p * p * p + (1 - p) * (p + p * p * p)
    assert value["rbp"] == (1 - 0.9) * (1.0 + 0.5 * (0.9 * 0.9))
    # G: ideal 4, 2; cost C = 4, 6, 7, 8 (ideal gains, then 1 per rank); gain so far 4, 4, 6
    assert value["G"] == (4 / math.log2(2 + 4 - 4) + 2 / math.log2(2 + 7 - 6)) / (4 + 2)


def test_utility_uses_the_collection_size():
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"a": 2.0, "c": 1.0}}
    result = evaluate(qrels, run, ["utility", "utility.2,-1,-3,0.5"], collection_size=100)
    assert result.values["utility"].tolist() == [1 * 1 - 1 * 1 + 0 + 0]
    assert result.values["utility_2,-1,-3,0.5"].tolist() == \
        [2 - 1 - 3 * 1 + 0.5 * (100 + 1 - 2 - 2)]


def test_recall_cutoffs_of_trec_eval_10_and_9():
    """R = 2: x = 0.6 is lround(1.2) = 1 relevant document in trec_eval 10.0, and
    (long)(1.2 + 0.9) = 2 in 9.0.8 and pytrec_eval."""
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": {"a": 3.0, "z": 2.0, "b": 1.0}}
    nearest = evaluate(qrels, run, ["iprec_at_recall.0.6"]).values["iprec_at_recall_0.60"]
    nine = evaluate(qrels, run, ["iprec_at_recall.0.6"], recall_cutoffs="trec_eval9")
    assert nearest.tolist() == [1.0] and nine.values["iprec_at_recall_0.60"].tolist() == [2 / 3]


# ---------------------------------------------------------------- properties

_topic = st.tuples(
    st.dictionaries(st.sampled_from("abcdefghij"), st.sampled_from([-1, 0, 0, 1, 2, 3]),
                    min_size=1, max_size=10),
    st.dictionaries(st.sampled_from("abcdefghijklmnop"), st.sampled_from([0.0, 0.5, 1.0, 2.0]),
                    max_size=14))


@given(st.lists(_topic, min_size=1, max_size=4), st.sampled_from(["nearest", "trec_eval9"]))
def test_11pt_avg_is_the_sum_of_its_recall_points_over_11(topics, rounding):
    qrels = {str(t): judged for t, (judged, _) in enumerate(topics)}
    run = {str(t): ranked for t, (_, ranked) in enumerate(topics)}
    result = evaluate(qrels, run, ["11pt_avg", "iprec_at_recall"], recall_cutoffs=rounding,
                      warn=False)
    points = [result.values[f"iprec_at_recall_{x / 10:3.2f}"] for x in range(11)]
    total = np.zeros(len(result.topics))
    for column in reversed(points):         # trec_eval adds them from the last point down
        total = total + column
    np.testing.assert_array_equal(result.values["11pt_avg"], total / 11)


@given(st.lists(_topic, min_size=1, max_size=4))
def test_set_f_is_the_harmonic_mean_of_set_precision_and_recall(topics):
    qrels = {str(t): judged for t, (judged, _) in enumerate(topics)}
    run = {str(t): ranked for t, (_, ranked) in enumerate(topics)}
    result = evaluate(qrels, run, ["set_F", "set_P", "set_recall"], warn=False)
    p, r = result.values["set_P"], result.values["set_recall"]
    with np.errstate(invalid="ignore", divide="ignore"):
        harmonic = np.where(p * r > 0, 2 * p * r / (p + r), 0.0)
    np.testing.assert_array_equal(result.values["set_F"], harmonic)


@given(st.lists(_topic, min_size=1, max_size=4))
def test_infap_is_ap_when_every_ranked_document_is_judged(topics):
    """With every ranked document judged (no unjudged, no unpooled one), infAP's
    estimate differs from AP only by its epsilon terms: |infAP - AP| <= 2e-5."""
    qrels, run = {}, {}
    for t, (judged, ranked) in enumerate(topics):
        qrels[str(t)] = {doc: max(level, 0) for doc, level in judged.items()}
        run[str(t)] = {doc: score for doc, score in ranked.items() if doc in judged}
    result = evaluate(qrels, run, ["infAP", "map", "bpref"], warn=False)
    assert np.all(np.abs(result.values["infAP"] - result.values["map"]) <= 2e-5)
    assert np.all((result.values["bpref"] >= 0) & (result.values["bpref"] <= 1))


@given(st.lists(_topic, min_size=1, max_size=4))
def test_bpref_is_one_when_every_relevant_document_comes_first(topics):
    qrels, run = {}, {}
    for t, (judged, _) in enumerate(topics):
        qrels[str(t)] = judged
        ordered = sorted(judged, key=lambda doc: (judged[doc] < 1, doc))
        run[str(t)] = {doc: float(len(ordered) - i) for i, doc in enumerate(ordered)}
    result = evaluate(qrels, run, ["bpref", "num_rel"], warn=False)
    expected = np.where(result.values["num_rel"] > 0, 1.0, 0.0)
    np.testing.assert_array_equal(result.values["bpref"], expected)


def test_judgment_groups_of_one_group_equal_the_base_measures(tmp_path):
    path = tmp_path / "qrels_jg"
    path.write_text("1 g d1 1\n1 g d2 0\n2 g d3 1\n2 g d4 1\n")
    run = {"1": {"d1": 1.0, "d2": 2.0, "x": 3.0}, "2": {"d4": 1.0, "y": 2.0}}
    groups = cumgain.engine.judgment_groups.load_judgment_groups(path)
    jg = evaluate(groups, run, ["map_avgjg", "P_avgjg.2", "Rprec_mult_avgjg.1"])
    plain = evaluate({"1": {"d1": 1, "d2": 0}, "2": {"d3": 1, "d4": 1}}, run,
                     ["map", "P.2", "Rprec_mult.1"])
    assert jg.values["map_avgjg"].tolist() == plain.values["map"].tolist()
    assert jg.values["P_avgjg_2"].tolist() == plain.values["P_2"].tolist()
    assert jg.values["Rprec_mult_avgjg_1.00"].tolist() == \
        plain.values["Rprec_mult_1.00"].tolist()


def test_judgment_groups_are_averaged_in_their_byte_order(tmp_path):
    path = tmp_path / "qrels_jg"
    path.write_text("1 b d1 1\n1 a d2 1\n1 a d1 0\n1 c d3 1\n")
    run = {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    groups = cumgain.engine.judgment_groups.load_judgment_groups(path)
    assert groups.groups == ("a", "b", "c")
    result = evaluate(groups, run, ["map_avgjg", "num_q"])
    assert result.values["map_avgjg"].tolist() == [((0 + 1 / 2) + 1.0 + 1 / 3) / 3]
    assert result.means["num_q"] == 1.0


def test_judgment_group_files_with_a_docno_twice_in_a_group_are_errors(tmp_path):
    path = tmp_path / "qrels_jg"
    path.write_text("1 a d1 1\n1 b d1 0\n1 a d1 0\n")
    with pytest.raises(InputError, match="qrels_jg:3: duplicate docno 'd1'"):
        cumgain.engine.judgment_groups.load_judgment_groups(path)


def test_zscores(tmp_path):
    from cumgain.analysis.zscores import MISSING_ZSCORE, read_zscores, to_zscores
    path = tmp_path / "z"
    path.write_text("1 map 0.5 0.25\n1 num_ret 2 0\n2 map 0.1 0\n# a comment\n")
    table = read_zscores(path)
    result = evaluate({"1": {"a": 1, "b": 1}, "2": {"c": 1}, "3": {"d": 1}},
                      {"1": {"a": 2.0, "x": 1.0}, "2": {"c": 1.0}, "3": {"d": 1.0}},
                      ["map", "num_ret", "num_q"])
    z = to_zscores(result, table)
    assert z.values["map"].tolist() == [(0.5 - 0.5) / 0.25, MISSING_ZSCORE, MISSING_ZSCORE]
    assert z.values["num_ret"].tolist() == [0.0, MISSING_ZSCORE, MISSING_ZSCORE]
    assert z.means["num_q"] == 3.0
    path.write_text("1 map 0.5\n")
    with pytest.raises(InputError, match=":1: expected 4 fields"):
        read_zscores(path)


def test_relevance_level_below_zero_is_refused():
    """Below 0 trec_eval counts every document without a judgment as relevant (its code
    for one is -1) while num_rel counts only levels >= 0: refused, not reproduced."""
    with pytest.raises(InputError, match="relevance_level must be >= 0"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map"], relevance_level=-1)
    with pytest.raises(InputError, match="rel must be a number >= 0"):
        parse_measure("P(rel=-1)@5")
    assert evaluate({"q": {"a": 0, "b": -1}}, {"q": {"a": 1.0, "x": 2.0}}, ["map"],
                    relevance_level=0).values["map"].tolist() == [1 / 2]


# ---------------------------------------------------------------- numbers in measure names
# (docs/measures.md and docs/reliability.md, "Bad input": a cut-off is a whole number up to 2**53 - 1, read
# as trec_eval's atol reads it where that is what is written, and an error where atol
# would silently read something else)

@pytest.mark.parametrize("spelling, fragment", [
    ("ndcg_cut.10000000000000000000", "cut-off '10000000000000000000' is beyond the largest"),
    ("recall.99999999999999999999999", "is beyond the largest, 2**53 - 1 = 9007199254740991"),
    ("P." + "9" * 5000, "measure 'P.9999999999'... (5002 characters): cut-off '999999999999'"
                        "... (5000 characters) is beyond the largest"),
    ("P_9007199254740992", "is beyond the largest"),
    ("map_cut.5," + "1" * 30, "is beyond the largest"),
    ("nDCG@10000000000000000000", "is beyond the largest"),
    ("nDCG@" + "9" * 5000, "(5000 characters) is beyond the largest"),
    ("P.1e3", "cut-off '1e3' is written with an exponent, which trec_eval's atol reads as 1; "
              "write the whole number (1000)"),
    ("P.1E3", "written with an exponent"),
    ("ndcg_cut.5,2.5e1", "cut-off '2.5e1' is written with an exponent, which trec_eval's atol "
                         "reads as 2; write the whole number (25)"),
    ("nDCG@1e3", "cut-off '1e3' is written with an exponent"),
    ("P(rel=2)@1e2", "cut-off '1e2' is written with an exponent"),
    ("P.5x", "cut-off '5x' is not a whole number"),
    ("iprec_at_recall.1e7", "cut-offs must be finite numbers from 0 to 1e+06"),
    ("Rprec_mult.2000000", "cut-offs must be finite numbers from 0 to 1e+06"),
    ("11pt_avg.1e7", "11pt_avg takes recall levels from 0 to 1e+06"),
    ("ndcg." + "9" * 5000 + "=3", "(5000 characters) is beyond float64's range"),
    ("ndcg.1" + "0" * 400 + "=3", "is beyond float64's range"),
    ("ndcg.1=1e400", "'1=1e400': the value must be finite"),
    ("G.1=-1e999", "the value must be finite"),
    ("P(rel=1" + "0" * 400 + ")@5", "rel must be a number >= 0"),
    ("nDCG(base=1" + "0" * 400 + ")@5", "base must be a number > 1"),
    ("SetF(beta=1" + "0" * 400 + ")", "beta must be a number >= 0"),
])
def test_numbers_in_measure_names_are_refused_with_a_reason(spelling, fragment):
    """Each of these raised OverflowError (cut-offs beyond C's long, levels beyond
    float64), Python's digit-limit ValueError (5,000 digits), a plain ValueError from a
    kernel (fractional cut-offs over 1e6), or was read silently as something else
    (P.1e3 computed P_1, as trec_eval's atol reads it)."""
    with pytest.raises(InputError, match=re.escape(fragment)):
        parse_measure(spelling)


@pytest.mark.parametrize("spelling, name, cutoff", [
    ("P.23.4", "P_23", 23),                 # trec_eval's atol: the fraction is dropped
    ("P.05", "P_5", 5),
    ("P.+5", "P_5", 5),
    ("P.0000000000000000000000000005", "P_5", 5),
    ("P.9007199254740991", "P_9007199254740991", 2 ** 53 - 1),
    ("nDCG@9007199254740991", "nDCG@9007199254740991", 2 ** 53 - 1),
])
def test_whole_cut_offs_read_as_trec_eval_reads_them(spelling, name, cutoff):
    (measure,) = parse_measure(spelling)
    assert (measure.name, measure.cutoff) == (name, cutoff)


def test_fractional_cut_offs_keep_atofs_exponents():
    """atof reads exponents, so trec_eval and cumgain agree on them."""
    assert parse_measure("iprec_at_recall.1e-1")[0].name == "iprec_at_recall_0.10"


def test_a_cut_off_beyond_every_list_costs_no_memory_and_equals_the_full_depth():
    """ndcg_cut.k, nDCG@k, CG@k and nCG@k built arrays of k divisors (10**8: 800 MB); the
    value at k beyond every list is the value at the full depth, bit for bit."""
    import tracemalloc
    qrels = {"q1": {"a": 2, "b": 0, "c": 1, "d": 3}, "q2": {"a": 1}}
    run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.1}, "q2": {"a": 0.5, "z": 0.2}}
    huge = ["ndcg_cut_100000000", "nDCG@100000000", "CG@100000000", "nCG@100000000",
            "DCG(discount=tois,base=10)@100000000", "P_100000000", "map_cut_100000000"]
    full = ["ndcg", "nDCG@4", "CG@4", "nCG@4", "DCG(discount=tois,base=10)@4", "map"]
    expected = evaluate(qrels, run, full, warn=False)
    tracemalloc.start()
    try:
        result = evaluate(qrels, run, huge, warn=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    for at_huge, at_full in zip(huge[:5] + huge[6:], full):
        np.testing.assert_array_equal(result.values[at_huge], expected.values[at_full])
    np.testing.assert_array_equal(result.values["P_100000000"], [2 / 10 ** 8, 1 / 10 ** 8])
