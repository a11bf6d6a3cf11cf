"""The machine's invariants: what must hold after every step of a conformance run.

The first compares everything the two sides show (the black-box check every
target gets); the others check the definitions the spec's own state must
satisfy (a NodeInfo is the sum of its pods, image counts count reporting
nodes, a snapshot holds exactly the live nodes), so that a spec bug cannot
hide behind agreement.  A target that offers `check_invariants()` has its
representation checked too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import attrs
from hypothesis.stateful import invariant

from kcache.machine.lockstep import LockstepMachine
from kcache.machine.observation import compare
from kcache.spec.objects import Pod
from kcache.spec.views import NodeView


def _present(shown: tuple[str, ...], wanted: tuple[str, ...]) -> tuple[str, ...]:
    """The UIDs of `shown` that `wanted` has too (as multisets), in sorted order."""
    return tuple(sorted((Counter(shown) & Counter(wanted)).elements()))


def _totals(amounts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for each in amounts:
        total.update(each)
    return {name: amount for name, amount in sorted(total.items()) if amount != 0}


class CheckedMachine(LockstepMachine):
    """The lockstep machine with its invariants; the rules come in `ConformanceMachine`."""

    @invariant()
    def every_check_holds(self) -> None:
        """Each check below, in this order: what a user sees (the black-box comparison)
        first, so that a difference both it and a white-box check find is reported as what
        it shows, and its trace ends with the observation that replays it anywhere.
        (Hypothesis runs separate invariants in alphabetical order.)"""
        self.what_a_user_sees_agrees()
        for check in (
            self.assumed_pods_are_held,
            self.node_infos_are_sums_of_their_pods,
            self.image_counts_match_nodes,
            self.impl_representation_holds,
        ):
            check()

    def what_a_user_sees_agrees(self) -> None:
        """The black-box checks: the two caches show the same, and snapshots change only
        when updated.  They run after every action; the spec's own invariants and the
        target's white-box check, once per Hypothesis step (`every_check_holds`)."""
        self.spec_and_impl_agree()
        self.snapshots_are_isolated()

    def spec_and_impl_agree(self) -> None:
        """Everything the two caches show is equal: dump, counts, pods, every snapshot."""
        expected, actual = self.observations()
        differences = compare(expected, actual, self.target_name)
        if differences:
            self.fail("observations differ after the step:\n  " + "\n  ".join(differences))

    def snapshots_are_isolated(self) -> None:
        """A snapshot changes only when it is updated (upstream reuses NodeInfos in place)."""
        _, actual = self.observations()
        for name, view in actual.snapshots.items():
            before = self._isolation.setdefault(name, view)
            if before != view:
                self.fail(
                    f"snapshot {name!r} changed without update_snapshot:\n"
                    f"    before: {before!r}\n    now:    {view!r}"
                )

    def impl_representation_holds(self) -> None:
        """The impl's own representation invariant (`check_invariants()`), when it has one."""
        check = getattr(self.impl, "check_invariants", None)
        if check is None:
            return
        try:
            check()
        except Exception as error:  # any failure of the check is the finding
            self.fail(
                f"impl.check_invariants() failed: {type(error).__name__}: {error}", observed=False
            )

    def assumed_pods_are_held(self) -> None:
        """Every assumed key is a pod the cache holds and counts (§13.1, §13.3)."""
        expected, _ = self.observations()
        held = [uid for uid, (outcome, _) in expected.pods.items() if outcome.ok]
        unheld = sorted(set(expected.dump.assumed_pods) - set(held))
        if unheld:
            self.fail(f"assumed keys the spec does not hold: {unheld}")
        on_nodes = sum(len(view.pods) for view in expected.dump.nodes.values())
        counts = (expected.pod_count[1], on_nodes, len(held))
        if self.within_contract and len(set(counts)) != 1:
            self.fail(f"pod_count, pods on nodes and held keys disagree: {counts}")

    def node_infos_are_sums_of_their_pods(self) -> None:
        """Requested, non-zero, PVC counts, affinity lists and ports follow from the pods (§13)."""
        if not self.within_contract:
            return
        expected, _ = self.observations()
        held = {uid: pod for uid, (outcome, pod) in expected.pods.items() if outcome.ok and pod}
        for name, view in expected.dump.nodes.items():
            pods = [held[uid] for uid in view.pods if uid in held]
            problems = self._node_info_problems(name, view, pods, held)
            if problems:
                self.fail(
                    f"spec's NodeInfo {name!r} is not its pods' sum:\n  " + "\n  ".join(problems)
                )

    def _node_info_problems(
        self, name: str, view: NodeView, pods: list[Pod], held: dict[str, Pod]
    ) -> list[str]:
        on_node = sorted(uid for uid, pod in held.items() if pod.node_name == name)
        ports = {port for pod in pods for port in pod.host_ports}
        shared = sum(len(pod.host_ports) for pod in pods) != len(ports)
        if shared:
            self.port_collided.add(name)
        expected_ports = ports if name not in self.port_collided else set(view.used_ports) & ports
        with_affinity = tuple(sorted(pod.uid for pod in pods if pod.has_affinity))
        with_anti = tuple(sorted(pod.uid for pod in pods if pod.has_required_anti_affinity))
        keeps_non_host = self.release.has_non_host_scoped_list and self.release.gate(
            "InterPodAffinityHostnameFastPath"
        )
        with_non_host = tuple(
            sorted(
                pod.uid
                for pod in pods
                if keeps_non_host and pod.has_required_non_host_scoped_anti_affinity
            )
        )
        shown_affinity = view.pods_with_affinity
        shown_anti_affinity = view.pods_with_required_anti_affinity
        shown_non_host = view.pods_with_required_non_host_scoped_anti_affinity
        if name in self.affinity_drifted:
            # stray UIDs may stay listed, but every qualifying pod must still be
            shown_affinity = _present(shown_affinity, with_affinity)
            shown_anti_affinity = _present(shown_anti_affinity, with_anti)
            shown_non_host = _present(shown_non_host, with_non_host)
        checks = {
            "pods": (tuple(on_node), view.pods),
            "requested": (_totals(pod.requests.as_view() for pod in pods), dict(view.requested)),
            "non_zero_requested": (
                _totals({"cpu": pod.non_zero_cpu, "memory": pod.non_zero_memory} for pod in pods),
                dict(view.non_zero_requested),
            ),
            "pvc_ref_counts": (
                dict(sorted(Counter(key for pod in pods for key in pod.pvc_keys).items())),
                dict(view.pvc_ref_counts),
            ),
            "pods_with_affinity": (with_affinity, shown_affinity),
            "pods_with_required_anti_affinity": (with_anti, shown_anti_affinity),
            "pods_with_required_non_host_scoped_anti_affinity": (with_non_host, shown_non_host),
            "used_ports": (frozenset(expected_ports), view.used_ports),
        }
        return [
            f"{field}: from pods {want!r}, shown {got!r}"
            for field, (want, got) in checks.items()
            if want != got
        ]

    def image_counts_match_nodes(self) -> None:
        """Live nodes' image states are their images, counted over the nodes reporting them."""
        if not self.within_contract:
            return
        expected, _ = self.observations()
        live = {name for name, view in expected.dump.nodes.items() if view.has_node}
        reporting = Counter(
            image for name in live for image in set(self.last_node[name].image_names)
        )
        for name in sorted(live):
            images = expected.dump.nodes[name].image_states
            wanted = set(self.last_node[name].image_names)
            counts = {image: state.num_nodes for image, state in images.items()}
            if set(images) != wanted or any(counts[i] != reporting[i] for i in counts):
                self.fail(
                    f"spec's image states of {name!r}: {counts!r}; "
                    f"node reports {sorted(wanted)}, reporters {dict(reporting)!r}"
                )

    def check_snapshot_matches_cache(self, name: str) -> None:
        """After a successful update the snapshot holds exactly the live nodes (§13.15-16)."""
        expected, _ = self.observations()
        view = expected.snapshots[name]
        live = {node: v for node, v in expected.dump.nodes.items() if v.has_node}
        listed = [view.nodes[node] for node in view.node_list if node in view.nodes]
        claims = [Counter(v.pvc_ref_counts) for v in listed]
        problems = {
            "node_list length is the tree's node count": len(view.node_list) == len(live),
            "node_list and nodes hold the live nodes": set(view.node_list)
            == set(view.nodes)
            == set(live),
            "affinity list": view.have_pods_with_affinity
            == {n for n in view.node_list if view.nodes[n].pods_with_affinity},
            "required anti-affinity list": view.have_pods_with_required_anti_affinity
            == {n for n in view.node_list if view.nodes[n].pods_with_required_anti_affinity},
            "non-host-scoped anti-affinity list": (
                view.have_pods_with_required_non_host_scoped_anti_affinity
                == {
                    n
                    for n in view.node_list
                    if view.nodes[n].pods_with_required_non_host_scoped_anti_affinity
                }
            ),
            # a reference modelling upstream's delta (divergence 3) counts otherwise
            "PVC uses are the listed entries' claims (§19.9)": (
                self.acknowledged
                or (
                    view.used_pvc_ref_counts == dict(sum(claims, Counter()))
                    if self.release.counts_pvc_references
                    else view.used_pvcs == {key for c in claims for key in c}
                )
            ),
            "entries equal the live NodeInfos but for image counts": all(
                attrs.evolve(view.nodes[n], image_states={}) == attrs.evolve(v, image_states={})
                and set(view.nodes[n].image_states) == set(v.image_states)
                for n, v in live.items()
                if n in view.nodes
            ),
        }
        broken = [what for what, holds in problems.items() if not holds]
        if broken:
            self.fail(f"spec's snapshot {name!r} after update_snapshot: {', '.join(broken)}")
