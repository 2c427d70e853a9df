"""What the documentation generates from the code at build time.

* :func:`catalogue_fragments`: the measure catalogue (Markdown) from
  :data:`cumgain.measures.FAMILIES`: the index of docs/measures.md (a row per family:
  its name, ir_measures names and what it is), and for each group's page
  (docs/measures/*.md) an entry per family: its definition (an equation where
  :data:`LATEX` has one), its trec_eval, ir_measures and ranx spellings as the parser
  reads them, its parameters, input and source;
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

#: The family modules of cumgain.measures, in the catalogue's order, each with the page
#: that documents its families: docs/measures/<page>.md, whose first line is the group's
#: title and which includes _generated/measures/<page>.md (the families' entries). A
#: family from a module not listed here, or a page missing, fails the build.
GROUPS = {
    "cumgain.measures.counts": "counts",
    "cumgain.measures.binary": "binary",
    "cumgain.measures.judged": "judged",
    "cumgain.measures.graded": "graded",
    "cumgain.measures.sakai": "ntcireval",
    "cumgain.measures.ir_measures_misc": "ir-measures",
    "cumgain.measures.torchmetrics": "torchmetrics",
    "cumgain.measures.cwl": "cwl",
    "cumgain.measures.diversity": "diversity",
    "cumgain.measures.judgment_groups": "judgment-groups",
    "cumgain.measures.preferences": "preferences",
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
    "gamma": "rank-biased NCU's gamma, in [0, 1] (NTCIREVAL's `--gamma`; default 0.95): "
             "the chance of stopping at the n-th relevant document is proportional to "
             "gamma^(n - 1)",
    "stops": "graded-uniform NCU's stop values, a `{level: value}` table naming every "
             "relevant level, values >= 0 (NTCIREVAL's `-s 1:2:3` is `stops={1: 1, 2: 2, "
             "3: 3}`; default: the gains)",
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
            "gmean": "geometric mean", "first": "the last line's run tag",
            "none": "none (per topic only)"}
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


def _page_title(page: str) -> str:
    """The title of docs/measures/<page>.md (its first line, ``# title``)."""
    path = DOCS / "measures" / f"{page}.md"
    if not path.is_file():
        raise RuntimeError(f"docs/measures/{page}.md, the page of a group of measure "
                           f"families (docs/_ext/cumgain_docs.py's GROUPS), is missing")
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    if not first.startswith("# "):
        raise RuntimeError(f"docs/measures/{page}.md: the first line is not '# title'")
    return first[2:].strip()


def _anchor(name: str) -> str:
    """The label of a family's entry: ``measure-`` and its name in lower case (Sphinx
    labels ignore case); where two names differ only in case (``ndcg``, ``nDCG``), the
    one in lower case keeps it and the other gets ``-2``."""
    from cumgain.measures import FAMILIES

    lower = name.lower()
    if name != lower and lower in FAMILIES:
        return f"measure-{lower}-2"
    return f"measure-{lower}"


#: What each family is, in a few words: the index on the catalogue's first page and the
#: first line of its entry. A family without one shows its one-line formula (in code) in
#: the index.
MEANING = {
    # counts
    "runid": "the run's tag",
    "num_q": "number of topics evaluated",
    "num_ret": "documents retrieved",
    "num_rel": "relevant judgments",
    "num_rel_ret": "relevant documents retrieved",
    "num_nonrel_judged_ret": "judged non-relevant documents retrieved",
    # binary
    "map": "average precision (its mean over topics: MAP)",
    "gm_map": "geometric mean of average precision over topics",
    "Rprec": "precision at rank R",
    "recip_rank": "reciprocal rank of the first relevant document",
    "iprec_at_recall": "interpolated precision at a recall level",
    "P": "precision at k",
    "recall": "recall at k",
    "Rprec_mult": "precision at a multiple of R",
    "utility": "linear utility of the retrieved set",
    "11pt_avg": "interpolated precision averaged over 11 recall levels",
    "binG": "binary gain, each relevant document discounted by the non-relevant above",
    "map_cut": "average precision over the top k",
    "relative_P": "precision at k relative to min(k, R)",
    "success": "1 if a relevant document is in the top k, else 0",
    "hits": "relevant documents in the top k",
    "f1": "harmonic mean of precision and recall at k",
    "set_P": "precision of the retrieved set",
    "set_relative_P": "set precision relative to min(N, R)",
    "set_recall": "recall of the retrieved set",
    "set_map": "set precision times set recall",
    "set_F": "F-measure of set precision and recall",
    "yaap": "yet another average precision (log-odds form)",
    # judged
    "bpref": "binary preference: relevant documents above judged non-relevant ones",
    "relstring": "the judgments of the top documents as a string",
    "infAP": "inferred average precision, for incomplete judgments",
    "gm_bpref": "geometric mean of bpref over topics",
    "rbp_resid": "RBP's residual: what unjudged documents could add",
    "unj": "fraction of the top k without a judgment",
    # graded
    "G": "gain discounted by the cost of reaching it, over the ideal's",
    "dcg": "DCG of the whole ranking (trec_eval)",
    "ideal_dcg": "DCG of the whole ideal ranking (trec_eval)",
    "ndcg": "nDCG of the whole ranking (trec_eval)",
    "ndcg_rel": "nDCG averaged at the relevant documents",
    "Rndcg": "nDCG averaged where the ideal gain changes",
    "ndcg_cut": "nDCG at k (trec_eval)",
    "rbp": "rank-biased precision with graded gains (trec_eval)",
    "CG": "cumulated gain at k",
    "DCG": "discounted cumulated gain at k",
    "nCG": "normalised cumulated gain at k",
    "nDCG": "normalised discounted cumulated gain at k",
    "avg_pos_nCG": "nCG averaged over ranks 1 to k",
    "avg_pos_nDCG": "nDCG averaged over ranks 1 to k",
    # NTCIREVAL
    "Q": "Q-measure: graded average precision with blended ratios",
    "OMeasure": "blended ratio at the first relevant document",
    "PMeasure": "blended ratio at the first document of the highest level retrieved",
    "PPlusMeasure": "blended ratios averaged down to the first document of the highest level",
    "nERR": "expected reciprocal rank over the ideal's (NTCIREVAL)",
    "iRBU": "intentwise rank-biased utility",
    "GAP": "graded average precision",
    "MSnDCG": "nDCG at k, NTCIREVAL's Microsoft version (= nDCG)",
    "JKnDCG": "nDCG at k with Järvelin & Kekäläinen's discount (NTCIREVAL's nDCG)",
    # ir_measures' providers
    "ERR": "expected reciprocal rank (gdeval)",
    "Judged": "fraction of the top k with a judgment",
    "Compat": "compatibility with the ideal ranking (rank-biased overlap)",
    "Accuracy": "fraction of (relevant, non-relevant) pairs ranked in that order",
    "NCUguP": "normalised cumulative utility: precision, graded-uniform stopping",
    "NCUguBR": "normalised cumulative utility: blended ratio, graded-uniform stopping",
    "NCUrbP": "normalised cumulative utility: precision, rank-biased stopping",
    "NCUrbBR": "normalised cumulative utility: blended ratio, rank-biased stopping",
    "FallOut": "fraction of the non-relevant retrieved documents in the top k (torchmetrics)",
    "AUROC": "area under the ROC curve of the top k (torchmetrics)",
    "RetrievalMAP": "average precision over the relevant documents found in the top k "
                    "(torchmetrics)",
    "RetrievalPrecision": "precision at k, or at min(k, N) with adaptive_k (torchmetrics)",
    # C/W/L
    "RBP": "rank-biased precision",
    "INST": "adaptive user model with a target gain T",
    "INSQ": "user model with a target gain T, not adapting",
    "BPM": "bejeweled player model: gain per rank until T or rank k",
    "SDCG": "DCG at k over the DCG of k documents of gain 1",
    "NERR8": "expected-reciprocal-rank user model, stopping at rank k",
    "NERR9": "expected-reciprocal-rank user model, a rank-based continuation, stopping at k",
    "NERR10": "expected-reciprocal-rank user model with persistence p",
    "NERR11": "expected-reciprocal-rank user model with a target gain T",
    # diversity
    "ERR_IA": "intent-aware expected reciprocal rank",
    "nERR_IA": "intent-aware ERR over the ideal ranking's",
    "alpha_DCG": "α-DCG: DCG with gains discounted for redundancy",
    "alpha_nDCG": "α-nDCG: α-DCG over the ideal ranking's",
    "NRBP": "novelty- and rank-biased precision",
    "nNRBP": "NRBP over the ideal ranking's",
    "AP_IA": "intent-aware average precision",
    "P_IA": "intent-aware precision at k",
    "StRecall": "subtopic recall at k",
    # judgment groups
    "map_avgjg": "average precision averaged over judgment groups",
    "P_avgjg": "precision at k averaged over judgment groups",
    "Rprec_mult_avgjg": "Rprec_mult averaged over judgment groups",
    # preferences
    "prefs_num_prefs_poss": "number of preferences stated",
    "prefs_num_prefs_ful": "number of preferences fulfilled",
    "prefs_num_prefs_ful_ret": "number of preferences fulfilled with both documents retrieved",
    "prefs_simp": "fraction of the preferences fulfilled",
    "prefs_pair": "per document pair, the fraction of groups the ranking agrees with; "
                  "the mean",
    "prefs_avgjg": "fraction of the preferences fulfilled, averaged over judgment groups",
    "prefs_avgjg_Rnonrel": "prefs_avgjg, each group's non-relevant documents cut or "
                           "padded to R",
    "prefs_simp_ret": "prefs_simp over pairs of retrieved documents",
    "prefs_pair_ret": "prefs_pair over pairs of retrieved documents",
    "prefs_avgjg_ret": "prefs_avgjg over pairs of retrieved documents",
    "prefs_avgjg_Rnonrel_ret": "prefs_avgjg_Rnonrel among retrieved documents",
    "prefs_simp_imp": "prefs_simp over pairs with a document retrieved",
    "prefs_pair_imp": "prefs_pair over pairs with a document retrieved",
    "prefs_avgjg_imp": "prefs_avgjg over pairs with a document retrieved",
}

_BR = r"\mathrm{BR}(i) = \frac{C(i) + \beta\, cg(i)}{i + \beta\, cg_I(i)}"
_CWL = r"\sum_{i \le 1000} W_i\, g_i"

#: The definitions as equations (MathJax; a tuple is several), shown above the one-line
#: formula; the notation is given on each group's page (docs/measures/*.md). A family
#: without one shows its one-line formula alone.
LATEX = {
    # binary
    "map": r"\mathrm{AP} = \frac{1}{R} \sum_{i:\, \mathrm{rel}(i)} \frac{\mathrm{found}(i)}{i}",
    "gm_map": r"\mathrm{gm\_map} = \exp\Big(\frac{1}{|T|} \sum_{t \in T} \log \max(\mathrm{AP}_t,\ 10^{-5})\Big)",
    "Rprec": r"\mathrm{Rprec} = \frac{\mathrm{found}(R)}{R}",
    "recip_rank": r"\mathrm{RR} = \frac{1}{\min\{i : \mathrm{rel}(i)\}}",
    "iprec_at_recall": r"\mathrm{iprec}(x) = \max_{j \ge i_x} \frac{\mathrm{found}(j)}{j},\quad i_x = \min\{i : \mathrm{found}(i) \ge x R\}",
    "P": r"\mathrm{P@}k = \frac{\mathrm{found}(k)}{k}",
    "recall": r"\mathrm{recall@}k = \frac{\mathrm{found}(k)}{R}",
    "Rprec_mult": r"\mathrm{Rprec\_mult}(x) = \frac{\mathrm{found}(c)}{c},\quad c = \lfloor x R + 0.9 \rfloor",
    "11pt_avg": r"\mathrm{11pt\_avg} = \frac{1}{|X|} \sum_{x \in X} \mathrm{iprec}(x),\quad X = \{0, 0.1, \ldots, 1\}",
    "binG": r"\mathrm{binG} = \frac{1}{R} \sum_{i:\, \mathrm{rel}(i)} \frac{1}{\log_2(i + 2 - \mathrm{found}(i))}",
    "map_cut": r"\mathrm{AP@}k = \frac{1}{R} \sum_{i \le k:\, \mathrm{rel}(i)} \frac{\mathrm{found}(i)}{i}",
    "relative_P": r"\mathrm{relative\_P@}k = \frac{\mathrm{found}(k)}{\min(k, R)}",
    "success": r"\mathrm{Success@}k = \begin{cases} 1 & \mathrm{found}(k) > 0 \\ 0 & \text{otherwise} \end{cases}",
    "hits": r"\mathrm{Hits@}k = \mathrm{found}(k)",
    "f1": r"F_1\mathrm{@}k = \frac{2\, \mathrm{P@}k \cdot \mathrm{recall@}k}{\mathrm{P@}k + \mathrm{recall@}k}",
    "set_P": r"\mathrm{set\_P} = \frac{\mathrm{found}(N)}{N}",
    "set_relative_P": r"\mathrm{set\_relative\_P} = \frac{\mathrm{found}(N)}{\min(N, R)}",
    "set_recall": r"\mathrm{set\_recall} = \frac{\mathrm{found}(N)}{R}",
    "set_map": r"\mathrm{set\_map} = \frac{\mathrm{found}(N)^2}{N R} = \mathrm{set\_P} \cdot \mathrm{set\_recall}",
    "set_F": r"\mathrm{set\_F} = \frac{(\beta + 1)\, \mathrm{set\_P} \cdot \mathrm{set\_recall}}{\beta\, \mathrm{set\_P} + \mathrm{set\_recall}}",
    "yaap": r"\mathrm{yaap} = \log \frac{1 + S}{1 + R - S},\quad S = \sum_{i:\, \mathrm{rel}(i)} \frac{\mathrm{found}(i)}{i}",
    # judged
    "bpref": r"\mathrm{bpref} = \frac{1}{R} \sum_{i:\, \mathrm{rel}(i)} \Big(1 - \frac{\min(n_i, R)}{\min(N_{\mathrm{nonrel}}, R)}\Big)",
    "infAP": r"\mathrm{infAP} = \frac{1}{R} \sum_{i:\, \mathrm{rel}(i)} \Big(\frac{1}{i} + \frac{r_i + n_i + u_i}{i} \cdot \frac{r_i + \epsilon}{r_i + n_i + 2 \epsilon}\Big),\quad \epsilon = 10^{-5}",
    "gm_bpref": r"\mathrm{gm\_bpref} = \exp\Big(\frac{1}{|T|} \sum_{t \in T} \log \max(\mathrm{bpref}_t,\ 10^{-5})\Big)",
    "rbp_resid": r"\mathrm{rbp\_resid} = p^N + (1 - p) \sum_{i \le N:\, d_i \text{ unjudged}} p^{i-1}",
    # graded
    "CG": r"\mathrm{CG@}k = \sum_{i=1}^{k} g(i)",
    "DCG": r"\mathrm{DCG@}k = \sum_{i=1}^{k} \frac{g(i)}{\mathrm{df}(i)}",
    "nCG": r"\mathrm{nCG@}k = \frac{\mathrm{CG@}k}{\mathrm{CG}_I\mathrm{@}k}",
    "nDCG": r"\mathrm{nDCG@}k = \frac{\mathrm{DCG@}k}{\mathrm{DCG}_I\mathrm{@}k}",
    "avg_pos_nCG": r"\mathrm{avg\_pos\_nCG@}k = \frac{1}{k} \sum_{i=1}^{k} \mathrm{nCG@}i",
    "avg_pos_nDCG": r"\mathrm{avg\_pos\_nDCG@}k = \frac{1}{k} \sum_{i=1}^{k} \mathrm{nDCG@}i",
    "dcg": r"\mathrm{dcg} = \sum_{i=1}^{N} \frac{g(i)}{\log_2(i + 1)}",
    "ideal_dcg": r"\mathrm{ideal\_dcg} = \sum_{i} \frac{g_I(i)}{\log_2(i + 1)}",
    "ndcg": r"\mathrm{ndcg} = \frac{\sum_{i \le N} g(i) / \log_2(i + 1)}{\sum_{i} g_I(i) / \log_2(i + 1)}",
    "ndcg_cut": r"\mathrm{ndcg\_cut}.k = \frac{\sum_{i \le k} g(i) / \log_2(i + 1)}{\sum_{i \le k} g_I(i) / \log_2(i + 1)}",
    "rbp": r"\mathrm{rbp} = (1 - p) \sum_{i} p^{i-1} g(i)",
    # NTCIREVAL
    "Q": (r"Q\mathrm{@}k = \frac{1}{\min(R, k)} \sum_{i \le k:\, g(i) > 0} \mathrm{BR}(i)", _BR),
    "OMeasure": (r"\mathrm{O@}k = \mathrm{BR}(r),\quad r = \min\{i \le k : g(i) > 0\}", _BR),
    "PMeasure": (r"\mathrm{P@}k = \begin{cases} \mathrm{BR}(p) & p \le k \\ 0 & p > k \end{cases},\quad p = \min\{i \le N : \ell(i) = \max_{j \le N} \ell(j) > 0\}", _BR),
    "PPlusMeasure": (r"\mathrm{P^{+}@}k = \frac{1}{C(p)} \sum_{i \le \min(p, k):\, g(i) > 0} \mathrm{BR}(i),\quad p \text{ as for P}", _BR),
    "GAP": r"\mathrm{GAP@}k = \frac{1}{\sum_{j} g_I(j)} \sum_{i \le k:\, g(i) > 0} \frac{1}{i} \sum_{j \le i} \min\big(g(j), g(i)\big)",
    "MSnDCG": r"\mathrm{MSnDCG@}k = \frac{\sum_{i \le k} g(i) / \log_2(i + 1)}{\sum_{i \le k} g_I(i) / \log_2(i + 1)}",
    "JKnDCG": r"\mathrm{JKnDCG@}k = \frac{\sum_{i \le k} g(i) / \mathrm{df}(i)}{\sum_{i \le k} g_I(i) / \mathrm{df}(i)},\quad \mathrm{df}(i) = \begin{cases} 1 & i < b \\ \log_b i & i \ge b \end{cases}",
    "NCUguP": (r"\mathrm{NCU}_{gu,P}\mathrm{@}k = \sum_{i \le k:\, g(i) > 0} \frac{s(i)}{\sum_{d \text{ relevant}} s(d)} \cdot \frac{C(i)}{i}",
               r"s(i) \text{ the stop value of the level at rank } i \text{ (} \texttt{stops=} \text{; default: the gain)}"),
    "NCUguBR": (r"\mathrm{NCU}_{gu,BR}\mathrm{@}k = \sum_{i \le k:\, g(i) > 0} \frac{s(i)}{\sum_{d \text{ relevant}} s(d)} \cdot \mathrm{BR}(i)", _BR),
    "NCUrbP": r"\mathrm{NCU}_{rb,P}\mathrm{@}k = \sum_{i \le k:\, g(i) > 0} \frac{\gamma^{C(i) - 1}}{\sum_{j < R} \gamma^j} \cdot \frac{C(i)}{i}",
    "NCUrbBR": (r"\mathrm{NCU}_{rb,BR}\mathrm{@}k = \sum_{i \le k:\, g(i) > 0} \frac{\gamma^{C(i) - 1}}{\sum_{j < R} \gamma^j} \cdot \mathrm{BR}(i)", _BR),
    "nERR": r"\mathrm{nERR@}k = \frac{\mathrm{ERR@}k}{\mathrm{ERR}_I\mathrm{@}k},\quad \mathrm{ERR@}k = \sum_{i \le k} \frac{R_i}{i} \prod_{j < i} (1 - R_j),\quad R_i = \frac{g(i)}{g_{\max} + 1}",
    "iRBU": r"\mathrm{iRBU@}k = \sum_{i \le k} p^i R_i \prod_{j < i} (1 - R_j) - e \sum_{i \le k} p^i,\quad R_i = \frac{g(i)}{g_{\max} + 1}",
    # ir_measures' providers
    "ERR": (r"\mathrm{ERR@}k = \sum_{i=1}^{k} \frac{R_i}{i} \prod_{j<i} (1 - R_j),\quad R_i = \frac{2^{\ell_i} - 1}{2^{4}}",
            r"\text{with gains=:}\quad R_i = \frac{g_i}{g_{\max} + 1}"),
    "Judged": r"\mathrm{Judged@}k = \frac{|\{i \le \min(k, N) : d_i \text{ judged}\}|}{\min(k, N)}",
    # torchmetrics
    "FallOut": r"\mathrm{FallOut@}k = \frac{\min(k, N) - \mathrm{found}(k)}{N - \mathrm{found}(N)}",
    "AUROC": r"\mathrm{AUROC@}k = \frac{|\{(i, j) : i < j \le \min(k, N),\ \mathrm{rel}(i) = 1,\ \mathrm{rel}(j) = 0\}|}{\mathrm{found}(k)\, \big(\min(k, N) - \mathrm{found}(k)\big)}",
    "RetrievalMAP": r"\mathrm{RetrievalMAP@}k = \frac{1}{\mathrm{found}(k)} \sum_{i \le \min(k, N):\, \mathrm{rel}(i)} \frac{\mathrm{found}(i)}{i}",
    "RetrievalPrecision": (r"\mathrm{RetrievalPrecision@}k = \frac{\mathrm{found}(k)}{k}",
                           r"\texttt{adaptive\_k=True}:\ \frac{\mathrm{found}(k)}{\min(k, N)};\quad \text{without a cut-off: } k = N"),
    # C/W/L
    "RBP": (r"\mathrm{RBP(rel}{=}r) = \sum_{i \le 1000} W_i\, [\ell_i \ge r],\quad W_i = \frac{p^{i-1}}{\sum_{j \le 1000} p^{j-1}}",
            r"\mathrm{RBP@}k = (1 - p) \sum_{i \le k} p^{i-1} \ell_i \quad \text{(without rel=)}"),
    "INST": r"\mathrm{INST} = " + _CWL + r",\quad c_i = \Big(\frac{i + T + T_i - 1}{i + T + T_i}\Big)^2,\quad T_i = T - \sum_{j \le i} g_j",
    "INSQ": r"\mathrm{INSQ} = " + _CWL + r",\quad c_i = \Big(\frac{i + 2T - 1}{i + 2T}\Big)^2",
    "BPM": r"\mathrm{BPM@}k = \frac{1}{m} \sum_{i \le m} g_i,\quad m = \min\Big\{i : \sum_{j \le i} g_j \ge T \text{ or } i = k\Big\}",
    "SDCG": r"\mathrm{SDCG@}k = \frac{\sum_{i \le k} g_i / \log_2(i + 1)}{\sum_{i \le k} 1 / \log_2(i + 1)}",
    "NERR8": r"\mathrm{NERR8@}k = " + _CWL + r",\quad c_i = \begin{cases} 1 - g_i & i < k \\ 0 & i \ge k \end{cases}",
    "NERR9": r"\mathrm{NERR9@}k = " + _CWL + r",\quad c_i = \begin{cases} \frac{i}{i + 1} (1 - g_i) & i < k \\ 0 & i \ge k \end{cases}",
    "NERR10": r"\mathrm{NERR10} = " + _CWL + r",\quad c_i = p\, (1 - g_i)",
    "NERR11": r"\mathrm{NERR11} = " + _CWL + r",\quad c_i = \Big(\frac{i + 2T - 1}{i + 2T}\Big)^2 (1 - g_i)",
    # diversity
    "ERR_IA": r"\mathrm{ERR\text{-}IA@}k = \frac{\sum_{i \le k} g(i) / i}{\sum_{i \le k} I(i) / i}",
    "nERR_IA": r"\mathrm{nERR\text{-}IA@}k = \frac{\mathrm{ERR\text{-}IA@}k}{\mathrm{ERR\text{-}IA}_I\mathrm{@}k}",
    "alpha_DCG": r"\alpha\text{-}\mathrm{DCG@}k = \frac{\sum_{i \le k} g(i) / \log_2(i + 1)}{\sum_{i \le k} I(i) / \log_2(i + 1)}",
    "alpha_nDCG": r"\alpha\text{-}\mathrm{nDCG@}k = \frac{\alpha\text{-}\mathrm{DCG@}k}{\alpha\text{-}\mathrm{DCG}_I\mathrm{@}k}",
    "NRBP": r"\mathrm{NRBP} = \frac{1 - (1 - \alpha) \beta}{S} \sum_{i} g(i)\, \beta^{i-1}",
    "nNRBP": r"\mathrm{nNRBP} = \frac{\mathrm{NRBP}}{\mathrm{NRBP}_I}",
    "AP_IA": r"\mathrm{AP\text{-}IA} = \frac{1}{S} \sum_{s} \mathrm{AP}_s,\quad \mathrm{AP}_s = \frac{1}{R_s} \sum_{i:\, d_i \text{ relevant to } s} \frac{\mathrm{found}_s(i)}{i}",
    "P_IA": r"\mathrm{P\text{-}IA@}k = \frac{1}{k S} \sum_{i \le k} |\{s : d_i \text{ relevant to } s\}|",
    "StRecall": r"\mathrm{StRecall@}k = \frac{|\{s : \text{some } d_i,\ i \le k, \text{ relevant to } s\}|}{S}",
    # judgment groups: J the topic's judgment groups, each measure against group j's judgments
    "map_avgjg": r"\mathrm{map\_avgjg} = \frac{1}{|J|} \sum_{j \in J} \mathrm{AP}_j",
    "P_avgjg": r"\mathrm{P\_avgjg@}k = \frac{1}{|J|} \sum_{j \in J} \mathrm{P@}k_j",
    "Rprec_mult_avgjg": r"\mathrm{Rprec\_mult\_avgjg}(x) = \frac{1}{|J|} \sum_{j \in J} \mathrm{Rprec\_mult}(x)_j",
    # preferences: P the preferences the judgments state, F those the ranking fulfils
    "prefs_num_prefs_poss": r"\mathrm{prefs\_num\_prefs\_poss} = |P|",
    "prefs_num_prefs_ful": r"\mathrm{prefs\_num\_prefs\_ful} = |F|",
    "prefs_num_prefs_ful_ret": r"\mathrm{prefs\_num\_prefs\_ful\_ret} = |F \cap P_{\mathrm{ret}}|",
    "prefs_simp": r"\mathrm{prefs\_simp} = \frac{|F|}{|P|}",
    "prefs_simp_ret": r"\mathrm{prefs\_simp\_ret} = \frac{|F \cap P_{\mathrm{ret}}|}{|P_{\mathrm{ret}}|}",
    "prefs_simp_imp": r"\mathrm{prefs\_simp\_imp} = \frac{|F \cap P_{\mathrm{imp}}|}{|P_{\mathrm{imp}}|}",
    "prefs_pair": r"\mathrm{prefs\_pair} = \frac{1}{|D|} \sum_{(a, b) \in D} \frac{|\{j \in J_{ab} : \text{the ranking agrees with } j\}|}{|J_{ab}|}",
    "prefs_pair_ret": r"\mathrm{prefs\_pair\_ret} = \frac{1}{|D_{\mathrm{ret}}|} \sum_{(a, b) \in D_{\mathrm{ret}}} \frac{|\{j \in J_{ab} : \text{the ranking agrees with } j\}|}{|J_{ab}|}",
    "prefs_pair_imp": r"\mathrm{prefs\_pair\_imp} = \frac{1}{|D_{\mathrm{imp}}|} \sum_{(a, b) \in D_{\mathrm{imp}}} \frac{|\{j \in J_{ab} : \text{the ranking agrees with } j\}|}{|J_{ab}|}",
    "prefs_avgjg": r"\mathrm{prefs\_avgjg} = \frac{1}{|J|} \sum_{j \in J} \frac{|F_j|}{|P_j|}",
    "prefs_avgjg_ret": r"\mathrm{prefs\_avgjg\_ret} = \frac{1}{|J|} \sum_{j \in J} \frac{|F_j \cap P_{\mathrm{ret}}|}{|P_j \cap P_{\mathrm{ret}}|}",
    "prefs_avgjg_imp": r"\mathrm{prefs\_avgjg\_imp} = \frac{1}{|J|} \sum_{j \in J} \frac{|F_j \cap P_{\mathrm{imp}}|}{|P_j \cap P_{\mathrm{imp}}|}",
    "prefs_avgjg_Rnonrel": r"\mathrm{prefs\_avgjg\_Rnonrel} = \frac{1}{|J|} \sum_{j \in J} \frac{|F'_j|}{|P'_j|},\quad P'_j: \text{group } j\text{'s non-relevant documents cut or padded to } R_j",
    "prefs_avgjg_Rnonrel_ret": r"\mathrm{prefs\_avgjg\_Rnonrel\_ret} = \frac{1}{|J|} \sum_{j \in J} \frac{|F'_j \cap P_{\mathrm{ret}}|}{|P'_j \cap P_{\mathrm{ret}}|}",
    # counts (runid and relstring are text, not numbers)
    "num_q": r"\mathrm{num\_q} = |T|",
    "num_ret": r"\mathrm{num\_ret} = N",
    "num_rel": r"\mathrm{num\_rel} = R = |\{d \text{ judged} : \ell(d) \ge \mathrm{rel}\}|",
    "num_rel_ret": r"\mathrm{num\_rel\_ret} = \mathrm{found}(N) = \sum_{i \le N} \mathrm{rel}(i)",
    "num_nonrel_judged_ret": r"\mathrm{num\_nonrel\_judged\_ret} = |\{i \le N : 0 \le \ell(d_i) < \mathrm{rel}\}|",
    "utility": (r"\mathrm{utility}(a, b, c, d) = a f + b (N - f) + c (R - f) + d (C + f - N - R),\quad f = \mathrm{found}(N)",
                r"C \text{ the collection's size (trec\_eval's } \texttt{-N}\text{; 0 by default)}"),
    "unj": r"\mathrm{unj@}k = \frac{|\{i \le k : d_i \text{ not judged}\}|}{k}",
    "G": (r"\mathrm{G} = \frac{1}{\sum_{j} g_I(j)} \sum_{i \le N:\, g(i) \ne 0} \frac{g(i)}{\log_2\big(2 + C(i) - S(i)\big)}",
          r"S(i) = \sum_{j \le i} g(j),\quad C(i) = \sum_{j \le i} \max\big(g_I(j), 1\big)"),
    "ndcg_rel": (r"\mathrm{ndcg\_rel} = \frac{1}{M} \Big(\sum_{i \le N:\, g(i) > 0} \frac{\mathrm{DCG@}i}{\mathrm{DCG}_I\mathrm{@}i} + (M - m)\, \frac{\mathrm{DCG@}N}{\mathrm{DCG}_I\mathrm{@}M}\Big)",
                 r"M = |\{j : g_I(j) > 0\}|,\quad m = |\{i \le N : g(i) > 0\}|,\quad \mathrm{df}(i) = \log_2(i + 1)"),
    "Rndcg": (r"\mathrm{Rndcg} = \frac{1}{|B|} \sum_{b \in B} \frac{\mathrm{DCG@}b}{\mathrm{DCG}_I\mathrm{@}b}",
              r"B = \{b \le M : g_I(b + 1) \ne g_I(b)\} \cup \{N \text{ if } N > M\},\quad M = |\{j : g_I(j) > 0\}|;\quad 0 \text{ if } R = 0"),
    "Compat": (r"\mathrm{Compat} = \frac{\sum_{d=1}^{D} p^{d-1}\, |A_{1:d} \cap I_{1:d}| / d}{\sum_{d=1}^{D} p^{d-1} \min(d, M) / d},\quad D = \max(N, M)",
               r"A \text{ the run},\ I \text{ the ideal ranking of the } M \text{ relevant judgments};\ \text{normalize=False: denominator } \textstyle\sum_{d \le D} p^{d-1}"),
    "Accuracy": r"\mathrm{Accuracy@}k = \frac{|\{(i, j) : i < j \le k,\ \mathrm{rel}(i) = 1,\ \mathrm{rel}(j) = 0\}|}{\mathrm{found}(k)\, \big(\min(k, N) - \mathrm{found}(k)\big)}",
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


def _by_group() -> dict:
    """GROUPS' modules -> their families, in the catalogue's order."""
    by_group: dict = {module: [] for module in GROUPS}
    for family in _ordered_families():
        by_group[_group_of(family)].append(family)
    return by_group


def _entry(family, heading: str, redirected: dict, ranx: dict) -> list:
    """A family's entry (Markdown lines): its label and heading (``heading`` is ``##``
    or ``###``), what it is (:data:`MEANING`), its definition (equations, or the one-line
    formula in code), then a two-column table: the one-line formula (after equations),
    the source, its spellings, parameters, input, summary and what ties="expected"
    does."""
    input_ = _INPUT[family.input] + (f" (new in trec_eval {family.since}.0)"
                                     if family.since else "")
    more, more_params = redirected.get(family.name, ([], []))
    keys = dict.fromkeys(family.ir_params + tuple(more_params))
    params = ", ".join(f"`{key}`" for key in keys) or "none"
    equations = LATEX.get(family.name, ())
    if isinstance(equations, str):
        equations = (equations,)
    out = [f"({_anchor(family.name)})=", f"{heading} {family.name}", ""]
    if family.name in MEANING:
        out += [_cell(MEANING[family.name][:1].upper() + MEANING[family.name][1:]) + ".", ""]
    rows = []
    if equations:
        for equation in equations:
            out += ["$$", equation, "$$", ""]
        rows.append(("plain text", _code(_cell(family.formula))))
    else:
        out += [_code(family.formula), ""]
    rows += [("source", _cell(family.source)),
             ("trec_eval", "<br>".join(_trec_spellings(family))),
             ("ir_measures", ", ".join(_ir_spellings(family) + more)),
             ("ranx", ", ".join(ranx.get(family.name, []))),
             ("parameters", params),
             ("input, summary", f"{input_}; {_SUMMARY[family.aggregate]}"),
             ('`ties="expected"`', _expected_ties(family))]
    out += ["{.measure-entry}", "| | |", "|---|---|"]      # (no header: docs/_static)
    out += [f"| {label} | {text} |" for label, text in rows if text]
    return out + [""]


def group_entries(families: list, heading: str = "##") -> str:
    """The entries of a group's families, as its page includes them."""
    redirected, ranx = _redirected_ir_spellings(), _ranx_spellings()
    out: list = []
    for family in families:
        out += _entry(family, heading, redirected, ranx)
    return "\n".join(out)


def _count_sentence() -> str:
    from cumgain.measures import FAMILIES

    return (f"{len(FAMILIES)} measure families, generated from `cumgain.measures.FAMILIES` "
            "when these pages were built.")


def measure_index() -> str:
    """The index of the catalogue's first page: per group, its title, a link to its
    page and a row per family: the name (a link to its entry), its ir_measures names and
    what it is."""
    out = [_count_sentence() + " Each name links to the family's entry: its definition, "
           "its spellings in trec_eval, ir_measures and ranx, its parameters and its "
           "source.", ""]
    for module, families in _by_group().items():
        if not families:
            continue
        page = GROUPS[module]
        title = _page_title(page)
        out += [f"## {title}", "",
                f"Definitions, spellings and parameters: [{title}](/measures/{page}.md).", "",
                "{.measure-index}", "| measure | ir_measures | what it is |", "|---|---|---|"]
        for family in families:
            meaning = MEANING.get(family.name) or _code(family.formula)
            names = ", ".join(_code(name) for name in family.ir_names)
            out.append(f"| [`{family.name}`](#{_anchor(family.name)}) | {names} | "
                       f"{_cell(meaning)} |")
        out.append("")
    return "\n".join(out)


def parameters_table() -> str:
    """The parameters of the ir_measures form, one row each."""
    from cumgain.measures.parse import PARAMS

    unknown = sorted(set(PARAMS) - set(PARAMETERS))
    if unknown:
        raise RuntimeError(f"parameters {unknown} of cumgain.measures.parse.PARAMS are "
                           f"not described in docs/_ext/cumgain_docs.py's PARAMETERS")
    out = ["| parameter | meaning |", "|---|---|"]
    out += [f"| `{key}` | {_cell(PARAMETERS[key])} |" for key in PARAMS]
    return "\n".join(out) + "\n"


def nicknames_table() -> str:
    """trec_eval's nicknames and their members."""
    from cumgain.measures import NICKNAMES

    out = ["| nickname | measures |", "|---|---|"]
    out += [f"| `{name}` | {', '.join(_code(m) for m in members)} |"
            for name, members in NICKNAMES.items()]
    return "\n".join(out) + "\n"


def catalogue_fragments() -> dict:
    """Every generated part of the catalogue: path under docs/_generated -> Markdown."""
    fragments = {"measure_index.md": measure_index(),
                 "measure_parameters.md": parameters_table(),
                 "measure_nicknames.md": nicknames_table()}
    for module, families in _by_group().items():
        fragments[f"measures/{GROUPS[module]}.md"] = group_entries(families)
    return fragments


def measure_catalogue() -> str:
    """The whole catalogue as one Markdown text (what tests/test_docs.py reads): the
    index, the parameters, then per group its title and its families' entries (``###``
    headings), then trec_eval's nicknames. The pages show the same parts, split: the
    index on docs/measures.md, each group on its page."""
    out = [measure_index(), "## Parameters of the ir_measures form", "", parameters_table()]
    for module, families in _by_group().items():
        if families:
            out += [f"## {_page_title(GROUPS[module])}", "", group_entries(families, "###")]
    out += ["## trec_eval's nicknames", "", nicknames_table()]
    return "\n".join(out)


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
    for name, text in catalogue_fragments().items():
        _write(GENERATED / name, text)
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
