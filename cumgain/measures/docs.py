"""The README's table of measures, generated from the registry (a test checks that the
README holds exactly this table): ``python -m cumgain.measures.docs`` prints it."""
from __future__ import annotations

from cumgain.measures.base import FAMILIES, Family
from cumgain.measures.trec_names import TREC_ORDER

_SUMMARY = {"mean": "mean", "mean_defined": "mean of the defined values", "sum": "sum", "gmean": "geometric mean", "first": "the run's tag",
            "none": "none"}
_SYNTAX = {"plain": "", "cutoffs": "cut-offs", "float_cutoffs": "fractions",
           "floats": "numbers", "pairs": "level=gain pairs"}


def _number(value: float) -> str:
    return f"{value:g}"


def _trec_spelling(family: Family) -> str:
    if family.trec is None:
        return ""
    if family.trec == "plain":
        return f"`{family.name}`"
    if family.trec == "pairs":
        named = {"rbp": "p=0.9,", "rbp_resid": "p=0.9"}.get(family.name, "")
        pairs = "" if family.name == "rbp_resid" else "1=3,2=9"
        return f"`{family.name}`, `{family.name}.{named}{pairs}`"
    defaults = ",".join(_number(v) for v in family.trec_defaults)
    return f"`{family.name}` (= `{family.name}.{defaults}`)"


def _ir_spelling(family: Family) -> str:
    if not family.ir_names:
        return ""
    at = {"none": "", "cutoff": "@k", "cutoff_required": "@k", "recall": "@0.5"}[family.at]
    names = ", ".join(f"`{name}{at}`" for name in family.ir_names)
    params = ", ".join(family.ir_params)
    return names + (f" ({params})" if params else "")


def _ordered() -> list:
    known = [FAMILIES[name] for name in TREC_ORDER if name in FAMILIES]
    return known + [family for family in FAMILIES.values() if family not in known]


def markdown_table() -> str:
    """One row per measure family: its spellings, what it needs, how topics combine,
    and its formula."""
    lines = ["| trec_eval | ir_measures form (parameters) | input | summary | computes |",
             "|---|---|---|---|---|"]
    for family in _ordered():
        needs = {"ranking": "qrels", "judgment_groups": "`-R qrels_jg`",
                 "preferences": "`-R prefs`", "subtopics": "subtopic qrels"}[family.input]
        if family.since:
            needs += f" (trec_eval {family.since}.0)"
        formula = family.formula.replace("|", "\\|")
        lines.append(f"| {_trec_spelling(family)} | {_ir_spelling(family)} | {needs} | "
                     f"{_SUMMARY[family.aggregate]} | {formula} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":      # pragma: no cover
    print(markdown_table(), end="")
