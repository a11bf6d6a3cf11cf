"""kubernetes.io's documented configuration files decide in the model as in upstream.

Each file of tests/data/scheduler-config, unchanged, through `kcache schedule --config`
on tests/data/cluster/scheduling: the Go adapter (upstream's ScheduleOne with its whole
default profile, the file's profile as written, defaulted by upstream) and the spec give
the same host and the same total scores per node, on each release.  The hand-derived
figures are in tests/unit/cli/test_schedule_config.py.
"""

from __future__ import annotations

import json

import pytest
from helpers.paths import TESTS

from kcache.cli.main import main

CONFIGS = TESTS / "data" / "scheduler-config"
EXAMPLE = TESTS / "data" / "cluster" / "scheduling"


def decision(capsys: pytest.CaptureFixture[str], config: str, release: str, impl: str) -> dict:
    argv = [
        "schedule",
        str(EXAMPLE / "cluster.yaml"),
        "--pod",
        str(EXAMPLE / "pod.yaml"),
        "--config",
        str(CONFIGS / config),
        "--release",
        release,
        "--impl",
        impl,
        "--format",
        "json",
    ]
    assert main(argv) == 0
    found: dict = json.loads(capsys.readouterr()[0])["decision"]
    return {"host": found["host"], "scores": found["scores"]}


@pytest.mark.parametrize(
    ("release", "oracle"), [("v1.35", "go:v1.35"), ("v1.36", "go:v1.36"), ("v1.37", "go")]
)
@pytest.mark.parametrize("config", sorted(path.name for path in CONFIGS.glob("*.yaml")))
def test_the_model_decides_as_upstream(
    capsys: pytest.CaptureFixture[str], config: str, release: str, oracle: str
) -> None:
    assert decision(capsys, config, release, "spec") == decision(capsys, config, release, oracle)
