"""DefaultPreemption: no Filter or Score; its PostFilter runs after a fit error.

The cycle runs it (`post_filter`, docs/semantics.md §21.20): it has no
point the per-node passes call, so its entry here carries none.
"""

from __future__ import annotations

from kcache.spec.scheduler.plugin import Plugin
from kcache.spec.scheduler.post_filter import DEFAULT_PREEMPTION

PLUGIN = Plugin(DEFAULT_PREEMPTION)
