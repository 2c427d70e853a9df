"""Drop-in replacements for other libraries' evaluation APIs.

Each submodule mirrors one library's functions, signatures and results, so that
``import cumgain.compat.sklearn as metrics`` (for instance) works in existing code.
"""
