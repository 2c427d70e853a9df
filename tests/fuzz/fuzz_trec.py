"""Coverage-guided fuzzing of the TREC readers and the evaluator with atheris.

    pip install atheris
    python tests/fuzz/fuzz_trec.py [files|dicts] -atheris_runs=2000000 -max_len=4096 \
        tests/fuzz/corpus

Each input goes through tests/fuzz/check.py (see there for the property). atheris
instruments the Python code (cumgain.*) for coverage; the compiled core is exercised
but not coverage-instrumented (gcc cannot emit libFuzzer's counters). Run it on the
sanitizer build (README, "Reliability") so that a bad read in C aborts the run:

    CUMGAIN_SANITIZE=1 pip install . && \
    LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
    ASAN_OPTIONS=detect_leaks=0:alloc_dealloc_mismatch=0 python tests/fuzz/fuzz_trec.py ...

A crash writes the input to crash-<hash>; copy it into tests/fuzz/regressions/, where
tests/test_fuzz_regressions.py replays it on every test run.
"""
import sys

import atheris

with atheris.instrument_imports(include=["cumgain"]):
    import check

TARGETS = {"files": check.check_files, "dicts": check.check_dicts}


def main() -> None:
    target = "files"
    if len(sys.argv) > 1 and sys.argv[1] in TARGETS:
        target = sys.argv.pop(1)
    atheris.Setup(sys.argv, TARGETS[target])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
