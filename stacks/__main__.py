"""The Pulumi program: one stack per cluster declares that cluster's capacity and Kueue objects.

Stack config (`stacks/Pulumi.<stack>.yaml`):
    quartermaster:inventory   path of the inventory, relative to the repository root (default `inventory`)
    quartermaster:cluster     the inventory cluster this stack declares (default: the stack name)
    quartermaster:kubeconfig  secret: kubeconfig of the cluster, for the Kueue objects
    quartermaster:now         the moment to build the stack for, ISO 8601 with a time zone or a day (its midnight
                              UTC; default: the moment `pulumi up` runs); capacity blocks are dated, so their node
                              groups are sized and scheduled for where the block stands, and the Kueue quotas of
                              dated pools follow their dates
"""

import sys
from dataclasses import asdict
from pathlib import Path

try:
    from quartermaster.errors import MissingExtra, require_extra
except ModuleNotFoundError:
    sys.exit(
        "stacks/__main__.py: Quartermaster is not installed in Pulumi's virtualenv (.venv); from the "
        "repository root run `python3 -m venv .venv && .venv/bin/pip install -e '.[pulumi]'`."
    )
try:
    require_extra(
        "The Pulumi program", "pulumi", "pulumi", "pulumi_kubernetes", "pulumi_gcp", "pulumi_aws", "pulumi_azure_native"
    )
except MissingExtra as missing:  # say which extra to install, not a traceback
    sys.exit(str(missing))

import pulumi

from quartermaster.issues import errors
from quartermaster.loader import load
from quartermaster.modules.cloud import SpecError
from quartermaster.modules.cloud.spec_support import moment
from quartermaster.modules.pulumi import declare_cluster

ROOT = Path(__file__).resolve().parents[1]

config = pulumi.Config("quartermaster")
inventory_path = ROOT / (config.get("inventory") or "inventory")
cluster_name = config.get("cluster") or pulumi.get_stack()

loaded = load(inventory_path)
if not loaded.ok:
    problems = "\n".join(issue.format() for issue in errors(loaded.issues))
    raise pulumi.RunError(
        f"the inventory at {inventory_path} has problems; fix them first (`qm validate {inventory_path}`):\n{problems}"
    )
try:
    capacity = declare_cluster(
        loaded.inventory,
        cluster_name,
        config.get_secret("kubeconfig"),
        moment(config.get("now"), "config quartermaster:now"),
        loaded.sources,
    )
except SpecError as e:
    raise pulumi.RunError(str(e)) from None

pulumi.export("cluster", cluster_name)
pulumi.export("pools", capacity.pool_names)
pulumi.export("manual_quota_requests", [asdict(q) for q in capacity.spec.manual_quota])
