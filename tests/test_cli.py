"""The command line: `cumgain demo`, the console scripts, and the parser itself.

`cumgain trec_eval` and `cumgain evaluate` have their own files
(test_cli_trec_eval.py, test_cli_evaluate.py).
"""
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import cumgain
from cumgain import cli
from cumgain.cli import base, demo
from cumgain.cli import main
from cumgain.datasets import SplitMix64, demo_collection

GOLDEN = Path(__file__).resolve().parent / "golden"


def _row(out, label):
    """The numbers printed on the demo line that starts with ``label``."""
    for line in out.splitlines():
        if line.startswith(label + " "):
            return [float(token) for token in line[len(label):].split()]
    raise AssertionError(f"no line {label!r} in:\n{out}")


def test_demo_prints_the_paper_vectors(capsys):
    assert main(["demo", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert _row(out, "CG'") == [3, 5, 8, 8, 8, 9, 11, 13, 16, 16]
    assert _row(out, "DCG' (b=2)") == [3, 5, 6.89, 6.89, 6.89, 7.28, 7.99, 8.66, 9.61, 9.61]
    assert _row(out, "nCG'") == [1, 0.83, 0.89, 0.73, 0.62, 0.6, 0.69, 0.76, 0.89, 0.84]
    # the ideal vectors of the paper (section 2.3): I' = <3, 3, 3, 2, 2, 2, 1, 1, 1, 1>
    assert _row(out, "CG_I'") == [3, 6, 9, 11, 13, 15, 16, 17, 18, 19]


def test_demo_output_is_golden_and_deterministic(tmp_path):
    """The whole demo text, in a fresh process with a different hash seed each time."""
    script = Path(sys.executable).with_name("cumgain")
    expected = (GOLDEN / "demo.out").read_text(encoding="utf-8")
    for seed in ("0", "12345"):
        completed = subprocess.run([str(script), "demo", "--no-plot"], capture_output=True,
                                   text=True, cwd=tmp_path, timeout=120,
                                   env={**os.environ, "PYTHONHASHSEED": seed})
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout == expected
        assert completed.stderr == ""


def test_demo_collection_shape():
    collection = demo_collection()
    assert collection.topics == tuple(str(t) for t in range(401, 451))
    assert sorted(collection.runs) == ["fair", "good", "poor"]
    levels = {level for judged in collection.qrels.values() for level in judged.values()}
    assert levels == {0, 1, 2, 3}
    for run in collection.runs.values():
        assert all(len(run[topic]) == 100 for topic in collection.topics)
    # some retrieved documents were never judged (the pool is the runs' top 30)
    unjudged = sum(docno not in collection.qrels[topic]
                   for topic in collection.topics for docno in collection.runs["poor"][topic])
    assert unjudged > 0


def test_demo_collection_files_fingerprint(tmp_path):
    """The generator uses no platform- or version-dependent randomness: the files it
    writes are fixed byte for byte."""
    paths = demo_collection().write_trec(tmp_path)
    digests = {name: hashlib.sha256(path.read_bytes()).hexdigest()[:16]
               for name, path in paths.items()}
    assert digests == {"qrels": "1ff1231b856e8e3c", "good": "47474b78596b914f",
                       "fair": "dc1a355b58b262f3", "poor": "c2c1d2549f3a0281"}


def test_splitmix64_reference_values():
    """The first outputs of the published reference code (Vigna's splitmix64.c) for the
    seeds 1234567 and 0."""
    rng = SplitMix64(1234567)
    assert [rng.next_uint64() for _ in range(3)] == [
        6457827717110365317, 3203168211198807973, 9817491932198370423]
    rng = SplitMix64(0)
    assert [rng.next_uint64() for _ in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    rng = SplitMix64(7)
    assert all(0 <= rng.random() < 1 for _ in range(100))


def test_runs_have_the_promised_quality_order():
    collection = demo_collection()
    means = {run: cumgain.evaluate(collection.qrels, collection.runs[run], ["nDCG@10"]).means[
        "nDCG@10"] for run in collection.runs}
    assert means["good"] > means["fair"] > means["poor"] > 0


def test_demo_tables_agree_with_the_curves():
    """The means printed by the demo (cumgain.evaluate's scalar kernels) equal the averaged
    curves at the same ranks (cumgain.curves, the vector kernels; what the PNG shows)."""
    collection = demo_collection()
    curves = demo.demo_curves(collection)
    assert sorted(curves) == ["CG", "DCG", "nCG", "nDCG"]
    for run in collection.runs:
        result = cumgain.evaluate(collection.qrels, collection.runs[run],
                                  [demo._demo_measure(kind, k) for kind in curves
                                   for k in demo.DEMO_RANKS])
        for kind, kind_curves in curves.items():
            assert len(kind_curves.runs[run]) == 100
            for k in demo.DEMO_RANKS:
                assert result.means[demo._demo_measure(kind, k)] == pytest.approx(
                    kind_curves.runs[run][k - 1], rel=1e-12, abs=1e-12)


def test_demo_writes_the_curves_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curves.png"
    assert main(["demo", "--plot", str(target)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {target}" in out
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_without_matplotlib_says_so(capsys, monkeypatch, tmp_path):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends",
                 "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)     # import raises ImportError
    target = tmp_path / "curves.png"
    assert main(["demo", "--plot", str(target)]) == 0
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert not target.exists()


def test_demo_data_dir(capsys, tmp_path):
    assert main(["demo", "--no-plot", "--data-dir", str(tmp_path / "data")]) == 0
    out = capsys.readouterr().out
    assert "cumgain evaluate" in out
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [
        "fair.run", "good.run", "poor.run", "qrels.txt"]


@pytest.mark.slow
def test_demo_plots_into_a_fresh_private_folder(capsys, tmp_path, monkeypatch):
    """The default plot goes to a new folder made by tempfile.mkdtemp (mode 0700), so
    a link planted at the old fixed name $TMPDIR/cumgain-demo-curves.png is never
    followed (in a fresh process, as an attacker would find it) and two demos never
    write the same file."""
    pytest.importorskip("matplotlib")
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    (tmp_path / "cumgain-demo-curves.png").symlink_to(victim)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "cumgain", "demo"], capture_output=True,
                          text=True, check=True, cwd=tmp_path, env=env)
    written = [Path(done.stdout.rsplit("wrote ", 1)[1].strip())]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    small = demo.demo_curves(depth=10)
    monkeypatch.setattr(demo, "demo_curves", lambda: small)
    assert main(["demo"]) == 0
    written.append(Path(capsys.readouterr().out.rsplit("wrote ", 1)[1].strip()))
    assert victim.read_bytes() == b"precious"
    for path in written:
        assert path.parent.parent == tmp_path and path.parent.name.startswith("cumgain-demo-")
        assert path.parent.stat().st_mode & 0o777 == 0o700
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert written[0].parent != written[1].parent


def test_demo_refuses_to_overwrite_unless_asked(capsys, tmp_path):
    plot, data = tmp_path / "curves.png", tmp_path / "data"
    data.mkdir()
    plot.write_bytes(b"my plot")
    (data / "good.run").write_text("my run\n")
    for argv in (["--plot", str(plot)], ["--no-plot", "--data-dir", str(data)]):
        assert main(["demo", *argv]) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert "exists; pass --overwrite to replace it" in err
    assert plot.read_bytes() == b"my plot"
    assert sorted(p.name for p in data.iterdir()) == ["good.run"]        # nothing written
    assert (data / "good.run").read_text() == "my run\n"
    assert main(["demo", "--no-plot", "--data-dir", str(data), "--overwrite"]) == 0
    assert sorted(p.name for p in data.iterdir()) == ["fair.run", "good.run", "poor.run",
                                                      "qrels.txt"]
    assert (data / "good.run").read_text().startswith("401 Q0 ")


def test_console_script_is_installed(tmp_path):
    script = Path(sys.executable).with_name("cumgain")
    assert script.exists(), f"no console script beside {sys.executable}"
    result = subprocess.run([str(script), "demo", "--plot", str(tmp_path / "c.png")],
                            capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "nCG'" in result.stdout
    assert Path(sys.executable).with_name("cumgain-trec-eval").exists()


def test_python_dash_m(tmp_path):
    result = subprocess.run([sys.executable, "-m", "cumgain", "--version"], capture_output=True,
                            text=True, check=True, cwd=tmp_path)
    assert result.stdout.startswith("cumgain ")


def test_unknown_command_exits_non_zero(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == cli.EXIT_USAGE    # was argparse's 2 until issue #30
    assert capsys.readouterr().err.count("\n") == 1


def test_trec_eval_measure_order_constant_matches_the_registry():
    """report_trec.PRINT_ORDER: trec_eval's registry with dcg and ideal_dcg before ndcg."""
    from cumgain.analysis.trec_output import PRINT_ORDER
    assert PRINT_ORDER.index("dcg") < PRINT_ORDER.index("ideal_dcg") < PRINT_ORDER.index("ndcg")
    assert np.all(np.diff([PRINT_ORDER.index(name) for name in
                           ("runid", "num_q", "map", "P", "recall", "ndcg_cut", "success")]) > 0)


@pytest.mark.parametrize("error, line", [
    (MemoryError(), "out of memory"),
    (MemoryError("Unable to allocate 8.00 EiB"), "out of memory: Unable to allocate 8.00 EiB"),
    (cumgain.exceptions.OutOfMemoryError("run.txt", "run", 1 << 25),
     "run.txt: out of memory reading the run: an allocation of 33,554,432 bytes failed"),
])
def test_a_memory_error_is_one_line_and_its_own_exit_status(capsys, error, line):
    """No traceback: one line, and a status of its own (not a malformed file's)."""
    def handler(args):
        raise error

    assert base.run(handler, None, "cumgain evaluate") == cli.EXIT_NO_MEMORY == 3
    assert capsys.readouterr().err == f"cumgain evaluate: error: {line}\n"


def test_demo_data_dir_on_a_full_disk_leaves_nothing(capsys, tmp_path, monkeypatch):
    """The disk fills up while the third file is written: the files written before and
    the folders the command made are removed, a folder that existed is kept."""
    import builtins
    real_open = builtins.open
    written = []

    def filling(path, mode="r", *args, **kwargs):
        stream = real_open(path, mode, *args, **kwargs)
        if "w" in mode and ".cumgain-tmp-" in str(path):
            written.append(path)
            if len(written) == 3:
                stream.close()
                raise OSError(28, "No space left on device", str(path))
        return stream

    monkeypatch.setattr(builtins, "open", filling)
    target = tmp_path / "made" / "data"
    assert main(["demo", "--no-plot", "--data-dir", str(target)]) == 2
    monkeypatch.setattr(builtins, "open", real_open)
    assert "No space left on device" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    written.clear()
    monkeypatch.setattr(builtins, "open", filling)
    assert main(["demo", "--no-plot", "--data-dir", str(tmp_path / "kept")]) == 2
    monkeypatch.setattr(builtins, "open", real_open)
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]
    assert list((tmp_path / "kept").iterdir()) == []


@pytest.mark.parametrize("script", ["cumgain", "cumgain-trec-eval"])
def test_ctrl_c_while_the_command_loads_says_interrupted(script, tmp_path):
    """SIGINT while numpy and the compiled core load (before the command's own handling
    runs): one line and exit status 130, not a KeyboardInterrupt traceback and death by
    the signal."""
    import signal
    import time
    path = Path(sys.executable).with_name(script)
    if not path.exists() or not os.path.isdir("/proc"):
        pytest.skip("no console script or no /proc here")
    args = [str(path)] + (["demo", "--no-plot"] if script == "cumgain" else ["-h"])
    for _ in range(3):
        process = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:      # until numpy's core is loaded
            try:
                with open(f"/proc/{process.pid}/maps") as maps:
                    if "_multiarray_umath" in maps.read():
                        break
            except OSError:
                break
            time.sleep(0.001)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        if process.returncode == 0:             # (it finished first: nothing to check)
            continue
        assert process.returncode == 130, err
        assert err.decode().strip().endswith("interrupted") and b"Traceback" not in err
