"""The `qm` command line: one module per command, each thin (parse, call the library, render, exit code).

Exit codes: 0 ok, 1 problems found, 2 usage error.
"""

from __future__ import annotations

import sys

import typer

from quartermaster.cli import schema, validate
from quartermaster.cli import export, meter, report
from quartermaster.cli import codeowners, diff, quota
from quartermaster.cli import importer, render
from quartermaster.cli import synth
from quartermaster.cli import plan

app = typer.Typer(
    name="qm",
    help="Quartermaster: capacity-as-code for accelerator fleets.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("validate")(validate.command)
app.command("schema")(schema.command)
app.command("meter")(meter.command)
app.command("report")(report.command)
app.add_typer(export.app, name="export")
app.command("diff")(diff.command)
app.add_typer(quota.app, name="quota")
app.command("codeowners")(codeowners.command)
app.command("render")(render.command)
app.add_typer(importer.app, name="import")
app.command("synth")(synth.command)
app.command("plan")(plan.command)

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())
