"""Quotas over time (issue 36, point 2): a pool's quota is offered only while its nodes can exist (a capacity block
between its start and the node group's scale-down, a reservation within its commitment's term, on-prem servers from
delivery), on the workers and in the MultiKueue manager's sums; `qm render --schedule` lists every boundary with
what changes there and checks every window."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.capacity import capacity_boundaries, pool_window
from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.modules.kueue import objects_for_cluster, validate_manifests
from quartermaster.modules.kueue.admission import admission_refusals
from quartermaster.modules.kueue.builders import accelerator_flavor_name
from quartermaster.modules.kueue.schedule import first_window_refusals, quota_schedule
from tests.builders import BEFORE_THE_BLOCK, DURING_THE_BLOCK
from tests.paths import INVENTORY, REPO

AFTER_THE_BLOCK = dt.datetime(2027, 1, 15, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def example() -> Inventory:
    return load(INVENTORY).inventory


def block_dates(inventory: Inventory) -> tuple[dt.datetime, dt.datetime]:
    """The example block's nodes, from the EC2 rules: from 11:30 UTC of its first day to 40 minutes before it ends
    at 11:30 UTC `term_days` later (the node group's scale-down)."""
    block = inventory.commitment_by_name["aws-p5-cb-2026q4"]
    start = dt.datetime.combine(block.start, dt.time(11, 30), dt.UTC)
    end = start + dt.timedelta(days=block.term_days) - dt.timedelta(minutes=40)
    return start, end


def gpu_quota(objects: list[dict[str, Any]], queue: str, flavor: str) -> dict[str, Any] | None:
    """The nvidia.com/gpu entry of `flavor` in ClusterQueue `queue`."""
    for o in objects:
        if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == queue:
            for group in o["spec"]["resourceGroups"]:
                for f in group["flavors"]:
                    if f["name"] == flavor:
                        return next(r for r in f["resources"] if r["name"] == "nvidia.com/gpu")
    return None


def rendered(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["render", str(INVENTORY), *args])
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def test_qm_render_at_offers_the_capacity_block_only_while_it_runs(example: Inventory) -> None:
    """The Done-when of issue 36: `--at 2027-01-15` offers no p5-cb quota, `--at 2026-11-15` offers the team's."""
    nominal = next(q.nominal for q in example.team_by_name["llm-pretrain"].quotas if q.flavor == "p5-cb")
    during = gpu_quota(rendered("--at", "2026-11-15", "--cluster", "eks-us-east-1"), "llm-pretrain", "p5-cb")
    after = gpu_quota(rendered("--at", "2027-01-15", "--cluster", "eks-us-east-1"), "llm-pretrain", "p5-cb")
    assert during == {"name": "nvidia.com/gpu", "nominalQuota": nominal}
    # the object stays (a window changes amounts only); it neither holds nor borrows anything
    assert after == {"name": "nvidia.com/gpu", "nominalQuota": 0, "borrowingLimit": 0}


@pytest.mark.parametrize(
    "offset, want_open",
    [
        (dt.timedelta(minutes=-1), False),  # a minute before 11:30 UTC of the first day
        (dt.timedelta(0), True),  # the block starts
    ],
)
def test_the_block_opens_at_half_past_eleven_utc(example: Inventory, offset: dt.timedelta, want_open: bool) -> None:
    start, _ = block_dates(example)
    quota = gpu_quota(objects_for_cluster(example, "eks-us-east-1", start + offset), "llm-pretrain", "p5-cb")
    assert quota is not None and (quota["nominalQuota"] > 0) is want_open


def test_the_block_closes_when_its_node_group_scales_down(example: Inventory) -> None:
    _, end = block_dates(example)
    assert pool_window(example, example.pool_by_name["p5-cb"]).closes == end
    before = gpu_quota(
        objects_for_cluster(example, "eks-us-east-1", end - dt.timedelta(minutes=1)), "llm-pretrain", "p5-cb"
    )
    at = gpu_quota(objects_for_cluster(example, "eks-us-east-1", end), "llm-pretrain", "p5-cb")
    assert before is not None and before["nominalQuota"] > 0
    assert at is not None and at["nominalQuota"] == 0


def test_the_managers_sum_counts_only_workers_pools_with_nodes(example: Inventory) -> None:
    """mk-manager's llm-pretrain quota in H100-80GB is the sum of its workers' H100 quotas, p5-cb only while the
    block runs (before, MultiKueue counted 32 GPUs of a node group at 0 nodes)."""
    manager = example.cluster_by_name["mk-manager"]
    pools = {p.name: p for w in manager.multikueue_workers for p in example.cluster_by_name[w].pools}
    h100 = [
        q
        for q in example.team_by_name["llm-pretrain"].quotas
        if q.flavor in pools and example.machine_by_name[pools[q.flavor].machine].accelerator == "H100-80GB"
    ]
    flavor = accelerator_flavor_name("H100-80GB")
    for at in (BEFORE_THE_BLOCK, DURING_THE_BLOCK, AFTER_THE_BLOCK):
        want = sum(q.nominal for q in h100 if pool_window(example, pools[q.flavor]).holds(at))
        quota = gpu_quota(objects_for_cluster(example, "mk-manager", at), "llm-pretrain", flavor)
        assert quota is not None and quota["nominalQuota"] == want, at
    p5 = next(q.nominal for q in h100 if q.flavor == "p5-cb")
    during = gpu_quota(objects_for_cluster(example, "mk-manager", DURING_THE_BLOCK), "llm-pretrain", flavor)
    after = gpu_quota(objects_for_cluster(example, "mk-manager", AFTER_THE_BLOCK), "llm-pretrain", flavor)
    assert during is not None and after is not None and during["nominalQuota"] - after["nominalQuota"] == p5


def test_the_offline_check_refuses_quota_on_a_pool_without_nodes(example: Inventory) -> None:
    """Objects rendered mid-block and still applied after it (what happened before: the same quota at every date)
    are refused with the pool and the instant."""
    stale = objects_for_cluster(example, "eks-us-east-1", DURING_THE_BLOCK)
    found = admission_refusals(example, "eks-us-east-1", stale, AFTER_THE_BLOCK)
    assert [(r.queue, r.flavor) for r in found] == [("llm-pretrain", "p5-cb")]
    assert "pool p5-cb's nodes cannot exist at 2027-01-15 00:00 UTC" in found[0].reason
    assert admission_refusals(example, "eks-us-east-1", stale, DURING_THE_BLOCK) == []


def test_every_window_of_the_example_is_admissible(example: Inventory) -> None:
    schedule = quota_schedule(example)
    assert first_window_refusals(example) == ([], [])
    assert [(b.at, b.refusals, b.unchecked) for b in schedule] == [(b.at, (), ()) for b in schedule]


def test_the_schedule_lists_every_boundary_with_what_changes(example: Inventory) -> None:
    start, end = block_dates(example)
    schedule = {b.at: b for b in quota_schedule(example)}
    assert list(schedule) == capacity_boundaries(example)
    assert [w.pool for w in schedule[start].opens] == ["p5-cb"] and schedule[start].closes == ()
    assert [w.pool for w in schedule[end].closes] == ["p5-cb"] and schedule[end].opens == ()
    changed = {(c.cluster, c.name, c.flavor) for c in schedule[end].changes}
    assert changed == {("eks-us-east-1", "llm-pretrain", "p5-cb"), ("mk-manager", "llm-pretrain", "h100-80gb")}
    # the v6e reservation's one-year term ends: both teams with quota there lose it
    v6e = example.commitment_by_name["gcp-east5-v6e-1y"]
    term_end = dt.datetime.combine(v6e.end, dt.time(), dt.UTC)
    teams = {t.name for t in example.teams if any(q.flavor == "v6e-4x4-resv" for q in t.quotas)}
    assert {c.name for c in schedule[term_end].changes} == teams


def test_qm_render_schedule_prints_the_blocks_start_and_end(example: Inventory) -> None:
    start, end = block_dates(example)
    result = CliRunner().invoke(app, ["render", str(INVENTORY), "--schedule"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    opened = lines.index(next(line for line in lines if line.startswith(f"{start:%Y-%m-%d %H:%M} UTC")))
    closed = lines.index(next(line for line in lines if line.startswith(f"{end:%Y-%m-%d %H:%M} UTC")))
    assert lines[opened + 1] == "  opens  p5-cb (aws-p5-cb-2026q4 starts)"
    assert lines[closed + 1] == "  closes p5-cb (aws-p5-cb-2026q4 ends)"
    assert "    eks-us-east-1: ClusterQueue llm-pretrain p5-cb nvidia.com/gpu: 32/-/- -> 0/0/-" in lines


@pytest.mark.parametrize(
    "args, want",
    [
        # a moment without a time zone could be read in any of them
        (["--at", "2027-01-15T08:00"], "--at '2027-01-15T08:00': not a day or a moment with a time zone"),
        # the schedule covers every cluster and instant
        (["--schedule", "--at", "2027-01-15"], "--schedule lists every boundary of every cluster"),
    ],
)
def test_qm_render_refuses_usage_mistakes_with_exit_2(args: list[str], want: str) -> None:
    result = CliRunner().invoke(app, ["render", str(INVENTORY), *args])
    assert result.exit_code == 2 and want in " ".join(result.output.split())


def test_the_documented_scheduled_workflow_renders_every_cluster_of_the_example(
    example: Inventory, tmp_path: Path
) -> None:
    """docs/how-to/kueue-objects.md shows a scheduled workflow that applies each window's objects: its matrix is the
    example's clusters and its render step writes each cluster's file, the one its apply step reads."""
    guide = (REPO / "docs" / "how-to" / "kueue-objects.md").read_text(encoding="utf-8")
    text = guide.split("**Applying each window at its boundary.**", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    workflow = yaml.safe_load(text)
    assert workflow[True]["schedule"] == [{"cron": "*/15 * * * *"}]  # YAML 1.1 reads the key `on` as True
    job = workflow["jobs"]["apply"]
    clusters = job["strategy"]["matrix"]["cluster"]
    assert clusters == [c.name for c in example.clusters]
    [render] = [s["run"] for s in job["steps"] if "qm render" in s.get("run", "")]
    ahead = "$(date -u -d '+20 minutes' +%Y-%m-%dT%H:%M:%SZ)"
    assert render == f'.venv/bin/qm render inventory --cluster "$CLUSTER" --at "{ahead}" --out rendered/'
    assert '-f "rendered/$CLUSTER.yaml"' in job["steps"][-1]["run"]
    # what GNU date prints there: 20 minutes ahead, UTC, with the zone `--at` needs
    at = subprocess.run(["bash", "-c", f"echo {ahead}"], capture_output=True, text=True, check=True).stdout.strip()
    assert abs(dt.datetime.fromisoformat(at) - dt.datetime.now(dt.UTC) - dt.timedelta(minutes=20)) < dt.timedelta(
        minutes=1
    )
    for cluster in clusters:
        out = tmp_path / "rendered"
        args = ["render", str(INVENTORY), "--cluster", cluster, "--at", at, "--out", str(out)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert (out / f"{cluster}.yaml").is_file()


def test_the_objects_of_every_window_pass_kueues_own_rules(example: Inventory) -> None:
    """A closed pool's quota (nominal 0, borrowing limit 0 only in a cohort, no lending limit) is valid Kueue input in
    every window: schema, CEL and webhook rules."""
    for at in capacity_boundaries(example):
        for cluster in example.clusters:
            issues = validate_manifests(objects_for_cluster(example, cluster.name, at), f"{cluster.name}@{at:%F}")
            assert [i.format() for i in issues if i.severity == "error"] == [], (cluster.name, at)
