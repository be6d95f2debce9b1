#!/usr/bin/env bash
# Installs the system packages ggufscope builds and tests with, when missing.
# Idempotent: does nothing when everything is there. Needs root (apt-get) only
# when something is missing.
set -euo pipefail

pkgs=(build-essential cmake pkg-config libcriterion-dev libxxhash-dev zlib1g-dev libssl-dev
      libcjson-dev libpcre2-dev clang libclang-rt-dev libcurl4-openssl-dev nginx-light)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The tests need a python3 that can make virtual environments (for the gguf package).
if ! command -v python3 >/dev/null || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  missing+=(python3 python3-venv)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "install-deps: missing packages (${missing[*]}) and not root: install them with apt-get" >&2
    exit 1
  fi
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
