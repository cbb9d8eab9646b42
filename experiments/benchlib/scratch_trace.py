"""An address-trace model of a scratch kernel's buffer traffic, per warp, from the kernel's own source.

The cuda engine's scratch kernel (one path per lane, lanes=1) reads and writes `scratch[...]` in straight
lines: AoS at tl_tid * S + k (S words per lane: value slots and stored draws), SoA at k * inv + tl_tid
(inv: the launch's threads). parse() reads every access in program order from a dumped kernel; model()
plays them for the 32 consecutive tl_tid of one warp and counts, per path:
  requests   32-byte sectors each access touches over the warp (coalescing: SoA 4 for fp32, AoS 32);
  unique     distinct sectors the warp touches in all (the footprint: the same in both layouts);
  l2         sectors that reach L2: every store's (L1 is write-through on sm_90) and every load that misses
             an L1 share of `l1_bytes / warps` bytes per warp, kept least recently used (a load allocates
             its sector; the occupancy `warps` per SM follows from the kernel's registers).
It models the buffer only (no inputs, partials or spills) and an L1 shared evenly and without conflict
misses: where layouts differ it says why, not how many Mpath/s.
"""
import collections
import re

SECTOR = 32  # bytes
WARP = 32

_ACCESS = re.compile(r"scratch\[([^\]]*?)\]\s*(=(?!=))?")
_AOS = re.compile(r"tl_tid \* (\d+)u \+ (\d+)u")
_SOA = re.compile(r"^\(?(\d+)u \* \(?tl_inv")


def parse(source):
    """(layout, words per lane or None, element bytes, [(op, slot)]) of a dumped cuda scratch kernel."""
    head = source[:2000]
    layout = "aos" if ", aos," in head else "soa" if ", soa," in head else None
    esize = 8 if ("double* __restrict__ scratch" in source or ", fp64," in head) else 4
    accesses, stride = [], None
    for m in _ACCESS.finditer(source):
        expr, op = m.group(1), "st" if m.group(2) else "ld"
        a = _AOS.search(expr)
        if a:
            stride = int(a.group(1))
            accesses.append((op, int(a.group(2))))
            continue
        s = _SOA.search(expr.strip())
        if s:
            accesses.append((op, int(s.group(1))))
    if layout is None or not accesses:
        raise ValueError("not a cuda scratch kernel with a readable scratch buffer")
    return layout, stride, esize, accesses


def sectors(layout, stride, esize, slot, warp_base=0, inv=1 << 20):
    """The 32-byte sectors one access of `slot` touches across a warp's lanes."""
    out = set()
    for lane in range(WARP):
        tid = warp_base + lane
        word = tid * stride + slot if layout == "aos" else slot * inv + tid
        out.add(word * esize // SECTOR)
    return out


def resident_warps(registers, max_warps=64, register_file=65536, workgroup=64):
    """Warps an SM holds at `registers` per thread (whole workgroups of `workgroup` threads)."""
    if not registers or registers <= 0:
        return max_warps
    per_group = registers * workgroup
    groups = register_file // per_group
    return max(1, min(max_warps, groups * workgroup // WARP))


def model(layout, stride, esize, accesses, warps=64, l1_bytes=256 * 1024):
    """Per warp and path: requests, unique, l2 (see the module's head), and the share of L1 in sectors."""
    capacity = max(1, l1_bytes // warps // SECTOR)
    lru = collections.OrderedDict()
    requests = l2 = 0
    unique = set()
    for op, slot in accesses:
        touched = sectors(layout, stride, esize, slot)
        requests += len(touched)
        unique |= touched
        if op == "st":
            l2 += len(touched)
            for s in touched:  # write-through; a resident sector stays valid
                if s in lru:
                    lru.move_to_end(s)
            continue
        for s in touched:
            if s in lru:
                lru.move_to_end(s)
                continue
            l2 += 1
            lru[s] = True
            if len(lru) > capacity:
                lru.popitem(last=False)
    return {"accesses": len(accesses), "stores": sum(1 for op, _ in accesses if op == "st"),
            "requests": requests, "unique": len(unique), "l2": l2, "l1_share_sectors": capacity}
