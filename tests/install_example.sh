#!/usr/bin/env bash
# The installed copy as another project sees it: cmake --install into a fresh prefix, then the example in
# examples/ built against it twice (pkg-config and find_package), and both run on a model.
set -euo pipefail
build=$1 source=$2 model=$3
prefix=$(mktemp -d /tmp/ggufscope-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/gguf-verify" && "$prefix/bin/gguf-verify" --version | grep -q '^gguf-verify '
# pkg-config
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc -Wall -Wextra -Werror $(pkg-config --cflags ggufscope) -o "$prefix/by-pkg-config" "$source/examples/tensor_summary.c" \
  $(pkg-config --libs ggufscope) -Wl,-rpath,"$prefix/lib"
# CMake package
cmake -S "$source/examples" -B "$prefix/example-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/example-build" >/dev/null
a=$("$prefix/by-pkg-config" "$model")
b=$("$prefix/example-build/tensor_summary" "$model")
test "$a" = "$b"
echo "$a" | head -1 | grep -q '^architecture '
echo "$a" | grep -q ' row 0: '
# the headers compile as C++ too (extern "C")
if command -v c++ >/dev/null; then
  printf '#include <ggufscope/gguf.h>\n#include <ggufscope/model.h>\n#include <ggufscope/quant.h>\n#include <ggufscope/audit.h>\nint main() { return gguf_tensor_count(nullptr) ? 1 : 0; }\n' \
    > "$prefix/cxx.cpp"
  c++ -fsyntax-only -I"$prefix/include" "$prefix/cxx.cpp"
fi
# beside ggml: our headers with the names ggml's headers define, in one program
cc -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "$source/tests/data/beside_ggml.c"
# the library exports its API only: every symbol prefixed (gguf_, model_, quant_, audit_, ggufscope_), none of them
# a name ggml's libraries export (tests/data/ggml_exported_names.txt, from its installed gguf.h and ggml.h)
lib=$(ls "$prefix"/lib*/libggufscope.so | head -1)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}')
stray=$(echo "$exported" | grep -vE '^(gguf_|model_|quant_|audit_|ggufscope_)' || true)
test -z "$stray" || { echo "exported without a prefix: $stray" >&2; exit 1; }
clash=$(echo "$exported" | grep -xFf "$source/tests/data/ggml_exported_names.txt" || true)
test -z "$clash" || { echo "exported under a name ggml exports: $clash" >&2; exit 1; }
echo "installed library, pkg-config and CMake package: OK"
