#!/usr/bin/env python3
"""Instructions a thread executes per path in a dumped tapelab CUDA kernel, counted from its sm_90 SASS
without a GPU.

    scripts/sass-count.py KERNEL.cu [--arch sm_90] [--nvdisasm PATH] [--sass OUT.sass]
    scripts/sass-count.py experiments/peers/handwritten_asian.cu --entry asian|ladder --contraction --sass OUT.sass

KERNEL.cu is a kernel the cuda engine dumped (`--dump DIR` on tapelab or a driver, e.g. `gpu_kernels
--engine cuda --markets 1 --kinds register --dump DIR`). It is compiled with NVRTC under the engine's exact
options (gpu/cuda/nvrtc.cpp: --fmad=false, --prec-div, --prec-sqrt, no ftz) and disassembled with NVIDIA's
nvdisasm, which Debian does not package: `pip download --no-deps nvidia-cuda-nvdisasm`, unzip the wheel,
and pass its bin/nvdisasm (or put it on PATH).

The count: every instruction of tapelab_kernel's own body once, the slow paths of IEEE division and square
root not taken, plus each CALL of a helper (tl_philox, tl_boxMuller: config outline_draws) times that
helper's own count (a helper's own calls are not followed: tapelab's helpers make none). It is exact for
straight-line kernels (one path per lane, register and plain kinds of the built-in products) and for a rolled
loops (config loops=rolled: the bodies of the largest backward branches count as often as the source's
"// the time loop: N trips" or "// segments ...: N trips" comments say, in their order; with loop_trip=step the
regions the body's forward branches skip, the Philox call's and the Box-Muller pair's ifs, a quarter and a half
as often), and for market loops (markets=loop: the source's segment and market loops, matched in order to the
backward branches and nested as in the source, each body its trips times its enclosing loops'; a market loop
under `#pragma unroll U` (config market_unroll) runs N / U trips, its remainder written once after it, and
none where U covers its N). Any other loop's body (draws=prefill's loop, lanes > 1, the workgroup
reductions' six halvings) counts once, so such kernels are under-counted. Multiply by
paths / 32 for warp instructions (Nsight Compute's smsp__inst_executed.sum): on the H200 the one-market
Asian's 41,139 here was 41,278 there (2026-12-03d).
"""
import argparse
import collections
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "experiments"))
from benchlib.sm90 import EXACT, nvrtc_library  # noqa: E402  (the engine's options and libnvrtc, in one place)


def nvrtc():
    lib = nvrtc_library()
    if lib is None:
        sys.exit("sass-count: libnvrtc.so not found (CUDA under /usr/local/cuda, or on LD_LIBRARY_PATH)")
    return lib


def compile_cubin(source, arch, contraction=False):
    lib = nvrtc()
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None) != 0:
        sys.exit("sass-count: nvrtcCreateProgram failed")
    exact = [o for o in EXACT if not o.startswith(b"--fmad")] + [b"--fmad=true"] if contraction else EXACT
    opts = [b"-arch=" + arch.encode()] + exact + [b"--ptxas-options=-v"]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        sys.exit("sass-count: NVRTC: " + log.value.decode(errors="replace"))
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    cubin = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    return cubin.raw, log.value.decode(errors="replace")


def functions(sass):
    """Instruction texts per function label of nvdisasm -c output, and per function its local labels'
    positions (the index of the instruction each one precedes)."""
    funcs, labels = collections.OrderedDict(), {}
    current = None
    for line in sass.splitlines():
        m = re.match(r"^(\.text\.\w+|\$\w+\$\S+|\$__internal\S+):\s*$", line)
        if m:
            current = m.group(1)
            funcs[current], labels[current] = [], {}
            continue
        m = re.match(r"^(\.L_x_\d+):\s*$", line)
        if m and current:
            labels[current][m.group(1)] = len(funcs[current])
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if m and current:
            funcs[current].append(m.group(1).strip())
    return funcs, labels


def loop_bodies(instructions, labels):
    """Each backward branch's body: (the first instruction's index, the branch's), in branch order."""
    bodies = []
    for i, text in enumerate(instructions):
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", text)
        if m and labels.get(m.group(1), i + 1) <= i:
            bodies.append((labels[m.group(1)], i))
    return bodies


def loop_weights(instructions, labels, trips):
    """Per instruction, how often a path runs it: the bodies of the kernel's rolled loops (config loops=rolled:
    its time loop, or its segments' forward and reverse loops), the largest bodies of backward branches in the
    order the source writes the loops, `trips` (a list, in that order) times each; everything else once."""
    weights = [1] * len(instructions)
    if not trips:
        return weights
    bodies = sorted(sorted(loop_bodies(instructions, labels), key=lambda b: b[1] - b[0], reverse=True)[:len(trips)])
    for (start, end), n in zip(bodies, trips):
        for i in range(start, end + 1):
            weights[i] = n
    return weights


def rolled_trips(source):
    """The trips of each rolled loop, in source order, from the comments the build pass writes on them."""
    trips = []
    for m in re.finditer(r"// (?:the time loop: (\d+) trips|segments \d+\.\.: (\d+) trips|segments (\d+)\.\.(\d+), last first)", source):
        trips.append(int(m.group(1) or m.group(2) or 0) or int(m.group(3)) - int(m.group(4)) + 1)
    return trips


def source_loops(source):
    """tapelab_kernel's segment and market loops (config markets=loop), in source order, up to its reductions: per
    loop (its trips as the SASS runs it, 0 where the compiler unrolls it whole, the index of the loop enclosing
    it or -1). A market loop's trips: its `tl_m < N`, divided by the `#pragma unroll U` before it (market_unroll)."""
    start = source.find("tapelab_kernel(")
    end = source.find("tl_st = ", start)
    text = source[start:end if end > 0 else len(source)]
    loops, spans = [], []  # spans: (position of the loop's brace, of its matching close)
    for m in re.finditer(r"(#pragma unroll (\d+)\s*\n\s*)?for \(([^;]*);\s*([^;]*);[^)]*\)\s*\{\s*//\s*([^\n]*)", text):
        note, cond = m.group(5), m.group(4)
        segs = re.match(r"segments \d+\.\.: (\d+) trips|segments (\d+)\.\.(\d+), last first", note)
        if segs:
            trips = int(segs.group(1) or 0) or int(segs.group(2)) - int(segs.group(3)) + 1
        elif note.startswith("markets, one at a time"):
            n = int(re.search(r"<\s*(\d+)", cond).group(1))
            unroll = int(m.group(2) or 1)
            trips = 0 if unroll >= n else n // unroll
        else:
            continue
        brace = m.end(4) + text[m.end(4):].find("{")
        depth, i = 0, brace
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        outer = next((k for k in range(len(spans) - 1, -1, -1) if spans[k][0] < brace < spans[k][1]), -1)
        loops.append((trips, outer))
        spans.append((brace, i))
    return loops


def market_loop_weights(instructions, labels, source):
    """Per instruction, how often a path runs it in a kernel with market loops (config markets=loop): the
    source's segment and market loops that stay loops, matched in order to the first backward branches by
    where their bodies start, nested as the source nests them; a body runs its trips times its enclosing loops'.
    None (with a warning) where the branches do not match the loops."""
    loops = source_loops(source)
    kept = [k for k, (trips, _) in enumerate(loops) if trips > 0]
    bodies = sorted(loop_bodies(instructions, labels))
    if len(bodies) < len(kept):
        print(f"sass-count: warning: {len(kept)} segment and market loops but {len(bodies)} backward branches",
              file=sys.stderr)
        return None
    body_of = dict(zip(kept, bodies))
    for k in kept:  # the source's nesting, among the loops kept, is the branches'
        outer = loops[k][1]
        while outer >= 0 and outer not in body_of:
            outer = loops[outer][1]
        if outer >= 0 and not (body_of[outer][0] <= body_of[k][0] and body_of[k][1] <= body_of[outer][1]):
            print("sass-count: warning: the market loops' branches do not nest as the source's loops", file=sys.stderr)
            return None
    weights = [1] * len(instructions)
    for k in kept:
        start, end = body_of[k]
        for i in range(start, end + 1):
            weights[i] *= loops[k][0]
    return weights


def carried_draw_weights(instructions, labels, weights, source):
    """config loop_trip=step: the loop's body computes a Philox call in one trip of four and a Box-Muller pair in
    one of two (`if ((vkN & 3u) == 0u)`, `if ((vkN & 1u) == 0u)` in the source, in that order per draw); the
    regions the body's forward branches skip, in order, are those ifs' bodies, weighted by their share. Returns
    the weights, or None with a warning where the branches do not match the ifs."""
    shares = [0.25 if m.group(1) == "3" else 0.5 for m in re.finditer(r"if \(\(vk\d+ & ([13])u\) == 0u\)", source)]
    if not shares:
        return weights
    top = max(weights)
    body = [i for i, w in enumerate(weights) if w == top]
    lo, hi = body[0], body[-1]
    regions = []
    for i in range(lo, hi + 1):
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", instructions[i])
        if m and i < labels.get(m.group(1), -1) <= hi and labels[m.group(1)] - i > 8:
            regions.append((i + 1, labels[m.group(1)]))
    if len(regions) != len(shares):
        print(f"sass-count: warning: {len(shares)} carried-draw ifs but {len(regions)} skipped regions in the loop: "
              "each counted every trip", file=sys.stderr)
        return weights
    weights = list(weights)
    for (a, b), share in zip(regions, shares):
        for i in range(a, b):
            weights[i] = weights[i] * share
    return weights


def own_count(instructions, weights=None):
    """A function's instructions along its common path, and the helpers it calls (each weighted)."""
    weights = weights or [1] * len(instructions)
    n, calls, skip = 0, collections.Counter(), 0
    for i, text in enumerate(instructions):
        w = weights[i]
        if "CALL" in text and "slowpath" in text:
            n -= weights[i - 1] if i else 0  # the MOV of the return address before it; the MOV (and BRA) after it, below
            skip = 2 if i + 2 < len(instructions) and instructions[i + 2].startswith("BRA") else 1
            continue
        if skip:
            skip -= 1
            continue
        if text.startswith("NOP"):
            continue
        m = re.search(r"CALL\.\S+\s+`\((\S+)\)", text)
        if m:
            calls[m.group(1)] += w
        n += w
    return n, calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="a dumped tapelab CUDA kernel (.cu)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvdisasm", default=shutil.which("nvdisasm") or "", help="NVIDIA's nvdisasm (see the head of this file)")
    ap.add_argument("--sass", help="also write the disassembly here")
    ap.add_argument("--entry", default="tapelab_kernel",
                    help="the kernel to count: tapelab_kernel, or a template kernel's name (a peer's: "
                         "experiments/peers/handwritten_asian.cu's asian or ladder, which it instantiates under NVRTC)")
    ap.add_argument("--contraction", action="store_true",
                    help="compile with --fmad=true (nvcc's default, the hand-written peer's), not tapelab's --fmad=false")
    ap.add_argument("--loops", type=int, default=0, metavar="N",
                    help="also list the N largest loop bodies (backward branches) of the kernel: their instructions and "
                         "memory operations by kind (LDL/STL local, LDS/STS workgroup, LDG/STG global)")
    a = ap.parse_args()
    if not a.nvdisasm or not os.access(a.nvdisasm, os.X_OK):
        sys.exit("sass-count: no nvdisasm (--nvdisasm PATH): pip download --no-deps nvidia-cuda-nvdisasm, unzip it")
    try:
        source = open(a.kernel, encoding="utf-8").read()
    except OSError as e:
        sys.exit(f"sass-count: {a.kernel}: {e.strerror}")
    cubin, log = compile_cubin(source, a.arch, a.contraction)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        done = subprocess.run([a.nvdisasm, "-c", path], capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            sys.exit(f"sass-count: {a.nvdisasm} failed ({done.returncode}): {last}")
        sass = done.stdout
    if a.sass:
        with open(a.sass, "w", encoding="utf-8") as f:
            f.write(sass)
    funcs, labels = functions(sass)
    # The entry: tapelab_kernel, or the (C++-mangled) kernel --entry names, e.g. asian<true, 4> as _Z5asianILb1ELi4EE...
    named = [f for f in funcs if f == ".text." + a.entry or re.match(r"\.text\._Z\d+" + re.escape(a.entry) + r"I", f)]
    if len(named) != 1:
        sys.exit(f"sass-count: {a.kernel}: {len(named) or 'no'} kernels named {a.entry} in the disassembly")
    main_label = named[0]
    entry = main_label[len(".text."):]
    counts = {f: own_count(ins) for f, ins in funcs.items()}
    trips = rolled_trips(source)
    if a.entry != "tapelab_kernel":
        print(f"sass-count: warning: {a.entry}'s loops carry no trips comment: each body is counted once "
              "(read its regions in --sass)", file=sys.stderr)
    weights = None
    if "// markets, one at a time" in source:  # config markets=loop: its loops nest in the segments'
        weights = market_loop_weights(funcs[main_label], labels[main_label], source)
        if weights is None:
            print("sass-count: warning: the market loop's bodies are counted once, not once per market "
                  "(compile with --config markets=copies for a count a path)", file=sys.stderr)
    if weights is None:
        weights = loop_weights(funcs[main_label], labels[main_label], trips)
    weights = carried_draw_weights(funcs[main_label], labels[main_label], weights, source)
    counts[main_label] = own_count(funcs[main_label], weights)
    memory = collections.Counter()  # the body's memory instructions a path, by kind, weighted as the count
    for text, w in zip(funcs[main_label], weights):
        kind = memory_kind(text)
        if kind:
            memory[kind] += w
    body, calls = counts[main_label]
    body = round(body)
    total = body
    # ptxas -v reports each entry (tapelab_reduce may come first): the kernel's own lines only.
    own = re.search(r"Compiling entry function '" + re.escape(entry) + r"'.*?(?=Compiling entry function|\Z)", log, re.S)
    own = own.group(0) if own else ""
    regs = re.search(r"Used (\d+) registers", own)
    spill = re.search(r"(\d+) bytes spill stores", own)
    print(f"{a.kernel}: {a.arch}, {a.entry} {len(funcs[main_label])} instructions in its body"
          + (f", {regs.group(1)} registers" if regs else "") + (f", {spill.group(1)} bytes spill stores" if spill else "")
          + (f", rolled loops of {'/'.join(map(str, trips))} trips" if trips else ""))
    for f, c in calls.items():
        m = re.search(r"\d(tl_[A-Za-z]+)E", f)
        helper = m.group(1) if m else f
        per = counts.get(f, (0, None))[0]
        total += c * per
        print(f"  {helper:24s} {c:6d} calls x {per:5d} = {c * per:8d}")
    print(f"  own body (slow paths not taken)        {body:8d}")
    print(f"per path (thread instructions): {total}")
    print("  memory instructions a path (the body's): "
          + ", ".join(f"{k} {round(memory[k])}" for k in MEMORY_KINDS))
    if a.loops:
        print_loops(funcs[main_label], labels[main_label], a.loops)


MEMORY_KINDS = ("LDL", "STL", "LDS", "STS", "LDG", "STG")


def memory_kind(text):
    """A memory instruction's kind (LDL/STL local, LDS/STS workgroup, LDG/STG global), its predicate skipped; else None."""
    m = re.match(r"(?:@!?U?P\w+\s+)?(LDL|STL|LDS|STS|LDG|STG)\b", text)
    return m.group(1) if m else None


def print_loops(instructions, labels, n):
    """The n largest bodies of backward branches (a loop, nested ones inside it included), in source order."""
    for start, end in sorted(sorted(loop_bodies(instructions, labels), key=lambda b: b[1] - b[0], reverse=True)[:n]):
        ops = collections.Counter()
        for text in instructions[start:end + 1]:
            kind = memory_kind(text)
            if kind:
                ops[kind] += 1
        kinds = ", ".join(f"{k} {ops[k]}" for k in MEMORY_KINDS if ops[k])
        print(f"  loop at instruction {start}: {end - start + 1} instructions" + (f"; {kinds}" if kinds else ""))


if __name__ == "__main__":
    main()
