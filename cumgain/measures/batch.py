"""What the measure families compute from: a :class:`Batch` of ranked topics, and the
per-row and per-topic arrays that several families share (relevance flags, the
number of relevant judgments R, gains, ideal gains), each built once per batch.

A batch is one range of topics, used by one thread; what must not depend on how the
topics are split between threads (the full depth, the gain tables) comes from the
whole evaluation (:class:`Shared`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

import numpy as np

from cgcore import _measures as kernels
from cumgain.exceptions import GainMappingError
from cumgain.gains import GainMapping, gain_mapping
from cumgain.measures.base import GainsSpec, Measure
from cumgain.measures.ranked import (
    RankedBatch,
    Scratch,
    as_float64,
    at_least,
    ideal_lists,
    tie_group_means,
)

#: A gain table of Shared.gain_tables: (distinct levels, their gains) or the exception
#: the mapping raised on them.
GainTable = Union[tuple[np.ndarray, np.ndarray], Exception]

#: The tie rules under which each ranked row carries its group's mean relevance and gain.
TIE_MEAN_RULES = ("average", "expected")

# Codes of Batch.status: what each ranked document is, for the measures that tell
# judged documents from unjudged ones (trec_eval's RELVALUE_NONPOOL, RELVALUE_UNJUDGED).
NOT_POOLED = 0      # no judgment at all (trec_eval -1)
UNJUDGED = 1        # in the qrels with a level < 0: pooled but not judged (trec_eval -2)
NONRELEVANT = 2     # judged, level below the relevance level
RELEVANT = 3        # judged, level at least the relevance level


def judged_only_flag(measure: Measure, policies: dict[str, Any]) -> bool:
    """Whether ``measure`` sees only judged documents (its own ``judged_only=`` or -J)."""
    return measure.judged_only if measure.judged_only is not None else policies["judged_only"]


def gain_mapping_of(measure: Measure) -> GainMapping:
    """The level -> gain function of a measure with gains=."""
    if isinstance(measure.gains, str):
        return gain_mapping(measure.gains)
    table = dict(measure.gains)

    def gain_of_level(level: float) -> float:
        if level in table:
            return table[level]
        if measure.gain_fallback == "identity" or level < 0:
            return level if level >= 0 else 0.0
        raise GainMappingError(f"measure {measure.name!r}: relevance level {level:g} has no "
                               "gain")
    return GainMapping(measure.name, gain_of_level)


def mapping_key(measure: Measure) -> tuple[GainsSpec, str]:
    """What defines a measure's level -> gain function: its gains and what a level
    they leave out gets (so "ndcg.1=3,2=9", whose other levels keep their value, and
    "nDCG(gains={1:3,2:9})", for which they are an error, never share a table)."""
    return measure.gains, measure.gain_fallback


@dataclass
class Shared:
    """What every batch of one evaluation shares: the policies, each judged_only
    variant's full depth (the longest ranking or judgment list of the whole
    evaluation: the cut-off of a measure without one), the gain tables and the run tag."""

    policies: dict[str, Any]
    full_depths: dict[bool, int]    # judged_only flag -> int
    gain_tables: dict[tuple[GainsSpec, str], GainTable]     # mapping_key -> (distinct
                                    # levels, their gains) or the error
    run_tag: str = ""       # the run's tag (trec_eval's runid)

    @staticmethod
    def gain_tables_for(measures: list[Measure], qrels_levels: np.ndarray
                        ) -> dict[tuple[GainsSpec, str], GainTable]:
        """For each gain mapping the measures use (other than the level itself): the
        distinct judged levels of the whole evaluation and their gains; or the exception
        the mapping raised on them (a level it has no gain for), raised when a measure
        asks for it. Built once, so that the gains, and which level an error names, do
        not depend on how the topics are split between threads."""
        tables: dict[tuple[GainsSpec, str], GainTable] = {}
        distinct = None
        for measure in measures:
            key = mapping_key(measure)
            if measure.gains is None or key in tables:
                continue
            if distinct is None:
                distinct = as_float64(np.unique(qrels_levels))
            try:
                gains = gain_mapping_of(measure)(distinct) if len(distinct) else np.zeros(1)
            except Exception as error:      # noqa: BLE001 - raised where a measure needs it
                tables[key] = error
            else:
                tables[key] = (distinct, gains)
        return tables


class Batch:
    """The topics one thread computes measures for, and what the measures share.

    Every accessor takes the measure it is for (its ``judged_only=``, ``rel=`` and
    ``gains=`` decide which variant) and builds its array once.
    """

    def __init__(self, ranked: dict[bool, RankedBatch], shared: Shared, scratch: Scratch):
        self._ranked = ranked          # judged_only flag -> RankedBatch
        self.shared = shared
        self.policies: dict[str, Any] = shared.policies
        self._scratch = scratch        # the thread's, reused by its next batch
        self._cache: dict[Any, Any] = {}

    # ------------------------------------------------------------ the rows

    def judged_only(self, measure: Measure) -> bool:
        return judged_only_flag(measure, self.policies)

    def ranked(self, measure: Measure) -> RankedBatch:
        """The ranked rows and judgments the measure sees (after -J if it asks)."""
        return self._ranked[self.judged_only(measure)]

    @property
    def n_topics(self) -> int:
        return len(next(iter(self._ranked.values())).offsets) - 1

    def full_depth(self, measure: Measure) -> int:
        """The cut-off of a measure without one: the depth of the whole evaluation."""
        return self.shared.full_depths[self.judged_only(measure)]

    def num_retrieved(self, measure: Measure) -> np.ndarray:
        """N per topic (int64): the ranked documents the measure sees."""
        return np.diff(self.ranked(measure).offsets)

    def level(self, measure: Measure) -> float:
        """The relevance level of the binary measures (``rel=``, else -l)."""
        return measure.relevance_level if measure.relevance_level is not None \
            else self.policies["relevance_level"]

    def cached(self, key: Any, build: Callable[[], Any]) -> Any:
        """``build()``, once per batch for ``key`` (families share arrays this way)."""
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    @property
    def tie_means(self) -> bool:
        """Whether the rows carry each group of equal scores' mean (``ties="average"``,
        ``"expected"``): the expected value at each rank over the orders in the group."""
        return self.policies["ties"] in TIE_MEAN_RULES

    def relevant_flags(self, measure: Measure) -> np.ndarray:
        """Per ranked row, 1.0 if judged at the relevance level or above, else 0.0."""
        ranked, level = self.ranked(measure), self.level(measure)

        def build():
            key = ("relevant", self.judged_only(measure), level)    # the scratch's
            relevant = at_least(ranked.levels, level,
                                out=self._scratch.array(key + (bool,), len(ranked.levels), bool))
            np.logical_and(relevant, ranked.judged, out=relevant)
            flags = self._scratch.array(key, len(relevant), np.float64)
            np.copyto(flags, relevant)
            return flags
        return self.cached(("relevant_flags", id(ranked), level), build)

    def relevant(self, measure: Measure) -> np.ndarray:
        """The relevance flags (:meth:`relevant_flags`); under :attr:`tie_means`, each
        group of equal scores shares its mean."""
        ranked, level = self.ranked(measure), self.level(measure)
        if not self.tie_means:
            return self.relevant_flags(measure)
        return self.cached(("relevant", id(ranked), level), lambda: tie_group_means(
            self.relevant_flags(measure), ranked))

    def status(self, measure: Measure) -> np.ndarray:
        """Per ranked row (int8): NOT_POOLED, UNJUDGED, NONRELEVANT or RELEVANT."""
        ranked, level = self.ranked(measure), self.level(measure)

        def build():
            codes = np.where(ranked.judged, NONRELEVANT, NOT_POOLED).astype(np.int8)
            codes[ranked.levels < 0] = UNJUDGED
            codes[ranked.judged & at_least(ranked.levels, level)] = RELEVANT
            return codes
        return self.cached(("status", id(ranked), level), build)

    def levels(self, measure: Measure) -> np.ndarray:
        """Per ranked row, its judgment's level as float64: the level if judged, the
        (negative) level if pooled but unjudged, 0 if not in the qrels."""
        ranked = self.ranked(measure)
        return self.cached(("levels", id(ranked)), lambda: as_float64(ranked.levels))

    # ------------------------------------------------------------ the judgments

    def qrels_levels(self, measure: Measure) -> np.ndarray:
        """The judgments' levels as float64 (the same for both judged_only variants,
        which keep every judgment)."""
        key = ("qrels_levels",)
        return self.cached(key, lambda: self._scratch.float64(
            key, self.ranked(measure).qrels_levels))

    def num_relevant(self, measure: Measure) -> np.ndarray:
        """R per topic (float64): judgments at the relevance level or above."""
        ranked, level = self.ranked(measure), self.level(measure)
        return self.cached(("R", level), lambda: kernels.count_at_least(
            self.qrels_levels(measure), ranked.qrels_offsets, level))

    def num_nonrelevant(self, measure: Measure) -> np.ndarray:
        """Per topic (float64): judgments with 0 <= level < the relevance level."""
        ranked, level = self.ranked(measure), self.level(measure)
        return self.cached(("nonrelevant", level), lambda: kernels.count_at_least(
            self.qrels_levels(measure), ranked.qrels_offsets, 0.0) - self.num_relevant(measure)
            if level > 0 else np.zeros(len(ranked.qrels_offsets) - 1))

    # ------------------------------------------------------------ gains

    def mapped_gains(self, measure: Measure, levels: np.ndarray) -> np.ndarray:
        """The gains of judged ``levels`` under the measure's gains, looked up in the
        evaluation's table (see Shared.gain_tables_for)."""
        table = self.shared.gain_tables[mapping_key(measure)]
        if isinstance(table, Exception):
            raise table
        distinct, gains = table
        if levels.dtype == np.int8:     # the native table's levels: a lookup per byte
            every_level = np.arange(256, dtype=np.uint8).view(np.int8)    # (10x faster)
            return _mapped(distinct, gains, every_level)[levels.view(np.uint8)]
        return _mapped(distinct, gains, levels)

    def gain_values(self, measure: Measure) -> np.ndarray:
        """Per ranked row, its gain: the mapped level if judged, else 0."""
        ranked = self.ranked(measure)

        def build():
            if measure.gains is None:   # identity: the level if judged (>= 0), else 0
                key = ("gains", self.judged_only(measure))
                gains = self._scratch.array(key, len(ranked.levels), np.float64)
                np.maximum(ranked.levels, 0, out=gains)
                return gains
            return np.where(ranked.judged, self.mapped_gains(measure, ranked.levels), 0.0)
        return self.cached(("gain_values", id(ranked), mapping_key(measure)), build)

    def gains(self, measure: Measure) -> np.ndarray:
        """The gains (:meth:`gain_values`); under :attr:`tie_means`, each group of equal
        scores shares its mean gain."""
        ranked = self.ranked(measure)
        if not self.tie_means:
            return self.gain_values(measure)
        return self.cached(("gains", id(ranked), mapping_key(measure)), lambda: tie_group_means(
            self.gain_values(measure), ranked))

    def judged_gains(self, measure: Measure) -> np.ndarray:
        """The recall base: a gain per judgment (levels < 0 get 0, never in the ideal)."""
        ranked = self.ranked(measure)

        def build():
            levels = self.qrels_levels(measure)
            if measure.gains is None:
                return levels if len(levels) == 0 or levels.min() >= 0 else \
                    np.where(levels >= 0, levels, 0.0)
            return np.where(levels >= 0, self.mapped_gains(measure, levels), 0.0)
        return self.cached(("judged_gains", id(ranked), mapping_key(measure)), build)

    def ideal(self, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
        """Each topic's positive judged gains sorted descending (values, offsets)."""
        ranked = self.ranked(measure)
        return self.cached(("ideal", id(ranked), mapping_key(measure)), lambda: ideal_lists(
            self.judged_gains(measure), ranked.qrels_offsets))


def _mapped(distinct: np.ndarray, gains: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The gain of each level: ``gains[i]`` for the first ``distinct[i] >= level``
    (a gain table's levels, sorted; levels past the last take the last gain)."""
    return gains[np.minimum(np.searchsorted(distinct, levels), len(gains) - 1)]


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is not positive."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        0.0)
