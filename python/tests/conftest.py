"""Shared fixtures: the CLI to compare with, small tapes, the engines usable here.

Run by CTest (python/CMakeLists.txt) with the build's staged module on PYTHONPATH;
by hand: PYTHONPATH=build/ci/python /usr/bin/python3 -m pytest python/tests --tapelab-cli=build/ci/cli/tapelab
"""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tapelab

# Variables that change what a run does; each test starts without them (engine, device and cache
# settings stay: they pick the machine, not the result).
RUN_KNOBS = ["TAPELAB_ENGINE", "TAPELAB_PATHS", "TAPELAB_SEED", "TAPELAB_CKPT", "TAPELAB_CKPT_NODES",
             "TAPELAB_STRATEGY", "TAPELAB_SEGLEN", "TAPELAB_KERNEL", "TAPELAB_SCRATCH_LAYOUT", "TAPELAB_MARKET_ORDER",
             "TAPELAB_DUMP",
             "TAPELAB_PLAN", "TAPELAB_BUDGET", "TAPELAB_INNER", "TAPELAB_PATH_OFFSET", "TAPELAB_MAX_GROUPS",
             "TAPELAB_SCRATCH_BUDGET", "TAPELAB_CONFIG", "TAPELAB_TIMELINE"]

# The engines a run is checked on: every one that runs here (capabilities queried, not assumed).
ENGINES = ["reference", "reference-f32", "cpu-jit", "vulkan", "opencl", "cuda"]


def pytest_addoption(parser):
    parser.addoption("--tapelab-cli", default=None, help="the tapelab binary of the same build")


@pytest.fixture(autouse=True)
def clean_knobs(monkeypatch):
    for k in RUN_KNOBS:
        monkeypatch.delenv(k, raising=False)


class Cli:
    def __init__(self, path):
        self.path = path

    def __call__(self, *args, env=None):
        """(exit code, stdout, stderr) of `tapelab args...`."""
        full = dict(os.environ, **(env or {}))
        p = subprocess.run([self.path, *map(str, args)], capture_output=True, text=True, env=full, timeout=600)
        return p.returncode, p.stdout, p.stderr

    def json(self, *args, env=None):
        rc, out, err = self(*args, "--json", env=env)
        assert rc == 0, err
        return json.loads(out)

    def error(self, *args, env=None):
        """(exit code, the one line on stderr) of a failing command."""
        rc, _, err = self(*args, env=env)
        assert rc != 0
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        return rc, lines[0]


@pytest.fixture(scope="session")
def cli(request):
    path = request.config.getoption("--tapelab-cli")
    if not path:
        pytest.skip("give --tapelab-cli=PATH to compare with the CLI")
    return Cli(path)


@pytest.fixture(scope="session")
def usable():
    return {e["name"]: e for e in tapelab.engines() if e["usable"]}


def engine_or_skip(usable, name):
    if name not in usable:
        reason = {e["name"]: e["reason"] for e in tapelab.engines()}.get(name, "unknown")
        pytest.skip(f"{name} does not run here: {reason}")
    return usable[name]


def live_minima(tape, segments):
    """A strategy: cut where the live count is locally least, about every len(tape)/segments nodes."""
    live = tape.live_across()
    step = len(tape) / segments
    cuts = []
    for s in range(1, segments):
        lo, hi = int((s - 0.5) * step), int((s + 0.5) * step)
        c = lo + int(np.argmin(live[lo:hi]))
        if 0 < c < len(tape) and (not cuts or c > cuts[-1]):
            cuts.append(c)
    return cuts


def live_minima_halved(tape, segments):
    """A nested strategy: live_minima's segments, each longer one cut again at its middle."""
    cuts = live_minima(tape, segments)
    bounds = [0, *cuts, len(tape)]
    return {"cuts": cuts, "inner": [[(lo + hi) // 2] if hi - lo > 8 else None for lo, hi in zip(bounds, bounds[1:])]}


def interrupt_child(code, *args, settle=1.0, timeout=5):
    """Runs `code` (python -c) in a child that prints "ready" when its long work starts, sends it SIGINT
    `settle` seconds later, as a terminal's Ctrl-C would: (its stderr, its exit code, seconds from the
    signal to its end). The child is killed if it outlives `timeout`."""
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        time.sleep(settle)
        assert child.poll() is None, "the long run ended on its own"
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=timeout)
        return err, child.returncode, time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
