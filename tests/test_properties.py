"""Hypothesis properties of the vector API (SPEC.md section 3)."""
import numpy as np
from hypothesis import assume, given, strategies as st

import cumgain

levels = st.integers(0, 3)
gain_lists = st.lists(levels, min_size=1, max_size=40)
batches = st.lists(gain_lists, min_size=1, max_size=10)
discounts = st.sampled_from(["tois", "note", "trec_eval", "none", "rank"])
bases = st.floats(1.05, 20)


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50))
def test_cg_is_non_decreasing_for_non_negative_gains(gains):
    assert (np.diff(cumgain.cg(gains)) >= 0).all()


@given(gain_lists, discounts, bases)
def test_dcg_is_non_decreasing_and_at_most_cg(gains, discount, base):
    dcg = cumgain.dcg(gains, discount=discount, base=base)
    assert (np.diff(dcg) >= 0).all()
    if discount in ("tois", "rank", "none") or (discount == "note" and base <= 2):
        assert (dcg <= cumgain.cg(gains) + 1e-9).all()


@given(gain_lists, discounts, bases, st.integers(1, 60))
def test_ndcg_of_the_ideal_order_is_one_wherever_the_ideal_is_positive(
        judged, discount, base, depth):
    ideal_order = sorted(judged, reverse=True)
    vector = cumgain.ndcg(ideal_order, judged, depth, discount=discount, base=base)
    positive = cumgain.dcg(cumgain.ideal_gains(judged, depth), discount=discount, base=base) > 0
    np.testing.assert_allclose(vector[positive], 1.0, rtol=1e-12)
    assert (vector[~positive] == 0).all()
    np.testing.assert_allclose(cumgain.ncg(ideal_order, judged, depth)[positive], 1.0)


@given(gain_lists, st.integers(1, 40))
def test_very_large_base_makes_dcg_cg(gains, depth):
    np.testing.assert_array_equal(cumgain.dcg(gains, depth, discount="tois", base=1e9),
                                  cumgain.cg(gains, depth))
    # (the research note's rule does not: log_b(i) -> 0 for i >= 2 boosts those ranks)


@given(batches, st.randoms(use_true_random=False), discounts)
def test_results_do_not_depend_on_topic_order(run, rng, discount):
    judged = [sorted(row) for row in run]
    order = list(range(len(run)))
    rng.shuffle(order)
    depth = 25
    original = cumgain.ndcg(run, judged, depth, discount=discount)
    permuted = cumgain.ndcg([run[t] for t in order], [judged[t] for t in order], depth,
                            discount=discount)
    np.testing.assert_array_equal(permuted, original[order])
    at_k = cumgain.ndcg_at(run, judged, 10, discount=discount)
    np.testing.assert_array_equal(
        cumgain.ndcg_at([run[t] for t in order], [judged[t] for t in order], 10,
                        discount=discount), at_k[order])


@given(batches, st.integers(1, 30), discounts)
def test_scalar_at_k_equals_vector_component(run, k, discount):
    judged = [row[::-1] for row in run]
    np.testing.assert_array_equal(cumgain.ndcg_at(run, judged, k, discount=discount),
                                  cumgain.ndcg(run, judged, k, discount=discount)[:, k - 1])
    np.testing.assert_array_equal(cumgain.cg_at(run, k), cumgain.cg(run, k)[:, k - 1])
    np.testing.assert_array_equal(cumgain.ncg_at(run, judged, k),
                                  cumgain.ncg(run, judged, k)[:, k - 1])


@given(batches)
def test_single_and_batch_forms_agree(run):
    batch = cumgain.dcg(run, 30)
    for t, row in enumerate(run):
        np.testing.assert_array_equal(cumgain.dcg(row, 30), batch[t])


@given(batches)
def test_dense_matrix_equals_ragged_lists(run):
    width = max(len(row) for row in run)
    dense = np.zeros((len(run), width))
    for t, row in enumerate(run):
        dense[t, :len(row)] = row
    np.testing.assert_array_equal(cumgain.dcg(dense, width), cumgain.dcg(run, width))


@given(batches, st.integers(1, 20))
def test_avg_pos_is_mean_of_prefix(run, k):
    assume(k <= 30)
    vectors = cumgain.ncg(run, run, 30)
    np.testing.assert_allclose(cumgain.avg_pos(vectors, k), vectors[:, :k].mean(axis=1),
                               rtol=1e-12)
