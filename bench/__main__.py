"""Run every benchmark module: ``python -m bench [NAME-SUBSTRING ...]``.

Discovers ``bench/bench_*.py`` modules, imports them in name order and calls each
module's ``main()`` with no arguments, printing a header before each. With
arguments, runs only modules whose name (after ``bench_``) contains one of them. A benchmark that
raises is reported and the rest still run; the exit status is then 1.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
import traceback
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def discover() -> list[str]:
    """Module names (``bench.bench_*``) in name order."""
    return sorted(
        f"{__package__ or 'bench'}.{info.name}"
        for info in pkgutil.iter_modules([str(PACKAGE_DIR)])
        if info.name.startswith("bench_") and not info.ispkg
    )


def main(argv: list[str] | None = None) -> int:
    filters = sys.argv[1:] if argv is None else argv
    names = [
        n
        for n in discover()
        if not filters or any(f in n.rpartition(".")[2].removeprefix("bench_") for f in filters)
    ]
    if not names:
        suffix = f" matching {filters}" if filters else ""
        print(f"no benchmarks found (bench/bench_*.py){suffix}")
        return 1 if filters else 0
    failed: list[str] = []
    for name in names:
        header = f"== {name} "
        print(f"\n{header}{'=' * max(0, 72 - len(header))}", flush=True)
        started = time.perf_counter()
        try:
            module = importlib.import_module(name)
            entry = getattr(module, "main", None)
            if not callable(entry):
                raise TypeError(f"{name} defines no main() function")
            entry()
        except Exception:
            traceback.print_exc()
            failed.append(name)
            print(f"-- {name}: FAILED", flush=True)
        else:
            print(f"-- {name}: done in {time.perf_counter() - started:.2f} s", flush=True)
    if failed:
        print(f"\n{len(failed)} benchmark(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
