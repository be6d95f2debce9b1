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
  printf '#include <gguf.h>\n#include <quant.h>\n#include <audit.h>\nint main() { return gguf_tensor_count(nullptr) ? 1 : 0; }\n' \
    > "$prefix/cxx.cpp"
  c++ -fsyntax-only -I"$prefix/include/ggufscope" "$prefix/cxx.cpp"
fi
echo "installed library, pkg-config and CMake package: OK"
