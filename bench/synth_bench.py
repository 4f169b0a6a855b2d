"""Time `qm synth` (CDKTF -> Terraform JSON) for the generated 1,000-pool inventory of the Pulumi benchmark.

    .venv/bin/python bench/synth_bench.py [--pools 1000]

Same inventory as bench/pulumi_bench.py (four clusters: GKE GPU, GKE TPU with 2 slices per pool, EKS, AKS,
50 teams), so the two programs' figures compare. Prints where the time goes: cdktf import (starts Node.js
through jsii), pure bodies (`stack_spec`: specs + Kueue objects), construct creation (one jsii call per
resource) and `App.synth()` (one jsii callback per resource for its body, then JSON writing in Node.js).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.pulumi_bench import generate
from quartermaster.modules.cloud import cluster_spec
from quartermaster.modules.kueue import objects_for_cluster
from quartermaster.modules.terraform import stack_clusters, stack_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=1000)
    inventory = generate(parser.parse_args().pools)
    clusters = stack_clusters(inventory)
    t0 = time.perf_counter()
    # cdktf's App through the module that silences jsii's Node 20 banner before cdktf starts Node.js
    from quartermaster.modules.terraform.app import App, Backend, ClusterStack

    t1 = time.perf_counter()
    now = dt.datetime.now(dt.UTC)
    specs = [stack_spec(cluster_spec(inventory, c, now), objects_for_cluster(inventory, c, now)) for c in clusters]
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        app = App(outdir=str(Path(tmp) / "cdktf.out"))
        for spec in specs:
            ClusterStack(app, spec, Backend())
        t3 = time.perf_counter()
        app.synth()
        t4 = time.perf_counter()
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*.json"))
    resources = sum(len(s.resources) for s in specs)
    print(
        f"inventory: {len(inventory.pools)} pools, {len(clusters)} clusters -> {resources} Terraform resources, "
        f"{size / 1e6:.1f} MB of JSON"
    )
    for spec in specs:
        print(f"  {spec.cluster:8} {len(spec.resources):5} resources")
    print(f"cdktf import + Node.js start {t1 - t0:6.2f} s")
    print(f"bodies (specs + Kueue)       {t2 - t1:6.2f} s")
    print(f"constructs (jsii create)     {t3 - t2:6.2f} s")
    print(f"App.synth (callbacks, JSON)  {t4 - t3:6.2f} s")
    print(f"total synth                  {t4 - t0:6.2f} s (goal < 60 s)")


if __name__ == "__main__":
    main()
