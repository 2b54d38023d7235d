"""pytest for the Python package (docs/python.md). `bash .ci/run` installs it in a venv and runs
these; locally: `pip install . && pytest tests/python`."""
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def repo():
    return REPO


@pytest.fixture
def mlp_graph():
    return str(REPO / "models" / "graphs" / "mlp.pbtxt")
