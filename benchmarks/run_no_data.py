"""Files with no data lines, against `wc -l`: how long cumgain takes to refuse a run of
10M blank lines and one of 10M comment lines, and its peak memory, beside `wc -l` on the
same files (the target: within 2x of `wc -l`, under 100 MB).

Each measurement is the best of --repeats: `wc -l` as a command (its process start
included), cumgain in a fresh process, timed inside it around `cumgain.evaluate` (the
interpreter's start and imports left out), its peak RSS read from that process.

    python benchmarks/run_no_data.py [--lines 10000000] [--repeats 5] [--dir /tmp]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, resource, sys, time
import cumgain
qrels, run = sys.argv[1], sys.argv[2]
start = time.perf_counter()
try:
    cumgain.evaluate(qrels, run, ["map"])
    message = "evaluated?"
except cumgain.InputError as error:
    message = str(error)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "message": message,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def best_wc(path: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(["wc", "-l", path], check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def best_cumgain(qrels: str, path: str, repeats: int) -> dict:
    # (run in the files' folder: `python -c` puts the working directory first on the
    # path, and the repository root's cumgain is the uncompiled source tree)
    runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD, qrels, path],
                                      check=True, capture_output=True, text=True,
                                      cwd=os.path.dirname(path)).stdout)
            for _ in range(repeats)]
    fastest = min(runs, key=lambda run: run["seconds"])
    return {**fastest, "rss_mb": max(run["rss_mb"] for run in runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where to write the files (a temporary "
                        "folder, removed afterwards)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        qrels = os.path.join(folder, "qrels.txt")
        with open(qrels, "w") as out:
            out.write("1 0 d1 1\n")
        files = {"blank lines": b"\n", "comment lines": b"# a comment line of some length\n"}
        print(f"{'file':15} {'size':>8} {'wc -l':>9} {'cumgain':>9} {'ratio':>7} {'peak RSS':>9}")
        for name, line in files.items():
            path = os.path.join(folder, name.replace(" ", "_") + ".txt")
            with open(path, "wb") as out:
                for _ in range(args.lines // 1_000_000):
                    out.write(line * 1_000_000)
                out.write(line * (args.lines % 1_000_000))
            wc = best_wc(path, args.repeats)
            ours = best_cumgain(qrels, path, args.repeats)
            assert "no data lines" in ours["message"], ours["message"]
            size_mb = os.path.getsize(path) / 1e6
            print(f"{name:15} {size_mb:6.0f} MB {wc * 1000:7.1f} ms {ours['seconds'] * 1000:7.1f} ms "
                  f"{ours['seconds'] / wc:6.2f}x {ours['rss_mb']:6.0f} MB")


if __name__ == "__main__":
    main()
