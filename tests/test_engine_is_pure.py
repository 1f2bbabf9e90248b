"""allocation.engine is a pure-Python library: importing all of it must not load Django."""

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# Runs in a fresh interpreter so that nothing this test session imported counts.
PROBE = r"""
import importlib, pkgutil, sys

import allocation.engine as engine

imported = [engine.__name__]

def reraise(name):
    # walk_packages swallows errors from importing subpackages; import again to raise them.
    importlib.import_module(name)
    raise SystemExit("could not import " + name)

for info in pkgutil.walk_packages(engine.__path__, engine.__name__ + ".", onerror=reraise):
    importlib.import_module(info.name)  # errors propagate: a broken module fails the test
    imported.append(info.name)

loaded = sorted(m for m in sys.modules if m == "django" or m.startswith("django."))
print("imported", len(imported), "modules:", ", ".join(imported))
assert not loaded, "allocation.engine imports Django: " + ", ".join(loaded[:10])
"""


def test_engine_imports_without_django():
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, (
        f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    assert "imported" in result.stdout
