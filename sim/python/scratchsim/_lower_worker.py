"""A worker process of scratchsim.triton.early_prune: lowers a share of an autotuner's configs to
TTGIR in parallel with the others (Triton's front end holds the GIL, so threads do not help).

    python -m scratchsim._lower_worker JOBS.pickle RESULTS.pickle

JOBS is a list of (module, attribute, cache_key, source) with source a scratchsim.triton._Source
without its kernel; RESULTS the list of ("ok", ttgir, seconds, options, ttir) or ("error", message) in
the same order ("error" carries a third item: True when scratchsim itself refused the config,
as lower() raises scratchsim.Error, rather than Triton). The kernel is imported by module and attribute, and refused when its cache_key
(the hash of its source) is not the one the parent lowered for.
"""
import importlib
import pickle
import sys


def lower_jobs(jobs):
    from scratchsim import triton as sst
    results = []
    kernels = {}
    for module, attribute, cache_key, source in jobs:
        try:
            fn = kernels.get((module, attribute))
            if fn is None:
                fn = sst._jit_function(getattr(importlib.import_module(module), attribute))
                kernels[(module, attribute)] = fn
            if fn.cache_key != cache_key:
                raise RuntimeError(f"{module}.{attribute} imported here is not the kernel the autotuner runs")
            source.fn = fn
            lowered = sst._lower_source(source)
            results.append(("ok", lowered.ttgir, lowered.seconds, lowered.options, lowered.ttir))
        except Exception as e:  # the parent words it as the serial path does
            message = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
            results.append(("error", str(e) if isinstance(e, sst.Error) else message, isinstance(e, sst.Error)))
    return results


def main(argv):
    with open(argv[1], "rb") as f:
        jobs = pickle.load(f)
    results = lower_jobs(jobs)
    with open(argv[2], "wb") as f:
        pickle.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
