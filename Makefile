# rdtlab: every target sets up what it needs on a fresh machine.
#   make demo   set up, then run the main job
#   make test   set up, then run every test (Rust and Python; the together tier three at a time)
#   make test-unit  the unit tier only: pure code, no root, no network, under a minute
#   make lint   ruff (lint, format) over the Python, clippy and rustfmt over the engine, mypy over the pure cores
#   make docs   the documentation site, by audience, from docs/ (strict) into build/site/: open build/site/index.html
#   make bench  set up, then run the long measurements (figures go in BENCHMARKS.md)
#   make build  build the link engine (harness/linkemu/target/release/linkemu) and its exec helper rdtexec
#   make lab    set up, then JupyterLab on 127.0.0.1 on a student's copy of the COMN release (prints the URL;
#               LAB_ASSIGNMENT=tcp-like, multihoming, gbn-vs-tcp, stop-and-wait-crc)
#   make images build the Docker images rdtlab/lab and rdtlab/grader (docker/), also offline
#   make docker-lab / docker-lab-down   the students' lab in Docker (docker/compose.yaml)
#   make hub / hub-down   the course on JupyterHub (docker/hub/): http://127.0.0.1:8000/hub/
#               (RDTLAB_HUB_PORT moves it); hub-down stops it and keeps the volumes

PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
CRATE   := harness/linkemu
LINKEMU := $(CRATE)/target/release/linkemu
# the exec helper harness/procs.py starts programs through (src/bin/rdtexec.rs)
EXECHELPER := $(CRATE)/target/release/rdtexec
CARGO   ?= cargo
# cargo runs its own jobs (one per core); make -j's jobserver, named in MAKEFLAGS but not
# passed to a plain recipe, only made it warn "failed to connect to jobserver"
CARGO_RUN = env -u MAKEFLAGS -u MFLAGS $(CARGO)
# Debian packages the kit uses at run time (iperf3 for the TCP baseline; nftables for
# the netns backend's loopback NAT; bubblewrap for the grader's sandbox; chromium for the
# course's browser test, driven by Playwright without a browser download).
# The toolchains students' programs are built with, in the jail as on the images (its
# PATH is /usr/local/bin:/usr/bin:/bin, so Debian's, whatever else this machine has):
# javac, cc, c++, go, cargo (harness/resolver.py). npm fetches the hub's proxy (docker/hub/build.sh).
# COMMAND:PACKAGE where the command's name differs.
DEBS    := iperf3 nft:nftables bwrap:bubblewrap chromium /usr/bin/javac:default-jdk-headless /usr/bin/cc:gcc \
           /usr/bin/c++:g++ /usr/bin/go:golang-go /usr/bin/cargo:cargo npm
PYTEST_ARGS ?=

.PHONY: all setup build demo test test-unit test-rust test-python lint docs bench debs clean lab images docker-lab docker-lab-down \
        hub-images hub hub-down

all: build

# The set-up's parts run at once: pip waits on the registry and unpacks on one core
# while cargo compiles on both (BENCHMARKS.md, "The test suite").
SETUP_PARTS := $(VENV)/.installed debs build

setup:
	@$(MAKE) --no-print-directory -j3 -Otarget $(SETUP_PARTS)

$(VENV)/.installed: pyproject.toml rdtlab/no_rfc3987_syntax.pth
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# compat: a plain path in a .pth file; the default editable finder imports pathlib, re and
	# more at every start of the venv's Python (kernels, jail wrappers, nbgrader);
	# setuptools warns that compat is transitional (pyproject.toml pins it where it is)
	PYTHONWARNINGS=ignore $(PY) -m pip install -q -e '.[test]' --config-settings editable_mode=compat
	# jsonschema's IRI grammars, compiled at every nbformat import and never used (the file says why)
	cp rdtlab/no_rfc3987_syntax.pth "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/"
	touch $@

# Install missing Debian packages; as root directly, otherwise with sudo if it exists.
debs:
	@missing=""; for p in $(DEBS); do command -v $${p%%:*} >/dev/null 2>&1 || missing="$$missing $${p#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build: $(LINKEMU) $(EXECHELPER)

# One cargo build makes both: a grouped target (&:), so -j runs it once.
$(LINKEMU) $(EXECHELPER) &: $(CRATE)/Cargo.toml $(shell find $(CRATE)/src -name '*.rs' 2>/dev/null)
	$(CARGO_RUN) build --release --quiet --manifest-path $(CRATE)/Cargo.toml
	@touch $(LINKEMU) $(EXECHELPER)

demo: setup
	$(VENV)/bin/rdtlab sheet comn --quick

test:
	@$(MAKE) --no-print-directory -j4 -Otarget $(SETUP_PARTS) test-rust
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory test-python

# The habits: ruff's lint and format check (pyproject.toml says what it skips: students'
# programs as handed in), the engine's clippy with warnings as errors and rustfmt, and
# mypy over the pure cores (pyproject.toml's [tool.mypy] files).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check --quiet .
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/mypy
	$(CARGO_RUN) fmt --check --manifest-path $(CRATE)/Cargo.toml
	$(CARGO_RUN) clippy --quiet --all-targets --manifest-path $(CRATE)/Cargo.toml -- -D warnings

# The guides by audience (mkdocs.yml): strict, so a broken link or reference fails; the
# command-line reference is written from the parsers as it builds (docs/hooks/reference.py).
docs: $(VENV)/.installed
	$(VENV)/bin/mkdocs build --strict --quiet
	@echo "the site: build/site/index.html"

# The dev profile: the tests assert results, not speed, and its nine test binaries build
# in a quarter of the release profile's time (the engine's cost per packet, printed
# for BENCHMARKS.md by the ignored netem_report test, is measured with --release).
test-rust:
	$(CARGO_RUN) test --quiet --manifest-path $(CRATE)/Cargo.toml

# Two passes, the together tier three at a time, then the rest one at a time; a whole
# run as root makes the Docker images' light parts beside the first (tests/passes.sh).
test-python: setup
	@PY=$(PY) tests/passes.sh $(PYTEST_ARGS)

test-unit: $(VENV)/.installed build
	$(PY) -m pytest -q -m unit $(PYTEST_ARGS)

# The course (assignments/): a student's copy in out/lab/<assignment>, kept between runs;
# LAB_PORT=8888, LAB_ASSIGNMENT=comn (or tcp-like, multihoming, gbn-vs-tcp, stop-and-wait-crc).
lab: setup
	$(PY) assignments/lab.py

# Docker (docker/build.sh): installs and starts the engine when root; the base image is
# made from Debian's packages unless BASE names one to pull (BASE=debian:bookworm-slim).
BASE ?= rdtlab/base:bookworm
images: setup
	BASE=$(BASE) PY=$(PY) docker/build.sh

docker-lab: images
	docker/lab.sh up

docker-lab-down:
	docker/lab.sh down

# The hub's images over the lab's and the grader's: rdtlab/hub, rdtlab/lab-hub, rdtlab/grader-hub.
hub-images: images
	PY=$(PY) BASE=$(BASE) docker/hub/build.sh

hub: hub-images
	docker/hub/hub.sh up

hub-down:
	docker/hub/hub.sh down

bench: setup
	$(PY) -m bench all
	$(PY) -m bench.grader
	$(PY) -m bench.notebooks
	$(PY) -m bench.notebooks --students 20 --jobs 8    # rdtlab grade's notebook pool: the gate sets how many run; every point still scored
	$(PY) -m bench.calibrate --seeds 1,2,3 --jobs 2 --allow-expected
	for a in tcp-like multihoming gbn-vs-tcp stop-and-wait-crc; do \
	  $(PY) -m bench.calibrate --assignment $$a --seeds 1,2,3 --jobs 2 --allow-expected || exit 1; done
	$(PY) -m bench.classes --assignment gbn-vs-tcp --jobs 1,2,6    # a class's rate, the same grades at each
	$(PY) -m bench.classes --class tests/fixtures/class_comn --jobs 1,2,6   # seven COMN students who fail as real ones do
	$(PY) -m bench.planted_pictures                                # every planted bug's feedback in chromium
	$(PY) -m bench.notebook_languages --languages python,java      # the quick notebook in JupyterLab, side by side
	# the course hub: 20 students' servers at once (root; the hub's images)
	$(MAKE) --no-print-directory hub-images
	$(PY) -m bench.hub_spawn --students 20

clean:
	rm -rf $(VENV) $(CRATE)/target out
