"""Reading and writing: the TREC readers, the compiled reader's Python side, columnar
inputs, atomic outputs, run names.
"""
