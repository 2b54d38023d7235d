"""An LRU replay of the unaligned B's requests through a sectored L1 (tried, not kept:
docs/validation/planner-h200-workloads.md, "The refetched lines' time").

Each co-resident block's warps issue the B tile's requests in the order of the TTGIR's blocked
layout with lanes down K (sizePerThread [1, 1], threadsPerWarp [32, 1], order [0, 1];
warpsPerCTA as Triton 3.6 gives it for sm_90: [1, 4] for the f32 tiles below, [4, 1] or [2, 2]
for the f16 ones), one request a warp in turn, through an L1 of 128-byte lines and 32-byte
sectors with least-recently-used replacement; it counts the sectors fetched per K step and block
at 28 KiB of L1 against an L1 that keeps everything. The measured counts are the extra L2 sectors
over B of the thrashing launches against their twins that keep their lines
(tests/data/planner/h200-l1-window-blind-2026-12-03, h200-unaligned-depth-ncu-2026-12-02,
h200-l1-window-f16-blind-2026-12-03).

    python3 bench/planner/l1_lru_replay.py
"""
import collections
import csv
import os


def simulate(N, elt, BK, BN, wk, wn, blocks, l1_lines, steps=4):
    """Sectors fetched from L2 per K step per block for B, LRU sectored L1."""
    lru = collections.OrderedDict()  # line -> set(sectors)
    fetched = 0
    warps = []
    for b in range(blocks):
        n0 = b * BN  # neighbouring tiles
        for wi in range(wk * wn):
            wki, wni = wi % wk, wi // wk   # order [0,1]: dim0 (K) fastest
            reqs = []
            for rn in range(BN // wn):
                for rk in range(max(1, BK // (32 * wk))):
                    col = rn * wn + wni
                    rows = [rk * 32 * wk + wki * 32 + l for l in range(32)]
                    reqs.append((n0, col, rows))
            warps.append(reqs)
    for step in range(steps):
        k0 = step * BK
        iters = [iter(w) for w in warps]
        alive = True
        while alive:
            alive = False
            for it in iters:
                r = next(it, None)
                if r is None: continue
                alive = True
                n0, col, rows = r
                for row in rows:
                    addr = ((k0 + row) * N + n0 + col) * elt
                    line, sector = addr // 128, (addr % 128) // 32
                    if line in lru:
                        lru.move_to_end(line)
                        s = lru[line]
                        if sector not in s:
                            s.add(sector); fetched += 1
                    else:
                        lru[line] = {sector}; fetched += 1
                        if len(lru) > l1_lines: lru.popitem(last=False)
    return fetched / steps / blocks


def cases():
    """The thrashing launches (l1_lru_replay_cases.csv): warps along K and N are the warpsPerCTA of
    B's layout; the measured count is the extra L2 sectors over B against the twin that keeps."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "l1_lru_replay_cases.csv")) as f:
        for r in csv.DictReader(f):
            yield (r["launch"], *(int(r[k]) for k in ("N", "elt", "BLOCK_K", "BLOCK_N", "warps_k", "warps_n", "blocks")),
                   float(r["measured_extra_b"]))


def main():
    for label, N, elt, BK, BN, wk, wn, blocks, meas in cases():
        big = simulate(N, elt, BK, BN, wk, wn, blocks, 10**6)
        small = simulate(N, elt, BK, BN, wk, wn, blocks, 224)
        bsec = BK * BN * elt / 32
        print(f"{label:30} sim extra B's {(small-big)/bsec:5.2f}  measured {meas:4.2f}   (kept {big/bsec:.2f} B)")


if __name__ == "__main__":
    main()
