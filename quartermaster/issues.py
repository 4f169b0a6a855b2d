"""Problems found in an inventory, and the one format they are printed in.

<file>:<line> <yaml.path>: <what is wrong> (got <value>). <how to fix>
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]
# A logical reference into the inventory: ("teams", "llm-pretrain", "quotas", 0, "flavor").
Ref = tuple[str | int, ...]

_MISSING = object()


@dataclass(frozen=True)
class Location:
    """Where in the user's files a problem is."""

    file: str
    line: int | None
    path: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line if self.line is not None else '?'} {self.path}".rstrip()


@dataclass(frozen=True)
class Issue:
    """One problem: which rule, how bad, what is wrong, the value seen and how to fix it."""

    rule: str
    message: str
    fix: str
    severity: Severity = "error"
    got: object = _MISSING
    ref: Ref = ()
    location: Location | None = None
    # Objects the problem is about, as (section, name); used to drop follow-on errors about
    # objects that already failed to load.
    about: tuple[tuple[str, str], ...] = field(default=())
    # A duplicate's first occurrence (a reference the loader locates and names in the message).
    first: Ref = ()

    def format(self) -> str:
        where = f"{self.location}: " if self.location else ""
        level = "warning: " if self.severity == "warning" else ""
        got = f" (got {_show(self.got)})" if self.got is not _MISSING else ""
        fix = f" {self.fix}" if self.fix else ""
        return f"{where}{level}{self.message}{got}.{fix}"


def _show(value: object) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def format_path(path: tuple[str | int, ...]) -> str:
    """`("teams", 3, "quotas", 1)` -> `teams[3].quotas[1]`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """`Did you mean `x`?` for the closest of `options`, or the empty string when none is close."""
    close = difflib.get_close_matches(word, list(options), n=1)
    return f"Did you mean `{close[0]}`?" if close else ""


def errors(issues: list[Issue]) -> list[Issue]:
    """The issues that make an inventory invalid."""
    return [i for i in issues if i.severity == "error"]
