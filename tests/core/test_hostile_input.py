"""Hostile and careless input (issue 17), below the CLI: month arithmetic, load-time calendar limits, spreadsheet
cells, and quota-edit races. The command-level reproductions are the corpus in `tests/hostile/`."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from quartermaster import edit
from quartermaster.loader import load
from quartermaster.model import Commitment
from quartermaster.textsafety import spreadsheet_cell
from quartermaster.units import add_months
from tests.builders import make_inventory
from tests.paths import INVENTORY


@pytest.mark.parametrize(
    "start, months, want",
    [
        # a leap day plus 36 months: 2027 has no February 29th, so the term ends on the 28th
        (dt.date(2024, 2, 29), 36, dt.date(2027, 2, 28)),
        # the 31st plus one month: February's last day
        (dt.date(2026, 1, 31), 1, dt.date(2026, 2, 28)),
        # an ordinary day keeps its day of the month
        (dt.date(2026, 7, 1), 12, dt.date(2027, 7, 1)),
    ],
)
def test_month_arithmetic_clamps_to_the_months_end(start: dt.date, months: int, want: dt.date) -> None:
    assert add_months(start, months) == want
    commitment = Commitment(
        name="c", kind="cud", machine="m", site="s", count=1, term_months=months, start=start, usd_per_node_hour="1"
    )
    assert commitment.end == want


HEADER = "hour,cluster,team,flavor,accelerators_used,accelerators_requested\n"
PRICES_HEADER = (INVENTORY / "prices.csv").read_text().splitlines()[0] + "\n"


@pytest.mark.parametrize(
    "field, value, want",
    [
        # year 9999 overflows every term and period computed from it
        ("start", "9999-01-01", "commitments[0].start"),
        ("start", "1900-01-01", "commitments[0].start"),
    ],
)
def test_absurd_years_are_refused_at_load(tmp_path: Path, field: str, value: str, want: str) -> None:
    root = (
        make_inventory()
        .add(
            "commitments",
            name="c",
            kind="cud",
            machine="a3-megagpu-8g",
            site="gcp-us-central1",
            count=1,
            term_months=12,
            usd_per_node_hour="40",
            **{field: value},
        )
        .write(tmp_path)
    )
    result = load(root)
    assert not result.ok
    assert any(want in i.format() for i in result.issues), [i.format() for i in result.issues]


def test_usage_hours_are_utc_and_within_the_calendar(tmp_path: Path) -> None:
    """A `+05:00` row is the same hour in UTC; a row dated 1900 is refused, located, instead of billing 126 years
    of idle capacity."""
    good = make_inventory().write(tmp_path / "a")
    (good / "usage.csv").write_text(HEADER + "2026-10-01T10:00:00+05:00,gke-a,ml,h100,1,1\n")
    assert load(good).inventory.usage[0].hour == dt.datetime(2026, 10, 1, 5)
    bad = make_inventory().write(tmp_path / "b")
    (bad / "usage.csv").write_text(HEADER + "1900-10-01T00:00:00,gke-a,ml,h100,1,1\n")
    result = load(bad)
    assert not result.ok
    assert any(i.format().startswith(f"{bad / 'usage.csv'}:2") for i in result.issues), [
        i.format() for i in result.issues
    ]


@pytest.mark.parametrize(
    "value, want",
    [
        ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("+1", "'+1"),
        ("-cmd", "'-cmd"),
        ("gcp-project", "gcp-project"),
    ],
)
def test_formula_looking_text_is_neutralised_in_every_spreadsheet_cell(value: str, want: str) -> None:
    assert spreadsheet_cell(value) == want
    assert spreadsheet_cell(Decimal("-20.00")) == Decimal("-20.00")  # numbers stay numbers


@pytest.mark.slow  # six qm processes
def test_concurrent_quota_edits_of_one_file_both_land(tmp_path: Path) -> None:
    """Issue 17: two `qm quota set` runs on the same team file lost one edit in 15 of 20 races. The edits are
    serialised by a lock on the inventory folder: after each race both values are in the file."""
    shutil.copytree(INVENTORY, tmp_path / "inv")
    team_file = tmp_path / "inv" / "teams" / "llm-pretrain.yaml"
    qm = [sys.executable, "-c", "from quartermaster.cli import main; main()", "quota", "set", "llm-pretrain"]
    for race in range(3):
        runs = [
            subprocess.Popen(
                [*qm, flavor, "--nominal", str(nominal + race), "--inventory", str(tmp_path / "inv"), "--force"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for flavor, nominal in (("h100-mega-resv", 40), ("h100-flex", 20))
        ]
        for run in runs:
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err.decode()
        quotas = {q.flavor: q.nominal for q in load(tmp_path / "inv").inventory.team_by_name["llm-pretrain"].quotas}
        assert (quotas["h100-mega-resv"], quotas["h100-flex"]) == (40 + race, 20 + race)
    assert not [p.name for p in team_file.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_file_changed_during_the_edit_is_not_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone saves the team file while the edit validates: nothing is written and the loser is told."""
    root = make_inventory().write(tmp_path)
    teams = root / "teams.yaml"
    validate = edit._validate_edited

    def meanwhile(*args: object) -> list[object]:
        teams.write_text(teams.read_text() + "# saved by someone else\n")
        return validate(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(edit, "_validate_edited", meanwhile)
    result = edit.set_quotas(root, [edit.QuotaChange("ml", "h100", nominal=4)], force=True)
    assert [i.message for i in result.issues] == ["the file changed while the edit was being made"]
    assert teams.read_text().endswith("# saved by someone else\n") and result.written == []
