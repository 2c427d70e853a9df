"""Short reprs and notebook tables of the result objects (Evaluation, Comparison, Report,
Curves): at most 300 characters however many topics, runs or measures, an HTML table
of the means with every text escaped, and str(report) the rendered table."""
import dataclasses

import numpy as np
import pytest

import cumgain
from cumgain import curves, report, stats
from cumgain.common import display as _display

LIMIT = 300
N_TOPICS = 5000


def _collection(n_topics, n_runs, seed=0):
    rng = np.random.default_rng(seed)
    qrels = {f"q{t}": {f"d{i}": int(rng.integers(0, 4)) for i in range(4)}
             for t in range(n_topics)}
    runs = {f"run{r}": {f"q{t}": {f"d{i}": float(rng.random()) for i in range(6)}
                        for t in range(n_topics)} for r in range(n_runs)}
    return qrels, runs


@pytest.fixture(scope="module")
def large():
    """5,000 topics, three runs, evaluated."""
    qrels, runs = _collection(N_TOPICS, 3)
    measures = ["nDCG@10", "P@5", "AP", "RR"]
    evaluations = {name: cumgain.evaluate(qrels, run, measures) for name, run in runs.items()}
    return qrels, runs, evaluations


def _check_table(text, names):
    assert text.startswith("<table>") and text.endswith("</table>")
    for name in names:
        assert f">{name}<" in text


def test_evaluation(large):
    _, _, evaluations = large
    evaluation = evaluations["run0"]
    text = repr(evaluation)
    assert len(text) <= LIMIT
    assert text.startswith(f"<Evaluation: {N_TOPICS} topics, 4 measures; means nDCG@10=")
    assert f"AP={evaluation.means['AP']:.4f}" in text
    _check_table(evaluation._repr_html_(), ["nDCG@10", "P@5", "AP", "RR",
                                           f"{evaluation.means['RR']:.4f}"])


def test_evaluation_of_many_measures_with_long_names(large):
    qrels, runs, _ = large
    measures = [f"P@{k}" for k in range(1, 41)] + [
        "nDCG@10(discount=tois, base=2, gains=0-1-10-100)", "runid", "relstring", "num_rel"]
    evaluation = cumgain.evaluate(qrels, runs["run1"], measures)
    evaluation = dataclasses.replace(evaluation, run_tag="t" * 1000)
    text = repr(evaluation)
    assert len(text) <= LIMIT and text.endswith(" more)>")
    assert f"(+{len(measures) - _display.REPR_ITEMS} more)" in text
    html = evaluation._repr_html_()
    assert html.count("<tr>") == 1 + len(measures) and "more rows" not in html
    _check_table(html, ["P@40", "num_rel"])


def test_html_escapes_text(large):
    _, _, evaluations = large
    evaluation = dataclasses.replace(evaluations["run0"], run_tag="<b>&run")
    html = evaluation._repr_html_()
    assert "<b>" not in html and "&lt;b&gt;&amp;run" in html


def test_comparison(large):
    _, _, evaluations = large
    comparison = stats.compare(evaluations, "nDCG@10", seed=0)
    text = repr(comparison)
    assert len(text) <= LIMIT
    assert text.startswith(f"<Comparison of 'nDCG@10': 3 runs, {N_TOPICS} topics, friedman "
                           f"(p={comparison.omnibus.p_value:.3g}), ")
    assert f"run2={comparison.means['run2']:.4f}>" in text
    _check_table(comparison._repr_html_(), ["run0", "run1", "run2"])


def test_many_runs():
    qrels, runs = _collection(50, 40, seed=1)
    evaluations = {name: cumgain.evaluate(qrels, run, ["nDCG@10"]) for name, run in runs.items()}
    comparison = stats.compare(evaluations, "nDCG@10", seed=0)
    assert len(repr(comparison)) <= LIMIT and repr(comparison).endswith("(+34 more)>")
    pairs = report.pairwise_table(comparison)          # 780 rows
    text = repr(pairs)
    assert len(text) <= LIMIT and text.startswith("<Report: 780 rows x ")
    html = pairs._repr_html_()
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr>") == _display.HTML_ROWS + 1       # the rows, then how many more
    assert f"({780 - _display.HTML_ROWS} more rows)" in html
    cg = curves.compute(qrels, runs, "CG", depth=30)
    assert len(repr(cg)) <= LIMIT and repr(cg).endswith("(+35 more)>")


def test_report_str_is_the_markdown_table(large):
    _, _, evaluations = large
    comparison = stats.compare(evaluations, "nDCG@10", seed=0)
    for table in (report.significance_table(comparison),
                  report.baseline_table(comparison, "run0"),
                  report.pairwise_table(comparison)):
        assert str(table) == table.render("md") == table.to_markdown()
        assert report.DEFAULT_FORMAT == "md"
        text = repr(table)
        assert len(text) <= LIMIT and text.startswith("<Report: ")
        _check_table(table._repr_html_(), ["measure", "run0"])


def test_report_html_shows_markers():
    table = report.Report("measure", ("A", "B"), (
        ("m", (report.Cell(0.5), report.Cell(0.25, "+*")), ()),), ("* p < 0.05",))
    html = table._repr_html_()
    assert "<td>0.250<sup>+*</sup></td>" in html and "* p &lt; 0.05" in html


def test_curves(large):
    qrels, runs, _ = large
    ndcg = curves.compute(qrels, runs, "nDCG", depth=200)
    text = repr(ndcg)
    assert len(text) <= LIMIT
    assert text.startswith(f"<Curves nDCG: 3 runs, {N_TOPICS} topics, ranks 1-200; gains "
                           f"identity, discount trec_eval; at rank 10: ideal=")
    assert f"run0={ndcg.runs['run0'][9]:.4f}" in text
    html = ndcg._repr_html_()
    _check_table(html, ["run0", "run2", "ideal", "@1", "@10", "@200"])
