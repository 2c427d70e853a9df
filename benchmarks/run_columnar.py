"""Columnar inputs against the TREC file: ``cumgain.evaluate`` on the same qrels and run
held as a pandas DataFrame (Arrow strings, and object strings), a pyarrow Table and a
Polars DataFrame, against ``evaluate`` on the TREC files, nDCG@10 + MAP, one fresh
process per measurement.

In each process the input is built first (not timed: read with pyarrow's CSV reader,
combined into one chunk per column, converted to the kind), then the peak RSS is reset
(``/proc/self/clear_refs``) and ``evaluate`` is timed. "time" is that call; "peak - before"
is the peak RSS during the call (``VmHWM``) minus the RSS before it, per run row: what the
evaluation adds to the input it was given (the ranked arrays, the ids interned, the
qrels table). "input" is the Arrow bytes of the run table per row. The ratio is
kind / file (< 1.5 is the target of the issue "Columnar inputs at file speed"). The
per-topic values of every kind are compared with the file's (bit for bit: PASS).

Run::

    python benchmarks/run_columnar.py --size S --repeats 1     # smoke run
    python benchmarks/run_columnar.py --size M --repeats 3     # the measurement

Nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_peers import DATA, EXIT_UNAVAILABLE, _fmt_mb, _fmt_time, run_process, worker_result  # noqa: E402,E501

KINDS = ("file", "pandas-arrow", "pyarrow", "polars", "pandas-object")
MEASURES = ["ndcg_cut.10", "map"]


def _status(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def _tables(paths: dict):
    import pyarrow as pa
    import pyarrow.csv as csv
    read = csv.ReadOptions(column_names=["query_id", "q0", "doc_id", "x", "value", "tag"][:6])
    split = csv.ParseOptions(delimiter=" ")
    strings = csv.ConvertOptions(column_types={"query_id": pa.string(), "doc_id": pa.string()})
    run = csv.read_csv(paths["run"], read_options=read, parse_options=split,
                       convert_options=strings)
    qrels = csv.read_csv(paths["qrels"], read_options=csv.ReadOptions(
        column_names=["query_id", "q0", "doc_id", "relevance"]), parse_options=split,
        convert_options=strings)
    run = run.select(["query_id", "doc_id", "value"]).rename_columns(
        ["query_id", "doc_id", "score"]).combine_chunks()
    qrels = qrels.select(["query_id", "doc_id", "relevance"]).combine_chunks()
    return qrels, run


def worker(kind: str, paths: dict) -> dict:
    import cumgain
    if kind == "file":
        qrels, run, nbytes = paths["qrels"], paths["run"], 0
    else:
        qrels, run = _tables(paths)
        nbytes = run.nbytes
        if kind == "pandas-arrow":
            import pandas as pd
            qrels, run = (t.to_pandas(types_mapper=pd.ArrowDtype) for t in (qrels, run))
        elif kind == "pandas-object":
            qrels, run = (t.to_pandas().astype({"query_id": object, "doc_id": object})
                          for t in (qrels, run))
        elif kind == "polars":
            try:
                import polars as pl
            except ImportError:
                print(json.dumps({"unavailable": "polars is not installed"}))
                sys.exit(EXIT_UNAVAILABLE)
            qrels, run = pl.from_arrow(qrels), pl.from_arrow(run)
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")        # the peak RSS starts again from the current one
    start = time.perf_counter()
    evaluation = cumgain.evaluate(qrels, run, MEASURES)
    seconds = time.perf_counter() - start
    peak = _status("VmHWM")
    digest = hashlib.sha256()
    for name in sorted(evaluation.values):
        digest.update(evaluation.values[name].tobytes())
    return {"seconds": seconds, "added_bytes": peak - before, "input_bytes": nbytes,
            "digest": digest.hexdigest(), "means": evaluation.means}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="M")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--skip-generate", action="store_true")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    paths = {"qrels": str(DATA / args.size / "qrels.txt"), "run": str(DATA / args.size / "run.txt")}
    if args.worker:
        print(json.dumps(worker(args.worker, paths)))
        return
    if not (Path(paths["qrels"]).exists() and Path(paths["run"]).exists()):
        if args.skip_generate:
            sys.exit(f"{DATA / args.size} is missing and --skip-generate was given")
        from generate import generate
        generate(args.size, DATA)
    with open(paths["run"], "rb") as f:
        rows = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 22), b""))
    kinds = args.kinds.split(",")
    results: dict = {kind: [] for kind in kinds}
    for _ in range(args.repeats):
        for kind in kinds:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--size", args.size,
                   "--worker", kind]
            results[kind].append(worker_result(run_process(cmd, args.timeout)))
    file_seconds = statistics.median(r["seconds"] for r in results["file"] if "seconds" in r) \
        if "file" in results else None
    file_digest = next((r["digest"] for r in results.get("file", []) if "digest" in r), None)
    print(f"size {args.size}: {rows:,} run rows; nDCG@10 + MAP; median of {args.repeats}")
    print(f"{'input':<15}{'time':>10}{'ratio':>9}{'peak - before':>15}{'per row':>9}"
          f"{'input/row':>11}  values")
    for kind in kinds:
        ok = [r for r in results[kind] if "seconds" in r]
        if not ok:
            print(f"{kind:<15}{(results[kind][0].get('unavailable') or results[kind][0].get('error'))}")
            continue
        seconds = statistics.median(r["seconds"] for r in ok)
        added = statistics.median(r["added_bytes"] for r in ok)
        ratio = f"{seconds / file_seconds:.2f}x" if file_seconds else "-"
        same = "PASS" if ok[0]["digest"] == file_digest else "FAIL"
        print(f"{kind:<15}{_fmt_time(seconds):>10}{ratio:>9}{_fmt_mb(added / 2**20):>15}"
              f"{added / rows:>8.1f}B{ok[0]['input_bytes'] / rows:>10.1f}B  {same}")


if __name__ == "__main__":
    main()
