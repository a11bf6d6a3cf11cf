"""Tests for `spec.zones`."""

from __future__ import annotations

import pytest

from kcache.spec.zones import zone_key

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


class TestZoneKey:
    def test_no_labels_is_the_empty_zone(self) -> None:
        """A node without labels is in the zone ""."""
        assert zone_key({}) == ""

    def test_unrelated_labels_are_the_empty_zone(self) -> None:
        """Labels other than zone and region do not make a zone."""
        assert zone_key({"kubernetes.io/hostname": "n1"}) == ""

    def test_zone_only(self) -> None:
        """A zone label alone gives an empty region before the separator."""
        assert zone_key({ZONE: "a"}) == ":\x00:a"

    def test_region_only(self) -> None:
        """A region label alone gives an empty zone after the separator."""
        assert zone_key({REGION: "us"}) == "us:\x00:"

    def test_region_and_zone(self) -> None:
        """Region and zone are joined by colon, NUL, colon."""
        assert zone_key({REGION: "us", ZONE: "a"}) == "us:\x00:a"

    def test_beta_labels_win_over_ga_labels(self) -> None:
        """The deprecated beta labels are read first."""
        labels = {BETA_REGION: "old", REGION: "new", BETA_ZONE: "z-old", ZONE: "z-new"}
        assert zone_key(labels) == "old:\x00:z-old"

    @pytest.mark.parametrize(
        ("labels", "expected"),
        [
            ({BETA_ZONE: "", ZONE: "a"}, ""),
            ({BETA_ZONE: "", ZONE: "a", REGION: "us"}, "us:\x00:"),
            ({BETA_REGION: "", REGION: "us", ZONE: "a"}, ":\x00:a"),
        ],
    )
    def test_present_empty_beta_label_hides_the_ga_label(
        self, labels: dict[str, str], expected: str
    ) -> None:
        """A beta label that is present but empty still wins over the GA label."""
        assert zone_key(labels) == expected

    def test_both_empty_is_the_empty_zone(self) -> None:
        """Present but empty region and zone give the zone ""."""
        assert zone_key({REGION: "", ZONE: ""}) == ""

    def test_colons_in_values_cannot_forge_another_key(self) -> None:
        """Values containing colons stay distinguishable because of the NUL in the separator."""
        assert zone_key({REGION: "a:", ZONE: "b"}) != zone_key({REGION: "a", ZONE: ":b"})
