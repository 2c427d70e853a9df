"""Coverage-guided fuzzing of the TREC readers and the evaluator with atheris.

    python tests/fuzz/fuzz_trec.py [files|dicts|files-native|dicts-native|measures|writers] [libFuzzer flags] CORPUS_DIR

Each input goes through tests/fuzz/check.py (see there for the property): ``files`` and
``dicts`` check the compiled path against the reference reader; ``files-native`` and
``dicts-native`` run the compiled path alone, several times more inputs per second,
for the sanitizers to watch; ``measures`` fuzzes the parser of measure spellings and
their parameters, ``writers`` the atomic writer's destinations (a FIFO, /dev/null,
/dev/full, links, folders, replaced files). libFuzzer
(inside atheris) is guided by the edges of the compiled core and of the Python
modules in INSTRUMENTED below, on the clang build made for it (CUMGAIN_FUZZ=1:
-fsanitize=fuzzer-no-link,address,undefined), with the ASan + UBSan runtime that has
libFuzzer linked in, which the atheris wheel ships, preloaded:

    apt-get install -y clang libclang-rt-14-dev       # Debian 12: clang 14
    python3 -m venv /work/venv-fuzz && . /work/venv-fuzz/bin/activate
    pip install atheris numpy scipy 'Cython>=3.1' 'setuptools>=77' pytest hypothesis
    CC=clang CUMGAIN_FUZZ=1 pip install --no-build-isolation -e .
    cp -r tests/fuzz/corpus /tmp/corpus-files         # libFuzzer adds to the folder
    LD_PRELOAD="$(python -c 'import atheris; print(atheris.path())')/asan_with_fuzzer.so" \
    ASAN_OPTIONS=detect_leaks=0:alloc_dealloc_mismatch=0 \
    taskset -c 1 python tests/fuzz/fuzz_trec.py files -atheris_runs=140000 \
        -max_len=4096 -rss_limit_mb=6144 -print_final_stats=1 -artifact_prefix=crash- \
        /tmp/corpus-files

It works when the start says "INFO: Using preloaded libfuzzer" and "INFO: Loaded 6
modules (52504 inline 8-bit counters)", and the INITED line's cov on the seed corpus
is near 2,700 (a gcc build gives 855, from Python alone, even with every cumgain module
instrumented; docs/reliability.md, "Fuzzing", has the numbers). Do NOT preload gcc's libasan /
libubsan for fuzzing (the "Sanitizers" recipe): they define libFuzzer's coverage
callbacks weakly and, loaded first, take them from atheris' libFuzzer, so no edge
reaches it, Python's included: "no interesting inputs were found", the corpus shrinks
to one byte, and atheris warns "Coverage symbols are being provided by a library other
than libFuzzer". The extensions of the fuzz build need the preload even to import
(undefined __asan_*/__sancov_* symbols).

A crash, a sanitizer report or a disagreement writes the input to <prefix>crash-<hash>;
copy it (minimised with -minimize_crash=1 if big) into tests/fuzz/regressions/, where
tests/test_fuzz_regressions.py replays it on every test run. docs/reliability.md,
"Fuzzing", records the runs.
"""
import importlib.util
import os
import pkgutil
import sys

import atheris

# Python modules whose coverage guides the fuzzer: the package, the bridge to the
# compiled reader (native, and _native_blocks: how the bytes reach it), the reference
# reader (trec_io and the _trec_* modules behind it, reached through reference_reading)
# and the evaluator that calls either. The measures' arithmetic is left
# uninstrumented: atheris' hooks there cost 3x the run time and add no path through the
# readers.
# FUZZ_INSTRUMENT=all instruments every cumgain module.
INSTRUMENTED = {"cumgain", "cumgain.io.native.reader", "cumgain.io.native.blocks",
                "cumgain.trec_io",
                "cumgain.io.trec.byte_stream", "cumgain.io.trec.lines", "cumgain.io.trec.tables",
                "cumgain.io.trec.frontends", "cumgain.reference.reading",
                "cumgain.engine.evaluator", "cumgain.exceptions"}
# The native targets, for volume, instrument only the bridge to the compiled reader.
INSTRUMENTED_NATIVE = {"cumgain.io.native.reader", "cumgain.io.native.blocks"}
TARGET = sys.argv.pop(1) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") \
    and not os.path.isdir(sys.argv[1]) else "files"


def _cumgain_modules() -> set:
    """Every module name of the cumgain package, found without importing it."""
    root = importlib.util.find_spec("cumgain").submodule_search_locations[0]
    names = set()
    for info in pkgutil.iter_modules([root], "cumgain."):
        names.add(info.name)
        if info.ispkg:
            sub = os.path.join(root, info.name.rsplit(".", 1)[1])
            names.update(i.name for i in pkgutil.iter_modules([sub], info.name + "."))
    return names


_skip = [] if os.environ.get("FUZZ_INSTRUMENT") == "all" else \
    sorted(_cumgain_modules() - (INSTRUMENTED_NATIVE if TARGET.endswith("-native")
                                 else INSTRUMENTED))
with atheris.instrument_imports(include=["cumgain"], exclude=_skip):
    import check

TARGETS = {"files": check.check_files, "dicts": check.check_dicts,
           "files-native": check.check_files_native, "dicts-native": check.check_dicts_native,
           "measures": check.check_measure_spelling, "writers": check.check_writer}


def main() -> None:
    if TARGET not in TARGETS:
        sys.exit(f"unknown target {TARGET!r}; one of {', '.join(TARGETS)}")
    atheris.Setup(sys.argv, TARGETS[TARGET])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
