"""The judgment kinds beside graded qrels, each declared once, by its own module: the type
of its judgments, the ``input`` its measures declare (:data:`cumgain.measures.base.INPUTS`),
where such judgments come from, and the function that evaluates a run against them.

:func:`cumgain.evaluate` looks the kind up by the type of the judgments it is given and
hands them over; it imports none of the kinds' modules. They register when
:mod:`cumgain` is imported (which every import of a cumgain module does first):
:mod:`cumgain.engine.preferences`, :mod:`cumgain.engine.diversity` (subtopics) and
:mod:`cumgain.engine.judgment_groups`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class JudgmentKind:
    """``evaluate(judgments, run, measures, *, topics, warn, **policies)`` evaluates
    ``run`` against ``judgments`` (an instance of ``judgments_type``); ``policies`` are
    every policy of :func:`cumgain.evaluate` (each kind takes those it needs)."""

    input: str                     # the measures' input it serves ("preferences", ...)
    judgments_type: type
    evaluate: Callable[..., Any]
    source: str                    # where such judgments come from, for error messages
    load: Optional[Callable[[Any], Any]] = None   # reads them from what qrels may be
                                   # (when every measure of an evaluation needs them)


_KINDS: list[JudgmentKind] = []


def register_kind(kind: JudgmentKind) -> JudgmentKind:
    """Declare a judgment kind (once, from its module)."""
    if any(known.input == kind.input for known in _KINDS):
        raise ValueError(f"judgment kind {kind.input!r} is declared twice")
    _KINDS.append(kind)
    return kind


def kind_of(judgments: Any) -> Optional[JudgmentKind]:
    """The kind whose judgments ``judgments`` are, or None (graded qrels)."""
    for kind in _KINDS:
        if isinstance(judgments, kind.judgments_type):
            return kind
    return None


def kind_for_input(input: str) -> Optional[JudgmentKind]:
    """The kind serving measures of this ``input``, or None."""
    for kind in _KINDS:
        if kind.input == input:
            return kind
    return None
