"""Deterministic generator of TREC test collections for the end-to-end benchmarks.

Sizes (topics x retrieved documents per topic):

====  ===========  ===========  ===================================================
name  topics       docs/topic   shape of the data
====  ===========  ===========  ===================================================
S     50           1,000        smoke test (50k run lines)
M     6,980        1,000        MS MARCO passage dev-like (7M run lines); numeric
                                docnos ``0 .. 8,841,822`` and numeric topic ids
L     100,000      100          many short rankings (10M run lines); MS MARCO
                                document-like docnos ``D1234567``
====  ===========  ===========  ===================================================

Every topic has 20-200 graded judgments (levels 0-3, mostly 0: p = .60/.20/.12/.08);
between 20% and 80% of them are documents the run retrieved, the rest are judged
documents the run missed. Run scores are normal draws (a relevant document gets a
bonus of 1.0 x its level) rounded to 2 decimals, so a topic of 1,000 documents has only
about 480 distinct scores (L: about 92 per 100): ties are everywhere, as in real BM25 runs,
and every tool's tie rule is exercised. Scores lie around 5-25, where float32 still
separates values 0.01 apart, so the 32-bit and 64-bit readings of a score order and tie
identically (trec_eval 9 and 10, cumgain float32 and float64 agree on these files).

Files: ``benchmarks/data/<size>/qrels.txt`` (``qid 0 docno level``) and
``benchmarks/data/<size>/run.txt`` (``qid Q0 docno rank score tag``), topics grouped and
in ascending numeric order, each run topic sorted by score descending (ties in random
order). A size whose two files exist is not regenerated (``--force`` does it).

The text is produced without a Python object per line: every field becomes a
fixed-width byte matrix with NUL padding, the matrix is flattened and the NULs dropped,
and the result is written in blocks of a million lines (on the 2-core machine of the
README: about 8 s of CPU for M, 20 s for L).

Run: ``python benchmarks/generate.py [--sizes S,M,L] [--force] [--out DIR]``
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

# name: (topics, docs per topic, docno prefix, seed)
SIZES = {
    "S": (50, 1000, "", 1001),
    "M": (6980, 1000, "", 6980),
    "L": (100_000, 100, "D", 100_000),
}
N_PASSAGES = 8_841_823        # MS MARCO passage collection: ids 0 .. 8,841,822
N_DOCUMENTS = 3_213_835       # MS MARCO document collection (ids drawn like D1234567)
MAX_QID = 1_200_000           # MS MARCO query ids lie below this
UNRETRIEVED = 200             # judged-but-not-retrieved candidates per topic
LEVEL_P = (0.60, 0.20, 0.12, 0.08)
BLOCK_LINES = 1_000_000
RUN_TAG = b"cgbench"


# ---------------------------------------------------------------- text, vectorised

_TRIPLES = np.array([[48 + i // 100, 48 + i // 10 % 10, 48 + i % 10] for i in range(1000)],
                    dtype=np.uint8)   # "000" .. "999"


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """Non-negative integers as a (n, width) uint8 matrix of ASCII digits, right-aligned,
    with NUL (0) in place of leading zeros (``0`` itself is one digit). Three digits
    at a time through a lookup table, in 32-bit arithmetic."""
    values = np.asarray(values)
    if len(values) and (values.min() < 0 or values.max() >= min(10 ** width, 2 ** 32)):
        raise ValueError("value out of range for the field width")
    x = values.astype(np.uint32)
    groups = -(-width // 3)
    out = np.empty((len(x), 3 * groups), dtype=np.uint8)
    for g in range(groups - 1, -1, -1):
        out[:, 3 * g:3 * g + 3] = _TRIPLES[x % 1000]
        x //= 1000
    out = out[:, 3 * groups - width:]
    ndigits = np.searchsorted(10 ** np.arange(1, width, dtype=np.int64), values,
                              side="right") + 1
    out *= np.arange(width)[None, :] >= (width - ndigits)[:, None]
    return out


def _const(text: bytes, n: int) -> np.ndarray:
    return np.broadcast_to(np.frombuffer(text, dtype=np.uint8), (n, len(text)))


def _lines(fields: list) -> bytes:
    """Concatenate per-line byte matrices column-wise and drop the NUL padding."""
    matrix = np.concatenate([np.asarray(f, dtype=np.uint8) for f in fields], axis=1)
    flat = matrix.ravel()
    return flat[flat != 0].tobytes()


def _width(maximum: int) -> int:
    return max(1, len(str(int(maximum))))


# ---------------------------------------------------------------- the collection

def make_collection(n_topics: int, k: int, seed: int, doc_space: int):
    """Arrays describing the collection (no text yet).

    Returns (qids, run_docs (n, k), run_scores_cents (n, k) sorted descending per row,
    qrels_topic (m,), qrels_docs (m,), qrels_levels (m,)).
    """
    rng = np.random.default_rng(seed)
    qids = np.sort(rng.choice(MAX_QID, size=n_topics, replace=False))

    # Per topic, k + UNRETRIEVED distinct docnos: a strictly increasing walk of length
    # < doc_space, shifted by a random start modulo doc_space (so no repeats).
    m = k + UNRETRIEVED
    max_gap = (doc_space - 1) // m
    gaps = rng.integers(1, max_gap + 1, size=(n_topics, m), dtype=np.int64)
    start = rng.integers(0, doc_space, size=(n_topics, 1), dtype=np.int64)
    docs = (start + np.cumsum(gaps, axis=1)) % doc_space
    # shuffle each row: the first k are retrieved, the rest are judged-only candidates
    order = np.argsort(rng.random((n_topics, m)), axis=1)
    docs = np.take_along_axis(docs, order, axis=1)
    retrieved, unretrieved = docs[:, :k], docs[:, k:]

    # judgments: 20-200 per topic, 20-80% of them on retrieved documents
    n_judged = rng.integers(20, 201, size=n_topics)
    frac = rng.uniform(0.2, 0.8, size=n_topics)
    n_ret = np.minimum(np.rint(n_judged * frac).astype(np.int64), k)
    n_unret = np.minimum(n_judged - n_ret, UNRETRIEVED)
    # judged retrieved documents: the first n_ret of each (random-order) retrieved row
    ret_levels = rng.choice(4, size=(n_topics, k), p=LEVEL_P).astype(np.int64)
    ret_judged = np.arange(k)[None, :] < n_ret[:, None]
    unret_levels = rng.choice(4, size=(n_topics, UNRETRIEVED), p=LEVEL_P).astype(np.int64)
    unret_judged = np.arange(UNRETRIEVED)[None, :] < n_unret[:, None]

    # scores: normal noise + 1.0 x level for judged relevant documents, 2 decimals
    bonus = np.where(ret_judged, ret_levels, 0) * 1.0
    scores = rng.normal(loc=12.0, scale=1.5, size=(n_topics, k)) + bonus
    cents = np.clip(np.rint(scores * 100).astype(np.int64), 1, None)
    by_score = np.argsort(-cents, axis=1, kind="stable")   # rows are in random order already
    run_docs = np.take_along_axis(retrieved, by_score, axis=1)
    run_cents = np.take_along_axis(cents, by_score, axis=1)

    # qrels, per topic: retrieved judged then unretrieved judged, shuffled within topic
    q_topic = np.concatenate([np.broadcast_to(np.arange(n_topics)[:, None], (n_topics, k))[ret_judged],
                              np.broadcast_to(np.arange(n_topics)[:, None],
                                              (n_topics, UNRETRIEVED))[unret_judged]])
    q_docs = np.concatenate([retrieved[ret_judged], unretrieved[unret_judged]])
    q_levels = np.concatenate([ret_levels[ret_judged], unret_levels[unret_judged]])
    shuffle_key = rng.random(len(q_topic))
    q_order = np.lexsort((shuffle_key, q_topic))
    return qids, run_docs, run_cents, q_topic[q_order], q_docs[q_order], q_levels[q_order]


def _docno_fields(docs: np.ndarray, prefix: str, doc_space: int) -> list:
    fields = []
    if prefix:
        fields.append(_const(prefix.encode(), len(docs)))
    fields.append(_digits(docs, _width(doc_space)))
    return fields


def write_run(path: Path, qids, run_docs, run_cents, prefix: str, doc_space: int) -> int:
    n_topics, k = run_docs.shape
    qid_width, rank_width = _width(qids.max()), _width(k)
    cents_max = int(run_cents.max())
    topics_per_block = max(1, BLOCK_LINES // k)
    lines = 0
    with open(path, "wb") as out:
        for t0 in range(0, n_topics, topics_per_block):
            t1 = min(n_topics, t0 + topics_per_block)
            n = (t1 - t0) * k
            q = np.repeat(qids[t0:t1], k)
            docs = run_docs[t0:t1].ravel()
            cents = run_cents[t0:t1].ravel()
            ranks = np.tile(np.arange(1, k + 1), t1 - t0)
            fields = [_digits(q, qid_width), _const(b" Q0 ", n),
                      *_docno_fields(docs, prefix, doc_space), _const(b" ", n),
                      _digits(ranks, rank_width), _const(b" ", n),
                      _digits(cents // 100, _width(cents_max // 100)), _const(b".", n),
                      _digits(cents % 100 // 10, 1), _digits(cents % 10, 1),
                      _const(b" " + RUN_TAG + b"\n", n)]
            out.write(_lines(fields))
            lines += n
    return lines


def write_qrels(path: Path, qids, q_topic, q_docs, q_levels, prefix: str, doc_space: int) -> int:
    qid_width = _width(qids.max())
    with open(path, "wb") as out:
        for i0 in range(0, len(q_topic), BLOCK_LINES):
            i1 = min(len(q_topic), i0 + BLOCK_LINES)
            n = i1 - i0
            fields = [_digits(qids[q_topic[i0:i1]], qid_width), _const(b" 0 ", n),
                      *_docno_fields(q_docs[i0:i1], prefix, doc_space), _const(b" ", n),
                      _digits(q_levels[i0:i1], 1), _const(b"\n", n)]
            out.write(_lines(fields))
    return len(q_topic)


def generate(size: str, out_dir: Path = DEFAULT_OUT, force: bool = False,
             quiet: bool = False) -> Path:
    """Write ``out_dir/<size>/{qrels.txt,run.txt}`` unless both exist; return the folder."""
    n_topics, k, prefix, seed = SIZES[size]
    folder = Path(out_dir) / size
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    if not force and qrels_path.exists() and run_path.exists():
        if not quiet:
            print(f"[generate] {size}: present in {folder} (skipped)")
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    doc_space = N_DOCUMENTS if prefix else N_PASSAGES
    qids, run_docs, run_cents, q_topic, q_docs, q_levels = make_collection(
        n_topics, k, seed, doc_space)
    # write to temporary names first, so an interrupted run is never taken as complete
    tmp_q, tmp_r = folder / "qrels.txt.tmp", folder / "run.txt.tmp"
    n_q = write_qrels(tmp_q, qids, q_topic, q_docs, q_levels, prefix, doc_space)
    n_r = write_run(tmp_r, qids, run_docs, run_cents, prefix, doc_space)
    os.replace(tmp_q, qrels_path)
    os.replace(tmp_r, run_path)
    if not quiet:
        print(f"[generate] {size}: {n_topics:,} topics, {n_r:,} run lines "
              f"({run_path.stat().st_size / 1e6:.0f} MB), {n_q:,} judgments, "
              f"{time.perf_counter() - started:.1f} s -> {folder}")
    return folder


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="S,M,L", help="comma-separated subset of S,M,L")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output folder")
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    args = parser.parse_args(argv)
    sizes = [s.strip().upper() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        sys.exit(f"unknown sizes {unknown}; choose from {list(SIZES)}")
    for size in sizes:
        generate(size, Path(args.out), force=args.force)


if __name__ == "__main__":
    main()
