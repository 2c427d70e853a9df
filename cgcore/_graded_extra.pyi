"""Type stubs for the kernels of the graded measures beyond trec_eval (gdeval's ERR,
NTCIREVAL's Q, NCU, nERR, iRBU and GAP, Clarke et al.'s compatibility, pairwise accuracy,
torchmetrics' retrieval AUROC)."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

ORDER_GDEVAL: int
ORDER_NTCIREVAL: int

def expected_reciprocal_rank(
    probabilities: Float64Array, offsets: Int64Array, cutoff: int, order: int
) -> Float64Array: ...
def rank_biased_utility(
    probabilities: Float64Array, offsets: Int64Array, cutoff: int, p: float, effort: float
) -> Float64Array: ...
def q_measure(
    gains: Float64Array, offsets: Int64Array, ideal: Float64Array, ideal_offsets: Int64Array,
    beta: float, cutoff: int
) -> Float64Array: ...
def graded_average_precision(
    gains: Float64Array, offsets: Int64Array, ideal: Float64Array, ideal_offsets: Int64Array,
    cutoff: int
) -> Float64Array: ...
def compatibility(
    levels: Float64Array, offsets: Int64Array, ideal: Float64Array, ideal_offsets: Int64Array,
    p: float, normalize: bool
) -> Float64Array: ...
def pairwise_accuracy(
    relevant: Float64Array, offsets: Int64Array, cutoff: int
) -> Float64Array: ...
PREFERRED_O: int
PREFERRED_P: int
PREFERRED_P_PLUS: int
def blended_ratio_at_preferred(gains: Float64Array, levels: Float64Array, offsets: Int64Array,
                               ideal: Float64Array, ideal_offsets: Int64Array, beta: float,
                               cutoff: int, kind: int) -> Float64Array: ...
STOP_GRADED_UNIFORM: int
STOP_RANK_BIASED: int
def graded_stop_totals(levels: Float64Array, stops: Float64Array,
                       offsets: Int64Array) -> Float64Array: ...
def normalised_cumulative_utility(gains: Float64Array, stops: Float64Array, offsets: Int64Array,
                                  ideal: Float64Array, ideal_offsets: Int64Array,
                                  stop_totals: Float64Array, beta: float, gamma: float,
                                  cutoff: int, stopping: int) -> Float64Array: ...
def retrieval_auroc(relevant: Float64Array, scores: Float64Array, offsets: Int64Array,
                    cutoff: int, max_fpr: float, expected: bool) -> Float64Array: ...
