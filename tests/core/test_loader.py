"""The loader turns every class of bad input into located, actionable issues, never a traceback."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from quartermaster.loader import load
from tests.builders import make_inventory
from tests.paths import REPO

EXAMPLE = REPO / "inventory"
# <file>:<line> <yaml.path>: <what is wrong> (got <value>). <how to fix>
ISSUE_FORMAT = re.compile(r"^(?P<file>\S+):(?P<line>\d+) (?P<path>\S*): (?P<what>.+?)(?: \(got .+\))?\. (?P<fix>.+)$")


def formatted(root: Path) -> list[str]:
    return [i.format() for i in load(root).issues]


def test_example_inventory_loads_without_issues() -> None:
    result = load(EXAMPLE)
    assert result.ok, [i.format() for i in result.issues]
    assert result.issues == []
    inv = result.inventory
    assert (len(inv.clusters), len(inv.pools), len(inv.teams)) == (6, 10, 8)
    assert len(inv.usage) == 31 * 24 * 16  # one row per hour of October 2026 per Helios VC
    assert {d.period for d in inv.demand} == {f"{y}Q{q}" for y in (2027, 2028) for q in (1, 2, 3, 4)}


def test_issue_format_has_file_line_path_what_and_fix(tmp_path: Path) -> None:
    root = make_inventory().edit("teams", "ml", cohort="orgg").write(tmp_path)
    [line] = formatted(root)
    match = ISSUE_FORMAT.match(line)
    assert match, line
    assert match["file"].endswith("teams.yaml")
    want_line = (root / "teams.yaml").read_text().splitlines().index("  cohort: orgg") + 1
    assert match["line"] == str(want_line)
    assert match["path"] == "teams[0].cohort"
    assert match["fix"] == "Did you mean `org`?"


def line_of(path: Path, text: str) -> int:
    """The line of `path` that holds `text`."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def test_typo_key_negative_quota_dangling_reference_oversubscription_and_broken_yaml_all_reported(
    tmp_path: Path,
) -> None:
    """The issue's acceptance case: every problem at once, each located, each with a fix."""
    root = tmp_path / "inv"
    shutil.copytree(EXAMPLE, root)
    multimodal = root / "teams" / "multimodal.yaml"
    multimodal.write_text(multimodal.read_text().replace("    owners:", "    ownrs:"))
    org = root / "org.yaml"  # the team's cohort is in its team_terms entry (issue 37)
    org.write_text(
        org.read_text().replace(
            "rl-research, cost_center: CC-1003, cohort: research", "rl-research, cost_center: CC-1003, cohort: reserch"
        )
    )
    tpu = root / "teams" / "tpu-research.yaml"
    tpu.write_text(tpu.read_text().replace("{flavor: v5p-2x2x4, nominal: 32}", "{flavor: v5p-2x2x4, nominal: -8}"))
    platform = root / "teams" / "ml-platform.yaml"
    platform.write_text(platform.read_text().replace("nominal: 16", "nominal: 48"))
    (root / "teams" / "broken.yaml").write_text("teams:\n  - name: broken\n    owners: [x\n")

    result = load(root)
    lines = [i.format() for i in result.issues]
    assert not result.ok
    want = [
        "teams/multimodal.yaml:4 teams[0].ownrs: unknown key `ownrs`. Did you mean `owners`?",
        f"org.yaml:{line_of(org, 'team: rl-research')} team_terms[4].cohort: no such cohort `reserch`. Did you mean "
        "`research`?",
        f"teams/tpu-research.yaml:{line_of(tpu, 'v5p-2x2x4')} teams[0].quotas[0].nominal: `nominal` must be >= 0 "
        "(got -8).",
        f"teams/ml-platform.yaml:{line_of(platform, 'nominal: 48')} teams[0].quotas[0].nominal: flavor `dgx-h100-a` "
        "is over-subscribed",
        "teams/broken.yaml:4: malformed YAML: did not find expected ',' or ']'.",
    ]
    for fragment in want:
        assert any(fragment in line for line in lines), (fragment, lines)
    assert all(ISSUE_FORMAT.match(line.split("/inv/", 1)[-1]) or "malformed" in line for line in lines), lines


BAD_FILES = {
    # Unbalanced bracket: YAML syntax error with its line.
    "malformed yaml": ("teams.yaml", b"teams:\n  - name: a\n    owners: [x\n", "teams.yaml:4: malformed YAML"),
    # A key given twice makes the meaning unclear.
    "duplicate key": ("teams.yaml", b"teams:\n  - name: a\n    name: b\n", "teams.yaml:3 teams[0].name: duplicate key"),
    # A zero-byte file.
    "empty file": ("sites.yaml", b"", "sites.yaml:1: file is empty"),
    # Only comments.
    "comments only": ("sites.yaml", b"# nothing yet\n", "sites.yaml:1: file has no content"),
    # Binary garbage with NUL bytes.
    "binary garbage": ("sites.yaml", b"\x00\x01\x02\xff", "sites.yaml:1: file is binary"),
    # Latin-1 text.
    "not utf-8": ("sites.yaml", b"sites:\n  - name: caf\xe9\n", "sites.yaml:2: file is not UTF-8 text"),
    # A list where a mapping of sections is expected.
    "top level is a list": ("sites.yaml", b"- a\n- b\n", "the top level must be a mapping"),
    # An unknown section with a near miss.
    "unknown section": (
        "x.yaml",
        b"team:\n  - name: a\n",
        "x.yaml:1 team: unknown section `team`. Did you mean `teams`?",
    ),
    # A section that must be a list.
    "section not a list": ("x.yaml", b"teams:\n  name: a\n", "`teams` must be a list"),
    # Wrong type.
    "wrong type": (
        "x.yaml",
        b"priority_classes:\n  - name: p\n    value: high\n",
        "x.yaml:3 priority_classes[0].value: `value`: input should be a valid integer",
    ),
    # An absurd number.
    "absurd number": (
        "x.yaml",
        b"priority_classes:\n  - name: p\n    value: 99999999999\n",
        "`value` must be <= 1000000000",
    ),
    # A closed set.
    "bad enum": (
        "x.yaml",
        b"sites:\n  - {name: s, provider: gcq, region: r}\n",
        "`provider` must be one of gcp, aws, azure, onprem (got 'gcq'). Did you mean `gcp`?",
    ),
    # A cluster kind no provider has: the discriminated union's tag error, located at `kind` with the fix.
    "bad cluster kind": (
        "x.yaml",
        b"clusters:\n  - name: c\n    kind: gkee\n    site: s\n",
        "x.yaml:3 clusters[0].kind: `kind` must be one of gke, eks, aks, onprem (got 'gkee'). Did you mean `gke`?",
    ),
    "cluster without kind": (
        "x.yaml",
        b"clusters:\n  - name: c\n    site: s\n",
        "clusters[0].kind: missing required key `kind`. Add `kind:`. See docs/inventory-reference.md#cluster.",
    ),
    # A provider's own settings belong to its clusters only; the path has no trace of the union's tag.
    "settings of another provider": (
        "x.yaml",
        b"clusters:\n  - name: c\n    kind: gke\n    site: s\n    aks: {resource_group: rg}\n",
        "x.yaml:5 clusters[0].aks: unknown key `aks`. Valid keys here: name, kind, site,",
    ),
    # An error inside a provider's settings, located through the union.
    "bad provider setting": (
        "x.yaml",
        b"clusters:\n  - name: c\n    kind: eks\n    site: s\n    eks: {node_role_arn: a, subnets: {}, sg: []}\n",
        "x.yaml:5 clusters[0].eks.sg: unknown key `sg`. Valid keys here: node_role_arn, subnets, security_group_ids.",
    ),
    # A name Kubernetes would refuse.
    "invalid name": (
        "x.yaml",
        b"priority_classes:\n  - {name: Prod_Critical, value: 1}\n",
        "`name` is not a valid name (got 'Prod_Critical'). Use lower-case letters",
    ),
    # CSV: unknown column.
    "csv unknown column": (
        "demand.csv",
        b"period,team,acelerator,p50\n2027Q1,ml,H100-80GB,1\n",
        "demand.csv:1 column 3: unknown column `acelerator`. Did you mean `accelerator`?",
    ),
    # CSV: bad value on a row.
    "csv bad value": (
        "demand.csv",
        b"period,team,accelerator,p50\n2027Q5,ml,H100-80GB,1\n",
        "demand.csv:2 period: `period` is not a quarter (got '2027Q5'). Write a year from 2000 to 2100 and Q1 to Q4",
    ),
    # CSV: a row with too few values.
    "csv short row": (
        "usage.csv",
        b"hour,cluster,team,flavor,accelerators_used,accelerators_requested\n2026-10-01T00:00,gke-a\n",
        "usage.csv:2 row 2: row has 2 values but the header has 6",
    ),
}


@pytest.mark.parametrize("name,content,want", BAD_FILES.values(), ids=list(BAD_FILES))
def test_bad_input_is_located_and_explained(tmp_path: Path, name: str, content: bytes, want: str) -> None:
    root = make_inventory().write(tmp_path / "inv")
    (root / name).write_bytes(content)
    lines = formatted(root)
    assert any(want in line for line in lines), lines


def test_missing_directory_is_an_issue_not_a_crash(tmp_path: Path) -> None:
    [line] = formatted(tmp_path / "nowhere")
    assert "no inventory files" in line


def test_follow_on_errors_about_broken_objects_are_suppressed(tmp_path: Path) -> None:
    """A pool that fails to load does not also produce 'no such flavor' for every quota on it."""
    root = make_inventory().edit_pool("h100", nodes=-1).write(tmp_path)
    lines = formatted(root)
    assert len(lines) == 1 and "`nodes` must be >= 0" in lines[0], lines


def test_yaml_and_csv_rows_keep_their_lines(tmp_path: Path) -> None:
    root = make_inventory().write(tmp_path)
    (root / "demand.csv").write_text(
        "period,team,accelerator,p50\n2027Q1,ml,H100-80GB,1\n\n2027Q2,nobody,H100-80GB,2\n"
    )
    [line] = formatted(root)
    assert "demand.csv:4 team: no such team `nobody`" in line


def test_a_clean_file_is_located_from_its_text_when_first_asked(tmp_path: Path) -> None:
    # issue 30, point 4: a file without problems keeps its text, not a line for every value; asking for a
    # location then gives the line the value is written on
    root = make_inventory().write(tmp_path)
    result = load(root)
    assert result.issues == []
    shown = next(f for f in result.files if f.endswith("teams.yaml"))
    assert shown not in result.sources.lines
    text = (root / "teams.yaml").read_text().splitlines()
    want = next(n for n, line in enumerate(text, start=1) if line.strip().startswith("cohort:"))
    assert result.sources.at(shown, ("teams", 0, "cohort")).line == want


def test_a_duplicate_key_names_the_line_of_the_first(tmp_path: Path) -> None:
    # the loader converts without lines first; a repeated key is converted again with them to say where
    (tmp_path / "sites.yaml").write_text("sites:\n  - name: a\n    provider: gcp\n    name: b\n")
    [issue] = [i for i in load(tmp_path).issues if "duplicate" in i.message]
    assert issue.format().startswith(f"{tmp_path / 'sites.yaml'}:4 sites[0].name: duplicate key `name`")
    assert "the first is on line 2" in issue.format()


def test_a_refused_onprem_part_is_one_error_not_a_follow_on_sum(tmp_path: Path) -> None:
    """One mistake in onprem_costs.csv (a price that is not a number) is reported once: the check that the parts add
    up to the price-book rate would only say again that a part is missing."""
    root = tmp_path / "inv"
    shutil.copytree(EXAMPLE, root)
    costs = root / "onprem_costs.csv"
    text = costs.read_text()
    assert ",380000," in text  # the DGX H100's hardware row
    costs.write_text(text.replace(",380000,", ",abc,"))
    [line] = formatted(root)
    assert line.startswith(f"{root / 'onprem_costs.csv'}:2 usd_per_node:"), line
    assert "valid decimal" in line
