"""Sphinx configuration of cumgain's documentation.

Build (from any folder but the repository root, whose source tree has no compiled
cgcore; see development.md, "Building these pages"):

    sphinx-build -W --keep-going -b html    -d _build/doctrees docs _build/html
    sphinx-build -W --keep-going -b doctest -d _build/doctrees docs _build/doctest

cumgain is imported as installed (its compiled extensions built); this file never puts
the source tree on sys.path. docs/_ext/cumgain_docs.py generates the measure catalogue,
the gallery's figures and the demo collection the examples run on (docs/_generated/).
"""
from __future__ import annotations

import doctest
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import cumgain  # noqa: E402  (the installed, built package)

project = "cumgain"
author = "The cumgain developers"
copyright = "the cumgain developers"
version = release = cumgain.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",     # MathJax shipped with the pages: math renders offline
    "sphinx_copybutton",
    "sphinx_design",
    "numpydoc",
    "myst_parser",
    "sphinxcontrib.programoutput",
    "cumgain_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated/demo", "_generated/*.md",
                    "_generated/measures", "gallery/*.py"]

# -- MyST (the pages are Markdown) --------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "amsmath",
                          "attrs_block"]   # {.class} on the catalogue's tables
myst_heading_anchors = 3

# -- autodoc + numpydoc (the API reference) -----------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "none"            # the signatures carry them; numpydoc the prose
# (no autodoc_default_options: Sphinx 9 let a default {"members": False} override each
# automodule's own :members:, and the API pages showed none of their functions)
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set = set()
# (docs/_ext/cumgain_docs.py prepares each docstring first: its >>> examples become
# doctests, its plain-text formulas are escaped)

# -- doctest: every ``{doctest}`` block of the pages runs, in a folder holding the demo
# collection as TREC files (qrels.txt, good.run, fair.run, poor.run); every ``>>>``
# example of the docstrings in the API reference runs too, in its module's namespace
# (cumgain_docs makes each a doctest directive).
doctest_global_setup = """
import os
import cumgain_docs
os.chdir(cumgain_docs.demo_dir())
"""
doctest_test_doctest_blocks = ""     # docstrings: see cumgain_docs.prepare_docstring
doctest_default_flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# -- programoutput: the command-line examples (``{command-output}``) run when the pages
# are read, in the demo folder (cumgain_docs makes that the default working directory),
# with the cumgain of this interpreter's environment; their output is shown as printed,
# and an unexpected exit status is a warning, so an error under -W.
programoutput_use_ansi = False
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

# -- HTML ---------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"cumgain {release}"

html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 4,   # the top bar on one row at 1280 px
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# the section navigation where a section has pages (the user guide, the measure
# catalogue, the API); none on the pages that stand alone
html_sidebars = {page: [] for page in ("index", "install", "gallery", "speed",
                                        "differences", "reliability", "benchmarks",
                                        "development", "changelog")}
html_static_path = ["_static"]
html_css_files = ["cumgain.css"]      # the catalogue's tables; wide equations scroll
html_copy_source = False
html_show_sourcelink = False

# -- copybutton: the prompts and the printed output are not copied ------------------
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True     # (a block without prompts is copied whole)
