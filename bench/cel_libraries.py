"""Compare CEL libraries on one device selector: compile time and time per evaluation.

Run from the repository root: ``python bench/cel_libraries.py``. Prints a table.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEVICES = 10_000
RUNS = 3
# Each library sees the memory as a plain int where it cannot compare quantities itself.
PLAIN = 'quantities["memory"] >= 34359738368 && strings["model"] == "A100"'
TAGGED = 'quantities["memory"] >= "32Gi" && strings["model"] == "A100"'


def _devices() -> list[dict[str, dict[str, object]]]:
    return [
        {"quantities": {"memory": (40 if i % 2 else 16) * 2**30},
         "strings": {"model": "A100", "UUID": f"GPU-{i}"}}
        for i in range(DEVICES)
    ]


def _time(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for _ in range(repeat):
            action()
        samples.append((time.perf_counter() - start) / repeat)
    return statistics.median(samples)


def _per_eval(run: Callable[[dict[str, dict[str, object]]], object]) -> float:
    devices = _devices()
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for device in devices:
            run(device)
        samples.append((time.perf_counter() - start) / len(devices))
    return statistics.median(samples)


def bench_cel_expr_python() -> tuple[float, float]:
    from cel_expr_python import cel

    t = cel.Type
    env = cel.NewEnv(variables={"quantities": t.Map(t.STRING, t.INT),
                                "strings": t.Map(t.STRING, t.STRING)})
    expression = env.compile(PLAIN)
    return _time(lambda: env.compile(PLAIN), 200), _per_eval(lambda d: expression.eval(data=d))


def bench_common_expression_language() -> tuple[float, float]:
    import cel

    program = cel.compile(PLAIN)
    return _time(lambda: cel.compile(PLAIN), 200), _per_eval(lambda d: program.execute(d))


def bench_celpy() -> tuple[float, float]:
    import logging

    import celpy

    logging.getLogger("celpy").setLevel(logging.CRITICAL)
    env = celpy.Environment()

    def build() -> object:
        return env.program(env.compile(PLAIN))

    program = build()
    return _time(build, 20), _per_eval(lambda d: program.evaluate(celpy.json_to_cel(d)))


def bench_planner(cached: bool) -> tuple[float, float]:
    from allocation.engine.attributes import Attribute, AttributeSet
    from allocation.engine.cel import compile_selector
    from allocation.engine.cel._library import compile_program
    from allocation.engine.quantity import Quantity

    sets = [
        AttributeSet([Attribute("memory", "quantity", Quantity(d["quantities"]["memory"])),
                      Attribute("model", "string", "A100"),
                      Attribute("UUID", "string", d["strings"]["UUID"])])
        for d in _devices()
    ]
    selector = compile_selector(TAGGED)
    compile_time = _time(lambda: compile_program(TAGGED), 200)
    samples = []
    for _ in range(RUNS):
        fresh = [AttributeSet(s) for s in sets]  # activations are built inside the timing
        start = time.perf_counter()
        for attributes in fresh:
            if cached:
                selector.evaluate(attributes)
            else:
                selector._run(attributes)
        samples.append((time.perf_counter() - start) / len(fresh))
    return compile_time, statistics.median(samples)


def main() -> None:
    rows = [
        ("cel-expr-python, plain ints", bench_cel_expr_python),
        ("common-expression-language (cel), plain ints", bench_common_expression_language),
        ("cel-python (celpy), plain ints", bench_celpy),
        ("planner selector (cel-expr-python, tagged quantity), no cache",
         lambda: bench_planner(False)),
        ("planner selector, with result cache", lambda: bench_planner(True)),
    ]
    print(f"{'library':<64} {'compile':>12} {'per evaluation':>16}")
    for name, bench in rows:
        try:
            compile_time, per_eval = bench()
        except ImportError:
            print(f"{name:<64} {'not installed':>12}")
            continue
        print(f"{name:<64} {compile_time * 1e6:>10.1f}us {per_eval * 1e6:>14.2f}us")
    python = sys.version.split()[0]
    print(f"({DEVICES} devices differing in UUID, median of {RUNS} runs; Python {python})")


if __name__ == "__main__":
    main()
