"""The options evaluate, compare and curves share mean the same in each (one definition,
cumgain/cli/options.py): the same flags and choices, every output format, -o files,
--quiet, the discount names, and the exit status of each kind of error."""
from __future__ import annotations

import ast
import csv
import io
import json
import os
from pathlib import Path

import pytest

import cumgain
from cumgain import cli
from cumgain.cli import build_parser

GOLDEN = Path(__file__).parent / "golden"
QRELS, RUN1, RUN2 = (str(GOLDEN / name) for name in ("tiny.qrels", "tiny.run", "tiny2.run"))
SHARED = ["-m", "-g", "--discount", "--base", "-c", "--topics", "--intersect", "-M",
          "--ties", "--seed", "--score-precision", "-f", "-o", "--overwrite", "--progress",
          "--quiet"]
MULTI_RUN = ["evaluate", "compare", "curves"]
# one invocation per subcommand, on runs that cover the same topics (with --intersect)
ARGS = {"evaluate": ["-m", "P@2", "-m", "nDCG@3"],
        "compare": ["-m", "P@2", "-m", "nDCG@3", "--test", "ttest"],
        "curves": ["-m", "nCG", "-M", "4", "--at", "2,4"]}
FORMATS = ["table", "markdown", "md", "latex", "csv", "tsv", "json", "jsonl"]


def _actions(sub: str) -> dict:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    return subparsers.choices[sub]._option_string_actions


@pytest.mark.parametrize("flag", SHARED)
def test_every_shared_option_is_defined_once(flag):
    actions = [_actions(sub)[flag] for sub in MULTI_RUN]
    assert len({tuple(action.option_strings) for action in actions}) == 1
    assert len({tuple(action.choices or ()) for action in actions}) == 1 or flag == "-m"
    if flag not in ("-m", "-g", "-M", "-f", "--seed", "--intersect"):
        # (their help names each one's default, or what the option does there)
        assert len({action.help for action in actions}) == 1, flag
        assert len({repr(action.default) for action in actions}) == 1, flag


def _main(capsys, argv):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sub", MULTI_RUN)
def test_every_format_everywhere(capsys, sub, fmt):
    status, out, err = _main(capsys, [sub, QRELS, RUN1, RUN2, *ARGS[sub], "--intersect",
                                      "-f", fmt, "--quiet"])
    assert status == 0 and err == ""
    if fmt in ("csv", "tsv"):
        rows = list(csv.DictReader(io.StringIO(out), delimiter="," if fmt == "csv" else "\t"))
        assert rows and all(None not in row for row in rows)
    elif fmt == "json":
        assert isinstance(json.loads(out), list)
    elif fmt == "jsonl":
        assert all(isinstance(json.loads(line), dict) for line in out.splitlines())
    elif fmt == "latex":
        assert out.startswith("\\begin{tabular}") and "\\bottomrule" in out
    elif fmt in ("markdown", "md"):
        assert out.startswith("| ") and "\n|:-" in out
    else:
        assert not out.startswith("|") and not out.startswith("\\")


def test_machine_formats_agree_with_each_other(capsys):
    outputs = {fmt: _main(capsys, ["evaluate", QRELS, RUN1, RUN2, "-m", "map", "-m", "num_rel",
                                   "-q", "-f", fmt, "--quiet"])[1]
               for fmt in ("csv", "tsv", "json", "jsonl")}
    rows = json.loads(outputs["json"])
    assert rows == [json.loads(line) for line in outputs["jsonl"].splitlines()]
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        table = list(csv.DictReader(io.StringIO(outputs[fmt]), delimiter=delimiter))
        assert [row["run"] for row in table] == [row["run"] for row in rows]
        assert [float(row["map"]) for row in table] == [row["map"] for row in rows]
        assert [int(row["num_rel"]) for row in table] == [row["num_rel"] for row in rows]


@pytest.mark.parametrize("sub", MULTI_RUN)
def test_output_file_whole_and_never_over_another(capsys, tmp_path, sub):
    argv = [sub, QRELS, RUN1, RUN2, *ARGS[sub], "--intersect", "-f", "csv", "--quiet"]
    _, printed, _ = _main(capsys, argv)
    target = tmp_path / "out.csv"
    assert _main(capsys, [*argv, "-o", str(target)])[:2] == (0, "")
    assert target.read_text() == printed
    target.write_text("precious")
    status, out, err = _main(capsys, [*argv, "-o", str(target)])
    assert status == cli.EXIT_USAGE and out == ""
    assert err == f"cumgain {sub}: error: {target} exists; pass --overwrite to replace it\n"
    assert target.read_text() == "precious"
    assert _main(capsys, [*argv, "-o", str(target), "--overwrite"])[0] == 0
    assert target.read_text() == printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


@pytest.mark.parametrize("sub", MULTI_RUN)
def test_quiet_silences_the_notes(capsys, sub):
    argv = [sub, QRELS, RUN1, RUN2, *ARGS[sub], "--intersect"]
    _, loud, notes = _main(capsys, argv)
    assert "missing from the run" in notes
    _, quiet, nothing = _main(capsys, [*argv, "--quiet"])
    assert quiet == loud and nothing == ""


def test_the_discount_has_the_same_names_and_default_everywhere(capsys):
    def ndcg(sub_args):
        status, out, _ = _main(capsys, ["evaluate", QRELS, RUN1, "-m", "nDCG@3", "-f", "json",
                                        "--quiet", *sub_args])
        return json.loads(out)[0]["nDCG@3" if not sub_args else
                                  "nDCG@3(discount=tois)"]
    assert ndcg(["--discount", "jk"]) == ndcg(["--discount", "tois"])
    # curves: trec_eval's discount by default, as evaluate; its nDCG curve at rank 3 is the
    # mean of the per-topic nDCG@3 that evaluate reports
    status, out, _ = _main(capsys, ["curves", QRELS, RUN1, "-m", "nDCG", "-M", "3", "--at", "3",
                                    "-f", "json", "--quiet"])
    row = json.loads(out)[0]
    assert row["value"] == pytest.approx(ndcg([]), abs=1e-15)
    status, tois, _ = _main(capsys, ["curves", QRELS, RUN1, "-m", "nDCG", "-M", "3", "--at", "3",
                                     "-f", "json", "--quiet", "--discount", "jk"])
    assert json.loads(tois)[0]["value"] == pytest.approx(ndcg(["--discount", "tois"]),
                                                         abs=1e-15)


BAD_QRELS = "q1 0 a\n"


@pytest.mark.parametrize("sub", MULTI_RUN)
def test_each_kind_of_error_has_its_status(capsys, tmp_path, sub):
    bad = tmp_path / "bad.qrels"
    bad.write_text(BAD_QRELS)
    other = tmp_path / "other.qrels"
    other.write_text("zz 0 a 1\n")
    cases = [
        ([sub, str(bad), RUN1, RUN2, *ARGS[sub]], cli.EXIT_INPUT, f"{bad}:1:"),
        ([sub, str(other), RUN1, RUN2, *ARGS[sub]], cli.EXIT_NO_TOPICS, "no topic"),
        ([sub, QRELS, RUN1, RUN2, "-g", "0-x"], cli.EXIT_USAGE, "0-x"),
        ([sub, QRELS, RUN1, RUN2, *ARGS[sub], "-c", "--topics", "strict"], cli.EXIT_USAGE,
         "-c means --topics qrels"),
        ([sub, "-", "-", RUN1, *ARGS[sub]], cli.EXIT_USAGE, "only one input"),
    ]
    for argv, status, fragment in cases:
        got, out, err = _main(capsys, argv)
        assert got == status, (argv, err)
        assert out == "" and err.startswith(f"cumgain {sub}: error: ") and fragment in err, err
        assert err.count("\n") == 1


def test_the_command_line_modules_import_downwards_only():
    """cumgain.cli -> the subcommands -> options -> base; no subcommand imports another."""
    folder = Path(cumgain.__file__).parent / "cli"
    order = {"base": 0, "options": 1}
    for path in folder.glob("*.py"):
        module = path.stem
        level = order.get(module, 3 if module == "__init__" else 2)
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith("cumgain.cli."):
                    target = name.split(".")[2]
                    if (folder / f"{target}.py").exists():
                        assert order.get(target, 2) < level, f"{module} imports {target}"


@pytest.mark.parametrize("fmt", [fmt for fmt in FORMATS if fmt != "md"])
@pytest.mark.parametrize("sub", MULTI_RUN)
def test_golden_outputs(capsys, monkeypatch, sub, fmt):
    """Each subcommand's output in each format, as reviewed (CUMGAIN_WRITE_GOLDEN=1 writes
    the files anew, to review with git diff)."""
    monkeypatch.chdir(GOLDEN)
    status, out, _ = _main(capsys, [sub, "tiny.qrels", "tiny.run", "tiny2.run", *ARGS[sub],
                                    "--intersect", "-f", fmt, "--quiet"])
    assert status == 0
    expected = GOLDEN / "cli" / f"{sub}.{fmt}.out"
    if os.environ.get("CUMGAIN_WRITE_GOLDEN") == "1":
        expected.parent.mkdir(exist_ok=True)
        expected.write_text(out, encoding="utf-8")
    assert out == expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("sub", MULTI_RUN)
def test_options_only_as_spelled_in_full(capsys, sub):
    """--out (the old curves option) must fail, not be taken for --output."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main([sub, QRELS, RUN1, RUN2, "--out", "x.png"])
    assert exit_info.value.code == cli.EXIT_USAGE
    assert "unrecognized arguments: --out" in capsys.readouterr().err
