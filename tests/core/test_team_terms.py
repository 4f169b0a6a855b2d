"""A team's money and sharing fields live in `team_terms`, a file the finance approvers own (issue 37, point 1): the
loader refuses them in a team file under `teams/`, needs an entry for each team there, and copies the entry into
the team, located where it is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from quartermaster.loader import load
from quartermaster.reports.quota_diff.codeowners import owners_by_file
from tests.paths import INVENTORY

SPEECH_TERMS = "  - {team: speech, cost_center: CC-2003, cohort: product, priority_class: training}\n"


def example(tmp_path: Path) -> Path:
    root = tmp_path / "inventory"
    shutil.copytree(INVENTORY, root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def messages(root: Path) -> list[str]:
    return [i.format().split("/inventory/", 1)[-1] for i in load(root).issues if i.severity == "error"]


def test_the_terms_are_copied_into_the_team_and_located_at_their_entry(tmp_path: Path) -> None:
    root = example(tmp_path)
    speech = load(root).inventory.team_by_name["speech"]
    assert (speech.cost_center, speech.cohort, speech.priority_class) == ("CC-2003", "product", "training")
    edit(
        root / "org.yaml",
        "speech, cost_center: CC-2003, cohort: product",
        "speech, cost_center: CC-2003, cohort: prodct",
    )
    want = f"org.yaml:{line_of(root / 'org.yaml', 'team: speech,')} team_terms[6].cohort: no such cohort `prodct`"
    assert any(m.startswith(want) for m in messages(root)), messages(root)


@pytest.mark.parametrize(
    "field", ["cost_center: CC-1001", "cohort: research", "priority_class: research", "fair_sharing_weight: 5"]
)
def test_a_team_file_may_not_set_a_money_or_sharing_field(tmp_path: Path, field: str) -> None:
    root = example(tmp_path)
    edit(root / "teams" / "speech.yaml", "    namespaces: [speech]\n", f"    namespaces: [speech]\n    {field}\n")
    key = field.split(":")[0]
    # one error, at the field, naming where it belongs; no follow-on
    assert messages(root) == [
        f"teams/speech.yaml:7 teams[0].{key}: `{key}` in a team file: who pays for a team and how it shares move "
        "money, and CODEOWNERS gives this file to the team's owners alone. Set it in the team's `team_terms` entry "
        f"(org.yaml, owned by the finance approvers): `- {{team: speech, {key}: ...}}`."
    ]


def test_a_team_without_terms_an_entry_without_a_team_and_an_entry_twice(tmp_path: Path) -> None:
    root = example(tmp_path)
    (root / "teams" / "vision.yaml").write_text(
        'teams:\n  - name: vision\n    owners: ["@v"]\n    namespaces: [vision]\n'
    )
    edit(root / "org.yaml", SPEECH_TERMS, SPEECH_TERMS + SPEECH_TERMS + "  - {team: visoin, cost_center: CC-2003}\n")
    got = messages(root)
    assert any(m.startswith("teams/vision.yaml:2 teams[0].name: team `vision` has no `team_terms` entry") for m in got)
    assert any("team_terms[7].team: `team_terms` for `speech` are given twice" in m for m in got), got
    assert any("`team_terms` for `visoin`: no such team" in m and "Did you mean `vision`?" in m for m in got), got
    assert len(got) == 3, got


def test_a_team_outside_teams_may_carry_its_terms_inline_and_is_finances(tmp_path: Path) -> None:
    root = example(tmp_path)
    speech = (root / "teams" / "speech.yaml").read_text()
    (root / "teams" / "speech.yaml").unlink()
    (root / "speech.yaml").write_text(
        speech.replace("    namespaces: [speech]\n", "    namespaces: [speech]\n    cost_center: CC-2003\n")
    )
    edit(root / "org.yaml", SPEECH_TERMS, "")
    result = load(root)
    assert result.ok, [i.format() for i in result.issues]
    owners = owners_by_file(result, tmp_path)
    assert owners["/inventory/speech.yaml"] == ["@northwind/finops"]
    assert owners["/inventory/teams/inference.yaml"] == ["@northwind/serving-leads"]
    # set inline and in team_terms: one place only
    edit(root / "org.yaml", "team_terms:\n", "team_terms:\n" + SPEECH_TERMS)
    assert any("`cost_center` of team `speech` is set here and in its `team_terms` entry" in m for m in messages(root))


def test_a_folder_named_teams_above_the_inventory_does_not_make_its_files_team_files(tmp_path: Path) -> None:
    root = tmp_path / "teams" / "inventory"
    shutil.copytree(INVENTORY, root)
    result = load(root)
    assert result.ok, [i.format() for i in result.issues]
    assert {Path(f).name for f in result.team_files} == {p.name for p in (INVENTORY / "teams").iterdir()}


def test_a_refused_entry_is_one_error_not_a_missing_entry_too(tmp_path: Path) -> None:
    root = example(tmp_path)
    edit(root / "org.yaml", "speech, cost_center: CC-2003,", "speech, cost_center: 2003,")
    got = messages(root)
    assert len(got) == 1 and "team_terms[6].cost_center" in got[0], got
