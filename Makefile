# InnoTune: `make run` opens the wizard, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
APT := sh installers/setup/apt-deps.sh

# What the wizard needs to show a window and to run the practice server (no system service).
APT_RUN := python3-venv python3-pip libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-keysyms1 \
	libxcb-shape0 libxcb-render-util0 libxcb-image0 libxcb-randr0 libxcb-xkb1 libx11-xcb1 libegl1 \
	libgl1 libfontconfig1 libdbus-1-3 libxkbcommon0 mariadb-server-core mariadb-client-core procps
# What the tests need on top: real hosts to talk to.
APT_TEST := $(APT_RUN) openssh-server openssh-client sudo mariadb-server mariadb-client e2fsprogs \
	util-linux xvfb xauth rsyslog socat udev iproute2 busybox fish tcsh sysbench dbus gnome-keyring \
	fio debootstrap mysqltuner percona-toolkit docker.io podman docker-compose zstd

.PHONY: run test test-cold lint sysdeps-run sysdeps-test venv venv-dev clean bench bench-plans bench-inspect \
	bench-plan-quality \
	dist test-dist sysdeps-dist icons screenshots stress-ui bench-proof

run: sysdeps-run $(VENV)/.run-stamp
	@if [ -z "$${DISPLAY:-}" ] && [ -z "$${WAYLAND_DISPLAY:-}" ] && [ "$${QT_QPA_PLATFORM:-}" != "offscreen" ]; then \
		echo "InnoTune needs a display to open its window, and none was found (DISPLAY is not set)."; \
		echo "  - On a desktop, run 'make run' from a terminal inside the graphical session."; \
		echo "  - Over SSH, connect with 'ssh -X' or run under a virtual screen: xvfb-run -a make run"; \
		echo "  - Without any screen, use the command line: $(BIN)/innotune --help"; \
		exit 1; \
	fi
	$(BIN)/innotune

test: sysdeps-test $(VENV)/.dev-stamp
	$(BIN)/ruff check app tests
	$(BIN)/ruff format --check app tests
	QT_QPA_PLATFORM=offscreen PYTEST_ARGS="$(PYTEST_ARGS)" $(BIN)/python -m tests.run_suite

# The whole suite as on a new machine: the booted hosts' images and the container archives are
# moved aside (tests/cold_caches.py), rebuilt by the run, and put back afterwards, also when the
# run fails or is stopped. Refused while another test run goes (COLD_ARGS=--force moves them
# all the same; COLD_ARGS=--dry-run says what would move).
test-cold: sysdeps-test $(VENV)/.dev-stamp
	$(BIN)/python -m tests.cold_caches $(COLD_ARGS) -- $(MAKE) test PYTEST_ARGS="$(PYTEST_ARGS)"

# The UI tests STRESS_ROUNDS times (default 10) while every CPU is kept busy; reports crashes.
STRESS_ROUNDS ?= 10
stress-ui: sysdeps-test $(VENV)/.dev-stamp
	$(BIN)/python -m tests.stress_ui --rounds $(STRESS_ROUNDS) $(STRESS_ARGS)

sysdeps-run:
	@$(APT) $(APT_RUN)

sysdeps-test:
	@$(APT) $(APT_TEST)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.run-stamp: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install -q --no-compile -e .
	touch $@

$(VENV)/.dev-stamp: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install -q --no-compile -e '.[dev]'
	touch $@ $(VENV)/.run-stamp

# The project's benchmarks (root; results in bench-out/). `make bench` runs those in BENCHES;
# BENCH_ARGS passes options, e.g. make bench BENCH_ARGS="--seconds 5 --reps 2".
BENCHES := bench_plans bench_plan_quality
bench: sysdeps-test $(VENV)/.dev-stamp
	@for b in $(BENCHES); do \
		QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.benchmarks.$$b $(BENCH_ARGS) || exit 1; \
	done

bench-plans: sysdeps-test $(VENV)/.dev-stamp
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.benchmarks.bench_plans $(BENCH_ARGS)

# The starting plan on the booted sid (MySQL 9.7) and trixie (MariaDB 11.8) hosts, on an
# 800 MiB data set; e.g. make bench-plan-quality BENCH_ARGS="--host sid --quick".
bench-plan-quality: sysdeps-test $(VENV)/.dev-stamp
	$(BIN)/python -m tests.benchmarks.bench_plan_quality $(BENCH_ARGS)

bench-inspect: sysdeps-test $(VENV)/.dev-stamp
	$(BIN)/python -m tests.benchmarks.bench_inspect $(BENCH_ARGS)

# The before/after proof on MySQL 9.7 (the sid host): trx_commit 1 -> 2 is faster, and 9 of 10
# pairs with identical settings are noise (11 pairs of about a minute each: 11-14 minutes; root).
bench-proof: sysdeps-test $(VENV)/.dev-stamp
	$(BIN)/python -m tests.benchmarks.bench_proof $(BENCH_ARGS)

# Packaging (installers/README.md): `make dist` builds the frozen program (PyInstaller, one
# folder) and dist/innotune-<version>-linux-<arch>.tar.gz; `make test-dist` builds it when the
# sources are newer, then runs the frozen program's tests (tests/frozen, marker `dist`, which
# plain `pytest` and `make test` deselect).
# PyInstaller needs objdump/strip (binutils) and a shared libpython (python3-dev on Debian); the
# run-time libraries must be present for it to collect them.
APT_DIST := binutils desktop-file-utils python3-dev
dist: sysdeps-run sysdeps-dist $(VENV)/.dist-stamp
	sh installers/linux/build.sh $(BIN)/python

test-dist: sysdeps-test sysdeps-dist $(VENV)/.dev-stamp $(VENV)/.dist-stamp
	@if [ ! -x dist/innotune/innotune ] || [ -n "$$(find app resources installers pyproject.toml \
		-type f -not -path '*/__pycache__/*' -newer dist/innotune/innotune -print -quit)" ]; then \
		$(MAKE) dist; fi
	QT_QPA_PLATFORM=offscreen $(BIN)/pytest -m dist tests/frozen $(PYTEST_ARGS)

sysdeps-dist:
	@$(APT) $(APT_DIST)

$(VENV)/.dist-stamp: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install -q -e '.[dist]'
	touch $@

# Redraw resources/icons/* from innotune.svg (the results are committed).
icons: $(VENV)/.run-stamp
	$(BIN)/python installers/make_icons.py

# installers/screenshots/*.png: every wizard page, from a run against a throwaway practice server
# under its own Xvfb (the results are committed; README.md shows them). TARGET=sid or
# TARGET=trixie (root) walks that booted test host instead, before and after Apply, at SCALES
# (default 1,2), into docs/screenshots/<host>/<scale>x/; SHOTS_ARGS=--exercises adds each exercise,
# SHOTS_ARGS="--only recommendation" pictures that page alone (unnumbered) and stops there.
SCALES ?= 1,2
screenshots: sysdeps-test $(VENV)/.dev-stamp
	$(BIN)/python installers/make_screenshots.py $(if $(TARGET),--target $(TARGET) --scales $(SCALES)) \
		$(SHOTS_ARGS)

lint: $(VENV)/.dev-stamp
	$(BIN)/ruff check app tests && $(BIN)/ruff format --check app tests && $(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache
