"""cumgain.evaluate_dense: a (n_queries, n_candidates) matrix evaluates as the qrels and
run it stands for (topic str(q), document j, lines in column order), bit for bit, under
every tie rule it takes, with padding left out by lengths or a mask; torch tensors are
read without a copy; scikit-learn's ndcg_score agrees."""
from __future__ import annotations

import numpy as np
import pytest

import cumgain
from cumgain.engine.dense import as_matrix, evaluate_dense
from cumgain.exceptions import InputError

MEASURES = ["map", "ndcg", "ndcg_cut.3,10", "P.5", "recall.10", "recip_rank", "Rprec",
            "bpref", "infAP", "num_rel_ret", "ERR@10", "RBP(p=0.8)", "RR@5",
            "nDCG@5(gains=exponential)", "Q", "success.1"]
AVERAGE = ["ndcg_cut.3,10", "P.5", "num_rel_ret", "ndcg", "recall.10"]


def _matrix(seed: int, n_rows: int = 30, n_columns: int = 17, ties: bool = True):
    rng = np.random.default_rng(seed)
    labels = rng.integers(-1, 4, (n_rows, n_columns))
    if ties:        # exact ties, and scores one ulp apart (the same key but for its
        base = rng.integers(0, 5, (n_rows, n_columns)).astype(np.float64)   # low bits)
        ulps = rng.integers(0, 3, (n_rows, n_columns))
        scores = np.nextafter(base, np.inf) * (ulps == 1) + base * (ulps != 1)
        scores[ulps == 2] = np.nextafter(np.nextafter(base[ulps == 2], 9), 9)
    else:
        scores = rng.random((n_rows, n_columns))
    return labels, scores


def _as_dicts(labels, scores, valid=None):
    """The qrels and run a matrix stands for (documents in column order)."""
    qrels, run = {}, {}
    for q in range(labels.shape[0]):
        columns = [j for j in range(labels.shape[1]) if valid is None or valid[q, j]]
        qrels[str(q)] = {f"d{j:03d}": int(labels[q, j]) for j in columns}
        run[str(q)] = {f"d{j:03d}": float(scores[q, j]) for j in columns}
    return qrels, run


def _per_topic(evaluation) -> dict:
    return {name: dict(zip(evaluation.topics, values.tolist()))
            for name, values in evaluation.values.items()}


@pytest.mark.parametrize("ties", ["input_order", "random", "average"])
@pytest.mark.parametrize("seed", range(3))
def test_the_matrix_evaluates_as_its_qrels_and_run(seed, ties):
    labels, scores = _matrix(seed)
    measures = AVERAGE if ties == "average" else MEASURES
    qrels, run = _as_dicts(labels, scores)
    expected = cumgain.evaluate(qrels, run, measures, ties=ties, seed=5, warn=False)
    got = evaluate_dense(labels, scores, measures, ties=ties, seed=5)
    assert got.topics == tuple(str(q) for q in range(labels.shape[0]))
    assert _per_topic(got) == _per_topic(expected)
    # the means add the rows in row order, evaluate's topics in byte order ("10" < "2")
    assert got.means == pytest.approx(expected.means, rel=1e-14, abs=1e-300)


@pytest.mark.parametrize("dtypes", [(np.float32, np.int32), (np.float64, np.float32),
                                    (np.int64, np.int8), (np.float16, np.bool_)])
def test_number_types(dtypes):
    labels, scores = _matrix(4, ties=False)
    labels, scores = (labels > 0).astype(dtypes[1]) if dtypes[1] is np.bool_ \
        else np.maximum(labels, 0).astype(dtypes[1]), (scores * 100).astype(dtypes[0])
    qrels, run = _as_dicts(labels.astype(np.int64), scores.astype(np.float64))
    expected = cumgain.evaluate(qrels, run, MEASURES, ties="input_order", warn=False)
    assert _per_topic(evaluate_dense(labels, scores, MEASURES)) == _per_topic(expected)


def test_padding_by_lengths_and_by_mask():
    labels, scores = _matrix(5)
    rng = np.random.default_rng(5)
    lengths = rng.integers(0, labels.shape[1] + 1, labels.shape[0])
    by_length = np.arange(labels.shape[1])[None, :] < lengths[:, None]
    mask = rng.random(labels.shape) < 0.7
    for valid, options in ((by_length, {"lengths": lengths}), (mask, {"mask": mask})):
        qrels, run = _as_dicts(labels, scores, valid)
        for ties in ("input_order", "random"):
            expected = cumgain.evaluate(
                {q: d for q, d in qrels.items() if d}, {q: d for q, d in run.items() if d},
                MEASURES, ties=ties, seed=3, warn=False)
            got = evaluate_dense(labels, scores, MEASURES, ties=ties, seed=3, **options)
            expected_values = _per_topic(expected)
            for name, values in _per_topic(got).items():
                for topic, value in values.items():     # a row without candidates:
                    assert value == expected_values[name].get(topic, value), (name, topic)
    empty = evaluate_dense([[1, 0]], [[0.5, 0.2]], ["map", "P.5"], lengths=[0])
    assert empty.values["map"].tolist() == [0.0]


def test_depth_cuts_each_row():
    labels, scores = _matrix(6, ties=False)
    qrels, run = _as_dicts(labels, scores)
    expected = cumgain.evaluate(qrels, run, MEASURES, depth=4, ties="input_order", warn=False)
    assert _per_topic(evaluate_dense(labels, scores, MEASURES, depth=4)) == _per_topic(expected)


def test_threads_give_the_same_values():
    labels, scores = _matrix(7, n_rows=20000, n_columns=12)
    one = evaluate_dense(labels, scores, MEASURES, threads=1, seed=1, ties="random")
    two = evaluate_dense(labels, scores, MEASURES, threads=2, seed=1, ties="random")
    assert _per_topic(one) == _per_topic(two)


def test_bad_input_names_the_row_and_column():
    labels, scores = _matrix(8, n_rows=3, n_columns=4)
    scores[2, 1] = np.nan
    with pytest.raises(InputError, match=r"query 2 \(row\), candidate 1 \(column\): the score is NaN"):
        evaluate_dense(labels, scores, ["map"])
    scores[2, 1], labels = 0.0, labels.astype(np.float64)
    labels[1, 3] = np.inf
    with pytest.raises(InputError, match=r"query 1 \(row\), candidate 3 .* label is inf"):
        evaluate_dense(labels, scores, ["map"])
    labels[1, 3] = 0
    with pytest.raises(InputError, match="one shape"):
        evaluate_dense(labels[:, :3], scores, ["map"])
    with pytest.raises(InputError, match=r"lengths\[0\] = 9"):
        evaluate_dense(labels, scores, ["map"], lengths=[9, 0, 1])
    with pytest.raises(InputError, match="not both"):
        evaluate_dense(labels, scores, ["map"], lengths=[1, 1, 1], mask=labels > 0)
    with pytest.raises(InputError, match="ties must be one of"):
        evaluate_dense(labels, scores, ["map"], ties="docno_desc")
    with pytest.raises(InputError, match="matrix"):
        evaluate_dense(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)), ["map"])
    with pytest.raises(InputError, match="numbers"):
        evaluate_dense(labels, np.full(scores.shape, "x"), ["map"])


def test_one_query_as_a_vector():
    assert evaluate_dense([2, 0, 1], [0.9, 0.8, 0.1], ["P_2"]).means == {"P_2": 0.5}


@pytest.mark.slow
def test_torch_tensors_are_read_in_place():
    torch = pytest.importorskip("torch")
    scores = torch.rand(50, 9, dtype=torch.float64, requires_grad=True)
    labels = torch.randint(0, 3, (50, 9))
    matrix = as_matrix(scores, "scores")
    assert matrix.ctypes.data == scores.data_ptr()          # no copy
    got = evaluate_dense(labels, scores, MEASURES)
    expected = evaluate_dense(labels.numpy(), scores.detach().numpy(), MEASURES)
    assert _per_topic(got) == _per_topic(expected)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_half_precision_tensors_with_gradients_are_read(dtype):
    """bfloat16 and float16 scores (which numpy cannot take from torch: a raw TypeError
    before) widened to float32, which holds them exactly; a tensor that requires grad
    detached (torch's own error before); the same values as the float32 numpy array."""
    torch = pytest.importorskip("torch")
    generator = torch.Generator().manual_seed(4)
    scores = torch.rand(40, 12, generator=generator).to(getattr(torch, dtype))
    scores.requires_grad_(True)
    labels = torch.randint(0, 3, (40, 12), generator=generator)
    got = evaluate_dense(labels, scores, MEASURES)
    expected = evaluate_dense(labels.numpy(), scores.detach().float().numpy(), MEASURES)
    assert _per_topic(got) == _per_topic(expected)
    assert scores.grad is None
    vectors = cumgain.ndcg(scores.detach()[0], scores.detach()[1], 5)
    assert np.array_equal(vectors, cumgain.ndcg(scores.detach()[0].float().numpy(),
                                                 scores.detach()[1].float().numpy(), 5))
    assert cumgain.dcg_at(scores[:3], 4).shape == (3,)


def test_scikit_learn_ndcg_score_agrees():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(9)
    labels, scores = rng.integers(0, 4, (500, 40)), rng.random((500, 40))   # no ties
    for k in (5, 10, None):
        name = f"ndcg_cut.{k}" if k else "ndcg"
        ours = evaluate_dense(labels, scores, [name]).means[name.replace(".", "_")]
        assert ours == pytest.approx(metrics.ndcg_score(labels, scores, k=k), rel=1e-12)


def test_exported_at_the_top():
    assert cumgain.evaluate_dense is evaluate_dense
