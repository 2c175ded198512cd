"""The package as installed in the venv (by scripts/setup): it imports
without PYTHONPATH or GENIE_LIBRARY, with its own copy of libgenie.so."""
import os
import subprocess
import sys

import pytest

import genie


def test_installed_package_imports():
    if os.environ.get("GENIE_PY_NOT_INSTALLED"):
        pytest.skip("the package runs from the source tree here (scripts/gpu-python could not install it)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GENIE_LIBRARY")}
    code = "import genie, os; print(genie.__version__); print(os.path.dirname(genie.__file__))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    if "No module named 'genie'" in p.stderr:
        pytest.fail(f"genie is not installed for {sys.executable}: run scripts/setup")
    assert p.returncode == 0, p.stderr
    version, where = p.stdout.split()
    assert version == genie.__version__
    assert os.path.exists(os.path.join(where, "libgenie.so"))
