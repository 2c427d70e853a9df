"""ranx's metric names (``ndcg@10``, ``map@100-l2``, ``hit_rate@5``, ``f1@10``, ...) read
as the same measures, with ranx's values: ranx drops the judgments below its relevance
level (``-lN``, default 1) from gains and ideal alike, which the gains ``identity>=N`` /
``exponential>=N`` give. Compared per topic with ranx itself on rankings without ties
(ranx orders ties by numba's unstable quicksort, roughly input order)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cumgain
from cumgain.measures import parse_measure

ranx = pytest.importorskip("ranx")

NAMES = ["ndcg@10", "ndcg@10-l2", "ndcg_burges@5", "ndcg_burges@10-l2", "dcg@10",
         "dcg_burges@20", "map@100", "map", "map-l2", "mrr@10", "mrr", "mrr-l3", "hits@5",
         "hits", "hit_rate@5", "hit_rate", "precision@10", "precision", "precision@3-l2",
         "recall@20", "recall-l2", "recall@1000", "f1@10", "f1", "f1@5-l2", "r-precision",
         "r-precision-l2", "ndcg", "ndcg_burges", "dcg", "rbp.95", "rbp.8-l2", "rbp@5"]
REAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "real"


def _collection(seed: int, topics: int = 40):
    """Graded judgments 0..3 (some topics with none relevant), rankings of distinct
    scores mixing judged and unjudged documents, some shorter than the cut-offs."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for t in range(topics):
        docs = [f"d{i}" for i in rng.choice(400, size=80, replace=False)]
        judged = int(rng.integers(1, 40))
        levels = rng.choice([0, 0, 0, 1, 2, 3], size=judged) if t % 7 else np.zeros(judged)
        qrels[f"q{t}"] = {d: int(level) for d, level in zip(docs[:judged], levels)}
        ranked = docs[int(rng.integers(0, judged)):int(rng.integers(judged, 80))] + \
            [f"x{i}" for i in range(int(rng.integers(0, 20)))]
        scores = rng.permutation(len(ranked)) + rng.random()
        run[f"q{t}"] = {d: float(s) for d, s in zip(ranked, scores)}
    return qrels, run


def _compare(qrels: dict, run: dict, names=NAMES) -> int:
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names, return_mean=False)
    ours = cumgain.evaluate(qrels, run, names, ties="input_order", warn=False)
    order = [ours.topics.index(topic) for topic in ranx.Qrels(qrels).keys()]
    compared = 0
    for name in names:
        expected = np.asarray(theirs[name], dtype=np.float64)
        got = ours.values[name][order]
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15, err_msg=name)
        compared += len(got)
    return compared


@pytest.mark.parametrize("seed", range(3))
def test_generated_collections_equal_ranx(seed):
    qrels, run = _collection(seed)
    assert _compare(qrels, run) == len(NAMES) * 40


@pytest.mark.slow
@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/data/real is absent")
def test_dl19_equals_ranx():
    """DL19 passage, BM25: the run's own order (its scores tie in 104 groups), given to
    both as distinct scores."""
    qrels = cumgain.trec_io.load_qrels(REAL / "qrels" / "qrels.dl19-passage.txt").to_dict()
    loaded = cumgain.trec_io.load_run(REAL / "runs" /
                                      "run.msmarco-v1-passage.bm25-default.dl19.txt")
    ranking = cumgain.rank(qrels, loaded)       # trec_eval's order: score, then docno
    run = {}
    for t, topic in enumerate(ranking.topics):
        start, stop = loaded.offsets[loaded.topics.index(topic):][:2]
        docnos = sorted(loaded.docnos[start:stop].tolist(),
                        key=lambda d, s=dict(zip(loaded.docnos[start:stop],
                                                 loaded.scores[start:stop])): (-s[d], d))
        run[topic] = {d: float(len(docnos) - i) for i, d in enumerate(docnos)}
    qrels = {topic: judged for topic, judged in qrels.items() if topic in run}
    assert _compare(qrels, run) == len(NAMES) * 43


@pytest.mark.slow
def test_bpref_equals_ranx_topic_by_topic():
    """ranx 0.3.21 gives bpref 0 for most topics when it evaluates several at once (its
    one-topic result is right); compared one topic at a time."""
    qrels, run = _collection(3, topics=12)
    for topic in qrels:
        for name in ("bpref", "bpref-l2"):
            theirs = ranx.evaluate(ranx.Qrels({topic: qrels[topic]}),
                                   ranx.Run({topic: run[topic]}), name)
            ours = cumgain.evaluate({topic: qrels[topic]}, {topic: run[topic]}, [name],
                                    ties="input_order", warn=False)
            assert ours.values[name].tolist() == [theirs], (topic, name)


def test_ranx_names_are_the_same_measures():
    def key(spelling):
        (measure,) = parse_measure(spelling)
        return measure.family, measure.cutoff, measure.relevance_level, measure.gains
    assert key("ndcg@10") == ("nDCG", 10, None, "identity>=1")
    assert key("ndcg_burges@10-l2") == ("nDCG", 10, None, "exponential>=2")
    assert key("map@100-l2") == ("map_cut", 100, 2.0, None)
    assert key("hit_rate@5") == ("success", 5, 1.0, None)
    assert key("precision") == ("set_P", None, 1.0, None)
    assert key("r-precision-l2") == ("Rprec", None, 2.0, None)
    assert parse_measure("ndcg@10")[0].name == "ndcg@10"
    # a bare name trec_eval also has is trec_eval's (ranx's recall: recall-l1 or SetR)
    assert len(parse_measure("recall")) == 9
    with pytest.raises(cumgain.InputError, match="takes no cut-off"):
        parse_measure("r-precision@10")
