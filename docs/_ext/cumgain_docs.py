"""What the documentation generates from the code at build time.

* :func:`measure_catalogue`: the measure catalogue (Markdown), one row per family of
  :data:`cumgain.measures.FAMILIES`, with its trec_eval, ir_measures and ranx spellings
  as the parser reads them, its parameters and its one-line formula;
* :func:`build_gallery`: runs each ``docs/gallery/*.py`` on the demo collection and saves
  the figures it leaves in its namespace;
* :func:`demo_dir`: the demo collection as TREC files (``qrels.txt``, ``good.run``,
  ``fair.run``, ``poor.run``), where the pages' examples run.

As a Sphinx extension (``extensions = ["cumgain_docs"]``) it writes ``docs/_generated/``
when the builder starts. It imports only cumgain, so ``tests/test_docs.py`` uses it
without Sphinx: ``python docs/_ext/cumgain_docs.py`` writes the same files.
"""
from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import runpy
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
GENERATED = DOCS / "_generated"

# ----------------------------------------------------------------- the measure catalogue

#: The family modules of cumgain.measures, in the catalogue's order, with a title and a
#: sentence each. A family from a module not listed here fails the build: say where it
#: belongs.
GROUPS = {
    "cumgain.measures.counts": (
        "Counts", "What trec_eval counts per topic; the summary is the sum over topics."),
    "cumgain.measures.binary": (
        "Binary relevance",
        "A document is relevant when its judged level is at least the relevance level "
        "(`relevance_level=`, `-l`, `rel=`; default 1). found(k) is the number of relevant "
        "documents in the top k, R the number of relevant judgments, N the documents "
        "retrieved."),
    "cumgain.measures.judged": (
        "Judged and unjudged documents",
        "Measures that tell judged documents from unjudged ones."),
    "cumgain.measures.graded": (
        "Graded: nDCG and the cumulated-gain family",
        "trec_eval's graded measures and the measures of Järvelin & Kekäläinen (TOIS "
        "2002). In measure names the discount is trec_eval's 1/log2(i+1) and the gain the "
        "relevance level unless the name says otherwise, so `nDCG@10` equals "
        "`ndcg_cut_10`."),
    "cumgain.measures.sakai": (
        "NTCIREVAL (Sakai)", "Sakai's graded measures as NTCIREVAL and pyNTCIREVAL compute "
        "them."),
    "cumgain.measures.ir_measures_misc": (
        "ir_measures' own providers", "Measures ir_measures computes with its own small "
        "providers (gdeval, judged, compat, accuracy)."),
    "cumgain.measures.torchmetrics": (
        "torchmetrics' retrieval measures", "torchmetrics' definitions, over the retrieved "
        "documents only (torchmetrics has no qrels): a document is relevant when judged at "
        "the relevance level or above, every other retrieved one non-relevant; `top_k=` is "
        "the cut-off `@k`. See `cumgain.measures.torchmetrics` for what differs."),
    "cumgain.measures.cwl": (
        "C/W/L (cwl_eval)", "The user-model measures of cwl_eval, as ir_measures' "
        "`cwl_eval` provider runs them: W_i is the weight of rank i, c_i the chance of "
        "going on from rank i."),
    "cumgain.measures.diversity": (
        "Diversity (ndeval)", "The TREC Web track's ndeval measures over subtopic "
        "judgments (`qid subtopic docno rel`); read them with "
        "`cumgain.load_subtopics`."),
    "cumgain.measures.judgment_groups": (
        "Judgment groups (`-R qrels_jg`)", "Measures averaged over trec_eval's judgment "
        "groups; read them with `cumgain.load_judgment_groups`."),
    "cumgain.measures.preferences": (
        "Preferences (`-R prefs`)", "trec_eval's preference measures; read the judgments "
        "with `cumgain.load_preferences`."),
}

#: Every parameter of the ir_measures form (cumgain.measures.parse.PARAMS). A parameter
#: the parser knows and this table does not fails the build.
PARAMETERS = {
    "rel": "relevance level of the binary decisions, a number >= 0 (the evaluation's "
           "`relevance_level` if not given); graded gains never change with it",
    "judged_only": "`True`: drop documents without a judgment before computing "
                   "(trec_eval's `-J`, for this measure only)",
    "gains": "gain mapping: a scheme (`'0-1-10-100'`, `'exponential'`, `'identity>=2'`) "
             "or a `{level: gain}` table naming every judged level >= 0",
    "dcg": "`'log2'` (the default) or `'exp-log2'` (ir_measures' spelling of "
           "`gains='exponential'`; not with `gains=`)",
    "discount": "the DCG discount: `tois`, `note`, `trec_eval`, `none` or `rank`",
    "base": "the logarithm base b of the `tois` and `note` discounts, > 1",
    "beta": "a weight >= 0 (set_F's F-beta, Q's beta, NRBP's patience)",
    "relative": "`SetP(relative=True)`: set precision relative to min(N, R)",
    "p": "the persistence (RBP, Compat, NERR10) or per-rank factor (iRBU), in [0, 1]",
    "alpha": "the novelty penalty of the diversity measures, in [0, 1]",
    "T": "the user's target amount of gain (INST, BPM, NERR11), > 0",
    "min_rel": "the level mapped to gain 0 (whole number)",
    "max_rel": "the level mapped to gain 1, or the top level of nERR/iRBU/ERR "
               "(whole number)",
    "normalize": "`Compat(normalize=False)`: the RBO without dividing by the ideal's",
    "residual": "`RBP(rel=1, residual=True)`: cwl_eval's residual (`cwl_eval -r`), what "
                "unjudged documents and missing ranks up to 1000 could add",
    "e": "iRBU's effort term, a finite number >= 0 (default 0: left out)",
    "top_k": "torchmetrics' spelling of the cut-off: `RetrievalMAP(top_k=10)` is "
             "`RetrievalMAP@10` (a whole number >= 1; not with `@k`)",
    "max_fpr": "`AUROC(max_fpr=0.5)`: the standardized partial AUC over [0, max_fpr], a "
               "number in (0, 1] (1: the whole AUC, the default)",
    "adaptive_k": "`RetrievalPrecision(adaptive_k=True)@k`: divide by min(k, N) instead "
                  "of k",
    "empty_target_action": "the value of a query without a relevant retrieved document "
                           "(FallOut: without a non-relevant one): `'neg'` 0, `'pos'` 1, "
                           "`'skip'` left out of the mean (torchmetrics' defaults: `'pos'` "
                           "for FallOut, `'neg'` for the others)",
}

_SUMMARY = {"mean": "mean", "mean_defined": "mean of the defined values", "sum": "sum",
            "gmean": "geometric mean", "first": "the last line's run tag", "none": "none"}
_INPUT = {"ranking": "qrels", "judgment_groups": "judgment groups (`-R qrels_jg`)",
          "preferences": "preferences (`-R prefs`)",
          "subtopics": "subtopic judgments"}


def _code(text: str) -> str:
    return f"`{text}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _number(value: float) -> str:
    return f"{value:g}"


def _trec_spellings(family) -> list:
    """trec_eval's spellings of a family (with its default parameters)."""
    if family.trec is None:
        return []
    if family.trec == "plain":
        return [_code(family.name)]
    if family.trec == "pairs":
        example = {"rbp": "rbp.p=0.9,1=3,2=9", "rbp_resid": "rbp_resid.p=0.9"}.get(
            family.name, f"{family.name}.1=3,2=9")
        return [_code(family.name), _code(example)]
    defaults = ",".join(_number(v) for v in family.trec_defaults)
    spelled = {"cutoffs": f"{family.name}.5,10", "float_cutoffs": f"{family.name}.0.5",
               "floats": f"{family.name}.{defaults}"}[family.trec]
    return [f"{_code(family.name)} (= {_code(family.name + '.' + defaults)})",
            _code(spelled)]


def _family_of(spelling: str):
    """The family the parser reads ``spelling`` as, or None where it refuses it (a family
    that needs a parameter the spelling lacks)."""
    from cumgain.exceptions import InputError
    from cumgain.measures import parse_measure

    try:
        return parse_measure(spelling)[0].family
    except InputError:
        return None


def _ir_spellings(family) -> list:
    """The ir_measures names of a family, with ``@k`` where it takes a cut-off, unless
    the cut-off form is another family's (``AP@k`` is map_cut: the map row says ``AP``)."""
    at = {"none": "", "cutoff": "@k", "cutoff_required": "@k", "recall": "@0.5"}[family.at]
    if at == "@k" and family.redirect is not None and family.ir_names \
            and _family_of(f"{family.ir_names[0]}@10") not in (None, family.name):
        at = ""
    return [_code(name + at) for name in family.ir_names]


def _redirected_ir_spellings() -> dict:
    """ir_measures forms the parser resolves to another family than the one declaring
    the name (``AP@k`` is trec_eval's map_cut): target family -> (spellings, the
    parameters they take)."""
    from cumgain.measures import FAMILIES

    found: dict = {}
    for family in FAMILIES.values():
        if family.redirect is None or not family.ir_names:
            continue
        for name in family.ir_names:
            for spelled, shown in ((f"{name}@10", f"{name}@k"), (name, name)):
                target = _family_of(spelled)
                if target not in (None, family.name):
                    spellings, params = found.setdefault(target, ([], []))
                    spellings.append(_code(shown))
                    params += [p for p in family.ir_params if p not in params]
    return found


def _ranx_spellings() -> dict:
    """family -> ranx's spellings that the parser reads as it (ranx's metric names, with
    ``@k`` where ranx takes a cut-off; ``-lN`` sets ranx's relevance level). A bare name
    trec_eval also has is trec_eval's measure: listed only where that is ranx's too."""
    from cumgain.measures import parse_measure
    from cumgain.measures.parse import RANX_NAMES, _WITHOUT_CUTOFF, _parse_ir

    found: dict = {}
    for name, template in RANX_NAMES.items():
        if "{at}" in template:
            family = parse_measure(f"{name}@10")[0].family
            found.setdefault(family, []).append(_code(f"{name}@k"))
        meant = _WITHOUT_CUTOFF.get(name, template).format(at="", rel=1)
        ranx_family = _parse_ir(meant).family
        if parse_measure(name)[0].family == ranx_family:
            found.setdefault(ranx_family, []).append(_code(name))
        elif _family_of(f"{name}-l1") == ranx_family:     # the bare name is trec_eval's
            found.setdefault(ranx_family, []).append(_code(f"{name}-lN"))
    return found


def _ordered_families() -> list:
    from cumgain.measures import FAMILIES, TREC_ORDER

    known = [FAMILIES[name] for name in TREC_ORDER if name in FAMILIES]
    return known + [family for family in FAMILIES.values() if family not in known]


def _group_of(family) -> str:
    module = getattr(family.compute, "__module__", "")
    if module not in GROUPS:
        raise RuntimeError(
            f"measure family {family.name!r} is computed in {module!r}, which "
            f"docs/_ext/cumgain_docs.py's GROUPS does not list: add it there")
    return module


#: The definitions of the main families as equations (MathJax), shown above their
#: one-line formula. Notation: N documents retrieved, R relevant judgments, rel(i) = 1 if
#: the document at rank i is relevant, found(k) = sum_{i<=k} rel(i), g(i) its gain,
#: df(i) the discount, I the ideal ranking.
LATEX = {
    "map": r"\mathrm{AP} = \frac{1}{R} \sum_{i:\, \mathrm{rel}(i)} \frac{\mathrm{found}(i)}{i}",
    "map_cut": r"\mathrm{AP@}k = \frac{1}{R} \sum_{i \le k:\, \mathrm{rel}(i)} \frac{\mathrm{found}(i)}{i}",
    "Rprec": r"\mathrm{Rprec} = \frac{\mathrm{found}(R)}{R}",
    "recip_rank": r"\mathrm{RR} = \frac{1}{\min\{i : \mathrm{rel}(i)\}}",
    "P": r"\mathrm{P@}k = \frac{\mathrm{found}(k)}{k}",
    "recall": r"\mathrm{R@}k = \frac{\mathrm{found}(k)}{R}",
    "relative_P": r"\frac{\mathrm{found}(k)}{\min(k, R)}",
    "success": r"\mathrm{Success@}k = [\mathrm{found}(k) > 0]",
    "f1": r"F_1\mathrm{@}k = \frac{2 P R}{P + R},\quad P = \frac{\mathrm{found}(k)}{k},\ R = \frac{\mathrm{found}(k)}{R_{\mathrm{total}}}",
    "bpref": r"\mathrm{bpref} = \frac{1}{R} \sum_{d \text{ relevant, retrieved}} \left(1 - \frac{\min(n_d, R)}{\min(N_{\mathrm{nonrel}}, R)}\right)",
    "CG": r"\mathrm{CG@}k = \sum_{i=1}^{k} g(i)",
    "DCG": r"\mathrm{DCG@}k = \sum_{i=1}^{k} \frac{g(i)}{\mathrm{df}(i)}",
    "nCG": r"\mathrm{nCG@}k = \frac{\mathrm{CG@}k}{\mathrm{CG}_I\mathrm{@}k}",
    "nDCG": r"\mathrm{nDCG@}k = \frac{\mathrm{DCG@}k}{\mathrm{DCG}_I\mathrm{@}k}",
    "ndcg_cut": r"\mathrm{ndcg\_cut}.k = \frac{\sum_{i \le k} g(i) / \log_2(i + 1)}{\sum_{i \le k} g_I(i) / \log_2(i + 1)}",
    "ndcg": r"\mathrm{ndcg} = \frac{\sum_{i \le N} g(i) / \log_2(i + 1)}{\sum_{i \le R} g_I(i) / \log_2(i + 1)}",
    "avg_pos_nDCG": r"\frac{1}{k} \sum_{i=1}^{k} \mathrm{nDCG}[i]",
    "avg_pos_nCG": r"\frac{1}{k} \sum_{i=1}^{k} \mathrm{nCG}[i]",
    "rbp": r"\mathrm{RBP} = (1 - p) \sum_{i} g(i)\, p^{i-1}",
    "ERR": r"\mathrm{ERR@}k = \sum_{i=1}^{k} \frac{R_i}{i} \prod_{j<i} (1 - R_j),\quad R_i = \frac{2^{\ell_i} - 1}{2^{4}}",
    "nERR": r"\mathrm{nERR@}k = \frac{\mathrm{ERR@}k}{\mathrm{ERR}_I\mathrm{@}k},\quad R_i = \frac{g_i}{g_{\max} + 1}",
    "Q": r"Q\mathrm{@}k = \frac{1}{\min(R, k)} \sum_{i \le k:\, g_i > 0} \frac{C(i) + \beta\, cg(i)}{i + \beta\, cg_I(i)}",
    "set_P": r"\frac{\mathrm{num\_rel\_ret}}{N}",
    "set_recall": r"\frac{\mathrm{num\_rel\_ret}}{R}",
    "set_map": r"\frac{\mathrm{num\_rel\_ret}^2}{N R}",
    "set_F": r"F_\beta = \frac{(\beta + 1) P R}{\beta P + R}",
    "binG": r"\frac{1}{R} \sum_{i:\, \mathrm{rel}(i)} \frac{1}{\log_2(i + 2 - \mathrm{found}(i))}",
    "yaap": r"\log \frac{1 + S}{1 + R - S},\quad S = \sum_{i:\, \mathrm{rel}(i)} \frac{\mathrm{found}(i)}{i}",
    "alpha_DCG": r"\alpha\mathrm{DCG@}k = \sum_{i \le k} \frac{\sum_s J_s(i) (1 - \alpha)^{c_s(i)}}{\log_2(i + 1)}",
}


def _expected_ties(family) -> str:
    """What ``ties="expected"`` does for a family (see the user guide's Ties)."""
    if family.input != "ranking":
        return "refused (its gains depend on the documents above)"
    if not family.ordered:
        return "exact: each group of equal scores shares its mean (linear in the ranking)"
    if family.expected_ties:
        return "exact: a closed form over the orders of each group"
    return "refused: no exact form here; `ties=\"optimistic\"` / `\"pessimistic\"` bound it"


def measure_catalogue() -> str:
    """The catalogue as Markdown: the parameters, then per group of families a section
    per family (its definition and source, then a two-column table: its spellings,
    parameters, input, summary and what ties="expected" does), then trec_eval's
    nicknames."""
    from cumgain.measures import FAMILIES, NICKNAMES
    from cumgain.measures.parse import PARAMS

    unknown = sorted(set(PARAMS) - set(PARAMETERS))
    if unknown:
        raise RuntimeError(f"parameters {unknown} of cumgain.measures.parse.PARAMS are "
                           f"not described in docs/_ext/cumgain_docs.py's PARAMETERS")
    redirected, ranx = _redirected_ir_spellings(), _ranx_spellings()
    by_group: dict = {module: [] for module in GROUPS}
    for family in _ordered_families():
        by_group[_group_of(family)].append(family)

    out = [f"{len(FAMILIES)} measure families, generated from `cumgain.measures.FAMILIES` "
           "when these pages were built. Each entry gives the family's spellings as the "
           "parser reads them: trec_eval's (with its default parameters, and an example "
           "of its own), ir_measures' (`@k` where it takes a cut-off) and ranx's (each "
           "also with ranx's relevance level, `-lN`), the parameters of the ir_measures "
           "form, what it is computed from, how topics combine, and what "
           "`ties=\"expected\"` does for it.", ""]
    out += ["(catalogue-parameters)=", "## Parameters of the ir_measures form", "",
            "Written `Name(key=value, ...)@k`; a family takes only the parameters its "
            "row lists (any other is an error naming the ones it takes).", "",
            "| parameter | meaning |", "|---|---|"]
    out += [f"| `{key}` | {_cell(PARAMETERS[key])} |" for key in PARAMS]
    out.append("")
    for module, families in by_group.items():
        if not families:
            continue
        title, blurb = GROUPS[module]
        out += [f"## {title}", "", blurb, ""]
        for family in families:
            input_ = _INPUT[family.input] + (
                f" (trec_eval {family.since}.0)" if family.since else "")
            more, more_params = redirected.get(family.name, ([], []))
            keys = dict.fromkeys(family.ir_params + tuple(more_params))
            params = ", ".join(f"`{key}`" for key in keys) or "none"
            spellings = [("trec_eval", "<br>".join(_trec_spellings(family))),
                         ("ir_measures", ", ".join(_ir_spellings(family) + more)),
                         ("ranx", ", ".join(ranx.get(family.name, [])))]
            out += [f"### {family.name}", ""]
            if family.name in LATEX:
                out += ["$$", LATEX[family.name], "$$", ""]
            out += [_cell(family.formula) + (f" *({_cell(family.source)})*"
                                             if family.source else ""), "",
                    "| | |", "|---|---|"]
            out += [f"| {label} | {text} |" for label, text in spellings if text]
            out += [f"| parameters | {params} |",
                    f"| input, summary | {input_}; {_SUMMARY[family.aggregate]} |",
                    f"| `ties=\"expected\"` | {_expected_ties(family)} |", ""]
        out.append("")
    out += ["(catalogue-nicknames)=", "## trec_eval's nicknames", "",
            "`-m NICKNAME` (and `evaluate(..., [NICKNAME])`) marks exactly trec_eval 10.0's "
            "members:", "", "| nickname | measures |", "|---|---|"]
    out += [f"| `{name}` | {', '.join(_code(m) for m in members)} |"
            for name, members in NICKNAMES.items()]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------- demo data and gallery

_DEMO: list = []


def demo_dir() -> Path:
    """The demo collection as TREC files, written once per process to
    ``docs/_generated/demo`` (``qrels.txt``, ``good.run``, ``fair.run``,
    ``poor.run``)."""
    if not _DEMO:
        from cumgain.datasets import demo_collection

        folder = GENERATED / "demo"
        demo_collection().write_trec(folder, overwrite=True)
        _DEMO.append(folder)
    return _DEMO[0]


def build_gallery(out: Path) -> list:
    """Run every ``docs/gallery/*.py`` (in the demo folder, so it finds ``qrels.txt``
    and the runs) and save each matplotlib Figure it leaves in its namespace as
    ``out/<script>-<i>.png``. Returns ``[(script, title, text, [png, ...], printed)]``:
    the title and text from the script's docstring, and what it printed. A script that
    fails, or leaves no figure, fails the build."""
    from matplotlib.figure import Figure

    out.mkdir(parents=True, exist_ok=True)
    entries = []
    here = os.getcwd()
    os.chdir(demo_dir())
    try:
        for script in sorted((DOCS / "gallery").glob("*.py")):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                namespace = runpy.run_path(str(script), run_name="__gallery__")
            figures = [v for v in namespace.values() if isinstance(v, Figure)]
            if not figures:
                raise RuntimeError(f"{script}: leaves no matplotlib Figure to show")
            images = []
            for i, figure in enumerate(figures):
                png = out / f"{script.stem}-{i}.png"
                figure.savefig(png, dpi=80)
                images.append(png)
            doc = (namespace.get("__doc__") or script.stem).strip()
            title, _, text = doc.partition("\n")
            entries.append((script, title.strip(), text.strip(), images, printed.getvalue()))
    finally:
        os.chdir(here)
    return entries


def _after_docstring(script: Path) -> int:
    """The first line after the script's docstring (1-based)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    first = tree.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    return first.end_lineno + 1 if docstring else 1


def gallery_page(entries: list) -> str:
    """The gallery as Markdown: per script, its text, its figures, then its code."""
    out = []
    for script, title, text, images, printed in entries:
        out += [f"## {title}", "", text, ""]
        for png in images:
            out += [f"```{{image}} /{png.relative_to(DOCS).as_posix()}",
                    f":alt: {title}", ":width: 100%", "```", ""]
        out += [f"```{{literalinclude}} /{script.relative_to(DOCS).as_posix()}",
                ":language: python", f":lines: {_after_docstring(script)}-", "```", ""]
        if printed:
            out += ["It prints:", "", "```text", printed.rstrip("\n"), "```", ""]
    return "\n".join(out)


# ----------------------------------------------------------------- the source layout

REPO = DOCS.parent


def _first_sentence(text: str) -> str:
    """The first sentence of a docstring's or comment's first paragraph."""
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    cut = paragraph.find(". ")
    if 0 < cut < 240:
        return paragraph[:cut + 1]
    return paragraph if len(paragraph) <= 240 else paragraph[:237].rsplit(" ", 1)[0] + " ..."


def _summary(path: Path) -> str:
    """What a source file says it is: its module docstring (Python, Cython) or its
    leading comment (Cython ``#`` lines, C ``/* */``), first sentence."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        doc = ast.get_docstring(ast.parse(text))
        return _first_sentence(doc) if doc else ""
    stripped = text.lstrip()
    for quote in ('"' * 3, "'" * 3):
        if stripped.startswith(quote):
            return _first_sentence(stripped[3:stripped.find(quote, 3)])
    if stripped.startswith("/*"):
        body = stripped[2:stripped.find("*/")]
        return _first_sentence("\n".join(line.strip().lstrip("*").strip()
                                         for line in body.splitlines()))
    lines = []
    for line in stripped.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return _first_sentence("\n".join(lines))


def source_files() -> list:
    """The package's source files, as the layout lists them: cgcore's Cython and C
    sources, then cumgain's modules."""
    core = sorted(p for p in (REPO / "cgcore").iterdir()
                  if p.suffix in (".pyx", ".pxd", ".h") or p.name == "__init__.py")
    package = sorted(p for p in (REPO / "cumgain").rglob("*.py")
                     if "__pycache__" not in p.parts)
    return core + package


def layout_page() -> str:
    """The source layout as Markdown: one row per source file, with the first sentence
    of what the file says it is."""
    out = ["| file | what it is |", "|---|---|"]
    for path in source_files():
        summary = re.sub(r":[a-z]+:`~?\.?([^`]+)`", r"`\1`", _summary(path))  # reST roles
        summary = summary.replace("``", "`")
        out.append(f"| `{path.relative_to(REPO).as_posix()}` | {_cell(summary) or '&nbsp;'} |")
    return "\n".join(out) + "\n"


def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (keeps incremental builds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate() -> None:
    """Write everything under ``docs/_generated``."""
    demo_dir()
    _write(GENERATED / "measure_catalogue.md", measure_catalogue())
    _write(GENERATED / "layout.md", layout_page())
    _write(GENERATED / "gallery.md", gallery_page(build_gallery(GENERATED / "gallery")))


def _builder_inited(app) -> None:
    generate()


# ----------------------------------------------------------------- docstrings

# cumgain's docstrings are also read as plain text (help(), a terminal), so their formulas
# write an absolute value as |x| and a subscript as x_.j. Neither is reST markup here
# (these pages define no substitutions, and docstrings no hyperlink targets).
_ABS = re.compile(r"(?<![\w|\\])\|(?=\S)([^|`\n]*?\S)\|(?![\w|])")
_SUBSCRIPT = re.compile(r"(?<=\w)_(?=[.,;:)\]])")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _escape_formulas(line: str) -> str:
    """``line`` with |x| and x_. escaped outside its ``literals``."""
    parts = line.split("``")
    for j in range(0, len(parts), 2):
        parts[j] = _SUBSCRIPT.sub(r"\\_", _ABS.sub(r"\\|\1\\|", parts[j]))
    return "``".join(parts)


def prepare_docstring(module: str, lines: list) -> list:
    """A docstring's ``lines`` as the API reference parses them:

    * each ``>>>`` block becomes a ``.. doctest::`` of group ``module``, after a hidden
      ``.. testsetup::`` that gives the group the module's namespace, so that the doctest
      build runs it as ``pytest --doctest-modules`` would;
    * elsewhere (not in literal blocks, grid tables or ``literals``) the plain-text
      formulas |x| and x_.j are escaped.
    """
    out: list = []
    literal = None                      # the indent of the paragraph that opened a ::
    i = 0
    while i < len(lines):
        line = lines[i]
        if literal is not None and line.strip() and _indent(line) <= literal:
            literal = None
        if line.lstrip().startswith(">>>") and literal is None:
            indent = line[:_indent(line)]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][len(indent):] if lines[i].startswith(indent)
                             else lines[i])
                i += 1
            if out and out[-1].strip():
                out.append("")
            out += [f"{indent}.. testsetup:: {module}", "",
                    f"{indent}   import importlib",
                    f"{indent}   globals().update(vars(importlib.import_module({module!r})))",
                    "", f"{indent}.. doctest:: {module}", ""]
            out += [f"{indent}   {text}" for text in block]
            out.append("")
            continue
        if literal is None and not line.lstrip().startswith(("|", "+")):
            line = _escape_formulas(line)
        if literal is None and line.rstrip().endswith("::"):
            literal = _indent(line)
        out.append(line)
        i += 1
    return out


def _prepare_docstring(app, what, name, obj, options, lines) -> None:
    module = name if what == "module" else getattr(obj, "__module__", None)
    if isinstance(module, str):
        lines[:] = prepare_docstring(module, lines)


def setup(app):
    # ``{command-output}`` runs in the demo folder unless its ``:cwd:`` says otherwise.
    app.setup_extension("sphinxcontrib.programoutput")
    from sphinxcontrib.programoutput import ProgramOutputDirective

    class DemoCommand(ProgramOutputDirective):
        def run(self):
            self.options.setdefault("cwd", "/_generated/demo")
            return super().run()

    app.add_directive("command-output", DemoCommand, override=True)
    app.connect("builder-inited", _builder_inited)
    # Before numpydoc (priority 500) reads them: docstrings' >>> examples made doctests
    # (doctest_test_doctest_blocks = "" in conf.py leaves the rest alone), formulas escaped.
    app.connect("autodoc-process-docstring", _prepare_docstring, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":      # pragma: no cover
    generate()
    print(f"wrote {GENERATED}", file=sys.stderr)
