"""Hostile and careless input (issue 17): each reproduction from the issue, refused with a located error or
handled correctly, never a crash."""

from __future__ import annotations

import csv
import datetime as dt
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster import edit
from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.model import Commitment
from quartermaster.reports.quota_diff import render_invalid
from quartermaster.textsafety import spreadsheet_cell
from quartermaster.units import add_months
from tests.builders import make_inventory
from tests.paths import INVENTORY
from tests.prdiff.repo import QuotaRepo

runner = CliRunner()


@pytest.mark.parametrize("start, months, want", [
    # a leap day plus 36 months: 2027 has no February 29th, so the term ends on the 28th
    (dt.date(2024, 2, 29), 36, dt.date(2027, 2, 28)),
    # the 31st plus one month: February's last day
    (dt.date(2026, 1, 31), 1, dt.date(2026, 2, 28)),
    # an ordinary day keeps its day of the month
    (dt.date(2026, 7, 1), 12, dt.date(2027, 7, 1)),
])
def test_month_arithmetic_clamps_to_the_months_end(start: dt.date, months: int, want: dt.date) -> None:
    assert add_months(start, months) == want
    commitment = Commitment(name="c", kind="cud", machine="m", site="s", count=1, term_months=months, start=start,
                            usd_per_node_hour="1")
    assert commitment.end == want


HEADER = "hour,cluster,team,flavor,accelerators_used,accelerators_requested\n"
PRICES_HEADER = (INVENTORY / "prices.csv").read_text().splitlines()[0] + "\n"


def test_a_leap_day_commitment_is_metered_and_exported_without_a_crash(tmp_path: Path) -> None:
    root = make_inventory().add(
        "commitments", name="leap", kind="cud", machine="a3-megagpu-8g", site="gcp-us-central1", count=2,
        term_months=36, start="2024-02-29", usd_per_node_hour="40").edit_pool(
        "h100", provisioning="reservation", commitment="leap").write(tmp_path / "inv")
    (root / "prices.csv").write_text(PRICES_HEADER + "a3-megagpu-8g,gcp-us-central1,on-demand,0,88,test,\n")
    (root / "usage.csv").write_text(HEADER + "2027-02-28T23:00:00,gke-a,ml,h100,1,1\n")
    meter = runner.invoke(app, ["meter", str(root / "usage.csv"), "--inventory", str(root)])
    assert meter.exit_code == 0, meter.output
    focus = runner.invoke(app, ["export", "focus", str(root), "--out", str(tmp_path / "focus.csv")])
    assert focus.exit_code == 0, focus.output


@pytest.mark.parametrize("field, value, want", [
    # year 9999 overflows every term and period computed from it
    ("start", "9999-01-01", "commitments[0].start"),
    ("start", "1900-01-01", "commitments[0].start"),
])
def test_absurd_years_are_refused_at_load(tmp_path: Path, field: str, value: str, want: str) -> None:
    root = make_inventory().add("commitments", name="c", kind="cud", machine="a3-megagpu-8g", site="gcp-us-central1",
                                count=1, term_months=12, usd_per_node_hour="40", **{field: value}).write(tmp_path)
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
        i.format() for i in result.issues]


def test_a_csv_usage_file_with_one_offset_row_meters_every_row(tmp_path: Path) -> None:
    root = make_inventory().write(tmp_path / "inv")
    usage = tmp_path / "usage.csv"
    usage.write_text(HEADER + "2026-10-01T00:00:00,gke-a,ml,h100,1,1\n"
                     "2026-10-01T06:00:00+05:00,gke-a,ml,h100,1,1\n"
                     "1900-10-01T00:00:00,gke-a,ml,h100,1,1\n")
    result = runner.invoke(app, ["meter", str(usage), "--inventory", str(root)])
    assert result.exit_code == 1
    assert "usage.csv:4" in result.output and "is outside 2000-2100" in result.output
    assert "usage.csv:2" not in result.output and "usage.csv:3" not in result.output


@pytest.mark.parametrize("owner", [
    "@e\n* @attacker",  # a newline would write a CODEOWNERS line owning every file
    "@e <!--",  # would hide the rest of the PR comment
    "attacker",  # neither a handle nor an e-mail
])
def test_owners_must_be_github_handles_teams_or_emails(tmp_path: Path, owner: str) -> None:
    root = make_inventory().edit("teams", "ml", owners=[owner]).write(tmp_path)
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 1 and "teams[0].owners[0]" in result.output
    codeowners = runner.invoke(app, ["codeowners", str(root), "--output", str(tmp_path / "CODEOWNERS")])
    assert codeowners.exit_code == 1 and not (tmp_path / "CODEOWNERS").exists()


ALIAS_BOMB = "\n".join(  # 7 lines: 9**7 = 4.8 million values when expanded
    ["a: &a [" + ",".join(['"lol"'] * 9) + "]"]
    + [f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]" for p, c in zip("abcdef", "bcdefg", strict=True)]) + "\n"


@pytest.mark.parametrize("name, text, want", [
    ("bomb.yaml", ALIAS_BOMB, "expand to more values than the file could hold"),
    ("deep.yaml", "x: " + "[" * 1000 + "]" * 1000 + "\n", "nested deeper than 64 levels"),  # RecursionError before
    ("deeper.yaml", "x: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than 64 levels"),  # segfault before
    ("indented.yaml", "".join(f"{'  ' * i}k{i}:\n" for i in range(200)) + "  " * 200 + "v: 1\n",
     "nested deeper than 64 levels"),
])
def test_small_files_cannot_exhaust_the_loader_or_the_kueue_importer(tmp_path: Path, name: str, text: str,
                                                                      want: str) -> None:
    (tmp_path / name).write_text(text)
    validate = runner.invoke(app, ["validate", str(tmp_path)])
    assert validate.exit_code == 1 and want in validate.output and f"{name}:" in validate.output
    imported = runner.invoke(app, ["import", "kueue", str(tmp_path / name)])
    assert imported.exit_code == 1 and want in imported.output


def test_a_link_out_of_the_inventory_is_refused_and_never_read(tmp_path: Path) -> None:
    """Issue 17: `teams/evil.yaml -> /etc/passwd` was followed and passwd's first line reached the error (and the
    PR comment). A linked folder that loops back is not followed either."""
    secret = tmp_path / "secret.yaml"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    root = make_inventory().write(tmp_path / "inv")
    (root / "evil.yaml").symlink_to(secret)
    (root / "loop").mkdir()
    (root / "loop" / "again").symlink_to(root / "loop", target_is_directory=True)
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 1
    assert "evil.yaml:?: a link to a file outside the inventory; it is not read" in result.output
    assert "root:x" not in result.output


def test_qm_diff_of_a_revision_with_an_absolute_link_says_so_instead_of_crashing(tmp_path: Path) -> None:
    repo = QuotaRepo.create(tmp_path)
    (repo.inventory / "teams" / "evil.yaml").symlink_to("/etc/passwd")
    repo.commit("a hostile link")
    (repo.inventory / "teams" / "evil.yaml").unlink()
    result = runner.invoke(app, ["diff", "HEAD", "--inventory", str(repo.inventory), "--format", "text"])
    assert result.exit_code == 1, result.output
    assert "HEAD:inventory/teams/evil.yaml" in result.output and "a link that leaves the inventory" in result.output
    assert "Traceback" not in result.output and "root:x" not in result.output


@pytest.mark.parametrize("value, want", [
    ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
    ("@SUM(A1:A9)", "'@SUM(A1:A9)"), ("+1", "'+1"), ("-cmd", "'-cmd"), ("gcp-project", "gcp-project"),
])
def test_formula_looking_text_is_neutralised_in_every_spreadsheet_cell(value: str, want: str) -> None:
    assert spreadsheet_cell(value) == want
    assert spreadsheet_cell(Decimal("-20.00")) == Decimal("-20.00")  # numbers stay numbers


def test_the_focus_export_neutralises_a_formula_in_an_inventory_field(tmp_path: Path) -> None:
    root = make_inventory().edit("clusters", "gke-a", project='=HYPERLINK("http://evil.example","x")').write(
        tmp_path / "inv")
    (root / "prices.csv").write_text(PRICES_HEADER + "a3-megagpu-8g,gcp-us-central1,on-demand,0,88,test,\n")
    (root / "usage.csv").write_text(HEADER + "2026-10-01T00:00:00,gke-a,ml,h100,1,1\n")
    out = tmp_path / "focus.csv"
    result = runner.invoke(app, ["export", "focus", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    cells = [c for row in csv.reader(out.read_text().splitlines()) for c in row]
    assert '\'=HYPERLINK("http://evil.example","x")' in cells
    assert not any(c.startswith("=") for c in cells)


def test_control_characters_and_emoji_codes_from_yaml_are_shown_not_obeyed(tmp_path: Path) -> None:
    root = make_inventory().write(tmp_path)
    (root / "extra.yaml").write_text('"\\e[2Jwipe": 1\n"research:x:": 2\n')
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\\x1b[2Jwipe" in result.output
    assert "research:x:" in result.output  # not an emoji


def test_a_problem_holding_a_code_fence_stays_inside_the_pr_comments_block() -> None:
    comment = render_invalid("markdown", ["teams.yaml:1 ```\n# Approved by finance\n```: unknown section"])
    assert "````\n" in comment and comment.rstrip().endswith("````")


def test_concurrent_quota_edits_of_one_file_both_land(tmp_path: Path) -> None:
    """Issue 17: two `qm quota set` runs on the same team file lost one edit in 15 of 20 races. The edits are
    serialised by a lock on the inventory folder: after each race both values are in the file."""
    shutil.copytree(INVENTORY, tmp_path / "inv")
    team_file = tmp_path / "inv" / "teams" / "llm-pretrain.yaml"
    qm = [sys.executable, "-c", "from quartermaster.cli import main; main()", "quota", "set", "llm-pretrain"]
    for race in range(3):
        runs = [subprocess.Popen([*qm, flavor, "--nominal", str(nominal + race), "--inventory",
                                  str(tmp_path / "inv"), "--force"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for flavor, nominal in (("h100-mega-resv", 40), ("h100-flex", 20))]
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


@pytest.mark.parametrize("args, want", [
    # the FOCUS export onto the usage file it reads
    (["export", "focus", "{inv}", "--period", "2026-10", "--out", "{inv}/usage.csv"], "inside the inventory"),
    # qm plan checks its output before solving: a file where its folder goes
    (["plan", "{inv}", "--out", "{tmp}/afile"], "is a file; give a folder path"),
    (["report", "{inv}", "--out", "{inv}/report"], "inside the inventory"),
    (["render", "{inv}", "--out", "{inv}"], "inside the inventory"),
    # a folder that cannot be created
    (["export", "focus", "{inv}", "--period", "2026-10", "--out", "{tmp}/afile/x.csv"], "cannot be created"),
])
def test_outputs_never_overwrite_inputs_or_fail_with_a_traceback(tmp_path: Path, args: list[str],
                                                                   want: str) -> None:
    shutil.copytree(INVENTORY, tmp_path / "inv")
    (tmp_path / "afile").write_text("x")
    before = {p: p.read_bytes() for p in (tmp_path / "inv").rglob("*") if p.is_file()}
    result = runner.invoke(app, [a.format(inv=tmp_path / "inv", tmp=tmp_path) for a in args])
    assert result.exit_code == 2 and want in result.output, result.output
    assert {p: p.read_bytes() for p in (tmp_path / "inv").rglob("*") if p.is_file()} == before


def test_render_removes_what_it_wrote_for_clusters_that_are_gone_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert runner.invoke(app, ["render", str(INVENTORY), "--out", str(out)]).exit_code == 0
    gone = out / "gke-old.yaml"
    gone.write_text((out / "aks-eastus.yaml").read_text().replace("# cluster: aks-eastus", "# cluster: gke-old", 1))
    mine = out / "notes.yaml"
    mine.write_text("# cluster: gke-old\nmine: true\n")  # not written by qm render: kept
    result = runner.invoke(app, ["render", str(INVENTORY), "--out", str(out)])
    assert result.exit_code == 0 and f"removed {gone}" in result.output
    assert not gone.exists() and mine.exists() and (out / "aks-eastus.yaml").exists()


@pytest.mark.parametrize("name, content, want", [
    ("vault.yaml", b"teams:\n  - !vault secret\n", "vault.yaml:2 teams[0]: unknown YAML tag `!vault`"),
    ("prices2.csv", (PRICES_HEADER + "a3-megagpu-8g,gcp-us-central1,on-demand,0,1," + "x" * 200_000 + ",\n").encode(),
     "prices2.csv:2 row 2: unreadable CSV (field larger than field limit"),
    ("demand9.csv", (",".join(f"c{i}" for i in range(100_000)) + "\n").encode(),
     "demand9.csv:1 header: the header has 100000 columns; a demand file has 8"),
    ("u16.yaml", "teams:\n  - name: x\n".encode("utf-16"), "u16.yaml:1: file is UTF-16 text. Save it as UTF-8."),
    ("yes.yaml", b"teams:\n  - name: ops\n    cost_center: CC-1\n    owners: ['@o']\n    namespaces: [ops]\n"
                 b"    quotas: [{flavor: h100, nominal: yes}]\n",
     "yes.yaml:6 teams[0].quotas[0].nominal: a number is needed, not yes/no or true/false"),
])
def test_user_mistakes_are_one_located_message_not_a_traceback(tmp_path: Path, name: str, content: bytes,
                                                                 want: str) -> None:
    root = make_inventory().write(tmp_path)
    (root / name).write_bytes(content)
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 1 and want in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.count("\n") < 10  # one message (and the summary), not one per column


def test_a_missing_team_is_one_error_per_section_not_one_per_row(tmp_path: Path) -> None:
    """Issue 17: a broken team file gave about 3,000 follow-on "no such team" errors, one per usage hour."""
    shutil.copytree(INVENTORY, tmp_path / "inv")
    (tmp_path / "inv" / "teams" / "llm-pretrain.yaml").write_text("teams: [\n")  # malformed: the team is gone
    rows = sum(1 for line in (INVENTORY / "usage.csv").read_text().splitlines() if ",llm-pretrain," in line)
    result = runner.invoke(app, ["validate", str(tmp_path / "inv")])
    assert result.exit_code == 1
    usage = [line for line in result.output.splitlines() if "no such team `llm-pretrain`" in line and "usage" in line]
    assert len(usage) == 1 and f"(and {rows - 1} more usage rows)" in usage[0]
    assert result.output.count("\n") < 40


def test_pattern_errors_say_what_the_value_should_be(tmp_path: Path) -> None:
    """Issue 17: a bad quarter was offered a lower-cased DNS name (`2027q5`), and a Cyrillic look-alike came back
    as its own suggestion."""
    root = make_inventory().team("ml-t\u0435am").write(tmp_path)  # U+0435, a Cyrillic small ie
    (root / "demand.csv").write_text("period,team,accelerator,p50\n2027Q5,ml,H100-80GB,1\n")
    result = runner.invoke(app, ["validate", str(root)])
    assert "`period` is not a quarter (got '2027Q5'). Write a year and Q1 to Q4, e.g. `2027Q1`." in result.output
    assert "2027q5" not in result.output
    assert "contains characters outside ASCII (`\u0435` (CYRILLIC SMALL LETTER IE))" in result.output
    assert "such as `ml-t\u0435am`" not in result.output


def test_editing_a_linked_team_file_edits_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    """Issue 17: a symlinked team file was replaced by a regular file instead of editing its target (here a file in
    a hidden folder of the inventory, which the loader reads only through the link)."""
    root = make_inventory().write(tmp_path / "inv")
    (root / ".files").mkdir()
    target = (root / "teams.yaml").rename(root / ".files" / "teams.yaml")
    (root / "teams.yaml").symlink_to(target)
    result = edit.set_quotas(root, [edit.QuotaChange("ml", "h100", nominal=4)], force=True)
    assert result.ok, [i.format() for i in result.issues]
    assert (root / "teams.yaml").is_symlink() and "nominal: 4" in target.read_text()
