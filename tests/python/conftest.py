"""pytest for the Python package (docs/python.md). `bash .ci/run` installs it in a venv and runs
these; locally: `pip install . && pytest tests/python`."""
import os
import pathlib
import tempfile

import pytest

# Triton's compiles in these tests (the reference metadata.shared) go to a cache of their own.
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="scratchsim_pytest_triton_"))

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def repo():
    return REPO


@pytest.fixture
def mlp_graph():
    return str(REPO / "models" / "graphs" / "mlp.pbtxt")


@pytest.fixture
def sm90_ttgir(tmp_path):
    """A kernel Triton 3.6 compiled for sm_90 (the fixtures of tests/data/triton) and its
    metadata.shared (backends/triton/ttgir_predictions.tsv, equal to Triton's)."""
    import tarfile
    name = "matmul_sm90_c484c7782b"
    with tarfile.open(REPO / "tests" / "data" / "triton" / "ttgir.tar.gz") as t:
        text = t.extractfile(f"{name}.ttgir").read().decode()
    shared = None
    for line in (REPO / "backends" / "triton" / "ttgir_predictions.tsv").read_text().splitlines():
        if line.startswith(name + "\t"):
            shared = int(line.split("\t")[1])
    path = tmp_path / f"{name}.ttgir"
    path.write_text(text)
    return path, text, shared
