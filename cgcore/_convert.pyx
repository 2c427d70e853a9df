"""Results back into the Python objects users expect.

:func:`topic_dicts` builds pytrec_eval's per-topic result shape,
``{topic: {measure: value}}``, from the evaluator's per-measure arrays, in C: for
100,000 topics a dict comprehension over ``zip`` takes several times longer than the
evaluation of the topics' measures.
"""
import numpy as np


def topic_dicts(tuple topics, tuple names, const double[:, ::1] values):
    """``{topics[t]: {names[m]: values[m, t]}}``, the values as Python floats."""
    cdef Py_ssize_t t, m, n_topics = len(topics), n_names = len(names)
    if values.shape[0] != n_names or values.shape[1] != n_topics:
        raise ValueError(
            f"values have shape ({values.shape[0]}, {values.shape[1]}) for {n_names} names "
            f"and {n_topics} topics")
    cdef dict result = {}
    cdef dict row
    for t in range(n_topics):
        row = {}
        for m in range(n_names):
            row[names[m]] = values[m, t]
        result[topics[t]] = row
    return result
