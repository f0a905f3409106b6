# Sourced by ./trunchbull and ./run-tests. Creates, from the lockfiles:
#   .venv/             Python 3.11 with third_party/python/requirements*.txt
#   .cache/toolchain/  Node 22 + esbuild + helpers from third_party/npm (npm ci)
# and exports TRUNCHBULL_VENV, TRUNCHBULL_TOOLCHAIN and PYTHONPATH (src/). Idempotent: each part
# is rebuilt only when the hash of its lockfile changes.

_tb_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

_tb_find_python311() {
  local candidate
  for candidate in python3.11 "$HOME"/.pyenv/versions/3.11*/bin/python3.11 /usr/bin/python3.11 /usr/local/bin/python3.11; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  echo "trunchbull: Python 3.11 is required (looked for python3.11 on PATH and in ~/.pyenv/versions)" >&2
  return 1
}

_tb_hash() { cat "$@" | sha256sum | cut -c1-16; }

_tb_log() { echo "trunchbull: $*" >&2; }

trunchbull_bootstrap() {
  local profile="$1"
  local venv="$_tb_root/.venv"
  local reqs=("$_tb_root/third_party/python/requirements.txt")
  [ "$profile" = dev ] && reqs+=("$_tb_root/third_party/python/requirements-dev.txt")
  local want; want="$profile-$(_tb_hash "${reqs[@]}" "$_tb_root/pyproject.toml")"
  if [ ! -x "$venv/bin/python" ] || ! grep -qxF -- "$want" "$venv/.trunchbull-stamp" 2>/dev/null; then
    local py; py="$(_tb_find_python311)"
    _tb_log "setting up the Python environment in .venv (first use)"
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "${reqs[-1]}" >&2
    { [ "$profile" = dev ] && echo "runtime-$(_tb_hash "${reqs[0]}" "$_tb_root/pyproject.toml")"; echo "$want"; } > "$venv/.trunchbull-stamp"
  fi
  export TRUNCHBULL_VENV="$venv"
  export PYTHONPATH="$_tb_root/src${PYTHONPATH:+:$PYTHONPATH}"
  # Cache compiled bytecode under .cache/, out of the source tree, even where
  # the environment turns bytecode writing off: compiling the CLI's modules
  # afresh costs every invocation ~0.06 s.
  export PYTHONPYCACHEPREFIX="$_tb_root/.cache/pycache"
  unset PYTHONDONTWRITEBYTECODE

  local toolchain="$_tb_root/.cache/toolchain"
  local lock="$_tb_root/third_party/npm/package-lock.json"
  local want_tc; want_tc="$(_tb_hash "$lock" "$_tb_root/third_party/npm/package.json")"
  if [ ! -x "$toolchain/node_modules/.bin/node" ] || [ "$(cat "$toolchain/.stamp" 2>/dev/null)" != "$want_tc" ]; then
    command -v npm >/dev/null 2>&1 || { _tb_log "npm is required to install the pinned Node toolchain"; return 1; }
    _tb_log "installing the pinned Node toolchain into .cache/toolchain (first use)"
    rm -rf "$toolchain"; mkdir -p "$toolchain"
    cp "$_tb_root/third_party/npm/package.json" "$lock" "$toolchain/"
    (cd "$toolchain" && npm ci --no-audit --no-fund --loglevel=error >&2)
    echo "$want_tc" > "$toolchain/.stamp"
  fi
  export TRUNCHBULL_TOOLCHAIN="$toolchain"
}
