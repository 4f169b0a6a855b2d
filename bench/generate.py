"""Generate large synthetic inventories for the benchmarks (shared by every bench script)."""

from __future__ import annotations

from pathlib import Path

import yaml

HEADER = "# yaml-language-server: $schema=inventory.schema.json\n"


def enterprise_inventory(root: Path, teams: int = 1000, flavors: int = 20, gpus_per_quota: int = 8) -> Path:
    """An inventory of `teams` teams, each with a quota in each of `flavors` GPU pools (one file per team).

    Pools are spread over four GKE clusters in four regions; each pool is exactly big enough for the quotas.
    """
    root.mkdir(parents=True, exist_ok=True)
    regions = ["us-central1", "us-east4", "us-east5", "europe-west4"]
    nodes = teams * gpus_per_quota // 8
    sites, clusters = [], []
    for r in regions:
        sites.append({"name": f"gcp-{r}", "provider": "gcp", "region": r, "zones": [f"{r}-a", f"{r}-b"]})
        clusters.append({"name": f"gke-{r}", "kind": "gke", "site": f"gcp-{r}", "project": "bench", "pools": []})
    for f in range(flavors):
        cluster = clusters[f % len(clusters)]
        region = regions[f % len(regions)]
        cluster["pools"].append(
            {
                "name": f"h100-{f:02d}",
                "machine": "a3-megagpu-8g",
                "zones": [f"{region}-a"],
                "nodes": nodes,
                "provisioning": "spot" if f % 3 == 0 else "on-demand",
            }
        )
    divisions = [f"div-{d}" for d in range(10)]
    org = {
        "cohorts": [{"name": "org"}] + [{"name": d, "parent": "org"} for d in divisions],
        "priority_classes": [{"name": "training", "value": 100}],
        "team_terms": [  # what finance sets for each team (never in its team file)
            {
                "team": f"team-{t:04d}",
                "cost_center": f"CC-{t % 50:03d}",
                "cohort": divisions[t % len(divisions)],
                "priority_class": "training",
            }
            for t in range(teams)
        ],
    }
    (root / "org.yaml").write_text(HEADER + yaml.safe_dump(org, sort_keys=False))
    (root / "sites.yaml").write_text(HEADER + yaml.safe_dump({"sites": sites}, sort_keys=False))
    (root / "clusters.yaml").write_text(HEADER + yaml.safe_dump({"clusters": clusters}, sort_keys=False))
    team_dir = root / "teams"
    team_dir.mkdir(exist_ok=True)
    for t in range(teams):
        team = {
            "name": f"team-{t:04d}",
            "owners": [f"@org/team-{t:04d}"],
            "namespaces": [f"team-{t:04d}"],
            "groups": {"gke": f"team-{t:04d}@example.com"},
            "quotas": [
                {"flavor": f"h100-{f:02d}", "nominal": gpus_per_quota, "borrowing_limit": gpus_per_quota}
                for f in range(flavors)
            ],
        }
        (team_dir / f"team-{t:04d}.yaml").write_text(HEADER + yaml.safe_dump({"teams": [team]}, sort_keys=False))
    return root
