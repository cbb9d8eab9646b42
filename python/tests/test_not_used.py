"""Requests a kernel does not follow (api/montecarlo.cpp resolveKernel's notUsed): a strategy=, seglen=,
budget= or inner= on a tape that auto checkpointing leaves whole runs the plain kernel. Python says so as
the CLI does: Kernel.not_used and Result.not_used (the CLI's --json not_used, to_dict()'s "not_used") and
a RuntimeWarning per line, with the CLI's words, pointing at the caller."""
import warnings

import pytest

import tapelab

PATHS = 1000


def tiny():
    return tapelab.product("asian", steps=4)  # a few dozen nodes, under --ckpt-nodes 768


def test_a_strategy_on_a_tiny_tape_warns_and_is_listed(cli):
    want = cli.json("price", "--product", "asian", "--steps", 4, "--engine", "reference", "--paths", PATHS,
                    "--strategy", "optimal")["not_used"]
    assert len(want) == 1 and want[0].startswith("--strategy optimal: not used: the plain kernel runs"), want
    with pytest.warns(RuntimeWarning) as caught:
        r = tapelab.price(tiny(), "reference", paths=PATHS, strategy="optimal")
    lines = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert lines == ["tapelab: " + want[0]]
    assert caught[0].filename == __file__, "the warning points at tapelab's code, not at the caller"
    assert r.kind == "plain" and r.segments == 1
    assert r.not_used == want
    assert r.to_dict()["not_used"] == want


def test_compile_lists_each_request_and_warns_once_per_line(cli):
    args = ("--strategy", "window", "--seglen", 3, "--budget", 5, "--inner", 2)
    want = cli.json("price", "--product", "asian", "--steps", 4, "--engine", "reference", "--paths", PATHS,
                    *args)["not_used"]
    assert [w.split(":")[0] for w in want] == ["--strategy window", "--seglen", "--budget", "--inner"], want
    with pytest.warns(RuntimeWarning) as caught:
        k = tapelab.compile(tiny(), "reference", strategy="window", seglen=3, budget=5, inner=2)
    assert [str(w.message) for w in caught] == ["tapelab: " + w for w in want]
    assert caught[0].filename == __file__
    assert k.kind == "plain" and k.not_used == want
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a run of that kernel does not warn again
        r = k.run(paths=PATHS)
    assert r.not_used == want and r.to_dict()["not_used"] == want


def test_warnings_as_errors_stop_the_call():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match=r"^tapelab: --strategy optimal: not used: "):
            tapelab.price(tiny(), "reference", paths=PATHS, strategy="optimal")


@pytest.mark.parametrize("options", [{}, {"strategy": "optimal", "checkpoint": 2}, {"checkpoint": "off"},
                                     {"strategy": "uniform", "segments": 2, "seglen": 3}, {"cuts": [9]}])
def test_what_is_followed_says_nothing(options):
    tape = tiny()
    if "cuts" in options:
        options = {"plan": tapelab.plan(tape, cuts=options["cuts"])}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k = tapelab.compile(tape, "reference", **options)
        r = k.run(paths=PATHS)
    assert k.not_used == [] and r.not_used == [] and r.to_dict()["not_used"] == []


def test_a_long_tape_follows_the_strategy(cli):
    tape = tapelab.product("asian", steps=252)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = tapelab.price(tape, "reference", paths=64, strategy="optimal")
    assert r.kind == "register" and r.strategy == "optimal" and r.not_used == []
    assert cli.json("price", "--product", "asian", "--steps", 252, "--engine", "reference", "--paths", 64,
                    "--strategy", "optimal")["not_used"] == []


def test_every_engine_says_what_the_cli_says(cli, usable):
    for engine in [e for e in ("reference", "cpu-jit", "vulkan", "opencl") if e in usable]:
        want = cli.json("price", "--product", "asian", "--steps", 4, "--engine", engine, "--paths", PATHS,
                        "--strategy", "marginal")["not_used"]
        assert want, engine
        with pytest.warns(RuntimeWarning):
            r = tapelab.price(tiny(), engine, paths=PATHS, strategy="marginal")
        assert r.not_used == want, engine


def test_the_provenance_is_the_clis(cli):
    """Where the configuration, plan and kind came from (api/montecarlo.h resolveJob): the CLI's --json
    provenance, the same words from Python."""
    args = ("--product", "asian", "--steps", 4, "--engine", "reference", "--paths", PATHS,
            "--checkpoint", 2, "--config", "math=ieee")
    want = cli.json("price", *args)["provenance"]
    assert want == "config=default+user(math) plan=user kind=default", want
    r = tapelab.price(tiny(), "reference", paths=PATHS, checkpoint=2, config="math=ieee")
    assert r.provenance == want and r.to_dict()["provenance"] == want
    k = tapelab.compile(tiny(), "reference", checkpoint=2, config="math=ieee")
    assert k.provenance == want
