"""What an empty cache answers to the reads, for the test adapters that fail only on a change."""

EMPTY_CACHE_READS = {
    "init": {"ok": True},
    "dump": {"ok": True, "nodes": {}, "assumed": [], "node_count": 0, "pod_count": 0},
    "is_assumed_pod": {"ok": True, "assumed": False},
    "get_pod": {
        "ok": False,
        "error": {"class": "PodNotFoundError", "message": "does not exist in scheduler cache"},
    },
}
