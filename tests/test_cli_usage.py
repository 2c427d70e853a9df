"""Usage errors of the command line: every subcommand reports a bad option, a missing
argument or one too many as one line named by its own prog (``cumgain evaluate:
error: ...``), with the usage status that every ``-h`` states (cli.EXIT_USAGE)."""
import subprocess
import sys
from pathlib import Path

import pytest

from cumgain import cli

# subcommand, enough positional arguments, an option that takes a value
SUBCOMMANDS = [
    ("evaluate", ["qrels", "run"], "--measure"),
    ("compare", ["qrels", "runA", "runB"], "--test"),
    ("curves", ["qrels", "run"], "--depth"),
    ("convert", ["run", "out"], "--rows-per-file"),
    ("demo", [], "--plot"),
]
NAMES = [sub for sub, _, _ in SUBCOMMANDS]


def _usage_error(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return exit_info.value.code, err


@pytest.mark.parametrize("sub, positionals, _", SUBCOMMANDS, ids=NAMES)
def test_an_unknown_option(capsys, sub, positionals, _):
    status, err = _usage_error(capsys, [sub, *positionals, "--bogus"])
    assert status == cli.EXIT_USAGE
    assert err == (f"cumgain {sub}: error: unrecognized arguments: --bogus "
                   f"(see cumgain {sub} -h)\n")


@pytest.mark.parametrize("sub", ["evaluate", "compare", "curves", "convert"])
def test_a_missing_positional_argument(capsys, sub):
    for argv in ([sub], [sub, "qrels"]):
        status, err = _usage_error(capsys, argv)
        assert status == cli.EXIT_USAGE
        assert err.startswith(f"cumgain {sub}: error: the following arguments are required")


@pytest.mark.parametrize("argv", [["convert", "run", "out"], ["demo"]], ids=["convert", "demo"])
def test_one_argument_too_many(capsys, argv):
    sub = argv[0]
    status, err = _usage_error(capsys, [*argv, "extra"])
    assert status == cli.EXIT_USAGE
    assert err.startswith(f"cumgain {sub}: error: unrecognized arguments: extra")


@pytest.mark.parametrize("sub, positionals, option", SUBCOMMANDS, ids=NAMES)
def test_an_option_without_its_value(capsys, sub, positionals, option):
    status, err = _usage_error(capsys, [sub, *positionals, option])
    assert status == cli.EXIT_USAGE
    assert err.startswith(f"cumgain {sub}: error: argument ")
    assert f"{option}: expected one argument" in err


def test_usage_errors_of_cumgain_itself(capsys):
    status, err = _usage_error(capsys, ["frobnicate"])
    assert status == cli.EXIT_USAGE and err.startswith("cumgain: error: argument COMMAND")
    status, err = _usage_error(capsys, [])
    assert status == cli.EXIT_USAGE and err.startswith("cumgain: error: the following")
    # an option before the subcommand is cumgain's own, and named so
    status, err = _usage_error(capsys, ["--bogus", "evaluate", "qrels", "run"])
    assert status == cli.EXIT_USAGE
    assert err.startswith("cumgain: error: unrecognized arguments: --bogus")


def test_trec_eval_keeps_its_own_status(capsys):
    """An unknown option of ``cumgain trec_eval`` exits as ``cumgain-trec-eval`` (and
    trec_eval) does: 1; its missing files stay trec_eval's message."""
    with pytest.raises(SystemExit) as script:
        cli.main_trec_eval(["--bogus", "qrels", "run"])
    capsys.readouterr()
    status, err = _usage_error(capsys, ["trec_eval", "--bogus", "qrels", "run"])
    assert status == script.value.code == 1
    assert err.startswith("cumgain trec_eval: error: unrecognized arguments: --bogus")


@pytest.mark.parametrize("argv", [[], *[[sub] for sub in NAMES]], ids=["cumgain", *NAMES])
def test_every_help_states_the_exit_statuses(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*argv, "-h"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for status, what in ((cli.EXIT_USAGE, "usage error"),
                         (cli.EXIT_INPUT, "unreadable or malformed input"),
                         (cli.EXIT_NO_MEMORY, "out of memory"),
                         (cli.EXIT_NO_TOPICS, "no topic in both the run and the qrels"),
                         (cli.EXIT_INTERRUPTED, "interrupted")):
        assert f"{status} {what}" in text


def test_the_console_script_exits_with_the_usage_status(tmp_path):
    script = Path(sys.executable).with_name("cumgain")
    completed = subprocess.run([str(script), "evaluate", "qrels", "run", "--bogus"],
                               capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert completed.returncode == cli.EXIT_USAGE
    assert completed.stderr.startswith("cumgain evaluate: error: unrecognized arguments")
