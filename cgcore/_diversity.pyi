"""Type stubs for the compiled diversity-measure kernel (ndeval's measures)."""
import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

AT_CUTOFF: tuple[str, ...]
WHOLE: tuple[str, ...]

def diversity_measures(
    judged_offsets: Int64Array,
    relevant_offsets: Int64Array,
    relevant_subtopics: Int64Array,
    n_subtopics: Int64Array,
    ranked_offsets: Int64Array,
    ranked_docs: Int64Array,
    cutoffs: Int64Array,
    alpha: float,
    beta: float,
) -> tuple[Float64Array, Float64Array]: ...
