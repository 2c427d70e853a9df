"""Z-scores against reference runs (trec_eval ``-Z``): each per-topic value expressed in
standard deviations from the mean that a set of reference runs scored on that topic.

The file (``get_zscores.c``) has lines ``qid measure mean stddev``. A topic's value v of
a measure becomes (v - mean) / stddev; when stddev is 0, 0 if v equals the mean;
-1000000 (trec_eval's MISSING_ZSCORE_VALUE) when the file has no line for the topic and
measure, or stddev is 0 and v differs from the mean (``convert_zscores.c``). The
summary is then computed from the z-scores by each measure's usual rule; ``num_q`` keeps
counting topics and text measures (``runid``, ``relstring``) are left as they are.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np

from cumgain.exceptions import FormatError, InputError, naming

MISSING_ZSCORE = -1000000.0

#: ``{(qid, measure): (mean, stddev)}``
ZScores = dict[tuple[str, str], tuple[float, float]]


def read_zscores(path: Any) -> ZScores:
    """``{(qid, measure): (mean, stddev)}`` from a z-scores file.

    Blank lines and lines starting with ``#`` are skipped; a line without exactly four
    fields, a mean or stddev that is not a number, or a (qid, measure) given twice is
    an error naming the file and line. ``nan`` and ``inf`` are numbers (trec_eval's
    atof reads them; a ``nan`` makes the z-score ``nan``).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"the z-scores file must be a path, got {type(path).__name__}")
    source = os.fsdecode(os.fspath(path))
    with naming(source), open(source, "rb") as stream:
        data = stream.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(source, data.count(b"\n", 0, error.start) + 1,
                          "not valid UTF-8") from None
    table: ZScores = {}
    for number, line in enumerate(text.split("\n"), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise FormatError(source, number, "expected 4 fields (qid measure mean stddev), "
                                              f"found {len(fields)}", line)
        try:
            mean, stddev = float(fields[2]), float(fields[3])
        except ValueError:
            raise FormatError(source, number, "mean and stddev must be numbers", line) from None
        key = (fields[0], fields[1])
        if key in table:
            raise FormatError(source, number, f"topic {key[0]!r} and measure {key[1]!r} are "
                                              "given twice", line)
        table[key] = (mean, stddev)
    return table


def _z(value: float, reference: Any) -> float:
    if reference is None:
        return MISSING_ZSCORE
    mean, stddev = reference
    if stddev:
        return (value - mean) / stddev
    return 0.0 if value == mean else MISSING_ZSCORE


def to_zscores(result: Any, table: ZScores) -> Any:
    """A copy of an :class:`~cumgain.engine.evaluator.Evaluation` with every numeric per-topic
    value turned into a z-score (see the module docstring), and the means recomputed."""
    from cumgain.engine.results import aggregate

    values, means = dict(result.values), dict(result.means)
    for measure in result.measures:
        if measure.kind == "text" or measure.family == "num_q":
            continue
        column = [_z(value, table.get((topic, measure.name)))
                  for topic, value in zip(result.topics, np.asarray(result.values[measure.name])
                                          .tolist())]
        values[measure.name] = np.array(column, dtype=np.float64)
        means[measure.name] = aggregate(measure, values[measure.name], result.run_tag)
    return dataclasses.replace(result, values=values, means=means)
