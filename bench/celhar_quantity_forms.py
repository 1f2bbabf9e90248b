"""Compare the planner's quantity forms with upstream Kubernetes on random quantities.

Run from the repository root with a celhar binary (a harness that evaluates CEL with the real
k8s.io/dynamic-resource-allocation environment, one JSON line per expression)::

    python bench/celhar_quantity_forms.py /work/harness/bin/celhar-0.36 SEED COUNT

Three checks (docs/cel.md "Quantity forms"): COUNT random expressions (``quantity()`` of
random texts, ``add``/``sub`` of quantities and ints, chains, then ``isInteger``,
``asInteger``, ``asApproximateFloat``, ``compareTo``, ``sign``); ``Quantity.String()`` of
COUNT random texts (what the API server stores for a capacity); and COUNT/2 random device
capacities through the planner's device path, celhar being given the stored text (it parses
a capacity as given). Floats are compared bit for bit (NaN, signed zero), errors by text.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allocation.engine.cel import _k8s, _qform  # noqa: E402
from allocation.engine.cel._library import compile_device_program  # noqa: E402
from allocation.engine.cel.device import _activation, _plans  # noqa: E402

_SUFFIXES = ["", "", "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti",
             "Pi", "Ei", "e3", "e-3", "E18", "e0", "e+2", "e-9", "e-12", "e21", "e300", "e400",
             "e-400", "E-1", "e19"]
_SPECIAL = ["0", "00", "0.0", "0.000", ".5", "1.", "9223372036854775807", "9223372036854775808",
            "922337203685477580", "999999999999999999", "1000", "1000000000000000000"]
_INTS = [0, 1, -1, 7, 1000, -5000, 2**62, -(2**63), 2**63 - 1]
_CAPACITY = 'device.capacity["d"].a'
_CAPACITY_EXPRESSIONS = [
    f"{_CAPACITY}.isInteger()", f"{_CAPACITY}.asApproximateFloat()",
    f'{_CAPACITY}.add(quantity("1m")).isInteger()', f"{_CAPACITY}.sub(1).asApproximateFloat()",
    f'{_CAPACITY}.compareTo(quantity("1"))', f"{_CAPACITY}.asInteger()",
    f'{_CAPACITY}.compareTo(quantity("1000E"))', f'{_CAPACITY} == quantity("1")',
    f"{_CAPACITY}.add({_CAPACITY}).asApproximateFloat()"]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.1:
        number = rng.choice(_SPECIAL)
    else:
        number = "".join(rng.choice("0123456789")
                         for _ in range(rng.choice([1, 1, 2, 3, 5, 9, 15, 18, 19, 20])))
        if rng.random() < 0.4:
            number += "." + "".join(rng.choice("0123456789")
                                    for _ in range(rng.choice([1, 2, 3, 6, 9, 10, 12])))
    return rng.choice(["", "", "", "-", "+"]) + number + rng.choice(_SUFFIXES)


def _valid_text(rng: random.Random) -> str:
    while True:
        text = _text(rng)
        try:
            _k8s.quantity_text(text)
        except ValueError:
            continue
        return text


def _expression(rng: random.Random) -> str:
    a, b = (f"quantity({json.dumps(_text(rng))})" for _ in range(2))
    i = rng.choice(_INTS)
    base = rng.choice([a, f"{a}.add({b})", f"{a}.sub({b})", f"{a}.add({i})", f"{a}.sub({i})",
                       f"{a}.add({b}).sub({a})", f"{a}.sub({i}).add({b})"])
    op = rng.choice(["isInteger()", "asInteger()", "asApproximateFloat()",
                     'compareTo(quantity("0"))', f"compareTo({b})", "sign"])
    return f"sign({base})" if op == "sign" else f"{base}.{op}"


def _celhar(binary: str, lines: list[dict]) -> list[dict]:
    feed = "".join(json.dumps(line) + "\n" for line in lines)
    out = subprocess.run([binary], input=feed, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def _outcome(result: dict) -> tuple[str, object]:
    if "compile_error" in result:
        return ("compile", None)
    if "error" in result:
        return ("error", result["error"])
    return ("value", result["value"])


def _planner(expression: str, activation: dict | None = None) -> tuple[str, object]:
    try:
        program = compile_device_program(expression, True)
    except ValueError:
        return ("compile", None)
    ok, value = program.run(activation or {})
    if ok:
        return ("value", value)
    return ("error", program.run_bool(activation or {})[1])  # cel-go's wording


def _same(mine: object, theirs: object) -> bool:
    if isinstance(mine, tuple) and isinstance(theirs, tuple):
        return len(mine) == len(theirs) and all(map(_same, mine, theirs))
    if isinstance(mine, float) or isinstance(theirs, float):
        if not (isinstance(mine, float) and isinstance(theirs, float)):
            return False
        if math.isnan(mine) or math.isnan(theirs):
            return math.isnan(mine) and math.isnan(theirs)
        return mine == theirs and math.copysign(1, mine) == math.copysign(1, theirs)
    return type(mine) is type(theirs) and mine == theirs


def _report(name: str, pairs: list[tuple[str, object, object]]) -> int:
    differ = [(what, mine, theirs) for what, mine, theirs in pairs if not _same(mine, theirs)]
    for what, mine, theirs in differ[:20]:
        print(f"  DIFF {what}: planner {mine!r}, upstream {theirs!r}")
    print(f"{name}: {len(pairs)} compared, {len(differ)} differ")
    return len(differ)


def main() -> int:
    binary, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    expressions = [_expression(rng) for _ in range(count)]
    results = _celhar(binary, [{"expr": e} for e in expressions])
    differ = _report("expressions", [(e, _planner(e), _outcome(r))
                                     for e, r in zip(expressions, results, strict=True)])
    texts = [_valid_text(rng) for _ in range(count)]
    results = _celhar(binary, [{"expr": f"quantity({json.dumps(t)})"} for t in texts])
    differ += _report("Quantity.String()", [(t, _qform._serialized(t), r["value"]["repr"])
                                            for t, r in zip(texts, results, strict=True)])
    pairs, lines = [], []
    for text in texts[: count // 2]:
        stored = {"driver": "d", "capacity": {"d": {"a": _qform._serialized(text)}}}
        for expression in _CAPACITY_EXPRESSIONS:
            program = compile_device_program(expression, True)
            activation = _activation("d", {"capacity": {"a": {"value": text}}}, _plans(None),
                                     True, program.quantity_forms)
            pairs.append([f"{text}: {expression}", _planner(expression, activation), None])
            lines.append({"expr": expression, "device": stored})
    for pair, result in zip(pairs, _celhar(binary, lines), strict=True):
        pair[2] = _outcome(result)
    differ += _report("capacities", [tuple(pair) for pair in pairs])
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
