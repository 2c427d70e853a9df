"""Build the cgcore extensions. All metadata lives in pyproject.toml.

Environment switches:
  CUMGAIN_DEBUG=1     Cython bounds and initialisation checks on, -O0 -g.
  CUMGAIN_SANITIZE=1  the shipped C (bounds checks off, as in a release build) compiled
                      -O1 -g with AddressSanitizer + UndefinedBehaviorSanitizer; any UB
                      aborts. Run Python with the sanitizer runtimes preloaded:
                      LD_PRELOAD="$(gcc -print-file-name=libasan.so) \
                                  $(gcc -print-file-name=libubsan.so)" \
                      ASAN_OPTIONS=detect_leaks=0 pytest
                      (see README, "Reliability").
"""
import os
import sys
from pathlib import Path

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - exercised only on a broken build env
    sys.exit(
        "cumgain needs Cython >= 3 to build its compiled core (cgcore). "
        "Install it with `pip install 'Cython>=3'`, or build with `pip install .`, "
        "which installs the build requirements from pyproject.toml."
    )

DEBUG = os.environ.get("CUMGAIN_DEBUG", "") not in ("", "0")
SANITIZE = os.environ.get("CUMGAIN_SANITIZE", "") not in ("", "0")

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}
compile_args = ["-O0", "-g"] if DEBUG else ["-O3"]
link_args = []
if SANITIZE:
    sanitizers = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    compile_args = (["-O0", "-g"] if DEBUG else ["-O1", "-g"]) + sanitizers + \
        ["-fno-omit-frame-pointer"]
    link_args += sanitizers

# Every cgcore/*.pyx is one extension module.
MODULES = sorted(path.stem for path in Path(__file__).parent.joinpath("cgcore").glob("*.pyx"))

extensions = [
    Extension(
        f"cgcore.{name}",
        [f"cgcore/{name}.pyx"],
        include_dirs=["cgcore"],          # _scan.h, _gains.h
        define_macros=([("CUMGAIN_DEBUG", "1")] if DEBUG else [])
        + ([("CUMGAIN_SANITIZE", "1")] if SANITIZE else []),
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
    for name in MODULES
]

# Each configuration keeps its own generated C and objects, so switching between them
# never links stale code (setuptools only recompiles a .c newer than its object).
VARIANT = "-".join(name for name, on in (("debug", DEBUG), ("sanitize", SANITIZE)) if on) \
    or "release"

setup(ext_modules=cythonize(extensions, compiler_directives=directives,
                            build_dir=f"build/cython-{VARIANT}"),
      options={"build": {"build_base": f"build/{VARIANT}"}})
