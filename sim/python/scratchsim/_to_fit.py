"""To fit: the configs nearest to one that does not fit which do, each verified by lowering it.
One search for every Python front end (scratchsim.triton's check and early_prune, Helion's filter).

The front end gives the config's knobs (pipeline stages, tile dimensions), a verify callable that
lowers and simulates one candidate, and optionally an estimator (the planner's estimate). The
closeness order is documented in docs/python.md ("To fit"); the search never reports a config it
did not verify, and stops at a bound on the lowerings it pays for.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable, Mapping, Sequence

# The lowerings one search may pay for (candidates verified from a cache cost none).
MAX_LOWERINGS = 16
# A tile dimension is halved down to this and no further (Triton's dot needs 16 rows and columns).
MIN_TILE = 16

ORDER = ("closest first: fewest tile halvings, then the most pipeline stages kept, then the "
         "planner's estimate (fastest first) where it has one")


class Verdict(dict):
    """What verify returns for one candidate: fits (bool), required_bytes and limit_bytes of the
    space the original config overflowed (None where the lowering failed), lowered (True when it
    cost a lowering rather than a cache hit)."""


def tile_knobs(values: Mapping[str, object], dims: set | None) -> list:
    """The config's tile dimensions: integer knobs of a power of two of MIN_TILE or more, and,
    where the lowered IR's shapes are known (`dims`), one of those shapes' dimensions (so GROUP_M=16
    is not halved). Largest first: the search halves the largest dimension first."""
    out = []
    for k, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < MIN_TILE or v & (v - 1):
            continue
        if dims is not None and v not in dims:
            continue
        out.append(k)
    return sorted(out, key=lambda k: -values[k])


def _shapes(values: Mapping[str, int], tiles: Sequence[str], level: int) -> list:
    """Every way to halve the tile dimensions `level` times in all (none below MIN_TILE), the
    largest remaining dimensions first."""
    room = [int(math.log2(values[t] // MIN_TILE)) for t in tiles]
    out = []
    for counts in itertools.product(*[range(r + 1) for r in room]):
        if sum(counts) == level:
            out.append({t: values[t] >> c for t, c in zip(tiles, counts)})
    out.sort(key=lambda s: sorted((-v for v in s.values())))
    return out


class _Search:
    def __init__(self, values, stage, verify, max_lowerings, original):
        self.values, self.stage, self.verify = dict(values), stage, verify
        self.max_lowerings = max_lowerings
        self.lowered = 0
        self.bound_reached = False
        self.seen: dict = {}
        if original is not None:
            self.seen[self._key(self.values)] = original

    @staticmethod
    def _key(values):
        return tuple(sorted(values.items()))

    def judge(self, values):
        """The verdict of a candidate, None once the bound is reached."""
        key = self._key(values)
        if key in self.seen:
            return self.seen[key]
        if self.lowered >= self.max_lowerings:
            self.bound_reached = True
            return None
        v = self.verify(dict(values))
        if v.get("lowered", True):
            self.lowered += 1
        self.seen[key] = v
        return v

    def most_stages(self, shape: Mapping[str, int]):
        """The largest stage count at which `shape` fits, and its verdict: (0, None) when none does
        (or the bound was reached first). Bisection over 1..the original's stages, each probe
        where the stage counts measured so far put the limit (bytes taken affine in stages)."""
        values = {**self.values, **shape}
        if self.stage is None:
            v = self.judge(values)
            return (1, v) if v is not None and v["fits"] else (0, None)
        top = int(self.values[self.stage])
        lo, hi, best = 0, top + 1, None
        points: dict = {}
        s = top
        while hi - lo > 1:
            v = self.judge({**values, self.stage: s})
            if v is None:
                return (lo, best) if best is not None else (0, None)
            if v.get("required_bytes") is not None:
                points[s] = v["required_bytes"]
            limit = v.get("limit_bytes")
            if v["fits"]:
                lo, best = s, v
            else:
                hi = s
            s = _probe(points, limit, lo, hi)
        return (lo, best) if best is not None else (0, None)


def _probe(points: Mapping[int, int], limit, lo: int, hi: int) -> int:
    """The next stage count to try strictly between lo and hi: where the bytes measured at two
    stage counts (or one, taken proportional to stages) reach the limit, else the midpoint."""
    mid = (lo + hi) // 2
    if not limit or not points:
        return mid
    known = sorted(points.items())
    if len(known) >= 2:
        (s1, r1), (s2, r2) = known[0], known[-1]
        slope = (r2 - r1) / (s2 - s1) if s2 != s1 else 0
        guess = s1 + (limit - r1) / slope if slope > 0 else mid
    else:
        s1, r1 = known[0]
        guess = s1 * limit / r1 if r1 > 0 else mid
    return min(hi - 1, max(lo + 1, int(math.floor(guess))))


def _changes(before: Mapping[str, int], after: Mapping[str, int], order: Sequence[str]) -> str:
    return ", ".join(f"{k} {before[k]} -> {after[k]}" for k in order if before.get(k) != after.get(k))


def nearest(values: Mapping[str, int], *, stage: str | None, tiles: Sequence[str],
            verify: Callable[[dict], Verdict], build: Callable[[dict], dict], want: int = 2,
            max_lowerings: int = MAX_LOWERINGS, original: Verdict | None = None,
            estimate: Callable[[list], list] | None = None) -> dict:
    """The `want` configs nearest to `values` that fit, each verified by `verify`.

    values: the knobs (name -> int) the search may lower: `stage` (pipeline stages, lowered one
    at a time down to 1) and `tiles` (halved, the largest first, down to MIN_TILE). build(values)
    is the whole config reported under "config"; estimate(list of values) the planner's
    estimates in us (None where it has none). Levels of halving are searched in order, each
    shape at its largest fitting stage count; the search ends once `want` were found at a level
    (every shape of that level is searched, so ties are ranked by stages and speed), or at the
    bound. A config that overflows no memory space (`original` has no "space": threads) is not
    searched ("skipped" says why). Returns {"to_fit": [...], "search": {...}} (docs/python.md,
    "To fit").
    """
    if original is not None and not original.get("fits") and not original.get("space"):
        # Threads, not bytes: fewer stages and smaller tiles would not change it.
        return {"to_fit": [], "search": {"lowerings": 0, "max_lowerings": max_lowerings, "bound_reached": False,
                                         "order": ORDER, "skipped": (
                                             f"the config overflows no memory space ({original.get('message')}); "
                                             "the search changes pipeline stages and tile dimensions only")}}
    search = _Search(values, stage, verify, max_lowerings, original)
    found = []
    order = ([stage] if stage else []) + list(tiles)
    for level in itertools.count():
        shapes = _shapes(values, tiles, level)
        if not shapes:
            break
        for shape in shapes:
            stages, v = search.most_stages(shape)
            if v is not None:
                got = {**values, **shape}
                if stage:
                    got[stage] = stages
                found.append((level, -stages if stage else 0, got, v))
            if search.bound_reached:
                break
        if search.bound_reached or len(found) >= want:
            break
    estimates = estimate([f[2] for f in found]) if (estimate and found) else [None] * len(found)
    ranked = sorted(zip(found, estimates), key=lambda fe: (fe[0][0], fe[0][1],
                                                           fe[1] if fe[1] is not None else math.inf))
    out = []
    for (level, _, got, v), est in ranked[:want]:
        entry = {"config": build(got), "changes": _changes(values, got, order), "halvings": level,
                 "required_bytes": v.get("required_bytes"), "limit_bytes": v.get("limit_bytes")}
        if v.get("space"):
            entry["space"] = v["space"]
        if est is not None:
            entry["estimate_us"] = est
        out.append(entry)
    return {"to_fit": out, "search": {"lowerings": search.lowered, "max_lowerings": max_lowerings,
                                      "bound_reached": search.bound_reached, "order": ORDER}}


def summary(entries: Sequence[Mapping], limit: int = 2) -> str:
    """The nearest one or two, as a message prints them."""
    parts = []
    for e in entries[:limit]:
        text = f"{e['changes']} ({e['required_bytes']} B"
        if e.get("estimate_us") is not None:
            text += f", estimate {e['estimate_us']:.1f} us"
        parts.append(text + ")")
    return "; ".join(parts)
