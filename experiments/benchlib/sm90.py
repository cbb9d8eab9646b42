"""sm_90 without a GPU: what NVRTC and ptxas say about a kernel the cuda engine writes.

compile_sm90 runs experiments/gpu_kernels (the cuda engine, compile-only where no driver is) on one
plan's register kernel (or the plain kernel) and reads ptxas's line: registers, spill stores and
loads, stack frame; with `dump` it keeps the kernel's source. ptx_counts compiles such a source with
libnvrtc under the engine's exact options (gpu/cuda/nvrtc.cpp; scripts/sass-count.py does the same for
SASS with nvdisasm) and counts its static PTX instructions, and among them the memory ones:
ld/st.global (the scratch buffer, inputs, partials) and ld/st.local (spills). A straight-line kernel
executes each once per path (lanes=1), so static counts are per-path counts there.
"""
import ctypes
import glob
import os
import re
import subprocess

PTXAS = re.compile(r"ptxas \S+: (\d+) registers, (\d+) bytes stack frame, (\d+) bytes spill stores, "
                   r"(\d+) bytes spill loads")
# The cuda engine's exact options (gpu/cuda/nvrtc.cpp), as scripts/sass-count.py compiles with them too.
EXACT = [b"--fmad=false", b"--prec-div=true", b"--prec-sqrt=true", b"--ftz=false", b"--std=c++17"]


def compile_sm90(gpu_kernels, tape_file, plan_file, config, cache, timeout, dump=None):
    """{registers, spill_bytes (stores), spill_load_bytes, stack_bytes, compile_s, cache_hit[, source]} of one
    kernel (plan_file None: the plain kernel), or {"error": one line, "unavailable": bool}."""
    cmd = [gpu_kernels, "--engine", "cuda", "--tape", tape_file, "--markets", "1", "--greeks", "on"]
    cmd += ["--config", config] if config else []
    cmd += ["--kinds", "plain"] if plan_file is None else ["--kinds", "register", "--plan", plan_file]
    cmd += ["--dump", dump] if dump else []
    env = dict(os.environ, TAPELAB_CACHE_DIR=cache) if cache else None
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"gpu_kernels: no kernel after {timeout:.0f} s"}
    m = PTXAS.search(p.stdout)
    row = [line.split() for line in p.stdout.splitlines() if line.startswith(("plain ", "register "))]
    if p.returncode != 0 or not m or not row:
        why = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["no output"])[-1]
        return {"error": f"gpu_kernels exit {p.returncode}: {why}", "unavailable": p.returncode == 3}
    regs, stack, stores, loads = (int(x) for x in m.groups())
    out = {"registers": regs, "spill_bytes": stores, "spill_load_bytes": loads, "stack_bytes": stack,
           "compile_s": float(row[0][5]), "cache_hit": 1 if row[0][6] == "hit" else 0}
    if dump:
        sources = sorted(glob.glob(os.path.join(dump, "*.cu")), key=os.path.getmtime)
        out["source"] = sources[-1] if sources else None
    return out


def nvrtc_library():
    """libnvrtc (CUDA under /usr/local/cuda, or on LD_LIBRARY_PATH), or None."""
    for name in ("libnvrtc.so", "libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def ptx_of(source, arch="sm_90"):
    """The PTX NVRTC makes of a dumped kernel under the engine's options, or None without libnvrtc."""
    lib = nvrtc_library()
    if lib is None:
        return None
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None) != 0:
        return None
    opts = [b"-arch=" + arch.replace("sm_", "compute_").encode()] + EXACT
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    if rc != 0:
        return None
    lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
    ptx = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetPTX(prog, ptx)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value.decode(errors="replace")


_INSTR = re.compile(r"^\s+(?:@!?%p\d+\s+)?([a-z][\w.]*)\s", re.M)


def ptx_counts(ptx):
    """Static counts of the whole module: instructions, ld/st.global, ld/st.local."""
    ops = [m.group(1) for m in _INSTR.finditer(ptx)]
    ops = [o for o in ops if not o.startswith((".", "ret")) or o == "ret"]
    return {"ptx_instructions": len(ops),
            "ptx_ld_global": sum(1 for o in ops if o.startswith("ld.global")),
            "ptx_st_global": sum(1 for o in ops if o.startswith("st.global")),
            "ptx_ld_local": sum(1 for o in ops if o.startswith("ld.local")),
            "ptx_st_local": sum(1 for o in ops if o.startswith("st.local"))}
