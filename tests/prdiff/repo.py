"""A throw-away git repository holding a copy of the example inventory, and expected figures derived from it.

repo = QuotaRepo.create(tmp_path)                       # inventory/ committed on `main`
repo.replace("clusters.yaml", "max_nodes: 4}", "max_nodes: 8}", count=1).commit("grow p5-od")
repo.quota("speech", "p5-od", nominal=48)               # edits the working tree like `qm quota set`
result = repo.diff("HEAD", "--format", "json")          # `qm diff` through the CLI
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from typer.testing import CliRunner, Result

from quartermaster.cli import app
from quartermaster.edit import QuotaChange, set_quotas
from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.pricing import HOURS_PER_MONTH
from tests.paths import INVENTORY

EXAMPLE = INVENTORY
GIT = [
    "git",
    "-c",
    "user.name=Quartermaster Tests",
    "-c",
    "user.email=tests@quartermaster.invalid",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "init.defaultBranch=main",
]


@dataclass
class QuotaRepo:
    root: Path

    @property
    def inventory(self) -> Path:
        return self.root / "inventory"

    @classmethod
    def create(cls, where: Path) -> QuotaRepo:
        repo = cls(where / "repo")
        shutil.copytree(EXAMPLE, repo.inventory)
        repo.git("init", "-q")
        return repo.commit("the example inventory")

    def git(self, *args: str) -> str:
        done = subprocess.run([*GIT, *args], cwd=self.root, capture_output=True, text=True, check=True)
        return done.stdout

    def commit(self, message: str) -> QuotaRepo:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self

    def replace(self, file: str, old: str, new: str, count: int = 1) -> QuotaRepo:
        """Edit an inventory file as a person would; `old` must occur exactly `count` times."""
        path = self.inventory / file
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == count, f"{old!r} occurs {text.count(old)} times in {file}"
        path.write_text(text.replace(old, new), encoding="utf-8")
        return self

    def write(self, file: str, text: str) -> QuotaRepo:
        (self.inventory / file).write_text(text, encoding="utf-8")
        return self

    def quota(self, team: str, flavor: str, **values: int) -> QuotaRepo:
        """Set a quota with the comment-preserving editor (forced: the working tree may already be edited)."""
        result = set_quotas(self.inventory, [QuotaChange(team, flavor, **values)], force=True)
        assert result.ok, [i.format() for i in result.issues]
        return self

    def diff(self, *args: str) -> Result:
        return CliRunner().invoke(app, ["diff", *args, "--inventory", str(self.inventory)])

    def load(self) -> Inventory:
        result = load(self.inventory)
        return result.inventory


# --- expected figures, derived from the inventory's own prices and pools -------------------------------


def node_price(inv: Inventory, flavor: str, model: str) -> Decimal:
    """The price-book $/node-hour of a flavor's machine at its site for one pricing model."""
    pool = inv.pool_by_name[flavor]
    site = inv.cluster_of_pool[flavor].site
    return next(
        r.usd_per_node_hour
        for r in inv.prices
        if r.machine == pool.machine and r.site == site and r.pricing_model == model and r.term_months == 0
    )


def per_accelerator_month(inv: Inventory, flavor: str, model: str) -> Decimal:
    """$ per accelerator-month of a flavor under a pricing model: node price x 730 / accelerators per node."""
    machine = inv.machine_by_name[inv.pool_by_name[flavor].machine]
    return node_price(inv, flavor, model) * HOURS_PER_MONTH / machine.accelerators_per_node


def flavor_month(inv: Inventory, flavor: str) -> Decimal:
    """A flavor's monthly cost in the example inventory, whose pools are of three kinds: committed in full
    (a commitment as large as the pool), fixed-size on-demand (paid in full) or autoscaling from zero
    (paid per nominal accelerator)."""
    pool = inv.pool_by_name[flavor]
    machine = inv.machine_by_name[pool.machine]
    if pool.commitment:
        commitment = inv.commitment_by_name[pool.commitment]
        return commitment.count * commitment.usd_per_node_hour * HOURS_PER_MONTH
    nominal = sum(q.nominal for t in inv.teams for q in t.quotas if q.flavor == flavor)
    model = {"spot": "spot", "flex-start": "flex-start"}.get(pool.provisioning, "on-demand")
    if pool.autoscaling is None:
        nodes = (
            pool.nodes
            if pool.tpu is None
            else pool.tpu.slices * pool.tpu.chips_per_slice // machine.accelerators_per_node
        )
        return nodes * node_price(inv, flavor, model) * HOURS_PER_MONTH
    assert pool.autoscaling.min_nodes == 0
    return nominal * per_accelerator_month(inv, flavor, model)


def team_month(inv: Inventory, team: str) -> Decimal:
    """A team's share of its flavors' monthly cost, in proportion to its nominal quota."""
    total = Decimal(0)
    for quota in inv.team_by_name[team].quotas:
        nominal = sum(q.nominal for t in inv.teams for q in t.quotas if q.flavor == quota.flavor)
        total += flavor_month(inv, quota.flavor) * quota.nominal / nominal
    return total
