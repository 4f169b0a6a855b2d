"""Text from the inventory made safe for the tools reviewers open it in: spreadsheets, terminals, Markdown.

Every field of an inventory is untrusted (issue 17): a cost centre or a project id may be written to look like
a spreadsheet formula, carry terminal escape sequences, or close a Markdown code fence.
"""

from __future__ import annotations

import re
from typing import TypeVar

T = TypeVar("T")

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP "CSV Injection", read 2026-11-23)."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BACKTICKS = re.compile(r"`+")


def spreadsheet_cell(value: T) -> T | str:
    """A text cell that a spreadsheet would evaluate gets a leading `'` (shown as text); others stay as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def terminal_text(text: str) -> str:
    """Control characters (ANSI escapes, DEL, C1) shown as `\\xNN` instead of acting on the terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def code_block(text: str) -> str:
    """`text` in a Markdown code block whose fence is longer than any run of backticks inside it."""
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}\n"
