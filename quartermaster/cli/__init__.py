"""The `qm` command line: one module per command, each thin (parse, call the library, render, exit code).

`qm COMMAND` lives in `COMMAND_command.py` (`qm import` in `import_command.py`); `command_support.py` holds what
the commands share (the console, loading with printed problems, option parsers).

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
    codeowners_command,
    diff_command,
    export_command,
    import_command,
    meter_command,
    observability_command,
    plan_command,
    quota_command,
    render_command,
    report_command,
    schema_command,
    synth_command,
    usage_command,
    validate_command,
)
from quartermaster.cli.command_support import err_console
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


app.command("validate")(validate_command.command)
app.command("schema")(schema_command.command)
app.command("meter")(meter_command.command)
app.command("report")(report_command.command)
app.add_typer(export_command.app, name="export")
app.command("diff")(diff_command.command)
app.add_typer(quota_command.app, name="quota")
app.command("codeowners")(codeowners_command.command)
app.command("render")(render_command.command)
app.add_typer(import_command.app, name="import")
app.command("synth")(synth_command.command)
app.command("plan")(plan_command.command)
app.add_typer(usage_command.app, name="usage")
app.add_typer(observability_command.app, name="observability")


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())
