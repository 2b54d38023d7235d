"""The reuse window of an unaligned B against the L1 a launch runs with (docs/validation/carveout.md,
docs/validation/planner-h200-workloads.md "What the depth does").

An unaligned B is loaded with the lanes along K: one warp request touches BLOCK_K rows' lines of one
column, and the other columns of each line come in later requests of the same K step. A line is
reused only if the L1 still holds it then, so the L1 must hold one K step's lines of every
co-resident block: BLOCK_K x (BLOCK_N x ELT / 128 + 1) lines of 128 B (the + 1: an unaligned row
straddles one more line) times the blocks per SM. The L1 is the unified 256 KiB less the carve-out
the driver configures, which `simulate` models; the co-resident blocks are its occupancy, at most
the grid's blocks per SM. No term is fitted. The window, the L1 and the verdict are the planner's
(`simulate plan`'s `l1_window`: the graph's l1_window_bytes, sim/planner/perf_model.cc).

    python3 l1_reuse_window.py predict SET SIMULATE > PREDICTIONS.csv   # from decode_ncu.py's GROUPS
    python3 l1_reuse_window.py judge PREDICTIONS.csv ORDER.json NCU.csv  # against the L1 hit rates

A launch is judged to thrash when the L1 hits fewer than 72% of its global-load sectors (unaligned
launches that keep their lines hit 76-89%, those that lose them 62-66%: the depth run).
"""
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(HERE, "..", "..", "models", "graphs", "triton_matmul.pbtxt")
ELT = {"f16": 2, "f32": 4}
THRASH_BELOW_HIT_RATE = 0.72
COLUMNS = ["M", "N", "K", "dtype", "BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_STAGES", "NUM_WARPS", "blocks_per_sm",
           "window_bytes", "carveout_bytes", "l1_bytes", "predicted_thrash"]


def predict_one(simulate, M, N, K, dtype, cfg, sms):
    """The window and the L1 as the planner charges them (`simulate plan`'s `l1_window`, from the
    graph's l1_window_bytes and the modelled carve-out), beside the occupancy `simulate` reports."""
    bm, bn, bk, stages, warps = cfg
    sizes = (("M", M), ("N", N), ("K", K), ("ELT", ELT[dtype]))
    tile = (("BLOCK_M", bm), ("BLOCK_N", bn), ("BLOCK_K", bk), ("NUM_STAGES", stages), ("NUM_WARPS", warps))
    fit_args = [simulate, "--device", "h200", "--graph", GRAPH, "--format=json"]
    plan_args = [simulate, "plan", "--device", "h200", "--graph", GRAPH, "--format", "json", "--allow-spills"]
    for name, value in sizes + tile:
        fit_args += ["--set", f"{name}={value}"]
        plan_args += ["--set" if (name, value) in sizes else "--param", f"{name}={value}"]
    occupancy = json.loads(subprocess.run(fit_args, capture_output=True, text=True).stdout)["occupancy"]
    plan = json.loads(subprocess.run(plan_args, capture_output=True, text=True).stdout)
    window = plan["configs"][0]["l1_window"]
    return {"M": M, "N": N, "K": K, "dtype": dtype, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
            "NUM_STAGES": stages, "NUM_WARPS": warps,
            "blocks_per_sm": min(int(occupancy["blocks_per_core"]), -(-(-(-M // bm) * -(-N // bn)) // sms)),
            "window_bytes": int(window["bytes_per_core"]),
            "carveout_bytes": int(occupancy["launch_carveout_bytes"]), "l1_bytes": int(window["l1_bytes_per_core"]),
            "predicted_thrash": int(window["overflows"])}


def predict(which, simulate):
    sys.path.insert(0, HERE)
    from decode_ncu import GROUPS
    model = open(os.path.join(HERE, "..", "..", "models", "devices", "h200.textproto")).read()
    sms = int(model.split("num_cores:")[1].split()[0])
    out = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    out.writeheader()
    for shapes, configs, dtype in GROUPS[which]:
        for M, N, K in shapes:
            for cfg in configs:
                out.writerow(predict_one(simulate, M, N, K, dtype, cfg, sms))


def judge(predictions_path, order_path, ncu_path):
    sys.path.insert(0, HERE)
    from ncu_csv import kernels, shared_mem_config_bytes
    predictions = list(csv.DictReader(open(predictions_path)))
    order = json.load(open(order_path))
    launches = kernels(ncu_path)
    if not (len(predictions) == len(order) == len(launches)):
        sys.exit(f"l1_reuse_window: {len(predictions)} predictions, {len(order)} launches, {len(launches)} profiles")
    agree = 0
    for p, o, m in zip(predictions, order, launches):
        if (int(p["M"]), int(p["N"]), int(p["BLOCK_N"]), int(p["NUM_STAGES"])) != (
                o["M"], o["N"], o["config"]["BLOCK_N"], o["config"]["NUM_STAGES"]):
            sys.exit("l1_reuse_window: predictions and launches are not in the same order")
        hits = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"][0]
        sectors = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"][0]
        rate = hits / sectors if sectors else 0.0
        measured = int(rate < THRASH_BELOW_HIT_RATE)
        carveout = shared_mem_config_bytes(m)
        agree += measured == int(p["predicted_thrash"])
        print(f"{p['dtype']} {p['M']}x{p['N']}x{p['K']} {p['BLOCK_M']}/{p['BLOCK_N']}/{p['BLOCK_K']}/{p['NUM_STAGES']}: "
              f"window {int(p['window_bytes']) // 1024} KiB, L1 {int(p['l1_bytes']) // 1024} KiB "
              f"(carve-out {int(p['carveout_bytes']) // 1024}, measured {carveout // 1024}), predicted "
              f"{'thrash' if int(p['predicted_thrash']) else 'keeps'}, hit {rate:.2f} "
              f"{'thrash' if measured else 'keeps'}{'' if measured == int(p['predicted_thrash']) else '  MISS'}, "
              f"{m['gpu__time_duration.sum'][0] / 1000:.0f} us")
    print(f"agree {agree} of {len(predictions)}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "predict":
        predict(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "judge":
        judge(*sys.argv[2:])
    else:
        sys.exit(__doc__)
