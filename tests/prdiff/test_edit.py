"""Comment-preserving quota edits: only the quota's line changes, byte for byte; dirty files and edits that
would break the inventory are refused; writes are atomic."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.edit import QuotaChange, set_quotas
from quartermaster.loader import display_path
from tests.prdiff.repo import EXAMPLE, QuotaRepo

COMMENTED = """\
# yaml-language-server: $schema=../inventory.schema.json
# Vision team. Quotas are reviewed monthly by @northwind/finops.
teams:
  - name: vision          # the team's name is its ClusterQueue's name
    group: vision@northwind.ai
    owners: ["@northwind/vision-leads"]
    namespaces: [vision]
    sites: []
    quotas:
      # spaced flow mapping, trailing comment
      - { flavor: h100-mega-spot, nominal: 8 }     # spot for sweeps
      - {flavor: p5-od, nominal: 4, lending_limit: 2}
      - flavor: ndh100    # block style
        nominal: 0
        borrowing_limit: 4  # may borrow from speech

        # comment after a blank line
"""


def team_dir(tmp_path: Path, text: str = COMMENTED, newline: str = "\n") -> Path:
    """The example inventory, over-subscription allowed, plus a commented `teams/vision.yaml`."""
    root = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, root)
    org = root / "org.yaml"
    text_of_org = org.read_text().replace("allow_oversubscription: false", "allow_oversubscription: true")
    org.write_text(
        text_of_org.replace("team_terms:\n", "team_terms:\n  - {team: vision, cost_center: CC-2004, cohort: product}\n")
    )
    (root / "teams" / "vision.yaml").write_bytes(text.replace("\n", newline).encode())
    return root


def changed_lines(before: bytes, after: bytes) -> list[tuple[int, bytes, bytes]]:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new), "lines were added or removed"
    return [(i + 1, a, b) for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]


@pytest.mark.parametrize(
    "change, want_line, want_old, want_new",
    [
        # a spaced flow mapping keeps its spaces and its trailing comment's column
        (
            QuotaChange("vision", "h100-mega-spot", nominal=16),
            11,
            b"      - { flavor: h100-mega-spot, nominal: 8 }     # spot for sweeps\n",
            b"      - { flavor: h100-mega-spot, nominal: 16 }     # spot for sweeps\n",
        ),
        # a compact flow mapping, a value in the middle
        (
            QuotaChange("vision", "p5-od", nominal=8),
            12,
            b"      - {flavor: p5-od, nominal: 4, lending_limit: 2}\n",
            b"      - {flavor: p5-od, nominal: 8, lending_limit: 2}\n",
        ),
        # a key added to a flow mapping lands before its closing brace
        (
            QuotaChange("vision", "p5-od", borrowing_limit=4),
            12,
            b"      - {flavor: p5-od, nominal: 4, lending_limit: 2}\n",
            b"      - {flavor: p5-od, nominal: 4, lending_limit: 2, borrowing_limit: 4}\n",
        ),
        # a block mapping value with its comment
        (
            QuotaChange("vision", "ndh100", borrowing_limit=8),
            15,
            b"        borrowing_limit: 4  # may borrow from speech\n",
            b"        borrowing_limit: 8  # may borrow from speech\n",
        ),
    ],
)
def test_edit_changes_only_that_quota_line(
    tmp_path: Path, change: QuotaChange, want_line: int, want_old: bytes, want_new: bytes
) -> None:
    root = team_dir(tmp_path)
    path = root / "teams" / "vision.yaml"
    before = path.read_bytes()

    result = set_quotas(root, [change])

    assert result.ok, [i.format() for i in result.issues]
    assert changed_lines(before, path.read_bytes()) == [(want_line, want_old, want_new)]


def test_edit_keeps_windows_line_endings(tmp_path: Path) -> None:
    root = team_dir(tmp_path, newline="\r\n")
    path = root / "teams" / "vision.yaml"
    before = path.read_bytes()
    assert set_quotas(root, [QuotaChange("vision", "p5-od", nominal=6)]).ok
    assert changed_lines(before, path.read_bytes()) == [
        (
            12,
            b"      - {flavor: p5-od, nominal: 4, lending_limit: 2}\r\n",
            b"      - {flavor: p5-od, nominal: 6, lending_limit: 2}\r\n",
        )
    ]


def test_new_flavor_is_one_new_line_in_the_style_of_the_last_entry(tmp_path: Path) -> None:
    root = team_dir(tmp_path)
    path = root / "teams" / "speech.yaml"
    before = path.read_bytes()

    result = set_quotas(root, [QuotaChange("speech", "h100-flex", nominal=0, borrowing_limit=8)])

    assert result.ok, [i.format() for i in result.issues]
    old, new = before.splitlines(keepends=True), path.read_bytes().splitlines(keepends=True)
    assert new == [*old, b"      - {flavor: h100-flex, nominal: 0, borrowing_limit: 8}\n"]
    assert [e.format().split("/teams/")[1] for e in result.edits] == [
        "speech.yaml:10 teams[0].quotas[2].nominal: (new) -> 0",
        "speech.yaml:10 teams[0].quotas[2].borrowing_limit: (new) -> 8",
    ]


def test_new_flavor_after_a_block_entry_is_a_block_entry(tmp_path: Path) -> None:
    root = team_dir(tmp_path)
    path = root / "teams" / "vision.yaml"
    before = path.read_bytes().splitlines(keepends=True)
    assert set_quotas(root, [QuotaChange("vision", "h100-flex", nominal=0)]).ok
    after = path.read_bytes().splitlines(keepends=True)
    assert after == [*before[:15], b"      - flavor: h100-flex\n", b"        nominal: 0\n", *before[15:]]


@pytest.mark.slow
def test_every_quota_of_the_example_edits_in_place(tmp_path: Path) -> None:
    root = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, root)
    for path in sorted((root / "teams").glob("*.yaml")):
        team = yaml.safe_load(path.read_text())["teams"][0]
        for quota in team["quotas"]:
            before = path.read_bytes()
            result = set_quotas(root, [QuotaChange(team["name"], quota["flavor"], nominal=quota["nominal"] - 1)])
            assert result.ok, [i.format() for i in result.issues]
            [(_, old, new)] = changed_lines(before, path.read_bytes())
            assert new == old.replace(
                f"nominal: {quota['nominal']}".encode(), f"nominal: {quota['nominal'] - 1}".encode()
            )


def test_dirty_file_is_refused_unless_forced(tmp_path: Path) -> None:
    repo = QuotaRepo.create(tmp_path)
    path = repo.inventory / "teams" / "speech.yaml"
    repo.replace("teams/speech.yaml", "namespaces: [speech]", "namespaces: [speech, speech-eval]")
    dirty = path.read_bytes()

    refused = set_quotas(repo.inventory, [QuotaChange("speech", "ndh100", nominal=8)])

    assert not refused.ok and path.read_bytes() == dirty
    assert [i.message for i in refused.issues] == [
        "file has uncommitted changes; an edit now would mix with unreviewed work"
    ]
    assert "pass --force" in refused.issues[0].format()
    assert set_quotas(repo.inventory, [QuotaChange("speech", "ndh100", nominal=8)], force=True).ok
    assert b"{flavor: ndh100, nominal: 8}" in path.read_bytes()


def test_edit_that_breaks_the_inventory_is_not_written(tmp_path: Path) -> None:
    root = team_dir(tmp_path)
    path = root / "teams" / "speech.yaml"
    before = path.read_bytes()

    result = set_quotas(root, [QuotaChange("speech", "ndh100", nominal=8, lending_limit=20)])

    assert not result.ok and path.read_bytes() == before and result.written == []
    [message] = [i.format() for i in result.issues]
    assert message.startswith(
        f"{display_path(path)}:9 teams[0].quotas[1].lending_limit: after the edit, lending_limit (20) "
        "is above nominal (8)."
    ), message


def test_atomic_write_keeps_mode_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    root = team_dir(tmp_path)
    path = root / "teams" / "speech.yaml"
    path.chmod(0o640)
    assert set_quotas(root, [QuotaChange("speech", "ndh100", nominal=8)]).ok
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []


def test_unknown_team_suggests_the_closest(tmp_path: Path) -> None:
    result = set_quotas(team_dir(tmp_path), [QuotaChange("speach", "ndh100", nominal=8)])
    assert next(i.format() for i in result.issues).endswith("(got 'speach'). Did you mean `speech`?")


def test_qm_quota_set_prints_the_edit_and_refuses_over_capacity(tmp_path: Path) -> None:
    repo = QuotaRepo.create(tmp_path)
    runner = CliRunner()
    ok = runner.invoke(app, ["quota", "set", "speech", "ndh100", "--nominal", "8", "--inventory", str(repo.inventory)])
    assert ok.exit_code == 0, ok.output
    assert "speech.yaml:9 teams[0].quotas[1].nominal: 16 -> 8" in ok.stdout
    repo.commit("lower speech")
    over = runner.invoke(
        app, ["quota", "set", "speech", "ndh100", "--nominal", "64", "--inventory", str(repo.inventory)]
    )
    assert over.exit_code == 1
    assert "after the edit, flavor `ndh100` is over-subscribed" in over.stderr
    assert "Nothing was changed." in over.stderr
    assert repo.git("status", "--porcelain") == ""
