"""Build the cgcore extensions. All metadata lives in pyproject.toml.

Environment switches:
  CUMGAIN_DEBUG=1     Cython bounds and initialisation checks on, -O0 -g.
  CUMGAIN_SANITIZE=1  the shipped C (bounds checks off, as in a release build) compiled
                      -O1 -g with AddressSanitizer + UndefinedBehaviorSanitizer; any UB
                      aborts. Run Python with the sanitizer runtimes preloaded:
                      LD_PRELOAD="$(gcc -print-file-name=libasan.so) \
                                  $(gcc -print-file-name=libubsan.so)" \
                      ASAN_OPTIONS=detect_leaks=0 pytest
                      (see docs/reliability.md).
  CUMGAIN_FUZZ=1      the sanitizer build made with clang for coverage-guided fuzzing
                      (tests/fuzz/fuzz_trec.py): -O1 -g -fsanitize=fuzzer-no-link,
                      address,undefined, so that libFuzzer (linked into atheris) sees
                      the edges of the compiled code. Needs clang (CC defaults to
                      clang; any other compiler is refused) and, at run time, the ASan
                      runtime with libFuzzer linked in that atheris ships:
                      CC=clang CUMGAIN_FUZZ=1 pip install -e .
                      LD_PRELOAD="$(python -c 'import atheris; print(atheris.path())')\
                      /asan_with_fuzzer.so" ASAN_OPTIONS=detect_leaks=0 \
                      python tests/fuzz/fuzz_trec.py files ...
                      (see docs/reliability.md, "Fuzzing", for the whole recipe).
  CUMGAIN_NO_SIMD=1   without the SSE2 paths (the portable code that ARM and MSVC
                      builds use), to test it on x86; cgcore._trec.SIMD says which.
"""
import os
import shlex
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError, ExecError, PlatformError

try:
    import Cython
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - exercised only on a broken build env
    Cython = None
if Cython is None or tuple(int(part) for part in Cython.__version__.split(".")[:2]
                           if part.isdigit()) < (3, 1):
    sys.exit(
        "cumgain needs Cython >= 3.1 to build its compiled core (cgcore); found "
        f"{getattr(Cython, '__version__', 'none')}. Install it with "
        "`pip install 'Cython>=3.1'`, or build with `pip install .`, which installs the "
        "build requirements from pyproject.toml."
    )

DEBUG = os.environ.get("CUMGAIN_DEBUG", "") not in ("", "0")
SANITIZE = os.environ.get("CUMGAIN_SANITIZE", "") not in ("", "0")
FUZZ = os.environ.get("CUMGAIN_FUZZ", "") not in ("", "0")
NO_SIMD = os.environ.get("CUMGAIN_NO_SIMD", "") not in ("", "0")

if FUZZ:
    # -fsanitize=fuzzer-no-link is clang's: gcc cannot emit libFuzzer's counters.
    # setuptools links with $CC too when LDSHARED is not set.
    os.environ.setdefault("CC", "clang")
    try:
        _version = subprocess.run(shlex.split(os.environ["CC"]) + ["--version"],
                                  capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        sys.exit(f"CUMGAIN_FUZZ=1 needs clang as CC (CC={os.environ['CC']!r}): {error}")
    if "clang" not in _version:
        sys.exit(f"CUMGAIN_FUZZ=1 needs clang as CC, not {os.environ['CC']!r} "
                 "(apt-get install clang; CC=clang CUMGAIN_FUZZ=1 pip install -e .)")

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}
# release: no debug information (-g0 overrides the -g of Python's own CFLAGS): the
# extensions are a sixth of the size
compile_args = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]
if sys.platform == "win32":         # MSVC's spelling (release: no /Zi, no debug info)
    compile_args = ["/Od", "/Zi"] if DEBUG else ["/O2"]
link_args = []
if SANITIZE:
    sanitizers = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    compile_args = (["-O0", "-g"] if DEBUG else ["-O1", "-g"]) + sanitizers + \
        ["-fno-omit-frame-pointer"]
    link_args += sanitizers
if FUZZ:
    # The runtimes (ASan + UBSan + libFuzzer) are not linked into the extensions: they
    # come from atheris' asan_with_fuzzer.so, preloaded.
    sanitizers = ["-fsanitize=fuzzer-no-link,address,undefined", "-fno-sanitize-recover=all"]
    compile_args = (["-O0", "-g"] if DEBUG else ["-O1", "-g"]) + sanitizers + \
        ["-fno-omit-frame-pointer"]
    link_args = list(sanitizers)

# Every cgcore/*.pyx is one extension module.
MODULES = sorted(path.stem for path in Path(__file__).parent.joinpath("cgcore").glob("*.pyx"))

extensions = [
    Extension(
        f"cgcore.{name}",
        [f"cgcore/{name}.pyx"],
        include_dirs=["cgcore"],          # _scan.h, _gains.h
        define_macros=([("CUMGAIN_DEBUG", "1")] if DEBUG else [])
        + ([("CUMGAIN_SANITIZE", "1")] if SANITIZE or FUZZ else [])
        + ([("CUMGAIN_FUZZ", "1")] if FUZZ else [])
        + ([("CUMGAIN_NO_SIMD", "1")] if NO_SIMD else []),
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
    for name in MODULES
]

# Cython's runtime code that every module needs (memoryviews, buffers, error handling)
# compiled once, into one shared module, rather than into each of the extensions.
SHARED_UTILITY = "cgcore._cyutility"
extensions.append(Extension(SHARED_UTILITY, sources=[], extra_compile_args=compile_args,
                            extra_link_args=link_args))

# Each configuration keeps its own generated C and objects, so switching between them
# never links stale code (setuptools only recompiles a .c newer than its object).
VARIANT = "-".join(name for name, on in (("debug", DEBUG), ("sanitize", SANITIZE and not FUZZ),
                                          ("fuzz", FUZZ), ("nosimd", NO_SIMD)) if on) \
    or "release"

NO_COMPILER = """
cumgain could not compile its C core (cgcore): {error}
Building from source needs a C compiler:
  Debian/Ubuntu: apt-get install build-essential python3-dev
  Fedora/RHEL:   dnf install gcc python3-devel
  macOS:         xcode-select --install
  Windows:       the "Desktop development with C++" workload of Visual Studio Build Tools
or build a wheel where a compiler is (pip wheel . -w dist, or the wheels workflow,
.github/workflows/wheels.yml) and pip install that file here: no wheel is published
on PyPI yet.
"""


class BuildExtensions(build_ext):
    """build_ext that compiles the extensions side by side (one per core unless -j is
    given) and whose failure to find or run a C compiler says what to install."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        try:
            super().build_extensions()
        except (CompileError, ExecError, PlatformError) as error:
            sys.exit(NO_COMPILER.format(error=error))


# Cython translates the modules in a process per core where processes fork (Linux);
# where they would be spawned, re-running this file, in one.
setup(ext_modules=cythonize(extensions, compiler_directives=directives,
                            build_dir=f"build/cython-{VARIANT}",
                            shared_utility_qualified_name=SHARED_UTILITY,
                            nthreads=(os.cpu_count() or 1) if sys.platform.startswith("linux")
                            else 0),
      cmdclass={"build_ext": BuildExtensions},
      options={"build": {"build_base": f"build/{VARIANT}"}})
