"""Kueue's own published examples (kubernetes-sigs/kueue v0.19.2; see examples/README.md): 19 valid, 1 invalid."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.modules.kueue import validate_path
from tests.paths import DATA, INVENTORY

EXAMPLES = DATA / "kueue" / "examples"
INVALID = {"admin-minimal-cq.yaml": "kueue-42"}  # onFlavors names a flavor the queue lacks (examples/README.md)
FILES = sorted(p.name for p in EXAMPLES.glob("*.yaml"))


def test_there_are_twenty_examples() -> None:
    assert len(FILES) == 20


@pytest.mark.parametrize("name", FILES)
def test_example_is_classified_like_kueue_does(name: str) -> None:
    manifests, issues = validate_path(EXAMPLES / name)
    assert manifests
    errors = [i for i in issues if i.severity == "error"]
    if name in INVALID:
        assert [i.rule for i in errors] == [INVALID[name]]
        assert errors[0].location is not None and errors[0].location.line == 10
        assert "onFlavors names flavor `default-flavor`" in errors[0].message
    else:
        assert errors == [], [i.format() for i in errors]


def test_qm_validate_kueue_rejects_the_invalid_example_with_a_located_message() -> None:
    result = CliRunner().invoke(app, ["validate", str(INVENTORY), "--kueue", str(EXAMPLES)])
    assert result.exit_code == 1
    assert (
        f"{EXAMPLES}/admin-minimal-cq.yaml:10 ClusterQueue/cluster-queue-2 "
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: onFlavors names flavor `default-flavor`"
        in result.output
    )
    assert "1 error(s)" in result.output


def test_qm_validate_kueue_accepts_a_valid_example() -> None:
    result = CliRunner().invoke(app, ["validate", str(INVENTORY), "--kueue", str(EXAMPLES / "provisioning-setup.yaml")])
    assert result.exit_code == 0, result.output
    assert "0 error(s), 1 warning(s)" in result.output  # namespaceSelector {} admits every namespace


def test_qm_validate_kueue_reads_rendered_output(tmp_path: Path) -> None:
    assert CliRunner().invoke(app, ["render", str(INVENTORY), "--out", str(tmp_path)]).exit_code == 0
    result = CliRunner().invoke(app, ["validate", str(INVENTORY), "--kueue", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "0 error(s), 0 warning(s)" in result.output


def test_malformed_yaml_is_located(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("kind: ClusterQueue\nmetadata: {name: [\n")
    result = CliRunner().invoke(app, ["validate", str(INVENTORY), "--kueue", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 1
    assert "bad.yaml:3" in result.output and "malformed YAML" in result.output
