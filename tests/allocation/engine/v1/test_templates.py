"""Template claims as upstream's resourceclaim controller makes them (docs/v1.md)."""

import hashlib

import pytest

from allocation.engine.v1.templates import (
    MAX_BASE_LEN,
    NAME_ALPHABET,
    ClaimNotCreated,
    ClaimPrototype,
    claim_from_template,
    extended_claim_name,
    generate_name,
    generated_claim_name,
    generated_name,
    name_suffix,
    not_for_pod,
    resolve_claim_name,
)


def _pod(name="web", uid="uid-1", statuses=None, claims=None):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "team", "uid": uid},
           "spec": {"resourceClaims": claims or [
               {"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]}}
    if statuses is not None:
        pod["status"] = {"resourceClaimStatuses": statuses}
    return pod


TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "gpu-template", "namespace": "team"},
    "spec": {"metadata": {"labels": {"app": "web"}, "annotations": {"note": "x"}},
             "spec": {"devices": {"requests": [{"name": "g", "exactly": {
                 "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}},
}


def test_generate_name_short_keeps_trailing_hyphen():
    assert generate_name("web", "gpu") == "web-gpu-"


def test_generate_name_truncates_in_proportion_like_upstream():
    pod, claim = "p" * 60, "c" * 30
    # base is 92 characters: pod part 60*57//92 = 37, claim part 30*57//92 = 18
    assert generate_name(pod, claim) == "p" * 37 + "-" + "c" * 18
    assert len(generate_name(pod, claim)) <= MAX_BASE_LEN


def test_generate_name_exactly_at_limit_is_kept():
    pod = "p" * (MAX_BASE_LEN - 5)  # "<pod>-gpu-" is 57 characters
    assert generate_name(pod, "gpu") == pod + "-gpu-"


def test_suffix_is_deterministic_in_the_kubernetes_alphabet():
    suffix = name_suffix("uid-1", "gpu")
    assert len(suffix) == 5 and set(suffix) <= set(NAME_ALPHABET)
    assert suffix == name_suffix("uid-1", "gpu")
    assert suffix != name_suffix("uid-2", "gpu")
    assert suffix != name_suffix("uid-1", "gpu", attempt=1)


def test_suffix_is_the_sha256_digest_in_the_alphabet():
    # the suffix's digest is CPython's own SHA-256 (no OpenSSL context per claim): the
    # same bytes as hashlib's, so every name stays what it was
    for uid in ("uid-1", "0c1d6e2a-5b7f-5e3c-9d1e-2f3a4b5c6d7e", "é" * 40, ""):
        for attempt in (0, 1, 7):
            seed = f"{uid}/gpu" + (f"/{attempt}" if attempt else "")
            digest = hashlib.sha256(seed.encode()).digest()
            expected = "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in digest[:5])
            assert name_suffix(uid, "gpu", attempt) == expected


def test_generated_name_skips_taken_names():
    first = generated_claim_name("web", "uid-1", "gpu")
    second = generated_claim_name("web", "uid-1", "gpu", taken=lambda n: n == first)
    assert first.startswith("web-gpu-") and second.startswith("web-gpu-")
    assert second != first and len(second) == len("web-gpu-") + 5


def test_claim_from_template_copies_as_upstream():
    claim = claim_from_template(_pod(), "gpu", TEMPLATE)
    meta = claim["metadata"]
    assert claim["apiVersion"] == "resource.k8s.io/v1" and claim["kind"] == "ResourceClaim"
    assert meta["name"] == "web-gpu-" + name_suffix("uid-1", "gpu")
    assert meta["generateName"] == "web-gpu-" and meta["namespace"] == "team"
    assert meta["labels"] == {"app": "web"}
    assert meta["annotations"] == {"note": "x",
                                   "resource.kubernetes.io/pod-claim-name": "gpu"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "web",
                                        "uid": "uid-1", "controller": True}]
    assert claim["spec"] == TEMPLATE["spec"]["spec"]
    # 1.34 also blocks the pod's foreground deletion (dropped in 1.35)
    old = claim_from_template(_pod(), "gpu", TEMPLATE, block_owner_deletion=True)
    assert old["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True
    assert claim["spec"] is TEMPLATE["spec"]["spec"]  # shared: a claim's spec is immutable
    assert meta["uid"] == claim_from_template(_pod(), "gpu", TEMPLATE)["metadata"]["uid"]
    assert TEMPLATE["spec"]["metadata"]["annotations"] == {"note": "x"}  # not changed


def test_the_pod_claim_name_annotation_comes_last_or_keeps_the_templates_place():
    meta = claim_from_template(_pod(), "gpu", TEMPLATE)["metadata"]
    assert list(meta["annotations"]) == ["note", "resource.kubernetes.io/pod-claim-name"]
    ahead = {"resource.kubernetes.io/pod-claim-name": "other", "note": "x"}
    template = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "metadata": {"annotations": ahead}}}
    meta = claim_from_template(_pod(), "gpu", template)["metadata"]
    assert list(meta["annotations"].items()) == [
        ("resource.kubernetes.io/pod-claim-name", "gpu"), ("note", "x")]
    assert ahead == {"resource.kubernetes.io/pod-claim-name": "other", "note": "x"}


def test_claim_from_template_without_labels_has_none():
    template = {**TEMPLATE, "spec": {"spec": TEMPLATE["spec"]["spec"]}}
    meta = claim_from_template(_pod(), "gpu", template)["metadata"]
    assert "labels" not in meta
    assert meta["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}


def test_long_names_fit_63_characters():
    claim = claim_from_template(_pod(name="a" * 63), "b" * 63, TEMPLATE)
    assert len(claim["metadata"]["name"]) == 62


def test_a_prototype_makes_what_claim_from_template_makes_for_every_pod():
    """One prototype per template, its claims for pod after pod: each is the document
    ``claim_from_template`` gives, with metadata of its own (changing one claim's leaves
    the others and the template as they were)."""
    bare = {**TEMPLATE, "spec": {"spec": TEMPLATE["spec"]["spec"]}}
    for template in (TEMPLATE, bare):
        prototype = ClaimPrototype(template)
        made = []
        for pod, entry in ((_pod(), "gpu"), (_pod(name="db", uid="uid-2"), "gpu"),
                           (_pod(name="a" * 63), "b" * 63), (_pod(uid=None), "gpu")):
            meta = pod["metadata"]
            taken = {claim_from_template(pod, entry, template)["metadata"]["name"]}.__contains__
            for check in (lambda name: False, taken):
                claim = prototype.claim(meta["name"], meta["namespace"], meta["uid"], entry,
                                        check)
                assert claim == claim_from_template(pod, entry, template, check)
                assert claim["spec"] is template["spec"]["spec"]
                made.append(claim)
        for claim in made:
            claim["metadata"]["annotations"]["x"] = "y"
            claim["metadata"].get("labels", {})["x"] = "y"
            claim["metadata"]["ownerReferences"][0]["name"] = "changed"
        assert made[1]["metadata"]["annotations"]["x"] == "y"
        assert ClaimPrototype(template).claim("web", "team", "uid-1", "gpu") == \
            prototype.claim("web", "team", "uid-1", "gpu")
    assert TEMPLATE["spec"]["metadata"] == {"labels": {"app": "web"}, "annotations": {"note": "x"}}


def test_resolve_named_claim_is_itself():
    pod = _pod(claims=[{"name": "gpu", "resourceClaimName": "shared"}])
    assert resolve_claim_name(pod, pod["spec"]["resourceClaims"][0]) == ("shared", False)


def test_resolve_template_claim_reads_the_pod_status():
    pod = _pod(statuses=[{"name": "gpu", "resourceClaimName": "web-gpu-abcde"}])
    entry = pod["spec"]["resourceClaims"][0]
    assert resolve_claim_name(pod, entry) == ("web-gpu-abcde", True)


def test_resolve_template_claim_not_needed():
    pod = _pod(statuses=[{"name": "gpu"}])
    assert resolve_claim_name(pod, pod["spec"]["resourceClaims"][0]) == (None, True)


def test_resolve_template_claim_not_created_yet():
    pod = _pod()
    with pytest.raises(ClaimNotCreated, match='pod "team/web": ResourceClaim not created yet'):
        resolve_claim_name(pod, pod["spec"]["resourceClaims"][0])


def test_resolve_older_source_form():
    entry = {"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}
    pod = _pod(statuses=[{"name": "gpu", "resourceClaimName": "x"}], claims=[entry])
    assert resolve_claim_name(pod, entry) == ("x", True)


def test_resolve_entry_without_source_is_refused():
    pod = _pod(claims=[{"name": "gpu"}])
    with pytest.raises(ValueError, match=r'^pod "team/web", spec.resourceClaim "gpu": '
                       "none of the supported fields are set$"):
        resolve_claim_name(pod, pod["spec"]["resourceClaims"][0])


def test_not_for_pod_checks_the_controller_owner():
    pod = _pod()
    claim = claim_from_template(pod, "gpu", TEMPLATE)
    assert not_for_pod(pod, claim) is None
    assert not_for_pod(_pod(uid="uid-2"), claim) == (
        f"ResourceClaim team/{claim['metadata']['name']} was not created for pod team/web "
        "(pod is not owner)")


def test_generated_name_cuts_the_base_as_the_api_server():
    name = generated_name("x" * 70, "seed")
    assert name.startswith("x" * 58) and len(name) == 63


def test_the_extended_claim_name_differs_from_a_template_claim_of_that_name():
    extended = extended_claim_name("web", "uid-1")
    assert extended.startswith("web-extended-resources-") and len(extended) == 28
    assert extended != generated_claim_name("web", "uid-1", "extended-resources")
    assert extended == extended_claim_name("web", "uid-1")


def test_a_prototypes_claim_names_its_base_as_generate_name_does():
    """``generateName`` is the claim name without its suffix (the base is never cut, so
    it is not made a second time): :func:`generate_name` of the pod and entry, at every
    length of either, whichever suffix attempt the name took."""
    prototype = ClaimPrototype(TEMPLATE)
    for pod_len in (1, 5, 28, 40, 56, 57, 63):
        for entry_len in (1, 3, 26, 30, 57, 63):
            pod_name, entry = "p" * pod_len, "e" * entry_len
            first = prototype.claim(pod_name, "team", "uid-1", entry)["metadata"]["name"]
            for taken in (lambda name: False, {first}.__contains__):
                meta = prototype.claim(pod_name, "team", "uid-1", entry, taken)["metadata"]
                assert meta["generateName"] == generate_name(pod_name, entry)
                assert meta["name"] == meta["generateName"] + meta["name"][-5:]


def test_a_prototypes_made_metadata_is_its_documents_read_sharing_its_containers():
    """``ClaimPrototype.made``: the document ``claim`` makes and ``ObjectMeta.from_raw`` of
    its metadata, whose labels, annotations and owner references are the document's own
    (made for that claim alone), with or without template labels, in any namespace."""
    from allocation.engine.objects.meta import ObjectMeta

    bare = {**TEMPLATE, "spec": {"spec": TEMPLATE["spec"]["spec"]}}
    for template in (TEMPLATE, bare):
        prototype = ClaimPrototype(template)
        for namespace, uid in (("team", "uid-1"), ("", "uid-2"), ("team", None)):
            doc, meta = prototype.made("web", namespace, uid, "gpu")
            assert doc == prototype.claim("web", namespace, uid, "gpu")
            assert meta == ObjectMeta.from_raw(doc["metadata"], True)
            metadata = doc["metadata"]
            assert meta.annotations is metadata["annotations"]
            assert meta.owner_references is metadata["ownerReferences"]
            assert meta.labels is metadata["labels"] if "labels" in metadata else \
                meta.labels == {}
