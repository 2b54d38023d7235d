"""Reads the CUDA GEMM's occupancy run (`scratchsim_cuda gemm-timing --blocks-per-sm ...`).

fit: per tile, cycles per block per K element at each blocks-per-SM count c, and the least-squares
     fit time per block = issue + waits / c (docs/validation/planner-h100.md, "The occupancy run").
oracle SWEEP.json...: ranks timing sweeps with each tile's measured time per round in place of
     the planner's per-tile cost (rounds of co-resident blocks and the tail round as in
     sim/perf_model.cc, blocks per SM from the sweep), to see how much of the planner's error is
     the per-tile cost. Same metrics as compare_plan.py.
noise SWEEP.json...: the oracle with every tile's round cost off by a random factor 1 + e, e
     normal with standard deviation 0.5-4% (one draw per tile, shared by its depths and
     occupancies; 200 draws, seeded): how often the measured best stays in the top 5 when a
     per-tile model is that far off, i.e. what per-tile accuracy the top-5 target needs.

usage: python3 cuda_gemm_occupancy.py OCCUPANCY.json fit
       python3 cuda_gemm_occupancy.py OCCUPANCY.json oracle SWEEP.json [SWEEP.json ...]
       python3 cuda_gemm_occupancy.py OCCUPANCY.json noise SWEEP.json [SWEEP.json ...]
"""
import argparse
import collections
import json
import math
import random

from compare_plan import spearman

CLOCK_HZ = 1.98e9  # the SM clock nvidia-smi showed throughout the runs (H100, 2026-11-26)
NUM_SMS = 132


def tile_key(dtype, config):
    return (dtype, config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"], config["NUM_WARPS"])


def rounds_cycles(occupancy):
    """{(tile, c): cycles per K element of one round of c blocks}, from the occupancy run."""
    m, n, k = occupancy["shapes"][0]
    out = {}
    for t in occupancy["timings"]:
        c = t["config"]
        blocks_on_sm = math.ceil((m // c["BLOCK_M"]) * (n // c["BLOCK_N"]) / NUM_SMS)
        per_sm = t["blocks_per_sm"]
        out[(tile_key(t["dtype"], c), per_sm)] = t["ms"] * 1e-3 * CLOCK_HZ / k / (blocks_on_sm / per_sm)
    return out


def fit(occupancy):
    per_round = rounds_cycles(occupancy)
    by_tile = collections.defaultdict(dict)
    for (tile, c), cycles in per_round.items():
        by_tile[tile][c] = cycles / c
    print("| dtype | tile (BM/BN/BK/warps) | cycles per block per K element at c = 1, 2, ... | issue | waits |")
    print("|---|---|---|---|---|")
    for tile, per_block in sorted(by_tile.items()):
        cs = sorted(per_block)
        issue = waits = float("nan")
        if len(cs) >= 2:
            xs = [1.0 / c for c in cs]
            ys = [per_block[c] for c in cs]
            mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
            waits = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
            issue = my - waits * mx
        dtype, bm, bn, bk, warps = tile
        print(f"| {dtype} | {bm}/{bn}/{bk}/{warps} | {' / '.join(f'{per_block[c]:.0f}' for c in cs)} "
              f"| {issue:.0f} | {waits:.0f} |")


def sweep_rows(sweep_paths):
    """[(dtype, m, n, k, timings)] of the sweeps, one per (shape, dtype)."""
    rows = []
    for path in sweep_paths:
        sweep = json.load(open(path))
        groups = collections.defaultdict(list)
        for t in sweep["timings"]:
            if "ms" in t:
                groups[(t["dtype"], t["M"], t["N"], t["K"])].append(t)
        rows += [key + (timings,) for key, timings in sorted(groups.items())]
    return rows


def oracle_verdicts(occupancy, rows, tile_factor=None):
    """Per row (top-1 / best, best in the top 5, Spearman) with the measured round costs, each
    tile's scaled by tile_factor[tile] when given."""
    per_round = rounds_cycles(occupancy)
    most = collections.defaultdict(int)
    for tile, c in per_round:
        most[tile] = max(most[tile], c)

    def round_cycles(tile, c):
        top = most[tile]
        scale = tile_factor[tile] if tile_factor else 1
        return scale * per_round[(tile, min(c, top))] * (c / top if c > top else 1)

    verdicts = []
    for dtype, m, n, k, timings in rows:
        predicted = []
        for t in timings:
            c = t["config"]
            blocks_on_sm = math.ceil((m // c["BLOCK_M"]) * (n // c["BLOCK_N"]) / NUM_SMS)
            full, tail = divmod(blocks_on_sm, t["blocks_per_sm"])
            tile = tile_key(dtype, c)
            cycles = full * round_cycles(tile, t["blocks_per_sm"]) + (round_cycles(tile, tail) if tail else 0)
            predicted.append(cycles * k)
        measured = [t["ms"] for t in timings]
        # Depths of one tile tie here; the deeper ranks first, as in the planner.
        order = sorted(range(len(timings)), key=lambda i: (predicted[i], -timings[i]["config"]["NUM_STAGES"]))
        best = min(measured)
        verdicts.append((measured[order[0]] / best, any(measured[i] == best for i in order[:5]),
                         spearman(predicted, measured)))
    return verdicts


def oracle(occupancy, sweep_paths):
    rows = sweep_rows(sweep_paths)
    verdicts = oracle_verdicts(occupancy, rows)
    for (dtype, m, n, k, _), (top1, top5, rho) in zip(rows, verdicts):
        print(f"{dtype} {m}x{n}x{k}: top-1 {top1:.2f}x, best in top 5 {'yes' if top5 else 'no'}, Spearman {rho:.2f}")
    met1 = sum(v[0] <= 1.10 for v in verdicts)
    met5 = sum(v[1] for v in verdicts)
    both = sum(v[0] <= 1.10 and v[1] for v in verdicts)
    print(f"top-1 within 10% on {met1} of {len(rows)}, best in top 5 on {met5}, both on {both}")


def noise(occupancy, sweep_paths, draws=200):
    rows = sweep_rows(sweep_paths)
    tiles = sorted({tile for tile, _ in rounds_cycles(occupancy)})
    rng = random.Random(1)
    print(f"{len(rows)} rows, {draws} draws per error size")
    print("| per-tile error (sd) | best in top 5, mean (min-max) | top-1 within 10%, mean |")
    print("|---|---|---|")
    for sd in (0.0, 0.005, 0.01, 0.02, 0.03, 0.04):
        hits, tops = [], []
        for _ in range(draws if sd > 0 else 1):
            factor = {tile: 1 + rng.gauss(0, sd) for tile in tiles}
            verdicts = oracle_verdicts(occupancy, rows, factor)
            hits.append(sum(v[1] for v in verdicts))
            tops.append(sum(v[0] <= 1.10 for v in verdicts))
        print(f"| {100 * sd:.1f}% | {sum(hits) / len(hits):.1f} ({min(hits)}-{max(hits)}) | {sum(tops) / len(tops):.1f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("occupancy")
    parser.add_argument("mode", choices=["fit", "oracle", "noise"])
    parser.add_argument("sweeps", nargs="*")
    args = parser.parse_args()
    occupancy = json.load(open(args.occupancy))
    if args.mode == "fit":
        fit(occupancy)
    elif args.mode == "oracle":
        oracle(occupancy, args.sweeps)
    else:
        noise(occupancy, args.sweeps)


if __name__ == "__main__":
    main()
