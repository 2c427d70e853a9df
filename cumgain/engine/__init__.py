"""Ranking and measuring: the evaluator, dense matrices, and the judgment kinds
(preferences, subtopics, judgment groups).
"""
