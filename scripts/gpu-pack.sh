#!/usr/bin/env bash
# Packs what scripts/gpu-validate.sh needs on a GPU machine that has the CUDA
# driver and toolkit but none of our build's libraries, no ../shared and no
# registry: the tools and the gpu-labelled test programs of a build made here
# (configure it with -DCMAKE_CUDA_ARCHITECTURES=90 for an H100/H200 alone), the
# shared libraries they load that are not the C library's, OpenSSL's or CUDA's,
# the shared models that our gguf-quantize cannot remake (the tiny F32, F16,
# Q4_K_M, Q6_K and Q8_0 ones are written there again: synth_model.py, then
# gguf-quantize; the other architectures' by synth_arch.py and heldout_arch.py),
# those scripts with the pure-Python gguf wheel, and the two
# benchmark scripts. LLAMA_BENCH=path adds a llama-bench (a CUDA build) to
# compare with; LLAMA_QUANTIZE=path a llama-quantize (any build; its libraries
# come along) that makes there the full-size files of the types our
# gguf-quantize does not write (Q2_K, Q3_K_M, IQ4_XS, IQ4_NL, Q5_K_M). All of it goes into DEST/payload.tar.xz beside gpu-validate.sh,
# which unpacks it: a stripped llama-bench for sm_90 alone is 70 MB, 41 MB in xz,
# and the device tool carries 64 MiB in all.
#   scripts/gpu-pack.sh BUILD DEST      then, there:  DEST/gpu-validate.sh
set -euo pipefail
build=${1:?usage: gpu-pack.sh BUILD DEST}
dest=${2:?usage: gpu-pack.sh BUILD DEST}
here=$(cd "$(dirname "$0")" && pwd)
shared=${GGUFSCOPE_SHARED:-$here/../../shared}
[ -f "$build/libggufscope-cuda.so" ] || { echo "gpu-pack: $build has no CUDA backend (configure with nvcc on PATH)" >&2; exit 2; }
rm -rf "$dest"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$dest" "$stage"/{bin,lib,models,whl,tools,licenses}
out=$dest
dest=$stage
cp "$build"/{gguf-run,bench-run,gguf-quantize,gguf-mkfixture,gguf-inspect,libggufscope-cuda.so} "$dest/bin/"
cp "$build"/tests/{test_cuda,test_cuda_paths,test_backends,test_run_backends} "$dest/bin/"
[ -n "${LLAMA_BENCH:-}" ] && cp "$LLAMA_BENCH" "$dest/bin/llama-bench" && strip "$dest/bin/llama-bench"
[ -n "${LLAMA_QUANTIZE:-}" ] && cp "$LLAMA_QUANTIZE" "$dest/bin/llama-quantize"
# Every library the programs load, except the C library's own (the machine's newer glibc serves them),
# the compiler's runtime and OpenSSL (there too) and CUDA's (the machine's toolkit, matching its driver).
for b in "$dest"/bin/*; do ldd "$b" | awk '/=> \//{print $3}'; done | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|libssl|libcrypto)\.so|/libcu|/libnv|/libnccl|ld-linux' |
  while read -r l; do cp -L "$l" "$dest/lib/"; done
for m in "$shared"/models/*.gguf; do
  case $(basename "$m") in tiny-*-f32.gguf | tiny-*-f16.gguf | tiny-*-q4_k_m.gguf | tiny-*-q6_k.gguf | tiny-*-q8_0.gguf) ;;
  *) cp "$m" "$dest/models/" ;;
  esac
done
cp "$shared/tools/synth_model.py" "$shared/tools/synth_arch.py" "$here/../tests/py/heldout_arch.py" \
  "$here/../tests/py/gguf_copy.py" "$here/../tests/py/moe_arch.py" "$here/../tests/py/mla_arch.py" \
  "$here/../tests/py/phimoe_arch.py" "$here/../tests/py/smallthinker_arch.py" \
  "$here/../tests/py/grok_arch.py" "$here/../tests/py/bitnet_arch.py" \
  "$here/../tests/py/openelm_arch.py" "$here/../tests/py/arctic_arch.py" \
  "$here/../tests/py/nanbeige_arch.py" "$here/../tests/py/llama_layer.py" \
  "$here/../tests/py/granite_swa_arch.py" "$here/../tests/py/mimo2_arch.py" "$here/../tests/py/maple_arch.py" \
  "$here/../tests/py/step35_arch.py" "$here/../tests/py/spark_arch.py" "$here/../tests/py/plamo3_arch.py" \
  "$here/../tests/py/plamo2_vocab.py" "$here/../tests/py/laguna_arch.py" "$here/../tests/py/scaled_arch.py" \
  "$here/../tests/py/nvfp4_arch.py" "$here/../tests/py/talkie_arch.py" \
  "$here/../tests/py/renamed_arch.py" "$here/../tests/py/exaone4_arch.py" "$here/../tests/py/glm4_arch.py" \
  "$here/../tests/py/llama4_arch.py" "$here/../tests/py/cohere_arch.py" "$here/../tests/py/qwen35_arch.py" \
  "$here/../tests/py/lfm2_arch.py" "$here/../tests/py/gemma4_arch.py" "$here/../tests/py/gemma4_vocab.py" \
  "$here/../tests/py/nemotron_h_arch.py" "$here/../tests/py/granitehybrid_arch.py" \
  "$here/../tests/py/falcon_h1_arch.py" "$here/../tests/py/mamba_arch.py" \
  "$here/../tests/py/jamba_arch.py" "$here/../tests/py/layernorm_arch.py" \
  "$here/../tests/py/position_arch.py" "$here/../tests/py/deci_arch.py" \
  "$here/../tests/py/nemotron_arch.py" "$here/../tests/py/olmo_arch.py" \
  "$here/../tests/py/dbrx_arch.py" "$here/../tests/py/apertus_arch.py" "$here/../tests/py/chatglm_arch.py" \
  "$here/../tests/py/orion_arch.py" "$here/../tests/py/baichuan_arch.py" \
  "$here/../tests/py/qwen_arch.py" "$here/../tests/py/refact_arch.py" "$here/../tests/py/codeshell_arch.py" \
  "$here/../tests/py/jais_arch.py" "$here/../tests/py/plamo_arch.py" "$here/../tests/py/afmoe_arch.py" \
  "$dest/tools/"
python3 -m pip download -q --no-deps --only-binary=:all: -d "$dest/whl" gguf
cp /usr/share/common-licenses/{GPL-3,Apache-2.0,MPL-2.0,GFDL-1.3} "$dest/licenses/"  # synth_model.py's corpus
cp "$here"/{bench-interleaved.sh,llama-bench-line.py} "$dest/"
cp "$here"/{gpu-validate.sh,gpu-real.sh} "$out/"
tar -C "$dest" -cf - . | xz -T0 -6 >"$out/payload.tar.xz"
du -sh "$out"
