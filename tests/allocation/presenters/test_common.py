"""Object links (allocation/presenters/common.object_url): one ``reverse`` per route, the
same URL as a ``reverse`` per object."""

from __future__ import annotations

import pytest
from django.urls import NoReverseMatch, reverse, set_script_prefix

from allocation.presenters.common import object_url

NAMES = ["pod-1-gpu", "a b", "ü-ñ", "100%", "x?y#z", "semi;colon=1&2", "~:@0~", "a/b",
         "'quoted'", ""]
KINDS = {"Node": ("allocation:node", False), "Pod": ("allocation:pod", True),
         "ResourceClaim": ("allocation:claim", True),
         "DeviceClass": ("allocation:device_class", False)}


def _reversed(view: str, args: tuple) -> str | None:
    try:
        return reverse(view, args=args)
    except NoReverseMatch:
        return "refused"


@pytest.mark.parametrize("prefix", ["/", "/console/"])
def test_a_link_equals_reverse(prefix) -> None:
    set_script_prefix(prefix)
    try:
        for kind, (view, namespaced) in KINDS.items():
            for name in NAMES:
                for namespace in ("default", "team a", None) if namespaced else (None,):
                    args = (namespace or "default", name) if namespaced else (name,)
                    if not name:
                        assert object_url(kind, namespace, name) is None
                        continue
                    expected = _reversed(view, args)
                    if expected == "refused":
                        with pytest.raises(NoReverseMatch):
                            object_url(kind, namespace, name)
                    else:
                        assert object_url(kind, namespace, name) == expected, (kind, name)
        assert object_url("Pod", None, "p").startswith(prefix)
    finally:
        set_script_prefix("/")


def test_kinds_without_a_page_have_no_link() -> None:
    assert object_url("ConfigMap", "default", "x") is None
