"""The one hierarchy of user-facing errors and the exit codes they map to.

A mistake in what the user gave (options, files, an inventory that cannot be planned) raises a subclass of
`QuartermasterError`. The CLI catches the base class in one place (`quartermaster.cli.QmGroup`), prints the
message and exits with the error's `exit_code`: never a traceback for a user mistake.
"""

from __future__ import annotations

import importlib.util
from typing import ClassVar

EXIT_PROBLEMS = 1
"""The command ran and found problems in the input (an invalid inventory, a failed policy, no feasible plan)."""
EXIT_USAGE = 2
"""The command was called wrongly (an unknown option value, a missing file or extra); nothing ran."""


class QuartermasterError(Exception):
    """A user mistake: the message says what is wrong and how to fix it."""

    exit_code: ClassVar[int] = EXIT_PROBLEMS


class ProblemsFound(QuartermasterError):
    """The input has problems (already printed, or named in the message); nothing was changed."""

    exit_code = EXIT_PROBLEMS


class UsageError(QuartermasterError):
    """An option, argument or path the command cannot use; the message names the accepted forms."""

    exit_code = EXIT_USAGE


class MissingExtra(UsageError):
    """A command needs an optional part of Quartermaster that is not installed."""

    def __init__(self, what: str, extra: str, missing: str) -> None:
        super().__init__(
            f"{what} needs the `{extra}` extra, which is not installed (`{missing}` is missing). "
            f"Install it with `pip install 'quartermaster[{extra}]'` (from a checkout: `pip install -e '.[{extra}]'`)."
        )


def require_extra(what: str, extra: str, *modules: str) -> None:
    """Raise `MissingExtra` when any of `modules` cannot be imported (checked without importing them)."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(what, extra, module)
