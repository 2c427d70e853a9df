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
# Windows: MinGW-w64 compiles the hand-written C (the headers under cgcore/, with and
# without the SIMD paths) for x86_64 Windows. The Cython-generated C needs Windows'
# Python headers (pyconfig.h), which no package here provides: the wheels workflow
# builds it with MSVC on Windows.
if command -v x86_64-w64-mingw32-gcc > /dev/null; then
    probe=$(mktemp -d)
    printf '%s\n' '#include <stddef.h>' 'typedef ptrdiff_t Py_ssize_t;' '#include "_alloc.h"' \
        '#include "_scan.h"' '#include "_simd.h"' '#include "_gains.h"' \
        'int main(void) { return 0; }' > "$probe/headers.c"
    for flags in "" "-DCUMGAIN_NO_SIMD=1"; do
        # shellcheck disable=SC2086
        x86_64-w64-mingw32-gcc $flags -O2 -Wall -Wextra -Werror -Icgcore "$probe/headers.c" \
            -o "$probe/headers.exe"
    done
    rm -rf "$probe"
    echo "compile checks: x86_64-w64-mingw32-gcc: cgcore's C headers for Windows (SIMD and portable), no warning"
else
    echo "compile checks: x86_64-w64-mingw32-gcc not installed, skipped (apt-get install gcc-mingw-w64-x86-64)"
fi
