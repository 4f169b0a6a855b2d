"""Every regular expression of the product is ASCII-only (issue 37): `\\d`, `\\w`, `\\s` and `\\b` also take other
scripts' digits, letters and spaces, so `2027Q1` in fullwidth digits passed the quarter pattern and `int` read it
as a year the diff did not show. The scan reads every product module's source, so a pattern added later is held to
the same rule: written with `[0-9]`-style classes, or compiled with `re.ASCII` (pydantic patterns take no flags)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from quartermaster.names import Quarter
from tests.paths import REPO

PRODUCT = ("quartermaster", "planner", "modules", "reports")
UNICODE_CLASS = re.compile(r"\\[dDwWsSbB]")
"""A regex escape whose meaning depends on Unicode unless the pattern is compiled with re.ASCII."""


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [s for part in node.values for s in _strings(part)]
    return []


def _has_ascii_flag(call: ast.Call) -> bool:
    flags = [*call.args, *(k.value for k in call.keywords if k.arg == "flags")]
    return any(isinstance(n, ast.Attribute) and n.attr in ("ASCII", "A") for f in flags for n in ast.walk(f))


def unicode_patterns(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal of `source` with a Unicode-dependent escape, outside docstrings and
    outside calls that pass re.ASCII."""
    tree = ast.parse(source)
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _has_ascii_flag(node):
            allowed.update(id(n) for arg in node.args for n in ast.walk(arg))
        if isinstance(node, ast.Expr):  # a docstring or a bare string: no pattern
            allowed.update(id(n) for n in ast.walk(node))
    return [
        (node.lineno, text)
        for node in ast.walk(tree)
        if id(node) not in allowed and isinstance(node, ast.Constant | ast.JoinedStr)
        for text in _strings(node)
        if UNICODE_CLASS.search(text)
    ]


def test_the_scan_finds_a_unicode_pattern() -> None:
    # the scan itself: a `\d` pattern is found, the same one with re.ASCII and a docstring are not
    found = unicode_patterns('"""Doc \\\\d."""\nA = re.compile(r"\\d+")\nB = re.compile(r"\\d+", re.ASCII)\n')
    assert found == [(2, r"\d+")]


def test_every_product_pattern_is_ascii_only() -> None:
    files = [p for folder in PRODUCT for p in sorted((REPO / folder).rglob("*.py"))]
    assert len(files) > 50  # the scan reads the product, not an empty folder
    found = [
        f"{Path(p).relative_to(REPO)}:{line} {text!r}"
        for p in files
        for line, text in unicode_patterns(p.read_text(encoding="utf-8"))
    ]
    assert not found, "Unicode-dependent regex escapes (use [0-9]-style classes or re.ASCII):\n" + "\n".join(found)


@pytest.mark.parametrize("quarter", ["\uff12\uff10\uff12\uff17Q1", "\u0662\u0660\u0662\u0667Q1", "1999Q4", "2101Q1"])
def test_a_quarter_is_ascii_digits_inside_the_calendar(quarter: str) -> None:
    # fullwidth and Arabic-Indic 2027, and the years either side of the calendar (2000-2100)
    with pytest.raises(ValidationError):
        TypeAdapter(Quarter).validate_python(quarter)


def test_a_calendar_quarter_is_read() -> None:
    assert TypeAdapter(Quarter).validate_python("2100Q4") == "2100Q4"
    assert TypeAdapter(Quarter).validate_python("2000Q1") == "2000Q1"
