"""The optimized scheduler cache, engineered the way upstream's Go cache is.

`impl.cache.Cache` keeps NodeInfos in a generation-ordered doubly linked list
so that `update_snapshot` re-clones only what changed since the snapshot was
last updated; aggregates are maintained incrementally on every pod and node
operation.  It must show exactly what the reference model `spec.cache` shows.
"""
