#!/usr/bin/env bash
# Creates the virtual environment the tests use as an independent reference:
# the `gguf` package (llama.cpp's own Python reader/writer, with numpy
# dequantizers) from PyPI. Idempotent.
set -euo pipefail
venv=${1:-build/venv}
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import gguf, numpy' 2>/dev/null; then
  exit 0
fi
echo "setup-venv: creating $venv with the gguf package from PyPI" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check 'gguf==0.19.0' 'numpy==2.4.6'
