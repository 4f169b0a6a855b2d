"""The `qm` command line: one module per command, each thin (parse, call the library, render, exit code).

Exit codes (`quartermaster.errors`): 0 ok, 1 problems found, 2 usage error. Commands raise
`QuartermasterError` subclasses for user mistakes; `QmGroup` maps them to their exit code in one place.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

from quartermaster import __version__
from quartermaster.cli import (
    codeowners,
    diff,
    export,
    importer,
    meter,
    observability,
    plan,
    quota,
    render,
    report,
    schema,
    synth,
    usage,
    validate,
)
from quartermaster.cli.common import err_console
from quartermaster.errors import EXIT_USAGE, QuartermasterError
from quartermaster.textsafety import log_line


class QmGroup(TyperGroup):
    """The `qm` group: every command runs through `invoke`, the one place a user error becomes an exit code."""

    def invoke(self, ctx: Any) -> Any:  # click's Context (vendored inside typer since 0.20)
        try:
            return super().invoke(ctx)
        except QuartermasterError as error:
            err_console.print(log_line(str(error)), markup=False)
            raise typer.Exit(error.exit_code) from None
        except OSError as error:  # a path the user gave that the system refuses (permissions, no such folder)
            where = error.filename or "a file"
            err_console.print(
                log_line(f"{where}: {error.strerror or error}; check the path and its permissions."), markup=False
            )
            raise typer.Exit(EXIT_USAGE) from None


app = typer.Typer(
    name="qm",
    cls=QmGroup,
    help="Quartermaster: capacity-as-code for accelerator fleets.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    """`qm --version`: print the installed version and stop."""
    if value:
        typer.echo(f"qm (Quartermaster) {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Quartermaster: capacity-as-code for accelerator fleets."""


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
app.add_typer(usage.app, name="usage")
app.add_typer(observability.app, name="observability")


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())
