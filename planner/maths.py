"""The planner's maths page (docs/explanation/planner-maths.md), generated from the model itself.

The page is `planner/program.py`'s docstring (sets, parameters, variables, objective, and the prose between them)
with its constraints grouped by the constraint-family registry (`program.FAMILIES`): for each family in build order,
its rows in mathematics and the docstring of the function that adds them. A family with no maths in the docstring,
or maths that names no family, is an error, so the code and the page cannot drift apart; a test compares the page
on disk with this output.

    python -m quartermaster.planner.maths [PATH]    (default: docs/explanation/planner-maths.md)
"""

from __future__ import annotations

import argparse
import inspect
import textwrap
from pathlib import Path

from quartermaster.planner import program

PAGE = Path("docs/explanation/planner-maths.md")
CONSTRAINTS = "Constraints"
NOT_ROWS = "Rules that are not rows"


class MathsDrift(ValueError):
    """The model's docstring and its constraint-family registry disagree."""


def _blocks(doc: str) -> list[tuple[str, str]]:
    """The docstring's blocks as (title, body): a section is a title line followed by indented lines (body
    dedented); a paragraph has no title."""
    out = []
    for block in inspect.cleandoc(doc).split("\n\n"):
        lines = block.splitlines()
        if len(lines) > 1 and not lines[0].startswith(" ") and all(line.startswith(" ") for line in lines[1:]):
            out.append((lines[0], textwrap.dedent("\n".join(lines[1:]))))
        else:
            out.append(("", block))
    return out


def _entries(body: str) -> list[tuple[str, str]]:
    """The Constraints section's entries as (first word, text): an entry starts at an unindented line."""
    entries: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line and not line.startswith(" "):
            entries.append((line.split(":", 1)[0].split()[0].rstrip(","), [line]))
        elif entries:
            entries[-1][1].append(line)
    return [(word, "\n".join(lines)) for word, lines in entries]


def family_of(word: str) -> str | None:
    """The family an entry's first word (`budget_cq`, `supply_cap_jmqsb`) is the rows of: the longest family name
    it is, or starts with followed by its index; None when it names none."""
    names = [f for f in program.FAMILIES if word == f or word.startswith(f + "_")]
    return max(names, key=len) if names else None


def constraint_maths() -> tuple[dict[str, list[str]], list[str]]:
    """Each family's entries of the model docstring's Constraints section, and the entries that are no family's
    rows (variable domains, integrality); MathsDrift when a family has no entry."""
    body = next(text for title, text in _blocks(program.__doc__ or "") if title == CONSTRAINTS)
    by_family: dict[str, list[str]] = {f: [] for f in program.FAMILIES}
    other = []
    for word, text in _entries(body):
        family = family_of(word)
        if family is None:
            other.append(text)
        else:
            by_family[family].append(text)
    missing = [f for f, texts in by_family.items() if not texts]
    if missing:
        raise MathsDrift(
            f"planner/program.py: constraint families {', '.join(missing)} have no maths in the module docstring's "
            f"{CONSTRAINTS} section; write each as `<family>_<index>: <rows>` there"
        )
    return by_family, other


def _code(text: str) -> str:
    return f"```text\n{text.rstrip()}\n```"


def page() -> str:
    """The maths page as Markdown."""
    by_family, other = constraint_maths()
    out = [
        "# The planner's maths",
        "",
        "<!-- Generated from planner/program.py by `python -m quartermaster.planner.maths`; do not edit by hand. -->",
        "",
        "The reservation planner's optimisation problem as `planner/program.py` builds it. Every constraint family "
        "below is one function of the model and one prefix of its rows' names in an LP file (`qm plan --write-lp`); "
        "[How the planner works](planning.md) explains what the plan does with it.",
    ]
    for title, text in _blocks(program.__doc__ or "")[1:]:  # the first paragraph says which step this is
        if title == CONSTRAINTS:
            out += ["", "## Constraint families", "", "In build order, grouped by the function that adds them."]
            for add in dict.fromkeys(program.FAMILIES.values()):
                families = [f for f, a in program.FAMILIES.items() if a is add]
                maths = "\n".join(text for f in families for text in by_family[f])
                names, _, rule = inspect.cleandoc(add.__doc__ or "").partition(": ")
                heading = ", ".join(f"`{f}`" for f in families)
                out += ["", f"### {heading}", "", _code(maths), "", f"Added by `{add.__name__}`: {rule or names}"]
            out += ["", f"## {NOT_ROWS}", "", _code("\n".join(other))]
        elif title:
            out += ["", f"## {title}", "", _code(text)]
        else:
            out += ["", text]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the maths page (default docs/explanation/planner-maths.md, from the repository root), or a path given."""
    parser = argparse.ArgumentParser(prog="python -m quartermaster.planner.maths", description=main.__doc__)
    parser.add_argument("target", nargs="?", type=Path, default=PAGE, help=f"default {PAGE}")
    target = parser.parse_args(argv).target
    target.write_text(page())
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
