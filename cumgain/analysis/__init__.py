"""Presenting results: output formats, result tables, trec_eval's output, z-scores.
(Comparisons, curves and plots: cumgain.stats, cumgain.curves, cumgain.plot,
cumgain.report.)
"""
