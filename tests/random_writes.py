"""Random writes to the stored cluster through the services, and the cluster they start
from: what the incremental-equals-rebuild tests of the worker's kept state
(``tests/allocation/services/test_incremental.py``) and of the scenario baseline
(``tests/scenarios/test_baseline.py``) run."""

from __future__ import annotations

import contextlib
import random

from allocation import models
from allocation.engine.manifests import InvalidManifests
from allocation.services.manifests import import_texts
from allocation.services.writes import write
from tests import factories as f
from tests.allocation.engine.controlplane.cp_factories import cp_claim, cp_class, driver_sim
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, request, slice_doc

__all__ = ["BASE", "RandomWrites", "seed_node", "v1_node"]

SEL = 'device.driver == "gpu.example.com"'
CTRL = "net.example.com"
SEED_CLASS = "cluster-autoscaler.kubernetes.io/provisioning-class-name"
SEED_CONSUME = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"


def seed_node(name: str) -> list[dict]:
    """A node with a seed slice of two named devices."""
    return [f.node(name), f.named_slice(name, [{"name": f"{name}-g{i}"} for i in range(2)])]


def v1_node(name: str) -> list[dict]:
    """A node with a v1 ResourceSlice of two devices, its own pool."""
    return [f.node(name), slice_doc([{"name": f"d{i}"} for i in range(2)], name=f"{name}-s",
                                    nodeName=name, pool={"name": name,
                                                         "resourceSliceCount": 1})]


BASE = [
    f.resource_class(), class_doc(selectors=[{"cel": {"expression": SEL}}]),
    f.resource_class("seed-gpu"), f.claim_parameters("one", "true"),
    f.claim_template("tpl", class_name="seed-gpu", params="one"),
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "vtpl", "namespace": "default"},
     "spec": {"spec": {"devices": {"requests": [request()]}}}},
    *seed_node("n0"), *v1_node("m0")]
"""The cluster the random writes start from: both dialects' classes and templates, a node
of each."""


class RandomWrites:
    """Random writes through the services: nodes, pods with claims of both dialects,
    pods with template claims alone (a catch-up of new pods only keeps the epoch, so the
    scans resume where the last pass left them), pods finishing (freed devices wake pods
    left pending), pods whose claims a simulated control-plane driver allocates (the first
    one brings the driver and its class: the drivers then walk the claims), pods and nodes
    deleted, pods' annotations changed (what the autoscaler checks on every pod that
    changed)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.n, self.driver = rng, 0, False

    def step(self) -> None:
        self.n += 1
        pods = list(models.Pod.objects.values_list("name", flat=True))
        nodes = list(models.Node.objects.values_list("name", flat=True))
        choice = self.rng.choice(["pod", "pod", "v1pod", "spod", "tpod", "vtpod", "cpod",
                                  "node", "v1node", "done", "delete", "delete-node",
                                  "annotate"])
        n = self.n
        if choice == "node":
            docs = seed_node(f"n{n}")
        elif choice == "v1node":
            docs = v1_node(f"m{n}")
        elif choice == "pod":
            docs = [f.claim(f"c{n}"), f.pod(f"p{n}", claims={"g": f"c{n}"})]
        elif choice == "spod":  # a claim of the seed's structured model (named devices)
            docs = [f.claim(f"s{n}", class_name="seed-gpu", params="one"),
                    f.pod(f"r{n}", claims={"g": f"s{n}"})]
        elif choice == "tpod":  # new pods only, their claims made from a template
            docs = [f.pod(f"t{n}-{i}", templates={"g": "tpl"})
                    for i in range(self.rng.randint(1, 2))]
        elif choice == "vtpod":  # a new pod alone, its v1 claim made from a v1 template
            doc = f.pod(f"w{n}")
            doc["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "vtpl"}]
            docs = [doc]
        elif choice == "cpod":  # a claim a control-plane driver allocates (KEP-3063)
            docs = [cp_claim(f"k{n}", "net"), f.pod(f"u{n}", claims={"g": f"k{n}"})]
            if not self.driver:
                self.driver = True
                docs = [driver_sim(CTRL, [("pool", 3, None)]), cp_class("net", CTRL), *docs]
        elif choice == "v1pod":
            docs = [claim_doc([request()], name=f"v{n}"), f.pod(f"q{n}", claims={"g": f"v{n}"})]
        elif choice == "done" and pods:
            doc = models.Pod.objects.get(name=self.rng.choice(pods)).manifest
            doc.setdefault("status", {})["phase"] = "Succeeded"
            docs = [doc]
        elif choice == "annotate" and pods:
            doc = models.Pod.objects.get(name=self.rng.choice(pods)).manifest
            notes = doc["metadata"].setdefault("annotations", {})
            notes[self.rng.choice([SEED_CLASS, SEED_CONSUME])] = "x"  # one of two: a warning
            docs = [doc]
        elif choice == "delete" and pods:
            write([], deletes=[("", "Pod", "default", self.rng.choice(pods))])
            return
        elif choice == "delete-node" and nodes:
            # a node still in use: the write is refused, nothing changes
            with contextlib.suppress(InvalidManifests):
                write([], deletes=[("", "Node", "", self.rng.choice(nodes))])
            return
        else:
            docs = seed_node(f"n{n}")
        import_texts([(f"op{n}.yaml", f.to_yaml(docs))])
