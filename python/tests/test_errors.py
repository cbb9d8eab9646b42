"""Errors are Python exceptions whose text is the one line the CLI prints: ValueError where the CLI
exits 2 (invalid input), tapelab.EngineUnavailable where it exits 3, RuntimeError where it exits 1."""
import stat

import pytest

import tapelab

ASIAN = ["--product", "asian", "--steps", 4]


def asian():
    return tapelab.product("asian", steps=4)


def check(cli, cli_args, exception, call, exit_code, env=None):
    rc, line = cli.error(*cli_args, env=env)
    assert rc == exit_code, line
    with pytest.raises(exception) as e:
        call()
    assert type(e.value) is exception and str(e.value) == line
    assert "\n" not in str(e.value)


def test_exception_types():
    assert issubclass(tapelab.EngineUnavailable, RuntimeError)


def test_an_unknown_engine(cli):
    check(cli, ["price", *ASIAN, "--engine", "nope"], ValueError, lambda: tapelab.price(asian(), "nope"), 2)


def test_an_engine_that_cannot_run_here(cli, usable):
    name = next((e["name"] for e in tapelab.engines() if not e["usable"]), None)
    if name is None:
        pytest.skip("every engine runs here")
    check(cli, ["price", *ASIAN, "--engine", name, "--paths", 100], tapelab.EngineUnavailable,
          lambda: tapelab.price(asian(), name, paths=100), 3)
    check(cli, ["price", *ASIAN, "--engine", name], tapelab.EngineUnavailable,
          lambda: tapelab.price(asian(), name, strategy=lambda t, s: [10, 20]), 3)


def test_too_many_segments(cli):
    check(cli, ["price", *ASIAN, "--checkpoint", 100], ValueError, lambda: tapelab.price(asian(), checkpoint=100), 2)
    check(cli, ["price", *ASIAN, "--checkpoint", 0], ValueError, lambda: tapelab.price(asian(), checkpoint=0), 2)


def test_a_kernel_the_engine_lacks(cli, usable):
    if "cpu-jit" not in usable:
        pytest.skip("cpu-jit does not run here")
    check(cli, ["price", *ASIAN, "--engine", "cpu-jit", "--kernel", "scratch", "--checkpoint", 2], ValueError,
          lambda: tapelab.price(asian(), "cpu-jit", kernel="scratch", checkpoint=2), 2)


def test_a_bad_variable_and_a_bad_knob(cli, monkeypatch):
    env = {"TAPELAB_MAX_GROUPS": "x"}
    check(cli, ["price", *ASIAN], ValueError, lambda: tapelab.price(asian(), knobs=env), 2, env=env)
    monkeypatch.setenv("TAPELAB_MAX_GROUPS", "x")
    check(cli, ["price", *ASIAN], ValueError, lambda: tapelab.price(asian()), 2)


def test_knobs_that_are_not_knobs():
    with pytest.raises(ValueError, match=r"^tapelab: knobs: unknown variable 'TAPELAB_NOPE'"):
        tapelab.price(asian(), knobs={"TAPELAB_NOPE": 1})
    with pytest.raises(ValueError, match=r"^tapelab: knobs: TAPELAB_PATHS is not a knob of a run here"):
        tapelab.price(asian(), knobs={"TAPELAB_PATHS": 10})


def test_a_malformed_plan_file_and_a_plan_on_a_plain_kernel(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tapelab-plan 1",\n "cuts": [1, }')
    check(cli, ["price", *ASIAN, "--plan", bad], ValueError, lambda: tapelab.read_plan(str(bad), asian()), 2)
    good = tmp_path / "good.json"
    tapelab.plan(asian(), "window", segments=3).write(str(good))
    check(cli, ["price", *ASIAN, "--plan", good, "--kernel", "plain"], ValueError,
          lambda: tapelab.price(asian(), plan=tapelab.read_plan(str(good), asian()), kernel="plain"), 2)
    check(cli, ["price", *ASIAN, "--plan", tmp_path / "missing.json"], ValueError,
          lambda: tapelab.read_plan(str(tmp_path / "missing.json"), asian()), 2)


def test_a_plan_for_another_tape():
    other = tapelab.plan(tapelab.product("european", steps=4), "window", segments=2)
    with pytest.raises(ValueError, match=r"^tapelab: --plan: the plan was made for another tape \(european-4\)$"):
        tapelab.price(asian(), plan=other)


def test_bad_inputs_name_the_cli_flag():
    with pytest.raises(ValueError, match=r"^tapelab: --set: the tape has no input 'nope' \(inputs: spot, strike"):
        tapelab.price(asian(), inputs={"nope": 1})
    with pytest.raises(ValueError, match=r"^tapelab: --set vol: 'nan' is not a finite number$"):
        tapelab.price(asian(), inputs={"vol": float("nan")})
    with pytest.raises(ValueError, match=r"^tapelab: --paths: need at least 2 paths for a standard error$"):
        tapelab.price(asian(), paths=1)
    with pytest.raises(ValueError, match=r"^tapelab: precision: expected fp32 or fp64, got 'fp16'$"):
        tapelab.price(asian(), precision="fp16")


def test_a_failed_compile_is_a_runtime_error(cli, usable, tmp_path):
    if "cpu-jit" not in usable:
        pytest.skip("cpu-jit does not run here")
    fake = tmp_path / "fakecxx"  # answers cpu-jit's probe, then fails every compile
    fake.write_text('#!/bin/sh\nfor a in "$@"; do [ "$a" = "-dM" ] && { echo "#define __GNUC__ 12"; exit 0; }; done\n'
                    'echo "fakecxx: error: compiles nothing" >&2; exit 1\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {"TAPELAB_CXX": str(fake), "TAPELAB_CACHE_DIR": str(tmp_path / "cache"), "TAPELAB_JIT_PCH": "0"}
    check(cli, ["price", *ASIAN, "--engine", "cpu-jit", "--paths", 100], RuntimeError,
          lambda: tapelab.price(asian(), "cpu-jit", paths=100, knobs=env), 1, env=env)
