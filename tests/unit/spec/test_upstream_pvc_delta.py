"""The spec's model of upstream v1.37.2's cache-wide PVC count delta (divergence 3).

Each story is one of docs/upstream-divergences.md, divergence 3; the figures are what
upstream v1.37.2 showed for the same trace (tests/vectors/v1.37/PvcRefCounts.jsonl),
worked through by hand below: the delta records every entry's claim change,
an incremental update adds it to the counts the snapshot held, and a count
below 0 forces the full rebuild.
"""

from __future__ import annotations

import pytest
from helpers.builders import node, pod

from kcache.spec.cache import Cache
from kcache.spec.errors import SnapshotInconsistentError
from kcache.spec.releases import V1_36, V1_37, Release


def upstream(release: Release = V1_37) -> Cache:
    return Cache(release=release, upstream_pvc_delta=True)


def test_a_node_removed_and_added_again_loses_its_claim() -> None:
    """E3: RemoveNode takes n1's count (1) out of the delta and AddNode gives nothing back;
    n1 is still in the snapshot's map, so the update is incremental: 1 + (-1) = 0, dropped."""
    cache = upstream()
    cache.add_node(node("n1"))
    cache.add_pod(pod("u1", claims=["c"]))
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)
    assert snapshot.view().used_pvc_ref_counts == {"default/c": 1}
    cache.remove_node(node("n1"))
    cache.add_node(node("n1"))
    cache.update_snapshot(snapshot)
    assert snapshot.view().used_pvc_ref_counts == {}
    assert cache.pvc_delta_showed == 1


def test_the_first_snapshot_updated_uses_up_the_delta() -> None:
    """E6: both snapshots hold 0; the pod's +1 goes to whichever is updated first."""
    cache = upstream()
    cache.add_node(node("n1"))
    first, second = cache.new_snapshot(), cache.new_snapshot()
    cache.update_snapshot(first)
    cache.update_snapshot(second)
    cache.add_pod(pod("u1", claims=["c"]))
    cache.update_snapshot(first)
    cache.update_snapshot(second)
    assert first.view().used_pvc_ref_counts == {"default/c": 1}
    assert second.view().used_pvc_ref_counts == {}


def test_a_count_below_zero_rebuilds_before_the_consistency_check() -> None:
    """E7, issue 29's story: n2 gets its node through update_node(None, n2) while a pod holds
    it, so it stays out of the tree and the first update lists [n1] only (its claim not
    counted); add_node puts n2 in the tree; removing the pod makes the delta -1 for the claim,
    and 0 + (-1) < 0 rebuilds every list from the tree: [n1, n2], no error reported."""
    cache = upstream()
    cache.add_node(node("n1"))
    cache.assume_pod(pod("p1", node="n2", claims=["c"]))
    cache.update_node(None, node("n2"))
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)
    assert snapshot.view().node_list == ("n1",)
    cache.add_node(node("n2"))
    cache.remove_pod(pod("p1", node="n2", claims=["c"]))
    cache.update_snapshot(snapshot)
    assert snapshot.view().node_list == ("n1", "n2")
    assert snapshot.view().used_pvc_ref_counts == {}


def test_what_the_counts_mean_reports_the_same_story_as_inconsistent() -> None:
    """The same story on the meaning (every other release's behaviour): the list is one short
    of the tree, so the update repairs it and reports it."""
    cache = Cache(release=V1_37)
    cache.add_node(node("n1"))
    cache.assume_pod(pod("p1", node="n2", claims=["c"]))
    cache.update_node(None, node("n2"))
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)
    cache.add_node(node("n2"))
    cache.remove_pod(pod("p1", node="n2", claims=["c"]))
    with pytest.raises(SnapshotInconsistentError, match=r"NodeInfoList=1 not equal to .*tree=2"):
        cache.update_snapshot(snapshot)
    assert snapshot.view().node_list == ("n1", "n2")


def test_releases_that_keep_a_set_have_no_delta() -> None:
    """v1.36 keeps a set of claims, rebuilt whenever it could differ: the switch changes
    nothing there (E3 keeps the claim)."""
    cache = upstream(V1_36)
    cache.add_node(node("n1"))
    cache.add_pod(pod("u1", claims=["c"]))
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)
    cache.remove_node(node("n1"))
    cache.add_node(node("n1"))
    cache.update_snapshot(snapshot)
    assert snapshot.view().used_pvcs == {"default/c"}
    assert cache.pvc_delta_showed == 0
