#!/usr/bin/env bash
# llama.cpp's graph allocator at work on one file: every node of the worst-case prompt graph it reserves (op, name,
# sources), every allocation and free with its bytes and offset, and the buffer's high-water marks with the tensors
# alive at each: what model/memory_compute.c replays, to compare with when an architecture is added or llama.cpp's
# graph changes (docs/gguf-inspect.md).
# It compiles a copy of the vendored ggml-alloc.c with its own AT_PRINTF / GGML_ALLOCATOR_DEBUG prints switched on,
# outside the project, and preloads it into llama-completion (the library's calls into itself go through the PLT).
#   usage: scripts/llama-alloc-trace.sh LLAMA_CPP_SRC LLAMA_BIN_DIR MODEL [CTX] [FA] > trace.txt
#   LLAMA_CPP_SRC: the vendored llama.cpp (llama-cpp-python's sdist: vendor/llama.cpp); FA: auto (default), on, off
set -euo pipefail
src=$1 bin=$2 model=$3 ctx=${4:-512} fa=${5:-auto}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -e 's|^//#define AT_PRINTF(...) .*|#define AT_PRINTF(...) fprintf(stderr, __VA_ARGS__)|' \
    -e 's|^#define AT_PRINTF(...)$||' -e 's|^//#define GGML_ALLOCATOR_DEBUG|#define GGML_ALLOCATOR_DEBUG|' \
    -e 's/GGML_LOG_DEBUG(/fprintf(stderr, /g' "$src/ggml/src/ggml-alloc.c" > "$work/ggml-alloc.c"
gcc -O1 -fPIC -shared -I"$src/ggml/include" -I"$src/ggml/src" "$work/ggml-alloc.c" -o "$work/liballoc-trace.so" \
    -L"$bin" -lggml-base
# the first graph reserved is the prompt's (a ubatch of tokens, every output): from its first node to the second graph
LD_PRELOAD="$work/liballoc-trace.so" LD_LIBRARY_PATH="$bin" "$bin/llama-completion" -m "$model" -c "$ctx" -fa "$fa" \
    -n 1 -p hi -t 2 --no-warmup -fit off -v -no-cnv </dev/null 2>&1 |
  awk '/allocating inp_tokens/ { graph++ } graph == 1 && /^(exec:|ggml_dyn_tallocr_alloc|ggml_gallocr_free_node|reusing|max_size)/' |
  sed 's/^ggml_dyn_tallocr_alloc: //; s/^ggml_gallocr_free_node: //'
