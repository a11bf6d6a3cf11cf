"""Both ends of docs/adapter-protocol.md: kcache driving a cache in another process.

`client.AdapterFactory` is the kcache end (what `--impl cmd:...` and
`--impl go` build); `server` serves any Python cache, so the protocol is
tested end to end without Go.
"""
