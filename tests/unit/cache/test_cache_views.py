"""Tests for what a cache shows of a NodeInfo: totals, ports, claims, affinity and counts."""

from __future__ import annotations

from helpers.builders import node, pod
from helpers.caches import MakeCache

DEFAULT_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024


class TestTotals:
    def test_requests_add_up_per_resource(self, make_cache: MakeCache) -> None:
        """Requested sums each resource, extended resources included."""
        cache = make_cache()
        cache.add_pod(pod("u1", cpu="100m", requests={"example.com/gpu": "1"}))
        cache.add_pod(pod("u2", cpu="250m", memory="1Gi", requests={"example.com/gpu": "2"}))
        assert cache.dump().nodes["n1"].requested == {
            "cpu": 350,
            "memory": 1024**3,
            "example.com/gpu": 3,
        }

    def test_missing_requests_count_defaults_in_non_zero_only(self, make_cache: MakeCache) -> None:
        """A pod without requests adds nothing to requested but 100m / 200Mi to non-zero."""
        cache = make_cache()
        cache.add_pod(pod("u1"))
        view = cache.dump().nodes["n1"]
        assert view.requested == {}
        assert view.non_zero_requested == {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEMORY}

    def test_a_released_extended_resource_shows_as_zero(self, make_cache: MakeCache) -> None:
        """After its only user leaves, an extended resource reads as absent (zero)."""
        cache = make_cache()
        cache.add_pod(pod("u1", requests={"example.com/gpu": "1"}))
        cache.remove_pod(pod("u1"))
        assert cache.dump().nodes == {}

    def test_a_pods_request_is_not_counted(self, make_cache: MakeCache) -> None:
        """NodeInfo totals ignore a `pods` request; it matters for allocatable only."""
        cache = make_cache()
        cache.add_pod(pod("u1", requests={"pods": "1"}))
        assert "pods" not in cache.dump().nodes["n1"].requested


class TestPorts:
    def test_two_pods_sharing_a_port_hold_one_entry(self, make_cache: MakeCache) -> None:
        """Ports are a set: removing either pod of two sharing a port frees it."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", ports=[80, 443]))
        cache.add_pod(pod("u2", ports=[80]))
        assert cache.dump().nodes["n1"].used_ports == {
            ("0.0.0.0", "TCP", 80),
            ("0.0.0.0", "TCP", 443),
        }
        cache.remove_pod(pod("u2"))
        assert cache.dump().nodes["n1"].used_ports == {("0.0.0.0", "TCP", 443)}

    def test_ip_and_protocol_tell_ports_apart(self, make_cache: MakeCache) -> None:
        """The same port number under another ip or protocol is another entry."""
        cache = make_cache()
        cache.add_pod(pod("u1", ports=[("10.0.0.1", "TCP", 53), ("10.0.0.1", "UDP", 53), 53]))
        assert len(cache.dump().nodes["n1"].used_ports) == 3


class TestClaims:
    def test_claims_are_counted_per_volume_and_pod(self, make_cache: MakeCache) -> None:
        """A claim used by two volumes of a pod and by another pod counts three times."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", claims=["data", "data"]))
        cache.add_pod(pod("u2", claims=["data", "logs"]))
        assert cache.dump().nodes["n1"].pvc_ref_counts == {"default/data": 3, "default/logs": 1}
        cache.remove_pod(pod("u2"))
        assert cache.dump().nodes["n1"].pvc_ref_counts == {"default/data": 2}
        cache.remove_pod(pod("u1"))
        assert cache.dump().nodes["n1"].pvc_ref_counts == {}

    def test_claim_key_keeps_the_slash_without_namespace(self, make_cache: MakeCache) -> None:
        """A pod without namespace gives the key "/claim"."""
        cache = make_cache()
        cache.add_pod(pod("u1", namespace="", claims=["data"]))
        assert cache.dump().nodes["n1"].pvc_ref_counts == {"/data": 1}


class TestAffinity:
    def test_pods_are_listed_by_their_affinity(self, make_cache: MakeCache) -> None:
        """Pod affinity lists a pod once; required anti-affinity lists it in both lists."""
        cache = make_cache()
        cache.add_pod(pod("u1", affinity=True))
        cache.add_pod(pod("u2", required_anti_affinity=True))
        cache.add_pod(pod("u3"))
        view = cache.dump().nodes["n1"]
        assert view.pods_with_affinity == ("u1", "u2")
        assert view.pods_with_required_anti_affinity == ("u2",)


class TestCounts:
    def test_counts_include_ghosts_and_assumed_pods(self, make_cache: MakeCache) -> None:
        """NodeCount counts every NodeInfo; PodCount every pod they hold, assumed or added."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.assume_pod(pod("u1", node="n1"))
        cache.add_pod(pod("u2", node="n2"))
        assert (cache.node_count(), cache.pod_count()) == (2, 2)
        assert cache.dump().assumed_pods == {"u1"}
        assert not cache.dump().nodes["n2"].has_node
