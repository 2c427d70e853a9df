"""The compiled reader's Python side: sources read in blocks and parts, errors worded
from where the parser stopped, judgments, runs.
"""
