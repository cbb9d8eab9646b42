"""Hostile input, round three (issue 49), from Python: draws that never wrap, from_jax's draw count checked
before JAX allocates, MemoryError for memory, writes that never replace the tape's own file, Ctrl-C while a
reader waits on a FIFO, one output per recording, flags (keywords) beating variables, unknown TAPELAB_*
variables said, messages that stay one line, and a Vulkan price that stops soon after Ctrl-C."""
import os
import signal
import subprocess
import sys
import time

import pytest

import tapelab
from conftest import interrupt_child

SMALL = "tapelab-tape 1\ninput spot 100\nrandn 0\nmul 0 1\noutput 2\n"


def one_line(e):
    text = str(e.value)
    assert text.startswith("tapelab: ") and "\n" not in text, text
    return text


# ---- class 5: Python edges --------------------------------------------------------------------------------

def test_draws_never_wrap_past_the_last_path_index(cli):
    with pytest.raises(ValueError) as e:
        tapelab.draws(42, 10, 2, first_path=2**64 - 5)
    assert one_line(e) == ("tapelab: first_path: 18446744073709551611 + 10 paths pass the last 64-bit path index "
                           "(2^64 - 1); the path index would wrap")
    last = tapelab.draws(42, 5, 2, first_path=2**64 - 5)  # the last five indices are fine
    assert last.shape == (5, 2)
    assert (last != tapelab.draws(42, 5, 2)).all()  # not paths 0-4 again


@pytest.mark.parametrize("keyword,value", [("seed", -1), ("first_path", 4.7), ("paths", 0), ("count", True),
                                           ("paths", 2**48 + 1), ("first_path", 2**64)])
def test_draws_take_whole_numbers_in_range(keyword, value):
    args = {"seed": 42, "paths": 3, "count": 2, "first_path": 0, keyword: value}
    with pytest.raises(ValueError) as e:
        tapelab.draws(args["seed"], args["paths"], args["count"], first_path=args["first_path"])
    assert one_line(e).startswith(f"tapelab: {keyword}: expected an integer")


def test_draws_beyond_memory_raise_memory_error():
    with pytest.raises(MemoryError):
        tapelab.draws(42, 2**48, 2**32 - 1)
    code = ("import resource, tapelab\n"
            "resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))\n"
            "try:\n    tapelab.draws(42, 2**26, 64)\nexcept MemoryError as e:\n    print('MemoryError', e)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.stdout.startswith("MemoryError tapelab: "), p.stdout + p.stderr


@pytest.mark.parametrize("draws", [0, 2**40, 4.7, True, "3", -1])
def test_from_jax_takes_a_draw_count_in_range_before_jax_sees_it(draws):
    with pytest.raises(ValueError) as e:
        tapelab.from_jax(lambda x, z: x["spot"] * z[0], {"spot": 100.0}, draws)
    assert one_line(e).startswith("tapelab: from_jax: draws: expected an integer")


def test_writes_never_replace_the_file_a_tape_was_read_from(tmp_path):
    path = tmp_path / "own.tape"
    path.write_text(SMALL)
    os.symlink(path, tmp_path / "link.json")
    tape = tapelab.read_tape(str(path))
    plan = tapelab.plan(tape, "uniform", segments=2)
    for target in (path, tmp_path / "link.json"):
        with pytest.raises(ValueError) as e:
            plan.write(str(target))
        assert "an input of this run; refusing to overwrite it" in one_line(e)
        with pytest.raises(ValueError) as e:
            tape.write(str(target))
        assert "an input of this run" in one_line(e)
    assert path.read_text() == SMALL
    plan.write(str(tmp_path / "plan.json"))  # anywhere else: written
    assert tapelab.read_plan(str(tmp_path / "plan.json"), tape).same_cuts(plan)
    parsed = tapelab.parse_tape(SMALL, str(path))  # a text, not the file: its label names no input
    parsed.write(str(tmp_path / "copy.tape"))


def test_ctrl_c_while_read_tape_waits_on_a_fifo_is_keyboard_interrupt(tmp_path):
    fifo = str(tmp_path / "pipe.tape")
    os.mkfifo(fifo)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)

    def ctrl_c():  # from outside, as a terminal sends it: to the process, which the waiting thread leads
        return subprocess.Popen(["sh", "-c", f"sleep 0.5; kill -INT {os.getpid()}"])
    try:
        sender = ctrl_c()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            tapelab.read_tape(fifo)  # no writer: the open waits
        assert time.monotonic() - start < 5
        sender.wait()
        sender = ctrl_c()
        with pytest.raises(KeyboardInterrupt):
            tapelab.read_plan(fifo, tapelab.parse_tape(SMALL))
        sender.wait()
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_recording_has_one_output():
    from tapelab.record import Recorder
    rec = Recorder("twice")
    s = rec.input("spot", 100.0)
    rec.output(s * rec.randn(0))
    with pytest.raises(ValueError) as e:
        rec.output(s)
    assert one_line(e).startswith("tapelab: Recorder.output: the output is recorded already (node ")
    assert "output 2" in rec.text()  # the first output stands


# ---- class 4: keywords beat variables; requests not followed are listed -----------------------------------

def test_a_plan_keyword_beats_tapelab_strategy_and_says_so(monkeypatch):
    tape = tapelab.product("asian", steps=16)
    plan = tapelab.plan(tape, "uniform", segments=4)
    monkeypatch.setenv("TAPELAB_STRATEGY", "window")
    monkeypatch.setenv("TAPELAB_SEGLEN", "7")
    with pytest.warns(RuntimeWarning, match="TAPELAB_STRATEGY: not used"):
        r = tapelab.price(tape, "reference", plan=plan, paths=1000)
    assert r.value > 0
    assert any(n.startswith("TAPELAB_STRATEGY: not used: the plan given") for n in r.not_used), r.not_used
    assert any(n.startswith("TAPELAB_SEGLEN: not used") for n in r.not_used), r.not_used


def test_a_strategy_keyword_beats_tapelab_plan(monkeypatch, tmp_path):
    tape = tapelab.product("asian", steps=16)
    tapelab.plan(tape, "uniform", segments=4).write(str(tmp_path / "p.json"))
    monkeypatch.setenv("TAPELAB_PLAN", str(tmp_path / "p.json"))
    with pytest.warns(RuntimeWarning, match="TAPELAB_PLAN: not used"):
        r = tapelab.price(tape, "reference", strategy="window", checkpoint=2, paths=1000)
    assert r.value > 0
    assert any(n.startswith("TAPELAB_PLAN: not used: --strategy, --checkpoint given instead") for n in r.not_used), \
        r.not_used


def test_a_plan_keyword_with_what_makes_a_plan_is_refused():
    tape = tapelab.product("asian", steps=16)
    plan = tapelab.plan(tape, "uniform", segments=4)
    for kw in ({"checkpoint": "off"}, {"seglen": 5}, {"inner": 2}, {"budget": 9}, {"strategy": "window"}):
        with pytest.raises(ValueError) as e:
            tapelab.price(tape, "reference", plan=plan, paths=1000, **kw)
        assert one_line(e).startswith("tapelab: --plan: the file's plan replaces --"), kw


def test_plan_making_keywords_no_strategy_reads_are_listed():
    tape = tapelab.product("asian", steps=16)
    with pytest.warns(RuntimeWarning, match="not used: only the"):
        r = tapelab.price(tape, "reference", checkpoint=4, seglen=5, inner=3, paths=1000)  # window's plan
    assert "--seglen: not used: only the uniform strategy reads it; this kernel's plan is window's" in r.not_used
    assert "--inner: not used: only the two-level strategy reads it; this kernel's plan is window's" in r.not_used


# ---- class 7: messages --------------------------------------------------------------------------------------

def test_errors_escape_control_characters():
    with pytest.raises(ValueError) as e:
        tapelab.price(tapelab.parse_tape(SMALL), "reference", paths=100, config="lanes=4\n\x1b[31mred")
    text = one_line(e)
    assert "\\n" in text and "\\e[31m" in text and "\x1b" not in text


def test_unknown_tapelab_variables_are_said_at_import_as_the_cli_says_them(cli):
    env = dict(os.environ, TAPELAB_PATH="1000")
    p = subprocess.run([sys.executable, "-W", "always", "-c", "import tapelab"], capture_output=True, text=True, env=env)
    assert "RuntimeWarning: tapelab: TAPELAB_PATH is set but tapelab reads no such variable (ignored; did you mean "
    "TAPELAB_PATHS?)" in p.stderr, p.stderr
    rc, _, err = cli("engines", env={"TAPELAB_PATH": "1000"})
    assert rc == 0
    assert "tapelab: warning: TAPELAB_PATH is set but tapelab reads no such variable (ignored; did you mean " \
           "TAPELAB_PATHS?)" in err, err


def test_a_vulkan_price_stops_soon_after_ctrl_c(usable):
    if "vulkan" not in usable:
        pytest.skip("vulkan does not run here")
    err, code, took = interrupt_child(
        "import signal, tapelab\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "k = tapelab.compile(tapelab.product('asian', steps=64), 'vulkan', checkpoint='off')\n"
        "k.run(paths=1000)\nprint('ready', flush=True)\nk.run(paths=2**34)\nprint('finished', flush=True)\n",
        timeout=30)
    assert "KeyboardInterrupt" in err and code != 0, err
    assert took < 1.0, f"KeyboardInterrupt {took:.2f} s after SIGINT (was 5-8.5 s: one launch of a million paths)"
