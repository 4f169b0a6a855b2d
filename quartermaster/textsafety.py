"""Text from the inputs made safe for where it goes: one function per sink, used wherever input text reaches it.

Every field of an inventory, every file name, every usage value and every label Prometheus answers is untrusted:
it may be written to look like a spreadsheet formula, carry terminal escape sequences, start
a GitHub workflow command, close a Markdown code fence, run a Prometheus template, break out of a PromQL or SQL
string, or add a line to CODEOWNERS. The sinks and their functions:

| sink | function |
| --- | --- |
| spreadsheet cells (CSV exports) | `spreadsheet_cell` |
| the terminal and CI logs, one line each (located messages; `::cmd::` would run a workflow command) | `log_line` |
| Markdown code blocks | `code_block` |
| PromQL label names (options pasted into queries) | `promql_label_name` |
| SQL string literals | `sql_string` |
| Prometheus alert annotations (Go templates) | `prometheus_template_text` |
| CODEOWNERS paths and owners | `codeowners_path`, `codeowners_owner` |

A value that cannot be written safely at all (a CODEOWNERS path with a line feed, a label name with a quote) is
refused with ValueError; the caller turns it into a located error.
"""

from __future__ import annotations

import re
from typing import TypeVar

from quartermaster.names import OWNER_PATTERN

T = TypeVar("T")

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP "CSV Injection", read 2026-11-23)."""
INVISIBLE = "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
"""Zero-width and bidirectional formatting characters: they reorder or hide text a reviewer reads (Unicode UAX #9;
"Trojan Source", CVE-2021-42574)."""
_LINE_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{INVISIBLE}]")
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_BACKTICKS = re.compile(r"`+")
WORKFLOW_COMMAND_START = ("::", "##[")
"""What makes a GitHub Actions runner read a log line as a workflow command (`::error::`, `::add-mask::`, and the
older `##[error]`), after leading whitespace ("Workflow commands for GitHub Actions", docs.github.com, read
2026-11-25)."""
PROMQL_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
"""Prometheus label names ("Data model", prometheus.io/docs/concepts/data_model, read 2026-11-25)."""
_TEMPLATE_DELIMITER = re.compile(r"\{\{|\}\}")
CODEOWNERS_PATH = re.compile(r"/(?:[A-Za-z0-9_][A-Za-z0-9._-]*/)*[A-Za-z0-9_][A-Za-z0-9._-]*/?")
"""A CODEOWNERS path this tool writes: `/`-separated names of letters, digits, `.`, `_` and `-`. CODEOWNERS
patterns are gitignore patterns where `*`, `?`, `**`, a leading `#` or `!`, a space and `\\` mean something, a line
feed starts a new rule, and escaping is not supported ("About code owners", docs.github.com, read 2026-11-25)."""


def spreadsheet_cell(value: T) -> T | str:
    """A text cell that a spreadsheet would evaluate gets a leading `'` (shown as text); others stay as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _hex(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def log_line(text: str) -> str:
    """One line of a log: every control character shown as `\\xNN` (a line feed in a YAML key or a label value
    cannot start a line of its own), and a line that would start a GitHub workflow command gets its first
    character shown as `\\x3a` or `\\x23` (a file named `::error::x.yaml` in a located message)."""
    line = _LINE_CONTROL.sub(_hex, text)
    stripped = line.lstrip()
    if stripped.startswith(WORKFLOW_COMMAND_START):
        cut = len(line) - len(stripped)
        line = line[:cut] + f"\\x{ord(stripped[0]):02x}" + stripped[1:]
    return line


def visible_text(text: str) -> str:
    """Markdown or text for a reviewer (a PR comment): zero-width and bidi characters shown as `\\uNNNN`."""
    return _INVISIBLE.sub(_hex, text)


def code_block(text: str, info: str = "") -> str:
    """`text` in a Markdown code block whose fence is longer than any run of backticks inside it."""
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}\n"


def promql_label_name(name: str) -> str:
    """`name` when it is a Prometheus label name; ValueError otherwise (a label name cannot be quoted)."""
    if not PROMQL_LABEL_NAME.fullmatch(name):
        raise ValueError(f"`{log_line(name)}` is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)")
    return name


def sql_string(value: str) -> str:
    """An SQL string literal of `value` (quotes doubled; a NUL, which no engine keeps, refused)."""
    if "\x00" in value:
        raise ValueError("an SQL string cannot hold a NUL character")
    return "'" + value.replace("'", "''") + "'"


def prometheus_template_text(value: str) -> str:
    """`value` as literal text inside an alert annotation, which Prometheus expands as a Go template: each `{{` and
    `}}` written as a template that prints it (`{{ "{{" }}`), so nothing of `value` is run or breaks the file
    ("Templating", prometheus.io/docs/prometheus/latest/configuration/template_reference, read 2026-11-25)."""
    return _TEMPLATE_DELIMITER.sub(lambda m: '{{ "' + m.group() + '" }}', value)


def codeowners_path(path: str) -> str:
    """`path` (from the repository root, starting with `/`) when CODEOWNERS reads it as exactly that path;
    ValueError otherwise."""
    if not CODEOWNERS_PATH.fullmatch(path):
        raise ValueError(
            f"`{log_line(path)}` cannot be a CODEOWNERS path: use letters, digits, `.`, `_` and `-` in file and "
            "folder names (CODEOWNERS reads `*`, `?`, `[`, `#`, `!`, spaces and line feeds as pattern syntax)"
        )
    return path


def codeowners_owner(owner: str) -> str:
    """`owner` when it is a GitHub @user, @org/team or e-mail address (`names.OWNER_PATTERN`); ValueError
    otherwise."""
    if not re.fullmatch(OWNER_PATTERN, owner):
        raise ValueError(f"`{log_line(owner)}` is not a CODEOWNERS owner (@user, @org/team or an e-mail)")
    return owner
