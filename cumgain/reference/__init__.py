"""The pure-Python twins of the compiled code, kept as the tests' oracles; nothing the
product calls imports them.
"""
