"""`cumgain convert` on the size-M run (7M lines, 250 MB): the streamed converter against
the whole-file path it replaced (load_run + write_parquet through Dask), each in a fresh
process: wall time and peak RSS, in both layouts.

    python benchmarks/run_convert.py [--size M] [--rows-per-file 1000000]

Needs the benchmark data (python benchmarks/generate.py, or run_peers.py once).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = """
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
how, run, out, by_topic, rows = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", int(sys.argv[5])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if how == "streamed":
    from cumgain.convert import convert_run
    done = convert_run(run, out, partition_by_topic=by_topic, rows_per_file=rows)
    files = done.files
    assert done.streamed
else:
    from cumgain.dask import write_parquet
    from cumgain.trec_io import load_run
    files = write_parquet(load_run(run), out, partition_by_topic=by_topic, rows_per_file=rows)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "before_mb": before / 1024, "files": files}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="M")
    parser.add_argument("--rows-per-file", type=int, default=1_000_000)
    args = parser.parse_args()
    run = os.path.join(HERE, "data", args.size, "run.txt")
    print(f"{run}: {os.path.getsize(run) / 1e6:.0f} MB; python {sys.version.split()[0]}; "
          f"{os.cpu_count()} CPUs")
    print(f"{'layout':<12}{'converter':<12}{'time':>9}{'peak RSS':>10}{'files':>7}")
    for by_topic in (False, True):
        for how in ("whole", "streamed"):
            with tempfile.TemporaryDirectory(dir=os.path.join(HERE, "data")) as folder:
                out = os.path.join(folder, "out")
                done = subprocess.run([sys.executable, "-c", WORKER, how, run, out,
                                       "1" if by_topic else "0", str(args.rows_per_file)],
                                      capture_output=True, text=True, check=True)
                result = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{'by topic' if by_topic else 'file order':<12}{how:<12}"
                  f"{result['seconds']:8.1f}s{result['peak_mb']:8.0f} MB{result['files']:>7}")


if __name__ == "__main__":
    main()
