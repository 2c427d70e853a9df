"""SPEC.md section 3: the paper's worked examples, to its 2 decimals and as formulas.

The paper rounds CG', DCG' and nCG' to 2 decimals but truncates DCG_I'
(10.5278 prints as 10.52, 11.2174 as 11.21), so each check uses the paper's own rule.
"""
import math

import numpy as np
import pytest

import cgcore
import cumgain
from cumgain.reference import kernels as reference

G = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
I = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]
log2 = math.log2


def truncate2(values):
    return np.floor(np.asarray(values) * 100 + 1e-9) / 100


def test_cg_prime():
    assert cumgain.cg(G).tolist() == [3, 5, 8, 8, 8, 9, 11, 13, 16, 16]


def test_dcg_prime_b2_paper_decimals():
    paper = [3, 5, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61]
    assert cumgain.dcg(G, base=2).round(2).tolist() == paper


def test_dcg_prime_b2_formula():
    expected = np.cumsum([3, 2, 3 / log2(3), 0, 0, 1 / log2(6), 2 / log2(7), 2 / log2(8),
                          3 / log2(9), 0])
    np.testing.assert_allclose(cumgain.dcg(G, base=2), expected, rtol=0, atol=1e-14)


def test_ideal_vector_from_recall_base():
    shuffled = [1, 0, 3, 2, 1, 0, 2, 3, 1, 0, 2, 1, 3]
    assert cumgain.ideal_gains(shuffled, depth=13).tolist() == I


def test_ideal_cg_prime():
    assert cumgain.cg(cumgain.ideal_gains(I, depth=13)).tolist() == \
        [3, 6, 9, 11, 13, 15, 16, 17, 18, 19, 19, 19, 19]


def test_ideal_dcg_prime_paper_truncates():
    paper = [3, 6, 7.89, 8.89, 9.75, 10.52, 10.88, 11.21, 11.53, 11.83, 11.83, 11.83]
    ideal_dcg = cumgain.dcg(cumgain.ideal_gains(I, depth=12), base=2)
    assert truncate2(ideal_dcg).tolist() == paper


def test_ideal_dcg_prime_formula():
    terms = [3, 3, 3 / log2(3), 2 / 2, 2 / log2(5), 2 / log2(6), 1 / log2(7), 1 / 3,
             1 / log2(9), 1 / log2(10), 0, 0]
    np.testing.assert_allclose(cumgain.dcg(cumgain.ideal_gains(I, depth=12)),
                               np.cumsum(terms), rtol=0, atol=1e-14)


def test_ncg_prime():
    paper = [1, 0.83, 0.89, 0.73, 0.62, 0.6, 0.69, 0.76, 0.89, 0.84]
    result = cumgain.ncg(G, I)
    assert result.round(2).tolist() == paper
    expected = np.array([3, 5, 8, 8, 8, 9, 11, 13, 16, 16]) / \
        np.array([3, 6, 9, 11, 13, 15, 16, 17, 18, 19])
    np.testing.assert_array_equal(result, expected)


def test_slides_ndcg_0_9203():
    # d3(2), d2(1), d4(2), d1(0) against the ideal d4(2), d3(2), d2(1), d1(0), b = 2
    value = cumgain.ndcg_at([2, 1, 2, 0], [0, 1, 2, 2], 4)
    assert round(value, 4) == 0.9203
    assert value == pytest.approx((2 + 1 + 2 / log2(3)) / (2 + 2 + 1 / log2(3)), abs=1e-15)
    assert cumgain.ndcg([2, 1, 2, 0], [0, 1, 2, 2])[3] == value
    assert cumgain.ndcg_at([2, 2, 1, 0], [0, 1, 2, 2], 4) == 1.0


@pytest.mark.parametrize("kernels", [cgcore, reference], ids=["compiled", "reference"])
def test_both_backends_reproduce_dcg_prime(kernels):
    gains = np.array(G, dtype=float)
    offsets = np.array([0, len(G)], dtype=np.int64)
    divisors = kernels.discount_divisors(kernels.DISCOUNT_TOIS, 2.0, 10)
    result = kernels.dcg_vectors(gains, offsets, divisors, 10)[0]
    assert result.round(2).tolist() == [3, 5, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61]


def test_tois_and_note_rules_differ_exactly_at_ranks_2_to_9_for_b10():
    tois = cumgain.discount_divisors("tois", base=10, depth=20)
    note = cumgain.discount_divisors("note", base=10, depth=20)
    differs = np.flatnonzero(tois != note) + 1
    assert differs.tolist() == list(range(2, 10))
    assert (tois[:9] == 1).all() and note[0] == 1
    np.testing.assert_array_equal(note[1:], [math.log10(i) for i in range(2, 21)])
    # and so do the DCG vectors of a list with gain at every rank
    gains = [1] * 20
    tois_dcg = cumgain.dcg(gains, discount="tois", base=10)
    note_dcg = cumgain.dcg(gains, discount="note", base=10)
    assert tois_dcg[0] == note_dcg[0]
    assert (note_dcg[1:9] > tois_dcg[1:9]).all()   # log10(i) < 1 boosts ranks 2..9


def test_both_rules_agree_for_b2():
    np.testing.assert_array_equal(cumgain.dcg(G, discount="tois", base=2),
                                  cumgain.dcg(G, discount="note", base=2))


def test_trec_eval_discount_is_log2_of_rank_plus_one():
    np.testing.assert_array_equal(cumgain.discount_divisors("trec_eval", depth=5),
                                  [math.log2(i + 1) for i in range(1, 6)])
    assert cumgain.dcg_at([3, 2, 1], 3, discount="trec_eval") == 3 + 2 / log2(3) + 1 / 2


def test_none_and_rank_discounts():
    assert cumgain.dcg(G, discount="none").tolist() == cumgain.cg(G).tolist()
    np.testing.assert_allclose(cumgain.dcg([1, 1, 1, 1], discount="rank"),
                               np.cumsum([1, 1 / 2, 1 / 3, 1 / 4]), rtol=0, atol=1e-15)


def test_caller_given_discount_array():
    divisors = [1.0, 2.0, 4.0]
    assert cumgain.dcg([4, 4, 4], discount=divisors).tolist() == [4, 6, 7]


def test_avg_pos_of_ncg_prime():
    ncg = cumgain.ncg(G, I)
    assert cumgain.avg_pos(ncg, 10) == pytest.approx(ncg.sum() / 10, abs=1e-15)
    assert cumgain.avg_pos(ncg, 1) == 1.0
