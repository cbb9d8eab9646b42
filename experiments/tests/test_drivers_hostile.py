"""Every experiment driver, C++ and Python, against hostile --out values and size flags (issue 49): an
--out that is an input of the run (the --tape file, a link to it, the --plan file, the figure beside a
CSV), a directory or /dev/full, and counts out of range, zero, signed or absurd. Each must end in one
line on stderr with docs/cli.md's exit code (2 bad input, 1 a failed write), within seconds, leaving its
inputs byte for byte and no temporary file. CTest: experiment_drivers_hostile (label experiments).

  /usr/bin/python3 -m pytest -q -p no:cacheprovider experiments/tests --build-dir build/ci
"""
import os
import subprocess
import sys

import pytest

EXPERIMENTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVERS = os.path.join(EXPERIMENTS, "drivers")
SWEEPS = ["cliff", "markets", "segments", "strategies", "peers"]
TAPE = "tapelab-tape 1\n# edge: a small tape\ninput spot 100\nrandn 0\nmul 0 1\nexp 2\noutput 3\n"


@pytest.fixture(scope="module")
def build(request):
    path = request.config.getoption("--build-dir")
    if not path or not os.access(os.path.join(path, "cli", "tapelab"), os.X_OK):
        pytest.skip("give --build-dir=BUILD (with cli/tapelab and experiments/ built)")
    return path


def binary(build, name):
    path = os.path.join(build, "experiments", name)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{name} is not built here")
    return path


def run(cmd, env=None, timeout=60):
    # No TAPELAB_* knob of the caller's reaches the drivers (a warning line would be a second line).
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TAPELAB_") or k == "TAPELAB_CACHE_DIR"}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=dict(clean, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def one_line(err, rc, want_rc, *words):
    assert rc == want_rc, f"exit {rc}, not {want_rc}: {err}"
    assert err.count("\n") == 1 and err.endswith("\n"), f"not one line: {err!r}"
    assert "Traceback" not in err and "terminate called" not in err, err
    for w in words:
        assert w in err, f"'{w}' not in {err!r}"


def no_temporaries(directory):
    left = [f for f in os.listdir(directory) if f.endswith(".tmp")]
    assert not left, f"temporary files left: {left}"


@pytest.fixture
def files(tmp_path):
    tape = tmp_path / "user.tape"
    tape.write_text(TAPE)
    os.symlink(tape, tmp_path / "link.csv")
    (tmp_path / "dir").mkdir()
    return tmp_path


def sweep_cmd(build, driver, *args):
    return [sys.executable, os.path.join(DRIVERS, driver + ".py"), "--quick", "--engines", "reference",
            "--sweep-bin", os.path.join(build, "experiments", "scratch_sweep"),
            "--tapelab-bin", os.path.join(build, "cli", "tapelab"), *args]


# ------------------------------------------------------------------ --out: never an input, never a directory


@pytest.mark.parametrize("driver", SWEEPS)
def test_python_sweeps_never_write_over_their_tape(build, files, driver):
    for out in ("user.tape", "link.csv"):
        rc, _, err = run(sweep_cmd(build, driver, "--tape", str(files / "user.tape"), "--out", str(files / out)))
        one_line(err, rc, 2, f"{driver}: --out ", "is ", "an input of this run")
        assert (files / "user.tape").read_text() == TAPE
    rc, _, err = run(sweep_cmd(build, driver, "--tape", str(files / "user.tape"), "--out", str(files / "dir")))
    one_line(err, rc, 2, "a directory, not a file")
    no_temporaries(files)


@pytest.mark.parametrize("driver", SWEEPS)
def test_python_sweeps_say_a_failed_write_in_one_line(build, files, driver):
    rc, _, err = run(sweep_cmd(build, driver, "--tape", str(files / "user.tape"), "--out", "/dev/full"), timeout=120)
    one_line(err.splitlines()[-1] + "\n" if err else err, rc, 1, "--out /dev/full: cannot write: No space left on device")


def test_cpp_drivers_never_write_over_their_tape_or_plan(build, files):
    tapelab = os.path.join(build, "cli", "tapelab")
    plan = files / "plan.json"
    assert run([tapelab, "plan", str(files / "user.tape"), "--checkpoint", "2", "--out", str(plan)])[0] == 0
    kept = plan.read_text()
    for name, extra in (("scratch_sweep", ["--engines", "reference"]), ("gpu_kernels", ["--engine", "reference"])):
        exe = binary(build, name)
        for out in ("user.tape", "link.csv"):
            rc, _, err = run([exe, "--quick", *extra, "--tape", str(files / "user.tape"), "--out", str(files / out)])
            one_line(err, rc, 2, f"{name}: --out ", "an input of this run")
        rc, _, err = run([exe, "--quick", *extra, "--tape", str(files / "user.tape"), "--plan", str(plan), "--out", str(plan)])
        one_line(err, rc, 2, "an input of this run")
    assert (files / "user.tape").read_text() == TAPE and plan.read_text() == kept
    no_temporaries(files)


def test_cut_strategies_never_draws_over_an_input(build, files):
    """The PNGs beside the CSV are outputs too: --tape R.png --out R.csv used to draw over R.png."""
    exe = binary(build, "cut_strategies")
    (files / "R.png").write_text(TAPE)
    rc, _, err = run([exe, "--quick", "--only-tapes", "--tape", str(files / "R.png"), "--out", str(files / "R.csv")])
    one_line(err, rc, 2, "--out (its figure) ", "R.png: is ", "an input of this run")
    assert (files / "R.png").read_text() == TAPE and not (files / "R.csv").exists()
    rc, _, err = run([exe, "--quick", "--only-tapes", "--tape", str(files / "user.tape"), "--out", str(files / "link.csv")])
    one_line(err, rc, 2, "an input of this run")


def test_tune_never_writes_its_shortlist_over_the_plan(build, files):
    tapelab = os.path.join(build, "cli", "tapelab")
    plan = files / "z.json"
    assert run([tapelab, "plan", str(files / "user.tape"), "--checkpoint", "2", "--out", str(plan)])[0] == 0
    kept = plan.read_text()
    rc, _, err = run([tapelab, "tune", str(files / "user.tape"), "--engine", "reference", "--plan", str(plan),
                      "--write-shortlist", str(plan)])
    one_line(err, rc, 2, "tapelab: --write-shortlist ", "an input of this run")
    assert plan.read_text() == kept


def test_python_helpers_never_write_over_their_inputs(build, files):
    csv_in = files / "in.csv"
    csv_in.write_text("engine,strategy,requested,markets,peak_live,registers,local_bytes,spill_store_bytes\n")
    rc, _, err = run([sys.executable, os.path.join(EXPERIMENTS, "calibration_summary.py"), str(csv_in), "--csv", str(csv_in)])
    assert rc != 0 and "Traceback" not in err, err  # no kernels: refused, or the CSV refused; never written
    assert csv_in.read_text().startswith("engine,")
    rc, _, err = run([sys.executable, os.path.join(EXPERIMENTS, "plot_cut_strategies.py"), str(files / "nothing.csv"),
                      str(files / "x.png")])
    one_line(err, rc, 1, "plot_cut_strategies: ")  # a plot failure is one line, not a traceback


# ------------------------------------------------------------------ sizes and counts: exit 2, one line, at once

SWEEP_FLAGS = [("--paths", "0"), ("--paths", "+4"), ("--paths", "1e300"), ("--reps", "0"), ("--reps", "-1"),
               ("--jobs", "100000"), ("--segments", "0"), ("--steps", "0"), ("--steps", "2000000")]


@pytest.mark.parametrize("driver", SWEEPS)
@pytest.mark.parametrize("flag,value", SWEEP_FLAGS)
def test_python_sweeps_refuse_counts_out_of_range(build, driver, flag, value):
    if driver == "peers" and flag == "--segments":
        pytest.skip("peers has no --segments")
    if driver in ("cliff",) and flag == "--steps":
        value = value + ",16"  # cliff's steps are a list
    rc, _, err = run(sweep_cmd(build, driver, flag, value), timeout=30)
    one_line(err, rc, 2, flag)


@pytest.mark.parametrize("driver", ["markets", "strategies", "peers"])
def test_python_sweeps_refuse_more_than_eight_markets(build, driver):
    rc, _, err = run(sweep_cmd(build, driver, "--markets", "9"), timeout=30)
    one_line(err, rc, 2, "--markets")


CPP_FLAGS = {
    "cut_strategies": [("--threads", "100000"), ("--threads", "0"), ("--segments", "0")],
    "gpu_kernels": [("--markets", "9"), ("--reps", "0"), ("--paths", "0"), ("--steps", "0"), ("--segments", "0")],
    "scratch_sweep": [("--markets", "9"), ("--reps", "0"), ("--paths", "0"), ("--jobs", "100000"), ("--warmup-ms", "-1")],
    "tangent_crossover": [("--reps", "0"), ("--paths", "0"), ("--assets", "0")],
    "market_order": [("--markets", "9"), ("--jobs", "100000"), ("--jobs", "0")],
    "calibrate_proxy": [("--markets", "9"), ("--jobs", "100000"), ("--jobs", "0")],
}


@pytest.mark.parametrize("driver,flag,value", [(d, f, v) for d, fs in CPP_FLAGS.items() for f, v in fs])
def test_cpp_drivers_refuse_counts_out_of_range(build, tmp_path, driver, flag, value):
    rc, _, err = run([binary(build, driver), "--quick", flag, value, "--out", str(tmp_path / "x.csv")], timeout=30)
    one_line(err, rc, 2, flag)
