"""Tapes from products and .tape files, their nodes as NumPy arrays."""
import numpy as np
import pytest

import tapelab


def test_asian_layout_and_columns():
    t = tapelab.product("asian", steps=8)
    assert len(t) == t.nodes == 15 + 6 * 8 + 9  # products.h: the article's layout
    assert t.inputs == ["spot", "strike", "vol", "rate", "maturity"]
    assert list(t.defaults) == [100.0, 100.0, 0.2, 0.03, 1.0]
    assert t.draws == 8
    for col, dtype in [(t.op, np.uint8), (t.a, np.int32), (t.b, np.int32), (t.imm, np.float64)]:
        assert col.dtype == dtype and col.shape == (len(t),)
    assert list(t.op_names[:5]) == ["input"] * 5
    assert [tapelab.OPS[c] for c in t.op] == list(t.op_names)
    assert list(t.input_nodes) == [0, 1, 2, 3, 4]
    assert list(t.imm[t.op_names == "randn"]) == list(range(8))
    # Arguments come before their node.
    nodes = np.arange(len(t))
    assert np.all(t.a < nodes) and np.all(t.b < nodes)
    assert 0 <= t.output < len(t)


def test_columns_match_the_text_format():
    t = tapelab.product("basket", steps=3, assets=2)
    lines = [l for l in t.text().splitlines() if l and not l.startswith(("#", "tapelab-tape", "output"))]
    assert len(lines) == len(t)
    for i, line in enumerate(lines):
        words = line.split("#")[0].split()
        assert words[0] == t.op_names[i]
        if words[0] == "const":
            assert float(words[1]) == t.imm[i]
        elif words[0] not in ("input", "randn"):
            assert [int(w) for w in words[1:]] == [x for x in (t.a[i], t.b[i]) if x >= 0]


def test_text_round_trip(tmp_path):
    t = tapelab.product("european", steps=5)
    path = tmp_path / "e.tape"
    t.write(str(path))
    back = tapelab.read_tape(str(path))
    body = lambda tape: tape.text().split("\n", 2)[2]  # the comment line names the tape (the file's name)
    assert body(back) == body(t) and back.structure == t.structure
    for col in ("op", "a", "b", "imm", "defaults"):
        assert np.array_equal(getattr(back, col), getattr(t, col))
    assert tapelab.parse_tape(t.text()).structure == t.structure


def test_liveness_for_strategy_writers():
    t = tapelab.product("asian", steps=6)
    live = t.live_across()
    assert live.shape == (len(t) + 1,) and live[0] == 0
    last = t.last_use()
    # liveAcross[c] counts the values j < c read at or after c.
    for c in range(len(t) + 1):
        assert live[c] == sum(1 for j in range(c) if last[j] >= c)


def test_product_errors_are_value_errors():
    with pytest.raises(ValueError, match=r"^tapelab: --product: .*'nope'"):
        tapelab.product("nope")
    with pytest.raises(ValueError, match=r"^tapelab: --steps: expected 1\.\.1000000, got 0$"):
        tapelab.product("asian", steps=0)
    with pytest.raises(ValueError, match=r"^tapelab: --assets applies to --product basket, worstof or hestonbasket only$"):
        tapelab.product("asian", assets=3)


def test_a_malformed_tape_file_fails_as_the_cli_does(tmp_path, cli):
    path = tmp_path / "bad.tape"
    path.write_text("tapelab-tape 1\ninput spot 100\nmul 0 7\noutput 1\n")
    rc, line = cli.error("run", path)
    assert rc == 2
    with pytest.raises(ValueError) as e:
        tapelab.read_tape(str(path))
    assert str(e.value) == line
    assert line.startswith(f"tapelab: {path}:3: ")
