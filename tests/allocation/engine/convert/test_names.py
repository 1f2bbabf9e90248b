"""``convert.names``: v1 ids, DNS labels and strict versions for seed names."""

from __future__ import annotations

import pytest

from allocation.engine.convert.names import (
    attribute_id,
    dns_label,
    label_attribute,
    strict_version,
)


def test_short_c_identifiers_are_kept_longer_ones_renamed_deterministically():
    assert attribute_id("memory") == "memory"
    assert attribute_id("a" * 32) == "a" * 32
    long = "a" * 40
    renamed = attribute_id(long)
    assert len(renamed) == 32 and renamed.startswith("a" * 23 + "_")
    assert renamed == attribute_id(long)  # the same name in every run and every object
    assert renamed != attribute_id("a" * 39 + "b")


def test_label_keys_keep_their_prefix_as_the_domain():
    assert label_attribute("link") == "link"
    assert label_attribute("gpu-type") == "gpu_type"
    assert label_attribute("example.com/rack.id") == "example.com/rack_id"
    assert label_attribute("example.com/zone") == "example.com/zone"


def test_dns_labels_from_paths():
    assert dns_label("gpu-1/quarters/quarter-0") == "gpu-1-quarters-quarter-0"
    assert dns_label("GPU_0") == "gpu-0"
    assert dns_label("gpu-0") == "gpu-0"
    cut = dns_label("x" * 70)
    assert len(cut) == 63 and cut.startswith("x" * 54 + "-")


def test_versions_become_strict_semver():
    assert strict_version("v12.0") == "12.0.0"
    assert strict_version(" 1.02.3 ") == "1.2.3"
    with pytest.raises(ValueError):
        strict_version("twelve")
