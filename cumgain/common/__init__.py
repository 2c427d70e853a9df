"""Small modules every layer shares: ragged batches, limits, optional dependencies,
display helpers, progress bars.
"""
