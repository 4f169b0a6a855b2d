"""`qm quota set TEAM FLAVOR --nominal N [--borrowing N] [--lending N] [--force]`: edit a quota in place.

Only that quota's values change in the team's YAML file; comments and formatting stay byte for byte
(`quartermaster.edit`). The edited inventory must validate, and a file with uncommitted changes is
refused unless --force.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from quartermaster.cli.command_support import console, print_issue
from quartermaster.errors import ProblemsFound

if TYPE_CHECKING:
    from quartermaster.edit import QuotaChange

app = typer.Typer(
    help="Change team quotas in the inventory YAML, keeping comments and formatting.", no_args_is_help=True
)


@app.command("set")
def command(
    team: str = typer.Argument(..., help="The team, e.g. llm-pretrain."),
    flavor: str = typer.Argument(..., help="The flavor (pool name), e.g. h100-mega-resv."),
    nominal: int = typer.Option(..., "--nominal", min=0, help="Nominal quota in accelerators (GPUs or TPU chips)."),
    borrowing: int = typer.Option(None, "--borrowing", min=0, help="Borrowing limit in accelerators."),
    lending: int = typer.Option(None, "--lending", min=0, help="Lending limit in accelerators."),
    inventory: Path = typer.Option(Path("inventory"), "--inventory", "-i", exists=True, help="The inventory folder."),
    force: bool = typer.Option(False, "--force", help="Edit even if the file has uncommitted changes."),
) -> None:
    """Set one team's quota for one flavor."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.edit import QuotaChange

    write_quotas(inventory, [QuotaChange(team, flavor, nominal, borrowing, lending)], force)


def write_quotas(inventory: Path, changes: list[QuotaChange], force: bool) -> None:
    """Write quota changes into the team files and print each edit; print the problems and raise if refused."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.edit import set_quotas

    result = set_quotas(inventory, changes, force=force)
    for issue in result.issues:
        print_issue(issue)
    if not result.ok:
        raise ProblemsFound("Nothing was changed.")
    for edit in result.edits:
        console.print(edit.format(), markup=False)
    if not any(e.old != e.new for e in result.edits):
        console.print("Already set; nothing to change.")
    else:
        console.print("Review the cost and policy impact with `qm diff HEAD`.")
