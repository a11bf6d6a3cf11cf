"""Tests for `kcache.ops`: reading pods once per distinct manifest."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from kcache.ops import POD, read_entity_key, read_pod
from kcache.spec.errors import ObjectError
from kcache.spec.objects import pod_from_manifest


def manifest(cpu: Any) -> dict[str, Any]:
    container = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    return {"metadata": {"name": "p", "uid": "u1"}, "spec": {"containers": [container]}}


class TestReadPod:
    def test_one_manifest_is_read_once(self) -> None:
        """The same manifest, as another dict, gives the very pod read the first time."""
        assert read_pod(manifest("250m")) is read_pod(manifest("250m"))

    def test_reads_as_pod_from_manifest(self) -> None:
        """What it returns is what reading the manifest gives, requests and all."""
        assert read_pod(manifest("0.5")) == pod_from_manifest(manifest("0.5"))

    def test_a_number_and_a_string_are_different_manifests(self) -> None:
        """cpu 0.5 and cpu "0.5" ask for the same, but are not the same object."""
        number, text = read_pod(manifest(Decimal("0.5"))), read_pod(manifest("0.5"))
        assert number.manifest != text.manifest
        assert number.requests == text.requests

    def test_the_pod_codec_reads_through_it(self) -> None:
        """Traces and adapter answers read pods the same way."""
        assert POD.from_json(manifest("100m")) is read_pod(manifest("100m"))

    @pytest.mark.parametrize("cpu", [{1, 2}, "lots"])
    def test_a_bad_manifest_is_refused_as_reading_refuses_it(self, cpu: Any) -> None:
        """A manifest JSON cannot hold, or one that reads as no pod, keeps reading's error."""
        with pytest.raises(ObjectError) as expected:
            pod_from_manifest(manifest(cpu))
        with pytest.raises(ObjectError) as got:
            read_pod(manifest(cpu))
        assert str(got.value) == str(expected.value)


@pytest.mark.parametrize(
    "key", ["podgroup/default/g", "compositepodgroup/default/c", "pod/default/p", "podgroup//g"]
)
def test_entity_keys_read_as_upstream_prints_them(key: str) -> None:
    assert read_entity_key(key) == key


@pytest.mark.parametrize(
    "key", ["group/default/g", "podgroup/default", "podgroup/a/b/c", "", 7, None]
)
def test_other_entity_keys_are_refused(key: Any) -> None:
    with pytest.raises(ValueError, match="expected"):
        read_entity_key(key)
