"""The same call from Python and from the CLI gives the same bits, on every engine that runs here.
The CLI prints 17 significant digits (`--json`), so parsing them gives back the exact doubles."""
import threading
import time

import pytest

import tapelab
from conftest import ENGINES, engine_or_skip

RUN_ENGINES = [e for e in ENGINES if e != "cuda"]  # cuda: compile-only here (test_errors.py)
GPU_ENGINES = {"vulkan", "opencl", "cuda", "hip"}  # the GPU emitter's: their configuration has layout=
COMPARED = ["engine", "kernel", "kernel_kind", "segments", "strategy", "precision", "paths", "seed", "value",
            "stderr", "greeks", "greeks_stderr", "layout"]
PATHS, SEED = 3000, 7


def assert_same_bits(result, want, market=0):
    got = result.to_dict(market)
    for key in COMPARED:
        assert got.get(key) == want.get(key), f"{key}: python {got.get(key)!r}, cli {want.get(key)!r}"


def asian(steps=6):
    return tapelab.product("asian", steps=steps)


@pytest.mark.parametrize("engine", RUN_ENGINES)
def test_plain_and_register(engine, usable, cli):
    engine_or_skip(usable, engine)
    base = ["price", "--product", "asian", "--steps", 6, "--engine", engine, "--paths", PATHS, "--seed", SEED]
    assert_same_bits(tapelab.price(asian(), engine, paths=PATHS, seed=SEED), cli.json(*base))
    r = tapelab.price(asian(), engine, paths=PATHS, seed=SEED, strategy="marginal", segments=3)
    assert r.kind == "register" and r.segments == 3
    assert_same_bits(r, cli.json(*base, "--strategy", "marginal", "--checkpoint", 3))


@pytest.mark.parametrize("engine", RUN_ENGINES)
def test_a_ladder_of_markets_without_greeks(engine, usable, cli):
    engine_or_skip(usable, engine)
    want = cli.json("price", "--product", "asian", "--steps", 6, "--engine", engine, "--paths", PATHS, "--seed", SEED,
                    "--set", "vol=0.25", "--ladder", "spot=90,100,110", "--markets", 2, "--no-greeks")
    r = tapelab.price(asian(), engine, paths=PATHS, seed=SEED, inputs={"vol": 0.25}, ladder={"spot": [90, 100, 110]},
                      markets=2, greeks=False)
    assert len(r) == len(want) == 3 and r.greeks == {} and r.greek_array.shape == (3, 0)
    for m in range(3):
        assert_same_bits(r, want[m], m)
        assert r.input_sets[m][0] == [90, 100, 110][m] and r.input_sets[m][2] == 0.25
    assert list(r.values) == [w["value"] for w in want]


@pytest.mark.parametrize("engine", ["vulkan", "opencl"])
def test_a_kernel_compiled_for_its_ladder_reads_what_the_markets_share_once(engine, usable, tmp_path):
    # compile(ladder=) as the CLI's ladders: the inputs a dispatch's markets share (all but spot) are read
    # once (config shared_inputs), with the bits of the kernel that reads them per market; a market that
    # differs in one of them is refused, not priced with market 0's.
    engine_or_skip(usable, engine)
    ladder = {"spot": [95, 105]}
    k = tapelab.compile(asian(), engine, ladder=ladder, dump=str(tmp_path / "shared"))  # markets: the ladder's 2
    assert k.markets == 2
    source = "".join(p.read_text() for p in (tmp_path / "shared").iterdir())
    assert "// inputs every market shares, read once: strike vol rate maturity" in source
    alone = tapelab.compile(asian(), engine, markets=2, dump=str(tmp_path / "alone"))
    assert "inputs every market shares" not in "".join(p.read_text() for p in (tmp_path / "alone").iterdir())
    r, want = k.run(paths=PATHS, seed=SEED, ladder=ladder), alone.run(paths=PATHS, seed=SEED, ladder=ladder)
    assert list(r.values) == list(want.values) and (r.greek_array == want.greek_array).all()
    with pytest.raises(ValueError, match="input 'vol' differs between the markets of one dispatch"):
        k.run(paths=PATHS, seed=SEED, inputs=[{"spot": 95}, {"spot": 105, "vol": 0.3}])
    p = tapelab.price(asian(), engine, paths=PATHS, seed=SEED, ladder=ladder, markets=2)  # price() shares too
    assert list(p.values) == list(want.values)


@pytest.mark.parametrize("engine", RUN_ENGINES)
def test_the_other_precision(engine, usable, cli):
    caps = engine_or_skip(usable, engine)
    other = [p for p in caps["precisions"] if p != caps["default_precision"]]
    if not other:
        pytest.skip(f"{engine} has only {caps['precisions']}")
    want = cli.json("price", "--product", "asian", "--steps", 6, "--engine", engine, "--paths", PATHS, "--seed", SEED,
                    f"--{other[0]}")
    r = tapelab.price(asian(), engine, paths=PATHS, seed=SEED, precision=other[0])
    assert r.precision == other[0]
    assert_same_bits(r, want)


@pytest.mark.parametrize("engine", RUN_ENGINES)
def test_scratch_kernels(engine, usable, cli):
    caps = engine_or_skip(usable, engine)
    if "scratch" not in caps["kinds"]:
        pytest.skip(f"{engine} has no scratch kernel")
    # The scratch buffer's layout is a field of the GPU engines' configuration (the CPU engines have none).
    layout = "aos" if engine in GPU_ENGINES else "soa"
    config = ["--config", "layout=aos"] if engine in GPU_ENGINES else []
    want = cli.json("price", "--product", "asian", "--steps", 6, "--engine", engine, "--paths", PATHS, "--seed", SEED,
                    "--kernel", "scratch", "--checkpoint", 3, *config)
    r = tapelab.price(asian(), engine, paths=PATHS, seed=SEED, kernel="scratch", checkpoint=3,
                      config=config[1] if config else None)
    assert r.kind == "scratch" and r.layout == layout
    assert_same_bits(r, want)


def test_the_layout_keyword_is_retired():
    with pytest.raises(ValueError, match=r'layout= is retired: use config="layout=aos"'):
        tapelab.compile(asian(), "reference", kernel="scratch", layout="aos", checkpoint=3)


@pytest.mark.parametrize("engine", RUN_ENGINES)
def test_a_nested_plan_file_and_a_tape_file(engine, usable, cli, tmp_path):
    engine_or_skip(usable, engine)
    tape = tapelab.product("basket", steps=4, assets=2)
    tape_file, plan_file = tmp_path / "basket.tape", tmp_path / "two-level.json"
    tape.write(str(tape_file))
    tape = tapelab.read_tape(str(tape_file))
    plan = tapelab.plan(tape, "two-level", segments=3, inner=2)
    plan.write(str(plan_file))
    want = cli.json("run", tape_file, "--engine", engine, "--paths", PATHS, "--seed", SEED, "--plan", plan_file,
                    "--set", "strike=95")
    r = tapelab.price(tape, engine, paths=PATHS, seed=SEED, plan=plan, inputs={"strike": 95})
    assert r.plan.same_cuts(plan) and r.plan.depth == 2
    assert_same_bits(r, want)


def test_knobs_act_as_the_variables_do(usable, cli):
    engine = next((e for e in ("vulkan", "opencl") if e in usable), None)
    if engine is None:
        pytest.skip("no GPU engine runs here")
    base = ["price", "--product", "asian", "--steps", 6, "--engine", engine, "--paths", PATHS, "--seed", SEED]
    knobs = {"TAPELAB_PATH_OFFSET": 1 << 33, "TAPELAB_MAX_GROUPS": 1}
    want = cli.json(*base, env={k: str(v) for k, v in knobs.items()})
    r = tapelab.price(asian(), engine, paths=PATHS, seed=SEED, knobs=knobs)
    assert_same_bits(r, want)
    assert r.value != tapelab.price(asian(), engine, paths=PATHS, seed=SEED).value  # other paths
    # One group a dispatch: a dispatch per group, each summed after the one before; no device times here.
    groups = [d["groups"] for d in r.dispatches]
    assert len(groups) > 1 and set(groups) == {1}
    ready = [d["ready_seconds"] for d in r.dispatches]
    assert r.setup_seconds <= ready[0] and ready == sorted(ready) and ready[-1] <= r.seconds
    assert all(d["kernel_seconds"] is None and d["gap_seconds"] is None for d in r.dispatches)
    assert tapelab.price(asian(), "reference", paths=100).dispatches == []


def test_defaults_come_from_the_variables(monkeypatch, cli):
    monkeypatch.setenv("TAPELAB_PATHS", "1234")
    monkeypatch.setenv("TAPELAB_SEED", "99")
    monkeypatch.setenv("TAPELAB_CKPT", "2")
    r = tapelab.price(asian())
    assert (r.paths, r.seed, r.segments, r.engine) == (1234, 99, 2, "reference")
    assert_same_bits(r, cli.json("price", "--product", "asian", "--steps", 6))


def test_a_kernel_runs_many_times():
    k = tapelab.compile(asian(), "reference", segments=2, markets=2)
    assert (k.engine, k.kind, k.markets, k.plan.segments) == ("reference", "register", 2, 2)
    for seed in (1, 2):
        r = k.run(paths=500, seed=seed, ladder={"spot": [95, 105]})
        want = tapelab.price(asian(), "reference", segments=2, paths=500, seed=seed, ladder={"spot": [95, 105]})
        assert list(r.values) == list(want.values) and (r.greek_array == want.greek_array).all()


def test_results_by_name_and_as_arrays():
    r = tapelab.price(asian(), "reference", paths=1000, seed=3, ladder={"spot": [90, 110]})
    assert r.greek_array.shape == r.greek_stderr_array.shape == (2, 5)
    assert r.greeks == dict(zip(asian().inputs, r.greek_array[0]))
    assert r.greeks_stderr["vol"] == r.greek_stderr_array[0, 2]
    assert (r.value, r.stderr) == (r.values[0], r.stderrs[0])
    assert r.markets[1]["value"] == r.values[1]
    assert r.seconds > 0 and r.paths_per_second > 0 and r.compile_seconds >= 0
    assert set(r.kernel_stats.to_dict()) >= {"registers", "spill_bytes", "compile_seconds", "cache_hit"}


def test_the_gil_is_released_while_a_kernel_runs():
    tape = tapelab.product("asian", steps=64)
    k = tapelab.compile(tape, "reference")
    done = threading.Event()
    worker = threading.Thread(target=lambda: (k.run(paths=40000, seed=1), done.set()))
    ticks = 0
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks > 20  # this thread kept running while the other was inside the kernel


def test_engines_as_the_cli_lists_them(cli):
    want = {e["name"]: e for e in cli.json("engines")}
    got = tapelab.engines()
    assert [e["name"] for e in got] == list(want)
    for e in got:
        for key in ("usable", "compile_only", "cpu_device", "reason"):
            assert e[key] == want[e["name"]][key], (e["name"], key)
        assert set(e["kinds"]) <= {"plain", "register", "scratch", "tangent"} and e["precisions"]
