"""The command line: `cumgain demo` through the installed console script."""
import subprocess
import sys
from pathlib import Path

import pytest

from cumgain.cli import main


def _row(out, label):
    """The numbers printed on the demo line that starts with ``label``."""
    for line in out.splitlines():
        if line.startswith(label + " "):
            return [float(token) for token in line[len(label):].split()]
    raise AssertionError(f"no line {label!r} in:\n{out}")


def test_demo_prints_the_paper_vectors(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert _row(out, "CG'") == [3, 5, 8, 8, 8, 9, 11, 13, 16, 16]
    assert _row(out, "DCG' (b=2)") == [3, 5, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61]
    assert _row(out, "nCG'") == [1, 0.83, 0.89, 0.73, 0.62, 0.6, 0.69, 0.76, 0.89, 0.84]
    assert len(_row(out, "nDCG 0-1-10-100")) == 10


def test_console_script_is_installed(tmp_path):
    script = Path(sys.executable).with_name("cumgain")
    assert script.exists(), f"no console script beside {sys.executable}"
    result = subprocess.run([str(script), "demo"], capture_output=True, text=True, check=True,
                            cwd=tmp_path)
    assert "nCG'" in result.stdout


def test_python_dash_m(tmp_path):
    result = subprocess.run([sys.executable, "-m", "cumgain", "--version"], capture_output=True,
                            text=True, check=True, cwd=tmp_path)
    assert result.stdout.startswith("cumgain ")


def test_unknown_command_exits_non_zero():
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2
