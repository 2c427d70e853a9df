"""cumgain.evaluate equals the literal port of trec_eval 10.0 (cumgain.reference.trec),
bit for bit, per topic, for every measure over a ranking; and a few values by hand.

The random topics have heavy score ties, levels 0..4 and negative ones (-1, -2: "in the
pool, unjudged"), documents retrieved but not judged and judged but not retrieved, empty
rankings and rankings longer than some cut-offs. The only values not compared as equal
are cumgain's documented differences: iprec_at_recall and 11pt_avg of a topic with no
retrieved document, where trec_eval divides 0 by 0 (NaN) and cumgain gives 0 (asserted
as such). Gains in the gain tables are at least 1 apart, or the measure does not depend
on the table's order (rbp), so trec_eval's truncating comparator does not matter.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import cumgain
from cumgain.reference import trec as ref

DEFAULT_MEASURES = [
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank", "P",
    "recall", "map_cut", "success", "relative_P", "Rprec_mult", "iprec_at_recall",
    "11pt_avg", "utility", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "bpref", "gm_bpref", "infAP", "binG", "G", "yaap", "rbp",
    "rbp_resid", "unj", "relstring", "ndcg", "ndcg_cut", "dcg", "ideal_dcg", "ndcg_rel",
    "Rndcg",
]
PARAMETERISED_MEASURES = [
    "P.3,7", "recall.3,7", "map_cut.3,7", "success.2,3", "relative_P.3,7", "ndcg_cut.3,7",
    "iprec_at_recall.0.25,0.5", "Rprec_mult.0.5,1.5", "11pt_avg.0.2,0.5,0.8",
    "utility.2,-1,0,0", "set_F.0.5", "rbp.p=0.8", "rbp_resid.p=0.5", "unj.3",
    "relstring.20", "ndcg.1=3,2=9", "dcg.1=3,2=9", "ideal_dcg.1=3,2=9", "ndcg_rel.1=3,2=9",
    "Rndcg.1=3,2=9", "G.1=2,2=5", "rbp.1=0.5,2=1", "rbp.p=0.5,1=2,3=1",
]

LONG_CUTOFFS = {"P": ref.p, "recall": ref.recall, "map_cut": ref.map_cut,
                "success": ref.success, "relative_P": ref.relative_p, "unj": ref.unj,
                "ndcg_cut": ref.ndcg_cut}
RECALL_LEVELS = {"Rprec_mult": ref.rprec_mult, "iprec_at_recall": ref.iprec_at_recall}
PAIRS = {"G": ref.g, "rbp": ref.rbp, "rbp_resid": ref.rbp_resid, "ndcg": ref.ndcg,
         "dcg": ref.dcg, "ideal_dcg": ref.ideal_dcg, "ndcg_rel": ref.ndcg_rel,
         "Rndcg": ref.rndcg}
SCALARS = {"map": ref.map_, "gm_map": ref.gm_map, "Rprec": ref.rprec,
           "recip_rank": ref.recip_rank, "set_P": ref.set_p,
           "set_relative_P": ref.set_relative_p, "set_recall": ref.set_recall,
           "set_map": ref.set_map, "num_nonrel_judged_ret": ref.num_nonrel_judged_ret,
           "bpref": ref.bpref, "gm_bpref": ref.gm_bpref, "infAP": ref.infap,
           "binG": ref.bin_g, "yaap": ref.yaap,
           "num_ret": lambda rr: float(rr.num_ret), "num_rel": lambda rr: float(rr.num_rel),
           "num_rel_ret": lambda rr: float(rr.num_rel_ret)}


def reference_values(measure, rr, rounding="nearest", collection_size=0):
    """{output name: value} of one measure (trec_eval spelling, ``name.params``) for a
    topic's ResRels, named as trec_eval prints it."""
    name, _, raw = measure.partition(".")
    suffix = f"_{raw}" if raw else ""
    if name in LONG_CUTOFFS:
        cutoffs = [int(c) for c in raw.split(",")] if raw else None
        values = LONG_CUTOFFS[name](rr, cutoffs) if raw else LONG_CUTOFFS[name](rr)
        cutoffs = cutoffs or {"success": ref.DEFAULT_SUCCESS_CUTOFFS,
                              "unj": ref.DEFAULT_UNJ_CUTOFFS}.get(name, ref.DEFAULT_CUTOFFS)
        return {f"{name}_{c}": v for c, v in zip(cutoffs, values)}
    if name in RECALL_LEVELS:
        levels = [float(x) for x in raw.split(",")] if raw else (
            ref.DEFAULT_RPREC_MULTIPLES if name == "Rprec_mult" else ref.DEFAULT_RECALL_LEVELS)
        values = (ref.rprec_mult(rr, levels) if name == "Rprec_mult"
                  else ref.iprec_at_recall(rr, levels, rounding))
        return {f"{name}_{x:.2f}": v for x, v in zip(levels, values)}
    if name in PAIRS:
        pairs = [tuple(pair.split("=")) for pair in raw.split(",")] if raw else []
        return {name + suffix: PAIRS[name](rr, [(k, float(v)) for k, v in pairs])}
    if name == "11pt_avg":
        levels = [float(x) for x in raw.split(",")] if raw else ref.DEFAULT_RECALL_LEVELS
        return {name + suffix: ref.avg_11pt(rr, levels, rounding)}
    if name == "utility":
        params = [float(x) for x in raw.split(",")] if raw else ref.DEFAULT_UTILITY
        return {name + suffix: ref.utility(rr, params, collection_size)}
    if name == "set_F":
        return {name + suffix: ref.set_f(rr, float(raw) if raw else 1.0)}
    if name == "relstring":
        return {name + suffix: ref.relstring(rr, float(raw) if raw else 10.0)}
    return {name: SCALARS[name](rr)}


# ------------------------------------------------------------------- strategies

DOCNOS = [f"d{i}" for i in range(24)] + ["D", "a", "b", "z", "d1x", "\u00e9", "\u00e9a", "e"]
LEVELS = st.sampled_from([-2, -1, 0, 0, 1, 1, 2, 3, 4])
SCORES = st.one_of(st.sampled_from([0.0, 1.0, 1.0, 2.0, -1.5]),       # heavy ties
                   st.floats(-4, 4, allow_nan=False).map(lambda x: round(x, 1)))


@st.composite
def topics(draw):
    """{qid: qrels}, {qid: run}: 1-4 topics, docnos from one small pool, so that a
    topic has documents retrieved and judged, retrieved only and judged only."""
    qrels, run = {}, {}
    for t in range(draw(st.integers(1, 4))):
        judged = draw(st.permutations(DOCNOS))[:draw(st.sampled_from([4, 8, 16, 2, 1]))]
        qrels[f"q{t}"] = {docno: draw(LEVELS) for docno in judged}
        # sizes from a list, so that long rankings are about as likely as empty ones
        ranked = draw(st.permutations(DOCNOS))[:draw(st.sampled_from([6, 12, 20, len(DOCNOS),
                                                                         3, 1, 0]))]
        run[f"q{t}"] = {docno: draw(SCORES) for docno in ranked}
    return qrels, run


DEPTHS = st.one_of(st.none(), st.integers(1, 12))


# -------------------------------------------------------------------- comparing

def assert_matches(qrels, run, measures, *, relevance_level=1, judged_only=False,
                   depth=None, rounding="nearest", collection_size=0, float32=False):
    result = cumgain.evaluate(
        qrels, run, measures, relevance_level=relevance_level, judged_only=judged_only,
        depth=depth, recall_cutoffs=rounding, collection_size=collection_size,
        score_precision="float32" if float32 else "float64", warn=False, threads=1)
    assert result.topics == tuple(sorted(qrels, key=lambda q: q.encode()))
    mismatches = []
    for t, qid in enumerate(result.topics):
        ranked = ref.rank(qrels[qid], run[qid], depth=depth, judged_only=judged_only,
                          float32=float32)
        rr = ref.form_res_rels(ranked, list(qrels[qid].values()), relevance_level)
        for measure in measures:
            for name, expected in reference_values(measure, rr, rounding,
                                                   collection_size).items():
                actual = result.values[name][t]
                if isinstance(expected, str):
                    actual = str(actual)
                else:
                    actual = float(actual)
                    if (name.startswith(("iprec_at_recall", "11pt_avg")) and rr.num_ret == 0
                            and math.isnan(expected)):
                        expected = 0.0      # documented: 0, where trec_eval divides 0 by 0
                if not (actual == expected):
                    mismatches.append((qid, name, actual, expected, ranked,
                                       sorted(qrels[qid].values())))
    assert not mismatches, "\n".join(
        f"{qid} {name}: cumgain {a!r} != trec_eval {e!r} (ranked {r}, qrels levels {q})"
        for qid, name, a, e, r, q in mismatches[:20])


@pytest.mark.slow
@given(topics(), st.sampled_from([1, 2]), st.booleans(), DEPTHS,
       st.sampled_from(["nearest", "trec_eval9"]))
def test_default_measures_equal_trec_eval(data, relevance_level, judged_only, depth,
                                          rounding):
    qrels, run = data
    assert_matches(qrels, run, DEFAULT_MEASURES, relevance_level=relevance_level,
                   judged_only=judged_only, depth=depth, rounding=rounding)


@given(topics(), st.sampled_from([1, 2]), st.booleans(), DEPTHS,
       st.sampled_from(["nearest", "trec_eval9"]), st.integers(0, 60))
def test_parameterised_measures_equal_trec_eval(data, relevance_level, judged_only, depth,
                                                rounding, collection_size):
    qrels, run = data
    assert_matches(qrels, run, PARAMETERISED_MEASURES, relevance_level=relevance_level,
                   judged_only=judged_only, depth=depth, rounding=rounding,
                   collection_size=collection_size)


@given(topics(), st.booleans())
def test_float32_scores_rank_as_trec_eval_9(data, judged_only):
    """score_precision="float32": scores equal in float32 are tied, ordered by docno."""
    qrels, run = data
    run = {qid: {docno: score + 1e-9 * (i % 3) for i, (docno, score) in enumerate(docs.items())}
           for qid, docs in run.items()}
    assert_matches(qrels, run, ["map", "recip_rank", "P.3,7", "ndcg", "relstring.20"],
                   judged_only=judged_only, float32=True)


# ------------------------------------------------------------- values by hand

def evaluate_one(levels_by_doc, ranking, measures, **options):
    """One topic; ``ranking`` is the docnos best first (scores descending)."""
    run = {docno: float(len(ranking) - i) for i, docno in enumerate(ranking)}
    result = cumgain.evaluate({"q": levels_by_doc}, {"q": run}, measures, warn=False,
                              **options)
    rr = ref.form_res_rels(ref.rank(levels_by_doc, run), list(levels_by_doc.values()),
                           options.get("relevance_level", 1))
    return {name: values[0] for name, values in result.values.items()}, rr


def test_bpref_by_hand():
    """R = 2 relevant, 3 judged non-relevant, one non-pool doc (skipped); ranking
    N R x N N R: the first relevant has 1 judged non-relevant above it, the second 3
    (counted as min(3, R) = 2): (1 - 1/2 + 1 - 2/2) / R."""
    qrels = {"n1": 0, "r1": 1, "n2": 0, "n3": 0, "r2": 2}
    values, rr = evaluate_one(qrels, ["n1", "r1", "x", "n2", "n3", "r2"],
                              ["bpref", "gm_bpref"])
    expected = ((1 - 1 / 2) + (1 - 2 / 2)) / 2
    assert values["bpref"] == expected == ref.bpref(rr) == 0.25
    assert values["gm_bpref"] == math.log(0.25) == ref.gm_bpref(rr)
    # -l 2: only r2 is relevant (R = 1) and r1 is judged non-relevant too
    values, rr = evaluate_one(qrels, ["n1", "r1", "x", "n2", "n3", "r2"], ["bpref"],
                              relevance_level=2)
    assert values["bpref"] == ref.bpref(rr) == 1 - 1 / 1 == 0.0


def test_infap_by_hand():
    """Ranking R U R with U in the pool but unjudged (qrels level -1): the second
    relevant doc, at j = 2 (0-based), gets 1/3 + (2/3) * ((1 + 0 + 1) / 2) *
    ((1 + eps) / (1 + 0 + 2 eps)); infAP is the sum over R = 2. A non-pool doc instead
    of U is not counted among the docs above (numerator 1 + 0 + 0)."""
    eps = 0.00001
    qrels = {"r1": 1, "u": -1, "r2": 1}
    values, rr = evaluate_one(qrels, ["r1", "u", "r2"], ["infAP"])
    expected = (1.0 + (1 / 3 + (2 / 3) * (2 / 2) * ((1 + eps) / (1 + 2 * eps)))) / 2
    assert values["infAP"] == pytest.approx(expected, rel=1e-15)
    assert values["infAP"] == ref.infap(rr)
    values, rr = evaluate_one({"r1": 1, "r2": 1}, ["r1", "x", "r2"], ["infAP"])
    expected = (1.0 + (1 / 3 + (2 / 3) * (1 / 2) * ((1 + eps) / (1 + 2 * eps)))) / 2
    assert values["infAP"] == pytest.approx(expected, rel=1e-15)
    assert values["infAP"] == ref.infap(rr)


def test_g_by_hand():
    """Levels a:2, b:1, c:0, ranked b a c. Default gains = levels: the ideal costs are
    2, 1 (then the minimum cost 1); G = (1 / log2(2 + 2 - 1) + 2 / log2(2 + 3 - 3)) / 3.
    With G.1=2,2=5: (2 / log2(2 + 5 - 2) + 5 / log2(2 + 7 - 7)) / 7."""
    qrels = {"a": 2, "b": 1, "c": 0}
    values, rr = evaluate_one(qrels, ["b", "a", "c"], ["G", "G.1=2,2=5"])
    assert values["G"] == pytest.approx((1 / math.log2(3) + 2 / math.log2(1 + 1)) / 3,
                                        rel=1e-15)
    assert values["G"] == ref.g(rr)
    assert values["G_1=2,2=5"] == pytest.approx((2 / math.log2(5) + 5 / 1) / 7, rel=1e-15)
    assert values["G_1=2,2=5"] == ref.g(rr, {"1": 2.0, "2": 5.0})


def test_rbp_graded_gains_normalised_by_hand():
    """Levels a:4, b:2, c:0: the gain table is 0..4 (levels 1 and 3 have no document
    but are in it), its largest gain 4 > 1, so gains become g / 4. Ranked b c a with
    p = 0.8: (1 - p) (2/4 + 0 p + (4/4) p^2). With rbp.1=0.5,2=1 the table is 0, 0.5, 1,
    3, 4: still divided by 4, and b's gain is 1/4."""
    qrels = {"a": 4, "b": 2, "c": 0}
    values, rr = evaluate_one(qrels, ["b", "c", "a"],
                              ["rbp.p=0.8", "rbp.1=0.5,2=1", "rbp_resid.p=0.8"])
    assert values["rbp_p=0.8"] == pytest.approx(0.2 * (0.5 + 0.64), rel=1e-15)
    assert values["rbp_p=0.8"] == ref.rbp(rr, {"p": 0.8})
    assert values["rbp_1=0.5,2=1"] == pytest.approx(0.1 * (0.25 + 0.81), rel=1e-15)
    assert values["rbp_1=0.5,2=1"] == ref.rbp(rr, {"1": 0.5, "2": 1.0})
    assert values["rbp_resid_p=0.8"] == 0.0     # no unjudged doc retrieved
    values, rr = evaluate_one({"a": 1}, ["x", "a"], ["rbp", "rbp_resid"])
    assert values["rbp"] == pytest.approx(0.1 * 0.9, rel=1e-15) == ref.rbp(rr)
    # the residual: every unjudged doc counts 1, and the tail beyond rank 2 counts p^2
    assert values["rbp_resid"] == pytest.approx(0.9 ** 2 + 0.1 * 1, rel=1e-15)
    assert values["rbp_resid"] == ref.rbp_resid(rr)


def test_rprec_mult_and_iprec_cutoff_roundings_by_hand():
    """R = 5: iprec_at_recall_0.10 looks at lround(0.5) = 1 relevant doc (10.0) or at
    (long)(0.5 + 0.9) = 1 (9.0.8); 0.30: lround(1.5) = 2 against (long)(2.4) = 2; 0.50:
    lround(2.5) = 3 against (long)(3.4) = 3; 0.70: lround(3.5) = 4 against 4;
    0.02: lround(0.1) = 0 against (long)(1.0) = 1."""
    rr = ref.form_res_rels([1, 0, 1, 0, 0, 1], [1, 1, 1, 1, 1, 0, 0, 0])
    assert ref.recall_cutoffs(rr, [0.02, 0.1, 0.3, 0.5, 0.7]) == [0, 1, 2, 3, 4]
    assert ref.recall_cutoffs(rr, [0.02, 0.1, 0.3, 0.5, 0.7], "trec_eval9") == [1, 1, 2, 3, 4]
    assert ref.rprec_mult(rr, [1.0, 2.0]) == [2 / 5, 3 / 10]    # P at 5 docs, at 10 docs
    levels = {f"d{i}": level for i, level in enumerate([1, 1, 1, 1, 1, 0, 0, 0])}
    values, _ = evaluate_one(levels, ["d0", "d5", "d1", "d6", "d7", "d2"],
                             ["iprec_at_recall.0.02,0.3,0.7", "Rprec_mult.1,2"])
    assert values["iprec_at_recall_0.02"] == 1.0
    assert values["iprec_at_recall_0.30"] == 2 / 3
    assert values["iprec_at_recall_0.70"] == 0.0
    assert values["Rprec_mult_1.00"] == 2 / 5 and values["Rprec_mult_2.00"] == 3 / 10


def test_lround_halves_away_from_zero():
    assert [ref._lround(x) for x in (0.5, 1.5, 2.5, -0.5, 0.49999999999999994, 2.4999)] \
        == [1, 2, 3, -1, 0, 2]


def test_empty_ranking_iprec_is_zero_where_trec_eval_divides_by_zero():
    """A topic whose -J ranking is empty, R = 1: trec_eval's iprec_at_recall_x is 0/0
    where lround(x R) = 0 (x < 0.5) and 0 where it is 1 (more than the 0 retrieved)."""
    rr = ref.form_res_rels([], [1, 0])
    values = ref.iprec_at_recall(rr)
    assert all(math.isnan(v) for v in values[:5]) and values[5:] == [0.0] * 6
    assert math.isnan(ref.avg_11pt(rr))
    result = cumgain.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"x": 1.0}},
                              ["iprec_at_recall", "11pt_avg"], judged_only=True, warn=False)
    assert result.values["iprec_at_recall_0.00"][0] == 0.0
    assert result.values["11pt_avg"][0] == 0.0
    assert np.all(result.values["iprec_at_recall_1.00"] == 0.0)


def test_rndcg_zero_over_zero_is_zero():
    """num_rel > 0 but no relevant document has a positive gain (here Rndcg.1=0, or -l 0
    with only level-0 judgments): m_Rndcg.c counts no R-level point and returns
    sum / num_changed_ideal_gain = 0 / 0. `trec_eval -q -m Rndcg.1=0,2=5` on the qrels
    "q1 0 a 1", "q1 0 b 0" and the run "q1 Q0 x 1 1.0 t", "q1 Q0 a 1 0.5 t" prints
    "Rndcg_1=0,2=5  q1  -nan"; cumgain gives 0 (docs/differences.md: where trec_eval divides 0 by 0)."""
    qrels, run = {"q1": {"a": 1, "b": 0}}, {"q1": {"x": 1.0, "a": 0.5}}
    rr = ref.form_res_rels(ref.rank(qrels["q1"], run["q1"]), [1, 0])
    assert math.isnan(ref.rndcg(rr, {"1": 0.0, "2": 5.0}))
    result = cumgain.evaluate(qrels, run, ["Rndcg.1=0,2=5"], warn=False)
    assert result.values["Rndcg_1=0,2=5"].tolist() == [0.0]
