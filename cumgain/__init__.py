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

Submodules imported on first use, as attributes (``cumgain.stats.compare`` works after
``import cumgain``; ``dir(cumgain)`` lists them): :mod:`cumgain.stats` and
:mod:`cumgain.report` (significance tests, the paper's Table 2), :mod:`cumgain.curves`
and :mod:`cumgain.plot` (averaged gain-by-rank curves, their readings, plots),
:mod:`cumgain.stream`, :mod:`cumgain.dask` and :mod:`cumgain.convert` (runs larger than
memory), :mod:`cumgain.compat` (the drop-ins), :mod:`cumgain.trec_io` (the TREC
readers), :mod:`cumgain.datasets` (the demo collection).
"""
import importlib
from typing import TYPE_CHECKING, Any

from cumgain.common import startup as _startup

_startup.guard()       # (Ctrl-C while the command line loads: see cumgain.common.startup)

from cumgain.common.batch import Ragged
from cumgain.common.version import __version__ as __version__
from cumgain.io.columns import renamed
from cumgain.engine.dense import evaluate_dense
from cumgain.engine.evaluator import (Evaluation, Ranking, TieBounds, TopicsWarning, evaluate,
                                      evaluate_tie_bounds, rank)
from cumgain.exceptions import (
    CumgainError,
    FormatError,
    InputError,
    MissingDependencyError,
    OutOfMemoryError,
)
from cumgain.gains import GainMapping, gain_mapping, map_gains
from cumgain.engine.diversity import load_subtopics
from cumgain.engine.judgment_groups import load_judgment_groups
from cumgain.trec_io import prepare_qrels
from cumgain.engine.preferences import load_preferences
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


__all__ = [
    "CumgainError",
    "Evaluation",
    "Ranking",
    "TopicsWarning",
    "TieBounds",
    "evaluate",
    "evaluate_dense",
    "evaluate_tie_bounds",
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

#: The public submodules, each imported on first access as an attribute (PEP 562), so
#: that ``import cumgain`` stays fast and an optional extra is needed only when used.
SUBMODULES = ("compat", "convert", "curves", "dask", "datasets", "exceptions", "gains",
              "measures", "plot", "report", "stats", "stream", "trec_io", "types", "vectors")
#: Functions imported on first access: name -> (module, attribute).
LAZY = {"compare": ("cumgain.analysis.experiment", "compare")}


if TYPE_CHECKING:       # (what type checkers see of the attributes below)
    from cumgain import (compat, convert, curves, dask, datasets, exceptions, gains,  # noqa: F401
                         measures, plot, report, stats, stream, trec_io, types, vectors)
    from cumgain.analysis.experiment import compare  # noqa: F401


def __getattr__(name: str) -> Any:
    if name in SUBMODULES:
        return importlib.import_module(f"cumgain.{name}")
    if name in LAZY:                # (functions whose modules need scipy: on first use)
        module, attribute = LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'cumgain' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(SUBMODULES) | set(LAZY))
