"""The conformance machine run against `impl` (release v1.35 and v1.36): the CI gate."""

from __future__ import annotations

from pathlib import Path

from kcache.impl.cache import Cache
from kcache.machine import conformance_machine
from kcache.spec.releases import V1_35, V1_36

#: a failure's shrunk trace lands here, for `kcache replay` and a bug report
FAILURES = Path("kcache-failures")

TestImplConformsV135 = conformance_machine(
    Cache, release=V1_35, name="impl", out_dir=FAILURES
).TestCase
TestImplConformsV136 = conformance_machine(
    Cache, release=V1_36, name="impl-v1.36", out_dir=FAILURES
).TestCase
