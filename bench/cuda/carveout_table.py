"""Joins Nsight Compute's launch attributes with what each launch asked for into one table, the
carve-out fixture tests/data/occupancy/ reads (docs/validation/carveout.md).

    python3 carveout_table.py probe LAUNCHES.csv NCU.csv SOURCE        # carveout_probe.cu's launches
    python3 carveout_table.py triton NCU.csv SOURCE                    # Triton launches profiled with
                                                                       # the launch__ metrics

Both print CSV rows (header first with --header) on stdout. A Triton launch's cache column is
"triton": the preference Triton's launcher sets, which sim/occupancy (TritonLauncherPreference)
derives from the shared memory; Triton never sets a carve-out percent.
"""
import csv
import gzip
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "planner"))
import ncu_csv  # noqa: E402

COLUMNS = ["source", "threads", "registers", "static_bytes", "dynamic_bytes", "grid", "cache",
           "carveout_percent", "config_bytes", "limit_registers", "limit_warps", "limit_blocks",
           "limit_shared"]


def _launch_attributes(kernel):
    m = lambda name: int(ncu_csv.metric(kernel, name, missing=-1))  # noqa: E731
    return {"threads": m("launch__block_size"), "registers": m("launch__registers_per_thread"),
            "static_bytes": m("launch__shared_mem_per_block_static"),
            "dynamic_bytes": m("launch__shared_mem_per_block_dynamic"), "grid": m("launch__grid_size"),
            "config_bytes": ncu_csv.shared_mem_config_bytes(kernel),
            "limit_registers": m("launch__occupancy_limit_registers"),
            "limit_warps": m("launch__occupancy_limit_warps"),
            "limit_blocks": m("launch__occupancy_limit_blocks"),
            "limit_shared": m("launch__occupancy_limit_shared_mem")}


def probe_rows(launches_path, ncu_path, source):
    asked = list(csv.DictReader(open(launches_path)))
    kernels = ncu_csv.kernels(ncu_path)
    if len(asked) != len(kernels):
        sys.exit(f"carveout_table: {launches_path} has {len(asked)} launches, {ncu_path} {len(kernels)}")
    rows = []
    for a, k in zip(asked, kernels):
        row = _launch_attributes(k)
        if row["dynamic_bytes"] != int(a["dynamic_bytes"]) or row["threads"] != int(a["threads"]):
            sys.exit(f"carveout_table: launch {a['launch']} does not match ncu's kernel (order lost)")
        row.update(source=source, cache=a["cache"], carveout_percent=int(a["carveout_percent"]))
        rows.append(row)
    return rows


def _is_raw_page(ncu_path):
    """--page raw output has a column per metric; the default page a row per metric."""
    opener = gzip.open if ncu_path.endswith(".gz") else open
    with opener(ncu_path, "rt") as f:
        for line in f:
            if line.startswith('"ID"'):
                return '"Metric Name"' not in line
    sys.exit(f"carveout_table: {ncu_path} has no ncu CSV header")


def triton_rows(ncu_path, source):
    rows = []
    read = ncu_csv.raw_kernels if _is_raw_page(ncu_path) else ncu_csv.kernels
    for k in read(ncu_path):
        row = _launch_attributes(k)
        row.update(source=source, cache="triton", carveout_percent=-1)
        rows.append(row)
    return rows


def main(argv):
    header = "--header" in argv
    argv = [a for a in argv if a != "--header"]
    if len(argv) == 5 and argv[1] == "probe":
        rows = probe_rows(argv[2], argv[3], argv[4])
    elif len(argv) == 4 and argv[1] == "triton":
        rows = triton_rows(argv[2], argv[3])
    else:
        sys.exit(__doc__)
    out = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    if header:
        out.writeheader()
    out.writerows(rows)


if __name__ == "__main__":
    main(sys.argv)
