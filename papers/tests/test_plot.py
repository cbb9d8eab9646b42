"""papers/plot.py and papers/style.py: every figure renders from the committed CSVs, is the committed file
byte for byte (same inputs, same bytes), keeps the style rules (papers/style.py check), and draws error
bars from the drivers' spread columns or says that none was recorded. CTest: paper_plot.

  /usr/bin/python3 -m pytest -q -p no:cacheprovider papers/tests
"""
import filecmp
import os
import sys

import pytest

sys.dont_write_bytecode = True
PAPERS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PAPERS)
sys.path.insert(0, os.path.join(os.path.dirname(PAPERS), "experiments", "drivers"))
import plot  # noqa: E402
import style  # noqa: E402

import matplotlib  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402

DATA = os.path.join(PAPERS, "data")


def render(data, out_dir, *flags, keep=None):
    """plot.main over data into out_dir; `keep`: a dict that receives each matplotlib figure by name."""
    if keep is not None:
        saved = style.save

        def save(fig, path, *_):
            keep[os.path.basename(path)[:-4]] = fig
            fig.savefig(path, metadata={"Software": None}, bbox_inches="tight", pad_inches=0.03)

        plot.style.save = save
    try:
        return plot.main([str(data), str(out_dir), *flags])
    finally:
        if keep is not None:
            plot.style.save = saved


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    out = tmp_path_factory.mktemp("committed")
    figs = {}
    drawn = render(DATA, out, keep=figs)
    drawn.figures = figs
    return out, drawn


def test_every_figure_renders_from_the_committed_csvs_and_is_the_committed_file(committed):
    out_dir, out = committed
    made = sorted(os.listdir(out_dir / "figures"))
    assert made == sorted(os.listdir(os.path.join(PAPERS, "figures"))), "papers/figures is not what plot.py draws"
    assert len(made) >= 14
    for name in made:
        assert os.path.getsize(out_dir / "figures" / name) > 10000, name
        assert filecmp.cmp(out_dir / "figures" / name, os.path.join(PAPERS, "figures", name), shallow=False), \
            f"papers/figures/{name} is stale: run papers/build.sh"
    for name in sorted(os.listdir(out_dir / "tables")):
        assert filecmp.cmp(out_dir / "tables" / name, os.path.join(PAPERS, "tables", name), shallow=False), \
            f"papers/tables/{name} is stale: run papers/build.sh"
    assert all(d["panels"] >= 1 for d in out.drawn.values())


def test_the_same_csvs_give_the_same_bytes(committed, tmp_path):
    first, _ = committed
    render(DATA, tmp_path)
    for sub in ("figures", "tables"):
        for name in os.listdir(first / sub):
            assert filecmp.cmp(first / sub / name, tmp_path / sub / name, shallow=False), name


def test_cpu_served_timings_are_marked_in_the_figure_and_gpu_ones_are_not(committed):
    _, out = committed
    for name, d in out.drawn.items():
        cpu = d["timings"] and plot.cpu_served(name.split("-", 1)[-1] if "-" in name else "")
        if name in ("cliff-cpu-quick", "segments-cpu-quick", "tangent_crossover-cpu"):
            assert cpu
        assert (style.CPU_BANNER in d["texts"]) == bool(cpu), name
    assert out.drawn["cliff-cpu-quick"]["cpu_served"] and not out.drawn["cliff-h200"]["cpu_served"]


def test_every_timing_figure_has_error_bars_or_says_no_spread_was_recorded(committed):
    _, out = committed
    timing = [n for n, d in out.drawn.items() if d["timings"]]
    assert {"cliff-h200", "segments-h200", "markets", "peers", "strategies", "tangent_crossover-h200",
            "compare-h200", "seglen_layout-h200"} <= set(timing)
    for name in timing:
        d = out.drawn[name]
        assert d["errorbars"] or any("no spread recorded" in t for t in d["texts"]), name
    assert not out.drawn["zoo-cpu"]["timings"] and not out.drawn["registers-cuda-sm90"]["timings"]


def test_no_panel_is_drawn_empty_what_is_left_out_is_said(committed):
    _, out = committed
    zoo = out.drawn["zoo-cpu"]  # its sm_90 panels (registers, spills) only where the CSV has them filled
    _, rows = plot.read(os.path.join(DATA, "zoo-cpu.csv"))
    reg = [r for r in rows if r["strategy"] != "plain" and plot.num(r.get("sm90_registers")) is not None]
    if any(plot.num(r["sm90_spill_bytes"]) for r in reg):
        assert zoo["panels"] == 4
    elif reg:  # no register kernel spills: (d) left out, said
        assert zoo["panels"] == 3 and any("spill stores" in n for n in zoo["notes"])
    else:
        assert zoo["panels"] == 2 and any("sm_90 registers" in n for n in zoo["notes"])
    if any(plot.num(r.get("ms")) for r in rows):  # its timings in their own figure, marked CPU-served
        assert out.drawn["zoo_timings-cpu"]["timings"] and out.drawn["zoo_timings-cpu"]["cpu_served"]
    strategies = out.drawn["strategies"]  # cuda and vulkan, 1 and 7 markets (Vulkan's 7-market panel: 2026-12-03b)
    assert strategies["panels"] == 4 and not any("cut short" in n for n in strategies["notes"])
    assert any("revolve on vulkan at 7 markets" in n for n in strategies["notes"])  # --skip revolve@7, said


def test_one_quantity_per_axis_with_its_unit(committed):
    _, out = committed
    for name, fig in out.figures.items():
        for ax in fig.axes:
            y = ax.get_ylabel()
            assert not ("spill" in y and "register" in y), (name, y)
            if "throughput" in y:
                assert y.endswith("(Mpath/s)") or y.endswith("(M market-paths/s)"), (name, y)
            if "spill" in y:
                assert "(bytes/thread)" in y, (name, y)
    cliff = [ax.get_ylabel() for ax in out.figures["cliff-h200"].axes]
    assert cliff == ["throughput (Mpath/s)", "spills (bytes/thread)", "registers per thread"]


SWEEP = ("steps,engine,kernel,layout,strategy,seglen,segments,slots,paths,markets,ms,ms_min,ms_max,reps,mpath_s,"
         "ratio_to_plain,registers,spill_bytes\n")


def write_cliff(path, spread=True):
    rows = [(16, "plain", 2.0, 1.0, 4.0), (48, "plain", 4.0, 3.0, 8.0), (16, "register", 1.0, 0.5, 1.25),
            (48, "register", 2.0, 2.0, 2.0)]
    with open(path, "w") as f:
        f.write("# machine=test driver=cliff commit=0\n" + SWEEP)
        for steps, kernel, ms, lo, hi in rows:
            cells = [steps, "cuda", kernel, "", kernel, 0, 1, 0, 1000, 1, ms, lo if spread else "", hi if spread else "",
                     5 if spread else "", 1000 / (ms * 1e3), 1, 96, 0]
            f.write(",".join(map(str, cells)) + "\n")


def test_the_drivers_spread_columns_become_error_bars_at_the_slowest_and_fastest_run(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    write_cliff(data / "cliff-test.csv")
    figs = {}
    out = render(data, tmp_path / "out", "--require-spread", keep=figs)
    assert out.drawn["cliff-test"]["errorbars"]
    assert any("fastest and slowest of the timed runs (5 per point)" in n for n in out.drawn["cliff-test"]["notes"])
    bars = [c for c in figs["cliff-test"].axes[0].containers if isinstance(c, ErrorbarContainer)]
    spans = {c.get_label(): sorted(tuple(round(v, 9) for v in seg[:, 1]) for seg in c.lines[2][0].get_segments())
             for c in bars}
    # y = paths / ms: the bar runs from the slowest run's throughput to the fastest's
    assert spans["cuda plain"] == [(0.125, 0.333333333), (0.25, 1.0)]  # 0.25 Mpath/s at 4 ms: 8 ms and 3 ms
    assert spans["cuda register"] == [(0.5, 0.5), (0.8, 2.0)]
    table = open(tmp_path / "out" / "tables" / "cliff-test.md").read()
    assert "| mpath_s | ms | ms_min | ms_max | reps |" in table
    for f in figs.values():
        plt.close(f)


def test_require_spread_refuses_timings_without_error_bars(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    write_cliff(data / "cliff-test.csv", spread=False)
    out = render(data, tmp_path / "plain")  # without the flag: drawn, and said
    assert not out.drawn["cliff-test"]["errorbars"]
    assert any("no spread recorded" in n for n in out.drawn["cliff-test"]["notes"])
    with pytest.raises(SystemExit) as e:
        render(data, tmp_path / "strict", "--require-spread")
    assert "cliff-test" in str(e.value.code) and "error bars" in str(e.value.code)


def test_palette_never_repeats_a_colour_within_twenty_series_nor_a_look_within_eighty():
    assert len({style.style(i)["color"] for i in range(20)}) == 20
    assert len({tuple(style.style(i).values()) for i in range(80)}) == 80
    s = style.Styles(["a", "b"])
    assert s["b"] == style.style(1) and s["c"] == style.style(2) and s["a"] == style.style(0)


def test_tick_labels_are_plain_numbers():
    assert [style.plain_number(v) for v in (0, 0.5, 2, 30, 1000, 25000, 0.00002)] == \
        ["0", "0.5", "2", "30", "1,000", "25,000", "0.00002"]
    f = style.Figure(1, 1)
    ax = f.axes[0]
    ax.plot([0.3, 3000], [2, 3000], label="x")
    ax.set(xscale="log", yscale="log", xlabel="x (s)", ylabel="y (Mpath/s)", title="a panel")
    fig = f.finish()
    labels = [t.get_text() for t in ax.get_yticklabels(which="both") + ax.get_xticklabels(which="both") if t.get_text()]
    assert "1,000" in labels and "10" in labels
    assert not any("$" in t or "^" in t or "e+" in t for t in labels), labels
    plt.close(fig)


def broken(draw):
    f = style.Figure(1, 2)
    for ax in f.axes:
        ax.plot([1, 2, 3], [1, 2, 3], label="series", **style.style(0))
        ax.set(xlabel="x (s)", ylabel="y (Mpath/s)", title="a panel")
    draw(f)
    with pytest.raises(style.FigureError) as e:
        f.finish()
    plt.close(f.fig)
    return str(e.value)


def test_check_refuses_what_a_paper_figure_must_not_have():
    assert "is empty" in broken(lambda f: f.axes[1].lines[0].remove())
    assert "legend inside the panel" in broken(lambda f: f.axes[0].legend())
    assert "spills out of its panel" in broken(lambda f: f.axes[0].annotate("label", (2, 3), xytext=(0, 30),
                                                                            textcoords="offset points"))
    assert "source path" in broken(lambda f: f.axes[0].set_ylabel("Mpath/s (experiments/scratch_sweep.cpp)"))
    assert "longer than its panel" in broken(lambda f: f.axes[0].set_ylabel("a very long label " * 6))
    assert "not a plain number" in broken(lambda f: f.axes[1].set_yticks([1, 2], ["$2\\times10^0$", "3"]))
    assert "look the same" in broken(lambda f: f.axes[1].plot([1, 2], [2, 1], label="other",
                                                              **{k: v for k, v in style.style(0).items()}))
    assert "without error bars" in broken(lambda f: setattr(f, "timings", True))

    def banner_on_a_title(f):
        f.mark_cpu_served()
        f.fig.text(0.25, 0.9, "a note over the title", fontsize=12)
    assert "overlaps a panel" in broken(banner_on_a_title)


def _bar_colour(container):
    patches = getattr(container, "patches", None)
    return matplotlib.colors.to_hex(patches[0].get_facecolor()) if patches else None


def test_every_figure_has_titles_units_and_one_look_per_strategy(committed):
    """The metadata of every figure papers/build.sh makes: each panel titled, each numeric axis with its unit
    (style.has_unit), timing figures naming the precision and the paths, and a built-in strategy drawn in its own
    colour (and marker, for lines) wherever it appears: the registry's order, as docs/strategies.md lists it."""
    _, out = committed
    st = style.StrategyStyles()
    builtin = set(style.builtin_strategies())
    assert {"window", "optimal", "revolve", "two-level", "uniform"} <= builtin
    seen = {}
    for name, fig in out.figures.items():
        for ax in fig.axes:
            assert ax.get_title(), f"{name}: a panel without a title"
            for lab in (ax.get_xlabel(), ax.get_ylabel()):
                if lab:
                    assert style.has_unit(lab) or not all(style._numeric(t.get_text()) for t in ax.get_yticklabels()
                                                          if t.get_text()), (name, lab)
            for line in ax.get_lines():
                label = line.get_label()
                if label in builtin:
                    look = (matplotlib.colors.to_hex(line.get_color()), line.get_marker())
                    assert look == (st[label]["color"], st[label]["marker"]), (name, label, look)
                    seen.setdefault(label, set()).add(look[0])
            for c in ax.containers:
                if c.get_label() in builtin and _bar_colour(c):
                    assert _bar_colour(c) == st[c.get_label()]["color"], (name, c.get_label())
                    seen.setdefault(c.get_label(), set()).add(_bar_colour(c))
        d = out.drawn[name]
        if d["timings"]:
            text = " ".join(d["texts"])
            assert "fp32" in text or "fp64" in text, f"{name}: a timing figure that does not name its precision"
            assert "paths" in text, f"{name}: a timing figure that does not name its paths"
    assert seen and all(len(c) == 1 for c in seen.values()), seen


def test_the_strategy_palette_is_the_registrys_order_and_the_users_strategies_stand_out():
    known = style.builtin_strategies()
    st = style.StrategyStyles()
    looks = {(st[n]["color"], st[n]["marker"]) for n in known}
    assert len(looks) == len(known), "two built-in strategies look the same"
    mine = st["my_strategy"]
    assert mine["marker"] == "*" and mine["markeredgecolor"] == "black" and (mine["color"], "*") not in looks
    assert st["window 16"] == st["window"] and st["plain"]["color"] == "black"
    assert st.order_of(["my_strategy", "window", "uniform"]) == ["uniform", "window", "my_strategy"]


def test_an_axis_without_a_unit_or_a_panel_without_a_title_is_refused():
    assert "says no unit" in broken(lambda f: f.axes[0].set_ylabel("speed"))
    assert "no title" in broken(lambda f: f.axes[1].set_title(""))
    assert style.has_unit("peak_live (values)") and style.has_unit("weighted recompute (instructions)")
    assert style.has_unit("plain ms / ms (above 1: faster)") and style.has_unit("markets per dispatch")
    assert not style.has_unit("peak_live") and not style.has_unit("recompute_cost")


def test_peers_records_the_spread_of_tapelabs_timed_ladders():
    import peers
    js = {"ladder_values": [99.0, 100.0], "greeks": True, "paths": 2048, "ladder_input": "spot",
          "rows": [{"engine": "cpu-jit", "kernel": "plain", "segments": 1, "markets": 1, "ms_per_ladder": 2.0,
                    "ms_ladders": [2.0, 1.5, 3.25], "mpaths_per_second": 2.0}]}
    row = next(peers.compare_json_rows(js, 16))
    assert (row["ms"], row["ms_min"], row["ms_max"], row["reps"]) == ("2.0000", "1.5000", "3.2500", 3)
    assert set(peers.COLUMNS) >= {"ms_min", "ms_max", "reps"}
