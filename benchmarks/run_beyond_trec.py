"""Beyond trec_eval: cumgain against ir_measures on a bundle of measures that trec_eval
does not have (ERR@20, RBP(p=0.8, rel=1), Judged@10, alpha_nDCG@20), end to end, one
fresh process per measurement.

For one collection size (``generate.py``; M by default: 6,980 topics x 1,000 documents)
each tool goes from the files to per-topic values and means of the four measures:

* **cumgain**: ``prepare_qrels(qrels)`` once, then one :func:`cumgain.evaluate` call per
  group of measures that share a tie rule (ERR@20; RBP; Judged@10), and
  ``load_subtopics(subtopics)`` + one ``evaluate`` for alpha_nDCG@20. One call cannot
  compute the four: alpha_nDCG needs the subtopic judgments, the others the ordinary
  qrels, and ir_measures' providers order tied scores three ways (gdeval: docno
  descending, cumgain's default; cwl_eval: the run's order, ``ties="input_order"``;
  judged and pyndeval: docno ascending, ``ties="docno_asc"``). cumgain's tie rule belongs
  to the evaluation, so the same numbers as ir_measures take one call per rule. The other
  policies follow ir_measures too (``topics="qrels"``: every judged topic, 0 for one the
  run lacks; none is missing here).
* **ir_measures**: ``ir_measures.calc(measures, read_trec_qrels(qrels),
  read_trec_run(run))`` with its default pipeline for ERR@20, RBP and Judged@10, and
  ``ir_measures.calc([alpha_nDCG@20], read_trec_qrels(subtopics), read_trec_run(run))``
  (its pyndeval provider reads the subtopic from the qrels' ``iteration`` column, which
  ``read_trec_qrels`` fills from the second field). ``calc`` returns the per-topic values
  and ir_measures' means. The provider ir_measures picks for each measure is printed.

The subtopic judgments (ndeval's format, ``qid subtopic docno rel``) are derived from the
size's qrels and written next to them as ``subtopics.txt`` (under ``data/``, which git
ignores): a topic has 2-6 subtopics and each judged relevant document (level >= 1) is
relevant (rel 1) to 1-3 of them, chosen by a keyed BLAKE2b hash of the topic (the count)
and of (topic, docno) (the subtopics); lines by topic, then subtopic, then qrels order.
The file is byte-identical on every run.

``RBP(p=0.8)``: ir_measures 0.4.3's default pipeline has no provider for RBP without
``rel`` (``Unsupported measures {RBP}``: only its trectools provider, not in the default
pipeline, computes that); its cwl_eval provider needs ``rel``. Both tools are therefore
given ``RBP(p=0.8,rel=1)``; the script checks and prints this.

Before the timings, the first repetition's per-topic values are compared, measure by
measure (max |diff| over the topics, the topic sets, the means): PASS within 1e-12, ERR
within 1e-5 (gdeval prints 5 decimals, so ir_measures' ERR is rounded; cumgain's is not).
A FAIL names the worst topic and both values.

Every measurement is a separate ``python`` process, repeated ``--repeats`` times,
alternating the tools; the table shows the median and the range. "time" is measured
inside the process around the job (imports excluded); "process" is the child's wall
time; peak RSS its ``ru_maxrss`` (``os.wait4``). Before each measurement the qrels, run
and subtopic files are read once, so every tool starts with them in the page cache.
The ratio is ir_measures / cumgain (> 1: cumgain is faster). ``--per-measure`` also times
each measure alone, each tool in its own fresh processes. Nothing here asserts a time.

Run (with a Python where cumgain and ir_measures, cwl-eval and pyndeval are installed, and
perl on the PATH for gdeval)::

    python benchmarks/run_beyond_trec.py --size S --repeats 1    # smoke run, ~5 s
    python benchmarks/run_beyond_trec.py --size M --repeats 3    # the measurement
    python benchmarks/run_beyond_trec.py --size M --per-measure --repeats 1

Options: ``--size`` (S, M, L; default M), ``--data-dir`` (default ``benchmarks/data``),
``--repeats`` (3), ``--tools`` (cumgain, ir_measures), ``--per-measure``,
``--skip-generate`` (never write data: stop if a file is missing), ``--timeout`` (s per
process), ``--json PATH`` (raw results).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import pickle
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_peers import EXIT_UNAVAILABLE, _fmt_mb, _fmt_time, run_process, worker_result  # noqa: E402

DEFAULT_DATA = HERE / "data"

# (key, spelling given to both tools, judgments read, ir_measures provider expected,
#  cumgain tie rule that reproduces that provider's order)
BUNDLE = (
    ("ERR", "ERR@20", "qrels", "gdeval", "docno_desc"),
    ("RBP", "RBP(p=0.8,rel=1)", "qrels", "cwl_eval", "input_order"),
    ("Judged", "Judged@10", "qrels", "judged", "docno_asc"),
    ("alpha_nDCG", "alpha_nDCG@20", "subtopics", "pyndeval", "docno_asc"),
)
KEYS = tuple(b[0] for b in BUNDLE)
SPELLING = {b[0]: b[1] for b in BUNDLE}
INPUT = {b[0]: b[2] for b in BUNDLE}
EXPECTED_PROVIDER = {b[0]: b[3] for b in BUNDLE}
TIES = {b[0]: b[4] for b in BUNDLE}
#: the tie order of each ir_measures provider, as cumgain's ``ties`` spells it
PROVIDER_TIES = {"gdeval": "docno_desc", "cwl_eval": "input_order", "judged": "docno_asc",
                 "pyndeval": "docno_asc", "pytrec_eval": "docno_desc",
                 "msmarco": "docno_asc", "compat": "docno_asc", "accuracy": "input_order"}
TOLERANCE = {"ERR": 1e-5}       # gdeval's %.5f
DEFAULT_TOLERANCE = 1e-12
TOOLS = ("cumgain", "ir_measures")
RBP_PLAIN = "RBP(p=0.8)"
SUBTOPIC_KEY = b"cumgain-bench28"


# =====================================================================================
# the subtopic judgments
# =====================================================================================

def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=8, key=SUBTOPIC_KEY).digest()


def write_subtopics(qrels_path: Path, out_path: Path) -> int:
    """Derive ndeval-style subtopic judgments from ``qrels_path`` (see the module
    docstring) and write them to ``out_path`` (through a temporary name); return the
    number of lines."""
    relevant: dict = {}
    with open(qrels_path) as f:
        for line in f:
            qid, _, doc, rel = line.split()
            if float(rel) >= 1:
                relevant.setdefault(qid, []).append(doc)
    tmp = out_path.with_name(out_path.name + ".tmp")
    n = 0
    with open(tmp, "w") as out:
        for qid, docs in relevant.items():
            n_sub = 2 + _digest(f"topic:{qid}")[0] % 5
            rows = []
            for position, doc in enumerate(docs):
                d = _digest(f"{qid}:{doc}")
                picked = sorted({1 + d[1 + j] % n_sub for j in range(1 + d[0] % 3)})
                rows.extend((s, position, doc) for s in picked)
            rows.sort()
            out.writelines(f"{qid} {s} {doc} 1\n" for s, _, doc in rows)
            n += len(rows)
    os.replace(tmp, out_path)
    return n


def ensure_data(size: str, data_dir: Path, skip_generate: bool) -> dict:
    """The size's qrels, run and subtopic files, generated if missing (unless
    ``skip_generate``)."""
    folder = data_dir / size
    paths = {"qrels": folder / "qrels.txt", "run": folder / "run.txt",
             "subtopics": folder / "subtopics.txt"}
    if not (paths["qrels"].exists() and paths["run"].exists()):
        if skip_generate:
            sys.exit(f"{folder} has no qrels.txt/run.txt and --skip-generate was given")
        from generate import generate
        generate(size, data_dir)
    sub = paths["subtopics"]
    if not sub.exists() or sub.stat().st_mtime < paths["qrels"].stat().st_mtime:
        if skip_generate:
            sys.exit(f"{sub} is missing (or older than the qrels) and --skip-generate "
                     "was given")
        started = time.perf_counter()
        n = write_subtopics(paths["qrels"], sub)
        print(f"[subtopics] {n:,} subtopic judgments derived from {paths['qrels']} in "
              f"{time.perf_counter() - started:.1f} s -> {sub}", flush=True)
    return {k: str(v) for k, v in paths.items()}


# =====================================================================================
# worker side: one fresh process, one measurement
# =====================================================================================

def _rss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _unavailable(exc: BaseException):
    print(json.dumps({"unavailable": f"{type(exc).__name__}: {exc}"}))
    sys.exit(EXIT_UNAVAILABLE)


def worker_cumgain(paths: dict, keys: list, ties: dict, dump: str | None) -> dict:
    try:
        import cumgain
        from cumgain import load_subtopics
    except Exception as exc:
        _unavailable(exc)
    # one evaluate call per (judgments, tie rule), in the bundle's order
    calls: dict = {}
    for key in keys:
        calls.setdefault((INPUT[key], ties[key]), []).append(key)
    perf = time.perf_counter
    out: dict = {"extra": {"calls": []}, "rss_base_mb": _rss_mb()}
    per_topic, means = {}, {}
    start = perf()
    # the qrels read once when several calls use them (as for many runs)
    qrels = cumgain.prepare_qrels(paths["qrels"]) \
        if sum(judgments == "qrels" for judgments, _ in calls) > 1 else paths["qrels"]
    out["extra"]["prepare_qrels_seconds"] = perf() - start
    results = []
    for (judgments, rule), group in calls.items():
        t0 = perf()
        source = load_subtopics(paths["subtopics"]) if judgments == "subtopics" else qrels
        result = cumgain.evaluate(source, paths["run"], [SPELLING[k] for k in group],
                                  ties=rule, topics="qrels", warn=False)
        results.append((group, result))
        out["extra"]["calls"].append({"measures": group, "ties": rule,
                                      "judgments": judgments, "seconds": perf() - t0})
    for group, result in results:
        names = [m.name for m in result.measures]
        for key, name in zip(group, names):
            means[key] = float(result.means[name])
    out["seconds"] = perf() - start
    out["means"] = means
    out["extra"]["topics"] = {k: len(r.topics) for g, r in results for k in g}
    if dump:
        for group, result in results:
            for key, measure in zip(group, result.measures):
                per_topic[key] = dict(zip(result.topics, result.values[measure.name].tolist()))
    return out, per_topic


def _providers(ir_measures, measures) -> dict:
    """The provider ir_measures' default pipeline picks for each measure (its
    FallbackProvider takes the first available provider that supports it)."""
    picked = {}
    for m in measures:
        for p in ir_measures.DefaultPipeline.providers:
            if p.is_available() and p.supports(m):
                picked[str(m)] = p.NAME
                break
        else:
            picked[str(m)] = None
    return picked


def worker_ir_measures(paths: dict, keys: list, dump: str | None) -> dict:
    try:
        import ir_measures
    except Exception as exc:
        _unavailable(exc)
    groups: dict = {}
    for key in keys:
        groups.setdefault(INPUT[key], []).append(key)
    parsed = {k: ir_measures.parse_measure(SPELLING[k]) for k in keys}
    perf = time.perf_counter
    out: dict = {"extra": {"calls": [], "providers": _providers(ir_measures, parsed.values())},
                 "rss_base_mb": _rss_mb()}
    per_topic: dict = {k: {} for k in keys}
    means = {}
    start = perf()
    for judgments, group in groups.items():
        t0 = perf()
        measures = [parsed[k] for k in group]
        result = ir_measures.calc(measures, ir_measures.read_trec_qrels(paths[judgments]),
                                  ir_measures.read_trec_run(paths["run"]))
        aggregated, metrics = result
        key_of = {parsed[k]: k for k in group}
        for metric in metrics:
            per_topic[key_of[metric.measure]][metric.query_id] = float(metric.value)
        for m, value in aggregated.items():
            means[key_of[m]] = float(value)
        out["extra"]["calls"].append({"measures": group, "judgments": judgments,
                                      "seconds": perf() - t0})
    out["seconds"] = perf() - start
    out["means"] = means
    out["extra"]["topics"] = {k: len(v) for k, v in per_topic.items()}
    return out, (per_topic if dump else {})


def worker(tool: str, keys: list, paths: dict, ties: dict, dump: str | None) -> dict:
    if tool == "cumgain":
        out, per_topic = worker_cumgain(paths, keys, ties, dump)
    elif tool == "ir_measures":
        out, per_topic = worker_ir_measures(paths, keys, dump)
    else:
        raise SystemExit(f"unknown tool {tool}")
    if dump:
        with open(dump, "wb") as f:
            pickle.dump(per_topic, f, protocol=pickle.HIGHEST_PROTOCOL)
    return out


# =====================================================================================
# driver side
# =====================================================================================

def warm_page_cache(paths: dict) -> None:
    """Read the files once so that every measurement starts with them in the page cache
    (see run_peers.warm_page_cache: this machine's kernel pages out cold file pages)."""
    block = bytearray(1 << 20)
    for path in paths.values():
        if os.path.exists(path):
            with open(path, "rb", buffering=0) as raw:
                while raw.readinto(block):
                    pass


def measure(tool: str, keys: list, paths: dict, ties: dict, timeout: float,
            dump: str | None) -> dict:
    warm_page_cache(paths)
    cmd = [sys.executable, str(HERE / "run_beyond_trec.py"), "--worker", tool, ",".join(keys),
           "--paths", json.dumps(paths), "--ties", json.dumps(ties)]
    if dump:
        cmd += ["--dump", dump]
    return worker_result(run_process(cmd, timeout), tail_chars=600)


def ir_measures_setup() -> tuple[dict, list]:
    """(key -> provider picked by ir_measures' default pipeline, notes), checked in this
    process; RBP(p=0.8) without rel is tried and its failure reported."""
    notes = []
    try:
        import ir_measures
    except Exception as exc:
        return {}, [f"ir_measures not importable ({type(exc).__name__}: {exc})"]
    parsed = {k: ir_measures.parse_measure(SPELLING[k]) for k in KEYS}
    by_name = _providers(ir_measures, parsed.values())
    providers = {k: by_name[str(parsed[k])] for k in KEYS}
    plain = ir_measures.parse_measure(RBP_PLAIN)
    plain_provider = _providers(ir_measures, [plain])[str(plain)]
    if plain_provider is None:
        notes.append(f"{RBP_PLAIN}: ir_measures' default pipeline has no provider for it "
                     f"(it parses as {plain}; cwl_eval needs rel=), so both tools compute "
                     f"{SPELLING['RBP']} (ir_measures: {parsed['RBP']})")
    else:
        notes.append(f"{RBP_PLAIN}: ir_measures would use {plain_provider}; the bundle "
                     f"uses {SPELLING['RBP']} for both tools")
    return providers, notes


def summarise(records: list) -> dict | None:
    ok = [r for r in records if "seconds" in r]
    if not ok:
        return None
    secs = [r["seconds"] for r in ok]
    calls = None
    if all(len(r["extra"].get("calls", [])) == len(ok[0]["extra"].get("calls", []))
           for r in ok):
        calls = [{**c, "seconds": statistics.median(r["extra"]["calls"][i]["seconds"]
                                                    for r in ok)}
                 for i, c in enumerate(ok[0]["extra"].get("calls", []))]
    return {"seconds": statistics.median(secs), "min": min(secs), "max": max(secs),
            "all_seconds": secs, "n": len(ok),
            "wall": statistics.median(r["wall"] for r in ok),
            "rss_mb": statistics.median(r["rss_mb"] for r in ok),
            "rss_base_mb": statistics.median(r.get("rss_base_mb", float("nan")) for r in ok),
            "means": ok[0].get("means"), "extra": ok[0].get("extra", {}), "calls": calls}


def _load(path: str | None):
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            return pickle.load(f)
    return None


def agreement(keys: list, cg: dict | None, irm: dict | None, cg_means: dict | None,
              irm_means: dict | None) -> tuple[list, bool]:
    """Per measure: PASS/FAIL lines comparing cumgain's per-topic values with
    ir_measures'."""
    lines, ok = [], True
    if cg is None or irm is None:
        return ["  agreement: not checked (a tool did not run)"], False
    for key in keys:
        tol = TOLERANCE.get(key, DEFAULT_TOLERANCE)
        a, b = cg.get(key, {}), irm.get(key, {})
        shared = sorted(set(a) & set(b), key=str.encode)
        only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
        worst, worst_q, beyond, nan_mismatch = 0.0, None, 0, 0
        for q in shared:
            x, y = a[q], b[q]
            if math.isnan(x) or math.isnan(y):
                if not (math.isnan(x) and math.isnan(y)):
                    nan_mismatch += 1
                continue
            d = abs(x - y)
            if d > tol:
                beyond += 1
            if d > worst:
                worst, worst_q = d, q
        d_mean = (abs(cg_means[key] - irm_means[key])
                  if cg_means and irm_means and key in cg_means and key in irm_means
                  else float("nan"))
        passed = (not only_a and not only_b and beyond == 0 and nan_mismatch == 0
                  and bool(shared))
        ok = ok and passed
        line = (f"  [{'PASS' if passed else 'FAIL'}] {SPELLING[key]}: {len(shared):,} topics, "
                f"per topic max |diff| {worst:.3g}, means |diff| {d_mean:.3g} "
                f"(tolerance {tol:g})")
        if worst_q is not None and worst > 0:
            line += f"; largest at topic {worst_q}: cumgain {a[worst_q]!r}, ir_measures {b[worst_q]!r}"
        lines.append(line)
        if beyond:
            lines.append(f"         {beyond:,} topics differ by more than {tol:g}")
        if only_a or only_b:
            lines.append(f"         topics only in cumgain: {len(only_a)} {only_a[:5]}; only in "
                         f"ir_measures: {len(only_b)} {only_b[:5]}")
        if nan_mismatch:
            lines.append(f"         {nan_mismatch} topics NaN in one tool only")
    return lines, ok


def _range(s: dict) -> str:
    return f"{_fmt_time(s['min'])} - {_fmt_time(s['max'])}"


def table_rows(label: str, summaries: dict, failures: dict, ref_key, keys_of) -> list:
    """Rows for the tools of one job; ratios to the job's cumgain row."""
    out = []
    ref = summaries.get(ref_key)
    for key, name in keys_of:
        if key in failures:
            out.append(f"{label:<22} {name:<12} {failures[key]}")
            continue
        s = summaries.get(key)
        if s is None:
            continue
        t_ratio = s["seconds"] / ref["seconds"] if ref else None
        r_ratio = s["rss_mb"] / ref["rss_mb"] if ref else None
        out.append(f"{label:<22} {name:<12} {_fmt_time(s['seconds']):>10} {_range(s):>21} "
                   f"{_fmt_time(s['wall']):>10} {_fmt_mb(s['rss_mb']):>9} "
                   f"{(f'{t_ratio:.1f}x' if t_ratio is not None else '-'):>8} "
                   f"{(f'{r_ratio:.2f}x' if r_ratio is not None else '-'):>8}")
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="M", help="S, M or L (generate.py)")
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA),
                        help="folder holding <size>/qrels.txt and run.txt (default "
                             "benchmarks/data)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated subset of {','.join(TOOLS)}")
    parser.add_argument("--per-measure", action="store_true",
                        help="also time each measure alone (fresh processes per tool)")
    parser.add_argument("--skip-generate", action="store_true",
                        help="do not generate missing collections or subtopic judgments")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per process")
    parser.add_argument("--json", help="write the raw measurements here")
    parser.add_argument("--worker", nargs=2, metavar=("TOOL", "KEYS"), help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    parser.add_argument("--ties", help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        tool, keys = args.worker
        result = worker(tool, keys.split(","), json.loads(args.paths), json.loads(args.ties),
                        args.dump)
        print(json.dumps(result))
        return

    size = args.size.strip().upper()
    from generate import SIZES
    if size not in SIZES:
        sys.exit(f"unknown size {size}; choose from {list(SIZES)}")
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad:
        sys.exit(f"unknown tools {bad}; choose from {list(TOOLS)}")
    if args.repeats < 1:
        sys.exit("--repeats must be >= 1")
    data_dir = Path(args.data_dir).resolve()
    paths = ensure_data(size, data_dir, args.skip_generate)

    import importlib.metadata as md
    versions = {}
    for dist in ("cumgain", "ir_measures", "cwl-eval", "pyndeval", "numpy"):
        try:
            versions[dist] = md.version(dist)
        except Exception:
            versions[dist] = "not installed"
    perl = shutil.which("perl")
    header = [f"beyond trec_eval: cumgain vs ir_measures; python {platform.python_version()} "
              f"({sys.executable}); {os.cpu_count()} CPUs; {platform.platform()}",
              "versions: " + ", ".join(f"{k} {v}" for k, v in versions.items())
              + f"; perl {'at ' + perl if perl else 'not found (gdeval needs it)'}"]
    counts = {}
    for name in ("qrels", "run", "subtopics"):
        with open(paths[name], "rb") as f:
            counts[name] = sum(buf.count(b"\n") for buf in iter(lambda: f.read(1 << 22), b""))
    header.append(f"size {size} ({data_dir / size}): {counts['run']:,} run lines "
                  f"({os.path.getsize(paths['run']) / 1e6:.0f} MB), {counts['qrels']:,} "
                  f"judgments, {counts['subtopics']:,} subtopic judgments (subtopics.txt)")
    providers, notes = ir_measures_setup()
    ties = dict(TIES)
    for key in KEYS:
        provider = providers.get(key)
        if provider and provider != EXPECTED_PROVIDER[key]:
            notes.append(f"{SPELLING[key]}: ir_measures picked {provider}, not "
                         f"{EXPECTED_PROVIDER[key]}; cumgain uses that provider's tie rule")
            ties[key] = PROVIDER_TIES.get(provider, ties[key])
    header.append("measures (ir_measures' default provider -> cumgain's tie rule for the "
                  "same order): " + "; ".join(
                      f"{SPELLING[k]} [{INPUT[k]}]: {providers.get(k, '?')} -> ties={ties[k]}"
                      for k in KEYS))
    header += [f"note: {n}" for n in notes]
    print("\n".join(header), flush=True)

    jobs = [("bundle", list(KEYS))]
    if args.per_measure:
        jobs += [(key, [key]) for key in KEYS]
    todo = [(job, tool) for job, _ in jobs for tool in tools]
    keys_of_job = dict(jobs)
    records: dict = {key: [] for key in todo}
    failures: dict = {}
    dumps: dict = {}
    report = list(header)
    dump_dir = Path(tempfile.mkdtemp(prefix="cumgain_beyond_"))
    check_lines, all_pass = [], None
    try:
        print(f"\nrunning {len(todo)} measurements x {args.repeats} (fresh processes)",
              flush=True)
        for rep in range(args.repeats):
            for job, tool in todo:
                key = (job, tool)
                if key in failures:
                    continue
                dump = None
                if rep == 0 and job == "bundle":
                    dump = str(dump_dir / f"{tool}.pkl")
                    dumps[tool] = dump
                r = measure(tool, keys_of_job[job], paths, ties, args.timeout, dump)
                if "unavailable" in r:
                    failures[key] = f"not available: {r['unavailable']}"
                elif "error" in r:
                    failures[key] = f"FAILED: {r['error']}"
                else:
                    records[key].append(r)
                status = failures.get(key) or (
                    f"{_fmt_time(r['seconds'])} (process {_fmt_time(r['wall'])}, peak RSS "
                    f"{_fmt_mb(r['rss_mb'])})")
                print(f"  rep {rep + 1}/{args.repeats} {job:<10} {tool:<12} {status}",
                      flush=True)
            if rep == 0:
                # the values are checked after the first repetition, before any timing
                # is reported (and before the other repetitions)
                first = {t: records[("bundle", t)][0] for t in TOOLS
                         if records.get(("bundle", t))}
                check_lines, all_pass = agreement(
                    list(KEYS), _load(dumps.get("cumgain")), _load(dumps.get("ir_measures")),
                    first.get("cumgain", {}).get("means"),
                    first.get("ir_measures", {}).get("means"))
                check_lines = [f"agreement, per topic, cumgain vs ir_measures (first "
                               f"repetition), size {size}:"] + check_lines
                print("\n".join(check_lines), flush=True)
    finally:
        shutil.rmtree(dump_dir, ignore_errors=True)

    summaries = {key: summarise(recs) for key, recs in records.items() if summarise(recs)}
    out = [f"\n== size {size}: median of {args.repeats} fresh processes per row ==",
           f"{'job':<22} {'tool':<12} {'time':>10} {'range':>21} {'process':>10} "
           f"{'peak RSS':>9} {'ratio':>8} {'RSS ratio':>8}"]
    for job, keys in jobs:
        label = "bundle (4 measures)" if job == "bundle" else SPELLING[job]
        out += table_rows(label, summaries, failures, (job, "cumgain"),
                          [((job, t), t) for t in tools])
    out.append("time: inside the process, files -> per-topic values and means (imports "
               "excluded); range: min - max over the repetitions; process: the whole fresh "
               "process; ratio: tool / cumgain (> 1: cumgain faster or smaller)")
    for tool in tools:
        s = summaries.get(("bundle", tool))
        if s and s.get("calls"):
            parts = "; ".join(f"{'+'.join(c['measures'])} [{c['judgments']}"
                              + (f", ties={c['ties']}" if "ties" in c else "")
                              + f"] {_fmt_time(c['seconds'])}" for c in s["calls"])
            prep = s["extra"].get("prepare_qrels_seconds")
            prep = f"prepare_qrels {_fmt_time(prep)}; " if prep else ""
            out.append(f"{tool} bundle, per call (medians): {prep}{parts}")
    cg, irm = summaries.get(("bundle", "cumgain")), summaries.get(("bundle", "ir_measures"))
    if cg and irm:
        out.append(f"bundle: ir_measures / cumgain = {irm['seconds'] / cg['seconds']:.1f}x "
                   f"(issue #28's target: >= 20x); peak RSS {_fmt_mb(cg['rss_mb'])} against "
                   f"{_fmt_mb(irm['rss_mb'])} ({cg['rss_mb'] / irm['rss_mb']:.2f})")
    if args.per_measure:
        for key in KEYS:
            a, b = summaries.get((key, "cumgain")), summaries.get((key, "ir_measures"))
            if a and b:
                out.append(f"{SPELLING[key]} alone: ir_measures / cumgain = "
                           f"{b['seconds'] / a['seconds']:.1f}x ({_fmt_time(b['seconds'])} / "
                           f"{_fmt_time(a['seconds'])})")
    out.append(f"agreement: {'all PASS' if all_pass else 'NOT all PASS (see above)'}")
    print("\n".join(out), flush=True)
    report += check_lines + out
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "checks": check_lines, "report": report,
                       "summaries": {f"{j}/{t}": s for (j, t), s in summaries.items()},
                       "failures": {f"{j}/{t}": v for (j, t), v in failures.items()},
                       "records": {f"{j}/{t}": v for (j, t), v in records.items()}},
                      f, indent=1, default=str)
        print(f"raw results written to {args.json}")


if __name__ == "__main__":
    main()
