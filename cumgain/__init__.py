"""cumgain: graded-relevance IR evaluation with a compiled core.

The vector API of Jarvelin & Kekalainen (2002): :func:`cg`, :func:`dcg`,
:func:`ideal_gains`, :func:`ncg`, :func:`ndcg`, :func:`avg_vect`,
:func:`norm_vect`, :func:`avg_pos`, and scalars at a cut-off
(:func:`cg_at`, :func:`dcg_at`, :func:`ncg_at`, :func:`ndcg_at`).

The evaluator, :func:`evaluate`, computes every measure of trec_eval 10.0 and the
J&K family for TREC files, dicts or DataFrames, exactly as trec_eval and pytrec_eval
do (judgment groups from :func:`load_judgment_groups`, preference judgments from
:func:`load_preferences`), the measures of ir_measures, ranx, cwl_eval and NTCIREVAL, and
the diversity measures of ndeval (subtopic judgments from :func:`load_subtopics`);
:func:`rank` gives the ranked relevance levels behind it; :func:`prepare_qrels` reads
judgments once for evaluating many runs against them.

Submodules imported on demand: :mod:`cumgain.stats` and :mod:`cumgain.report`
(significance tests, the paper's Table 2), :mod:`cumgain.curves` and
:mod:`cumgain.plot` (averaged gain-by-rank curves, their readings, plots).
"""
from cumgain.batch import Ragged
from cumgain.columns import renamed
from cumgain.dense import evaluate_dense
from cumgain.evaluator import Evaluation, Ranking, TopicsWarning, evaluate, rank
from cumgain.exceptions import (
    CumgainError,
    FormatError,
    InputError,
    MissingDependencyError,
    OutOfMemoryError,
)
from cumgain.gains import GainMapping, gain_mapping, map_gains
from cumgain.diversity import load_subtopics
from cumgain.judgment_groups import load_judgment_groups
from cumgain.native import prepare_qrels
from cumgain.preferences import load_preferences
from cumgain.vectors import (
    avg_norm_vect,
    avg_pos,
    avg_vect,
    cg,
    cg_at,
    dcg,
    dcg_at,
    discount_divisors,
    ideal_gains,
    ncg,
    ncg_at,
    ndcg,
    ndcg_at,
    norm_vect,
)

__version__ = "0.1.0"

__all__ = [
    "CumgainError",
    "Evaluation",
    "Ranking",
    "TopicsWarning",
    "evaluate",
    "evaluate_dense",
    "FormatError",
    "GainMapping",
    "InputError",
    "MissingDependencyError",
    "Ragged",
    "avg_norm_vect",
    "avg_pos",
    "avg_vect",
    "cg",
    "cg_at",
    "dcg",
    "dcg_at",
    "discount_divisors",
    "gain_mapping",
    "ideal_gains",
    "load_judgment_groups",
    "load_preferences",
    "load_subtopics",
    "map_gains",
    "ncg",
    "ncg_at",
    "ndcg",
    "ndcg_at",
    "norm_vect",
    "OutOfMemoryError",
    "prepare_qrels",
    "rank",
    "renamed",
]
