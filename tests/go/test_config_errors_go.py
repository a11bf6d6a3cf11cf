"""Configuration files the model refuses, refused with upstream's very text.

Each file of tests/data/scheduler-config-errors is read by the model
(`read_configuration_file`) and by upstream's own `ValidateKubeSchedulerConfiguration`
(tests/go/config_validation, built against the release's pinned modules, as
kube-scheduler's --config decodes it): the model's error is upstream's aggregate,
character for character, on each release.  The texts written out by hand are in
tests/unit/spec/test_scheduler_config.py and test_scheduler_plugins.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.paths import TESTS

from kcache.spec.releases import RELEASES
from kcache.spec.scheduler.config import ConfigError, read_configuration_file
from kcache.targets import go as go_adapter

FILES = sorted((TESTS / "data" / "scheduler-config-errors").glob("*.yaml"))
VALIDATOR = Path(__file__).parent / "config_validation" / "main.go"


@pytest.fixture(scope="module", params=["v1.35", "v1.36", "v1.37"])
def upstream(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Upstream's error text per file for one release (the validator built and run once)."""
    release = RELEASES[request.param]
    module = tmp_path_factory.mktemp(f"validate-{release.name}")
    pinned = go_adapter.SOURCE / go_adapter.pinned_modfile(release)
    text = re.sub(r"(?m)^module .*$", "module configvalidation", pinned.read_text())
    (module / "go.mod").write_text(text)
    shutil.copyfile(pinned.with_suffix(".sum"), module / "go.sum")
    shutil.copyfile(VALIDATOR, module / "main.go")
    env = {**os.environ, **go_adapter.toolchain_environment(release)}
    subprocess.run(
        ["go", "build", "-mod=mod", "-o", "validate", "."], cwd=module, env=env, check=True
    )
    run = subprocess.run(
        [str(module / "validate"), *map(str, FILES)], capture_output=True, text=True, check=True
    )
    return {"release": release, "texts": json.loads(run.stdout)}


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_the_model_refuses_with_upstreams_text(upstream: dict, path: Path) -> None:
    expected = upstream["texts"][str(path)]
    assert expected, f"upstream accepts {path.name}: the file should be one it refuses"
    with pytest.raises(ConfigError) as raised:
        read_configuration_file(yaml.safe_load(path.read_text()), upstream["release"])
    assert str(raised.value) == expected
