"""A trace as a Go test of upstream's own cache package, to hand a divergence to upstream.

`export_go_test(trace, release)` writes one `_test.go` file in package
`cache` (k8s.io/kubernetes/pkg/scheduler/backend/cache), in the style of
upstream's `cache_test.go`: the trace's pods built with upstream's test
wrappers (`st.MakePod()`), its nodes as `v1.Node` literals, a cache from
upstream's `newCache`, and one table row per step (the op and its
arguments, the outcome the trace expects, the snapshot view it expects).
The test passes where upstream does what the trace says and fails, naming
the step and the difference, where it does not.

Only what the file can say in upstream's own terms is exported: the ops of
`EXPORTED_OPS`, the object fields of `_POD_FIELDS` and `_NODE_FIELDS`, and
the expectations of `_SNAPSHOT_KEYS` and `_NODE_VIEW_KEYS`.  Anything else
is refused with an `ExportError` naming the step and what it holds, never
left out silently: a reproducer that checks less than its trace is not one.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kcache.errors import KcacheError
from kcache.ops import OPS
from kcache.spec.releases import RELEASES, Release
from kcache.traces.defects import UPSTREAM_DEFECTS
from kcache.traces.trace import Trace, step_to_json

#: the ops this module writes, each with the Go statement of its row (`{0}`, `{1}`: its
#: objects, by the argument keys of `_OP_ARGUMENTS`; `{snapshot}`: the snapshot's name)
EXPORTED_OPS: Mapping[str, str] = {
    "add_node": "cache.AddNode(logger, {0}); return nil",
    "update_node": "cache.UpdateNode(logger, {0}, {1}); return nil",
    "remove_node": "return cache.RemoveNode(logger, {0})",
    "assume_pod": "return cache.AssumePod(logger, {0})",
    "forget_pod": "return cache.ForgetPod(logger, {0})",
    "remove_assumed_pod": "return cache.RemoveAssumedPod(logger, {0})",
    "add_pod": "return cache.AddPod(logger, {0})",
    "update_pod": "return cache.UpdatePod(logger, {0}, {1})",
    "remove_pod": "return cache.RemovePod(logger, {0})",
    "update_snapshot": "return cache.UpdateSnapshot(logger, snapshots[{snapshot}])",
}
_OP_ARGUMENTS: Mapping[str, tuple[str, ...]] = {
    "add_node": ("node",),
    "update_node": ("old", "new"),
    "remove_node": ("node",),
    "assume_pod": ("pod",),
    "forget_pod": ("pod",),
    "remove_assumed_pod": ("pod",),
    "add_pod": ("pod",),
    "update_pod": ("old", "new"),
    "remove_pod": ("pod",),
    "update_snapshot": (),
}


def _new_cache(release: Release) -> str:
    """How the release's own tests make a cache: with a TTL while assumed pods expire, then
    one argument per pod-group feature gate (all off here)."""
    if release.has_expiry:
        return "newCache(ctx, {ttl}, time.Second, nil)"
    gates = ", false" * (1 + release.has_pod_group_objects)
    return f"newCache(ctx, time.Second, nil{gates})"


def _having(defect: str) -> list[str]:
    """The releases whose row names the upstream `defect`."""
    return [name for name, release in RELEASES.items() if defect in release.upstream_defects]


def _lacks(release: Release, op: str) -> bool:
    """Whether the release's cache package has no `op` (its table behaviour is off)."""
    behaviour = OPS[op].behaviour
    return behaviour is not None and not getattr(release, behaviour)


_POD_FIELDS = {
    "apiVersion",
    "kind",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.containers[].name",
    "spec.containers[].image",
    "spec.containers[].resources.requests",
    "spec.containers[].resources.limits",
    "spec.volumes[].name",
    "spec.volumes[].persistentVolumeClaim.claimName",
}
_NODE_FIELDS = {"apiVersion", "kind", "metadata.name", "metadata.labels", "status.allocatable"}
_MUTATION_KEYS = frozenset({"error"})
_SNAPSHOT_STEP_KEYS = frozenset({"error", "snapshot"})
_SNAPSHOT_KEYS = frozenset({"node_list", "used_pvc_ref_counts", "used_pvcs", "nodes"})
_NODE_VIEW_KEYS = frozenset({"has_node", "pods"})


class ExportError(KcacheError):
    """The trace holds something the Go test cannot say in upstream's terms."""


def releases() -> tuple[str, ...]:
    """The releases a test can be written for."""
    return tuple(RELEASES)


def go_test_name(trace: Trace) -> str:
    """The Go test function's name: `Test` and the trace's name in CamelCase."""
    words = re.findall(r"[A-Za-z0-9]+", trace.name.replace("'", ""))
    return "Test" + "".join(word[:1].upper() + word[1:] for word in words)


def file_name(trace: Trace) -> str:
    """A file name for the test: the trace's name in snake case, `_test.go`."""
    words = re.findall(r"[a-z0-9]+", trace.name.replace("'", "").lower())
    return "_".join(words) + "_test.go"


def export_go_test(trace: Trace, release: str | None = None) -> str:
    """The Go test file of `trace` for `release` (default: the trace's own release)."""
    release = release or trace.release.name
    if release not in RELEASES:
        raise ExportError(
            f"trace {trace.name!r}: no Go test for release {release} (known: {', '.join(RELEASES)})"
        )
    if trace.release.feature_gates:
        gates = ", ".join(name for name, _ in trace.release.feature_gates)
        raise ExportError(f"trace {trace.name!r}: sets feature gates ({gates}); not exported")
    if trace.ttl and not RELEASES[release].has_expiry:
        raise ExportError(
            f"trace {trace.name!r}: ttl_seconds {trace.ttl}: {release} has no assumed-pod expiry"
        )
    return _Writer(trace, release).file()


@attrs.define
class _Writer:
    trace: Trace
    release: str
    #: Go variable -> its declaration, in order of first use
    declarations: dict[str, str] = attrs.field(factory=dict)
    #: an object's JSON -> its Go variable
    variables: dict[str, str] = attrs.field(factory=dict)
    imports: set[str] = attrs.field(factory=set)
    snapshot_names: list[str] = attrs.field(factory=list)
    flags: set[str] = attrs.field(factory=set)

    def file(self) -> str:
        rows = [self._row(index, step) for index, step in enumerate(self.trace.steps, 1)]
        body = self._body(rows)
        return self._header() + body

    # -- the file around the test ------------------------------------------------------------

    def _header(self) -> str:
        lines = [
            "// Code generated by `kcache export go-test` from the kcache trace "
            f"{self.trace.name!r}",
            f"// for release {self.release}. DO NOT EDIT.",
            "//",
        ]
        if self.trace.upstream_defect is not None:
            defect = UPSTREAM_DEFECTS[self.trace.upstream_defect]
            lines += [
                f"// It shows the upstream defect {defect.id!r} (kcache records it for "
                f"{', '.join(sorted(_having(defect.id)))}):",
                "// it fails where upstream has the defect and passes where upstream does not.",
                "//",
            ]
        if self.trace.description:
            lines += [
                f"// {line}".rstrip()
                for line in textwrap.wrap(self.trace.description, 90, break_on_hyphens=False)
            ]
        standard = sorted(name for name in self.imports if "." not in name.split("/")[0])
        others = sorted(name for name in self.imports if name not in standard)
        imported = "\n".join(f"\t{_import_line(name)}" for name in standard)
        if others:
            imported += "\n\n" + "\n".join(f"\t{_import_line(name)}" for name in others)
        return "\n".join(lines) + f"\n\npackage cache\n\nimport (\n{imported}\n)\n\n"

    def _body(self, rows: list[str]) -> str:
        self.imports.update({"testing", "strings", "time", "github.com/google/go-cmp/cmp"})
        self.imports.add("k8s.io/klog/v2/ktesting")
        counts = RELEASES[self.release].counts_pvc_references
        ttl = _go_duration(self.trace.ttl)
        snapshots = ", ".join(
            f"{_go_string(name)}: NewEmptySnapshot()" for name in self.snapshot_names
        )
        claims_field = (
            ("UsedPVCRefCounts", "map[string]int", "Snapshot.usedPVCRefCounts; nil: not checked")
            if counts
            else ("UsedPVCs", "[]string", "Snapshot.usedPVCSet, sorted; nil: not checked")
        )
        view_fields = _aligned_fields(
            ("NodeList", "[]string", "Snapshot.nodeInfoList's names, in order; nil: not checked"),
            claims_field,
            (
                "Nodes",
                "map[string]*nodeView",
                "Snapshot.nodeInfoMap; a nil view: the node must be absent",
            ),
        )
        claims_observed = (
            "\t\tif want.UsedPVCRefCounts != nil {\n"
            "\t\t\tgot.UsedPVCRefCounts = map[string]int{}\n"
            "\t\t\tfor key, count := range s.usedPVCRefCounts {\n"
            "\t\t\t\tgot.UsedPVCRefCounts[key] = count\n"
            "\t\t\t}\n"
            "\t\t}\n"
            if counts
            else "\t\tif want.UsedPVCs != nil {\n"
            "\t\t\tgot.UsedPVCs = append([]string{}, sets.List(s.usedPVCSet)...)\n"
            "\t\t}\n"
        )
        if not counts:
            self.imports.add("k8s.io/apimachinery/pkg/util/sets")
        self.imports.add("sort")
        declarations = "".join(f"\t{line}\n" for line in self.declarations.values())
        flags = "".join(
            f"\t{flag} := {value}\n"
            for flag, value in (("present", "true"), ("missing", "false"))
            if flag in self.flags
        )
        return (
            f"func {go_test_name(self.trace)}(t *testing.T) {{\n"
            "\tlogger, ctx := ktesting.NewTestContext(t)\n"
            f"{declarations}{flags}\n"
            "\t// what the trace expects of a snapshot's entry for a node (Snapshot.nodeInfoMap)\n"
            "\ttype nodeView struct {\n"
            "\t\tHasNode *bool    // nil: not checked\n"
            "\t\tPods    []string // the pods' UIDs, sorted; nil: not checked\n"
            "\t}\n"
            "\t// what the trace expects of a snapshot after an update\n"
            "\ttype snapshotView struct {\n"
            f"{view_fields}"
            "\t}\n"
            "\tobserve := func(s *Snapshot, want snapshotView) snapshotView {\n"
            "\t\tvar got snapshotView\n"
            "\t\tif want.NodeList != nil {\n"
            "\t\t\tgot.NodeList = []string{}\n"
            "\t\t\tfor _, info := range s.nodeInfoList {\n"
            "\t\t\t\tgot.NodeList = append(got.NodeList, info.Node().Name)\n"
            "\t\t\t}\n"
            "\t\t}\n"
            f"{claims_observed}"
            "\t\tif want.Nodes != nil {\n"
            "\t\t\tgot.Nodes = map[string]*nodeView{}\n"
            "\t\t\tfor name, wanted := range want.Nodes {\n"
            "\t\t\t\tinfo, ok := s.nodeInfoMap[name]\n"
            "\t\t\t\tif !ok || wanted == nil {\n"
            "\t\t\t\t\tif ok {\n"
            "\t\t\t\t\t\tgot.Nodes[name] = &nodeView{}\n"
            "\t\t\t\t\t} else {\n"
            "\t\t\t\t\t\tgot.Nodes[name] = nil\n"
            "\t\t\t\t\t}\n"
            "\t\t\t\t\tcontinue\n"
            "\t\t\t\t}\n"
            "\t\t\t\tview := &nodeView{}\n"
            "\t\t\t\tif wanted.HasNode != nil {\n"
            "\t\t\t\t\thasNode := info.Node() != nil\n"
            "\t\t\t\t\tview.HasNode = &hasNode\n"
            "\t\t\t\t}\n"
            "\t\t\t\tif wanted.Pods != nil {\n"
            "\t\t\t\t\tview.Pods = []string{}\n"
            "\t\t\t\t\tfor _, pod := range info.GetPods() {\n"
            "\t\t\t\t\t\tview.Pods = append(view.Pods, string(pod.GetPod().UID))\n"
            "\t\t\t\t\t}\n"
            "\t\t\t\t\tsort.Strings(view.Pods)\n"
            "\t\t\t\t}\n"
            "\t\t\t\tgot.Nodes[name] = view\n"
            "\t\t\t}\n"
            "\t\t}\n"
            "\t\treturn got\n"
            "\t}\n\n"
            f"\tcache := {_new_cache(RELEASES[self.release]).format(ttl=ttl)}\n"
            f"\tsnapshots := map[string]*Snapshot{{{snapshots}}}\n"
            "\tconst (\n"
            "\t\tnotChecked = iota // the trace does not say how the step ends\n"
            "\t\tsucceeds\n"
            "\t\tfails\n"
            "\t)\n"
            "\tsteps := []struct {\n"
            "\t\tname         string // the trace's op and its arguments\n"
            "\t\trun          func() error\n"
            "\t\twant         int\n"
            "\t\terrContains  string // when it fails: a part of the error's text\n"
            "\t\tsnapshot     string // the snapshot the step updates\n"
            "\t\twantSnapshot *snapshotView\n"
            "\t}{\n" + "".join(rows) + "\t}\n"
            "\tfor i, step := range steps {\n"
            "\t\terr := step.run()\n"
            "\t\tswitch {\n"
            "\t\tcase step.want == succeeds && err != nil:\n"
            '\t\t\tt.Errorf("step %d (%s): unexpected error: %v", i+1, step.name, err)\n'
            "\t\tcase step.want == fails && err == nil:\n"
            '\t\t\tt.Errorf("step %d (%s): succeeded, want an error containing %q", '
            "i+1, step.name, step.errContains)\n"
            "\t\tcase step.want == fails && !strings.Contains(err.Error(), step.errContains):\n"
            '\t\t\tt.Errorf("step %d (%s): error %q, want one containing %q", '
            "i+1, step.name, err, step.errContains)\n"
            "\t\t}\n"
            "\t\tif step.wantSnapshot != nil {\n"
            "\t\t\tgot := observe(snapshots[step.snapshot], *step.wantSnapshot)\n"
            '\t\t\tif diff := cmp.Diff(*step.wantSnapshot, got); diff != "" {\n'
            '\t\t\t\tt.Errorf("step %d (%s): snapshot %q differs (-want, +got):\\n%s", '
            "i+1, step.name, step.snapshot, diff)\n"
            "\t\t\t}\n"
            "\t\t}\n"
            "\t}\n"
            "}\n"
        )

    # -- one row per step --------------------------------------------------------------------

    def _row(self, index: int, step: Any) -> str:
        where = f"trace {self.trace.name!r}: step {index} ({step.op})"
        if step.op not in EXPORTED_OPS:
            raise ExportError(
                f"{where}: {step.op} is not exported to a Go test "
                f"(exported ops: {', '.join(EXPORTED_OPS)})"
            )
        if _lacks(RELEASES[self.release], step.op):
            raise ExportError(f"{where}: {self.release}'s cache package has no {step.op}")
        raw = step_to_json(step)
        kind = "node" if step.op.endswith("_node") else "pod"
        objects = [
            self._object(raw[key], kind, key, where) if raw.get(key) is not None else "nil"
            for key in _OP_ARGUMENTS[step.op]
        ]
        snapshot = raw.get("snapshot", "")
        if step.op == "update_snapshot" and snapshot not in self.snapshot_names:
            self.snapshot_names.append(snapshot)
        statement = EXPORTED_OPS[step.op].format(*objects, snapshot=_go_string(snapshot))
        expect = dict(step.expect)
        allowed = _SNAPSHOT_STEP_KEYS if step.op == "update_snapshot" else _MUTATION_KEYS
        unknown = sorted(set(expect) - allowed)
        if unknown:
            raise ExportError(
                f"{where}: expect.{unknown[0]} is not exported to a Go test "
                f"(exported: {', '.join(sorted(allowed))})"
            )
        fields = [
            f"name: {_go_string(_step_name(step.op, objects, snapshot))}",
            f"run: func() error {{ {statement} }}",
        ]
        error = expect.get("error")
        if error is False:
            fields.append("want: succeeds")
        elif error is True:
            fields.append("want: fails")
        elif isinstance(error, str):
            fields += ["want: fails", f"errContains: {_go_string(error)}"]
        if "snapshot" in expect:
            fields.append(f"snapshot: {_go_string(snapshot)}")
            fields.append(f"wantSnapshot: {self._snapshot_view(expect['snapshot'], where)}")
        return "\t\t{" + ", ".join(fields) + "},\n"

    def _snapshot_view(self, view: Mapping[str, Any], where: str) -> str:
        unknown = sorted(set(view) - _SNAPSHOT_KEYS)
        if unknown:
            raise ExportError(
                f"{where}: expect.snapshot.{unknown[0]} is not exported to a Go test "
                f"(exported: {', '.join(sorted(_SNAPSHOT_KEYS))})"
            )
        counts = RELEASES[self.release].counts_pvc_references
        fields = []
        if "node_list" in view:
            fields.append(f"NodeList: {_go_strings(view['node_list'])}")
        if "used_pvc_ref_counts" in view:
            wanted = view["used_pvc_ref_counts"]
            if counts:
                entries = ", ".join(f"{_go_string(k)}: {v}" for k, v in sorted(wanted.items()))
                fields.append(f"UsedPVCRefCounts: map[string]int{{{entries}}}")
            else:
                # v1.35 and v1.36 keep the set of used claims: a claim counted above 0
                used = sorted(key for key, count in wanted.items() if count > 0)
                fields.append(f"UsedPVCs: {_go_strings(used)} /* counted above 0 */")
        if "used_pvcs" in view:
            if counts or "used_pvc_ref_counts" in view:
                raise ExportError(
                    f"{where}: expect.snapshot.used_pvcs: {self.release} keeps one of "
                    "used_pvcs (v1.35, v1.36) and used_pvc_ref_counts (v1.37), not both"
                )
            fields.append(f"UsedPVCs: {_go_strings(sorted(view['used_pvcs']))}")
        if "nodes" in view:
            nodes = ", ".join(
                f"{_go_string(name)}: {self._node_view(node, where, name)}"
                for name, node in sorted(view["nodes"].items())
            )
            fields.append("Nodes: map[string]*nodeView{" + nodes + "}")
        return "&snapshotView{" + ", ".join(fields) + "}"

    def _node_view(self, node: Mapping[str, Any] | None, where: str, name: str) -> str:
        if node is None:
            return "nil"
        unknown = sorted(set(node) - _NODE_VIEW_KEYS)
        if unknown:
            raise ExportError(
                f"{where}: expect.snapshot.nodes.{name}.{unknown[0]} is not exported to a Go "
                f"test (exported: {', '.join(sorted(_NODE_VIEW_KEYS))})"
            )
        fields = []
        if "has_node" in node:
            flag = "present" if node["has_node"] else "missing"
            self.flags.add(flag)
            fields.append(f"HasNode: &{flag}")
        if "pods" in node:
            fields.append(f"Pods: {_go_strings(sorted(node['pods']))}")
        return "{" + ", ".join(fields) + "}"

    # -- objects -----------------------------------------------------------------------------

    def _object(self, manifest: Mapping[str, Any], kind: str, key: str, where: str) -> str:
        text = json.dumps(manifest, sort_keys=True, default=str)  # amounts may be Decimal
        if text in self.variables:
            return self.variables[text]
        fields = _NODE_FIELDS if kind == "node" else _POD_FIELDS
        for path in _paths(manifest):
            if path not in fields:
                raise ExportError(
                    f"{where}: {key}.{path} is not exported to a Go test "
                    f"(a {kind}'s exported fields: {', '.join(sorted(fields))})"
                )
        name = manifest.get("metadata", {}).get("name", "")
        base = kind + _camel(name or "unnamed")
        variable = base
        version = 1
        while variable in self.declarations:
            version += 1
            variable = f"{base}v{version}"
        expression = self._node(manifest) if kind == "node" else self._pod(manifest)
        self.declarations[variable] = f"{variable} := {expression}"
        self.variables[text] = variable
        return variable

    def _node(self, manifest: Mapping[str, Any]) -> str:
        self.imports.update({"k8s.io/api/core/v1", "k8s.io/apimachinery/pkg/apis/meta/v1"})
        metadata = manifest.get("metadata", {})
        meta = [f"Name: {_go_string(metadata.get('name', ''))}"]
        labels = metadata.get("labels") or {}
        if labels:
            entries = ", ".join(
                f"{_go_string(k)}: {_go_string(v)}" for k, v in sorted(labels.items())
            )
            meta.append(f"Labels: map[string]string{{{entries}}}")
        node = "&v1.Node{\n\t\tObjectMeta: metav1.ObjectMeta{" + ", ".join(meta) + "},\n"
        allocatable = manifest.get("status", {}).get("allocatable")
        if allocatable:
            # gofmt aligns the values of the two keys
            status = f"v1.NodeStatus{{Allocatable: {self._resources(allocatable)}}}"
            node += f"\t\tStatus:     {status},\n"
        return node + "\t}"

    def _pod(self, manifest: Mapping[str, Any]) -> str:
        self.imports.add("k8s.io/kubernetes/pkg/scheduler/testing")
        metadata = manifest.get("metadata", {})
        spec = manifest.get("spec", {})
        calls = ["st.MakePod()"]
        for field, method in (("name", "Name"), ("namespace", "Namespace"), ("uid", "UID")):
            if field in metadata:
                calls.append(f"{method}({_go_string(metadata[field])})")
        if "nodeName" in spec:
            calls.append(f"Node({_go_string(spec['nodeName'])})")
        containers = spec.get("containers") or []
        if containers:
            self.imports.add("k8s.io/api/core/v1")
            listed = ", ".join(self._container(container) for container in containers)
            calls.append(f"Containers([]v1.Container{{{listed}}})")
        for volume in spec.get("volumes") or []:
            claim = volume["persistentVolumeClaim"]["claimName"]
            if volume.get("name") == claim:
                calls.append(f"PVC({_go_string(claim)})")
            else:
                self.imports.add("k8s.io/api/core/v1")
                calls.append(
                    f"Volume(v1.Volume{{Name: {_go_string(volume.get('name', ''))}, "
                    "VolumeSource: v1.VolumeSource{PersistentVolumeClaim: "
                    f"&v1.PersistentVolumeClaimVolumeSource{{ClaimName: {_go_string(claim)}}}}}}})"
                )
        calls.append("Obj()")
        return ".".join(calls)

    def _container(self, container: Mapping[str, Any]) -> str:
        fields = []
        if "name" in container:
            fields.append(f"Name: {_go_string(container['name'])}")
        if "image" in container:
            fields.append(f"Image: {_go_string(container['image'])}")
        resources = container.get("resources", {})
        amounts = [
            f"{field}: {self._resources(resources[key])}"
            for key, field in (("requests", "Requests"), ("limits", "Limits"))
            if resources.get(key)
        ]
        if amounts:
            fields.append(f"Resources: v1.ResourceRequirements{{{', '.join(amounts)}}}")
        return "{" + ", ".join(fields) + "}"

    def _resources(self, amounts: Mapping[str, Any]) -> str:
        self.imports.add("k8s.io/apimachinery/pkg/api/resource")
        entries = ", ".join(
            f"{_go_string(name)}: resource.MustParse({_go_string(str(amount))})"
            for name, amount in sorted(amounts.items())
        )
        return f"v1.ResourceList{{{entries}}}"


def _paths(value: Any, prefix: str = "") -> Iterable[str]:
    """The leaf field paths of a manifest (lists as `[]`; maps of amounts and labels whole)."""
    if isinstance(value, dict) and prefix not in _WHOLE_MAPS:
        for key, item in value.items():
            yield from _paths(item, f"{prefix}.{key}" if prefix else key)
    elif isinstance(value, list):
        for item in value:
            yield from _paths(item, f"{prefix}[]")
    else:
        yield prefix


_WHOLE_MAPS = frozenset(
    {
        "metadata.labels",
        "status.allocatable",
        "spec.containers[].resources.requests",
        "spec.containers[].resources.limits",
    }
)


def _aligned_fields(*fields: tuple[str, str, str]) -> str:
    """Struct fields with names, types and comments in columns, as gofmt lays them out."""
    name_width = max(len(name) for name, _, _ in fields)
    type_width = max(len(kind) for _, kind, _ in fields)
    return "".join(
        f"\t\t{name:<{name_width}} {kind:<{type_width}} // {comment}\n"
        for name, kind, comment in fields
    )


def _step_name(op: str, objects: list[str], snapshot: str) -> str:
    arguments = [*objects, snapshot] if op == "update_snapshot" else objects
    return " ".join([op, *arguments])


def _camel(name: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", name)
    return "".join(word[:1].upper() + word[1:] for word in words) or "X"


def _go_string(value: str) -> str:
    """A Go interpreted string literal of `value` (JSON's escapes are Go's for these)."""
    return json.dumps(value, ensure_ascii=False)


def _go_strings(values: Iterable[str]) -> str:
    return "[]string{" + ", ".join(_go_string(value) for value in values) + "}"


def _go_duration(seconds: Any) -> str:
    nanoseconds = int(seconds * 1_000_000_000)
    return "0" if nanoseconds == 0 else f"time.Duration({nanoseconds})"


_ALIASES = {
    "k8s.io/api/core/v1": "v1",
    "k8s.io/apimachinery/pkg/apis/meta/v1": "metav1",
    "k8s.io/kubernetes/pkg/scheduler/testing": "st",
}


def _import_line(path: str) -> str:
    alias = _ALIASES.get(path)
    return f'{alias} "{path}"' if alias else f'"{path}"'
