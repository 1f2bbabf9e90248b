"""Kubernetes' opaque CEL types as protobuf messages (cel/_opaque.py)."""

from __future__ import annotations

from allocation.engine.cel import _k8s, _net
from allocation.engine.cel._opaque import OPAQUE_NAMES, message_classes, opaque_text, opaque_value


def test_a_value_gives_back_its_kind_and_canonical_text():
    value = opaque_value(_k8s.QUANTITY, _k8s.quantity_text("1024Mi"))
    assert opaque_text(value) == (_k8s.QUANTITY, "1Gi")
    assert opaque_text(opaque_value(_net.IP, "::1")) == (_net.IP, "::1")


def test_anything_else_is_not_opaque():
    assert opaque_text("1Gi") is None
    assert opaque_text(1) is None


def test_equal_texts_are_equal_messages_and_each_kind_has_its_message_type():
    assert opaque_value(_k8s.SEMVER, "1.2.3") == opaque_value(_k8s.SEMVER, "1.2.3")
    assert opaque_value(_k8s.SEMVER, "1.2.3") != opaque_value(_k8s.SEMVER, "1.2.4")
    names = {kind: cls.DESCRIPTOR.full_name for kind, cls in message_classes().items()}
    assert names == OPAQUE_NAMES
