#!/usr/bin/env bash
# The generated C of the release build (build/cython-release, made by `pip install .`)
# compiles without a warning under -Wall -Wextra -Werror with gcc and clang, and for
# aarch64 with Debian's cross compiler (objects only: the host's Python and numpy
# headers, which are the same on both 64-bit little-endian targets), so the portable
# code paths ARM wheels use at least compile. A compiler that is not installed is
# skipped with a line saying so. Usage: .ci/compile_checks.sh PYTHON
set -euo pipefail
python=${1:-python3}
cd "$(dirname "$0")/.."
sources=(build/cython-release/cgcore/*.c)
[ -e "${sources[0]}" ] || { echo "compile checks: no generated C (run pip install . first)" >&2; exit 1; }
py_include=$("$python" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
np_include=$("$python" -c "import numpy; print(numpy.get_include())")
for compiler in gcc clang aarch64-linux-gnu-gcc; do
    if ! command -v "$compiler" > /dev/null; then
        echo "compile checks: $compiler not installed, skipped"
        continue
    fi
    for source in "${sources[@]}"; do
        "$compiler" -c -O2 -fPIC -Wall -Wextra -Werror -I"$py_include" -I"$np_include" \
            -Icgcore "$source" -o /dev/null
    done
    echo "compile checks: $compiler -Wall -Wextra -Werror: ${#sources[@]} modules, no warning"
done
