# Learning Harness: the two set-up commands are `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check

.PHONY: run test test-fast check frontend-test electron-test freeze release-dry-run clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# llama.cpp for the offline model, built portable (no -march=native; any x86-64 CPU with AVX2)
# once per version and flags, cached outside the checkout: scripts/install_llama_cpp.py is the one
# place its build flags live (5-35 min on 2 cores the first time, seconds afterwards).
LLAMA_CPP := $(PY) scripts/install_llama_cpp.py

# The app first (issue 29): the cached llama.cpp wheel if there is one, never a compile. With none
# cached, `make run`'s server (LH_OFFLINE_BUILD=1) builds it in the background after the ready
# line, shows its progress in the terminal and the page's banner, and picks the offline model up
# when it is installed; keys, subscriptions and local model servers work meanwhile.
$(VENV)/.installed-run: pyproject.toml scripts/install_llama_cpp.py | $(PY)
	$(PIP) install -e '.[offline-deps]'
	$(LLAMA_CPP) --cached-only
	touch $@

$(VENV)/.installed-dev: pyproject.toml scripts/install_llama_cpp.py | $(PY)
	$(LLAMA_CPP)
	$(PIP) install -e '.[dev,local,desktop]'
	touch $@

run: $(VENV)/.installed-run
	LH_OFFLINE_BUILD=1 $(PY) -m server $(ARGS)

frontend/node_modules: frontend/package-lock.json
	cd frontend && (npm ci --no-audit --no-fund || npm install --no-audit --no-fund)
	touch $@

frontend-test: frontend/node_modules
	cd frontend && npm run typecheck && npm run depcruise && npm test

# The desktop shell's logic under plain Node (the Electron binary is not downloaded).
electron/node_modules: electron/package-lock.json
	cd electron && (ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm ci --no-audit --no-fund || \
	  ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm install --no-audit --no-fund)
	touch $@

electron-test: electron/node_modules
	node --test electron/test/

# The PyInstaller onedir build of the server (dist/learning-harness-server/), smoke-tested.
freeze: $(VENV)/.installed-dev
	$(PY) build/freeze.py --runs 3

# The release workflow's steps that run off GitHub (scripts/release_dry_run.py), on a copy of HEAD:
# version from a fake tag, workflow lint, builder config, signing flags, smoke turn, assets + publish.
release-dry-run: $(VENV)/.installed-dev electron/node_modules
	$(PY) scripts/release_dry_run.py $(ARGS)

check: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check server tests build hatch_build.py
	$(VENV)/bin/ruff format --check server tests build hatch_build.py
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# Every test: frontend units, lint, types, the import law, the frozen server build, the desktop
# shell's Node tests, then pytest (unit, store, flows, desktop, e2e in Debian's chromium, and the
# slow smoke tests against the real offline model).
test: $(VENV)/.installed-dev frontend-test check freeze electron-test
	scripts/ensure-chromium
	$(PY) -m pytest

# Everything but the slow offline-model smoke test (the e2e layout test injects frontend/node_modules'
# axe-core into the page).
test-fast: $(VENV)/.installed-dev frontend/node_modules
	$(PY) -m pytest -m "not slow"

clean:
	rm -rf $(VENV) frontend/node_modules electron/node_modules server/static dist build/work
