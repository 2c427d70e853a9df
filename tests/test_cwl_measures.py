"""The C/W/L measures (:mod:`cumgain.measures.cwl`: RBP, INST, INSQ, BPM, SDCG,
NERR8-11) against cwl_eval as ir_measures runs it, per topic.

cwl_eval's expected utility is sum_i W_i g_i with W built by numpy (cumprod, pairwise
sum) and the sum taken by ``np.dot``, i.e. by the BLAS, in an order that depends on the
machine. cumgain builds W bit for bit and takes the sum exactly (rounded once). So each
value is checked twice:

* **bit-identical** (``==``) to cwl_eval's own code run with that one ``np.dot``
  replaced by an exact dot product (``_do_score_with_exact_dot``): everything else
  (gains, ranking, c_i, W) is cwl_eval's and ir_measures';
* within 4 units in the last place of ir_measures' unmodified ``cwl_eval`` provider
  (the BLAS sum's rounding); how many are bit-identical is tallied and printed at the end.

Inputs: TREC DL 2019 passage qrels (graded 0-3) with the BM25 run, TREC-COVID with
its -1 judgments, a TREC 2003 Robust run with integer scores (90,099 tied documents) (all under
../shared/data/real, skipped when absent), and seeded generated sets: heavy ties,
unjudged and negative-judged documents, topics missing from the run or empty, runs
longer than cwl_eval's 1000 ranks. cumgain ranks with ``ties="input_order"`` (ir_measures
sorts by score with a stable sort, ties in the run's order) and averages over
``topics="qrels"`` (ir_measures scores every qrels topic, 0 for one the run lacks); one
test checks the default docno tie rule on runs given in that order.

The differential tests skip when ir_measures or cwl_eval (or trectools, for ``RBP``
without ``rel``) are not installed.
"""
from __future__ import annotations

import collections
import gzip
import logging
import math
import random
import re
from fractions import Fraction

import numpy as np
import pytest

from cgcore import _cwl
from cumgain import evaluate
from cumgain.exceptions import InputError
from cumgain.measures import parse_measure

DL19 = ("qrels/qrels.dl19-passage.txt", "runs/run.msmarco-v1-passage.bm25-default.dl19.txt")
COVID = ("qrels/qrels.covid-complete.txt", "runs/run.beir.bm25-flat.trec-covid.txt")
ROBUST = ("qrels/qrels.robust03.txt", "runs/robust03/input.MU03rob01.gz")

#: Measures both libraries compute, on qrels graded up to 3 (ir_measures' spellings).
GRADED = ("RBP(rel=1)", "RBP(rel=2,p=0.95)", "RBP(rel=0,p=0.5)", "RBP(rel=3,p=1.0)",
          "INST(max_rel=3)", "INST(T=3.0,max_rel=3)", "INST(T=0.5,min_rel=1,max_rel=2)",
          "INSQ(max_rel=3)", "INSQ(T=2.5,max_rel=2)", "BPM(max_rel=3)@10",
          "BPM(T=2.0,max_rel=3)@20", "BPM(T=1.5,min_rel=1,max_rel=3)@1000",
          "SDCG(max_rel=3)@10", "SDCG(min_rel=1,max_rel=3)@5", "SDCG(max_rel=1)@2000",
          "NERR8(max_rel=3)@10", "NERR8(max_rel=1)@1", "NERR9(max_rel=3)@10",
          "NERR9(min_rel=-1,max_rel=2)@50", "NERR10(max_rel=3)", "NERR10(p=0.5,max_rel=2)",
          "NERR11(max_rel=3)", "NERR11(T=4.0,max_rel=3)")

COMPARE = dict(ties="input_order", topics="qrels", warn=False)


# ------------------------------------------------------------------ tally

class _Tally:
    """Values compared; bit-identical to ir_measures (BLAS sum) and to cwl_eval with
    the exact sum."""

    def __init__(self):
        self.compared = collections.Counter()
        self.blas = collections.Counter()
        self.exact = collections.Counter()

    def report(self) -> str:
        lines = ["cwl_eval differential: values compared / bit-identical to ir_measures' "
                 "cwl_eval / to cwl_eval with an exact dot"]
        for key in sorted(self.compared):
            lines.append(f"  {key:<28} {self.compared[key]:>7} / {self.blas[key]:>7} / "
                         f"{self.exact[key]:>7}")
        lines.append(f"  {'total':<28} {sum(self.compared.values()):>7} / "
                     f"{sum(self.blas.values()):>7} / {sum(self.exact.values()):>7}")
        return "\n".join(lines)


TALLY = _Tally()


@pytest.fixture(scope="module", autouse=True)
def _print_tally(request):
    yield
    if not TALLY.compared:
        return
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        with capture.global_and_fixture_disabled():
            print("\n" + TALLY.report())
    else:  # pragma: no cover
        print("\n" + TALLY.report())


# ------------------------------------------------------------------ the references

@pytest.fixture
def irm():
    """ir_measures with its cwl_eval provider available (its warnings about unseen
    relevance levels silenced)."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    logging.getLogger("ir_measures").setLevel(logging.ERROR)
    logging.getLogger("ir_measures.cwl_eval").setLevel(logging.ERROR)
    return ir_measures


def _exact_dot(a, b) -> float:
    """The exact sum of the exact products, rounded once (Fraction -> float rounds to
    nearest, ties to even)."""
    total = Fraction(0)
    for x, y in zip(np.asarray(a, dtype=np.float64).tolist(),
                    np.asarray(b, dtype=np.float64).tolist()):
        if x != 0 and y != 0:
            total += Fraction(x) * Fraction(y)
    return float(total)


def _do_score_with_exact_dot(self, ranking, worse_case=True):
    """cwl_eval's CWLMetric._do_score with its expected utility np.dot(wvec, gain_vec)
    taken exactly (the other four quantities, which ir_measures does not report, are
    left out)."""
    wvec = self.w_vector(ranking, worse_case)
    return (_exact_dot(wvec, ranking.get_gain_vector(worse_case)), 0.0, 0.0, 0.0,
            1.0 / wvec[0])


@pytest.fixture
def exact_cwl(irm, monkeypatch):
    """cwl_eval with its expected utility summed exactly."""
    from cwl.ruler.measures.cwl_metrics import CWLMetric
    monkeypatch.setattr(CWLMetric, "_do_score", _do_score_with_exact_dot)
    return irm


def _ir_measure(irm, name: str):
    """The ir_measures measure of a spelling (built from cumgain's reading of it: the
    ir_measures parser rejects negative values such as min_rel=-1)."""
    measure = parse_measure(name)[0]
    params = dict(measure.params)
    if measure.relevance_level is not None:
        params["rel"] = int(measure.relevance_level)
    if measure.cutoff is not None:
        params["cutoff"] = measure.cutoff
    built = getattr(irm, measure.family)(**params)
    if "-" not in name:
        assert built.params == irm.parse_measure(name).params, name
    return built


def _ir_measures_values(irm, qrels, run, names) -> dict:
    """{(name, topic): value} from ir_measures' cwl_eval provider."""
    measures = {_ir_measure(irm, name): name for name in names}
    return {(measures[m.measure], m.query_id): m.value
            for m in irm.cwl_eval.iter_calc(list(measures), qrels, run)}


def _cumgain_values(qrels, run, names, **policies) -> dict:
    evaluation = evaluate(qrels, run, list(names), **{**COMPARE, **policies})
    return {(name, topic): float(value) for name in names
            for topic, value in zip(evaluation.topics, evaluation.values[name])}


def _ulps(a: float, b: float) -> float:
    return abs(a - b) / np.spacing(max(abs(a), abs(b), np.finfo(float).tiny))


def _compare(source: str, ours: dict, blas: dict, exact: dict) -> int:
    """Every value: == the exact-dot cwl_eval, within 4 ulps of ir_measures."""
    assert set(ours) == set(blas) == set(exact), source
    failures = []
    for key in sorted(ours):
        value, reference, exact_reference = ours[key], blas[key], exact[key]
        TALLY.compared[source] += 1
        TALLY.blas[source] += value == reference
        TALLY.exact[source] += value == exact_reference
        if value != exact_reference or _ulps(value, reference) > 4:
            failures.append(f"{key}: cumgain {value!r}, cwl_eval exact {exact_reference!r}, "
                            f"ir_measures {reference!r}")
    assert not failures, f"{source}: {len(failures)} of {len(ours)} differ:\n" + \
        "\n".join(failures[:20])
    return len(ours)


def _differential(source, irm_module, monkeypatch, qrels, run, names, **policies):
    """ir_measures as it is, then with cwl_eval's dot made exact, against cumgain."""
    blas = _ir_measures_values(irm_module, qrels, run, names)
    from cwl.ruler.measures.cwl_metrics import CWLMetric
    with monkeypatch.context() as patch:
        patch.setattr(CWLMetric, "_do_score", _do_score_with_exact_dot)
        exact = _ir_measures_values(irm_module, qrels, run, names)
    ours = _cumgain_values(qrels, run, names, **policies)
    return _compare(source, ours, blas, exact)


def _cwl_direct(qrels: dict, run: dict, metric, *, rel=None, min_rel=None, max_rel=None,
                depth=None, residual=False) -> dict:
    """cwl_eval's own code on every qrels topic, as ir_measures' provider drives it
    (IrmQrelHandler, RankingMaker with max_n=1000, the run sorted by score with a stable
    sort), the ranking cut at ``depth``; the value, or cwl_eval's residual (-r)."""
    from cwl.ruler.ranking import RankingMaker
    from ir_measures.providers.cwl_eval import IrmQrelHandler
    handler = IrmQrelHandler(rel, min_rel, max_rel)
    for topic, judgments in qrels.items():
        for doc, level in judgments.items():
            handler.put_value(topic, doc, max(level, 0))
    values = {}
    for topic in qrels:
        ranked = sorted(run.get(topic, {}).items(), key=lambda item: item[1], reverse=True)
        maker = RankingMaker(topic, handler, min_gain=0., max_gain=1., cost_dict=None,
                             max_cost=1.0, min_cost=1.0, max_n=1000)
        for doc, _ in ranked[:depth]:
            maker.add(doc, "_")
        measure = metric()
        measure.residuals = residual
        value = measure.measure(maker.get_ranking())
        values[topic] = float(measure.residual_expected_utility if residual else value)
    return values


# ------------------------------------------------------------------ inputs

def _read_qrels(path) -> dict:
    qrels: dict = {}
    with open(path) as lines:
        for line in lines:
            topic, _, doc, level = line.split()
            qrels.setdefault(topic, {})[doc] = int(level)
    return qrels


def _read_run(path) -> dict:
    """{topic: {doc: score}} in file order (the order ir_measures keeps for ties)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    run: dict = {}
    with opener(path, "rt") as lines:
        for line in lines:
            topic, _, doc, _, score, _ = line.split()
            run.setdefault(topic, {})[doc] = float(score)
    return run


def _real(shared, pair) -> tuple:
    base = shared / "data" / "real"
    return _read_qrels(base / pair[0]), _read_run(base / pair[1])


def _generated(seed: int, topics: int = 14, spread: bool = False) -> tuple:
    """Random qrels and run: levels -1..3 (graded up to 3), heavy score ties, unjudged
    documents, judged documents never retrieved, a qrels topic missing from the run and
    one with an empty ranking, a run topic without judgments, runs of 0 .. 1300 documents
    (cwl_eval keeps the first 1000). ``spread``: each topic's scores in its own range (no
    two topics share a score)."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for t in range(topics):
        topic = f"q{t}"
        length = rng.choice((0, 1, 3, 9, 40, 130, 600, 1300))
        docs = [f"d{rng.randrange(10 ** 6)}" for _ in range(length)]
        levels = (-1, 0, 0, 0, 1, 1, 2, 3)
        judgments = {doc: rng.choice(levels) for doc in docs if rng.random() < 0.5}
        for _ in range(rng.randrange(1, 6)):      # judged, not retrieved
            judgments[f"u{rng.randrange(10 ** 6)}"] = rng.choice(levels)
        qrels[topic] = judgments
        if t == 0:
            continue                              # a qrels topic the run lacks
        base = 10.0 * t if spread else 0.0
        run[topic] = {doc: base + rng.choice((0.5, 0.25, 0.125, 1.0, float(rng.randrange(4))))
                      for doc in docs}
    run["only_in_run"] = {"x1": 1.0, "x2": 2.0}
    return qrels, run


# ------------------------------------------------------------------ differential: cwl_eval

@pytest.mark.slow
def test_dl19_bm25_against_ir_measures(shared, irm, monkeypatch):
    qrels, run = _real(shared, DL19)
    assert _differential("dl19", irm, monkeypatch, qrels, run, GRADED) == 43 * len(GRADED)


@pytest.mark.slow
def test_trec_covid_with_negative_judgments(shared, irm, monkeypatch):
    qrels, run = _real(shared, COVID)
    assert any(level < 0 for judged in qrels.values() for level in judged.values())
    names = ("RBP(rel=1)", "RBP(rel=0)", "INST(max_rel=2)", "INSQ(max_rel=2)",
             "BPM(max_rel=2)@10", "SDCG(max_rel=2)@20", "NERR9(max_rel=2)@10",
             "NERR10(max_rel=2)", "NERR11(min_rel=-2,max_rel=2)")
    _differential("trec-covid", irm, monkeypatch, qrels, run, names)


@pytest.mark.slow
def test_robust03_run_with_heavy_ties(shared, irm, monkeypatch):
    qrels, run = _real(shared, ROBUST)
    scores = [tuple(docs.values()) for docs in run.values()]
    assert sum(len(s) - len(set(s)) for s in scores) > 50000     # integer scores: ties
    names = ("RBP(rel=1)", "INST(max_rel=2)", "INSQ(max_rel=2)", "BPM(max_rel=2)@10",
             "SDCG(max_rel=2)@10", "NERR8(max_rel=2)@10", "NERR10(max_rel=2)")
    _differential("robust03 MU03rob01", irm, monkeypatch, qrels, run, names)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_generated_against_ir_measures(irm, monkeypatch, seed):
    qrels, run = _generated(seed)
    run["q1"] = {}                                # an empty ranking
    _differential("generated", irm, monkeypatch, qrels, run, GRADED)


def test_default_tie_rule_on_runs_given_in_its_order(irm, monkeypatch):
    """cumgain's default ties (docno descending) agree with ir_measures when the run
    lists tied documents in that order (ir_measures keeps the run's order)."""
    qrels, run = _generated(11)
    ordered = {topic: dict(sorted(sorted(docs.items(), reverse=True),
                                  key=lambda item: item[1], reverse=True))
               for topic, docs in run.items()}
    names = ("INST(max_rel=3)", "BPM(max_rel=3)@10", "NERR8(max_rel=3)@10", "RBP(rel=2)")
    _differential("generated, docno_desc", irm, monkeypatch, qrels, ordered, names,
                  ties="docno_desc")


def test_means_are_ir_measures_means(shared, irm):
    """The aggregate: the mean over every qrels topic (0 for one the run lacks)."""
    qrels, run = _generated(5)
    names = ("RBP(rel=1)", "INST(max_rel=3)", "SDCG(max_rel=3)@10", "NERR11(max_rel=3)")
    reference = irm.cwl_eval.calc_aggregate([_ir_measure(irm, n) for n in names], qrels, run)
    means = evaluate(qrels, run, list(names), **COMPARE).means
    for name in names:
        assert means[name] == pytest.approx(reference[_ir_measure(irm, name)], rel=1e-14)


# ------------------------------------------------------------------ residuals and RBP@k

@pytest.mark.slow
def test_rbp_residual_is_cwl_evals(shared, exact_cwl):
    """RBP(rel=r, residual=True) is cwl_eval -r's residual: EU with unjudged and missing
    ranks (up to 1000) at gain 1, minus EU."""
    from cwl.ruler.cwl_ruler import RBPCWLMetric
    cases = [_real(shared, DL19), _generated(2), _generated(3)]
    for qrels, run in cases:
        for p, rel in ((0.8, 1), (0.95, 2), (0.5, 0)):
            name = f"RBP(p={p},rel={rel},residual=True)"
            ours = _cumgain_values(qrels, run, [name])
            reference = _cwl_direct(qrels, run, lambda: RBPCWLMetric(p), rel=rel,
                                    residual=True)
            assert {topic: ours[(name, topic)] for topic in reference} == reference, name
            value = _cumgain_values(qrels, run, [f"RBP(p={p},rel={rel})"])
            for topic in reference:         # the bounds: value + residual <= 1
                assert value[(f"RBP(p={p},rel={rel})", topic)] + reference[topic] \
                    <= 1 + 1e-12


def test_rbp_at_k_is_cwl_evals_rbp_of_the_top_k(exact_cwl):
    """RBP(rel=r)@k (no provider in ir_measures): cwl_eval's RBP of the run cut at k; its
    residual counts the ranks below k as missing."""
    from cwl.ruler.cwl_ruler import RBPCWLMetric
    qrels, run = _generated(7)
    for k in (1, 5, 100, 1200):
        for residual in (False, True):
            name = f"RBP(rel=1,residual={residual})@{k}"
            ours = _cumgain_values(qrels, run, [name])
            reference = _cwl_direct(qrels, run, lambda: RBPCWLMetric(0.8), rel=1, depth=k,
                                    residual=residual)
            assert {topic: ours[(name, topic)] for topic in reference} == reference, name


# ------------------------------------------------------------------ RBP without rel

def _trectools_values(irm, qrels, run, names) -> dict:
    """ir_measures' trectools provider, one measure per call: with several RBP measures
    in one call it computes them all with the last one's p and cut-off (its RBP function
    reads ``measure`` from the loop after the loop has moved on)."""
    values = {}
    for name in names:
        measure = irm.parse_measure(name)
        values.update({(name, m.query_id): m.value
                       for m in irm.trectools.iter_calc([measure], qrels, run)})
    return values


@pytest.mark.filterwarnings("ignore:The inplace keyword")      # ir_measures + pandas 3
def test_graded_rbp_is_ir_measures_trectools_rbp(shared, irm):
    """RBP / RBP@k without rel: (1 - p) sum p^(i-1) level_i, as ir_measures computes it
    with trectools (tied documents share their weights: ties="average"). trectools sums
    with pandas (a compensated sum) and p^i with numpy's power, so the values agree to
    about an ulp, not bit for bit."""
    pytest.importorskip("trectools")
    # on ties, no cut-off: trectools cuts first (keeping which of the tied documents its
    # unstable sort puts first) and averages the weights of those it kept; cumgain
    # averages over the whole group. spread: trectools also averages the weights of
    # equal scores of neighbouring topics.
    cases = ((_real(shared, DL19), ("RBP", "RBP@10", "RBP(p=0.9)@100", "RBP(p=0.5)")),
             (_generated(8, spread=True), ("RBP", "RBP(p=0.5)", "RBP(p=0.95)")))
    for (qrels, run), names in cases:
        run = {topic: docs for topic, docs in run.items() if docs}
        reference = _trectools_values(irm, qrels, run, names)
        ours = _cumgain_values(qrels, run, names, ties="average")
        for key, value in reference.items():
            assert ours[key] == pytest.approx(value, rel=1e-13, abs=1e-15), key
        for key in set(ours) - set(reference):
            assert ours[key] == 0.0, key


def test_graded_rbp_by_formula():
    qrels = {"q": {"a": 3, "b": 1, "c": 0, "d": -1}}
    run = {"q": {"a": 4.0, "x": 3.0, "b": 2.0, "d": 1.0}}
    values = evaluate(qrels, run, ["RBP", "RBP@2", "RBP(p=0.5)"]).means
    assert values["RBP"] == pytest.approx(0.2 * (3 + 0.8 ** 2 * 1))
    assert values["RBP@2"] == pytest.approx(0.2 * 3)
    assert values["RBP(p=0.5)"] == pytest.approx(0.5 * (3 + 0.25))


# ------------------------------------------------------------------ formulas by hand

def _one(gains, name, **policies):
    """The value of ``name`` for one topic whose ranked documents have these levels
    (None: not judged); the qrels also hold one judged, unretrieved document."""
    qrels = {"q": {f"d{i}": level for i, level in enumerate(gains) if level is not None}}
    qrels["q"]["unretrieved"] = 3
    run = {"q": {f"d{i}": float(len(gains) - i) for i in range(len(gains))}}
    return float(evaluate(qrels, run, [name], **policies).values[name][0])


def _weights_sum(c, n=1000) -> float:
    """sum_{r<n} prod_{j<r} c(j), c over 1-based ranks."""
    total, product = 0.0, 1.0
    for rank in range(1, n + 1):
        total += product
        product *= c(rank)
    return total


def test_rbp_by_formula():
    p = 0.8
    norm = sum(p ** i for i in range(1000))        # cwl_eval spreads W over 1000 ranks
    assert _one([1, 0, 2], "RBP(rel=1)") == pytest.approx((1 + p ** 2) / norm, rel=1e-15)
    assert _one([1, 0, 2], "RBP(rel=2)") == pytest.approx(p ** 2 / norm, rel=1e-15)
    assert _one([0, None, 1], "RBP(rel=0)") == pytest.approx((1 + p ** 2) / norm, rel=1e-15)
    # residual: the unjudged rank 2 and ranks 4..1000
    assert _one([1, None, 1], "RBP(rel=1,residual=True)") == pytest.approx(
        (p + sum(p ** i for i in range(3, 1000))) / norm, rel=1e-13)
    assert _one([1, 1, 1], "RBP(rel=1)@2") == pytest.approx((1 + p) / norm, rel=1e-15)
    assert _one([1, 1], "RBP(rel=1,p=1.0)") == pytest.approx(2 / 1000)
    assert _one([0, 1], "RBP(rel=1,p=0.0)") == 0.0
    assert _one([1, 1], "RBP(rel=1,p=0.0)") == 1.0


def test_inst_insq_by_formula():
    # INSQ(T=1): c_i = ((i + 1) / (i + 2))^2, so prod_{j<i} c_j = (2 / (i + 1))^2
    norm = _weights_sum(lambda i: ((i + 1) / (i + 2)) ** 2)
    assert norm == pytest.approx(sum(4 / (i + 1) ** 2 for i in range(1, 1001)), rel=1e-13)
    assert _one([3, 0, 3], "INSQ(max_rel=3)") == pytest.approx((1 + 4 / 16) / norm, rel=1e-13)
    # INST(T=1) with gain 1 at rank 1 only: T_i = 0, c_i = (i / (i + 1))^2
    norm = sum(1 / i ** 2 for i in range(1, 1001))
    assert _one([3], "INST(max_rel=3)") == pytest.approx(1 / norm, rel=1e-13)
    # half gains: g = (level - 1) / 2 with min_rel=1, max_rel=3
    assert _one([2], "INSQ(min_rel=1,max_rel=3)") == pytest.approx(
        0.5 / _weights_sum(lambda i: ((i + 1) / (i + 2)) ** 2), rel=1e-13)


def test_bpm_by_formula():
    # the gain reaches T = 2 at rank 3: the first 3 ranks, uniformly
    assert _one([1, 0, 1, 1], "BPM(T=2.0,max_rel=1)@10") == pytest.approx(2 / 3)
    # the cut-off comes first: rank k
    assert _one([1, 0, 1, 1], "BPM(T=5.0,max_rel=1)@2") == pytest.approx(1 / 2)
    assert _one([0, 0], "BPM(max_rel=1)@10") == 0.0
    # neither: every one of the 1000 ranks
    assert _one([1, 1], "BPM(T=5.0,max_rel=1)@5000") == pytest.approx(2 / 1000)


def test_sdcg_by_formula():
    dcg = 1 / math.log2(2) + (2 / 3) / math.log2(4)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, 4))
    assert _one([3, 0, 2], "SDCG(max_rel=3)@3") == pytest.approx(dcg / ideal, rel=1e-14)
    assert _one([3, 0, 2], "SDCG(max_rel=3)@1") == 1.0
    assert _one([0, 3], "SDCG(max_rel=3)@1") == 0.0


def test_nerr_by_formula():
    # NERR8: c_i = 1 - g_i; gains 1/2, 1: W = (2/3, 1/3)
    assert _one([1, 2], "NERR8(max_rel=2)@10") == pytest.approx(0.5 * 2 / 3 + 1 / 3)
    assert _one([2, 2], "NERR8(max_rel=2)@10") == 1.0     # stops at the first
    assert _one([0, 2], "NERR8(max_rel=2)@1") == 0.0      # k = 1: rank 1 only
    # NERR9: c_1 = (1/2)(1 - 1/2) = 1/4, c_2 = (2/3)(1 - 1) = 0: W = (4/5, 1/5)
    assert _one([1, 2], "NERR9(max_rel=2)@10") == pytest.approx(0.5 * 0.8 + 0.2)
    # NERR10: c_1 = p/2, c_2 = 0
    p = 0.9
    assert _one([1, 2], "NERR10(max_rel=2)") == pytest.approx((0.5 + p / 2) / (1 + p / 2))
    # NERR11(T=1): c_1 = (2/3)^2 (1 - 1/2), c_2 = 0
    c1 = (2 / 3) ** 2 / 2
    assert _one([1, 2], "NERR11(max_rel=2)") == pytest.approx((0.5 + c1) / (1 + c1))


def test_judged_levels_below_zero_count_as_zero_and_unjudged_gain_nothing():
    # -1 becomes 0: with min_rel=-1 it is judged at 1/3 of the range, while an unjudged
    # document (None) gains 0
    assert _one([-1], "NERR8(min_rel=-1,max_rel=2)@1") == pytest.approx(1 / 3)
    assert _one([None], "NERR8(min_rel=-1,max_rel=2)@1") == 0.0
    # k = 5: c = 1 - 1/3 at rank 1, then 1 (gain 0) up to rank 4: W_1 = 1 / (1 + 4 (2/3))
    assert _one([-1], "NERR8(min_rel=-1,max_rel=2)@5") == pytest.approx(1 / 11)
    # clipped at max_rel
    assert _one([7], "SDCG(max_rel=3)@1") == 1.0


def test_documents_below_rank_1000_are_ignored():
    assert _one([0] * 1000 + [3], "RBP(rel=1,p=1.0)") == 0.0
    assert _one([0] * 999 + [3], "RBP(rel=1,p=1.0)") == pytest.approx(1 / 1000)


def test_missing_and_empty_topics_score_zero():
    qrels = {"a": {"d": 1}, "b": {"d": 1}, "c": {"d": 1}}
    run = {"a": {"d": 1.0}, "b": {}}
    names = ["RBP(rel=1)", "INST(max_rel=1)", "BPM(max_rel=1)@5", "RBP(rel=1,residual=True)"]
    evaluation = evaluate(qrels, run, names, topics="qrels", warn=False)
    for name in names[:3]:
        assert evaluation.values[name].tolist()[1:] == [0.0, 0.0], name
    # nothing retrieved: every rank is unknown
    assert evaluation.values[names[3]].tolist()[1:] == pytest.approx([1.0, 1.0])


def test_linear_measures_allow_tie_averaging_the_others_do_not():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    for name in ("RBP(rel=1)", "INSQ(max_rel=1)", "SDCG(max_rel=1)@5", "RBP"):
        low = evaluate(qrels, run, [name], ties="docno_asc").means[name]
        high = evaluate(qrels, run, [name], ties="docno_desc").means[name]
        assert evaluate(qrels, run, [name], ties="average").means[name] == \
            pytest.approx((low + high) / 2), name
    for name in ("INST(max_rel=1)", "BPM(max_rel=1)@5", "NERR10(max_rel=1)"):
        with pytest.raises(InputError, match="ties='average'"):
            evaluate(qrels, run, [name], ties="average")


# ------------------------------------------------------------------ parameters

@pytest.mark.parametrize("spelling, message", [
    ("INST", "needs max_rel"),
    ("INSQ(T=2.0)", "needs max_rel"),
    ("NERR10(min_rel=1)", "needs max_rel"),
    ("SDCG@10", "needs max_rel"),
    ("INST(min_rel=3,max_rel=3)", "min_rel .3. must be less than max_rel .3."),
    ("BPM(min_rel=2,max_rel=1)@10", "must be less than"),
    ("BPM(max_rel=3)", "needs a cut-off"),
    ("SDCG(max_rel=3)", "needs a cut-off"),
    ("NERR8(max_rel=3)", "needs a cut-off"),
    ("NERR9(max_rel=3)", "needs a cut-off"),
    ("INST(max_rel=3)@10", "takes no cut-off"),
    ("NERR10(max_rel=3)@10", "takes no cut-off"),
    ("NERR11(max_rel=3)@10", "takes no cut-off"),
    ("INSQ(max_rel=3)@10", "takes no cut-off"),
    ("INST(max_rel=2.5)", "whole number"),
    ("INST(max_rel=3,T=0)", "T must be a number > 0"),
    ("BPM(max_rel=3,T=-1.0)@10", "T must be a number > 0"),
    ("RBP(p=1.5,rel=1)", r"p must be a number in \[0, 1\]"),
    ("NERR10(p=-0.1,max_rel=3)", r"p must be a number in \[0, 1\]"),
    ("RBP(rel=-1)", "rel must be a number >= 0"),
    ("RBP(residual=True)", "needs rel="),
    ("RBP(rel=1,residual=1)", "residual must be True or False"),
    ("SDCG(max_rel=3,dcg='exp-log2')@10", "only dcg='log2'"),
    ("INST(max_rel=3,rel=1)", "does not take 'rel'"),
    ("RBP(max_rel=3)", "does not take 'max_rel'"),
    ("NERR8(max_rel=3)@0", "cut-off must be a whole number >= 1"),
])
def test_parameter_errors(spelling, message):
    with pytest.raises(InputError, match=message):
        parse_measure(spelling)


def test_parameters_and_defaults():
    rbp = parse_measure("RBP(rel=2)")[0]
    assert (rbp.family, rbp.relevance_level, rbp.cutoff, rbp.params) == ("RBP", 2.0, None, ())
    inst = parse_measure("INST(T=2, max_rel=3)")[0]
    assert (inst.name, inst.params) == ("INST(T=2,max_rel=3)", (("T", 2.0), ("max_rel", 3)))
    sdcg = parse_measure("SDCG(max_rel=3, dcg='log2')@10")[0]
    assert (sdcg.family, sdcg.cutoff, sdcg.params) == ("SDCG", 10, (("max_rel", 3),))
    assert parse_measure("BPM@10(max_rel=3)")[0].cutoff == 10
    # the defaults: RBP p = 0.8, NERR10 p = 0.9, T = 1, min_rel = 0
    qrels, run = _generated(4)
    for given, default in (("RBP(rel=1)", "RBP(rel=1,p=0.8)"),
                           ("NERR10(max_rel=3)", "NERR10(p=0.9,min_rel=0,max_rel=3)"),
                           ("INST(max_rel=3)", "INST(T=1.0,max_rel=3)"),
                           ("BPM(max_rel=3)@10", "BPM(T=1.0,min_rel=0,max_rel=3)@10")):
        values = evaluate(qrels, run, [given, default], **COMPARE).values
        assert values[given].tolist() == values[default].tolist()


def test_measure_objects_are_checked_too():
    from cumgain.measures import Measure
    with pytest.raises(InputError, match="needs max_rel"):
        evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, [Measure("x", "INST")])
    with pytest.raises(InputError, match="needs a cut-off"):
        evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}},
                 [Measure("x", "SDCG", params=(("max_rel", 1),))])


# ------------------------------------------------------------------ the kernel

def _reference_expected_utility(gains, offsets, model, parameter, cutoff, limit, pad,
                                depth=1000):
    """A pure-Python twin of ``_cwl.expected_utility``, written from cwl_eval's classes:
    the c vector as a list (Python floats, ``** 2.0``), W with np.cumprod / np.pad /
    np.sum as CWLMetric.w_vector, the dot product exact."""
    out = []
    for start, stop in zip(offsets[:-1], offsets[1:]):
        ranked = list(gains[start:stop])[:limit][:depth]
        g = np.array(ranked + [pad] * (depth - len(ranked)))
        cum = np.cumsum(g)
        c = []
        for i in range(depth):
            rank = i + 1
            if model == _cwl.MODEL_RBP:
                c.append(parameter)
            elif model == _cwl.MODEL_INSQ:
                c.append((((i + 1.0) + (2.0 * parameter) - 1.0)
                          / ((i + 1.0) + (2.0 * parameter))) ** 2.0)
            elif model == _cwl.MODEL_INST:
                t_i = parameter - cum[i]
                c.append((((i + 1.0) + parameter + t_i - 1.0)
                          / ((i + 1.0) + parameter + t_i)) ** 2.0)
            elif model == _cwl.MODEL_BPM:
                c.append(1.0 if cum[i] < parameter and rank < cutoff else 0.0)
            elif model == _cwl.MODEL_SDCG:
                c.append(math.log(rank + 1, 2.0) / math.log(rank + 2, 2.0)
                         if rank < cutoff else 0.0)
            elif model == _cwl.MODEL_NERR8:
                c.append(1 - g[i] if i < cutoff - 1 else 0.0)
            elif model == _cwl.MODEL_NERR9:
                c.append((1.0 * rank / (rank + 1.0)) * (1.0 - g[i]) if i < cutoff - 1 else 0.0)
            elif model == _cwl.MODEL_NERR10:
                c.append(parameter * (1 - g[i]))
            else:
                c.append((((rank + (2.0 * parameter) - 1.0) / (rank + (2.0 * parameter)))
                          ** 2.0) * (1.0 - g[i]))
        products = np.pad(np.cumprod(np.array(c)[:-1]), (1, 0), "constant",
                          constant_values=1.0)
        first = np.divide(1.0, np.sum(products))
        weights = np.append(first, np.multiply(products[1:], first))
        out.append(_exact_dot(weights, g))
    return np.array(out)


MODELS = {"RBP": (_cwl.MODEL_RBP, 0.8), "INSQ": (_cwl.MODEL_INSQ, 1.5),
          "INST": (_cwl.MODEL_INST, 2.0), "BPM": (_cwl.MODEL_BPM, 1.5),
          "SDCG": (_cwl.MODEL_SDCG, 0.0), "NERR8": (_cwl.MODEL_NERR8, 0.0),
          "NERR9": (_cwl.MODEL_NERR9, 0.0), "NERR10": (_cwl.MODEL_NERR10, 0.7),
          "NERR11": (_cwl.MODEL_NERR11, 0.5)}


@pytest.mark.parametrize("model", sorted(MODELS))
def test_kernel_equals_its_python_twin(model):
    """Bit for bit, at depths that take every branch of numpy's pairwise sum (< 8
    terms, one block of <= 128, halves)."""
    code, parameter = MODELS[model]
    rng = np.random.default_rng(sum(map(ord, model)))
    lengths = rng.choice([0, 1, 2, 7, 8, 30, 200], size=12)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    gains = rng.choice([0.0, 0.0, 1.0, 0.5, 1 / 3, 2 / 3], size=offsets[-1])
    for depth in (1, 5, 8, 127, 300, 1000):
        for cutoff, limit, pad in ((3, 10 ** 9, 0.0), (50, 4, 1.0), (1, 10 ** 9, 0.0)):
            ours = _cwl.expected_utility(gains, offsets, code, parameter, cutoff, limit, pad,
                                         depth)
            reference = _reference_expected_utility(gains, offsets, code, parameter, cutoff,
                                                    limit, pad, depth)
            assert ours.tolist() == reference.tolist(), (depth, cutoff, limit, pad)


def test_kernel_argument_checks():
    gains, offsets = np.array([0.5, 1.0]), np.array([0, 2], dtype=np.int64)
    kernel = _cwl.expected_utility
    with pytest.raises(ValueError, match="offsets"):
        kernel(gains, np.array([0, 3], dtype=np.int64), _cwl.MODEL_RBP, 0.8, 0, 10, 0.0)
    with pytest.raises(ValueError, match="non-decreasing"):
        kernel(gains, np.array([0, 2, 1], dtype=np.int64), _cwl.MODEL_RBP, 0.8, 0, 10, 0.0)
    with pytest.raises(ValueError, match="unknown user model"):
        kernel(gains, offsets, 99, 0.8, 0, 10, 0.0)
    with pytest.raises(ValueError, match="outside"):
        kernel(np.array([0.5, 1.5]), offsets, _cwl.MODEL_INST, 1.0, 0, 10, 0.0)
    with pytest.raises(ValueError, match="outside"):
        kernel(np.array([0.5, np.nan]), offsets, _cwl.MODEL_INST, 1.0, 0, 10, 0.0)
    with pytest.raises(ValueError, match="p must be"):
        kernel(gains, offsets, _cwl.MODEL_RBP, 1.5, 0, 10, 0.0)
    with pytest.raises(ValueError, match="T must be"):
        kernel(gains, offsets, _cwl.MODEL_INSQ, 0.0, 0, 10, 0.0)
    with pytest.raises(ValueError, match="finite"):
        kernel(gains, offsets, _cwl.MODEL_INST, np.inf, 0, 10, 0.0)
    with pytest.raises(ValueError, match="pad"):
        kernel(gains, offsets, _cwl.MODEL_RBP, 0.8, 0, 10, 2.0)
    with pytest.raises(ValueError, match="depth"):
        kernel(gains, offsets, _cwl.MODEL_RBP, 0.8, 0, 10, 0.0, 0)
    with pytest.raises(ValueError, match=">= 0"):
        kernel(gains, offsets, _cwl.MODEL_SDCG, 0.0, -1, 10, 0.0)
    with pytest.raises(ValueError, match="p must be"):
        _cwl.geometric_utility(gains, offsets, -0.5, 10)
    with pytest.raises(ValueError, match="not finite"):
        _cwl.geometric_utility(np.array([np.inf, 0.0]), offsets, 0.5, 10)
    # read-only inputs are accepted
    gains.setflags(write=False)
    offsets.setflags(write=False)
    assert kernel(gains, offsets, _cwl.MODEL_RBP, 0.5, 0, 10, 0.0).shape == (1,)


def test_weights_sum_to_one_and_values_stay_in_range():
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 1500, size=20)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    gains = rng.choice([0.0, 1.0, 0.5], size=offsets[-1])
    ones = np.ones(offsets[-1])
    for model, (code, parameter) in MODELS.items():
        worst = _cwl.expected_utility(gains, offsets, code, parameter, 10, 10 ** 9, 0.0)
        best = _cwl.expected_utility(gains, offsets, code, parameter, 10, 10 ** 9, 1.0)
        assert np.all((worst >= 0) & (worst <= 1 + 1e-12)), model
        assert np.all(best >= worst - 1e-15), model
        if code in (_cwl.MODEL_RBP, _cwl.MODEL_INSQ, _cwl.MODEL_SDCG):   # W fixed
            total = _cwl.expected_utility(ones, offsets, code, parameter, 10, 10 ** 9, 1.0)
            assert total == pytest.approx(np.ones(len(total)), rel=1e-13), model


# ------------------------------------------------------------------ any gain mapping

_TABLE = {-1: 0, 0: 0, 1: 1, 2: 3, 3: 9}
_TABLE_SPELLING = "gains={0:0,1:1,2:3,3:9}"


def _mapped(qrels: dict) -> dict:
    """The qrels with each level replaced by its gain under _TABLE."""
    return {topic: {doc: _TABLE[level] for doc, level in docs.items()}
            for topic, docs in qrels.items()}


@pytest.mark.parametrize("seed", range(3))
def test_gains_map_the_level_and_the_range_as_cwl_eval_on_mapped_qrels(irm, monkeypatch,
                                                                      seed):
    """INST/INSQ/BPM/SDCG/NERR with gains=m are cwl_eval's on the qrels whose levels are
    replaced by their gains, with min_rel=m(min_rel) and max_rel=m(max_rel): g =
    (clip(m(level), m(min), m(max)) - m(min)) / (m(max) - m(min))."""
    qrels, run = _generated(seed)
    ours_names = [f"INST(max_rel=3,{_TABLE_SPELLING})", f"INSQ(max_rel=2,{_TABLE_SPELLING})",
                  f"BPM(T=2,max_rel=3,{_TABLE_SPELLING})@20",
                  f"SDCG(max_rel=3,{_TABLE_SPELLING})@10",
                  f"NERR10(p=0.8,min_rel=1,max_rel=3,{_TABLE_SPELLING})"]
    theirs_names = ["INST(max_rel=9)", "INSQ(max_rel=3)", "BPM(T=2,max_rel=9)@20",
                    "SDCG(max_rel=9)@10",
                    "NERR10(p=0.8,min_rel=1,max_rel=9)"]
    from cwl.ruler.measures.cwl_metrics import CWLMetric
    with monkeypatch.context() as patch:
        patch.setattr(CWLMetric, "_do_score", _do_score_with_exact_dot)
        theirs = _ir_measures_values(irm, _mapped(qrels), run, theirs_names)
    ours = _cumgain_values(qrels, run, ours_names)
    renamed = dict(zip(theirs_names, ours_names))
    assert {(renamed[name], topic): value for (name, topic), value in theirs.items()} == ours


def test_sdcg_with_exponential_gains_is_cwl_eval_on_exponentially_mapped_qrels(
        irm, monkeypatch):
    """SDCG(gains='exponential',min_rel=1,max_rel=2): g = (clip(2^l - 1, 1, 3) - 1) / 2."""
    qrels, run = _generated(7)
    exponential = {topic: {doc: 2 ** level - 1 for doc, level in docs.items()}
                   for topic, docs in qrels.items()}
    from cwl.ruler.measures.cwl_metrics import CWLMetric
    with monkeypatch.context() as patch:
        patch.setattr(CWLMetric, "_do_score", _do_score_with_exact_dot)
        theirs = _ir_measures_values(irm, exponential, run, ["SDCG(min_rel=1,max_rel=3)@15"])
    ours = _cumgain_values(qrels, run, ["SDCG(min_rel=1,max_rel=2,gains='exponential')@15"])
    assert {topic: value for (_, topic), value in theirs.items()} == \
        {topic: value for (_, topic), value in ours.items()}
    assert len(ours) > 3


def test_identity_gains_change_nothing():
    qrels, run = _generated(5)
    names = ["INST(max_rel=3)", "BPM(max_rel=2)@10", "NERR11(max_rel=3)", "RBP", "RBP@5"]
    with_gains = [name.replace(")", ",gains='identity')", 1) if "(" in name else
                  name.replace("RBP", "RBP(gains='identity')") for name in names]
    plain, mapped = _cumgain_values(qrels, run, names), _cumgain_values(qrels, run, with_gains)
    renamed = dict(zip(names, with_gains))
    assert {(renamed[name], topic): value for (name, topic), value in plain.items()} == mapped


def test_graded_rbp_with_gains_is_rbp_of_the_mapped_qrels():
    qrels, run = _generated(6)
    ours = _cumgain_values(qrels, run, [f"RBP({_TABLE_SPELLING})@30"])
    theirs = _cumgain_values(_mapped(qrels), run, ["RBP@30"])
    assert list(ours.values()) == list(theirs.values())
    qrels = {"q": {"a": 3, "b": 1, "c": 0}}
    run = {"q": {"a": 4.0, "x": 3.0, "b": 2.0}}
    value = evaluate(qrels, run, [f"RBP({_TABLE_SPELLING})"]).means[
        f"RBP({_TABLE_SPELLING})"]
    assert value == pytest.approx(0.2 * (9 + 0.8 ** 2 * 1))


@pytest.mark.parametrize("name, words", [
    ("RBP(rel=1,gains='exponential')", "RBP(rel=r) is binary"),
    ("SDCG(max_rel=3,dcg='exp-log2')@10", "SDCG takes only dcg='log2'"),
    ("nDCG(dcg='exp-log2',gains='identity')@10", "not both"),
    ("INST(max_rel=3,gains={0:5,1:1,2:2,3:3})", "gain of min_rel (5) must be less than"),
])
def test_gains_that_cannot_apply_are_refused(name, words):
    qrels = {"q": {"a": 3, "b": 1, "c": 0}}
    run = {"q": {"a": 4.0, "b": 2.0}}
    with pytest.raises(InputError, match=re.escape(words)):
        evaluate(qrels, run, [name])
