"""The diversity measures over subtopic judgments (cumgain.engine.diversity, cgcore._diversity).

* Hand-computed: a small ranking worked through by the formulas (each step written out).
* Differential, per topic, against pyndeval (ndeval.c in C) on generated judgments and
  runs (several topics, subtopics, graded and negative levels, documents in several
  subtopics, unjudged documents, topics with nothing relevant, ties), over alpha, beta and
  the relevance level: equal bit for bit (pyndeval returns full doubles). Ties: pyndeval
  ranks by score, then docno ascending; the cumgain side is given ties="docno_asc", or
  distinct scores and the default tie rule.
* Differential against ir_measures' pyndeval provider (one parameter setting per call:
  the provider evaluates only the first), including its topic set and means.
* The compiled kernel against cumgain.reference.diversity, a literal port of ndeval.c,
  with Hypothesis (cut-offs beyond ndeval's 20, alpha and beta at 0 and 1).
* Readers (file, gzip, stdin, dict, DataFrame) and bad input, each error naming file and
  line; the measure names and parameters; the topic policies.
"""
from __future__ import annotations

import gzip
import io
import math
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cumgain
from cgcore import _diversity
from cumgain.reference import diversity as reference_diversity
from cumgain.engine.diversity import Subtopics, load_subtopics, read_subtopics
from cumgain.engine.results import TopicsWarning
from cumgain.exceptions import FormatError, InputError
from cumgain.measures import parse_measure

# ndeval / pyndeval name -> ours
NAMES = {"ERR-IA": "ERR_IA", "nERR-IA": "nERR_IA", "alpha-DCG": "alpha_DCG",
         "alpha-nDCG": "alpha_nDCG", "P-IA": "P_IA", "strec": "StRecall", "NRBP": "NRBP",
         "nNRBP": "nNRBP", "MAP-IA": "AP_IA"}
TAKES_ALPHA = {"alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP"}


def evaluate(judgments, run, measures, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicsWarning)
        return cumgain.evaluate(load_subtopics(judgments), run, measures, **options)


# --------------------------------------------------------------------------- by hand

EXAMPLE = {"q": {"1": {"a": 1, "d": 0}, "2": {"a": 2, "b": 1}, "3": {"c": 1}}}
EXAMPLE_RUN = {"q": {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0}}


def test_a_small_ranking_by_the_formulas():
    """Subtopics 1, 2, 3 (S = 3); a is relevant to 1 and 2, b to 2, c to 3, d to none;
    the run ranks a, x (unjudged), b, c. alpha = beta = 0.5.
    g: a 1 + 1 = 2; x 0; b (1 - 0.5)^1 = 0.5 (a covered 2); c 1.
    The greedy ideal: a (2), then c (1) over b (0.5), then b (0.5), then d (0).
    The ideal ideal: I(i) = 3 * 0.5^(i-1) = 3, 1.5, 0.75, 0.375."""
    log2 = math.log2
    names = ["alpha_DCG@4", "alpha_nDCG@4", "ERR_IA@4", "nERR_IA@4", "P_IA@2", "P_IA@4",
             "StRecall@2", "StRecall@4", "AP_IA", "MAP_IA", "NRBP", "nNRBP", "alpha_DCG@1",
             "ERR_IA@1", "alpha_nDCG@1", "alpha_nDCG@3"]
    got = evaluate(EXAMPLE, EXAMPLE_RUN, names).means
    dcg = 2 + 0 / log2(3) + 0.5 / log2(4) + 1 / log2(5)
    ideal_ideal = 3 + 1.5 / log2(3) + 0.75 / log2(4) + 0.375 / log2(5)
    ideal = 2 + 1 / log2(3) + 0.5 / log2(4) + 0 / log2(5)
    assert got["alpha_DCG@4"] == pytest.approx(dcg / ideal_ideal, rel=1e-15)
    assert got["alpha_nDCG@4"] == pytest.approx(dcg / ideal, rel=1e-15)
    assert got["alpha_nDCG@3"] == pytest.approx((2 + 0.5 / 2) / (2 + 1 / log2(3) + 0.5 / 2),
                                                rel=1e-15)
    err = 2 / 1 + 0 / 2 + 0.5 / 3 + 1 / 4
    assert got["ERR_IA@4"] == pytest.approx(err / (3 / 1 + 1.5 / 2 + 0.75 / 3 + 0.375 / 4),
                                            rel=1e-15)
    assert got["nERR_IA@4"] == pytest.approx(err / (2 / 1 + 1 / 2 + 0.5 / 3), rel=1e-15)
    assert got["P_IA@2"] == 2 / (2 * 3)             # (a, 1), (a, 2)
    assert got["P_IA@4"] == 4 / (4 * 3)             # and (b, 2), (c, 3)
    assert got["StRecall@2"] == 2 / 3 and got["StRecall@4"] == 1.0
    # AP per subtopic: 1: a at 1 -> 1; 2: a at 1, b at 3 -> (1/1 + 2/3) / 2; 3: c at 4 -> 1/4
    assert got["AP_IA"] == got["MAP_IA"] == pytest.approx((1 + 5 / 6 + 1 / 4) / 3, rel=1e-15)
    # NRBP: (1 - 0.5 * 0.5) / 3 * (2 + 0 * 0.5 + 0.5 * 0.25 + 1 * 0.125) = 0.25 * 2.25
    assert got["NRBP"] == 0.5625
    assert got["nNRBP"] == 0.5625 / (0.25 * (2 + 1 * 0.5 + 0.5 * 0.25))
    # k = 1: ndeval leaves alpha-DCG and ERR-IA unnormalised (g(1) = 2, not 2 / 3)
    assert got["alpha_DCG@1"] == got["ERR_IA@1"] == 2.0 and got["alpha_nDCG@1"] == 1.0


def test_alpha_changes_the_gains_of_repeated_subtopics():
    """alpha = 0.25: b's gain for subtopic 2 (a covered it) is 0.75; ideal: a, b (0.75)
    over c? No: c's gain is 1 > 0.75, so a, c, b."""
    log2 = math.log2
    got = evaluate(EXAMPLE, EXAMPLE_RUN, ["alpha_nDCG(alpha=0.25)@4", "NRBP(alpha=0.25,beta=0.8)"])
    run = 2 + 0.75 / log2(4) + 1 / log2(5)
    ideal = 2 + 1 / log2(3) + 0.75 / log2(4)
    assert got.means["alpha_nDCG(alpha=0.25)@4"] == pytest.approx(run / ideal, rel=1e-15)
    nrbp = (1 - 0.75 * 0.8) / 3 * (2 + 0 * 0.8 + 0.75 * 0.8 ** 2 + 1 * 0.8 ** 3)
    assert got.means["NRBP(alpha=0.25,beta=0.8)"] == pytest.approx(nrbp, rel=1e-15)


def test_nothing_relevant_scores_zero_and_nnrbp_is_not_nan():
    """A topic whose judgments are all below the level: every measure 0 (ndeval), nNRBP
    included (ndeval: 0 / 0, NaN in pyndeval)."""
    names = ["alpha_nDCG@5", "nERR_IA@5", "nNRBP", "NRBP", "AP_IA", "P_IA@5", "StRecall@5"]
    got = evaluate({"q": {"1": {"a": 0, "b": -1}}}, {"q": {"a": 1.0, "b": 0.5}}, names)
    assert all(got.means[name] == 0.0 for name in names)
    assert got.topics == ("q",)


# --------------------------------------------------------------------------- generated

def random_case(rng, *, distinct_scores=False):
    """(rows, run): judgments as (qid, subtopic, docno, level) in file order, and a run
    {qid: {docno: score}}; a few topics, 1-4 subtopics, levels -1..3, unjudged
    documents in the runs, some topics without a run, scores with ties unless
    distinct_scores."""
    rows, run = [], {}
    for q in range(int(rng.integers(1, 6))):
        qid = f"q{q}"
        docs = [f"d{i:02d}" for i in range(int(rng.integers(1, 15)))]
        for subtopic in range(int(rng.integers(1, 5))):
            for doc in docs:
                if rng.random() < 0.4:
                    rows.append((qid, str(subtopic + 1), doc, int(rng.integers(-1, 4))))
        pool = docs + [f"u{i}" for i in range(5)]
        ranked = rng.choice(pool, size=int(rng.integers(0, len(pool) + 1)), replace=False)
        scores = rng.permutation(len(ranked)) * 0.5 if distinct_scores else \
            rng.integers(0, 4, size=len(ranked))
        if len(ranked) and rng.random() < 0.9:
            run[qid] = {str(d): float(s) for d, s in zip(ranked, scores)}
    if not rows:
        rows.append(("q0", "1", "d00", 1))
    return rows, run


def frame(rows, column="iteration"):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame(rows, columns=["query_id", column, "doc_id", "relevance"])


def spelling(name, cutoff, rel, alpha, beta):
    params = [f"rel={rel}"]
    if name in TAKES_ALPHA:
        params.append(f"alpha={alpha!r}")
    if name in ("NRBP", "nNRBP"):
        params.append(f"beta={beta!r}")
    return f"{name}({','.join(params)})" + (f"@{cutoff}" if cutoff else "")


def pyndeval_values(rows, run, rel, alpha, beta, cutoffs):
    pyndeval = pytest.importorskip("pyndeval")
    names = [f"{m}@{k}" for m in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA",
                                  "strec") for k in cutoffs] + ["NRBP", "nNRBP", "MAP-IA"]
    if alpha != 0.5:    # ERR-IA takes no alpha in ir_measures: ours always uses 0.5
        names = [n for n in names if not n.startswith(("ERR-IA", "nERR-IA"))]
    records = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    values = pyndeval.RelevanceEvaluator(rows, names, relevance_level=rel, alpha=alpha,
                                         beta=beta).evaluate(records)
    ours = {}
    for name in names:
        base, _, k = name.partition("@")
        ours[name] = spelling(NAMES[base], k, rel, alpha, beta)
    return values, ours


def assert_same(ours, reference, names):
    """Per topic: equal bit for bit; where pyndeval divides 0 by 0 (NaN), 0 here."""
    assert set(ours) == set(reference)
    checked = 0
    for topic, values in reference.items():
        for theirs, mine in names.items():
            expected = values[theirs]
            got = ours[topic][mine]
            if math.isnan(expected):
                assert theirs == "nNRBP" and got == 0.0, (topic, theirs)
            else:
                assert got == expected, (topic, theirs, got, expected)
            checked += 1
    return checked


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("rel, alpha, beta", [(1, 0.5, 0.5), (2, 0.5, 0.5), (0, 0.5, 0.5),
                                              (1, 0.3, 0.8), (1, 0.9, 0.2), (1, 0.0, 1.0),
                                              (1, 1.0, 0.0), (2, 0.77, 0.95)])
def test_equal_to_pyndeval_per_topic(seed, rel, alpha, beta):
    """Ties: ranked by score then docno ascending on both sides (ties="docno_asc")."""
    rng = np.random.default_rng([seed, rel, int(alpha * 100), int(beta * 100)])
    checked = 0
    for _ in range(6):
        rows, run = random_case(rng)
        cutoffs = sorted({1, 20, *rng.integers(1, 21, size=3).tolist()})
        reference, names = pyndeval_values(rows, run, rel, alpha, beta, cutoffs)
        ours = evaluate(frame(rows), run, list(names.values()), ties="docno_asc").per_topic()
        checked += assert_same(ours, reference, names)
    assert checked > 0


@pytest.mark.parametrize("seed", range(6))
def test_distinct_scores_need_no_tie_rule(seed):
    """With distinct scores every tie rule ranks alike: the default (docno descending,
    ndeval's -traditional) equals pyndeval."""
    rng = np.random.default_rng([seed, 99])
    for _ in range(6):
        rows, run = random_case(rng, distinct_scores=True)
        reference, names = pyndeval_values(rows, run, 1, 0.5, 0.5, [1, 5, 10, 20])
        ours = evaluate(frame(rows), run, list(names.values())).per_topic()
        assert_same(ours, reference, names)


def test_ties_follow_the_tie_rule():
    """a and b tie; a covers two subtopics, b one. pyndeval ranks a first (docno
    ascending); the default rule (trec_eval, ndeval -traditional) ranks b first."""
    judgments = {"q": {"1": {"a": 1}, "2": {"a": 1, "b": 1}}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    assert evaluate(judgments, run, ["alpha_DCG@1"], ties="docno_asc").means["alpha_DCG@1"] == 2
    assert evaluate(judgments, run, ["alpha_DCG@1"]).means["alpha_DCG@1"] == 1
    assert evaluate(judgments, run, ["alpha_DCG@1"], ties="input_order").means[
        "alpha_DCG@1"] == 2
    pyndeval = pytest.importorskip("pyndeval")
    rows = [("q", "1", "a", 1), ("q", "2", "a", 1), ("q", "2", "b", 1)]
    assert pyndeval.ndeval(rows, [("q", "b", 1.0), ("q", "a", 1.0)],
                           ["alpha-DCG@1"])["q"]["alpha-DCG@1"] == 2


@pytest.mark.parametrize("seed", range(8))
def test_the_native_ranking_equals_the_reference_ranking(seed, tmp_path, monkeypatch):
    """A run file, dict or loaded Run is ranked by the native reader (each ranked row
    carries its judged document's index as its "level"); the reference path (the run
    loaded, then ranked and joined with numpy: what diversity does when the native
    ranking is not taken) gives the same values, bit for bit, under every tie rule,
    depth, judged-only and score precision, and for a run with docnos that need UTF-8
    and NUL-free byte order."""
    from cumgain import trec_io
    from cumgain.engine import diversity
    rng = np.random.default_rng([seed, 7])
    names = ["alpha_nDCG@5", "alpha_DCG@20", "nERR_IA@10", "NRBP", "nNRBP", "AP_IA",
             "P_IA@3", "StRecall@5", "alpha_nDCG(alpha=0.3,rel=2)@10"]
    for case in range(5):
        rows, run = random_case(rng)
        if case % 2:            # docnos whose UTF-8 byte order is not their length order
            rows = [(q, s, d.replace("d0", "é").replace("d1", "z"), lv) for q, s, d, lv in rows]
            run = {q: {d.replace("d0", "é").replace("d1", "z"): v for d, v in docs.items()}
                   for q, docs in run.items()}
        judgments = load_subtopics(frame(rows))
        path = tmp_path / f"run{case}.txt"
        path.write_text("".join(f"{q} Q0 {d} 0 {v!r} t\n" for q, docs in run.items()
                                for d, v in docs.items()), encoding="utf-8")
        reference_run = trec_io.load_run(run) if run else None
        for options in (dict(), dict(ties="docno_asc"), dict(ties="input_order"),
                        dict(ties="random", seed=3), dict(depth=3, judged_only=True),
                        dict(score_precision="float32", topics="qrels")):
            if reference_run is None:
                continue
            with monkeypatch.context() as patch:       # the reference path, as such
                patch.setattr(diversity, "_rank_natively", lambda *args, **kwargs: None)
                reference = evaluate(judgments, run, names, **options)
            for native_run in (run, path, reference_run):
                ours = evaluate(judgments, native_run, names, **options)
                assert ours.topics == reference.topics
                for name in names:
                    assert ours.values[name].tolist() == reference.values[name].tolist(), \
                        (options, name)


def test_subtopics_are_summed_in_order_of_first_appearance():
    """A document relevant to subtopics a, b, c whose gains are 0.49, 1, 1 (alpha = 0.3,
    two documents already relevant to a): (0.49 + 1) + 1 and (1 + 1) + 0.49 differ in the
    last bit. pyndeval sums in the order the subtopics first appear, and so do we."""
    pyndeval = pytest.importorskip("pyndeval")
    rows = [("1", "a", "pa0", 1), ("1", "a", "pa1", 1), ("1", "a", "z", 1),
            ("1", "b", "z", 1), ("1", "c", "z", 1)]
    run = {"1": {"pa0": 3.0, "pa1": 2.0, "z": 1.0}}
    records = [("1", d, s) for d, s in run["1"].items()]
    results = []
    for order in (rows, rows[::-1]):
        expected = pyndeval.RelevanceEvaluator(order, ["alpha-DCG@20"], alpha=0.3) \
            .evaluate(records)["1"]["alpha-DCG@20"]
        got = evaluate(frame(order), run, ["alpha_DCG(alpha=0.3)@20"]).means[
            "alpha_DCG(alpha=0.3)@20"]
        assert got == expected
        results.append(got)
    assert results[0] != results[1]


def test_judged_only_drops_documents_without_a_judgment():
    """ir_measures' provider means to filter the run to judged documents (it raises in
    0.4.3); pyndeval on the filtered run is the reference."""
    rng = np.random.default_rng(5)
    for _ in range(10):
        rows, run = random_case(rng)
        judged = {(q, d) for q, _, d, _ in rows}
        filtered = {q: {d: s for d, s in docs.items() if (q, d) in judged}
                    for q, docs in run.items()}
        filtered = {q: docs for q, docs in filtered.items() if docs}
        reference, names = pyndeval_values(rows, filtered, 1, 0.5, 0.5, [1, 3, 10, 20])
        ours = evaluate(frame(rows), run, list(names.values()), ties="docno_asc",
                        judged_only=True).per_topic()
        ours = {q: v for q, v in ours.items() if q in reference}
        assert_same(ours, reference, names)
        per_measure = {n.replace("(rel=1", "(rel=1,judged_only=True"): n for n in names.values()
                       if not n.startswith(("NRBP", "nNRBP", "StRecall"))}
        again = evaluate(frame(rows), run, list(per_measure), ties="docno_asc").per_topic()
        for topic in reference:
            for flagged, plain in per_measure.items():
                assert again[topic][flagged] == ours[topic][plain]


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_ir_measures_pyndeval_provider(seed):
    """ir_measures evaluates every qrels topic (those the run lacks score 0): our
    topics="qrels". Its mean is NaN when some topic has nothing relevant (nNRBP)."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    rng = np.random.default_rng([seed, 1234])
    for _ in range(4):
        rows, run = random_case(rng)
        spellings = ["ERR_IA@5", "nERR_IA@10", "alpha_DCG@20", "alpha_nDCG@1", "alpha_nDCG@20",
                     "P_IA@10", "AP_IA", "NRBP", "nNRBP"]
        measures = [ir_measures.parse_measure(s) for s in spellings]
        provider = ir_measures.providers.registry["pyndeval"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = provider.calc(measures, frame(rows), run)
        ours = evaluate(frame(rows), run, spellings, topics="qrels", ties="docno_asc")
        per_topic = ours.per_topic()
        for metric in result.per_query:
            expected, got = metric.value, per_topic[metric.query_id][str(metric.measure)]
            assert got == expected or (math.isnan(expected) and got == 0.0)
        assert set(per_topic) == {m.query_id for m in result.per_query}
        for measure, mean in result.aggregated.items():
            if math.isnan(mean):
                assert str(measure) == "nNRBP" and math.isfinite(ours.means["nNRBP"])
            else:
                assert ours.means[str(measure)] == pytest.approx(mean, rel=1e-13, abs=1e-15)
        # StRecall runs in a call of its own (ir_measures evaluates one setting per call)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strec = provider.calc([ir_measures.parse_measure("StRecall@5")], frame(rows), run)
        ours_strec = evaluate(frame(rows), run, ["StRecall@5"], topics="qrels",
                              ties="docno_asc").per_topic()
        for metric in strec.per_query:
            assert ours_strec[metric.query_id]["StRecall@5"] == metric.value


def test_ir_measures_provider_scores_a_second_setting_zero():
    """The difference we document: ir_measures 0.4.3 evaluates only the first
    (rel, alpha, beta, judged_only) setting of a call and scores the others 0."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    measures = [ir_measures.parse_measure("alpha_nDCG@5"),
                ir_measures.parse_measure("alpha_nDCG(alpha=0.7)@5")]
    rows = [("q", "1", "a", 1), ("q", "2", "b", 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ir_measures.providers.registry["pyndeval"].calc_aggregate(
            measures, frame(rows), {"q": {"a": 2.0, "b": 1.0}})
    ours = evaluate(frame(rows), {"q": {"a": 2.0, "b": 1.0}},
                    ["alpha_nDCG@5", "alpha_nDCG(alpha=0.7)@5"]).means
    assert ours["alpha_nDCG@5"] == 1.0 and ours["alpha_nDCG(alpha=0.7)@5"] == 1.0
    assert sorted(theirs.values()) in ([0.0, 1.0], [1.0, 1.0])   # [0, 1] in 0.4.3


# --------------------------------------------------------------------------- the kernel

@st.composite
def kernel_inputs(draw):
    n_topics = draw(st.integers(0, 4))
    judged_offsets, relevant_offsets, subtopics, n_subtopics = [0], [0], [], []
    ranked_offsets, ranked = [0], []
    for _ in range(n_topics):
        width = draw(st.integers(0, 5))
        n_judged = draw(st.integers(0, 8))
        n_subtopics.append(width)
        for _ in range(n_judged):
            subtopics += sorted(draw(st.sets(st.integers(0, max(width - 1, 0)),
                                             max_size=width)))
            relevant_offsets.append(len(subtopics))
        first = judged_offsets[-1]
        judged_offsets.append(first + n_judged)
        choices = st.integers(first, first + n_judged - 1) if n_judged else st.just(-1)
        ranked += draw(st.lists(st.one_of(st.just(-1), choices), max_size=30))
        ranked_offsets.append(len(ranked))
    cutoffs = sorted(draw(st.sets(st.integers(1, 40), max_size=5)))
    alpha = draw(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0, 1))
    beta = draw(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0, 1))
    arrays = [np.array(x, dtype=np.int64) for x in (judged_offsets, relevant_offsets, subtopics,
                                                    n_subtopics, ranked_offsets, ranked, cutoffs)]
    return (*arrays, alpha, beta)


@given(kernel_inputs())
def test_kernel_equals_the_literal_port_of_ndeval(arguments):
    """Bit for bit, at cut-offs up to 40 (ndeval stops at 20), for any alpha and beta."""
    got = _diversity.diversity_measures(*arguments)
    expected = reference_diversity.diversity_measures(*arguments)
    for a, b in zip(got, expected):
        assert a.shape == b.shape and np.array_equal(a, b)


def test_kernel_checks_its_arguments():
    ok = [np.array(x, dtype=np.int64) for x in ([0, 1], [0, 1], [0], [1], [0, 1], [0], [1])]
    _diversity.diversity_measures(*ok, 0.5, 0.5)

    def bad(position, value, match, alpha=0.5, beta=0.5):
        arguments = list(ok)
        if position is not None:
            arguments[position] = np.array(value, dtype=np.int64)
        with pytest.raises(ValueError, match=match):
            _diversity.diversity_measures(*arguments, alpha, beta)

    bad(2, [1], "not a subtopic")
    bad(3, [1, 1], "n_subtopics has 2 entries")
    bad(5, [1], "neither -1 nor a judged document")
    bad(6, [2, 2], "increasing")
    bad(6, [0], "increasing")
    bad(0, [0, 2], "runs past")
    bad(4, [0, 2], "runs past")
    bad(None, None, "alpha", alpha=1.5)
    bad(None, None, "beta", beta=float("nan"))
    with pytest.raises(ValueError, match="strictly"):
        _diversity.diversity_measures(*[np.array(x, dtype=np.int64) for x in (
            [0, 1], [0, 2], [0, 0], [1], [0, 0], [], [1])], 0.5, 0.5)
    at, whole = _diversity.diversity_measures(*[np.array(x, dtype=np.int64) for x in (
        [0], [0], [], [], [0], [], [])], 0.5, 0.5)
    assert at.shape == (6, 0, 0) and whole.shape == (3, 0)


def test_cutoffs_beyond_twenty_follow_the_same_formulas():
    """ndeval stops at rank 20; P_IA@k keeps dividing by k S, StRecall stays."""
    judgments = {"q": {"1": {f"d{i:02d}": 1 for i in range(30)}, "2": {"d05": 1}}}
    run = {"q": {f"d{i:02d}": 100.0 - i for i in range(25)}}
    got = evaluate(judgments, run, ["P_IA@20", "P_IA@50", "StRecall@50", "alpha_nDCG@30",
                                    "alpha_nDCG@20"]).means
    assert got["P_IA@20"] == 21 / (20 * 2) and got["P_IA@50"] == 26 / (50 * 2)
    assert got["StRecall@50"] == 1.0
    assert 0 < got["alpha_nDCG@30"] < 1


# --------------------------------------------------------------------------- reading

TEXT = "q1 1 a 1\nq1 2 a 0\n# a comment\nq1 2 b 2\nq2 1 c 1\n"


def test_every_form_reads_the_same(tmp_path, monkeypatch):
    path = tmp_path / "qrels"
    path.write_text(TEXT)
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(TEXT.encode()))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TEXT.encode())))
    rows = [("q1", "1", "a", 1), ("q1", "2", "a", 0), ("q1", "2", "b", 2), ("q2", "1", "c", 1)]
    forms = [read_subtopics(path), load_subtopics(str(tmp_path / "qrels.gz")),
             load_subtopics("-"), load_subtopics({"q1": {"1": {"a": 1}, "2": {"a": 0, "b": 2}},
                                                  "q2": {"1": {"c": 1}}}),
             load_subtopics(frame(rows)), load_subtopics(frame(rows, "subtopic"))]
    for judgments in forms:
        assert judgments.topics == ("q1", "q2")
        assert judgments.subtopic_names == ("1", "2")
        assert judgments.to_dict() == forms[0].to_dict()
        assert judgments.offsets.tolist() == [0, 3, 4]
    assert forms[0].lines.tolist() == [1, 2, 4, 5]
    assert forms[0].source == str(path) and forms[2].source == "<stdin>"
    assert load_subtopics(forms[0]) is forms[0]
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
    means = {evaluate(form, run, ["alpha_nDCG@5"]).means["alpha_nDCG@5"] for form in forms}
    assert len(means) == 1


def bad_file(tmp_path, text, match, line, data=None):
    path = tmp_path / "bad"
    path.write_bytes(data if data is not None else text.encode())
    with pytest.raises(FormatError, match=match) as error:
        read_subtopics(path)
    assert error.value.path == str(path) and error.value.line_number == line
    assert str(error.value).startswith(f"{path}:{line}:" if line else f"{path}:")
    return error.value


@pytest.mark.parametrize("text, match, line", [
    ("q 1 a 1\nq 1 b\n", r"expected 4 fields \(qid subtopic docno rel\), found 3", 2),
    ("q 1 a 1 x\n", "expected 4 fields", 1),
    ("q 1 a high\n", "relevance 'high' is not a number", 1),
    ("q 1 a 1\nq 1 b nan\n", "relevance 'nan' is NaN", 2),
    ("q 1 a inf\n", "infinite", 1),
    ("q 1 a 0x1\n", "not a number", 1),
    ("q 1 a 1\n\nq 1 b 1\n", "blank line", 2),
    ("", r"no judgments \(the file has no data lines\)", 0),
    ("# only a comment\n", "no judgments", 0),
    ("q 1 a 1\nq 2 a 1\nq 1 b 0\nq 1 a 0\n", "docno 'a' is judged twice for subtopic '1' of "
     "topic 'q': lines 1 and 4", 4),
    ("q 1 a 1\rq 1 b 1\n", "carriage return inside the line", 1),
])
def test_bad_files_name_the_file_and_line(tmp_path, text, match, line):
    bad_file(tmp_path, text, match, line)


def test_bad_bytes_name_the_line(tmp_path):
    bad_file(tmp_path, None, "not valid UTF-8", 2, data=b"q 1 a 1\nq 1 \xff 1\n")
    bad_file(tmp_path, None, "NUL byte", 1, data=b"q 1 a\x00 1\n")
    bad_file(tmp_path, None, "truncated or corrupt gzip data after line 2", 2,
             data=gzip.compress(b"q 1 a 1\nq 1 b 1\n")[:-3])


def test_the_same_docno_in_two_subtopics_or_topics_is_fine(tmp_path):
    path = tmp_path / "ok"
    path.write_text("q 1 a 1\nq 2 a 1\nr 1 a 1\nq 1 b -2\nq 1 c 0.5\n")
    judgments = read_subtopics(path)
    assert judgments.topics == ("q", "r") and judgments.levels.tolist() == [1, 1, -2, 0.5, 1]


@pytest.mark.parametrize("value, match", [
    ({"q": {"1": {"a": True}}}, "relevance must be a real number, got bool"),
    ({"q": {"1": {"a": float("nan")}}}, "relevance is NaN"),
    ({"q": {"1": {"a": float("inf")}}}, "infinite"),
    ({"q": {"1": {"a": "1"}}}, "got str"),
    ({"q": {"1": ["a"]}}, r"topic 'q', subtopic '1' must be a mapping \{docno: rel\}"),
    ({"q": ["1"]}, "topic 'q' must be a mapping"),
    ({1: {}, "1": {}}, "keys 1 and '1' are both '1'"),
    ({"q": {1: {"a": 1}, "1": {"b": 1}}}, "topic 'q': keys 1 and '1'"),
    ([("q", "1", "a", 1)], "must be a Subtopics, a path"),
])
def test_bad_dicts(value, match):
    with pytest.raises(InputError, match=match):
        load_subtopics(value)


def test_bad_dataframes():
    pd = pytest.importorskip("pandas")
    rows = [("q", "1", "a", 1)]
    cases = [
        (pd.DataFrame(rows, columns=["query_id", "x", "doc_id", "relevance"]), "has neither"),
        (frame(rows).assign(subtopic="2"), "has both"),
        (frame(rows).drop(columns="relevance"), r"missing column\(s\) \['relevance'\]"),
        (frame([("q", "1", "a", 1), ("q", None, "b", 1)]), "iteration is missing at row 1"),
        (frame([("q", "1", "a", float("nan"))]), "row 0 .* relevance is NaN or missing"),
        (frame([("q", "1", "a", True)]), "boolean"),
        (frame([("q", "1", "a", 1), ("q", "1", "a", 2)]), "judged twice .* rows 0 and 1"),
    ]
    for df, match in cases:
        with pytest.raises(InputError, match=match):
            load_subtopics(df)


def test_empty_topics_are_listed_not_evaluated():
    judgments = load_subtopics({"q": {"1": {"a": 1}}, "e": {}, "f": {"1": {}}})
    assert judgments.topics == ("e", "f", "q")
    with pytest.warns(TopicsWarning, match="2 qrels topics have no judgments"):
        result = cumgain.evaluate(judgments, {"q": {"a": 1.0}, "e": {"a": 1.0}},
                                  ["alpha_nDCG@5"])
    assert result.topics == ("q",) and result.empty_qrels_topics == ("e", "f")
    assert result.run_only_topics == ("e",)


# --------------------------------------------------------------------------- measures

def test_names_aliases_and_parameters():
    assert parse_measure("MAP_IA")[0].family == parse_measure("AP_IA")[0].family == "AP_IA"
    measure = parse_measure("alpha_nDCG(alpha=0.3, rel=2, judged_only=True)@10")[0]
    assert (measure.family, measure.cutoff, measure.param("alpha"), measure.relevance_level,
            measure.judged_only) == ("alpha_nDCG", 10, 0.3, 2.0, True)
    assert parse_measure("NRBP(beta=0.8)")[0].param("beta") == 0.8
    for spelling, match in [("ERR_IA", "needs a cut-off"), ("P_IA", "needs a cut-off"),
                            ("StRecall", "needs a cut-off"), ("NRBP@10", "takes no cut-off"),
                            ("AP_IA@10", "takes no cut-off"),
                            ("ERR_IA(alpha=0.3)@5", "does not take 'alpha'"),
                            ("StRecall(judged_only=True)@5", "does not take 'judged_only'"),
                            ("NRBP(judged_only=True)", "does not take 'judged_only'"),
                            ("alpha_nDCG(alpha=2)@5", r"alpha must be a number in \[0, 1\]"),
                            ("NRBP(beta=-1)", "beta must be a number >= 0")]:
        with pytest.raises(InputError, match=match):
            parse_measure(spelling)
    with pytest.raises(InputError, match=r"beta must be in \[0, 1\]"):
        evaluate(EXAMPLE, EXAMPLE_RUN, ["NRBP(beta=2)"])


def test_alpha_spelled_with_the_greek_letter():
    assert parse_measure("α_nDCG@20")[0].family == "alpha_nDCG"
    assert parse_measure("α_DCG@20")[0].family == "alpha_DCG"


def test_defaults_are_ir_measures():
    """alpha = beta = 0.5, rel = the evaluation's relevance level (1)."""
    names = ["alpha_nDCG@5", "alpha_nDCG(alpha=0.5,rel=1)@5", "NRBP", "NRBP(alpha=0.5,beta=0.5)"]
    got = evaluate(EXAMPLE, EXAMPLE_RUN, names).means
    assert got[names[0]] == got[names[1]] and got[names[2]] == got[names[3]]
    level2 = evaluate(EXAMPLE, EXAMPLE_RUN, ["StRecall@4"], relevance_level=2).means
    assert level2["StRecall@4"] == 1.0        # only subtopic 2 (a) is relevant at level 2
    assert evaluate(EXAMPLE, EXAMPLE_RUN, ["StRecall(rel=2)@4"]).means[
        "StRecall(rel=2)@4"] == 1.0


def test_other_measures_and_other_qrels_are_refused(tmp_path):
    with pytest.raises(InputError, match="cannot be computed from subtopic judgments"):
        evaluate(EXAMPLE, EXAMPLE_RUN, ["P_5"])
    with pytest.raises(InputError, match=r"needs subtopics .*cumgain.load_subtopics"):
        cumgain.evaluate({"q": {"a": 1}}, EXAMPLE_RUN, ["alpha_nDCG@5"])
    with pytest.raises(InputError, match="cannot be computed from judgment groups"):
        (tmp_path / "jg").write_text("q 1 a 1\n")
        cumgain.evaluate(cumgain.load_judgment_groups(str(tmp_path / "jg")), EXAMPLE_RUN,
                         ["alpha_nDCG@5"])
    with pytest.raises(InputError, match="ties=.average. is not defined"):
        evaluate(EXAMPLE, EXAMPLE_RUN, ["alpha_nDCG@5"], ties="average")


def test_topic_policies():
    judgments = {"a": {"1": {"x": 1}}, "b": {"1": {"y": 1}}}
    run = {"a": {"x": 1.0}, "c": {"z": 1.0}}
    with pytest.warns(TopicsWarning, match="1 run topics have no judgments"):
        both = cumgain.evaluate(load_subtopics(judgments), run, ["alpha_nDCG@5"])
    assert both.topics == ("a",) and both.means["alpha_nDCG@5"] == 1.0
    assert both.missing_topics == ("b",) and both.run_only_topics == ("c",)
    qrels = evaluate(judgments, run, ["alpha_nDCG@5", "nNRBP"], topics="qrels")
    assert qrels.topics == ("a", "b") and qrels.values["alpha_nDCG@5"].tolist() == [1.0, 0.0]
    assert qrels.means["nNRBP"] == 0.5
    with pytest.raises(InputError, match="topics differ"):
        evaluate(judgments, run, ["alpha_nDCG@5"], topics="strict")


def test_depth_and_score_precision():
    judgments = {"q": {"1": {"a": 1}, "2": {"b": 1}}}
    run = {"q": {"x": 3.0, "a": 2.0, "b": 1.0}}
    assert evaluate(judgments, run, ["StRecall@3"], depth=2).means["StRecall@3"] == 0.5
    close = {"q": {"b": 1.00000001, "a": 1.0}}   # equal as float32: ties, docno descending
    assert evaluate(judgments, close, ["AP_IA"], score_precision="float32").means[
        "AP_IA"] == evaluate(judgments, {"q": {"b": 1.0, "a": 1.0}}, ["AP_IA"]).means["AP_IA"]


def test_random_ties_are_seeded():
    judgments = {"q": {str(s): {f"d{i}": 1 for i in range(s, 20, 3)} for s in range(3)}}
    run = {"q": {f"d{i}": 1.0 for i in range(20)}}
    first = evaluate(judgments, run, ["alpha_nDCG@5"], ties="random", seed=3).means
    assert first == evaluate(judgments, run, ["alpha_nDCG@5"], ties="random", seed=3).means


def test_subtopics_object_is_read_only_data():
    judgments = load_subtopics(EXAMPLE)
    assert isinstance(judgments, Subtopics)
    assert judgments.to_dict() == {"q": {"1": {"a": 1.0, "d": 0.0}, "2": {"a": 2.0, "b": 1.0},
                                         "3": {"c": 1.0}}}


def test_docstring_examples():
    import doctest

    import cumgain.engine.diversity

    failures, tried = doctest.testmod(cumgain.engine.diversity, verbose=False)
    assert failures == 0 and tried >= 5
