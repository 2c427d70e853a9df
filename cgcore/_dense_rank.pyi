"""Type stubs for ranking dense score matrices."""
from typing import Optional

import numpy as np
import numpy.typing as npt

RULE_INPUT_ORDER: int
RULE_RANDOM: int

def count_valid(n_rows: int, n_columns: int, lengths: Optional[npt.NDArray[np.int64]],
                mask: Optional[npt.NDArray[np.uint8]]) -> npt.NDArray[np.int64]: ...
def pack_rows(scores: npt.NDArray[np.floating], labels: npt.NDArray[np.number],
              lengths: Optional[npt.NDArray[np.int64]], mask: Optional[npt.NDArray[np.uint8]],
              qrels_offsets: npt.NDArray[np.int64],
              qrels_levels: Optional[npt.NDArray[np.float64]],
              words: npt.NDArray[np.uint64], first: int, stop: int) -> int: ...
def finish_rows(scores: npt.NDArray[np.floating], labels: npt.NDArray[np.number],
                mask: Optional[npt.NDArray[np.uint8]], words: npt.NDArray[np.uint64],
                offsets: npt.NDArray[np.int64], qrels_offsets: npt.NDArray[np.int64],
                levels: npt.NDArray[np.float64], judged: npt.NDArray[np.uint8],
                ranked_scores: Optional[npt.NDArray[np.float64]], first: int, stop: int,
                ties: int, seed: int) -> None: ...
