"""Replays the Inductor kernels recorded on the GPU machine (tests/data/inductor/inductor_data.tar.gz)
under the PyTorch and Triton installed here, no GPU needed: how a PyTorch release scratchsim.inductor
was not measured with reads them (docs/inductor.md, "PyTorch versions").

    python3 bench/inductor/replay_recorded.py [--out FILE.json] [--no-code]

* Every recorded template choice (`*.records.json`: mm on sm_90, FlexAttention on sm_90, the
  chooser's on sm_89) through check_source(): its generated module loaded by this PyTorch's
  runtime, the compile pieces read by this PyTorch's CachingAutotuner, lowered by this Triton; the
  verdict and the shared-memory figure against the recorded ones.
* Every output-code module (`*.code.py`) through output_code_records() for every target of
  scratchsim.inductor.TARGETS (--no-code: skipped): what lowers, what errs, and each kernel's
  verdict per target.
Prints a summary line per part; --out writes every row.
"""
import argparse
import contextlib
import json
import os
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data", "inductor", "inductor_data.tar.gz")
# (member, target, device) the template records were judged for on the GPU machine.
TEMPLATE_RECORDS = [("run1/flex_on.records.json", "sm_90", "h200"), ("run2/block_on.records.json", "sm_90", "h200"),
                    ("run1/chooser.records.json", "sm_89", "rtx4090")]


def replay_templates(tar, ssi):
    rows = []
    for member, arch, device in TEMPLATE_RECORDS:
        for r in json.load(tar.extractfile(member)):
            v = ssi.check_source(r["source"], "triton_" + r["template"], arch, device, allow_untested=True)
            row = {"member": member, "template": r["template"], "params": r["params"], "recorded_verdict": r["verdict"],
                   "recorded_shared": r["shared"], **({"error": v["error"]} if "error" in v else
                                                      {"verdict": v["verdict"], "shared": v["shared"]})}
            row["same"] = "error" not in v and (v["verdict"], v["shared"]) == (r["verdict"], r["shared"])
            rows.append(row)
        part = [x for x in rows if x["member"] == member]
        print(f"{member} ({arch}, {device}): {sum(x['same'] for x in part)} of {len(part)} choices give the recorded "
              f"verdict and shared memory; {sum('error' in x for x in part)} errors", flush=True)
    return rows


def _no_gpu_driver():
    """Output-code modules set the GPU driver at import; a PyTorch that can skip it (2.15:
    triton_helpers.skip_gpu_driver_setup) is asked to, as lowering names its target itself."""
    try:
        from torch._inductor.runtime import triton_helpers
        return triton_helpers.skip_gpu_driver_setup()
    except (ImportError, AttributeError):
        return contextlib.nullcontext()


def replay_code(tar, ssi):
    out = {}
    for m in tar.getmembers():
        if not m.name.endswith(".code.py"):
            continue
        t0 = time.perf_counter()
        try:
            with _no_gpu_driver():
                records = ssi.output_code_records([tar.extractfile(m).read().decode()], ssi.TARGETS,
                                                  allow_untested=True)
        except Exception as e:  # a PyTorch that cannot import output code without a GPU (2.11)
            out[m.name] = {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
            print(f"{m.name}: not loaded here: {out[m.name]['error']}", flush=True)
            continue
        rep = ssi.report(records, ssi.TARGETS)
        errors = sorted(f"{r['name']} {t}: {c['error'][t]}" for r in records for c in r["configs"] for t in c["error"])
        lowerings = sum(len(c["ttgir"]) + len(c["error"]) for r in records for c in r["configs"])
        out[m.name] = {"seconds": time.perf_counter() - t0, "kernels": len(records), "lowerings": lowerings,
                       "errors": errors, "summary": rep["summary"],
                       "verdicts": {k["name"]: {t: [v["verdict"], v["max_shared"]] for t, v in k["targets"].items()}
                                    for k in rep["kernels"]}}
        print(f"{m.name}: {len(records)} kernels, {lowerings} lowerings, {len(errors)} errors", flush=True)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--no-code", action="store_true")
    args = p.parse_args()
    import torch
    import triton
    import scratchsim.inductor as ssi
    print(f"PyTorch {torch.__version__}, Triton {triton.__version__}", flush=True)
    with tarfile.open(DATA) as tar:
        result = {"torch": torch.__version__, "triton": triton.__version__, "templates": replay_templates(tar, ssi)}
        if not args.no_code:
            result["code"] = replay_code(tar, ssi)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1, default=str)
    same = sum(r["same"] for r in result["templates"])
    print(f"template choices as recorded: {same} of {len(result['templates'])}")
    return 0 if same == len(result["templates"]) else 1


if __name__ == "__main__":
    sys.exit(main())
