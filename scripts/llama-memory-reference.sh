#!/usr/bin/env bash
# The buffers llama.cpp's CPU build allocates for each file given, at contexts 512, 4096 and the model's maximum
# (-c 0), with the default F16 cache and flash attention on auto, then at 4096 with a q8_0 cache and with
# flash attention off: one tab-separated line per buffer llama.cpp printed
#   file  ctx  ctk  fa  buffer  MiB
# (buffer: CPU_Mapped, CPU_REPACK, KV, RS (a hybrid's recurrent states), output, compute).
# tests/data/llama_cpp_memory.tsv was made by it; the memory test holds gguf-inspect --memory to those figures.
# With STREAMS=1 instead: two settings with several sequences and odd batch sizes per file, the columns
#   file  ctx  ctk  fa  np  ub  b  buffer  MiB
# (tests/data/llama_cpp_memory_streams.tsv).
#   usage: [STREAMS=1] scripts/llama-memory-reference.sh LLAMA_BIN_DIR FILE... > out.tsv
set -euo pipefail
bin=$1; shift
run() { # file ctx ctk fa [np ub b]: the 6 columns, or with np ub b between fa and the buffer (STREAMS=1)
  local out np=${5:-1} ub=${6:-512} b=${7:-2048}
  # its log lines can come out torn on a busy machine: a run whose compute buffer line did not come through is run again
  local try
  for try in 1 2 3; do
    out=$("$bin/llama-completion" -m "$1" -c "$2" -ctk "$3" -ctv "$3" -fa "$4" -np "$np" -ub "$ub" -b "$b" -n 1 -p hi \
          -t 2 --no-warmup -fit off -v -no-cnv 2>&1 </dev/null) ||
      { echo "llama-completion failed on $1 -c $2 -ctk $3 -fa $4" >&2; return 0; }
    printf '%s\n' "$out" | grep -q 'CPU compute buffer size = ' && break
    echo "llama-completion on $1 -c $2 -ctk $3 -fa $4: no compute buffer line (try $try)" >&2
  done
  local name cols; name=$(basename "$1")
  cols="$name\t$2\t$3\t$4"
  [ -n "${STREAMS:-}" ] && cols="$cols\t$np\t$ub\t$b"
  printf '%s\n' "$out" | sed -n \
    -e 's/.*load_tensors: *\([A-Za-z_]*\) model buffer size = *\([0-9.]*\) MiB.*/\1\t\2/p' \
    -e 's/.*llama_kv_cache: *CPU KV buffer size = *\([0-9.]*\) MiB.*/KV\t\1/p' \
    -e 's/.*llama_memory_recurrent: *CPU RS buffer size = *\([0-9.]*\) MiB.*/RS\t\1/p' \
    -e 's/.*CPU *output buffer size = *\([0-9.]*\) MiB.*/output\t\1/p' \
    -e 's/.*CPU compute buffer size = *\([0-9.]*\) MiB.*/compute\t\1/p' |
    while IFS=$'\t' read -r buf mib; do printf "$cols\t%s\t%s\n" "$buf" "$mib"; done
}
for f in "$@"; do
  if [ -n "${STREAMS:-}" ]; then # several sequences (one cache stream each), odd batches
    run "$f" 1500 f16 off 2 200 2048
    run "$f" 2500 q8_0 auto 3 512 300
    continue
  fi
  for c in 512 4096 0; do run "$f" "$c" f16 auto; done
  run "$f" 4096 q8_0 auto
  run "$f" 4096 f16 off
done
