"""Optional dependencies that are not installed: every lazy import fails with a
MissingDependencyError (a ModuleNotFoundError) naming what needs it and the extra that
installs it, and the command line prints that line with the usage status.

Absence is simulated with ``sys.modules[name] = None``, which makes ``import name`` raise
ModuleNotFoundError.
"""
import re
import sys
from pathlib import Path

import pytest

import cumgain
from cumgain import cli, curves, report, stats
from cumgain.common.optional import EXTRA_PACKAGES, require
from cumgain.exceptions import MissingDependencyError

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"e1": 1, "e2": 3}}
RUNS = {"A": {"q1": {"d1": 0.9, "d2": 0.5, "d3": 0.1}, "q2": {"e1": 0.8, "e2": 0.2}},
        "B": {"q1": {"d3": 0.9, "d1": 0.5}, "q2": {"e2": 0.8, "e1": 0.2}},
        "C": {"q1": {"d2": 0.9}, "q2": {"e1": 0.8}}}
MATPLOTLIB = ("matplotlib", "matplotlib.figure", "matplotlib.backends",
              "matplotlib.backends.backend_agg")


def _absent(monkeypatch, *names):
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def _check(error: MissingDependencyError, what: str, package: str, extra: str):
    assert isinstance(error, ModuleNotFoundError)
    assert str(error) == (f"{what} needs {package}, but {package} is not installed: "
                          f'pip install {EXTRA_PACKAGES[extra]} (cumgain\'s "{extra}" extra)')
    assert error.extra == extra


def test_require_imports_or_names_the_extra(monkeypatch):
    assert require("json", extra="x", for_what="y").__name__ == "json"
    _absent(monkeypatch, "pandas")
    with pytest.raises(MissingDependencyError) as info:
        require("pandas", extra="pandas", for_what="this")
    _check(info.value, "this", "pandas", "pandas")
    assert info.value.name == "pandas" and cumgain.MissingDependencyError is MissingDependencyError


def test_to_dataframe_without_pandas(monkeypatch):
    evaluation = cumgain.evaluate(QRELS, RUNS["A"], ["nDCG@10", "P@5"])
    comparison = stats.compare({name: cumgain.evaluate(QRELS, run, ["nDCG@10"])
                                for name, run in RUNS.items()}, "nDCG@10", seed=0)
    table = report.significance_table(comparison)
    cg = curves.compute(QRELS, RUNS, "CG", depth=3)
    _absent(monkeypatch, "pandas")
    for what, call in (("Evaluation.to_dataframe()", evaluation.to_dataframe),
                       ("Report.to_dataframe()", table.to_dataframe),
                       ("Curves.to_dataframe()", cg.to_dataframe)):
        with pytest.raises(MissingDependencyError) as info:
            call()
        _check(info.value, what, "pandas", "pandas")


def test_dataframe_readers_without_pandas(monkeypatch):
    from cumgain.engine.diversity import subtopics_from_dataframe
    from cumgain.trec_io import qrels_from_dataframe, run_from_dataframe
    _absent(monkeypatch, "pandas")
    for read in (qrels_from_dataframe, run_from_dataframe, subtopics_from_dataframe):
        with pytest.raises(MissingDependencyError) as info:
            read({"query_id": []})
        _check(info.value, "reading a DataFrame", "pandas", "pandas")


def test_plots_without_matplotlib(monkeypatch):
    from cumgain import plot
    cg = curves.compute(QRELS, RUNS, "CG", depth=3)
    _absent(monkeypatch, *MATPLOTLIB)
    with pytest.raises(MissingDependencyError) as info:
        plot.plot_curves(cg)
    _check(info.value, "plotting", "matplotlib", "plot")


def test_cumgain_dask_without_its_extra(monkeypatch):
    monkeypatch.delitem(sys.modules, "cumgain.dask", raising=False)
    _absent(monkeypatch, "dask", "dask.dataframe")
    with pytest.raises(MissingDependencyError) as info:
        import cumgain.dask  # noqa: F401
    _check(info.value, "cumgain.dask", "dask", "dask")


def test_parquet_metadata_without_pyarrow(monkeypatch, tmp_path):
    from cumgain import convert
    _absent(monkeypatch, "pyarrow", "pyarrow.parquet")
    with pytest.raises(MissingDependencyError) as info:
        convert.rows_by_file(str(tmp_path))
    _check(info.value, "reading Parquet metadata", "pyarrow", "dask")


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "A.run"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 1\n")
    run.write_text("q1 Q0 d1 1 0.9 A\nq1 Q0 d2 2 0.5 A\n")
    return str(qrels), str(run)


@pytest.mark.parametrize("missing, args, line", [
    (MATPLOTLIB, ["curves", "{qrels}", "{run}", "--plot", "{tmp}/c.png"],
     'cumgain curves: error: --plot needs matplotlib, but matplotlib is not installed: '
     'pip install matplotlib (cumgain\'s "plot" extra)'),
    (("pyarrow",), ["convert", "{run}", "{tmp}/out"],
     'cumgain convert: error: cumgain convert needs pyarrow, but pyarrow is not installed: '
     'pip install "dask[dataframe]" distributed pyarrow pandas (cumgain\'s "dask" extra)'),
    (("dask", "dask.dataframe"), ["convert", "--qrels", "{qrels}", "{tmp}/out"],
     'cumgain convert: error: cumgain convert --qrels needs dask, but dask is not installed: '
     'pip install "dask[dataframe]" distributed pyarrow pandas (cumgain\'s "dask" extra)'),
], ids=["curves", "convert-pyarrow", "convert-qrels-dask"])
def test_the_command_line_prints_one_line(capsys, monkeypatch, tmp_path, files, missing,
                                          args, line):
    _absent(monkeypatch, *missing)
    argv = [arg.format(qrels=files[0], run=files[1], tmp=tmp_path) for arg in args]
    assert cli.main(argv) == cli.EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == "" and err == line + "\n"
    assert not (tmp_path / "c.png").exists() and not (tmp_path / "out").exists()


def test_demo_without_matplotlib_names_the_extra(capsys, monkeypatch, tmp_path):
    _absent(monkeypatch, *MATPLOTLIB)
    assert cli.main(["demo", "--plot", str(tmp_path / "c.png")]) == 0
    assert ('Curves: plotting needs matplotlib, but matplotlib is not installed: '
            'pip install matplotlib (cumgain\'s "plot" extra) - no PNG written') in capsys.readouterr().out


def test_each_extra_hint_installs_what_pyproject_lists():
    """The hint of each extra names the packages pyproject.toml's extra lists (cumgain
    itself is not on PyPI: the hint installs the packages, not "cumgain[extra]")."""
    tomllib = pytest.importorskip("tomllib")
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("pyproject.toml is not beside the tests")
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    for extra, packages in EXTRA_PACKAGES.items():
        listed = {re.split(r"[<>=;\[ ]", spec)[0].lower() for spec in extras[extra]}
        named = {re.split(r"[\[\]\"]", word.strip('"'))[0].lower() for word in packages.split()}
        assert named == listed, extra
