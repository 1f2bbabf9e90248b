"""Claims from resource.k8s.io/v1 ResourceClaimTemplates, as upstream's resourceclaim
controller makes them (pkg/controller/resourceclaim; docs/v1.md, "Template claims").

Pure functions over plain dicts (a Pod and a ResourceClaimTemplate document in, a v1
ResourceClaim document out), so the simulation's claim controller and the autoscaler's
what-if both use them. Where upstream is random (the API server's ``generateName``
suffix, the object's uid), the result is derived from the pod's UID and the pod claim
name, so output is deterministic (docs/v1.md, "Planner decisions").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

try:  # CPython's own SHA-256 (3.11; ``_sha2`` from 3.12), see _suffix
    from _sha256 import sha256 as _sha256
except ImportError:  # pragma: no cover - the Python release's other name, or none
    try:
        from _sha2 import sha256 as _sha256
    except ImportError:
        _sha256 = hashlib.sha256

from allocation.engine.constants import POD_CLAIM_NAME_ANNOTATION
from allocation.engine.objects.meta import ObjectMeta, json_copy, stable_uid

__all__ = [
    "NAME_ALPHABET",
    "MAX_BASE_LEN",
    "SUFFIX_LEN",
    "ClaimNotCreated",
    "generate_name",
    "name_suffix",
    "generated_claim_name",
    "generated_name",
    "extended_claim_name",
    "EXTENDED_CLAIM_ANNOTATION",
    "claim_from_template",
    "ClaimPrototype",
    "pod_claim_sources",
    "resolve_claim_name",
    "not_for_pod",
    "pod_owner_reference",
]

NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""Kubernetes' alphabet for random name suffixes (k8s.io/apimachinery util/rand): no
vowels, no look-alikes."""

MAX_BASE_LEN = 57
"""Upstream's limit for ``<pod>-<podClaimName>-``: a hyphen and 5 random characters still
fit a 63-character name."""

SUFFIX_LEN = 5
"""The API server's ``generateName`` suffix length."""

MAX_GENERATED_BASE = 63 - SUFFIX_LEN
"""The API server cuts a longer ``generateName`` to this many characters."""

EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
"""On the claim kube-scheduler makes for a pod's extended resources (KEP-5004), value
``"true"``."""

_CLAIM_API_VERSION = "resource.k8s.io/v1"


class ClaimNotCreated(LookupError):
    """A pod's template claim has no entry in ``pod.status.resourceClaimStatuses`` yet
    (upstream's ``resourceclaim.ErrClaimNotFound``)."""


def generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The ``generateName`` upstream gives a claim: ``<pod>-<podClaimName>-``; over
    :data:`MAX_BASE_LEN` characters both parts are cut in proportion to their length and
    joined by one hyphen (no trailing hyphen then, as upstream).

    Returns:
        The base the suffix is appended to.
    """
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) <= MAX_BASE_LEN:
        return base
    # Go evaluates both slices with the untruncated length (integer division).
    pod_part = pod_name[:len(pod_name) * MAX_BASE_LEN // len(base)]
    claim_part = pod_claim_name[:len(pod_claim_name) * MAX_BASE_LEN // len(base)]
    return f"{pod_part}-{claim_part}"


_SUFFIX_LETTERS = bytes(ord(NAME_ALPHABET[b % len(NAME_ALPHABET)]) for b in range(256))
"""Byte ``b`` of a digest -> ``NAME_ALPHABET[b % 27]``, for ``bytes.translate``."""


def _suffix(seed: str, attempt: int) -> str:
    # the same digest as hashlib.sha256's, without an OpenSSL context made and cleansed
    # per call: 1.5 k instructions (a quarter of the time) less per claim made
    digest = _sha256((seed + (f"/{attempt}" if attempt else "")).encode()).digest()
    # NAME_ALPHABET[b % 27] for each of the first SUFFIX_LEN bytes, translated in C (a
    # claim is made for every pod of a template)
    return digest[:SUFFIX_LEN].translate(_SUFFIX_LETTERS).decode("ascii")


def name_suffix(pod_uid: str, pod_claim_name: str, attempt: int = 0) -> str:
    """A deterministic 5-character suffix in :data:`NAME_ALPHABET` for the claim of
    ``pod_claim_name`` of the pod with ``pod_uid``; ``attempt`` > 0 gives another one
    (upstream retries with a new random name when the name is taken)."""
    return _suffix(f"{pod_uid}/{pod_claim_name}", attempt)


def generated_name(base: str, seed: str,
                   taken: Callable[[str], bool] = lambda name: False) -> str:
    """What the API server names an object with ``generateName: base``: the base (cut to
    58 characters) plus a 5-character suffix, here derived from ``seed`` (the first
    derivation that ``taken`` does not refuse) instead of drawn at random.

    Returns:
        A name of at most 63 characters.
    """
    base = base[:MAX_GENERATED_BASE]
    attempt = 0
    while True:
        name = base + _suffix(seed, attempt)
        if not taken(name):
            return name
        attempt += 1


def generated_claim_name(pod_name: str, pod_uid: str, pod_claim_name: str,
                         taken: Callable[[str], bool] = lambda name: False) -> str:
    """The name of the claim made for ``pod_claim_name``: :func:`generate_name` plus
    :func:`name_suffix`, the first of the suffix attempts that ``taken`` does not refuse.

    Returns:
        A name of at most 62 characters.
    """
    return generated_name(generate_name(pod_name, pod_claim_name),
                          f"{pod_uid}/{pod_claim_name}", taken)


def extended_claim_name(pod_name: str, pod_uid: str,
                        taken: Callable[[str], bool] = lambda name: False) -> str:
    """The name of the claim kube-scheduler makes for the pod's extended resources
    (KEP-5004): ``generateName: <pod>-extended-resources-``; the suffix is derived from the
    pod UID (``#`` cannot occur in a pod claim name, so it never repeats a template
    claim's derivation)."""
    return generated_name(f"{pod_name}-extended-resources-", f"{pod_uid}#extended-resources",
                          taken)


def pod_owner_reference(pod: dict, block_owner_deletion: bool = False) -> dict:
    """The controller owner reference upstream puts on what it creates for ``pod``; with
    ``block_owner_deletion`` (1.34, ``Profile.block_owner_deletion``) it also blocks the
    pod's foreground deletion."""
    meta = pod.get("metadata") or {}
    return _owner_reference(meta["name"], meta.get("uid"), block_owner_deletion)


def _owner_reference(pod_name: str, pod_uid: str | None, block: bool) -> dict:
    reference = {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_uid,
                 "controller": True}
    if block:
        reference["blockOwnerDeletion"] = True
    return reference


def claim_from_template(pod: dict, pod_claim_name: str, template: dict,
                        taken: Callable[[str], bool] = lambda name: False,
                        block_owner_deletion: bool = False) -> dict:
    """The v1 ResourceClaim upstream creates for the pod's entry ``pod_claim_name`` from
    ``template``: generated name (:func:`generated_claim_name`), the template's labels,
    its annotations plus ``resource.kubernetes.io/pod-claim-name``, the pod as controller
    owner (blocking its deletion with ``block_owner_deletion``: 1.34), the template's claim
    spec, and a uid derived from the name.

    Returns:
        A new document; ``pod`` and ``template`` are not changed. Its ``spec`` is the
        template's own (shared, not copied): a claim's spec is immutable, as in the API,
        and copying it was a tenth of a v1 pass (docs/v1.md, "Speed"). Copy it before
        changing it.
    """
    pod_meta = pod.get("metadata") or {}
    return ClaimPrototype(template).claim(
        pod_meta["name"], pod_meta.get("namespace") or "default", pod_meta.get("uid"),
        pod_claim_name, taken, block_owner_deletion)


class ClaimPrototype:
    """What every claim made from one template shares: the claim spec (the template's
    own, immutable) and the labels and annotations each claim gets a copy of. A controller
    that makes a claim for every pod of a template reads the template once per prototype,
    not once per pod (docs/v1.md, "Speed"); :func:`claim_from_template` is one prototype's
    one claim, so the two cannot differ.

    The prototype reads ``template`` when made: make another for a changed template.
    """

    __slots__ = ("spec", "_labels", "_annotations")

    def __init__(self, template: dict) -> None:
        spec = template.get("spec") or {}
        claim_meta = spec.get("metadata") or {}
        self.spec: dict = spec.get("spec") or {}
        """The claim spec every claim shares (``claim_from_template``)."""
        self._labels = claim_meta.get("labels") or None
        self._annotations = claim_meta.get("annotations") or {}

    def claim(self, pod_name: str, namespace: str, pod_uid: str | None, pod_claim_name: str,
              taken: Callable[[str], bool] = lambda name: False,
              block_owner_deletion: bool = False) -> dict:
        """The claim :func:`claim_from_template` makes for the pod called ``pod_name`` in
        ``namespace`` (with ``pod_uid``, None when it has none) and its entry
        ``pod_claim_name``.

        Returns:
            A new document whose ``spec`` is :attr:`spec` (shared).
        """
        return self.made(pod_name, namespace, pod_uid, pod_claim_name, taken,
                         block_owner_deletion)[0]

    def made(self, pod_name: str, namespace: str, pod_uid: str | None, pod_claim_name: str,
             taken: Callable[[str], bool] = lambda name: False,
             block_owner_deletion: bool = False) -> tuple[dict, ObjectMeta]:
        """:meth:`claim`'s document and ``ObjectMeta.from_raw`` of its metadata, made
        together for a controller that makes the claim object at once
        (``ResourceClaimV1.made_from``; per pod of a template: docs/v1.md, "Speed").

        Returns:
            The document (every container new but ``spec``) and its metadata, whose
            labels, annotations and owner references are the document's own (made for
            this claim alone, so not copied).
        """
        name = generated_claim_name(pod_name, pod_uid or "", pod_claim_name, taken)
        uid = stable_uid("ResourceClaim", namespace, name)
        # the name is the generateName (at most MAX_BASE_LEN characters, never cut) and
        # the suffix: the base is not made a second time
        metadata: dict = {"name": name, "generateName": name[:-SUFFIX_LEN],
                          "namespace": namespace, "uid": uid}
        labels = self._labels
        if labels:
            labels = metadata["labels"] = json_copy(labels)
        # the template's annotations (a copy), then the entry's name (last unless the
        # template has it: a dict keeps a key's place when its value is replaced)
        annotations = metadata["annotations"] = json_copy(self._annotations) \
            if self._annotations else {}
        annotations[POD_CLAIM_NAME_ANNOTATION] = pod_claim_name
        owners = metadata["ownerReferences"] = [
            _owner_reference(pod_name, pod_uid, block_owner_deletion)]
        return ({"apiVersion": _CLAIM_API_VERSION, "kind": "ResourceClaim",
                 "metadata": metadata, "spec": self.spec},
                ObjectMeta(name, namespace or "default", uid, labels or {}, annotations, [],
                           owners))


def pod_claim_sources(entry: dict) -> tuple[str | None, str | None]:
    """``(resourceClaimName, resourceClaimTemplateName)`` of one ``spec.resourceClaims``
    entry (the flat form, or the older ``source`` wrapper)."""
    source = entry.get("source") or entry
    return source.get("resourceClaimName"), source.get("resourceClaimTemplateName")


def resolve_claim_name(pod: dict, entry: dict) -> tuple[str | None, bool]:
    """Which claim a pod's ``spec.resourceClaims`` entry stands for, as upstream's
    ``resourceclaim.Name``: a named claim is itself; a template entry is what
    ``pod.status.resourceClaimStatuses`` records for it (None: no claim needed).

    Returns:
        ``(claim name or None, must_check_owner)``; the owner must be checked
        (:func:`not_for_pod`) for a template claim.

    Raises:
        ClaimNotCreated: a template entry without a status entry yet.
        ValueError: an entry naming neither a claim nor a template.
    """
    claim_name, template_name = pod_claim_sources(entry)
    if claim_name is not None:
        return claim_name, False
    meta = pod.get("metadata") or {}
    if template_name is not None:
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if status.get("name") == entry["name"]:
                return status.get("resourceClaimName"), True
        raise ClaimNotCreated(f'pod "{meta.get("namespace") or "default"}/{meta.get("name")}":'
                              ' ResourceClaim not created yet')
    raise ValueError(f'pod "{meta.get("namespace") or "default"}/{meta.get("name")}", '
                     f'spec.resourceClaim "{entry.get("name")}": none of the supported fields '
                     "are set")


def not_for_pod(pod: dict, claim: dict) -> str | None:
    """Why ``claim`` is not the pod's own template claim (the pod is not its controller
    owner), in upstream's ``resourceclaim.IsForPod`` words, or None when it is. The claim's
    namespace defaults to the pod's (the claim is looked up there)."""
    pod_meta = pod.get("metadata") or {}
    uid = pod_meta.get("uid")
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid") == uid:
            return None
    pod_ns = pod_meta.get("namespace") or "default"
    claim_ns = claim["metadata"].get("namespace") or pod_ns
    return (f"ResourceClaim {claim_ns}/{claim['metadata']['name']} was not created for pod "
            f"{pod_ns}/{pod_meta.get('name')} (pod is not owner)")
