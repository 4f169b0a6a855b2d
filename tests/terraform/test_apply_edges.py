"""Apply edges (issue 28, point 7): a GCP quota grant read with no details, an unlimited grant (-1), and capacity-block
actions that must never be declared once their start has passed, checked with a real Terraform where it runs the
expression (`terraform console`, `terraform plan` on built-in resources: no provider, no network)."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from quartermaster.loader import load
from quartermaster.modules.cloud import cluster_spec
from quartermaster.modules.terraform.resources import stack_spec
from quartermaster.providers.gke.cloud import UNLIMITED_QUOTA, quota_to_ask
from quartermaster.providers.gke.terraform_resources import gcp_quota_preference
from tests.builders import BEFORE_THE_BLOCK
from tests.paths import INVENTORY

TERRAFORM = shutil.which("terraform") or shutil.which("tofu")
needs_terraform = pytest.mark.skipif(TERRAFORM is None, reason="terraform (or tofu) is not installed")


@pytest.mark.parametrize(
    ("need", "granted", "want"),
    [
        (64, [], 64),  # nothing granted yet (or no details): ask for the need
        (64, [10], 64),  # a raise
        (64, [1000], 1000),  # granted above the need: asking for 64 would be a decrease request
        (64, [UNLIMITED_QUOTA], UNLIMITED_QUOTA),  # unlimited stays unlimited, never 64
        (64, [UNLIMITED_QUOTA, 10], UNLIMITED_QUOTA),  # the default unlimited, a region's dimension limited
    ],
)
def test_the_quota_to_ask_never_lowers_a_grant(need: int, granted: list[int], want: int) -> None:
    assert quota_to_ask(need, granted) == want


def console(expression: str, tmp_path: Path, infos: list[dict[str, Any]]) -> str:
    """`terraform console` on `expression` with `local.info` holding `dimensions_infos` typed as the provider types
    them (`dimensions` a map of strings), its printed value."""
    assert TERRAFORM
    items = ", ".join(
        f"{{dimensions = tomap({json.dumps(i['dimensions'])}), details = {json.dumps(i['details'])}}}" for i in infos
    )
    (tmp_path / "main.tf").write_text(f"locals {{\n  info = {{dimensions_infos = [{items}]}}\n}}\n")
    run = subprocess.run(
        [TERRAFORM, "console"],
        input=expression,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TF_CLI_CONFIG_FILE": os.devnull, "CHECKPOINT_DISABLE": "1"},
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


GRANTS = {
    # the provider's answer when no value is set: an empty details list (data_source_google_cloud_quotas_quota_info.go)
    "no details": ([{"dimensions": {}, "details": []}], "64"),
    "granted below the need": ([{"dimensions": {}, "details": [{"value": "10"}]}], "64"),
    "granted above the need": ([{"dimensions": "the request's", "details": [{"value": "1000"}]}], "1000"),
    "another region only": ([{"dimensions": {"region": "europe-west4"}, "details": [{"value": "5000"}]}], "64"),
    "unlimited": ([{"dimensions": {}, "details": [{"value": "-1"}]}, {"dimensions": {}, "details": []}], "-1"),
}


@needs_terraform
@pytest.mark.parametrize("case", sorted(GRANTS))
def test_terraform_reads_the_grant_as_the_rule_says(case: str, tmp_path: Path) -> None:
    inventory = load(INVENTORY).inventory
    spec = next(p for p in cluster_spec(inventory, "gke-gpu-us-east4", BEFORE_THE_BLOCK).capacity.gcp_quota_preferences)
    spec = type(spec)(**{**spec.__dict__, "preferred_value": "64"})
    info, preference = gcp_quota_preference(spec)
    expression = str(preference.body["quota_config"]["preferred_value"])
    assert expression.startswith("${") and expression.endswith("}")
    grants, want = GRANTS[case]
    infos = [
        {**i, "dimensions": spec.dimensions if i["dimensions"] == "the request's" else i["dimensions"]} for i in grants
    ]
    value = console(expression[2:-1].replace(info.address, "local.info"), tmp_path, infos)
    assert value == want
    granted = [
        int(i["details"][0]["value"]) for i in infos if i["details"] and i["dimensions"] in ({}, spec.dimensions)
    ]
    assert value == str(quota_to_ask(64, granted))  # the same rule as the Pulumi program's


def schedules(now: dt.datetime) -> list[dict[str, Any]]:
    """Each scheduled action's arguments, with its `count`."""
    inventory = load(INVENTORY).inventory
    spec = stack_spec(cluster_spec(inventory, "eks-us-east-1", now), [])
    return [{**r.body, "count": r.count} for r in spec.resources if r.type == "aws_autoscaling_schedule"]


def test_every_scheduled_action_is_declared_only_while_its_start_is_ahead() -> None:
    found = schedules(BEFORE_THE_BLOCK)
    assert len(found) == 2  # the block's scale-up and its scale-down (aws-p5-cb-2026q4)
    for body in found:
        assert str(body["count"]) == f'${{timecmp(plantimestamp(), "{body["start_time"]}") < 0 ? 1 : 0}}'


@pytest.mark.parametrize(
    "now",
    [
        BEFORE_THE_BLOCK,
        dt.datetime(2026, 10, 1, 11, 30, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 15, tzinfo=dt.UTC),
        dt.datetime(2027, 1, 15, tzinfo=dt.UTC),
    ],  # before the block, at its start, during it, after it
)
def test_no_synthesised_action_starts_before_the_moment_it_is_synthesised_for(now: dt.datetime) -> None:
    for body in schedules(now):
        assert dt.datetime.fromisoformat(body["start_time"]) > now, body


@needs_terraform
@pytest.mark.parametrize(
    ("start", "planned"),
    [("2099-01-01T00:00:00Z", 1), ("2020-01-01T00:00:00Z", 0)],  # still ahead; already past when planned
)
def test_terraform_plans_an_action_only_while_it_is_ahead(start: str, planned: int, tmp_path: Path) -> None:
    """A real `terraform plan` of the emitted count (on Terraform's built-in `terraform_data`, so no provider):
    JSON synthesised before a block and applied after it declares no past-dated action."""
    count = str(schedules(BEFORE_THE_BLOCK)[0]["count"])
    start_time = re.search(r'"([0-9TZ:-]+)"', count)
    assert start_time
    body = {
        "terraform": {"required_version": ">= 1.5"},
        "resource": {"terraform_data": {"action": {"count": count.replace(start_time.group(1), start), "input": 1}}},
    }
    (tmp_path / "main.tf.json").write_text(json.dumps(body))
    env = {**os.environ, "TF_CLI_CONFIG_FILE": os.devnull, "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1"}
    assert TERRAFORM
    init = subprocess.run([TERRAFORM, "init", "-input=false"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert init.returncode == 0, init.stdout + init.stderr
    plan = subprocess.run(
        [TERRAFORM, "plan", "-input=false", "-no-color"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert (f"Plan: {planned} to add" in plan.stdout) == bool(planned), plan.stdout
    assert ("No changes." in plan.stdout) == (not planned), plan.stdout
