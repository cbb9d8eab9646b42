"""experiments/benchlib without a build: the statistics of timing.py, the careful writer, and the bench's
figures from rows (each passes papers/style.py's checks, a strategy keeps its look, the user's stands out).
CTest: experiment_benchlib.   /usr/bin/python3 -m pytest -q -p no:cacheprovider experiments/tests
"""
import os
import stat
import sys

import pytest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import output, report, timing  # noqa: E402

import matplotlib  # noqa: E402

style = report.style


def test_the_median_interval_is_the_order_statistics_with_their_coverage():
    lo, hi, cov = timing.median_ci([5, 1, 4, 2, 3])  # 5 runs: no 95% interval, [min, max] at 93.75%
    assert (lo, hi, round(cov, 4)) == (1, 5, 0.9375)
    lo, hi, cov = timing.median_ci(list(range(1, 10)))  # 9 runs: [x(2), x(8)] at 96.1%
    assert (lo, hi, round(cov, 3)) == (2, 8, 0.961)
    lo, hi, cov = timing.median_ci(list(range(1, 21)))  # 20 runs: [x(6), x(15)] at 95.9%
    assert (lo, hi, round(cov, 3)) == (6, 15, 0.959)


def test_rounds_rotate_and_reverse_so_no_kernel_always_runs_first():
    assert [timing.order_of("AB", r) for r in range(4)] == [list("AB"), list("BA"), list("BA"), list("AB")]
    orders = [timing.order_of("ABC", r) for r in range(6)]
    assert orders[:4] == [list("ABC"), list("CBA"), list("BCA"), list("ACB")]
    assert sorted(o[0] for o in orders) == list("AABBCC") and sorted(o[-1] for o in orders) == list("AABBCC")


def test_interleaved_runs_warm_up_then_take_rounds_in_turn():
    calls = []
    runs = {k: (lambda k=k: calls.append(k) or 1.0) for k in "AB"}
    out = timing.interleaved(runs, 4, warmup=1)
    assert "".join(calls) == "AB" + "AB" + "BA" + "BA" + "AB"
    assert out == {"A": [1.0] * 4, "B": [1.0] * 4}


def test_a_ratio_whose_interval_holds_one_is_not_resolved():
    plain = [10, 11, 10, 12, 10, 11, 10]
    same = [10.5, 10, 11, 11, 10, 10.5, 10.2]
    faster = [5, 5.5, 5, 6, 5, 5.5, 5]
    assert timing.verdict(timing.ratio(plain, same), "x").endswith("not resolved at this noise")
    r = timing.ratio(plain, faster)
    assert timing.verdict(r, "x") == "" and 1.9 < r.value < 2.1


def test_three_significant_figures():
    assert [timing.sig(x) for x in (1.2345, 0.045678, 12345, 123.4, 0)] == ["1.23", "0.0457", "12,300", "123", "0"]


def test_the_writer_never_writes_onto_an_input_or_replaces_a_special_file(tmp_path):
    # The drivers' one writer (drivers/careful.py, as util/files.h): an input refused, a directory refused,
    # a FIFO or a character device written in place, never replaced.
    src = tmp_path / "mine.tape"
    src.write_text("input")
    with pytest.raises(output.OutputError, match="is an input of this run"):
        output.write_text(str(src), "x", inputs=[str(src)])
    assert src.read_text() == "input"
    (tmp_path / "dir").mkdir()
    with pytest.raises(output.OutputError, match="a directory, not a file"):
        output.write_text(str(tmp_path / "dir"), "x")
    output.write_text("/dev/null", "x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer's open does not wait
    try:
        output.write_text(str(fifo), "through")
        assert os.read(fd, 100) == b"through"
    finally:
        os.close(fd)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    output.write_text(str(tmp_path / "d" / "out.csv"), "a,b\n")
    assert (tmp_path / "d" / "out.csv").read_text() == "a,b\n" and os.listdir(tmp_path / "d") == ["out.csv"]


def rows():
    out = []
    for tape, nodes in (("cev", 300), ("heston", 900)):
        out.append({"tape": tape, "nodes": nodes, "strategy": "plain", "source": "plain", "requested_segments": 1,
                    "peak_live": 400, "recompute_cost": 0})
        for i, s in enumerate(["window", "optimal", "revolve", "live_minima"]):
            for n in (4, 8, 16):
                out.append({"tape": tape, "nodes": nodes, "strategy": s, "source": "python" if s == "live_minima" else
                            "builtin", "requested_segments": n, "peak_live": 400 // n + 3 * i,
                            "recompute_cost": 100.0 * n * (1 + i)})
                out.append({**out[-1], "engine": "cpu-jit", "vs_plain": 0.9 + 0.01 * i, "vs_plain_lo": 0.85,
                            "vs_plain_hi": 0.95 + 0.01 * i, "ms": 2.0, "ms_lo": 1.9, "ms_hi": 2.2})
    return out


def test_the_bench_figures_pass_the_papers_checks_and_keep_each_strategys_look(tmp_path):
    st = style.StrategyStyles(["live_minima"])
    metric = [r for r in rows() if not r.get("engine")]
    figs = [report.pareto_figure(metric, "fp32; a caption", st),
            report.speed_figure(rows(), "fp32, 2,000 paths", st, {"cpu-jit": "a CPU"}, cpu=True)]
    for f in figs:
        fig = report.save_figure(f, str(tmp_path / "f.png"), [])
        drawn = []  # (label, line): plotted lines, and the data line of each error-bar series
        for ax in fig.axes:
            assert ax.get_title() and style.has_unit(ax.get_xlabel()) and style.has_unit(ax.get_ylabel())
            drawn += [(ln.get_label(), ln) for ln in ax.get_lines()]
            drawn += [(c.get_label(), c.lines[0]) for c in ax.containers if hasattr(c, "has_xerr")]
        for label, line in drawn:
            if label in ("window", "optimal", "revolve", "live_minima"):
                assert matplotlib.colors.to_hex(line.get_color()) == st[label]["color"]
                assert line.get_marker() == st[label]["marker"]
        mine = [ln for label, ln in drawn if label == "live_minima"]
        assert mine and all(ln.get_marker() == "*" and ln.get_markeredgecolor() == "black" for ln in mine)
    pareto = figs[0].fig
    assert [ax.get_xscale() for ax in pareto.axes] == ["log", "log"]  # peak_live spans decades here
    assert any("Pareto front" in ln.get_label() for ln in pareto.axes[0].get_lines())
