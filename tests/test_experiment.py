"""cumgain.compare (cumgain.analysis.experiment): several runs on several measures with
significance tests in one call, against stats.compare measure by measure; win / tie /
loss; the tables; JSON round trip; Comparison.to_dataframe and its HTML."""
from __future__ import annotations

import math

import numpy as np
import pytest

import cumgain
from cumgain import stats
from cumgain.analysis.experiment import RunComparison
from cumgain.datasets import demo_collection
from cumgain.exceptions import InputError

MEASURES = ["nDCG@10", "AP", "P@10"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    paths = demo_collection().write_trec(tmp_path_factory.mktemp("demo"))
    return {name: str(path) for name, path in paths.items()}


def runs_of(demo, names=("good", "fair", "poor")) -> dict:
    return {name: demo[name] for name in names}


@pytest.mark.parametrize("test", ["friedman", "ttest", "randomization"])
def test_each_measure_is_stats_compare(demo, test):
    result = cumgain.compare(demo["qrels"], runs_of(demo), MEASURES, test=test)
    evaluations = {name: cumgain.evaluate(demo["qrels"], path, MEASURES, warn=False)
                   for name, path in runs_of(demo).items()}
    assert result.measures == tuple(MEASURES) and result.runs == ("good", "fair", "poor")
    for measure in MEASURES:
        expected = stats.compare(evaluations, measure, test=test, seed=0)
        got = result.comparisons[measure]
        assert got.means == expected.means
        assert [(p.run_a, p.run_b, p.p_value, p.p_corrected) for p in got.pairs] == \
            [(p.run_a, p.run_b, p.p_value, p.p_corrected) for p in expected.pairs]
        assert result.means["good"][measure] == expected.means["good"]
    again = cumgain.compare(demo["qrels"], runs_of(demo), MEASURES, test=test)
    assert again == result                      # a fixed seed: the same every time


def test_files_dicts_and_prepared_qrels_give_the_same(demo):
    from cumgain import trec_io
    by_path = cumgain.compare(demo["qrels"], runs_of(demo), MEASURES, test="ttest")
    qrels = trec_io.load_qrels(demo["qrels"]).to_dict()
    runs = {name: trec_io.load_run(path).to_dict() for name, path in runs_of(demo).items()}
    assert cumgain.compare(qrels, runs, MEASURES, test="ttest") == by_path
    prepared = cumgain.prepare_qrels(demo["qrels"])
    assert cumgain.compare(prepared, runs_of(demo), MEASURES, test="ttest") == by_path
    listed = cumgain.compare(demo["qrels"], list(runs_of(demo).values()), MEASURES, test="ttest")
    assert listed.runs == ("good", "fair", "poor")     # (named by their run tags)


def test_baseline_compares_each_run_with_it_only(demo):
    result = cumgain.compare(demo["qrels"], runs_of(demo), MEASURES, test="ttest",
                             baseline="poor")
    for measure in MEASURES:
        pairs = result.comparisons[measure].pairs
        assert sorted((p.run_a, p.run_b) for p in pairs) == [("fair", "poor"), ("good", "poor")]
    frame = result.to_dataframe()
    assert math.isnan(frame.loc["poor", "AP p-value"])
    assert frame.loc["good", "AP p-value"] == result.comparisons["AP"].pair("good", "poor").p_corrected
    assert frame.loc["good", "AP win/tie/loss"] == "/".join(
        map(str, result.win_tie_loss("AP")[("good", "poor")]))
    assert "+ / -: significantly better / worse than the baseline poor" in result.to_markdown()


def test_win_tie_loss_by_hand():
    qrels = {"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}, "4": {"d": 1}}
    first = {"1": {"a": 2.0, "x": 1.0}, "2": {"x": 2.0, "b": 1.0}, "3": {"c": 1.0},
             "4": {"x": 1.0}}
    second = {"1": {"x": 2.0, "a": 1.0}, "2": {"x": 2.0, "b": 1.0}, "3": {"c": 1.0},
              "4": {"d": 1.0}}
    result = cumgain.compare(qrels, {"A": first, "B": second}, ["P@1"], test="ttest")
    # P@1: A 1, 0, 1, 0; B 0, 0, 1, 1
    assert result.win_tie_loss("P@1") == {("A", "B"): (1, 2, 1), ("B", "A"): (1, 2, 1)}


def test_tables_mark_the_best_in_bold(demo):
    result = cumgain.compare(demo["qrels"], runs_of(demo), MEASURES)
    markdown = result.to_markdown()
    latex = result.to_latex()
    for measure in MEASURES:
        best = f"{result.comparisons[measure].means['good']:.3f}"
        assert f"**{best}**" in markdown and f"\\textbf{{{best}}}" in latex
    assert markdown.count("**0.") == len(MEASURES)
    assert latex.startswith("\\begin{tabular}{lrrr}") and "$^{bc**}$" in latex
    html = result._repr_html_()
    assert html.count("<b>") == len(MEASURES) and "pairs" in html
    assert repr(result).startswith("<RunComparison: 3 runs x 3 measures, 50 topics")


def test_json_round_trip(demo):
    result = cumgain.compare(demo["qrels"], runs_of(demo), MEASURES, test="randomization",
                             confidence_level=0.9, baseline="fair")
    loaded = RunComparison.from_json(result.to_json())
    assert loaded == result and loaded.to_latex() == result.to_latex()
    pair = loaded.comparisons["AP"].pair("good", "fair")
    assert pair.ci is not None and pair.ci == result.comparisons["AP"].pair("good", "fair").ci
    assert np.array_equal(loaded.comparisons["AP"].table.values,
                          result.comparisons["AP"].table.values)
    with pytest.raises(InputError, match="not a saved RunComparison"):
        RunComparison.from_json('{"format": "something else"}')


def test_bad_inputs(demo):
    with pytest.raises(InputError, match="at least two runs"):
        cumgain.compare(demo["qrels"], {"good": demo["good"]}, MEASURES)
    with pytest.raises(InputError, match="unknown measure"):
        cumgain.compare(demo["qrels"], runs_of(demo), ["nDGC@10"])
    with pytest.raises(InputError, match="baseline 'best' is not one of the runs"):
        cumgain.compare(demo["qrels"], runs_of(demo), MEASURES, baseline="best")
    with pytest.raises(InputError, match="alpha"):
        cumgain.compare(demo["qrels"], runs_of(demo), MEASURES, alpha=2)
    with pytest.raises(InputError, match="test must be one of"):
        cumgain.compare(demo["qrels"], runs_of(demo), MEASURES, test="z")
    with pytest.raises(InputError, match="no measure 'map'"):
        cumgain.compare(demo["qrels"], runs_of(demo), MEASURES).win_tie_loss("map")


def test_comparison_to_dataframe_and_html(demo):
    pytest.importorskip("pandas")
    evaluations = {name: cumgain.evaluate(demo["qrels"], path, ["AP"], warn=False)
                   for name, path in runs_of(demo).items()}
    comparison = stats.compare(evaluations, "AP", test="ttest", seed=0)
    frame = comparison.to_dataframe()
    assert list(frame.columns) == ["run_a", "run_b", "mean_a", "mean_b", "mean_difference",
                                   "statistic", "p_value", "p_corrected", "significant",
                                   "direction"]
    assert len(frame) == 3 and frame["significant"].all()
    assert frame["p_corrected"].tolist() == [p.p_corrected for p in comparison.pairs]
    html = comparison._repr_html_()
    assert "good &gt; fair" in html and "corrected" in html


def test_compare_is_imported_on_first_use(tmp_path):
    import subprocess
    import sys
    code = ("import sys, cumgain\nassert 'scipy.stats' not in sys.modules\n"
            "assert callable(cumgain.compare) and 'compare' in dir(cumgain)\n"
            "assert 'cumgain.analysis.experiment' in sys.modules\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path)     # (not the checkout, whose cgcore is not built)
    assert done.stdout.strip() == "ok", done.stderr
