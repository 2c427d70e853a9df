"""Thread safety: the same evaluation from 8 threads at once gives identical results.

The compiled core keeps no global mutable state (module-level tables are written once
at import; every parser, ranker and scratch buffer belongs to one call) and releases
the GIL in its long loops, so threads really do run the C code at the same time here.
Each thread's numbers must equal, bit for bit, those of the same call made alone.
"""
import threading

import numpy as np
import pytest

import cumgain
from cumgain.compat import pytrec_eval as compat
from cumgain.compat.sklearn import ndcg_score

N_THREADS = 8
MEASURES = ["map", "ndcg", "ndcg_cut_10", "P_10", "recip_rank", "Rprec", "recall_100",
            "nDCG@20(discount=tois,base=2,gains=0-1-10-100)", "avg_pos_nCG@50"]
LINEAR_MEASURES = ["ndcg", "ndcg_cut_10", "P_10", "recall_100", "avg_pos_nCG@50"]  # ties="average"


def collection(n_topics=120, depth=300, seed=7):
    """Graded qrels and a run with many tied scores, as TREC text."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(n_topics):
        judged = rng.choice(depth * 2, size=40, replace=False)
        qrels += [f"t{t} 0 d{d} {rng.integers(-1, 4)}\n" for d in judged]
        scores = rng.integers(0, 50, size=depth) / 7      # ties within every topic
        run += [f"t{t} Q0 d{d} {i + 1} {s!r} run\n" for i, (d, s) in
                enumerate(zip(rng.permutation(depth * 2)[:depth], scores.tolist()))]
    return "".join(qrels), "".join(run)


def in_threads(work, n=N_THREADS):
    """Run ``work()`` in n threads started together; return their results (raise the
    first exception)."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def target(i):
        try:
            barrier.wait()
            results[i] = work()
        except BaseException as error:     # noqa: BLE001 - re-raised in the main thread
            errors.append(error)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def assert_identical(evaluations, alone):
    for result in evaluations:
        assert result.topics == alone.topics
        for name in alone.values:
            np.testing.assert_array_equal(result.values[name], alone.values[name], err_msg=name)
            assert result.means[name] == alone.means[name]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    qrels, run = collection()
    folder = tmp_path_factory.mktemp("threads")
    (folder / "qrels").write_text(qrels)
    (folder / "run").write_text(run)
    return folder / "qrels", folder / "run"


def _parsed(parse, path):
    """pytrec_eval's parse_qrel / parse_run of a file, closed after."""
    with open(path) as lines:
        return parse(lines)


@pytest.mark.parametrize("options", [{}, {"ties": "random", "seed": 3},
                                     {"score_precision": "float32", "depth": 100},
                                     {"ties": "average", "judged_only": True}],
                         ids=["defaults", "random-ties", "float32-depth", "average-judged"])
def test_files_from_eight_threads(files, options):
    measures = LINEAR_MEASURES if options.get("ties") == "average" else MEASURES
    alone = cumgain.evaluate(*files, measures, **options)
    assert_identical(in_threads(lambda: cumgain.evaluate(*files, measures, **options)), alone)


def test_dicts_through_the_pytrec_eval_drop_in_from_eight_threads(files):
    qrels = _parsed(compat.parse_qrel, files[0])
    run = _parsed(compat.parse_run, files[1])
    evaluator = compat.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "P.5"})
    alone = evaluator.evaluate(run)
    for result in in_threads(lambda: evaluator.evaluate(run)):
        assert result == alone


def test_different_inputs_in_different_threads_do_not_mix(tmp_path):
    """Eight different collections at once: each thread gets its own answer."""
    paths = []
    for i in range(N_THREADS):
        qrels, run = collection(n_topics=30, seed=100 + i)
        (tmp_path / f"q{i}").write_text(qrels)
        (tmp_path / f"r{i}").write_text(run)
        paths.append((tmp_path / f"q{i}", tmp_path / f"r{i}"))
    alone = [cumgain.evaluate(q, r, MEASURES) for q, r in paths]
    counter = iter(range(N_THREADS))
    lock = threading.Lock()

    def work():
        with lock:
            i = next(counter)
        return i, cumgain.evaluate(*paths[i], MEASURES)

    for i, result in in_threads(work):
        assert_identical([result], alone[i])


def test_vector_kernels_from_eight_threads():
    rng = np.random.default_rng(1)
    gains = rng.integers(0, 4, size=(500, 200)).astype(float)
    judged = rng.integers(0, 4, size=(500, 300)).astype(float)

    def work():
        return (cumgain.ndcg(gains, judged, 200, discount="tois", base=2),
                cumgain.ncg_at(gains, judged, 10), cumgain.avg_pos(cumgain.cg(gains), 50))

    alone = work()
    for result in in_threads(work):
        for got, expected in zip(result, alone):
            np.testing.assert_array_equal(got, expected)


def test_sklearn_drop_in_from_eight_threads():
    rng = np.random.default_rng(2)
    y_true = rng.integers(0, 4, size=(2000, 100))
    y_score = rng.integers(0, 20, size=(2000, 100)).astype(float)   # ties
    alone = ndcg_score(y_true, y_score, k=10)
    assert in_threads(lambda: ndcg_score(y_true, y_score, k=10)) == [alone] * N_THREADS
