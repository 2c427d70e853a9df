"""Type stubs for the compiled dense-matrix DCG kernels (scikit-learn semantics)."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]
# The element types the kernels read without conversion (C-contiguous matrices).
GainMatrix = (
    npt.NDArray[np.float64]
    | npt.NDArray[np.float32]
    | npt.NDArray[np.int64]
    | npt.NDArray[np.int32]
    | npt.NDArray[np.uint8]
)
ScoreMatrix = npt.NDArray[np.float64] | npt.NDArray[np.float32]

SELECT_MAX_K: int

def tie_averaged_dcg(
    y_true: GainMatrix,
    y_score: ScoreMatrix,
    discount: Float64Array,
    k: int,
    out: Float64Array | None = ...,
) -> Float64Array: ...
def ranked_dcg(
    y_true: GainMatrix,
    y_score: ScoreMatrix,
    discount: Float64Array,
    k: int,
    out: Float64Array | None = ...,
) -> tuple[Float64Array, Int64Array]: ...
def ordered_dcg(
    y_true: GainMatrix,
    rows: Int64Array,
    order: Int64Array,
    discount: Float64Array,
    out: Float64Array,
) -> Float64Array: ...
def ideal_dcg(
    y_true: GainMatrix, discount: Float64Array, k: int, out: Float64Array | None = ...
) -> Float64Array: ...
