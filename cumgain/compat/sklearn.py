"""Drop-in replacements for scikit-learn's ``ndcg_score`` and ``dcg_score``.

``from cumgain.compat.sklearn import ndcg_score, dcg_score`` gives the
functions of ``sklearn.metrics`` with the same signatures, defaults, input
checks and results, computed by the compiled kernels of ``cgcore._dense``
(no Python loop over rows; the GIL is released). scikit-learn is not needed.

Semantics (scikit-learn's)
--------------------------
* The discount of rank ``i`` (1-based) is ``1 / log_b(i + 1)``, computed by
  the same numpy expression as scikit-learn's; it is 0 beyond rank ``k``.
* Ties in ``y_score`` are averaged (McSherry & Najork 2008): each group of
  equal scores contributes its mean gain times the sum of its ranks'
  discounts. The arithmetic follows scikit-learn's step for step, numpy's
  pairwise summation included, so the per-row values are normally
  bit-identical.
* ``ignore_ties=True`` ranks by ``np.argsort(y_score)[:, ::-1]``, which
  breaks ties in an unspecified (unstable) order. Rows whose value cannot
  depend on that order are computed in C; the others are sorted with the very
  same numpy call and finished in C, so they agree with scikit-learn too.
* The ideal DCG of ``ndcg_score`` sums the ``k`` largest gains, descending;
  a row whose ideal DCG is 0 scores 0.
* Rows are averaged with ``np.average(..., weights=sample_weight)``.

Agreement: per-row values that scikit-learn forms with a BLAS dot product
(``ignore_ties=True`` and the ideal DCG) are summed here in rank order, so they
may differ in the last bits (about 1e-16 relative). Everything else is the
same arithmetic in the same order.

Deliberate differences
----------------------
* ``y_true`` and ``y_score`` must have the same shape (scikit-learn fails
  with a broadcasting error or silently reads the wrong columns).
* Scores of an unsigned integer dtype, or holding the minimum of a signed
  integer dtype: scikit-learn's tie-averaging negates the scores and the
  integer negation wraps around (a score of 0 in ``uint8`` ranks first).
  cumgain ranks by the true values, as scikit-learn does with ``ignore_ties``.
* Boolean scores are ranked (``True`` above ``False``); scikit-learn's
  tie-averaging fails on them with numpy's ``TypeError``.
* Integer scores beyond 2**53 and ``longdouble`` scores are ranked exactly
  (by their dense rank), not after rounding to float64.
* Every error is a :class:`~cumgain.exceptions.InputError` (a ``ValueError``).
  Where scikit-learn raises another type, the error class also derives from
  it: :class:`InvalidParameterError` is a ``TypeError`` too, like
  scikit-learn's, and :class:`ZeroWeightSumError` a ``ZeroDivisionError``.
"""
from __future__ import annotations

import sys
from numbers import Integral, Real
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from cgcore._dense import ideal_dcg, ordered_dcg, ranked_dcg, tie_averaged_dcg
from cumgain.exceptions import InputError

__all__ = ["InvalidParameterError", "ZeroWeightSumError", "dcg_score", "ndcg_score"]

_SUPPORTED_TARGETS = (
    "multilabel-indicator",
    "continuous-multioutput",
    "multiclass-multioutput",
)
_EXACT_INT = 2**53  # integers of larger magnitude do not all survive float64


class InvalidParameterError(InputError, TypeError):
    """A parameter has the wrong type or range (scikit-learn's InvalidParameterError)."""


class ZeroWeightSumError(InputError, ZeroDivisionError):
    """``sample_weight`` sums to zero, so the average is undefined."""


# ---------------------------------------------------------------- parameters

def _is_sparse(x: Any) -> bool:
    # A scipy.sparse matrix can only exist if scipy.sparse was imported.
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(x)


def _is_array_like(x: Any) -> bool:
    """scikit-learn's "array-like": has a length, shape or __array__; not a scalar, not sparse."""
    return (
        (hasattr(x, "__len__") or hasattr(x, "shape") or hasattr(x, "__array__"))
        and not np.isscalar(x)
        and not _is_sparse(x)
    )


def _validate_params(function: str, params: dict) -> None:
    """The checks of scikit-learn's ``@validate_params``, in signature order."""
    def fail(name: str, expected: str) -> None:
        raise InvalidParameterError(
            f"The {name!r} parameter of {function} must be {expected}. "
            f"Got {params[name]!r} instead.")

    for name in ("y_true", "y_score"):
        if not _is_array_like(params[name]):
            fail(name, "an array-like")
    k = params["k"]
    if k is not None and not (isinstance(k, Integral) and k >= 1):
        fail("k", "an int in the range [1, inf) or None")
    if "log_base" in params:
        base = params["log_base"]
        if not (isinstance(base, Real) and 0.0 < base < np.inf):
            fail("log_base", "a float in the range (0.0, inf)")
    weight = params["sample_weight"]
    if weight is not None and not _is_array_like(weight):
        fail("sample_weight", "an array-like or None")
    if not isinstance(params["ignore_ties"], (bool, np.bool_)):
        fail("ignore_ties", "an instance of 'bool' or an instance of 'numpy.bool'")


# ---------------------------------------------------------------- arrays

def _check_array(y: Any) -> np.ndarray:
    """scikit-learn's ``check_array(y, ensure_2d=False)``: numeric, finite, 1-D or 2-D, not empty."""
    try:
        array = np.asarray(y)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise InputError(str(exc)) from None
    kind = array.dtype.kind
    if kind == "O":
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(str(exc)) from None
    elif kind in "USV":
        raise InputError(
            "dtype='numeric' is not compatible with arrays of bytes/strings. "
            "Convert your data to numeric values explicitly instead.")
    elif kind == "c":
        raise InputError("Complex data not supported")
    elif kind not in "biuf":
        raise InputError(f"an array of dtype {array.dtype} is not numeric")
    if array.ndim == 0:
        raise InvalidParameterError(
            "Input should have at least 1 dimension i.e. satisfy `len(x.shape) > 0`, "
            f"got scalar {array!r} instead.")
    if array.ndim > 2:
        raise InputError(f"Found array with dim {array.ndim}, while dim <= 2 is required.")
    # The sum is finite exactly when every value is (short of an overflow).
    if kind in "fO" and array.size and not _finite_sum(array):
        if np.isnan(array).any():
            raise InputError("Input contains NaN.")
        if not np.isfinite(array).all():
            raise InputError(
                f"Input contains infinity or a value too large for {array.dtype!r}.")
    if array.shape[0] < 1:
        raise InputError(
            f"Found array with 0 sample(s) (shape={array.shape}) while a minimum of 1 "
            "is required.")
    if array.ndim == 2 and array.shape[1] < 1:
        raise InputError(
            f"Found array with 0 feature(s) (shape={array.shape}) while a minimum of 1 "
            "is required.")
    return array


def _finite_sum(array: np.ndarray) -> bool:
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(array.sum()))


def _num_samples(x: Any) -> int:
    if hasattr(x, "shape"):
        if len(x.shape) == 0:
            raise InvalidParameterError(
                "Input should have at least 1 dimension i.e. satisfy `len(x.shape) > 0`, "
                f"got scalar {x!r} instead.")
        return int(x.shape[0])
    return len(x)


def _check_consistent_length(*arrays: Any) -> None:
    lengths = [_num_samples(x) for x in arrays if x is not None]
    if len(set(lengths)) > 1:
        raise InputError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{', '.join(str(n) for n in lengths)}]")


def _target_type(y: np.ndarray) -> str:
    """scikit-learn's ``type_of_target`` for a checked, non-empty numeric array."""
    if y.ndim == 2 and y.shape[1] > 1:
        # Always one of the supported formats (two distinct values or fewer,
        # integers, or floats); no need to look at the values.
        return "multioutput"
    if y.dtype.kind == "f" and np.any(y != y.astype(np.int64).astype(y.dtype)):
        return "continuous"
    return "multiclass" if np.unique(y).shape[0] > 2 else "binary"


def _check_target_type(y_true: np.ndarray) -> None:
    y_type = _target_type(y_true)
    if y_type != "multioutput":
        raise InputError(
            f"Only {_SUPPORTED_TARGETS} formats are supported. Got {y_type} instead")


def _check_inputs(y_true: Any, y_score: Any, sample_weight: Any, *,
                  ndcg: bool) -> tuple[np.ndarray, np.ndarray]:
    """The checks of ``dcg_score``/``ndcg_score``, in scikit-learn's order, then shapes."""
    y_true = _check_array(y_true)
    y_score = _check_array(y_score)
    _check_consistent_length(y_true, y_score, sample_weight)
    if ndcg:
        if y_true.min() < 0:
            raise InputError("ndcg_score should not be used on negative y_true values.")
        if y_true.ndim > 1 and y_true.shape[1] <= 1:
            raise InputError(
                "Computing NDCG is only meaningful when there is more than 1 document. "
                f"Got {y_true.shape[1]} instead.")
    _check_target_type(y_true)
    if y_score.shape != y_true.shape:
        raise InputError(
            f"y_true and y_score must have the same shape; got {y_true.shape} "
            f"and {y_score.shape}")
    return y_true, y_score


# ---------------------------------------------------------------- computing

# Element types the kernels read as they are (see cgcore._dense); others are
# converted to float64.
_GAIN_TYPES = tuple(np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.uint8))
_SCORE_TYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _kernel_array(y: np.ndarray, types: tuple) -> np.ndarray:
    """y as a C-contiguous array of one of ``types`` (a bool matrix as uint8), else float64."""
    if y.dtype == np.bool_ and np.dtype(np.uint8) in types:
        y = y.view(np.uint8)
    if y.dtype in types:
        return np.ascontiguousarray(y)
    return np.ascontiguousarray(y, dtype=np.float64)


def _ranking_keys(y_score: np.ndarray) -> np.ndarray:
    """Kernel-ready keys with the order and ties of ``y_score``'s own values."""
    kind, size = y_score.dtype.kind, y_score.dtype.itemsize
    lossy = (kind == "f" and size > 8) or (
        kind in "iu" and size >= 8
        and (y_score.max() > _EXACT_INT or y_score.min() < -_EXACT_INT))
    if lossy:  # rank the distinct values instead
        inverse = np.unique(y_score, return_inverse=True)[1]
        return np.ascontiguousarray(inverse.reshape(y_score.shape), dtype=np.float64)
    return _kernel_array(y_score, _SCORE_TYPES)


def _discount(n_labels: int, log_base: float) -> np.ndarray:
    # scikit-learn's expression, so that the discounts are the same bits.
    return 1 / (np.log(np.arange(n_labels) + 2) / np.log(log_base))


def _cutoff(k: Optional[int], n_labels: int) -> int:
    return n_labels if k is None or k >= n_labels else int(k)


def _dcg_sample_scores(y_true: np.ndarray, y_score: np.ndarray, gains: np.ndarray,
                       k: int, log_base: float, ignore_ties: bool) -> np.ndarray:
    """Per-row DCG@k (``k`` already clipped to the number of labels)."""
    discount = _discount(gains.shape[1], log_base)
    keys = _ranking_keys(y_score)
    if not ignore_ties:
        return tie_averaged_dcg(gains, keys, discount, k)
    values, rows = ranked_dcg(gains, keys, discount, k)
    if rows.size:
        # Tie order matters in these rows: take it from numpy's argsort of
        # the scores as given, exactly as scikit-learn does.
        order = np.argsort(y_score[rows])[:, ::-1][:, :k]
        ordered_dcg(gains, rows, np.ascontiguousarray(order, dtype=np.int64), discount,
                    values)
    return values


def _average(values: np.ndarray, sample_weight: Any) -> float:
    if sample_weight is None:
        return float(np.average(values))
    weight = np.asarray(sample_weight)
    if weight.dtype.kind not in "biuf":
        raise InvalidParameterError(
            f"sample_weight must hold real numbers, got dtype {weight.dtype}")
    if weight.shape != values.shape:
        raise InvalidParameterError(
            f"sample_weight must have shape {values.shape}, got {weight.shape}")
    try:
        return float(np.average(values, weights=weight))
    except ZeroDivisionError:
        raise ZeroWeightSumError(
            "Weights sum to zero, can't be normalized (sample_weight sums to 0)") from None


# ---------------------------------------------------------------- public API

def dcg_score(y_true: npt.ArrayLike, y_score: npt.ArrayLike, *, k: Optional[int] = None,
              log_base: float = 2, sample_weight: Optional[npt.ArrayLike] = None,
              ignore_ties: bool = False) -> float:
    """Compute Discounted Cumulative Gain, as ``sklearn.metrics.dcg_score``.

    Sum the true scores ranked in the order induced by the predicted scores,
    after applying a logarithmic discount.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        True targets of multilabel classification, or true scores of entities
        to be ranked.
    y_score : array-like of shape (n_samples, n_labels)
        Predicted scores; higher ranks first.
    k : int, default=None
        Only consider the highest k scores in the ranking. If None, use all
        outputs.
    log_base : float, default=2
        Base of the logarithm used for the discount.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights. If None, all samples are given the same weight.
    ignore_ties : bool, default=False
        Rank tied scores in numpy's ``argsort`` order instead of averaging
        over them.

    Returns
    -------
    float
        The (weighted) mean of the per-sample DCG values.

    Raises
    ------
    InputError
        On any invalid input (a ``ValueError``; see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> true_relevance = np.asarray([[10, 0, 0, 1, 5]])
    >>> scores = np.asarray([[.1, .2, .3, 4, 70]])
    >>> round(dcg_score(true_relevance, scores), 4)
    9.4995
    >>> round(dcg_score(true_relevance, scores, k=2), 4)
    5.6309
    >>> scores = np.asarray([[1, 0, 0, 0, 1]])
    >>> dcg_score(true_relevance, scores, k=1)
    7.5
    >>> dcg_score(true_relevance, scores, k=1, ignore_ties=True)
    5.0
    """
    _validate_params("dcg_score", {
        "y_true": y_true, "y_score": y_score, "k": k, "log_base": log_base,
        "sample_weight": sample_weight, "ignore_ties": ignore_ties})
    y_true, y_score = _check_inputs(y_true, y_score, sample_weight, ndcg=False)
    gains = _kernel_array(y_true, _GAIN_TYPES)
    values = _dcg_sample_scores(y_true, y_score, gains, _cutoff(k, gains.shape[1]),
                                log_base, bool(ignore_ties))
    return _average(values, sample_weight)


def ndcg_score(y_true: npt.ArrayLike, y_score: npt.ArrayLike, *, k: Optional[int] = None,
               sample_weight: Optional[npt.ArrayLike] = None, ignore_ties: bool = False
               ) -> float:
    """Compute Normalized Discounted Cumulative Gain, as ``sklearn.metrics.ndcg_score``.

    The DCG of the ranking induced by ``y_score`` (ties averaged) divided by
    the DCG of the ideal ranking; a sample whose ideal DCG is 0 scores 0.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        Non-negative true relevance of each label.
    y_score : array-like of shape (n_samples, n_labels)
        Predicted scores; higher ranks first.
    k : int, default=None
        Only consider the highest k scores in the ranking. If None, use all
        outputs.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights. If None, all samples are given the same weight.
    ignore_ties : bool, default=False
        Rank tied scores in numpy's ``argsort`` order instead of averaging
        over them.

    Returns
    -------
    float
        The (weighted) mean of the per-sample nDCG values, in [0, 1].

    Raises
    ------
    InputError
        On any invalid input, e.g. negative ``y_true`` or a single label.

    Examples
    --------
    >>> import numpy as np
    >>> true_relevance = np.asarray([[10, 0, 0, 1, 5]])
    >>> scores = np.asarray([[.1, .2, .3, 4, 70]])
    >>> round(ndcg_score(true_relevance, scores), 4)
    0.6957
    >>> scores = np.asarray([[.05, 1.1, 1., .5, .0]])
    >>> round(ndcg_score(true_relevance, scores, k=4), 4)
    0.352
    >>> scores = np.asarray([[1, 0, 0, 0, 1]])
    >>> ndcg_score(true_relevance, scores, k=1)
    0.75
    >>> ndcg_score(true_relevance, scores, k=1, ignore_ties=True)
    0.5
    """
    _validate_params("ndcg_score", {
        "y_true": y_true, "y_score": y_score, "k": k,
        "sample_weight": sample_weight, "ignore_ties": ignore_ties})
    y_true, y_score = _check_inputs(y_true, y_score, sample_weight, ndcg=True)
    gains = _kernel_array(y_true, _GAIN_TYPES)
    cutoff = _cutoff(k, gains.shape[1])
    gain = _dcg_sample_scores(y_true, y_score, gains, cutoff, 2, bool(ignore_ties))
    normalizing_gain = ideal_dcg(gains, _discount(gains.shape[1], 2), cutoff)
    all_irrelevant = normalizing_gain == 0
    gain[all_irrelevant] = 0
    gain[~all_irrelevant] /= normalizing_gain[~all_irrelevant]
    return _average(gain, sample_weight)
