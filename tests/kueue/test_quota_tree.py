"""One quota tree (issue 36, point 1): the quota-diff replay reads the tree the offline admission check reads, built
from the rendered ClusterQueues and Cohorts (`modules/kueue/quota_tree.py`), and its water-filling arrives at what
Kueue's resource nodes say a queue can hold."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from bench.generate import enterprise_inventory
from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.modules.kueue import objects_for_cluster
from quartermaster.modules.kueue.admission import _Objects
from quartermaster.reports.quota_diff.impact import admit, flavor_trees, replay_instant
from tests.builders import BEFORE_THE_BLOCK
from tests.paths import INVENTORY

ALONE = 10_000.0
"""A demand no quota holds: a team asking it alone is admitted exactly what its queue can hold."""


def varied_organisation(root: Path) -> Inventory:
    """bench/generate.py's organisation (12 teams in 10 divisions of one org, 4 flavors, 8 GPUs each with a borrowing
    limit of 8), varied so that every rule of the tree counts: every third team lends at most 2 GPUs, division
    div-1 holds 16 GPUs of h100-01 itself and lends at most 4 of them, and div-2 may borrow at most 3."""
    folder = enterprise_inventory(root, teams=12, flavors=4)
    for i, path in enumerate(sorted((folder / "teams").glob("*.yaml"))):
        if i % 3 == 0:
            doc = yaml.safe_load(path.read_text())
            for quota in doc["teams"][0]["quotas"]:
                quota["lending_limit"] = 2
            path.write_text(yaml.safe_dump(doc, sort_keys=False))
    org = yaml.safe_load((folder / "org.yaml").read_text())
    for c in org["cohorts"]:
        if c["name"] == "div-1":
            c["quotas"] = [{"flavor": "h100-01", "nominal": 16, "lending_limit": 4}]
        if c["name"] == "div-2":
            c["quotas"] = [{"flavor": f"h100-{f:02d}", "nominal": 0, "borrowing_limit": 3} for f in range(4)]
    (folder / "org.yaml").write_text(yaml.safe_dump(org, sort_keys=False))
    return load(folder).inventory


def assert_one_tree(inventory: Inventory, at: dt.datetime) -> int:
    """For every team and flavor, the replay admits a team asking alone what the admission check says its queue can
    hold (`potentialAvailable`); returns how many pairs were compared."""
    compared = 0
    for cluster in inventory.clusters:
        if cluster.multikueue_role == "manager":
            continue
        check = _Objects(objects_for_cluster(inventory, cluster.name, at)).quota
        flavors = [p.name for p in cluster.pools]
        trees = flavor_trees(inventory, flavors, at)
        for pool in cluster.pools:
            resource = inventory.machine_by_name[pool.machine].resource_name
            for node in trees[pool.name]:
                if not node.is_team:
                    continue
                team = node.name.removeprefix("team:")
                got = admit(trees[pool.name], {node.name: ALONE})[node.name]
                assert got == pytest.approx(float(check.available(team, pool.name, resource))), (team, pool.name)
                compared += 1
    return compared


def test_the_replay_and_the_admission_check_read_one_tree_on_the_example() -> None:
    # 2026-10-31 23:00, the example's last metered hour: every pool is open (the capacity block too)
    example = load(INVENTORY).inventory
    at = replay_instant([(max(u.hour for u in example.usage), "", "", 0.0)])
    assert at is not None
    assert assert_one_tree(example, at) >= 10
    assert assert_one_tree(example, BEFORE_THE_BLOCK) >= 10  # p5-cb closed: the tree holds 0 there


def test_the_replay_and_the_admission_check_read_one_tree_on_a_generated_organisation(tmp_path: Path) -> None:
    inventory = varied_organisation(tmp_path / "inv")
    at = dt.datetime(2026, 11, 15, tzinfo=dt.UTC)
    # 12 teams x 4 flavors
    assert assert_one_tree(inventory, at) == 12 * 4
    # a person checks one: team-0001 (div-1, 8 GPUs, may borrow 8) in h100-01, where div-1 holds 16 and lends 4 up:
    # alone it holds 8 + min(8, what its tree lends) = 16
    check = _Objects(objects_for_cluster(inventory, inventory.cluster_of_pool["h100-01"].name, at)).quota
    assert check.available("team-0001", "h100-01", "nvidia.com/gpu") == 16
