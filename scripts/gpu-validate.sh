#!/usr/bin/env bash
# On a machine with a GPU, from a folder scripts/gpu-pack.sh made: everything the
# CUDA backend has to show there, in one command, JSON lines where it can.
#   1. the gpu-labelled test programs (CUDA against the CPU, op by op, whole models of every
#      architecture and type);
#   2. gguf-run --compare cpu,cuda on every shared model, writer-made fixtures of each dense
#      architecture, the other architectures' synthetic presets and held-out shapes (F32; the
#      mixtures in Q4_K_M or MXFP4_MOE too), and the 0.5B qwen2, 0.6B qwen3 and 1.1B llama shapes (F16 and Q4_K_M; the
#      0.6B qwen3 shape also in LLAMA_TYPES, made by llama-quantize where the pack holds one);
#   3. bench-run --backend cuda at pp512 / tg128 beside llama-bench -ngl 99 in interleaved
#      rounds when the pack holds one (else alone), and steps replayed whole
#      (GGUFSCOPE_CUDA_REPLAY=1: issue 58's stage 1), with fused ops and programmatic dependent launches
#      (GGUFSCOPE_CUDA_FUSED=1, GGUFSCOPE_CUDA_PDL=1: stage 2) and prompts on the tensor cores
#      (GGUFSCOPE_CUDA_TF32=1: stage 3), each off by default until this run shows it;
#   4. where a decode step's time goes: GGUFSCOPE_CUDA_TIMING's split on the 1.1B and 0.6B F16 shapes, each
#      switch's way (and, asked for, ncu's per-kernel GPU time for one decode token of the F16 1.1B shape).
# The device's name is in every bench line; record the results in docs/BENCHMARKS.md.
# OUT=dir keeps the test logs and ncu's report there. To spend less device time: BIG= the full-size
# shapes (default all three; BIG= with nothing: none), BENCH= the models to benchmark (nothing: none), REPLAY=0 skips the new paths' benchmarks;
# GRAPHS_OFF=1, FIXED_COST=1 and NCU=1 add runs that earlier GPU sessions made (graphs off against on, a
# 22-layer model of 256 values, ncu's per-kernel times), left out by default to keep within a session's device
# time; NCU_MODELS= the shapes ncu profiles (default tl11-f16; its per-kernel table of one token
# counts the 1.1B llama shape's launches, so it runs for that shape alone).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
G=${UNPACK:-/tmp/ggufscope-gpu}
rm -rf "$G" && mkdir -p "$G" &&
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$here/payload.tar.xz" "$G" ||
  { echo "gpu-validate: cannot unpack $here/payload.tar.xz (made by scripts/gpu-pack.sh)"; exit 2; }
B=$G/bin
M=${MODELS:-/tmp/ggufscope-gpu-models}
OUT=${OUT:-/tmp/ggufscope-gpu-out}
ROUNDS=${ROUNDS:-3}
mkdir -p "$M" "$OUT"
status=0
export LD_LIBRARY_PATH=$G/lib:${LD_LIBRARY_PATH:-}
for lib in libcublas.so.13 libcudart.so.13 libnccl.so.2; do  # the toolkit's and PyTorch's, where ld.so does not look
  ldconfig -p | grep -q "$lib " && continue
  found=$(find /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1)
  [ -n "$found" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$found")
done
chmod +x "$B"/* "$G"/*.sh 2>/dev/null
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv
lscpu | grep -E 'Model name|^CPU\(s\)' | tr -s ' '
echo "SIMD: $(grep -o -w -m1 'avx512f' /proc/cpuinfo | head -1) $(grep -o -w -m1 'avx2' /proc/cpuinfo | head -1)"

# The models: the shared ones, F32/F16 tiny ones and the full-size shapes written here (numpy is there;
# the gguf package comes as a wheel), fixtures of every architecture by our own writer.
cp "$G"/models/*.gguf "$M/"
python3 -m pip install -q --no-index --no-deps --upgrade --target /tmp/ggufscope-site "$G"/whl/*.whl &&
  export PYTHONPATH=/tmp/ggufscope-site
if [ ! -f /usr/share/common-licenses/GPL-3 ]; then mkdir -p /usr/share/common-licenses; cp "$G"/licenses/* /usr/share/common-licenses/; fi
S="python3 $G/tools/synth_model.py"
for p in tiny-llama tiny-qwen2; do
  $S $p "$M/$p-f32.gguf" --dtype f32 >/dev/null && $S $p "$M/$p-f16.gguf" --dtype f16 >/dev/null || status=1
done
$S tiny-qwen3 "$M/tiny-qwen3-f32.gguf" --dtype f32 >/dev/null || status=1
for p in tiny-llama tiny-qwen2 tiny-qwen3; do
  for q in q4_k_m q6_k q8_0; do
    "$B/gguf-quantize" "$M/$p-f32.gguf" "$M/$p-$q.gguf" $q >/dev/null 2>&1 || status=1
  done
done
read -r -a big <<<"${BIG-tl11:tinyllama-1.1b q05:qwen2.5-0.5b q3-06:qwen3-0.6b}"
for e in "${big[@]}"; do
  [ -f "$M/${e%%:*}-f16.gguf" ] || ($S "${e#*:}" "$M/${e%%:*}-f16.gguf" --dtype f16 >/dev/null 2>&1) &
done
for a in llama qwen2 qwen3 gemma3; do
  "$B/gguf-mkfixture" "$M/fx-$a.gguf" --arch $a --layers 4 --embd 256 --ff 512 --vocab 1024 >/dev/null || status=1
done
# The architectures past the dense four (issue 60): synth_arch.py's presets and heldout_arch.py's other shapes in
# F32, the mixtures also quantized by our gguf-quantize as llama-quantize would (Q4_K_M; gpt-oss MXFP4_MOE).
for p in tiny-qwen3moe tiny-qwen2moe tiny-mixtral tiny-gptoss tiny-phi3 tiny-gemma2 tiny-granite tiny-olmo2; do
  python3 "$G/tools/synth_arch.py" $p "$M/arch-$p-f32.gguf" >/dev/null || status=1
done
for p in heldout-qwen3moe heldout-qwen3moe-k10 heldout-qwen2moe heldout-mixtral heldout-gptoss heldout-gemma2 heldout-olmo3 \
  heldout-glm4moe heldout-minimax-m2 heldout-olmoe heldout-ernie4_5-moe heldout-bailingmoe2 \
  heldout-dots1 heldout-exaone-moe heldout-exaone-moe-b heldout-afmoe heldout-afmoe-b heldout-mellum heldout-mellum-b heldout-granitemoe heldout-deepseek2 heldout-deepseek2-whole heldout-minicpm3 heldout-minicpm3-b heldout-plm heldout-plm-b heldout-phimoe heldout-phimoe-b heldout-smallthinker heldout-smallthinker-b heldout-grok heldout-grok-b heldout-qwen2vl heldout-qwen3vl \
  heldout-qwen3vlmoe heldout-smollm3 heldout-seed_oss heldout-mistral3 heldout-exaone4 heldout-exaone heldout-internlm2 \
  heldout-ernie4_5 heldout-gemma heldout-mistral4 heldout-glm4 heldout-llama4 heldout-llama4-k2 \
  heldout-cohere2 heldout-command-r heldout-command-r-plus heldout-qwen35 heldout-qwen35moe heldout-qwen3next \
  heldout-qwen3next-legacy heldout-lfm2 heldout-lfm2-untied \
  heldout-lfm2moe heldout-hunyuan-dense heldout-hunyuan_vl \
  heldout-gemma4 heldout-gemma4-b heldout-gemma4-e heldout-gemma4-moe \
  heldout-nemotron_h heldout-nemotron_h-b heldout-nemotron_h_moe heldout-nemotron_h_moe-b heldout-granitehybrid \
  heldout-granitehybrid-moe heldout-falcon-h1 heldout-falcon-h1-b heldout-mamba2 heldout-mamba2-b heldout-mamba \
  heldout-mamba-falcon heldout-jamba heldout-jamba-b heldout-starcoder2 heldout-starcoder2-b \
  heldout-stablelm heldout-stablelm-b heldout-phi2 heldout-phi2-fused \
  heldout-falcon heldout-falcon-40b heldout-gptneox heldout-gptneox-seq heldout-gpt2 heldout-starcoder heldout-bloom heldout-bloom-b \
  heldout-mpt heldout-mpt-b heldout-deci heldout-deci-b heldout-nemotron heldout-nemotron-b heldout-olmo heldout-olmo-b \
  heldout-dbrx heldout-dbrx-b heldout-bailingmoe heldout-bailingmoe-b heldout-apertus heldout-apertus-b \
  heldout-deepseek heldout-deepseek-b heldout-chatglm heldout-chatglm-b heldout-xverse heldout-pangu-embedded \
  heldout-bitnet heldout-bitnet-b heldout-openelm heldout-openelm-b heldout-maincoder \
  heldout-orion heldout-orion-b heldout-baichuan heldout-baichuan-b heldout-baichuan-c \
  heldout-qwen heldout-qwen-b heldout-refact heldout-refact-b heldout-codeshell heldout-codeshell-b \
  heldout-jais heldout-jais-b heldout-plamo heldout-plamo-b heldout-jais2 heldout-jais2-b \
  heldout-arctic heldout-arctic-b heldout-nanbeige heldout-nanbeige-b heldout-granite_swa heldout-granite_swa-moe \
  heldout-mimo2 heldout-mimo2-b heldout-maple heldout-maple-b heldout-step35 heldout-step35-b \
  heldout-spark2_5 heldout-spark2_5-b heldout-hy_v3 heldout-hy_v3-b heldout-plamo3 heldout-plamo3-b \
  heldout-cohere2moe heldout-cohere2moe-b heldout-laguna heldout-laguna-b heldout-scaled heldout-nvfp4 heldout-nvfp4-out \
  heldout-talkie heldout-talkie-b; do
  python3 "$G/tools/heldout_arch.py" $p "$M/arch-$p-f32.gguf" >/dev/null || status=1
done
for p in tiny-qwen3moe tiny-qwen2moe tiny-mixtral heldout-qwen3moe heldout-qwen3moe-k10 heldout-qwen2moe heldout-mixtral \
  heldout-glm4moe heldout-deepseek2 heldout-gemma4-e heldout-gemma4-moe heldout-nemotron_h \
  heldout-nemotron_h_moe heldout-granitehybrid-moe heldout-falcon-h1 heldout-mamba2 heldout-mamba-falcon heldout-jamba \
  heldout-starcoder2 heldout-phi2-fused heldout-falcon-40b heldout-gptneox heldout-starcoder heldout-bloom heldout-mpt \
  heldout-deci-b heldout-dbrx heldout-bailingmoe heldout-apertus heldout-deepseek heldout-chatglm heldout-jais \
  heldout-exaone-moe heldout-afmoe heldout-grok heldout-grok-b heldout-arctic \
  heldout-granite_swa-moe heldout-mimo2 heldout-maple heldout-step35 heldout-spark2_5 heldout-hy_v3 \
  heldout-plamo3 heldout-cohere2moe heldout-laguna heldout-talkie; do
  "$B/gguf-quantize" "$M/arch-$p-f32.gguf" "$M/arch-$p-q4_k_m.gguf" Q4_K_M >/dev/null 2>&1 || status=1
done
for p in tiny-gptoss heldout-gptoss; do
  "$B/gguf-quantize" "$M/arch-$p-f32.gguf" "$M/arch-$p-mxfp4.gguf" MXFP4_MOE >/dev/null 2>&1 || status=1
done

export GGUFSCOPE_MODELS=$M GGUFSCOPE_BIN=$B GGUFSCOPE_CUDA_LIB=$B/libggufscope-cuda.so
echo "=== tests"
for t in test_cuda test_cuda_paths test_backends test_run_backends; do
  timeout 300 "$B/$t" -j4 >"$OUT/$t.log" 2>&1 || status=1
  grep -E '^\[(FAIL|====)\]|assert|differ' "$OUT/$t.log" | tail -20
done
# issue 58's stage 3: the prompt products on the tensor cores (GGUFSCOPE_CUDA_TF32=1) held to the same 1e-5 of the
# CPU's f32 products and 1e-4 of the logits
for f in 'cuda/matmul*' 'cuda/logits*'; do
  echo "--- GGUFSCOPE_CUDA_TF32=1 test_cuda --filter $f"
  GGUFSCOPE_CUDA_TF32=1 timeout 200 "$B/test_cuda" -j4 --filter "$f" >"$OUT/test_cuda_tf32.log" 2>&1 || status=1
  grep -E '^\[(FAIL|====)\]|assert|differ' "$OUT/test_cuda_tf32.log" | tail -10
done

compare() {  # one JSON line: agreement, prompt and decode logits, greedy disagreements, first divergence
  local line
  line=$(timeout 180 "$B/gguf-run" "$1" -p "The capital of France is" -n 16 --compare cpu,cuda --json 2>/tmp/ggufscope-cmp.err |
    python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["compare"]; f=c["first_divergence"]; print(json.dumps({"compare":d["file"].split("/")[-1],"backend":"cuda","agree":c["agree"],"explained":sum(1 for p in c["points"] if p.get("explained")),"logits_prompt":c["points"][-1]["rel_prompt"],"logits_decode":c["points"][-1]["rel_decode"],"greedy_disagree":c["greedy_disagree"],"rederived":[max([p["rederived"][i] or 0 for p in c["points"]]) for i in (0,1)],"first":f and "%s %s pos %d"%(f["layer"],f["op"],f["pos"])}))' 2>/dev/null)
  if [ -n "$line" ]; then
    echo "$line"
    case $line in *'"agree": false'*) status=1 ;; esac
  else
    echo "compare $(basename "$1"): $(tail -1 /tmp/ggufscope-cmp.err)"
    status=1
  fi
}
echo "=== compare cpu,cuda"
for m in "$M"/*.gguf; do case $(basename "$m") in tl11-* | q05-* | q3-06-* | quant-testvectors.gguf) continue ;; esac; compare "$m"; done
# memcheck on the recorded steps, and every tool on the new paths all on (replayed, fused, programmatic launches)
for r in 0 1; do
  for tool in memcheck racecheck synccheck; do
    [ "$r" = 0 ] && [ "$tool" != memcheck ] && continue
    command -v compute-sanitizer >/dev/null &&
      GGUFSCOPE_CUDA_REPLAY=$r GGUFSCOPE_CUDA_FUSED=$r GGUFSCOPE_CUDA_PDL=$r timeout 120 compute-sanitizer --tool $tool \
        --print-limit 5 "$B/gguf-run" "$M/tiny-qwen2-q4_k_m.gguf" -q -n 4 --backend cuda \
        -p "The capital of France is a city that has been home to many kings and queens over the years" 2>&1 |
      grep -E 'ERROR SUMMARY|Invalid|hazard' | sed "s/^/$tool, new paths $r: /"
  done
done
wait
shapes=()
for e in "${big[@]}"; do
  s=${e%%:*}
  "$B/gguf-quantize" "$M/$s-f16.gguf" "$M/$s-q4_k_m.gguf" q4_k_m >/dev/null 2>&1 || status=1
  shapes+=("$s-f16" "$s-q4_k_m")
done
# The K-quant and i-quant types that real files hold and our gguf-quantize does not write.
if [ -x "$B/llama-quantize" ] && [ -f "$M/q3-06-f16.gguf" ]; then
  for t in ${LLAMA_TYPES-Q2_K Q3_K_M IQ4_XS IQ4_NL Q5_K_M}; do
    lt=$(echo "$t" | tr 'A-Z' 'a-z')
    "$B/llama-quantize" "$M/q3-06-f16.gguf" "$M/q3-06-$lt.gguf" "$t" 4 >/dev/null 2>&1 || { echo "llama-quantize $t failed"; status=1; }
    shapes+=("q3-06-$lt")
  done
fi
for m in "${shapes[@]}"; do compare "$M/$m.gguf"; done
echo "=== compare cpu,cuda with GGUFSCOPE_CUDA_FUSED=1 (q, k, v and gate, up in one launch each; a step's experts together)"
for m in tiny-qwen2-q4_k_m tl11-f16 q3-06-q4_k_m arch-tiny-qwen3moe-q4_k_m arch-tiny-gptoss-mxfp4; do
  [ -f "$M/$m.gguf" ] && GGUFSCOPE_CUDA_FUSED=1 compare "$M/$m.gguf"
done

if [ "${FIXED_COST:-0}" = 1 ]; then
echo "=== a decode step's fixed cost: 22 layers of 256 values"
"$B/gguf-mkfixture" "$M/fx-22.gguf" --layers 22 --embd 256 --ff 512 --vocab 1024 >/dev/null
timeout 60 "$B/bench-run" "$M/fx-22.gguf" --backend cuda --pp 64 --tg 128 --runs 3
GGUFSCOPE_CUDA_GRAPHS=0 timeout 60 "$B/bench-run" "$M/fx-22.gguf" --backend cuda --pp 64 --tg 128 --runs 3 |
  sed 's/"engine":"ggufscope"/"engine":"ggufscope (no graphs)"/'
fi
# issue 58's stage 0: a decode step's host and GPU time (recording, graph update, launch, the host between steps,
# the GPU's time), one JSON line of medians per shape
# (stage 1: the same with GGUFSCOPE_CUDA_REPLAY=1, each step replayed from one recording: capture and update 0;
# stage 2: and GGUFSCOPE_CUDA_FUSED=1, fewer launches a step)
for m in tl11-f16 q3-06-f16; do
  for rfp in 000 100 110 111; do
    r=${rfp:0:1} f=${rfp:1:1} p=${rfp:2:1}
    [ -f "$M/$m.gguf" ] && GGUFSCOPE_CUDA_REPLAY=$r GGUFSCOPE_CUDA_FUSED=$f GGUFSCOPE_CUDA_PDL=$p GGUFSCOPE_CUDA_TIMING=1 \
      timeout 60 "$B/bench-run" "$M/$m.gguf" --backend cuda --pp 8 --tg 128 --runs 1 2>&1 >/dev/null | grep cuda_timing |
      sed "s/^{/{\"model\": \"$m\", \"replay\": $r, \"fused\": $f, \"pdl\": $p, /"
  done
done
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null && [ -f "$M/tl11-f16.gguf" ]; then
  # bench-run --pp 8 --tg 8: the prompt goes through the matrix-vector kernels too, about 334 launches a
  # pass on this shape; skipping 1100 lands in run 0's decode, and 334 launches are one token.
  GGUFSCOPE_CUDA_GRAPHS=0 timeout 150 ncu --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum -s 1100 -c 334 --print-summary per-kernel \
    "$B/bench-run" "$M/tl11-f16.gguf" --backend cuda --pp 8 --tg 8 --runs 1 >"$OUT/ncu.txt" 2>&1
  python3 - "$OUT/ncu.txt" <<'PY'
import re, sys
name, rows = None, []
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^  (\S.*?)\s*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line)
    if m:
        name = m.group(1)
    n = re.search(r"Invocations\s*=?\s*(\d+)", line) or re.search(r"^\s*(\d+)\s+kernel", line)
    if n and name:
        rows.append([name, int(n.group(1)), None])
    t = re.match(r"^\s+gpu__time_duration\.sum\s+(\S+)\s+([\d.,]+)\s+([\d.,]+)\s+([\d.,]+)", line)
    if t and name:
        unit, avg = t.group(1), float(t.group(4).replace(",", ""))
        us = avg / 1000 if unit in ("ns", "nsecond") else avg * 1000 if unit in ("ms", "msecond") else avg
        if rows and rows[-1][0] == name and rows[-1][2] is None:
            rows[-1][2] = us
        else:
            rows.append([name, 1, us])
total = sum(n * (us or 0) for _, n, us in rows)
for name, n, us in rows:
    print(f"ncu {n:4d} x {us or 0:8.2f} us  {name[:90]}")
print(f"ncu total GPU time for the token: {total:.1f} us over {sum(n for _, n, _ in rows)} launches")
PY
fi
# Why the matrix-vector kernels take what they take: throughput against the card's peak, occupancy and
# where the warps wait, for 8 launches in a decode step (q, k, v, o, gate, up, down, ...), skipping the
# prompt's (an 8-token prompt goes through the same kernels).
for m in ${NCU_MODELS:-tl11-f16}; do
  [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null && [ -f "$M/$m.gguf" ] || continue
  echo "=== ncu: the matrix-vector kernels of $m"
  GGUFSCOPE_CUDA_GRAPHS=0 timeout 150 ncu --cache-control none --clock-control none -k regex:matvec -s 400 -c 8 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
    "$B/bench-run" "$M/$m.gguf" --backend cuda --pp 8 --tg 8 --runs 1 >"$OUT/ncu-$m.txt" 2>&1
  grep -E '^  [a-z_].*\(|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Waves Per SM|stalled_(long_scoreboard|wait|lg_throttle|no_instruction|math_pipe|not_selected|short_scoreboard|barrier|selected)' \
    "$OUT/ncu-$m.txt" | head -150
done
echo "=== bench (pp512 / tg128)"
for m in ${BENCH-tl11-f16 tl11-q4_k_m q05-f16 q3-06-q4_k_m}; do
  [ -f "$M/$m.gguf" ] || continue
  if [ -x "$B/llama-bench" ]; then
    BACKEND=cuda PP=512 TG=128 RUNS=3 THREADS=4 LLAMA_BENCH=$B/llama-bench timeout 200 \
      bash "$G/bench-interleaved.sh" "$B" "$M/$m.gguf" "$ROUNDS" || status=1
  else
    timeout 60 "$B/bench-run" "$M/$m.gguf" --backend cuda --pp 512 --tg 128 --runs 3 || status=1
  fi
  [ "${GRAPHS_OFF:-0}" = 1 ] &&
    GGUFSCOPE_CUDA_GRAPHS=0 timeout 60 "$B/bench-run" "$M/$m.gguf" --backend cuda --pp 512 --tg 128 --runs 3 |
    sed 's/"engine":"ggufscope"/"engine":"ggufscope (no graphs)"/'
  if [ "${REPLAY:-1}" = 1 ]; then  # issue 58's stages 1 and 2, off by default until this run shows them identical and faster
    GGUFSCOPE_CUDA_REPLAY=1 timeout 60 "$B/bench-run" "$M/$m.gguf" --backend cuda --pp 512 --tg 128 --runs 3 |
      sed 's/"engine":"ggufscope"/"engine":"ggufscope (replay)"/'
    GGUFSCOPE_CUDA_REPLAY=1 GGUFSCOPE_CUDA_FUSED=1 GGUFSCOPE_CUDA_PDL=1 GGUFSCOPE_CUDA_TF32=1 timeout 60 \
      "$B/bench-run" "$M/$m.gguf" --backend cuda --pp 512 --tg 128 --runs 3 |
      sed 's/"engine":"ggufscope"/"engine":"ggufscope (replay, fused, pdl, tf32x)"/'
  fi
done

echo "=== examples"
"$B/gguf-run" "$M/tiny-qwen2-q4_k_m.gguf" -p "Hello world" -n 8 --compare cpu,cuda 2>&1 | head -12
"$B/gguf-run" "$M/stories260K.gguf" -p "Once upon a time" -n 24 --backend cuda 2>&1 | tail -7
exit $status
