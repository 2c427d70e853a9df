"""Differential tests of :mod:`cumgain.compat.pytrec_eval` (and of
``cumgain.evaluate(..., score_precision="float32")``) against the real
pytrec_eval-terrier, which embeds trec_eval 9.0.8.

Every per-topic value of every measure both libraries support is compared at full
precision and must be bit-identical (``==``): cumgain follows trec_eval's order of
operations and calls the same libm functions, so no tolerance is needed (a 1e-12
tolerance once hid a 1-ulp gm_map difference: numpy's SIMD ``np.log`` is not libm's
``log``; see test_gm_map_is_libm_log_of_ap). A failure shows each difference, so an
ulp-level one is told from a real one at a glance. The number of values compared is
printed at the end of the module (``pytest -s`` not needed).

Inputs:

* seeded batches of thousands of random topics and Hypothesis cases: heavy score
  ties, scores equal only as float32 (1.0000000001 / 1.0000000002, 100000001.0 /
  100000000.0, 16777217.0 / 16777216.0), ints, negatives, infinities, negative
  judgments mixed with 0..4, topics judged all 0, empty run topics, topics on one
  side only, docids ordered differently as bytes and as numbers, unicode docids;
* the real runs under ../shared/data/real (skipped when ../shared is absent).

pytrec_eval segfaults on a qrels topic whose judgments are all negative when it is
evaluated after another topic (see shared/reference/peers.md, 1.1), so such topics
never reach it (``_oracle`` refuses them); cumgain's handling of them is tested on
its own. pytrec_eval aborts the process on a malformed measure name, so it never
sees one either.
"""
from __future__ import annotations

import collections
import functools
import gzip
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import cumgain.compat.pytrec_eval as ours
from cumgain import evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")

# ------------------------------------------------------------------ set-up

#: All 34 of pytrec_eval's measures (each with its default parameters).
MEASURES = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP",
            "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel",
            "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
            "set_recall", "set_map", "set_F", "num_nonrel_judged_ret")
#: How many values the families above give per topic.
VALUES_PER_TOPIC = 95
#: Where trec_eval divides 0 by 0 (the interpolated precision of a topic with no
#: retrieved document) pytrec_eval gives NaN and cumgain 0 (documented in docs/differences.md).
ZERO_FOR_NAN = ("iprec_at_recall_", "11pt_avg")
#: (relevance_level, judged_docs_only_flag)
SETTINGS = ((1, False), (1, True), (2, False), (2, True))

SHARED = Path(__file__).resolve().parents[2] / "shared"
REAL = SHARED / "data" / "real"

# Scores that collapse to one value as float32, so trec_eval 9.0.8 orders them by
# docno; as doubles they are distinct.
FLOAT32_TIES = (
    (1.0000000001, 1.0000000002, 1.0, 0.9999999999),
    (100000001.0, 100000000.0, 99999999.0, 100000004.0, 100000008.0),
    (16777216.0, 16777217.0, 16777218.0, 16777219.0),
    (0.30000001, 0.30000002, 0.3),
    (-1.0000000001, -1.0000000002, -1.0),
)
SCORE_PALETTES = FLOAT32_TIES + (
    (0, 1, 2, 3),                      # Python ints
    (-3, -2, -1, 0, 1),                # negative ints
    (-2.5, -1.0, -0.0, 0.0, 0.5),      # negative floats, -0.0 == 0.0
    (0.5,),                            # one score: everything tied
    (1e-45, 1e-46, 0.0, 3e-39),        # float32 subnormals and underflow
)
# Docids whose byte order differs from numeric, case-folded or UTF-16 order.
TRICKY_DOCIDS = ("", "d1", "d2", "d9", "d10", "d11", "d100", "D1", "D2", "1", "2", "9", "10",
                 "01", "100", "a", "b", "Z", "z", "x#1", "x-1", "x_1", "é", "e\u0301", "ß",
                 "日本", "日", "\U0001F600", "\uff21", "ω", "Ω", "A\u00e9", "Ae")
TOPIC_IDS = ("1", "2", "10", "9", "q1", "Q1", "é", "日本", "\U0001F600")


class _Tally:
    """How many values were compared and how many were bit-identical, per source."""

    def __init__(self):
        self.compared = collections.Counter()
        self.exact = collections.Counter()
        self.documented = collections.Counter()

    def report(self) -> str:
        lines = ["pytrec_eval differential: values compared / bit-identical / NaN in "
                 "pytrec_eval, 0 in cumgain (0 / 0)"]
        for key in sorted(self.compared):
            lines.append(f"  {key:<34} {self.compared[key]:>9} / {self.exact[key]:>9} / "
                         f"{self.documented[key]:>5}")
        total, exact = sum(self.compared.values()), sum(self.exact.values())
        lines.append(f"  {'total':<34} {total:>9} / {exact:>9} / "
                     f"{sum(self.documented.values()):>5}")
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


def _family(name: str) -> str:
    head, _, tail = name.rpartition("_")
    return head if head and tail.isdigit() else name


def _oracle(qrels: dict, run: dict, measures=MEASURES, relevance_level=1, judged_only=False):
    """pytrec_eval's per-topic values, after refusing the inputs that crash it."""
    for topic, judgments in qrels.items():
        assert not judgments or max(judgments.values()) >= 0, (
            f"test bug: topic {topic!r} has only negative judgments (pytrec_eval segfaults)")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level,
                                               judged_only)
    return evaluator.evaluate(run)


def _compat(qrels, run, measures=MEASURES, relevance_level=1, judged_only=False):
    return ours.RelevanceEvaluator(qrels, set(measures), relevance_level,
                                   judged_only).evaluate(run)


def _evaluator(qrels, run, measures=MEASURES, relevance_level=1, judged_only=False):
    """cumgain.evaluate as pytrec_eval computes: float32 scores, 9.0.8's recall cut-offs
    (text measures, which pytrec_eval gives as 0.0, compared as 0.0)."""
    result = evaluate(qrels, run, list(measures), relevance_level=relevance_level,
                      judged_only=judged_only, score_precision="float32",
                      recall_cutoffs="trec_eval9", warn=False)
    for measure in result.measures:
        if measure.kind == "text":
            result.values[measure.name] = np.zeros(len(result.topics))
    return result.per_topic()


def _shown(value, limit: int = 2000) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(value)} entries)"


def _compare(expected: dict, got: dict, source: str, qrels=None, run=None) -> int:
    """Assert ``got`` equals pytrec_eval's ``expected`` topic by topic, measure by
    measure; return the number of values compared."""
    assert set(got) == set(expected), (
        f"{source}: topics differ: only pytrec_eval {sorted(set(expected) - set(got))[:10]}, "
        f"only cumgain {sorted(set(got) - set(expected))[:10]}")
    failures, compared, documented = [], 0, 0
    for topic, values in expected.items():
        mine = got[topic]
        assert set(mine) == set(values), (
            f"{source}: topic {topic!r}: measures differ: only pytrec_eval "
            f"{sorted(set(values) - set(mine))}, only cumgain {sorted(set(mine) - set(values))}")
        for name, want in values.items():
            compared += 1
            if want != want and name.startswith(ZERO_FOR_NAN) and mine[name] == 0.0 \
                    and values.get("num_ret", 0.0) == 0.0:
                documented += 1                     # 0 / 0 in trec_eval: 0 here
                continue
            if not (type(mine[name]) is float and mine[name] == want):
                failures.append((topic, name, want, mine[name]))
    TALLY.compared[source] += compared
    TALLY.exact[source] += compared - len(failures) - documented
    TALLY.documented[source] += documented
    if failures:
        lines = [f"{source}: {len(failures)} of {compared} values differ from pytrec_eval"]
        for topic, name, want, have in failures[:12]:
            line = f"  topic {topic!r} {name}: pytrec_eval {want!r}, cumgain {have!r}"
            if isinstance(have, float):
                line += f" (difference {abs(have - want):.3g})"
            lines.append(line)
        if qrels is not None:  # the input of the first failing topics, to reproduce
            for topic in dict.fromkeys(f[0] for f in failures[:3]):
                lines.append(f"  qrels[{topic!r}] = {_shown(qrels.get(topic))}")
                lines.append(f"  run[{topic!r}] = {_shown(run.get(topic))}")
        pytest.fail("\n".join(lines))
    return compared


def _equal_or_both_nan(a: dict, b: dict) -> bool:
    """Two {topic: {measure: value}} results equal, NaN equal to NaN."""
    return a.keys() == b.keys() and all(
        a[t].keys() == b[t].keys() and all(x == y or (x != x and y != y)
                                           for x, y in zip(a[t].values(), b[t].values()))
        for t in a)


def _check_both(qrels, run, source, measures=MEASURES, relevance_level=1, judged_only=False):
    """Compare the drop-in and the evaluator with pytrec_eval; return values compared."""
    expected = _oracle(qrels, run, measures, relevance_level, judged_only)
    n = _compare(expected, _compat(qrels, run, measures, relevance_level, judged_only),
                 f"{source} (compat)", qrels, run)
    n += _compare(expected, _evaluator(qrels, run, measures, relevance_level, judged_only),
                  f"{source} (evaluate)", qrels, run)
    return n


# ------------------------------------------------------------------ random inputs

def _random_docids(rng: np.random.Generator, count: int, universe: int) -> list:
    """``count`` distinct docids mixing the tricky ones with d<n> / <n> names."""
    pool = list(TRICKY_DOCIDS) + [f"d{i}" for i in range(12, universe)] + \
        [str(i) for i in range(101, 101 + universe // 2)] + \
        [f"é{i}" for i in range(universe // 4)]
    count = min(count, len(pool))
    return [pool[i] for i in rng.choice(len(pool), size=count, replace=False)]


def _random_judgments(rng, docids: list) -> dict:
    kind = rng.choice(["mixed", "mixed", "graded", "binary", "zeros", "negative-heavy",
                       "large levels"])
    if kind == "zeros":
        levels = np.zeros(len(docids), dtype=int)
    elif kind == "binary":
        levels = rng.integers(0, 2, len(docids))
    elif kind == "graded":
        levels = rng.integers(0, 5, len(docids))
    elif kind == "large levels":
        levels = rng.choice([-1, 0, 1, 5, 10, 100], len(docids))
    elif kind == "negative-heavy":
        levels = rng.choice([-2, -1, -1, 0, 1, 3], len(docids))
    else:
        levels = rng.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3, 4], len(docids))
    if len(levels) and levels.max() < 0:  # never all negative (pytrec_eval crashes)
        levels[rng.integers(len(levels))] = rng.integers(0, 3)
    return {doc: int(level) for doc, level in zip(docids, levels)}


def _random_scores(rng, n: int) -> list:
    kind = rng.integers(0, 6)
    if kind <= 2:  # a handful of values: heavy ties
        palette = SCORE_PALETTES[rng.integers(len(SCORE_PALETTES))]
        if rng.random() < 0.3:
            palette = palette + SCORE_PALETTES[rng.integers(len(SCORE_PALETTES))]
        return [palette[i] for i in rng.integers(0, len(palette), n)]
    if kind == 3:  # rounded: ties among distinct-looking floats
        return [float(x) for x in np.round(rng.normal(0, 2, n), 1)]
    if kind == 4:  # ints in a range
        return [int(x) for x in rng.integers(-5, 6, n)]
    # continuous doubles, some of them float32-equal to a neighbour
    base = rng.normal(10, 5, n)
    near = rng.random(n) < 0.3
    base[near] = np.round(base[near], 3) + rng.integers(0, 3, near.sum()) * 1e-9
    return [float(x) for x in base]


def _random_topic(rng, long: bool):
    """One topic: (judgments or None, ranking or None)."""
    n_judged = int(rng.integers(300, 700)) if long else int(rng.integers(0, 16))
    n_run = int(rng.integers(900, 1200)) if long else int(rng.integers(0, 25))
    universe = 2200 if long else 60
    judged = _random_docids(rng, n_judged, universe)
    # the run mixes judged documents with unjudged ones
    from_qrels = [d for d in judged if rng.random() < 0.6]
    taken = set(from_qrels)
    others = [d for d in _random_docids(rng, n_run, universe) if d not in taken]
    ranked = (from_qrels + others)[:max(n_run, 0)]
    rng.shuffle(ranked)
    side = rng.random()
    judgments = None if side < 0.06 else _random_judgments(rng, judged)
    ranking = None if 0.06 <= side < 0.12 else \
        dict(zip(ranked, _random_scores(rng, len(ranked))))
    return judgments, ranking


@functools.lru_cache(maxsize=None)
def _random_batch(seed: int, n_topics: int = 1000):
    """A qrels and a run of ``n_topics`` random topics (about 2% of them long)."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for t in range(n_topics):
        topic = TOPIC_IDS[t] if t < len(TOPIC_IDS) else str(1000 + t)
        judgments, ranking = _random_topic(rng, long=rng.random() < 0.02)
        if judgments is not None:
            qrels[topic] = judgments
        if ranking is not None:
            run[topic] = ranking
    return qrels, run


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("relevance_level, judged_only", SETTINGS)
@pytest.mark.parametrize("seed", range(4))
def test_random_batches_equal_pytrec_eval(seed, relevance_level, judged_only):
    qrels, run = _random_batch(seed)
    # the batch really contains what it is meant to exercise
    assert any(not j for j in qrels.values())                         # empty qrels topics
    assert any(j and max(j.values()) == 0 for j in qrels.values())    # judged all 0
    assert any(j and min(j.values()) < 0 for j in qrels.values())     # negative judgments
    assert any(r == {} for r in run.values())                         # empty rankings
    assert set(qrels) - set(run) and set(run) - set(qrels)            # one side only
    assert any(len(r) >= 1000 for r in run.values())                  # beyond P_1000
    expected = _oracle(qrels, run, MEASURES, relevance_level, judged_only)
    assert len(expected) > 700
    n = _compare(expected, _compat(qrels, run, MEASURES, relevance_level, judged_only),
                 "random batches (compat)", qrels, run)
    n += _compare(expected, _evaluator(qrels, run, MEASURES, relevance_level, judged_only),
                  "random batches (evaluate)", qrels, run)
    assert n == 2 * len(expected) * VALUES_PER_TOPIC


# Hypothesis: small cases that shrink to a minimal counter-example.
_docids = st.sampled_from(TRICKY_DOCIDS)
_scores = st.one_of(
    st.sampled_from([s for palette in SCORE_PALETTES for s in palette]),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
)
_topic = st.tuples(
    st.sampled_from(["both", "both", "both", "qrels only", "run only"]),
    st.dictionaries(_docids, st.sampled_from([-2, -1, 0, 0, 1, 2, 3, 4]), max_size=10),
    st.dictionaries(_docids, _scores, max_size=14),
)


@st.composite
def _cases(draw):
    topics = draw(st.dictionaries(st.sampled_from(TOPIC_IDS), _topic, min_size=1, max_size=4))
    qrels, run = {}, {}
    for topic, (sides, judgments, ranking) in topics.items():
        if sides != "run only":
            if judgments and max(judgments.values()) < 0:
                judgments = dict(judgments)
                judgments[next(iter(judgments))] = 0  # pytrec_eval crashes on all-negative
            qrels[topic] = judgments
        if sides != "qrels only":
            run[topic] = ranking
    return qrels, run, draw(st.sampled_from(SETTINGS))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@given(_cases())
def test_hypothesis_cases_equal_pytrec_eval(case):
    qrels, run, (relevance_level, judged_only) = case
    _check_both(qrels, run, "hypothesis", MEASURES, relevance_level, judged_only)


def test_degenerate_inputs_give_no_topics_like_pytrec_eval():
    for qrels, run in (({"a": {"d1": 1}}, {"b": {"d1": 1.0}}),    # no common topic
                       ({"a": {"d1": 1}}, {}), ({}, {"b": {"d1": 1.0}}), ({}, {}),
                       ({"a": {}}, {"a": {}}), ({"a": {}}, {"a": {"d1": 2.0}})):
        assert _oracle(qrels, run) == {}
        assert _compat(qrels, run) == {}
        assert _evaluator(qrels, run) == {}
    # an empty ranking is evaluated, as a ranking that retrieved nothing. Not against
    # pytrec_eval: 0.5.11 reads memory it did not set there (num_rel and gm_map of
    # topic "a" come out 0 with one measure per evaluator, 1 and log(1e-5) with all of
    # them), and with all of them at once it segfaulted on this machine (2026-11-27,
    # in some processes); see docs/differences.md
    qrels, run = {"a": {"d1": 1}, "b": {}}, {"a": {}, "b": {"d1": 1.0}}
    compat, evaluated = _compat(qrels, run), _evaluator(qrels, run)
    assert set(compat) == {"a"} and _compare(compat, evaluated, "empty ranking", qrels,
                                             run) == VALUES_PER_TOPIC
    values = compat["a"]
    assert (values["num_rel"], values["num_ret"], values["num_rel_ret"]) == (1, 0, 0)
    assert values["gm_map"] == math.log(0.00001)
    assert all(values[name] == 0 for name in values if name not in (
        "num_rel", "num_q", "gm_map", "gm_bpref", "runid"))


def test_float32_ties_are_broken_by_docno_descending():
    """The float32 trap itself (trec_eval.md 3.2): as doubles d1 ranks first, as
    float32 the scores tie and d2 (greater docno) ranks first. A float64 evaluator
    would give recip_rank 1 here."""
    qrels = {"q": {"d1": 1, "d2": 0}, "r": {"a": 1, "z": 0}}
    run = {"q": {"d1": 1.000000002, "d2": 1.000000001}, "r": {"a": 100000001.0, "z": 100000000.0}}
    expected = _oracle(qrels, run, ["recip_rank"])
    assert expected == {"q": {"recip_rank": 0.5}, "r": {"recip_rank": 0.5}}
    _check_both(qrels, run, "hand-written", ["recip_rank", "ndcg", "map"])
    as_doubles = evaluate(qrels, run, ["recip_rank"], score_precision="float64", warn=False)
    assert as_doubles.per_topic() == {"q": {"recip_rank": 1.0}, "r": {"recip_rank": 1.0}}


def test_gm_map_is_libm_log_of_ap():
    """Smallest case found where numpy's SIMD np.log (AVX-512) is 1 ulp off libm's log,
    which trec_eval uses: AP = 0.25366300366300365 (13 relevant, found at ranks 2, 3,
    4, 6, 7). pytrec_eval gives -1.3717486501175118; np.log -1.371748650117512."""
    qrels = {"q": {f"r{i:02d}": 1 for i in range(13)}}
    ranking = ["n1", "r00", "r01", "r02", "n2", "r03", "r04"]
    run = {"q": {doc: float(7 - i) for i, doc in enumerate(ranking)}}
    expected = _oracle(qrels, run, ["map", "gm_map"])
    assert expected["q"]["gm_map"] == math.log(expected["q"]["map"]) == -1.3717486501175118
    _check_both(qrels, run, "hand-written", ["map", "gm_map"])


def test_measure_spellings_and_nicknames_equal_pytrec_eval():
    qrels, run = _random_batch(7, 60)
    for spelling in (["P_5"], ["P.5,10"], ["P.10,5"], ["ndcg_cut.10"], ["ndcg_cut_10"],
                     ["ndcg_cut.3,2"], ["recall.1000"], ["map_cut.5,100"], ["success.1"],
                     ["P.5", "P.10"], ["P.10", "P_10"], ["recall_7", "ndcg_cut_1"]):
        _check_both(qrels, run, "spellings", spelling)
    for spelling in (["iprec_at_recall.0.25,0.5"], ["iprec_at_recall_0.10"],
                     ["Rprec_mult.0.5,1.5"], ["relative_P.3"], ["ndcg_cut_20,4"]):
        _check_both(qrels, run, "spellings", spelling)
    # pytrec_eval's own readings: a list of parameters named without it (trec_eval names
    # it with it), P and P_5 merged into P_5 alone. (utility.2,-1,0,0 is not here:
    # pytrec_eval reads it as utility.2 and returns 0.0 for the one coefficient.)
    for spelling in (["11pt_avg.0.2,0.5,0.8"], ["set_F.0.5"], ["relstring.5"], ["P_5", "P"]):
        _compare(_oracle(qrels, run, spelling), _compat(qrels, run, spelling),
                 "spellings (compat)", qrels, run)
    for nickname in ("official", "all_trec", "set"):
        expected = _oracle(qrels, run, [nickname])
        got = _compat(qrels, run, [nickname])
        assert set(got) == set(expected) and len(got) > 30
        _compare(expected, got, "nicknames", qrels, run)


def test_qrels_are_read_when_the_evaluator_is_built_like_pytrec_eval():
    """Both libraries read the qrels once, in the constructor: an evaluation does not
    read them again, so judgments changed or added afterwards are not seen."""
    batch, run = _random_batch(5, 60)
    qrels = {topic: dict(judgments) for topic, judgments in batch.items()}  # mutated below
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    mine = ours.RelevanceEvaluator(qrels, set(MEASURES))
    before = theirs.evaluate(run)
    topic = next(t for t in sorted(qrels) if len(qrels[t]) > 1 and t in run)
    qrels[topic].update(dict.fromkeys(qrels[topic], 0))   # in place
    qrels[topic]["a new document"] = 3
    qrels[next(t for t in run if t not in qrels)] = {"x": 1}
    after = theirs.evaluate(run)
    assert _equal_or_both_nan(after, before)
    for _ in range(2):                      # an evaluator serves any number of runs
        _compare(after, mine.evaluate(run), "qrels read once (compat)", qrels, run)


# ------------------------------------------------------------------ all-negative topics

@pytest.mark.parametrize("relevance_level, judged_only", SETTINGS)
def test_all_negative_topics_score_zero_without_crashing(relevance_level, judged_only):
    """pytrec_eval crashes on these (so it is not called with them); cumgain scores
    them 0 wherever they come in the topic order, and they do not disturb the others."""
    normal_qrels, normal_run = _random_batch(11, 40)
    negative_qrels = {"0": {"d1": -1, "d2": -2}, "5": {"x": -2},
                      "zzz": {"d1": -1, "d3": -1, "d4": -2}}
    negative_run = {"0": {"d1": 3.0, "d2": 2.0, "d9": 1.0},
                    "5": {f"d{i}": float(i) for i in range(100)}, "zzz": {}}
    qrels = {**negative_qrels, **normal_qrels}
    run = {**negative_run, **normal_run}
    for source, result in (
            ("compat", _compat(qrels, run, MEASURES, relevance_level, judged_only)),
            ("evaluate", _evaluator(qrels, run, MEASURES, relevance_level, judged_only))):
        for topic in negative_qrels:
            values = result[topic]
            assert len(values) == VALUES_PER_TOPIC
            retrieved = 0 if judged_only else len(negative_run[topic])
            assert values.pop("num_q") == 1.0
            assert values.pop("num_ret") == retrieved
            assert values.pop("gm_map") == values.pop("gm_bpref") == math.log(1e-5)
            assert values.pop("utility") == -retrieved    # every retrieved one non-relevant
            assert values == dict.fromkeys(values, 0.0), (source, topic, values)
        expected = _oracle(normal_qrels, normal_run, MEASURES, relevance_level, judged_only)
        _compare(expected, {t: result[t] for t in expected}, f"all-negative neighbours ({source})",
                 qrels, run)
        assert set(result) - set(expected) == set(negative_qrels)


# ------------------------------------------------------------------ helpers of the module

def test_supported_measures():
    ours_set, theirs = set(ours.supported_measures), set(pytrec_eval.supported_measures)
    assert set(MEASURES) <= ours_set and set(MEASURES) <= theirs
    # every one of pytrec_eval's measures, and trec_eval 10.0's measures over a ranking
    # that 9.0.8 (inside pytrec_eval) lacks or does not offer
    assert theirs <= ours_set
    assert ours_set - theirs == {"dcg", "ideal_dcg", "rbp", "rbp_resid", "unj", "yaap"}
    assert set(ours.supported_nicknames) <= set(pytrec_eval.supported_nicknames)
    for name, members in ours.supported_nicknames.items():
        assert set(members) == set(pytrec_eval.supported_nicknames[name]), name


def test_compute_aggregated_measure_equals_pytrec_eval():
    qrels, run = _random_batch(3, 80)
    per_topic = _oracle(qrels, run)
    rng = np.random.default_rng(5)
    names = sorted(next(iter(per_topic.values())))
    assert {"num_ret", "gm_map", "map", "ndcg_cut_10"} <= set(names)
    for name in names:
        values = [per_topic[topic][name] for topic in sorted(per_topic)]
        for sample in (values, values[:1], list(rng.permutation(values))[:7]):
            want = pytrec_eval.compute_aggregated_measure(name, sample)
            have = ours.compute_aggregated_measure(name, sample)
            assert type(have) is float and (have == want or have != have and want != want), \
                (name, have, want)
    for name, values in (("num_rel", [3.0, 0.0, 5.0]), ("gm_map", [-0.1, -11.512925464970229]),
                         ("P_10", [0.1, 0.2, 0.7]), ("gm_bpref", [0.0, -1.0])):
        assert ours.compute_aggregated_measure(name, values) == \
            pytrec_eval.compute_aggregated_measure(name, values)
    assert ours.compute_aggregated_measure("num_ret", [1.0, 2.0]) == 3.0   # a sum
    assert ours.compute_aggregated_measure("gm_map", [0.0, math.log(0.25)]) == \
        pytest.approx(0.5, rel=1e-15)                                        # a geometric mean


def _same_parse(parse_ours, parse_theirs, lines, value_type):
    want = parse_theirs(iter(lines))
    have = parse_ours(iter(lines))
    assert {k: dict(v) for k, v in have.items()} == {k: dict(v) for k, v in want.items()}
    assert list(have) == list(want)                                    # topic order
    for topic in want:
        assert list(have[topic]) == list(want[topic])                  # document order
        assert all(type(x) is value_type for x in have[topic].values())
    return have


def test_parse_qrel_and_parse_run_equal_pytrec_eval():
    qrels_lines = ["1 0 d1 1\n", "1\t0\td2\t0\n", "10  Q0  d10  -2\r\n", "2 4.5 é 3\n",
                   "1 0 \U0001F600 2\n", "2 0 d1 -1\n"]
    run_lines = ["1 Q0 d1 1 1.5 tag\n", "1\tQ0\td2\t2\t-0.25\ttag\n", "10 Q0 d10 1 7 t\r\n",
                 "2 Q0 é 3 1e-3 run\n", "2 Q0 d1 1 100000001.0 run\n", "2 Q0 x 2 inf run\n"]
    qrels = _same_parse(ours.parse_qrel, pytrec_eval.parse_qrel, qrels_lines, int)
    run = _same_parse(ours.parse_run, pytrec_eval.parse_run, run_lines, float)
    assert qrels["10"]["d10"] == -2 and run["2"]["é"] == 1e-3
    _check_both({k: v for k, v in qrels.items() if max(v.values()) >= 0}, run, "parsed inline")


def test_parse_real_files_like_pytrec_eval():
    if not REAL.is_dir():
        pytest.skip(f"{REAL} is absent")
    for path, parse_ours, parse_theirs, value_type in (
            (REAL / "qrels" / "qrels.covid-complete.txt", ours.parse_qrel,
             pytrec_eval.parse_qrel, int),  # iter column "0.5", two -1 judgments
            (REAL / "qrels" / "qrels.dl19-passage.txt", ours.parse_qrel,
             pytrec_eval.parse_qrel, int),
            (REAL / "runs" / "run.msmarco-v1-passage.bm25-default.dl19.txt", ours.parse_run,
             pytrec_eval.parse_run, float),
            (REAL / "runs" / "robust03" / "input.humR03dc.gz", ours.parse_run,
             pytrec_eval.parse_run, float)):
        with _open(path) as lines:
            text = list(lines)
        parsed = _same_parse(parse_ours, parse_theirs, text, value_type)
        assert sum(len(v) for v in parsed.values()) == len(text)


@pytest.mark.parametrize("bad", ["ndcg_cut.abc", "P.0", "P_0", "recall.-5", "map.5",
                                 "mapp", "ndgc_cut_10", "", "ndcg.x", "ndcg.1=", "success.0",
                                 "P.", "bpref.2", "map_avgjg"])
def test_malformed_measure_raises_value_error(bad):
    """pytrec_eval aborts the process on these (never called here); the drop-in raises
    a ValueError when the evaluator is built, and so does the evaluator."""
    qrels, run = {"1": {"d1": 1}}, {"1": {"d1": 1.0}}
    with pytest.raises(ValueError):
        ours.RelevanceEvaluator(qrels, {bad})
    with pytest.raises(ValueError):
        ours.RelevanceEvaluator(qrels, {"map", bad})
    with pytest.raises(ValueError):
        evaluate(qrels, run, ["map", bad], score_precision="float32", warn=False)
    assert _compat(qrels, run, ["map"]) == {"1": {"map": 1.0}}  # the evaluator is not broken


def test_parameters_are_merged_as_pytrec_eval_merges_them():
    """pytrec_eval merges each measure's parameters into one set before trec_eval reads
    them: P.5,5 is P_5 (trec_eval itself refuses duplicate cut-offs), P with P_5 is P_5
    alone, P_5 with P.10 both."""
    qrels, run = {"1": {"d1": 1, "d2": 0}}, {"1": {"d1": 1.0, "d2": 2.0}}
    for measures in ({"P.5,5"}, {"P", "P_5"}, {"P_5", "P.10"}, {"ndcg_cut_20,4"}):
        assert _compat(qrels, run, measures) == _oracle(qrels, run, measures)
    with pytest.raises(ValueError, match="duplicate cut-offs"):
        evaluate(qrels, run, ["P.5,5"], warn=False)


def test_empty_measure_set_gives_the_evaluated_topics():
    """pytrec_eval returns {qid: {}} for each evaluated topic when no measure is asked."""
    qrels, run = {"1": {"d1": 1}, "2": {"d2": 1}, "3": {}}, {"1": {"d1": 1.0}, "3": {"x": 1.0}}
    assert _compat(qrels, run, set()) == _oracle(qrels, run, set()) == {"1": {}}
    assert ours.RelevanceEvaluator(qrels, set()).evaluate({}) == {}


def test_gain_tables_work_where_pytrec_eval_aborts():
    """pytrec_eval turns ndcg.1=3,2=9 into ndcg.1 and aborts; the drop-in computes it
    under trec_eval's name (the name it prints is not fed back to the parser)."""
    qrels, run = {"1": {"a": 1, "b": 2, "c": 0}}, {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    got = _compat(qrels, run, {"ndcg.1=3,2=9", "map"})
    ideal = 9 + 3 / math.log2(3)
    assert got == {"1": {"ndcg_1=3,2=9": (3 + 9 / math.log2(3)) / ideal, "map": 1.0}}


def test_measures_given_as_one_string_raise_value_error():
    with pytest.raises(ValueError):
        ours.RelevanceEvaluator({"1": {"d1": 1}}, "map")  # not a collection of names


# ------------------------------------------------------------------ real data

def _open(path: Path):
    return gzip.open(path, "rt") if path.suffix == ".gz" else open(path)


@functools.lru_cache(maxsize=None)
def _load(path: Path, kind: str):
    parse = pytrec_eval.parse_qrel if kind == "qrels" else pytrec_eval.parse_run
    with _open(path) as lines:
        return dict(parse(lines))


def _real(name: str) -> Path:
    if not REAL.is_dir():
        pytest.skip(f"{REAL} is absent")
    path = REAL / name
    assert path.exists(), f"{path} is missing from the shared data"
    return path


@pytest.mark.parametrize("qrels_name, run_name", [
    ("qrels.dl19-passage.txt", "run.msmarco-v1-passage.bm25-default.dl19.txt"),
    ("qrels.beir-v1.0.0-trec-covid.test.txt", "run.beir.bm25-flat.trec-covid.txt"),
    ("qrels.covid-complete.txt", "run.beir.bm25-flat.trec-covid.txt"),
])
@pytest.mark.parametrize("relevance_level, judged_only", SETTINGS)
def test_real_runs_equal_pytrec_eval(qrels_name, run_name, relevance_level, judged_only):
    qrels = _load(_real(f"qrels/{qrels_name}"), "qrels")
    run = _load(_real(f"runs/{run_name}"), "run")
    n = _check_both(qrels, run, "real DL19 / TREC-COVID", MEASURES, relevance_level,
                    judged_only)
    assert n == 2 * VALUES_PER_TOPIC * len(set(qrels) & set(run)) and n > 4000


ROBUST_RUNS = ("InexpC2", "MU03rob01", "NLPR03vb10", "SABIR03BASE", "Sel50", "THUIRr0301",
               "UAmsT03RDesc", "UIUC03Rd1", "VTcdhgp1", "aplrob03a", "fub03IeOLKe3",
               "humR03dc", "oce03noXbmD", "pircRBa1", "rutcor03100", "uic0301", "uwmtCR0")
# float32-sensitive scores (InexpC2, oce03noXbmD), negative (UIUC03Rd1) and int (uic0301)
ROBUST_DEEP = ("InexpC2", "oce03noXbmD", "UIUC03Rd1", "uic0301")


@pytest.mark.slow
def test_all_robust03_runs_equal_pytrec_eval():
    """All 17 runs, every measure, default settings, one evaluator of each library
    reused across the runs (as users do)."""
    qrels = _load(_real("qrels/qrels.robust03.txt"), "qrels")
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    mine = ours.RelevanceEvaluator(qrels, set(MEASURES))
    found = sorted(p.name for p in (REAL / "runs" / "robust03").glob("input.*.gz"))
    assert found == sorted(f"input.{name}.gz" for name in ROBUST_RUNS)
    total = expected_total = 0
    for name in ROBUST_RUNS:
        run = _load(_real(f"runs/robust03/input.{name}.gz"), "run")
        total += _compare(theirs.evaluate(run), mine.evaluate(run), "real Robust03 (compat)",
                          qrels, run)
        expected_total += VALUES_PER_TOPIC * len(set(qrels) & set(run))
    assert total == expected_total > 17 * 50 * VALUES_PER_TOPIC


@pytest.mark.parametrize("relevance_level, judged_only", [(1, True), (2, False), (2, True)])
def test_robust03_float32_sensitive_runs_other_settings(relevance_level, judged_only):
    qrels = _load(_real("qrels/qrels.robust03.txt"), "qrels")
    for name in ROBUST_DEEP[:2]:
        run = _load(_real(f"runs/robust03/input.{name}.gz"), "run")
        _check_both(qrels, run, "real Robust03 -l/-J", MEASURES, relevance_level, judged_only)


def test_robust03_evaluator_default_settings():
    qrels = _load(_real("qrels/qrels.robust03.txt"), "qrels")
    for name in ROBUST_DEEP:
        run = _load(_real(f"runs/robust03/input.{name}.gz"), "run")
        _compare(_oracle(qrels, run), _evaluator(qrels, run), "real Robust03 (evaluate)",
                 qrels, run)


def test_float32_matters_on_robust03():
    """Guard that the real data exercises the float32 rule: on oce03noXbmD a float64
    ranking gives different values from pytrec_eval."""
    qrels = _load(_real("qrels/qrels.robust03.txt"), "qrels")
    run = _load(_real("runs/robust03/input.oce03noXbmD.gz"), "run")
    expected = _oracle(qrels, run, ["map", "ndcg"])
    as_doubles = evaluate(qrels, run, ["map", "ndcg"], score_precision="float64",
                          warn=False).per_topic()
    differing = [(t, m) for t in expected for m in expected[t]
                 if expected[t][m] != as_doubles[t][m]]
    assert differing, "expected float64 ranking to differ from pytrec_eval on some topic"


def test_utility_keeps_its_four_coefficients_in_order():
    """pytrec_eval merges a measure's parameters as a set: {"utility.2,1,0,0"} became
    utility.0,1,2 (three coefficients: an error). The drop-in merges cut-offs only."""
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}}
    run = {"q1": {"a": 0.3, "b": 0.9, "c": 0.5, "d": 0.1}}
    got = ours.RelevanceEvaluator(qrels, {"utility.2,1,0,0"}).evaluate(run)
    expected = evaluate(qrels, run, ["utility.2,1,0,0"]).values["utility_2,1,0,0"]
    assert got == {"q1": {"utility": float(expected[0])}}
    assert got["q1"]["utility"] == 2 * 2 + 1 * 2      # rel_ret 2, nonrel_ret 2 (b, d)
    both = ours.RelevanceEvaluator(qrels, {"P_5", "P.10", "set_F.0.5"}).evaluate(run)
    assert sorted(both["q1"]) == ["P_10", "P_5", "set_F"]
