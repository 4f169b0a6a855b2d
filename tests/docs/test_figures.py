"""The figures the documentation quotes from the example are the example's output.

A figure in README.md or a page of docs/ is written between two comments that say where it comes from:

    <!-- fig report:cost_band[quarter=2027Q1].p10 musd -->$2.14M<!-- /fig -->

The source is the README's main job on the example (`qm plan inventory/`, then `qm report inventory/ --plan
out/plan`): `report:` reads its report.json (`summary...`, or a table by name: `TABLE[KEY=VALUE,...].COLUMN` picks
the row whose cells match, `TABLE.total.COLUMN` its total row), `plan:` its plan.json (`kpis[quarter=2027Q1]
.cost_usd`). `plan@RUN:` and `report@RUN:` read the same job run with the `qm plan` options of RUNS[RUN] (a what-if
the page describes), each run once and only when a page quotes it. The format is one of FORMATS, the report's own
filters. The test fails, naming the page, the line and both texts, when a figure drifts; `pytest
tests/docs/test_figures.py --update-golden` writes the current figures into the pages (review the diff: the prose
around a figure may need to change with it). A marker never starts a line: Markdown reads such a line as an HTML
block and breaks the paragraph there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.reports.filters import money, number, pct, rate
from tests.paths import DOCS, INVENTORY, REPO

RUNS: dict[str, tuple[str, ...]] = {
    "anywhere": ("--what-if", "placement=anywhere"),
    "demand+20": ("--what-if", "demand=+20%"),
}
"""The what-ifs the pages quote besides the main job, as `qm plan` options."""
FIGURE = re.compile(r"<!-- fig (?P<source>\S+) (?P<format>\w+) -->(?P<text>[^<\n]*)<!-- /fig -->")
STEP = re.compile(r"(?P<name>[A-Za-z0-9_-]+)(?:\[(?P<select>[^\]]+)\])?(?:\.|$)")


def millions(value: Decimal) -> str:
    """`2136402.43` -> `$2.14M`, as the docs round a large sum in prose."""
    return f"{'-' if value < 0 else ''}${abs(value) / 1_000_000:,.2f}M"


FORMATS: dict[str, Callable[[Decimal], str]] = {
    "money": money,
    "musd": millions,
    "pct": pct,
    "rate": rate,
    "int": lambda v: number(v, 0),
}


def lookup(root: Any, path: str) -> Any:
    """The value at `path` (dot-separated steps, each `name` or `name[key=value,...]`) in plain JSON data; a
    table of the report (a mapping with `rows`) is selected among its rows."""
    value = root
    steps = list(STEP.finditer(path))
    assert "".join(s.group(0) for s in steps) == path, f"bad path {path!r}: steps are name or name[key=value,...]"
    for found in steps:
        step = found.group(0)
        value = value[found["name"]]
        if found["select"]:
            rows = value["rows"] if isinstance(value, dict) else value
            wanted = dict(pair.split("=", 1) for pair in found["select"].split(","))
            matches = [r for r in rows if all(str(r[k]) == v for k, v in wanted.items())]
            assert len(matches) == 1, f"{path}: {len(matches)} rows match {step!r}"
            value = matches[0]
    return value


def report_root(report: dict[str, Any]) -> dict[str, Any]:
    """report.json with its tables by name, so that a source reads `cost_band[quarter=2027Q1].p10`."""
    return {**report, **{t["name"]: t for t in report["tables"]}}


def figure(sources: Callable[[str], dict[str, Any]], source: str, form: str) -> str:
    """The figure `source` names (`plan:...`, `report@anywhere:...`) formatted as `form`; `sources(run)` gives a
    run's {"plan": plan.json, "report": report.json}, "" being the main job."""
    where, _, path = source.partition(":")
    kind, _, run = where.partition("@")
    assert kind in ("plan", "report"), f"source {source!r}: starts with plan: or report: (plan@RUN: for a what-if)"
    assert run == "" or run in RUNS, f"source {source!r}: run {run!r} is not one of {sorted(RUNS)}"
    assert form in FORMATS, f"format {form!r}: one of {sorted(FORMATS)}"
    return FORMATS[form](Decimal(str(lookup(sources(run)[kind], path))))


def marked_pages() -> list[str]:
    pages = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
    return [p.relative_to(REPO).as_posix() for p in pages if FIGURE.search(p.read_text(encoding="utf-8"))]


PAGES = marked_pages()


def run_job(out: Path, options: tuple[str, ...]) -> dict[str, Any]:
    """The README's main job (with extra `qm plan` options) into `out`: its plan.json and report.json."""
    runner = CliRunner()
    plan = runner.invoke(app, ["plan", str(INVENTORY), *options, "--out", str(out / "plan")])
    assert plan.exit_code == 0, plan.output
    report = runner.invoke(
        app,
        ["report", str(INVENTORY), "--plan", str(out / "plan"), "--out", str(out / "report"), "--formats", "json"],
    )
    assert report.exit_code == 0, report.output
    return {
        "plan": json.loads((out / "plan" / "plan.json").read_text(encoding="utf-8")),
        "report": report_root(json.loads((out / "report" / "report.json").read_text(encoding="utf-8"))),
    }


@pytest.fixture(scope="module")
def example_output(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, Any]]:
    """A run's output by name ("" the main job, else a key of RUNS), each run once, when first asked for."""
    runs: dict[str, dict[str, Any]] = {}

    def output(run: str) -> dict[str, Any]:
        if run not in runs:
            runs[run] = run_job(tmp_path_factory.mktemp(f"job-{run or 'main'}"), RUNS.get(run, ()))
        return runs[run]

    return output


def test_the_pages_that_quote_the_example_are_marked() -> None:
    """The mechanism finds what it should: a page whose markers broke would silently check nothing."""
    assert {
        "docs/how-to/finance-reports.md",
        "docs/reference/finance-report.md",
        "docs/reference/qm-plan.md",
        "docs/explanation/budget-bridge-capex.md",
        "docs/explanation/placement-and-forecast.md",
    } <= set(PAGES)


def test_a_source_picks_a_row_of_a_table_and_a_format_rounds_as_the_report() -> None:
    report = report_root(
        {
            "summary": {"rows": None, "p90_cost": "4137365.77"},
            "tables": [{"name": "cost_band", "rows": [{"quarter": "2027Q1", "p10": "2136402.43"}], "total": None}],
        }
    )

    def sources(run: str) -> dict[str, Any]:
        return {"report": report, "plan": {}}

    assert figure(sources, "report:cost_band[quarter=2027Q1].p10", "musd") == "$2.14M"
    assert figure(sources, "report:summary.p90_cost", "money") == "$4,137,365.77"
    with pytest.raises(AssertionError, match="0 rows match"):
        figure(sources, "report:cost_band[quarter=2026Q4].p10", "musd")
    with pytest.raises(AssertionError, match="run 'nowhere' is not one of"):
        figure(sources, "report@nowhere:summary.p90_cost", "money")


@pytest.mark.slow  # plans the example (about 20 s)
@pytest.mark.parametrize("page", PAGES)
def test_the_figures_a_page_quotes_are_the_examples_output(
    page: str,
    example_output: Callable[[str], dict[str, Any]],
    golden: Callable[[Path, str], None],
    request: pytest.FixtureRequest,
) -> None:
    path = REPO / page
    text = path.read_text(encoding="utf-8")
    drifted: list[str] = []

    def current(match: re.Match[str]) -> str:
        want = figure(example_output, match["source"], match["format"])
        if want != match["text"]:
            line = text.count("\n", 0, match.start()) + 1
            drifted.append(f"{page}:{line} {match['source']}: the page says {match['text']}, the example gives {want}")
        return match.group(0).replace(f"-->{match['text']}<!--", f"-->{want}<!--", 1)

    starts = [i for i, line in enumerate(text.splitlines(), start=1) if line.lstrip().startswith("<!-- fig ")]
    assert not starts, f"{page}: lines {starts} start with a figure marker; put it after a word on its line"
    updated = FIGURE.sub(current, text)
    if not request.config.getoption("--update-golden"):
        assert not drifted, "\n".join([*drifted, "review, then `pytest tests/docs/test_figures.py --update-golden`"])
    golden(path, updated)
