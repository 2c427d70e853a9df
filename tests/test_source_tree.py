"""Importing cumgain from a source tree whose extensions are not built (the checkout
after `pip install .`, run from the checkout) says what to do in one line, instead of
"No module named 'cgcore._vectors'"."""
import shutil
import subprocess
import sys
from pathlib import Path

import cgcore
import cumgain


def test_an_unbuilt_source_tree_says_how_to_build_it(tmp_path):
    for package in (cgcore, cumgain):
        source = Path(package.__file__).parent
        shutil.copytree(source, tmp_path / source.name,
                        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    (tmp_path / "setup.py").write_text("# the checkout's setup.py\n")
    result = subprocess.run([sys.executable, "-c", "import cumgain"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: cgcore is imported from the source tree")
    assert "pip install -e ." in last and "import cumgain from another folder" in last


def test_an_installed_copy_without_setup_py_imports(tmp_path):
    """Without a setup.py beside it (an installed package), the check stays silent."""
    result = subprocess.run([sys.executable, "-c", "import cumgain; print('fine')"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "fine"


def test_every_package_is_shipped():
    """Each folder of cumgain/ and cgcore/ with an __init__.py is in pyproject.toml's
    package list (a missing one is absent from the wheel: `cumgain.cli` once was)."""
    import re
    root = Path(cumgain.__file__).parent.parent
    if not (root / "pyproject.toml").exists():
        import pytest
        pytest.skip("not a source tree")
    text = (root / "pyproject.toml").read_text()
    listed = set(re.findall(r'"([\w.]+)"', re.search(r"^packages = \[(.*?)\]$", text,
                                                      flags=re.M | re.S).group(1)))
    found = {str(path.parent.relative_to(root)).replace("/", ".")
             for top in ("cumgain", "cgcore") for path in (root / top).rglob("__init__.py")}
    assert found == listed
