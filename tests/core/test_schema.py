"""The committed JSON Schema and reference page are generated from the model; stale copies fail."""

from __future__ import annotations

import json

import jsonschema
import yaml

from quartermaster.schema import reference_markdown, schema_dict, schema_json
from tests.paths import REPO

FIX = "Run `qm schema` and commit the result."


def test_committed_schema_is_fresh() -> None:
    assert (REPO / "inventory" / "inventory.schema.json").read_text() == schema_json(), FIX


def test_committed_reference_page_is_fresh() -> None:
    assert (REPO / "docs" / "inventory-reference.md").read_text() == reference_markdown(), FIX


def test_every_example_yaml_file_matches_the_schema_and_points_at_it() -> None:
    schema = schema_dict()
    for path in sorted((REPO / "inventory").rglob("*.yaml")):
        text = path.read_text()
        assert text.startswith("# yaml-language-server: $schema="), path
        target = (path.parent / text.split("$schema=", 1)[1].split()[0]).resolve()
        assert target == (REPO / "inventory" / "inventory.schema.json").resolve(), path
        data = json.loads(json.dumps(yaml.safe_load(text), default=str))
        jsonschema.validate(data, schema)


def test_schema_carries_field_docs_and_rejects_unknown_keys() -> None:
    schema = schema_dict()
    team = schema["$defs"]["TeamEntry"]  # a team as a file writes it: cost_center may come from team_terms
    assert team["properties"]["cost_center"]["description"].startswith("cost_center: ")
    assert team["additionalProperties"] is False
    bad = {"teams": [{"name": "a", "cost_center": "c", "owners": ["@o"], "namespaces": ["a"], "quota": []}]}
    try:
        jsonschema.validate(bad, schema)
    except jsonschema.ValidationError as exc:
        assert "quota" in exc.message
    else:
        raise AssertionError("unknown key accepted")
