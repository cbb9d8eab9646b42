"""Hostile and careless input from Python (issue 33, README "Faults"): the same one-line errors as
the CLI, readers bounded in depth, counts checked where they enter, non-finite results warned
about, outputs that never clobber, and Ctrl-C that stops a long price or compile promptly."""
import math
import os
import re
import signal
import threading
import time
import warnings

import pytest

import tapelab
from conftest import interrupt_child

OVERFLOW = "tapelab-tape 1\ninput spot 1000\nrandn 0\nconst 0\nmul 1 2\nadd 0 3\nexp 4\noutput 5\n"


def small():
    return tapelab.parse_tape("tapelab-tape 1\ninput spot 100\nrandn 0\nmul 0 1\noutput 2\n", "small.tape")


def one_line(e):
    text = str(e.value)
    assert text.startswith("tapelab: ") and "\n" not in text, text
    return text


def test_deep_plan_nesting_is_one_line():
    tape = tapelab.product("asian", steps=400)
    deep = "[{\"cuts\": [500], \"inner\": " * 5000 + "[null, null]" + "}, null]" * 5000
    text = ('{"format": "tapelab-plan 1", "tape": {"nodes": %d, "structure": "%s"}, "cuts": [1000], "inner": %s}'
            % (len(tape), tape.structure, deep))
    with pytest.raises(ValueError) as e:
        tapelab.parse_plan(text, tape, "deep.json")
    assert one_line(e).startswith("tapelab: deep.json: (file): line 1, column ")
    assert "nested deeper than 520 levels" in str(e.value)
    inner = [None, None]
    for _ in range(5000):
        inner = [{"cuts": [500], "inner": inner}, None]
    with pytest.raises(ValueError) as e:
        tapelab.plan(tape, cuts=[1000], inner=inner)
    assert "nested deeper" in one_line(e)


@pytest.mark.parametrize("paths", [2**64 - 1, 2**64, 2**48 + 1, 0, -1])
def test_path_counts_are_checked_at_the_edge(cli, paths):
    rc, line = cli.error("price", "--product", "asian", "--steps", 4, "--paths", paths)
    assert rc == 2
    with pytest.raises(ValueError) as e:
        tapelab.price(small(), "reference", paths=paths)
    assert one_line(e) == line.replace("--paths", "paths")


@pytest.mark.parametrize("value", ["100", 1.5, True, None.__class__])
def test_paths_and_seed_of_another_type_are_one_line(value):
    for keyword in ("paths", "seed"):
        with pytest.raises(ValueError) as e:
            tapelab.price(small(), "reference", **{keyword: value})
        assert one_line(e).startswith(f"tapelab: {keyword}: expected an integer, got ")


def test_tapelab_paths_variable_is_checked_like_the_flag(cli, monkeypatch):
    env = {"TAPELAB_PATHS": "18446744073709551615"}
    rc, line = cli.error("price", "--product", "asian", "--steps", 4, env=env)
    monkeypatch.setenv("TAPELAB_PATHS", "18446744073709551615")
    with pytest.raises(ValueError) as e:
        tapelab.price(tapelab.product("asian", steps=4), "reference")
    assert one_line(e) == line


def test_what_is_not_a_tape_is_one_line():
    for call in (lambda: tapelab.price(None), lambda: tapelab.compile(None), lambda: tapelab.plan(None),
                 lambda: tapelab.price("x.tape")):
        with pytest.raises(ValueError) as e:
            call()
        assert one_line(e).startswith("tapelab: tape: expected a tapelab.Tape")


def test_markets_are_one_to_eight_on_every_engine(usable):
    for engine in [e for e in ("reference", "cpu-jit") if e in usable]:
        for markets in (0, 9, 1000):
            with pytest.raises(ValueError) as e:
                tapelab.compile(small(), engine, markets=markets)
            assert one_line(e) == f"tapelab: --markets: expected 1..8, got {markets}"
    with pytest.raises(ValueError) as e:
        tapelab.compile(small(), "reference", markets="2")
    assert one_line(e).startswith("tapelab: --markets: expected an integer")


def test_set_and_ladder_on_one_input_is_refused(cli):
    rc, line = cli.error("price", "--product", "asian", "--steps", 4, "--set", "spot=90", "--ladder", "spot=1,2")
    with pytest.raises(ValueError) as e:
        tapelab.price(tapelab.product("asian", steps=4), inputs={"spot": 90}, ladder={"spot": [1, 2]})
    assert one_line(e) == line


def test_a_value_that_underflows_is_refused(cli):
    rc, line = cli.error("price", "--product", "asian", "--steps", 4, "--set", "spot=1e-400")
    with pytest.raises(ValueError) as e:
        tapelab.price(tapelab.product("asian", steps=4), inputs={"spot": "1e-400"})
    assert one_line(e) == line


def test_non_finite_results_warn_and_say_nan(usable):
    tape = tapelab.parse_tape(OVERFLOW, "overflow.tape")
    for engine in [e for e in ("reference", "reference-f32", "cpu-jit", "vulkan", "opencl") if e in usable]:
        with pytest.warns(RuntimeWarning, match=r"^tapelab: not finite: value, d/d spot \("):
            r = tapelab.price(tape, engine, paths=2048)
        assert math.isnan(r.value) and math.isnan(r.stderr), engine
        d = r.to_dict()
        assert d["value"] == "nan" and d["non_finite"] == ["value", "d/d spot"], engine
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "non_finite" not in tapelab.price(small(), "reference", paths=1000).to_dict()


def test_plan_write_never_clobbers(tmp_path):
    tape = small()
    p = tapelab.plan(tape, "window", segments=2)
    with pytest.raises(RuntimeError) as e:
        p.write("/dev/full")
    assert one_line(e) == "tapelab: --out /dev/full: cannot write: No space left on device"
    with pytest.raises(ValueError) as e:
        p.write(str(tmp_path))
    assert one_line(e) == f"tapelab: --out {tmp_path}: a directory, not a file"
    (tmp_path / "target.json").write_text("old")
    os.symlink(tmp_path / "target.json", tmp_path / "link.json")
    p.write(str(tmp_path / "link.json"))
    assert os.path.islink(tmp_path / "link.json")
    assert tapelab.read_plan(str(tmp_path / "target.json"), tape).same_cuts(p)


def test_read_plan_says_why(tmp_path):
    tape = small()
    with pytest.raises(ValueError) as e:
        tapelab.read_plan(str(tmp_path / "missing.json"), tape)
    assert one_line(e) == f"tapelab: {tmp_path}/missing.json: (file): no such file"
    with pytest.raises(ValueError) as e:
        tapelab.read_plan(str(tmp_path), tape)
    assert one_line(e) == f"tapelab: {tmp_path}: (file): a directory, not a file"
    p = tapelab.plan(tape, "window", segments=2)
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + p.to_json().encode())
    assert tapelab.read_plan(str(tmp_path / "bom.json"), tape).same_cuts(p)


@pytest.fixture
def ctrl_c():
    """Python's own SIGINT handler (KeyboardInterrupt), whatever the process started with: a shell starts a
    background job with SIGINT ignored, and then Python installs none and a Ctrl-C test would run for hours."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _interrupt_after(seconds):
    def send():
        time.sleep(seconds)
        os.kill(os.getpid(), signal.SIGINT)
    t = threading.Thread(target=send, daemon=True)
    t.start()
    return t


def test_ctrl_c_stops_a_long_price_promptly(ctrl_c):
    k = tapelab.compile(tapelab.product("asian", steps=64), "reference", checkpoint="off")
    sender = _interrupt_after(1.0)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        k.run(paths=10**10)  # hours on the reference interpreter
    took = time.monotonic() - start
    sender.join()
    assert took < 6, f"KeyboardInterrupt after {took:.1f} s"
    assert k.run(paths=1000).value > 0  # the kernel and the process are fine afterwards


def _children():
    out = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def test_ctrl_c_stops_a_cpu_jit_compile_and_leaves_nothing_behind(usable, tmp_path, ctrl_c):
    if "cpu-jit" not in usable:
        pytest.skip("cpu-jit does not run here")
    knobs = {"TAPELAB_CACHE_DIR": str(tmp_path), "TAPELAB_JIT_PCH": 0}
    tape = tapelab.product("asian", steps=3000)
    sender = _interrupt_after(1.5)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        tapelab.compile(tape, "cpu-jit", checkpoint="off", knobs=knobs)
    took = time.monotonic() - start
    sender.join()
    assert took < 10, f"KeyboardInterrupt after {took:.1f} s"
    assert _children() == [], "a compiler outlived the interrupt"
    leftovers = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs if ".tmp" in f]
    assert leftovers == []
    assert tapelab.price(small(), "cpu-jit", paths=1000, knobs=knobs).value != 0


# ---- in a child process: Ctrl-C as a terminal sends it, to the whole interpreter -----------------------

CHILD = """
import signal, sys, tapelab
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even if started with SIGINT ignored
tape = tapelab.product("asian", steps=64)
k = tapelab.compile(tape, sys.argv[1], checkpoint=sys.argv[2])
k.run(paths=1000)
print("ready", flush=True)
k.run(paths=2**40)  # hours on any CPU engine
print("finished", flush=True)
"""


@pytest.mark.parametrize("engine,checkpoint", [("reference", "off"), ("reference", "4"), ("cpu-jit", "off"),
                                               ("cpu-jit", "4")])
def test_sigint_to_a_child_running_a_long_price_raises_keyboard_interrupt(usable, engine, checkpoint):
    if engine not in usable:
        pytest.skip(f"{engine} does not run here")
    err, code, took = interrupt_child(CHILD, engine, checkpoint)
    assert "KeyboardInterrupt" in err, err
    assert code != 0, "finished instead of stopping"
    assert took < 3, f"the child stopped {took:.1f} s after SIGINT"


# ---- a path offset that wraps the 64-bit path index ----------------------------------------------------

WRAPS = 18446744073709551000  # + 1000 paths passes 2^64 - 1
LAST = 18446744073709550616  # the last 1000 path indices: fine


def test_a_path_offset_that_wraps_is_one_line_as_the_cli_says(cli, monkeypatch):
    rc, line = cli.error("price", "--product", "asian", "--steps", 4, "--paths", 1000,
                         env={"TAPELAB_PATH_OFFSET": str(WRAPS)})
    assert rc == 2 and "the path index would wrap" in line, line
    with pytest.raises(ValueError) as e:
        tapelab.price(tapelab.product("asian", steps=4), "reference", paths=1000, knobs={"TAPELAB_PATH_OFFSET": WRAPS})
    assert one_line(e) == line
    monkeypatch.setenv("TAPELAB_PATH_OFFSET", str(WRAPS))
    with pytest.raises(ValueError) as e:
        tapelab.price(tapelab.product("asian", steps=4), "reference", paths=1000)
    assert one_line(e) == line
    monkeypatch.delenv("TAPELAB_PATH_OFFSET")
    assert tapelab.price(small(), "reference", paths=1000, knobs={"TAPELAB_PATH_OFFSET": LAST}).paths == 1000


@pytest.mark.parametrize("offset", ["abc", 2**64, -1])
def test_a_path_offset_that_is_no_index_is_one_line(cli, offset):
    rc, line = cli.error("price", "--product", "asian", "--steps", 4, env={"TAPELAB_PATH_OFFSET": str(offset)})
    with pytest.raises(ValueError) as e:
        tapelab.price(tapelab.product("asian", steps=4), "reference", paths=1000, knobs={"TAPELAB_PATH_OFFSET": offset})
    assert one_line(e) == line
    assert line.startswith("tapelab: TAPELAB_PATH_OFFSET: expected an unsigned integer, got "), line


# ---- the tape reader on what is not a tape: one line, bounded ------------------------------------------

READER = """
import resource, sys, tapelab
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a reader that slurps /dev/zero dies here
try:
    tapelab.read_tape(sys.argv[1])
except ValueError as e:
    print(e)
    sys.exit(2)
print("read")
"""


@pytest.mark.parametrize("path,message", [
    ("/dev/zero", "tapelab: /dev/zero:1: binary data (control byte 0), not a tape"),
    # Random bytes: a control byte usually comes first, but about 1 time in 31 a newline does, and
    # then that line is simply not the header (an empty one is skipped). Both are right.
    ("/dev/urandom", re.compile(r"tapelab: /dev/urandom:\d+: (binary data \(control byte \d+\), not a tape|"
                                r"not a tapelab tape \(the first line must be 'tapelab-tape 1'\))\n")),
    ("/dev/null", "tapelab: /dev/null:1: empty file"),
])
def test_read_tape_of_a_device_is_one_line_not_a_hang(cli, path, message):
    import subprocess
    import sys
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-c", READER, path], capture_output=True, text=True, timeout=30)
    took = time.monotonic() - start
    assert p.returncode == 2, p.stdout + p.stderr
    if isinstance(message, str):
        assert p.stdout.count("\n") == 1 and p.stdout.startswith(message), p.stdout
    else:
        assert message.fullmatch(p.stdout), p.stdout
    assert took < 20, f"{took:.1f} s"
    if path == "/dev/zero":
        assert cli.error("run", path)[1] == p.stdout.strip()


def test_read_tape_of_what_is_no_file_is_one_line(tmp_path, cli):
    for path, why in ((str(tmp_path), "a directory, not a file"), (str(tmp_path / "none.tape"), "no such file")):
        with pytest.raises(ValueError) as e:
            tapelab.read_tape(path)
        assert one_line(e) == f"tapelab: {path}:0: {why}"
        assert cli.error("run", path)[1] == one_line(e)


# ---- Tape.write: the CLI's writer (util/files.h writeOutputFile), the same refusals --------------------

def test_tape_write_never_clobbers(tmp_path):
    import socket
    tape = small()
    with pytest.raises(ValueError) as e:
        tape.write(str(tmp_path))
    assert one_line(e) == f"tapelab: --out {tmp_path}: a directory, not a file"
    with pytest.raises(RuntimeError) as e:
        tape.write("/dev/full")
    assert one_line(e) == "tapelab: --out /dev/full: cannot write: No space left on device"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s.tape"))
        with pytest.raises(ValueError) as e:
            tape.write(str(tmp_path / "s.tape"))
        assert one_line(e) == f"tapelab: --out {tmp_path}/s.tape: a socket, not a file"
    finally:
        sock.close()
    tape.write("/dev/null")  # a character device is written in place and stays one
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    (tmp_path / "target.tape").write_text("old")
    os.symlink(tmp_path / "target.tape", tmp_path / "link.tape")
    tape.write(str(tmp_path / "link.tape"))  # through the link: the link stays, its target gets the tape
    assert os.path.islink(tmp_path / "link.tape")
    assert (tmp_path / "target.tape").read_text() == tape.text()
    fifo = str(tmp_path / "fifo.tape")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    tape.write(fifo)
    reader.join(10)
    assert got == [tape.text()] and not os.path.isfile(fifo)
    assert [f for f in os.listdir(tmp_path) if ".tmp" in f] == []
