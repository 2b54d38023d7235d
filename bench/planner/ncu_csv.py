"""Reading Nsight Compute's --csv output for the planner's measurement scripts
(ncu_smem_conflicts.py, ncu_full_size.py, cuda_gemm_ncu_summary.py, attention_ncu.py).

kernels(csv_path) -> [{metric: (value, unit)}, ...], one dict per profiled kernel in ncu's order
(rows whose value is not a number are skipped; .gz read as it is); raw_kernels(csv_path) the same of `--page raw`
output (one row per kernel, a column per metric; .gz read as it is). k_loop(lo, hi, blocks) turns the metrics of one
configuration launched at two K into per-K-element figures of the loop alone: counts per block,
cycles (per SM) not divided by the blocks.
"""
import csv
import gzip
import io
import sys


def kernels(csv_path):
    opener = gzip.open if csv_path.endswith(".gz") else open
    with opener(csv_path, "rt") as f:
        text = f.read()
    by_id = {}
    for r in csv.DictReader(io.StringIO(text[text.find('"ID"'):])):
        try:
            value = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        by_id.setdefault(int(r["ID"]), {})[r["Metric Name"]] = (value, r["Metric Unit"])
    return [by_id[i] for i in sorted(by_id)]


def raw_kernels(csv_path):
    opener = gzip.open if csv_path.endswith(".gz") else open
    with opener(csv_path, "rt") as f:
        text = f.read()
    rows = list(csv.reader(io.StringIO(text[text.find('"ID"'):])))
    header, units = rows[0], rows[1]
    out = []
    for row in rows[2:]:
        kernel = {}
        for name, unit, cell in zip(header, units, row):
            try:
                kernel[name] = (float(cell.replace(",", "")), unit)
            except ValueError:
                continue
        out.append(kernel)
    return out


def metric(kernel, name, missing=0.0):
    """One metric's value of a kernel from kernels() or raw_kernels(); `missing` where ncu gave
    none or not a number."""
    return kernel[name][0] if name in kernel else missing


# Scales from the units ncu states a duration or a byte count in (they vary with the value's size
# and ncu's version) to microseconds and to megabytes, for in_units.
TO_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
TO_MB = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3}


def in_units(kernel, name, scales, unknown_scale=float("nan")):
    """One metric's value of a kernel in the units `scales` maps to (TO_US, TO_MB, ...): nan where
    ncu gave none, the value times `unknown_scale` where its unit is not in `scales`."""
    value, unit = kernel.get(name, (float("nan"), ""))
    return value * scales.get(unit, unknown_scale)


def shared_mem_config_bytes(kernel):
    """launch__shared_mem_config_size in bytes (ncu states it in KB or bytes depending on its
    version); -1 where the profile lacks it."""
    value, unit = kernel.get("launch__shared_mem_config_size", (-1, ""))
    scale = {"Kbyte": 1024, "KB": 1024, "byte": 1, "": 1}.get(unit)
    if scale is None:
        sys.exit(f"ncu_csv: launch__shared_mem_config_size in unit {unit!r}, not known")
    return int(value * scale)


def named_kernels(csv_path):
    """[(kernel name, {metric: value}), ...] in ncu's order, for runs that profile a subset of the
    launches (a --kernel-name filter), where the name says which configuration ran."""
    text = open(csv_path).read()
    names = {}
    for r in csv.DictReader(io.StringIO(text[text.find('"ID"'):])):
        names.setdefault(int(r["ID"]), r["Kernel Name"])
    return [(names[i], values(k)) for i, k in zip(sorted(names), kernels(csv_path))]


def values(kernel):
    """{metric: value} of one kernel from kernels()."""
    return {m: v for m, (v, _) in kernel.items()}


def attach(order, csv_path, order_path, per_entry=1):
    """Gives each launch record of `order` its kernel's metric values ("metrics"); `per_entry`
    kernels were profiled per record (the last one is used). Exits naming both files when the
    counts differ."""
    profiled = kernels(csv_path)
    if len(profiled) != per_entry * len(order):
        sys.exit(f"{csv_path}: {len(profiled)} profiled kernels, {order_path} launched {per_entry * len(order)}")
    for i, o in enumerate(order):
        o["metrics"] = values(profiled[per_entry * i + per_entry - 1])
    return order


def k_loop(lo, hi, blocks):
    """(per K element per block, per K element for metrics counting cycles) from two records of
    one configuration at K = lo["K"] < hi["K"]: the epilogue and prologue cancel."""
    dk = hi["K"] - lo["K"]
    both = [m for m in lo["metrics"] if m in hi["metrics"]]
    per_block = {m: (hi["metrics"][m] - lo["metrics"][m]) / dk / blocks for m in both}
    per_k = {m: (hi["metrics"][m] - lo["metrics"][m]) / dk for m in both if "cycles" in m}
    return per_block, per_k
