"""Every citation in the code, the data and the docs points at a page in the repository or at an upstream source.

The project's research notes (the Kueue rules, the IaC and planning references, the design) live outside the
repository, where no user can follow them; their facts were moved into docs/ (docs/reference/kueue-rules.md,
docs/kueue-admission.md, docs/benchmarks.md) or are cited at their upstream source.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.paths import REPO

OUTSIDE = re.compile(
    r"\b(?:RULES|IAC|PLANNING|DESIGN|KUEUE-ADMISSION)\.md\b|\.\./shared/|\bshared/(?:reference|kueue)/"
)
TREES = (
    "quartermaster",
    "planner",
    "modules",
    "reports",
    "stacks",
    "bench",
    "tests",
    "docs",
    "data",
    "inventory",
    ".github",
    ".ci",
)
FILES = ("README.md", "pyproject.toml", "mkdocs.yml", "constraints.txt", "Pulumi.yaml", "cdktf.json")
SUFFIXES = {".py", ".md", ".csv", ".sql", ".j2", ".html", ".yaml", ".yml", ".toml", ".json", ".sh", ".txt", ""}


def sources() -> list[Path]:
    found = [REPO / name for name in FILES]
    for tree in TREES:
        found += [p for p in (REPO / tree).rglob("*") if p.is_file() and p.suffix in SUFFIXES]
    here = Path(__file__).resolve()  # this file names each kind on purpose
    return [p for p in found if p.exists() and "__pycache__" not in p.parts and p.resolve() != here]


def test_nothing_cites_a_document_outside_the_repository() -> None:
    hits = []
    for path in sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in OUTSIDE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            hits.append(f"{path.relative_to(REPO)}:{line}: {match.group(0)}")
    assert hits == [], "cite a page in docs/ or the upstream source instead:\n" + "\n".join(hits)


def test_the_pattern_catches_each_kind_of_outside_citation() -> None:
    for cited in (
        "[RULES.md 42, webhook]",
        "(IAC.md 1.6)",
        "PLANNING.md §3",
        "DESIGN.md",
        "../shared/x",
        "shared/reference/IAC",
        "KUEUE-ADMISSION.md",
    ):
        assert OUTSIDE.search(cited), cited
    assert not OUTSIDE.search("docs/reference/kueue-rules.md, rule 42")


PRODUCT = ("quartermaster", "planner", "modules", "reports", "stacks")
TRACKER = re.compile(r"(?:([\w./-]+) )?\bissues? #?[0-9]+")
"""`issue N`: a reference to this project's tracker, which is not in the repository, unless the word before it names
an upstream repository (`terraform-provider-aws issue 19446`)."""
UPSTREAM = re.compile(r"[\w.]+[-/][\w./-]+")


def test_product_code_cites_no_tracker_issue() -> None:
    hits = []
    for tree in PRODUCT:
        for path in (REPO / tree).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for match in TRACKER.finditer(text):
                if match.group(1) and UPSTREAM.fullmatch(match.group(1)):
                    continue
                line = text.count("\n", 0, match.start()) + 1
                hits.append(f"{path.relative_to(REPO)}:{line}: {match.group(0)}")
    assert hits == [], "say what the code does and why, not which issue asked for it:\n" + "\n".join(hits)


def test_the_tracker_check_tells_a_tracker_reference_from_an_upstream_one() -> None:
    def flagged(text: str) -> bool:
        match = TRACKER.search(text)
        return bool(match) and not (match.group(1) and UPSTREAM.fullmatch(match.group(1)))

    assert flagged("# refused (issue 37: a budget twice)") and flagged("issue 29") and flagged("see issue #12")
    assert not flagged("(terraform-provider-aws issue 19446)") and not flagged("pulumi-aws issue 2473")
