"""The files kcache carries besides its code, found the same way in a checkout and a wheel.

`kcache/bundled/` holds links to the repository's own copies (adapters/go,
tests/vectors, docs/trace-format.md, docs/trace.schema.json, the example
cluster of docs/getting-started.md); building the
wheel copies what they point at into the package, so an installed kcache
has every one of them under the same names.
"""

from __future__ import annotations

from pathlib import Path

#: the folder of bundled files (links in a checkout, copies in an installed package)
BUNDLED = Path(__file__).resolve().parent / "bundled"
#: the Go adapter's module (adapters/go), built by `--impl go`
GO_ADAPTER = (BUNDLED / "go-adapter").resolve()
#: the conformance vectors (tests/vectors), run by `kcache replay --vectors`
VECTORS = (BUNDLED / "vectors").resolve()
#: the trace format's reference (docs/trace-format.md)
TRACE_FORMAT = (BUNDLED / "trace-format.md").resolve()
#: the JSON schema of one trace document (docs/trace.schema.json)
TRACE_SCHEMA = (BUNDLED / "trace.schema.json").resolve()
#: the small cluster of docs/getting-started.md (tests/data/cluster/kubectl/small-cluster.yaml),
#: read by `kcache show --example`
EXAMPLE_CLUSTER = (BUNDLED / "example-cluster.yaml").resolve()
