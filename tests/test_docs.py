"""The documentation, checked without Sphinx: the measure catalogue docs/ generates from
the registry lists every family, parameter and ranx name; the API reference names every
export of ``cumgain``; the command-line page shows every subcommand's ``-h``; the README
is a landing page (at most 250 lines) whose links into docs/ resolve, and whose two
set-up commands are the ones ``.ci/run`` runs.

The site itself is built by ``sphinx-build -W`` with its examples run (docs/conf.py,
``.ci/run``); these tests need only cumgain and read the files of the checkout, so they
skip where the checkout's docs/ is not there (an installed sdist without it).
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import cumgain
from cumgain.measures import FAMILIES
from cumgain.measures.parse import PARAMS, RANX_NAMES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

pytestmark = pytest.mark.skipif(not (DOCS / "_ext" / "cumgain_docs.py").is_file(),
                                reason="docs/ is not in this checkout")


@pytest.fixture(scope="module")
def generator():
    """docs/_ext/cumgain_docs.py, imported by path (it is not a package)."""
    spec = importlib.util.spec_from_file_location("cumgain_docs",
                                                  DOCS / "_ext" / "cumgain_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def catalogue(generator):
    return generator.measure_catalogue()


# ---------------------------------------------------------------- the measure catalogue

def _entries(catalogue: str) -> dict:
    """Each family's section of the catalogue (``### name`` to the next heading)."""
    parts = re.split(r"^(#{2,3} .*)$", catalogue, flags=re.M)
    return {heading[4:]: body for heading, body in zip(parts[1::2], parts[2::2])
            if heading.startswith("### ")}


def _row(entry: str, label: str) -> str:
    match = re.search(rf"^\| {re.escape(label)} \| (.*) \|$", entry, flags=re.M)
    return match.group(1) if match else ""


def test_catalogue_has_one_entry_per_family(catalogue):
    assert sorted(_entries(catalogue)) == sorted(FAMILIES)
    assert f"{len(FAMILIES)} measure families" in catalogue


def test_catalogue_entries_carry_each_familys_formula_spellings_and_tie_rule(catalogue):
    entries = _entries(catalogue)
    for name, family in FAMILIES.items():
        entry = entries[name]
        assert family.formula.replace("|", "\\|") in entry, name
        for ir_name in family.ir_names:
            assert f"`{ir_name}" in _row(entry, "ir_measures"), (name, ir_name)
        if family.trec is not None:
            assert f"`{name}" in _row(entry, "trec_eval"), name
        expected = _row(entry, '`ties="expected"`')
        assert expected.startswith("exact" if family.input == "ranking" and (
            not family.ordered or family.expected_ties) else "refused"), name


def test_catalogue_describes_every_parameter_and_ranx_name(catalogue):
    for key in PARAMS:
        assert f"| `{key}` |" in catalogue, key
    for name in RANX_NAMES:
        assert re.search(rf"`{re.escape(name)}(@k|-lN)?`", catalogue), name


def test_catalogue_spellings_read_back_to_their_family(catalogue):
    """The ir_measures and ranx spellings a row shows (with k = 10) are what the parser
    reads as that family."""
    from cumgain.measures import parse_measure

    for family, entry in _entries(catalogue).items():
        spelled = _row(entry, "ir_measures") + ", " + _row(entry, "ranx")
        for spelling in re.findall(r"`([^`]+)`", spelled):
            spelling = spelling.replace("@k", "@10").replace("-lN", "-l1")
            try:
                measures = parse_measure(spelling)
            except cumgain.InputError:
                continue                  # a family that needs a parameter (max_rel=)
            assert measures[0].family == family, (spelling, family)


# ---------------------------------------------------------------- the other pages

def test_api_reference_documents_every_export():
    text = (DOCS / "api" / "cumgain.rst").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\.\. auto(?:function|class|exception):: (\w+)\s*$",
                                text, flags=re.M))
    assert set(cumgain.__all__) - documented == set()


def test_command_line_page_shows_every_subcommands_help():
    from cumgain.cli import SUBCOMMANDS

    text = (DOCS / "guide" / "cli.md").read_text(encoding="utf-8")
    for name in SUBCOMMANDS:
        assert f"```{{command-output}} cumgain {name} -h\n" in text, name


def test_gallery_scripts_have_a_title_and_text(generator):
    scripts = sorted((DOCS / "gallery").glob("*.py"))
    assert scripts
    for script in scripts:
        doc = (script.read_text(encoding="utf-8").split('"""') + ["", ""])[1]
        title, _, text = doc.strip().partition("\n")
        assert title and text.strip(), script.name
        assert generator._after_docstring(script) > 1, script.name


def test_docstring_examples_become_doctests_in_their_modules_namespace(generator):
    lines = ["100 (a - b) / |b|: the relative difference; x_.j a subscript.", "",
             ">>> relative_difference(0.33, 0.30) > 9", "True", "",
             "Literal::", "", "    |not escaped|", "", "``|x|`` stays a literal."]
    out = generator.prepare_docstring("cumgain.stats", lines)
    assert out[0] == r"100 (a - b) / \|b\|: the relative difference; x\_.j a subscript."
    setup = out.index(".. testsetup:: cumgain.stats")
    assert "import_module('cumgain.stats')" in out[setup + 3]
    doctest = out.index(".. doctest:: cumgain.stats")
    assert out[doctest + 2:doctest + 4] == ["   >>> relative_difference(0.33, 0.30) > 9",
                                            "   True"]
    assert "    |not escaped|" in out and "``|x|`` stays a literal." in out


def test_layout_lists_every_module(generator):
    page = generator.layout_page()
    for path in sorted((ROOT / "cumgain").rglob("*.py")):
        if "__pycache__" not in path.parts:
            assert f"`{path.relative_to(ROOT).as_posix()}`" in page


# ---------------------------------------------------------------- the README

def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading, which MyST gives it too
    (``myst_heading_anchors``): lower case, punctuation but ``-`` and ``_`` dropped,
    spaces made ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set:
    """The heading anchors of a Markdown page (none for reStructuredText)."""
    if page.suffix != ".md":
        return set()
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_readme_is_a_landing_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines"


def test_readme_links_into_docs_resolve():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)\s]+)\)", text)
    assert len(links) >= 10, "the README should link into the documentation"
    for link in links:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), link
        if anchor:
            assert anchor in _anchors(target), link


#: What a README example needs beyond cumgain, told by what it calls.
_NEEDS = {"plot.": "matplotlib", "cumgain.dask": "dask", "to_dataframe": "pandas"}


def test_readme_python_examples_run(tmp_path, monkeypatch):
    """Every ```python block of the README runs, in order and in one namespace, in a
    folder holding the demo collection (as the README says); a block whose optional
    dependency is missing is left out."""
    from cumgain.datasets import demo_collection

    demo_collection().write_trec(tmp_path)
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.+?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    namespace: dict = {}
    ran = 0
    for block in blocks:
        needs = [module for marker, module in _NEEDS.items() if marker in block]
        if any(importlib.util.find_spec(module) is None for module in needs):
            continue
        if "cumgain.dask" in block:         # the README converts the run first
            from cumgain.convert import convert_run
            convert_run("good.run", "good.parquet", partition_by_topic=True)
        exec(compile(block, "README.md", "exec"), namespace)
        ran += 1
    assert ran >= len(blocks) - 2


def test_readme_set_up_commands_are_the_ones_ci_runs():
    """The README's "Two commands on a fresh machine" are run verbatim by .ci/run."""
    ci = ROOT / ".ci" / "run"
    if not ci.is_file():
        pytest.skip(".ci/run is not in this checkout")
    text = README.read_text(encoding="utf-8")
    assert "## Two commands on a fresh machine\n" in text
    commands = re.findall(r"# README: \w+ command\n(.+?)(?: >| && run_pytest)",
                          ci.read_text(encoding="utf-8"))
    section = text.split("## Two commands on a fresh machine\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)
    assert len(commands) == len(blocks) == 2
    assert blocks[0] == commands[0]                    # pip install . && cumgain demo
    assert blocks[1] == commands[1] + " && pytest"     # pip install ".[test]" && pytest


def test_public_names_have_numpydoc_parameters():
    """Every public name of cumgain (``__all__``), cumgain.stats, cumgain.curves,
    cumgain.report and cumgain.plot documents its parameters in a numpydoc section
    (classes: Parameters or Attributes); exceptions and constants are left out."""
    docscrape = pytest.importorskip("numpydoc.docscrape")
    pytest.importorskip("matplotlib")
    import importlib
    import inspect

    missing = []
    for name in ("cumgain", "cumgain.stats", "cumgain.curves", "cumgain.report",
                 "cumgain.plot"):
        module = importlib.import_module(name)
        public = getattr(module, "__all__", None) or [
            key for key, value in vars(module).items() if not key.startswith("_")
            and (inspect.isfunction(value) or inspect.isclass(value))
            and value.__module__ == module.__name__]
        for key in public:
            value = getattr(module, key)
            if inspect.isclass(value):
                if issubclass(value, BaseException):
                    continue
                doc = docscrape.ClassDoc(value, config={"show_class_members": False})
                documented = doc["Parameters"] or doc["Attributes"]
            elif callable(value):
                documented = docscrape.FunctionDoc(value)["Parameters"]
            else:
                continue
            if not documented:
                missing.append(f"{name}.{key}")
    assert missing == []
