"""Fuzzing the reader, loader and simulation with hypothesis: what any input must get.

Every text, however hostile, ends like ``simulate``: exit 0 (simulated) or exit 2 (invalid
input, every problem listed), never another exception, within bounded time and memory.
Used by ``tests/allocation/engine/manifests/test_fuzz.py`` (a short run in a memory-limited
subprocess) and ``bench/bench_fuzz.py`` (a long run that prints the counts).

Run directly: ``python -m tests.fuzzing EXAMPLES [SEED]`` prints the outcome counts as JSON
and exits 1 if any input ended otherwise.
"""

from __future__ import annotations

import json
import signal
import sys
import traceback
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = [p.read_text() for p in sorted((ROOT / "examples").glob("*.yaml"))]
SECONDS_PER_INPUT = 60  # a hang is an outcome of its own, not a stuck run

KEYS = ["apiVersion", "kind", "metadata", "name", "namespace", "spec", "status", "labels",
        "annotations", "nodeName", "driverName", "resourceClaims", "containers", "resources",
        "requests", "claims", "allocatable", "items", "selector", "count", "maxSize",
        "deletionTimestamp", "creationTimestamp", "namedResourcesWithAttributes", "attributes",
        "int", "quantity", "version", "string", "handleData", "podSets", "parameters"]
KINDS = [("v1", "Pod"), ("v1", "Node"), ("v1", "PodTemplate"), ("v1", "List"),
         ("resource.k8s.io/v1alpha2", "ResourceClaim"),
         ("resource.k8s.io/v1alpha2", "NodeResourceSlice"),
         ("resource.k8s.io/v1alpha2", "ResourceClass"),
         ("draplanner.io/v1alpha1", "NodeGroup"),
         ("draplanner.io/v1alpha1", "DriverSimulation"),
         ("autoscaling.x-k8s.io/v1", "ProvisioningRequest"),
         ("dra.example.com/v1", "CardParameters")]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**60, max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["16Gi", "-100", "1e309", "500m", "v1.2.3", "device.driver == 'x'",
                     "2024-01-01T00:00:00Z", "garbage", "", "a" * 300, "9" * 30]),
    st.text(max_size=20),
)
KEY = st.one_of(st.sampled_from(KEYS), st.text(min_size=1, max_size=10))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(KEY, inner, max_size=5)), max_leaves=30)


@st.composite
def documents(draw) -> str:
    """A random object of a known kind, written as YAML or JSON."""
    api_version, kind = draw(st.sampled_from(KINDS))
    doc = {"apiVersion": api_version, "kind": kind,
           "metadata": draw(st.one_of(st.fixed_dictionaries({"name": st.sampled_from(
               ["a", "p", "n0", "Bad Name"])}), VALUES))}
    doc.update(draw(st.dictionaries(KEY, VALUES, max_size=4)))
    if draw(st.booleans()):
        return json.dumps(doc, default=str)
    import yaml

    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=draw(st.booleans()))


TOKENS = ["&a ", "*a", "[", "]", "{", "}", ": ", "- ", "---\n", "!!set ", "!!str ", "<<: *a\n",
          "? ", "~", "5: x\n", "2024-01-01: x\n", "\t", "'", '"', "#", "%YAML 1.1\n", "\x00",
          "9" * 5000, "status: &a [*a]\n", "x: &b [&c [*b]]\n"]


@st.composite
def mutated_examples(draw) -> str:
    """An example cluster with random lines dropped, repeated or spliced with YAML tokens."""
    lines = draw(st.sampled_from(EXAMPLES)).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, max(len(lines) - 1, 0)))
        action = draw(st.sampled_from(["drop", "repeat", "token", "cut"]))
        if action == "drop" and lines:
            del lines[at]
        elif action == "repeat" and lines:
            lines.insert(at, lines[at])
        elif action == "token" and lines:
            line = lines[at]
            cut = draw(st.integers(0, len(line)))
            lines[at] = line[:cut] + draw(st.sampled_from(TOKENS)) + line[cut:]
        elif action == "cut":
            lines = lines[:at]
    return "".join(lines)


@st.composite
def nesting(draw) -> str:
    """A pod with a field nested at a random depth, in flow or block style, YAML or JSON."""
    depth = draw(st.sampled_from([1, 10, 62, 63, 64, 65, 100, 1000, 20_000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"k": ', "}")]))
    value = opener * depth + closer * depth
    if draw(st.booleans()):
        return '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": ' \
            + value + "}"
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx: " + value + "\n"


@st.composite
def aliases(draw) -> str:
    """Anchors and aliases, chained or recursive, with random fan-out."""
    fan = draw(st.integers(1, 12))
    levels = draw(st.integers(1, 9))
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nl0: &l0 [" + \
        ", ".join(['"lol"'] * fan) + "]\n"
    for level in range(1, levels + 1):
        text += f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * fan) + "]\n"
    if draw(st.booleans()):
        text += f"r: &r [*l{levels}, *r]\n"
    return text


@st.composite
def odd_keys(draw) -> str:
    """Mapping keys of every YAML type, and keys given twice."""
    keys = draw(st.lists(st.sampled_from(["5", "~", "2024-01-01", "true", "1.5", "[a]", "{b: c}",
                                          "name", "name", "0x1f", "<<", "'x'"]), max_size=6))
    body = "".join(f"  ? {k}\n  : v\n" for k in keys)
    return "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n" + \
        (body.replace("\n  ", "\n    ").replace("  ?", "    ?", 1) if body else "    {}\n")


INPUTS = st.one_of(documents(), mutated_examples(), nesting(), aliases(), odd_keys(),
                   st.text(max_size=200))


def _alarm(signum, frame):
    raise TimeoutError(f"an input took more than {SECONDS_PER_INPUT} s")


def outcome(text: str) -> tuple[int, str]:
    """What ``simulate`` would exit with for ``text`` (0 or 2), or 1 and the traceback."""
    from allocation.engine.manifests import InvalidManifests, load_texts
    from allocation.engine.simulation import simulate
    from allocation.engine.writer import dump

    name = "fuzz.json" if text.lstrip().startswith(("{", "[")) else "fuzz.yaml"
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS_PER_INPUT)
    try:
        dump(simulate(load_texts([(name, text)])).output(), "yaml")
        return 0, ""
    except InvalidManifests as exc:
        text_out = str(exc)
        if "\n" in "".join(str(p) for p in exc.problems):
            return 1, f"a problem spans several lines: {text_out[:500]}"
        return 2, ""
    except BaseException:  # noqa: BLE001 - every other ending is what the fuzzer looks for
        return 1, traceback.format_exc()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(examples: int, seed_value: int = 0) -> tuple[Counter, list[tuple[str, str]]]:
    """Outcome counts of ``examples`` random inputs, and the inputs that ended otherwise."""
    counts: Counter = Counter()
    failures: list[tuple[str, str]] = []

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(INPUTS)
    def one(text: str) -> None:
        code, detail = outcome(text)
        counts[code] += 1
        if code not in (0, 2):
            failures.append((text[:2000], detail))

    one()
    return counts, failures


def main(argv: list[str]) -> int:
    examples = int(argv[0]) if argv else 200
    seed_value = int(argv[1]) if len(argv) > 1 else 0
    counts, failures = run(examples, seed_value)
    print(json.dumps({"inputs": sum(counts.values()), "exit 0": counts[0],
                      "exit 2": counts[2], "other": counts[1],
                      "first failures": failures[:3]}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
