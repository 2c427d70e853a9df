"""The TREC text formats: bytes and compression, the line grammar, the tables of
judgments and runs, the dict and DataFrame front-ends.
"""
