"""The hostile-input corpus (issue 17): every attack and careless mistake the issue lists, as a small set of files,
the `qm` command run on them and the outcome wanted (a located error and its exit code, or the correct result).

Each case builds its files in an empty case folder and runs its command from there, so paths in `args` are
relative to it: `inv` is the inventory, `out/...` an output. `tests/hostile/test_corpus.py` runs every case in a
process of its own and checks the guards that hold for all of them (no traceback, time, memory, no byte changed
outside `outputs`, no stray files).
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import json
import shutil
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from typer.testing import CliRunner

from quartermaster.cli import app
from tests.builders import InventoryBuilder, make_inventory
from tests.hostile import prometheus as prom
from tests.paths import INVENTORY
from tests.prdiff.repo import GIT


@dataclass(frozen=True)
class Case:
    """One entry of the corpus."""

    id: str
    item: int
    """item: the numbered finding of the issue (`issue`) this case reproduces."""
    build: Callable[[Path], None]
    """build: writes the case's files into the (empty) case folder."""
    args: tuple[str, ...]
    exit: int
    says: tuple[str, ...] = ()
    """says: text the output must hold (the located message, or the result)."""
    never: tuple[str, ...] = ()
    """never: text the output must not hold (a secret, an escape, a flood)."""
    outputs: tuple[str, ...] = ()
    """outputs: paths (files or folders) the command may create or change; nothing else may change."""
    check: Callable[[Path], None] | None = None
    """check: asserts the correct result in the case folder after the command."""
    max_lines: int = 40
    """max_lines: the output is a few located messages, never one per row or column."""
    unprivileged: bool = False
    """unprivileged: run without root's right to read any file (as a CI runner's user), so that an unreadable file
    is unreadable even when the tests run as root."""
    issue: int = 17
    """issue: the issue whose findings `item` numbers (17: the first rounds; 29: the third)."""
    serve: Callable[[Path], AbstractContextManager[str]] | None = None
    """serve: a server (a hostile Prometheus) running while the command runs; `{url}` in `args` is its base URL."""
    env: tuple[tuple[str, str], ...] = ()
    """env: environment variables of the command (credentials)."""


# --- building blocks ----------------------------------------------------------------------------------------


def small(builder: Callable[[], InventoryBuilder] = make_inventory, **files: str | bytes) -> Callable[[Path], None]:
    """The builders' small valid inventory as `inv/` (changed by `builder`), plus extra files in it."""

    def build(case: Path) -> None:
        builder().write(case / "inv")
        for name, content in files.items():
            path = case / "inv" / name.replace("__", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode())

    return build


def example(*edits: Callable[[Path], None]) -> Callable[[Path], None]:
    """The bundled example inventory as `inv/`, then each edit applied to that folder."""

    def build(case: Path) -> None:
        shutil.copytree(INVENTORY, case / "inv")
        for change in edits:
            change(case / "inv")

    return build


def replace(file: str, old: str, new: str) -> Callable[[Path], None]:
    """An edit: replace `old` (which must be there) in one file of the inventory."""

    def change(inv: Path) -> None:
        text = (inv / file).read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {file}"
        (inv / file).write_text(text.replace(old, new, 1), encoding="utf-8")

    return change


def git_repo(*edits: Callable[[Path], None]) -> Callable[[Path], None]:
    """The example inventory committed in a git repository at the case folder, then `edits` committed on top."""

    def build(case: Path) -> None:
        shutil.copytree(INVENTORY, case / "inv")
        subprocess.run([*GIT, "init", "-q"], cwd=case, check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=case, check=True)
        subprocess.run([*GIT, "commit", "-qm", "example"], cwd=case, check=True)
        for change in edits:
            change(case / "inv")

    return build


def team(**fields: object) -> Callable[[], InventoryBuilder]:
    return lambda: make_inventory().edit("teams", "ml", **fields)


def quota_line(case: Path, file: str) -> str:
    return next(line for line in (case / "inv" / file).read_text().splitlines() if "p5-od" in line)


HEADER = "hour,cluster,team,flavor,accelerators_used,accelerators_requested\n"


def idle_days(month: str, busy: set[int], days: int = 31) -> str:
    """Rows of 0 accelerators for `ml` on `h100` at midnight of each day of `month` (YYYY-MM) not in `busy`: a
    period with a day of no records is refused, so a case that meters one hour records the others as idle."""
    return "".join(f"{month}-{day:02d}T00:00:00,gke-a,ml,h100,0,0\n" for day in range(1, days + 1) if day not in busy)


PRICES = (INVENTORY / "prices.csv").read_text().splitlines()[
    0
] + "\na3-megagpu-8g,gcp-us-central1,on-demand,0,88,test,\n"
ALIAS_BOMB = (
    "\n".join(  # 7 lines: 9**7 = 4.8 million values when expanded
        ["a: &a [" + ",".join(['"lol"'] * 9) + "]"]
        + [f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]" for p, c in zip("abcdef", "bcdefg", strict=True)]
    )
    + "\n"
)
DEEP_FLOW = "x: " + "[" * 100_000 + "]" * 100_000 + "\n"  # crashed the process (the composer recurses)
DEEP_INDENT = "".join(f"{'  ' * i}k{i}:\n" for i in range(200)) + "  " * 200 + "v: 1\n"
INFERENCE = "teams/inference.yaml"
P5 = "      - {flavor: p5-od, nominal: 16}"


LEAP_USAGE = HEADER + idle_days("2027-02", {28}, 28) + "2027-02-28T23:00:00,gke-a,ml,h100,1,1\n"
"""February 2027 (no leap day) metered: the last hour of the 28th, the other days idle."""


def line_of(file: str, text: str) -> int:
    """The line of the example inventory's `file` that holds `text` (where a located message must point)."""
    return next(n for n, line in enumerate((INVENTORY / file).read_text().splitlines(), start=1) if text in line)


P5_LINE, NAMESPACES_LINE = line_of(INFERENCE, P5), line_of(INFERENCE, "namespaces: [inference")
FORMULA = '=HYPERLINK("http://evil.example","x")'
CONTROL_GROUP = "ml\x7fa\x85b\x9b@example.com"  # DEL, NEL and a C1 control: a YAML reader refuses them raw
LEAP = (
    make_inventory()
    .add(
        "commitments",
        name="leap",
        kind="cud",
        machine="a3-megagpu-8g",
        site="gcp-us-central1",
        count=2,
        term_months=36,
        start="2024-02-29",
        usd_per_node_hour="40",
    )
    .edit_pool("h100", provisioning="reservation", commitment="leap")
)


def focus_cells(case: Path) -> None:
    cells = [c for row in csv.reader((case / "out" / "focus.csv").read_text().splitlines()) for c in row]
    assert f"'{FORMULA}" in cells and not any(c.startswith("=") for c in cells)


def stale_render_removed(case: Path) -> None:
    assert not (case / "out" / "gke-old.yaml").exists()
    assert (case / "out" / "notes.yaml").exists() and (case / "out" / "aks-eastus.yaml").exists()


def rendered_before(case: Path) -> None:
    """A render of the example, one file of a cluster that is gone (written by qm render), one of the user's."""
    example()(case)
    assert CliRunner().invoke(app, ["render", str(case / "inv"), "--out", str(case / "out")]).exit_code == 0
    header = (case / "out" / "aks-eastus.yaml").read_text().replace("# cluster: aks-eastus", "# cluster: gke-old", 1)
    (case / "out" / "gke-old.yaml").write_text(header)
    (case / "out" / "notes.yaml").write_text("# cluster: gke-old\nmine: true\n")


def linked_team_file(case: Path) -> None:
    small()(case)
    inv = case / "inv"
    (inv / ".files").mkdir()
    target = (inv / "teams.yaml").rename(inv / ".files" / "teams.yaml")
    (inv / "teams.yaml").symlink_to(target)


def linked_edit_kept_link(case: Path) -> None:
    inv = case / "inv"
    assert (inv / "teams.yaml").is_symlink() and "nominal: 4" in (inv / ".files" / "teams.yaml").read_text()


def links_out_and_loop(case: Path) -> None:
    (case / "secret.yaml").write_text("root:x:0:0:root:/root:/bin/bash\n")
    small()(case)
    (case / "inv" / "evil.yaml").symlink_to(case / "secret.yaml")
    (case / "inv" / "loop").mkdir()
    (case / "inv" / "loop" / "again").symlink_to(case / "inv" / "loop", target_is_directory=True)


def absolute_link_in_history(case: Path) -> None:
    git_repo()(case)
    (case / "inv" / "teams" / "evil.yaml").symlink_to("/etc/passwd")
    subprocess.run([*GIT, "add", "-A"], cwd=case, check=True)
    subprocess.run([*GIT, "commit", "-qm", "a hostile link"], cwd=case, check=True)
    (case / "inv" / "teams" / "evil.yaml").unlink()


def unreadable_teams(case: Path) -> None:
    example()(case)
    (case / "inv" / "teams").chmod(0)


def unreadable_team_file(case: Path) -> None:
    example()(case)
    (case / "inv" / INFERENCE).chmod(0)


def link_loops(case: Path) -> None:
    """Two team files linked to each other, and one linked to itself."""
    example()(case)
    teams = case / "inv" / "teams"
    (teams / "a.yaml").symlink_to("b.yaml")
    (teams / "b.yaml").symlink_to("a.yaml")
    (teams / "self.yaml").symlink_to("self.yaml")


def link_to_a_program(case: Path) -> None:
    example()(case)
    (case / "inv" / "teams" / "bin.yaml").symlink_to(Path("/bin/true").resolve())


def rendered_loads_back(case: Path) -> None:
    """The rendered file is YAML a reader accepts, and the group comes back as written."""
    documents = list(yaml.safe_load_all((case / "out" / "gke-a.yaml").read_text(encoding="utf-8")))
    subjects = [s["name"] for d in documents if d and d["kind"] == "RoleBinding" for s in d["subjects"]]
    assert CONTROL_GROUP in subjects


def read_only_team_file(case: Path) -> None:
    example()(case)
    (case / "inv" / INFERENCE).chmod(0o444)


def kueue_manifest(extra: str) -> str:
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: a\n" + extra + "spec: {}\n"


def quota_is(file: str, want: str) -> Callable[[Path], None]:
    def check(case: Path) -> None:
        assert quota_line(case, file).strip() == want, quota_line(case, file)

    return check


def _gone(path: Path) -> None:
    assert not path.exists(), path


def merged_quota_is(case: Path) -> None:
    team_data = yaml.safe_load((case / "inv" / INFERENCE).read_text())["teams"][0]
    assert team_data["quotas"][1] == {"flavor": "p5-od", "nominal": 10, "lending_limit": 2}


# --- the corpus -------------------------------------------------------------------------------------------

CASES = [
    # 1. tenancy escape
    Case(
        "system-namespace",
        1,
        small(team(namespaces=["kube-system"])),
        ("validate", "inv"),
        1,
        says=("teams.yaml:", "teams[0].namespaces[0]", "kube-system"),
    ),
    Case(
        "system-namespace-render",
        1,
        small(team(namespaces=["ml", "kueue-system"])),
        ("render", "inv", "--out", "out"),
        1,
        says=("teams[0].namespaces[1]",),
    ),
    Case(
        "system-group",
        1,
        small(team(group="system:authenticated")),
        ("validate", "inv"),
        1,
        says=("teams[0].group", "system:"),
    ),
    Case(
        "default-namespace",
        1,
        small(team(namespaces=["default"])),
        ("validate", "inv"),
        1,
        says=("teams[0].namespaces[0]", "default"),
    ),
    Case(
        "namespace-twice",
        1,
        small(team(namespaces=["ml", "ml"])),
        ("validate", "inv"),
        1,
        says=("teams[0].namespaces[1]",),
    ),
    # 2. CODEOWNERS and PR-comment injection
    Case(
        "owner-newline",
        2,
        small(team(owners=["@e\n* @attacker"])),
        ("codeowners", "inv", "--output", "out/CODEOWNERS"),
        1,
        says=("teams[0].owners[0]",),
    ),
    Case(
        "owner-html-comment", 2, small(team(owners=["@e <!--"])), ("validate", "inv"), 1, says=("teams[0].owners[0]",)
    ),
    # 3. quota edits (races: tests/core/test_hostile_input.py)
    Case(
        "quota-set",
        3,
        example(),
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        0,
        says=(f"teams/inference.yaml:{P5_LINE} teams[0].quotas[1].nominal: 16 -> 12",),
        outputs=(f"inv/{INFERENCE}",),
        check=quota_is(INFERENCE, "- {flavor: p5-od, nominal: 12}"),
    ),
    # 4. valid dates that crashed, absurd dates that were billed
    Case(
        "leap-day-meter",
        4,
        small(lambda: LEAP, **{"prices.csv": PRICES, "usage.csv": LEAP_USAGE}),
        ("meter", "inv/usage.csv", "--inventory", "inv"),
        0,
        says=("ml",),
    ),
    Case(
        "leap-day-focus",
        4,
        small(lambda: LEAP, **{"prices.csv": PRICES, "usage.csv": LEAP_USAGE}),
        ("export", "focus", "inv", "--out", "out/focus.csv"),
        0,
        outputs=("out",),
    ),
    Case(
        "leap-day-plan",
        4,
        small(
            lambda: LEAP,
            **{"prices.csv": PRICES, "demand.csv": "period,team,accelerator,p50,p90\n2027Q1,ml,H100-80GB,8,16\n"},
        ),
        ("plan", "inv", "--out", "out/plan"),
        0,
        says=("Wrote",),
        outputs=("out",),
    ),
    Case(
        "year-9999",
        4,
        small(
            lambda: make_inventory().add(
                "commitments",
                name="c",
                kind="cud",
                machine="a3-megagpu-8g",
                site="gcp-us-central1",
                count=1,
                term_months=12,
                usd_per_node_hour="40",
                start="9999-01-01",
            )
        ),
        ("validate", "inv"),
        1,
        says=("commitments[0].start",),
    ),
    Case(
        "usage-1900",
        4,
        small(
            **{"usage.csv": HEADER + "2026-10-01T00:00:00,gke-a,ml,h100,1,1\n1900-10-01T00:00:00,gke-a,ml,h100,1,1\n"}
        ),
        ("meter", "inv/usage.csv", "--inventory", "inv"),
        1,
        says=("usage.csv:3", "is outside 2000-2100"),
        never=("usage.csv:2",),
    ),
    Case(
        "usage-offset",
        4,
        small(
            **{
                "prices.csv": PRICES,
                "usage.csv": HEADER + "2026-10-01T00:00:00,gke-a,ml,h100,1,1\n"
                "2026-10-01T06:00:00+05:00,gke-a,ml,h100,1,1\n" + idle_days("2026-10", {1}),
            }
        ),
        ("meter", "inv/usage.csv", "--inventory", "inv"),
        0,
        never=("usage.csv:2", "usage.csv:3"),
    ),
    Case(
        "usage-9999",
        4,
        small(
            **{"usage.csv": HEADER + "2026-10-01T00:00:00,gke-a,ml,h100,1,1\n9999-12-31T23:00:00,gke-a,ml,h100,1,1\n"}
        ),
        ("meter", "inv/usage.csv", "--inventory", "inv"),
        1,
        says=("usage.csv:3", "is outside 2000-2100"),
    ),
    # 5. files that exhaust the machine
    Case(
        "alias-bomb",
        5,
        small(**{"bomb.yaml": ALIAS_BOMB}),
        ("validate", "inv"),
        1,
        says=("bomb.yaml:", "expand to more values than the file could hold"),
    ),
    Case(
        "alias-bomb-import",
        5,
        small(**{"bomb.yaml": ALIAS_BOMB}),
        ("import", "kueue", "inv/bomb.yaml"),
        1,
        says=("expand to more values than the file could hold",),
    ),
    Case(
        "deep-flow",
        5,
        small(**{"deep.yaml": DEEP_FLOW}),
        ("validate", "inv"),
        1,
        says=("deep.yaml:1", "nested deeper than 64 levels"),
    ),
    Case(
        "deep-flow-import",
        5,
        small(**{"deep.yaml": DEEP_FLOW}),
        ("import", "kueue", "inv/deep.yaml"),
        1,
        says=("nested deeper than 64 levels",),
    ),
    Case(
        "deep-indent",
        5,
        small(**{"deep.yaml": DEEP_INDENT}),
        ("validate", "inv"),
        1,
        says=("deep.yaml:", "nested deeper than 64 levels"),
    ),
    # 6. files outside the inventory
    Case(
        "link-out-and-loop",
        6,
        links_out_and_loop,
        ("validate", "inv"),
        1,
        says=("evil.yaml:?: a link to a file outside the inventory; it is not read",),
        never=("root:x",),
    ),
    Case(
        "link-loops",
        6,
        link_loops,
        ("validate", "inv"),
        1,
        says=("teams/a.yaml:?: a link that leads nowhere", "teams/b.yaml:?:", "teams/self.yaml:?:"),
        max_lines=6,
    ),
    Case(
        "quota-set-link-loops",
        6,
        link_loops,
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        1,
        says=("teams/self.yaml:?: a link that leads nowhere",),
        max_lines=8,
    ),
    Case(
        "quota-set-link-out",
        6,
        link_to_a_program,
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        1,
        says=("teams/bin.yaml:?: a link to a file outside the inventory; it is not read",),
        never=("ELF",),
    ),
    Case(
        "diff-absolute-link",
        6,
        absolute_link_in_history,
        ("diff", "HEAD", "--inventory", "inv", "--format", "text"),
        1,
        says=("HEAD:inv/teams/evil.yaml", "a link that leaves the inventory"),
        never=("root:x",),
    ),
    # 7. outputs that overwrite inputs
    Case(
        "out-onto-usage",
        7,
        example(),
        ("export", "focus", "inv", "--period", "2026-10", "--out", "inv/usage.csv"),
        2,
        says=("inside the inventory",),
    ),
    Case(
        "plan-out-is-a-file",
        7,
        lambda case: (example()(case), (case / "afile").write_text("x")),
        ("plan", "inv", "--out", "afile"),
        2,
        says=("is a file; give a folder path",),
    ),
    Case(
        "report-out-inside", 7, example(), ("report", "inv", "--out", "inv/report"), 2, says=("inside the inventory",)
    ),
    Case("render-out-inside", 7, example(), ("render", "inv", "--out", "inv"), 2, says=("inside the inventory",)),
    Case(
        "out-cannot-be-created",
        7,
        lambda case: (example()(case), (case / "afile").write_text("x")),
        ("export", "focus", "inv", "--period", "2026-10", "--out", "afile/x.csv"),
        2,
        says=("cannot be created",),
    ),
    Case(
        "render-removes-stale",
        7,
        rendered_before,
        ("render", "inv", "--out", "out"),
        0,
        says=("removed out/gke-old.yaml",),
        outputs=("out",),
        check=stale_render_removed,
    ),
    # 8. injection into reviewers' tools
    Case(
        "formula-in-focus",
        8,
        small(
            lambda: make_inventory().edit("clusters", "gke-a", project=FORMULA),
            **{
                "prices.csv": PRICES,
                "usage.csv": HEADER + "2026-10-01T00:00:00,gke-a,ml,h100,1,1\n" + idle_days("2026-10", {1}),
            },
        ),
        ("export", "focus", "inv", "--out", "out/focus.csv"),
        0,
        outputs=("out",),
        check=focus_cells,
    ),
    Case(
        "control-characters-render",
        8,
        small(team(groups={"gke": CONTROL_GROUP})),
        ("render", "inv", "--out", "out"),
        0,
        outputs=("out",),
        check=rendered_loads_back,
    ),
    Case(
        "code-fence-in-pr-comment",
        8,
        git_repo(lambda inv: (inv / "fence.yaml").write_text('"```\\n# Approved by finance\\n```": 1\n')),
        ("diff", "HEAD", "--inventory", "inv"),
        1,
        says=("````\n",),
    ),
    Case(
        "terminal-escapes",
        8,
        small(**{"extra.yaml": '"\\e[2Jwipe": 1\n"research:x:": 2\n'}),
        ("validate", "inv"),
        1,
        says=("\\x1b[2Jwipe", "research:x:"),
        never=("\x1b",),
    ),
    # 9. tracebacks for user mistakes
    Case(
        "unknown-tag",
        9,
        small(**{"vault.yaml": "teams:\n  - !vault secret\n"}),
        ("validate", "inv"),
        1,
        says=("vault.yaml:2 teams[0]: unknown YAML tag `!vault`",),
    ),
    Case(
        "unreadable-folder",
        9,
        unreadable_teams,
        ("validate", "inv"),
        1,
        says=("inv/teams:?: cannot read this folder (Permission denied)", "checks across files", "were not run"),
        never=("no such team",),
        max_lines=4,
        unprivileged=True,
    ),
    Case(
        "unreadable-file",
        9,
        unreadable_team_file,
        ("validate", "inv"),
        1,
        says=("teams/inference.yaml", "Permission denied"),
        never=("no such team",),
        max_lines=4,
        unprivileged=True,
    ),
    Case(
        "quota-set-utf-16-elsewhere",
        9,
        example(lambda inv: (inv / "u16.yaml").write_bytes("teams: []\n".encode("utf-16"))),
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        1,
        says=("u16.yaml:1: file is UTF-16 text. Save it as UTF-8.",),
    ),
    Case(
        "csv-field-over-128k",
        9,
        small(
            **{
                "prices2.csv": PRICES.splitlines()[0]
                + "\n"
                + "a3-megagpu-8g,gcp-us-central1,on-demand,0,1,"
                + "x" * 200_000
                + ",\n"
            }
        ),
        ("validate", "inv"),
        1,
        says=("prices2.csv:2 row 2: unreadable CSV (field larger than field limit",),
    ),
    Case(
        "csv-100k-columns",
        9,
        small(**{"demand9.csv": ",".join(f"c{i}" for i in range(100_000)) + "\n"}),
        ("validate", "inv"),
        1,
        says=("demand9.csv:1 header: the header has 100000 columns; a demand file has 10",),
        max_lines=5,
    ),
    Case(
        "utf-16",
        9,
        small(**{"u16.yaml": "teams:\n  - name: x\n".encode("utf-16")}),
        ("validate", "inv"),
        1,
        says=("u16.yaml:1: file is UTF-16 text. Save it as UTF-8.",),
    ),
    Case(
        "quota-set-anchored-entry",
        9,
        example(replace(INFERENCE, P5, "      - &e {flavor: p5-od, nominal: 16}")),
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        1,
        says=(f"teams/inference.yaml:{P5_LINE} teams[0].quotas[1]: the quota entry carries the anchor `&e`",),
    ),
    Case(
        "quota-set-alias",
        9,
        example(
            replace(INFERENCE, "nominal: 16, lending_limit: 8", "nominal: &n 16, lending_limit: 8"),
            replace(INFERENCE, P5, "      - {flavor: p5-od, nominal: *n}"),
        ),
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        1,
        says=(f"teams/inference.yaml:{P5_LINE} teams[0].quotas[1].nominal: `nominal` is written as `*n`",),
    ),
    Case(
        "quota-set-merge-key",
        9,
        example(replace(INFERENCE, P5, "      - <<: {nominal: 4, lending_limit: 2}\n        flavor: p5-od")),
        ("quota", "set", "inference", "p5-od", "--nominal", "10", "--inventory", "inv"),
        0,
        says=(f"teams/inference.yaml:{P5_LINE + 2} teams[0].quotas[1].nominal: 4 -> 10",),  # after its 2 lines
        outputs=(f"inv/{INFERENCE}",),
        check=merged_quota_is,
    ),
    Case(
        "quota-set-tab-in-flow",
        9,
        example(replace(INFERENCE, P5, "      - {flavor: p5-od, nominal:\t16}")),
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        0,
        outputs=(f"inv/{INFERENCE}",),
        check=quota_is(INFERENCE, "- {flavor: p5-od, nominal:\t12}"),
    ),
    Case(
        "quota-set-tab-after-colon",
        9,
        example(replace(INFERENCE, "    namespaces: [inference", "    namespaces:\t[inference")),
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        1,
        says=(
            f"teams/inference.yaml:{NAMESPACES_LINE}: the file cannot be read for editing",
            "Replace the tab with spaces",
        ),
    ),
    Case(
        "quota-set-read-only",
        9,
        read_only_team_file,
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        1,
        says=("teams/inference.yaml:?: the file is read-only",),
    ),
    Case(
        "quota-set-after-a-kill",
        3,
        example(lambda inv: (inv / "teams" / ".inference.yaml.x1.tmp").write_text("")),
        ("quota", "set", "inference", "p5-od", "--nominal", "12", "--inventory", "inv"),
        0,
        outputs=(f"inv/{INFERENCE}", "inv/teams/.inference.yaml.x1.tmp"),
        check=lambda case: _gone(case / "inv/teams/.inference.yaml.x1.tmp"),
    ),
    Case(
        "quota-set-linked-file",
        9,
        linked_team_file,
        ("quota", "set", "ml", "h100", "--nominal", "4", "--inventory", "inv"),
        0,
        outputs=("inv/.files/teams.yaml",),
        check=linked_edit_kept_link,
    ),
    Case(
        "import-complex-key",
        9,
        lambda case: (case / "cq.yaml").write_text(kueue_manifest("? [x, y]\n: 1\n")),
        ("import", "kueue", "cq.yaml"),
        1,
        says=("cq.yaml:5: a key that is a list or mapping",),
    ),
    # 10. noise
    Case(
        "broken-team-file",
        10,
        example(lambda inv: (inv / "teams" / "llm-pretrain.yaml").write_text("teams: [\n")),
        ("validate", "inv"),
        1,
        # one error for one cause: the rows that name the team in the broken file are not blamed on it
        says=("inv/teams/llm-pretrain.yaml:2: malformed YAML",),
        never=("no such team",),
        max_lines=2,
    ),
    Case(
        "quarter-hint",
        10,
        small(**{"demand.csv": "period,team,accelerator,p50\n2027Q5,ml,H100-80GB,1\n"}),
        ("validate", "inv"),
        1,
        says=("Write a year from 2000 to 2100 and Q1 to Q4 in ASCII digits, e.g. `2027Q1`.",),
        never=("2027q5",),
    ),
    Case(
        "look-alike",
        10,
        small(lambda: make_inventory().team("ml-t\u0435am")),
        ("validate", "inv"),
        1,
        says=("`\u0435` (CYRILLIC SMALL LETTER IE)",),
        never=("such as `ml-t\u0435am`",),
    ),
    Case(
        "yaml-boolean-number-text",
        10,
        small(
            **{
                "teams.yaml": "teams:\n  - name: ml\n    cost_center: CC-1\n"
                "    namespaces: [ml]\n    owners: ['@ml']\n    cohort: org\n"
                "    groups: {gke: ml@example.com}\n"
                "    quotas:\n      - {flavor: h100, nominal: yes}\n"
            }
        ),
        ("validate", "inv"),
        1,
        says=("nominal: a number is needed, not yes/no or true/false",),
    ),
    Case(
        "yaml-boolean-number",
        10,
        small(team(quotas=[{"flavor": "h100", "nominal": True}])),
        ("validate", "inv"),
        1,
        says=("teams[0].quotas[0].nominal: a number is needed, not yes/no or true/false",),
    ),
]

# --- issue 29: the third round ---------------------------------------------------------------------------------

EKS_ROW = "2026-10-01T00:00:00,eks-us-east-1,inference,p5-od,{used},1\n"
"""A usage row of the example's `inference` team in `p5-od`, a pool of at most 32 accelerators (4 nodes of 8)."""


def usage_file(used: str) -> Callable[[Path], None]:
    """The example inventory as `inv/`, and `u.csv` beside it with one row using `used` accelerators."""
    return example(lambda inv: (inv.parent / "u.csv").write_text(HEADER + EKS_ROW.format(used=used)))


def pull(*extra: str) -> tuple[str, ...]:
    """`qm usage pull` of one day of the example inventory from the case's server into out/u.csv."""
    return (
        "usage",
        "pull",
        "--prometheus",
        "{url}",
        "--since",
        "2026-10-01",
        "--until",
        "2026-10-02",
        "--out",
        "out/u.csv",
        "--inventory",
        "inv",
        "--cluster-label",
        "cluster",
        *extra,
    )


TOKEN = (("QM_PROMETHEUS_TOKEN", "s3cr3t-t0ken"),)
BOUND = "from 0 to 1,000,000 (the inventory's bound)"

CASES += [
    # 1. credentials follow redirects: the other host must receive nothing (asserted by the server)
    Case(
        "pull-redirect-to-another-host",
        1,
        example(),
        pull(),
        2,
        says=("answered HTTP 302, a redirect to http://localhost:", "redirects are not followed"),
        never=("s3cr3t-t0ken",),
        issue=29,
        serve=prom.redirect_elsewhere,
        env=TOKEN,
    ),
    # 2. one set of bounds: what qm validate refuses, metering, export and pull refuse, located
    Case(
        "meter-over-the-bound",
        2,
        usage_file("999999999"),
        ("meter", "u.csv", "--inventory", "inv"),
        1,
        says=("u.csv:2 accelerators_used", BOUND),
        never=("$6,880,907,366.00",),
        issue=29,
    ),
    Case(
        "export-over-the-bound",
        2,
        usage_file("999999999"),
        ("export", "focus", "inv", "--usage", "u.csv", "--out", "out/focus.csv"),
        1,
        says=("u.csv:2 accelerators_used", BOUND),
        issue=29,
    ),
    Case(
        "pull-over-the-bound",
        2,
        example(),
        pull(),
        1,
        says=("series 1 of the answer", "the value 1e300 is above 1,000,000 accelerators"),
        issue=29,
        serve=prom.answering(prom.body(prom.one_series((prom.at_hour(0), "1e300")))),
    ),
]


def rename(file: str, new: str) -> Callable[[Path], None]:
    """An edit: rename one file of the inventory."""
    return lambda inv: (inv / file).rename(inv / new)


NEWLINE_NAME = "teams/x\n* @attacker\n#.yaml"
PATTERN_SYNTAX = "CODEOWNERS reads as pattern syntax"

CASES += [
    # 3. CODEOWNERS injection through file names: refused by validate and by codeowners, nothing written
    Case(
        "file-name-with-line-feeds",
        3,
        example(rename("teams/speech.yaml", NEWLINE_NAME)),
        ("validate", "inv"),
        1,
        says=("inv/teams/x\\x0a* @attacker\\x0a#.yaml:?:", PATTERN_SYNTAX),
        never=("\n* @attacker",),
        issue=29,
    ),
    Case(
        "file-name-with-line-feeds-codeowners",
        3,
        example(rename("teams/speech.yaml", NEWLINE_NAME)),
        ("codeowners", "inv", "--output", "out/CODEOWNERS"),
        1,
        says=(PATTERN_SYNTAX,),
        never=("\n* @attacker",),
        issue=29,
    ),
    Case(
        "file-name-a-glob",
        3,
        example(rename("teams/speech.yaml", "teams/*.yaml")),
        ("codeowners", "inv", "--check", "--output", "out/CODEOWNERS"),
        1,
        says=("inv/teams/*.yaml:?:", PATTERN_SYNTAX),
        issue=29,
    ),
]


def code_owned_by_finance(case: Path) -> None:
    """Every file that names a command CI or a deploy runs, or that judges a change, is finance's."""
    lines = (case / "out" / "CODEOWNERS").read_text().splitlines()
    for path in ("/cdktf.json", "/Pulumi.yaml", "/.pre-commit-config.yaml", "/.ci/", "/tests/"):
        assert f"{path} @northwind/finops" in lines, path


CASES += [
    # 16. the files whose content is a command (cdktf.json's app, Pulumi.yaml's main), hooks, CI scripts, tests
    Case(
        "codeowners-covers-commands",
        16,
        example(),
        ("codeowners", "inv", "--output", "out/CODEOWNERS"),
        0,
        outputs=("out",),
        check=code_owned_by_finance,
        issue=29,
    ),
]


SPEECH = "teams/speech.yaml"
SECOND_TEAM = """  - name: speech-extra
    owners: ["@northwind/speech-leads"]
    groups: {gke: speech-extra@northwind.ai, aks: 27b557e9-032b-536e-b0aa-d20ebb93b0e5}
    namespaces: [speech-extra]
"""
SPEECH_TERMS = "{team: speech, cost_center: CC-2003, cohort: product, priority_class: training"
"""The start of speech's entry in org.yaml's `team_terms`, where its money and sharing settings live (issue 37)."""


def move_llm_pretrain(centre: str) -> tuple[Callable[[Path], None], ...]:
    """llm-pretrain moved from CC-1001 to `centre`, and CC-1001, left without a team, retired: its budget and its
    name go (a budget or a name for a cost centre no team has is refused)."""
    return (
        terms("llm-pretrain, cost_center: CC-1001", f"llm-pretrain, cost_center: {centre}"),
        replace("org.yaml", "    - {cost_center: CC-1001, quarter: 2027Q1, usd: 4200000}\n", ""),
        replace("org.yaml", "    CC-1001: Foundation models\n", ""),
    )


def terms(old: str, new: str) -> Callable[[Path], None]:
    """An edit of org.yaml's `team_terms` (the teams' cost centres, cohorts, priority classes, weights)."""
    return replace("org.yaml", old, new)


def add_second_team(inv: Path) -> None:
    """speech-extra added inside speech's team file, with its terms in org.yaml (where finance approves them)."""
    (inv / SPEECH).write_text((inv / SPEECH).read_text() + SECOND_TEAM)
    terms("team_terms:\n", "team_terms:\n  - {team: speech-extra, cost_center: CC-1001, cohort: product}\n")(inv)


DIFF_LINES = 1000
"""A text diff holds the Kueue objects' diff too: a cost-centre label changes on every object of the team."""


def diff_text() -> tuple[str, ...]:
    return ("diff", "HEAD", "--inventory", "inv", "--format", "text")


CASES += [
    # 4. money moves without a quota change: shown, finance asked
    Case(
        "diff-cost-centre-change",
        4,
        git_repo(*move_llm_pretrain("CC-2003")),
        diff_text(),
        0,
        says=(
            "llm-pretrain: cost_center CC-1001 -> CC-2003",
            "@northwind/finops: changes policy, llm-pretrain: cost_center CC-1001 -> CC-2003",
        ),
        never=("No quota, capacity or price changes",),
        max_lines=DIFF_LINES,
        issue=29,
    ),
    Case(
        "diff-team-added-inside-a-team-file",
        4,
        git_repo(add_second_team),
        diff_text(),
        0,
        says=("speech-extra (added team): added in teams/speech.yaml", "@northwind/finops: speech-extra: added in"),
        max_lines=DIFF_LINES,
        issue=29,
    ),
    Case(
        "diff-team-moved-between-files",
        4,
        git_repo(
            lambda inv: (inv / "teams" / "speech2.yaml").write_text((inv / SPEECH).read_text()),
            lambda inv: (inv / SPEECH).unlink(),
        ),
        diff_text(),
        0,
        says=("speech: moved from teams/speech.yaml to teams/speech2.yaml", "@northwind/finops"),
        max_lines=DIFF_LINES,
        issue=29,
    ),
    # 17. sharing moves: a cohort or fair-sharing change is shown, replayed, the cohort's teams told, finance asked
    Case(
        "diff-cohort-change",
        17,
        git_repo(terms(SPEECH_TERMS, SPEECH_TERMS.replace("product", "research"))),
        diff_text(),
        0,
        says=(
            "speech: cohort product -> research",
            "Impact on last 30 days' demand",
            "llm-pretrain: no quota change, its cohort changes with speech",
            "inference: no quota change, its cohort changes with speech",
            "@northwind/finops: speech: cohort product -> research",
        ),
        max_lines=DIFF_LINES,
        issue=29,
    ),
    Case(
        "diff-fair-sharing-weight",
        17,
        git_repo(terms(SPEECH_TERMS, SPEECH_TERMS + ", fair_sharing_weight: 1000")),
        diff_text(),
        0,
        says=(
            "speech: fair_sharing_weight none -> 1000.0",
            "Impact on last 30 days' demand",
            "inference: no quota change, its cohort changes with speech",
            "@northwind/finops: speech: fair_sharing_weight none -> 1000.0",
        ),
        max_lines=DIFF_LINES,
        issue=29,
    ),
]

PLATFORM_NAMESPACES = (
    "openshift-logging",
    "cert-manager",
    "istio-system",
    "ingress-nginx",
    "local-path-storage",
    "flux-system",
    "argocd",
)

CASES += [
    # 5. the tool's own namespace and the platform add-ons' are reserved (one list, with sources)
    Case(
        "observability-namespace",
        5,
        small(team(namespaces=["monitoring"])),
        ("validate", "inv"),
        1,
        says=("teams[0].namespaces[0]", "namespace `monitoring` is reserved (Quartermaster's observability objects"),
        issue=29,
    ),
    Case(
        "observability-namespace-synth",
        5,
        small(team(namespaces=["ml", "monitoring"])),
        ("synth", "inv", "--out", "out"),
        1,
        says=("teams[0].namespaces[1]", "is reserved"),
        issue=29,
    ),
    Case(
        "platform-add-on-namespaces",
        5,
        small(team(namespaces=list(PLATFORM_NAMESPACES))),
        ("validate", "inv"),
        1,
        says=tuple(
            f"teams[0].namespaces[{i}]: namespace `{ns}` is reserved" for i, ns in enumerate(PLATFORM_NAMESPACES)
        ),
        issue=29,
    ),
    # 29. `group` has the length limit of `groups`
    Case(
        "group-of-5-megabytes",
        29,
        small(team(group="g" * 5_000_000)),
        ("validate", "inv"),
        1,
        says=("teams[0].group", "at most 256 characters"),
        max_lines=4,
        issue=29,
    ),
]


def usage_folder(**used: str) -> Callable[[Path], None]:
    """The example inventory as `inv/`, and a folder `d/` of usage files, each with one row of `inference` in
    `p5-od` in an hour of its own on 1 October (file name -> accelerators; `__q__` stands for `?`, `__l__` and
    `__r__` for `[` and `]`), and `idle.csv` with a row of 0 on each other day of October (a day without records
    is refused, issue 37)."""

    def build(case: Path) -> None:
        example()(case)
        (case / "d").mkdir()
        for hour, (name, value) in enumerate(used.items()):
            name = name.replace("__q__", "?").replace("__l__", "[").replace("__r__", "]")
            row = EKS_ROW.format(used=value).replace("T00:", f"T{hour:02d}:")
            (case / "d" / f"{name}.csv").write_text(HEADER + row)
        idle = [
            EKS_ROW.format(used=0).replace("2026-10-01", f"2026-10-{day:02d}").replace(",0,1\n", ",0,0\n")
            for day in range(2, 32)
        ]
        (case / "d" / "idle.csv").write_text(HEADER + "".join(idle))

    return build


def charged(hours: str) -> Callable[[Path], None]:
    def check(case: Path) -> None:
        teams = json.loads((case / "out" / "meter.json").read_text())["teams"]
        assert [(t["team"], t["charged_hours"]) for t in teams] == [("inference", hours)], teams

    return check


CASES += [
    # 6. DuckDB read a file name as a glob: each file is read once, whatever its name
    Case(
        "meter-file-named-like-a-glob",
        6,
        usage_folder(x1="1", x__q__="2"),
        ("meter", "d", "--inventory", "inv", "--out", "out"),
        0,
        outputs=("out",),
        check=charged("3"),  # 1 + 2 accelerator-hours, one hour each
        issue=29,
    ),
    Case(
        "meter-file-named-like-a-class",
        6,
        usage_folder(a1="1", a__l__1__r__="5"),
        ("meter", "d", "--inventory", "inv", "--out", "out"),
        0,
        outputs=("out",),
        check=charged("6"),  # 1 + 5
        issue=29,
    ),
]

CASES += [
    # 13. an output onto or into an input outside the inventory is refused before any work
    Case(
        "export-out-onto-its-usage",
        13,
        usage_file("1"),
        ("export", "focus", "inv", "--usage", "u.csv", "--out", "u.csv"),
        2,
        says=("--out u.csv: is the input u.csv",),
        issue=29,
    ),
    Case(
        "meter-out-into-its-folder",
        13,
        usage_folder(x1="1"),
        ("meter", "d", "--inventory", "inv", "--out", "d"),
        2,
        says=("--out d: is the input d, or inside it",),
        issue=29,
    ),
]


LF_KEY = '"x\\n::error title=Finance approved::ok\\n::add-mask::x": 1\n'
"""A YAML key holding line feeds and GitHub workflow commands (`\\n` inside double quotes is a line feed)."""

CASES += [
    # 7. a line feed in a YAML key cannot start a line of the output (a workflow command in CI)
    Case(
        "line-feed-in-a-key-validate",
        7,
        small(**{"extra.yaml": LF_KEY}),
        ("validate", "inv"),
        1,
        says=("\\x0a::error title=Finance approved::ok\\x0a::add-mask::x",),
        never=("\n::error", "\n::add-mask"),
        issue=29,
    ),
    Case(
        "line-feed-in-a-key-diff",
        7,
        git_repo(lambda inv: (inv / "extra.yaml").write_text(LF_KEY)),
        ("diff", "HEAD", "--inventory", "inv", "--format", "text"),
        1,
        says=("\\x0a::error title=Finance approved::ok",),
        never=("\n::error", "\n::add-mask"),
        issue=29,
    ),
    Case(
        "file-named-like-a-workflow-command",
        7,
        lambda case: (small()(case), (case / "::error::x.yaml").write_text("bad: 1\n")),
        ("validate", "."),
        1,
        says=("\\x3a:error::x.yaml:1 bad: unknown section",),
        never=("\n::error",),
        issue=29,
    ),
]

TEMPLATE_NAME = '{{ query "up" }}.yaml'

CASES += [
    # 8. a file name that is a Go template never reaches an alert's runbook (refused; and escaped where written)
    Case(
        "template-in-a-file-name",
        8,
        example(lambda inv: (inv / "teams" / TEMPLATE_NAME).write_text("teams: []\n")),
        ("observability", "render", "inv", "--out", "out"),
        1,
        says=('inv/teams/{{ query "up" }}.yaml:?:', PATTERN_SYNTAX),
        issue=29,
    ),
    Case(
        "unclosed-template-in-a-file-name",
        8,
        example(lambda inv: (inv / "teams" / "{{ x.yaml").write_text("teams: []\n")),
        ("observability", "render", "inv", "--out", "out"),
        1,
        says=("inv/teams/{{ x.yaml:?:", PATTERN_SYNTAX),
        issue=29,
    ),
]


def served(payload: bytes) -> Callable[[Path], AbstractContextManager[str]]:
    return prom.answering(prom.body(payload))


ESCAPES = {**prom.LABELS, "cluster": "\x1b]0;pwned\x07\x1b[2J", "cluster_queue": "x\n::error::forged"}
"""A series whose labels carry a window-title escape, a screen wipe and a forged workflow command."""

CASES += [
    # 9. a point before the window was written into the window's last hours
    Case(
        "pull-point-before-the-window",
        9,
        example(),
        pull(),
        1,
        says=("series 1 of the answer", "point 1 is at", "outside the asked range"),
        issue=29,
        serve=served(prom.one_series((prom.at_hour(-5), "4"))),
    ),
    # 10. a server sending a byte now and then: the deadline is for the whole answer, not each read
    Case(
        "pull-slow-drip",
        10,
        example(),
        pull("--timeout", "2"),
        1,
        says=("no complete answer within the deadline",),
        issue=29,
        serve=prom.answering(prom.drip(0.3)),
    ),
    # 11. a huge answer: refused past the limit, parsed as it streams (the case's 500 MB guard holds)
    Case(
        "pull-huge-answer",
        11,
        example(),
        pull("--max-answer-mb", "8"),
        1,
        says=("the answer is larger than 8,388,608 bytes",),
        issue=29,
        serve=prom.answering(prom.endless(64)),
    ),
    # 19. malformed answers: each a located error, never a traceback
    Case(
        "pull-value-not-a-number",
        19,
        example(),
        pull(),
        1,
        says=("point 1 has the value 'many', not a number",),
        issue=29,
        serve=served(prom.one_series((prom.at_hour(0), "many"))),
    ),
    Case(
        "pull-no-result",
        19,
        example(),
        pull(),
        1,
        says=("no Kueue usage series",),
        issue=29,
        serve=served(b'{"status":"success","data":{"resultType":"matrix"}}'),
    ),
    Case(
        "pull-no-metric",
        19,
        example(),
        pull(),
        1,
        says=("series 1 of the answer: is not an object with `metric` and `values`",),
        issue=29,
        serve=served(prom.matrix({"values": [[prom.at_hour(0), "1"]]})),
    ),
    Case(
        "pull-values-not-pairs",
        19,
        example(),
        pull(),
        1,
        says=("`values` is not a list of [time, value] pairs",),
        issue=29,
        serve=served(prom.matrix({"metric": prom.LABELS, "values": [[prom.at_hour(0)]]})),
    ),
    Case(
        "pull-label-not-text",
        19,
        example(),
        pull(),
        1,
        says=("a label value that is not text",),
        issue=29,
        serve=served(prom.one_series((prom.at_hour(0), "1"), labels={**prom.LABELS, "flavor": 5})),
    ),
    Case(
        "pull-point-after-the-window",
        19,
        example(),
        pull(),
        1,
        says=("outside the asked range",),
        issue=29,
        serve=served(prom.one_series((prom.at_hour(400), "1"))),
    ),
    Case(
        "pull-nan",
        19,
        example(),
        pull(),
        1,
        says=("the value NaN is not a finite number",),
        issue=29,
        serve=served(prom.one_series((prom.at_hour(0), "NaN"))),
    ),
    # 22. label values reach the terminal as text, never as escapes or lines of their own
    Case(
        "pull-escapes-in-labels",
        22,
        example(),
        pull(),
        1,
        says=("\\x1b]0;pwned\\x07\\x1b[2J", "x\\n::error::forged"),
        never=("\x1b", "\n::error"),
        issue=29,
        serve=served(prom.one_series((prom.at_hour(0), "1"), labels=ESCAPES)),
    ),
    # 23. options pasted into PromQL or Kubernetes, and credentials in a URL
    Case(
        "pull-cluster-label-injection",
        23,
        example(),
        (*pull()[:-2], "--cluster-label", 'cluster"}) or vector(1'),
        2,
        says=("--cluster-label", "is not a Prometheus label name"),
        issue=29,
        serve=served(prom.matrix()),
    ),
    Case(
        "pull-password-in-the-url",
        23,
        example(),
        tuple(a if a != "{url}" else "http://ann:hunter2@127.0.0.1:9" for a in pull()),
        2,
        says=("credentials in the URL are not accepted", "QM_PROMETHEUS_PASSWORD"),
        never=("hunter2",),
        issue=29,
    ),
    Case(
        "observability-namespace-with-a-line-feed",
        23,
        example(),
        ("observability", "render", "inv", "--out", "out", "--namespace", "monitoring\nkind: Secret"),
        2,
        says=("--namespace monitoring\\x0akind: Secret: not a Kubernetes namespace name",),
        issue=29,
    ),
]

SHARED_QUOTAS = """teams:
  - name: a
    cost_center: CC-1
    owners: ['@a']
    namespaces: [a]
    groups: {gke: a@example.com}
    quotas: &q
      - {flavor: h100, nominal: 1}
  - name: ml2
    cost_center: CC-1
    owners: ['@b']
    namespaces: [ml2]
    groups: {gke: b@example.com}
    quotas: *q
"""

CASES += [
    # 12. a team whose `quotas:` aliases another team's list: editing it would edit both
    Case(
        "quota-set-aliased-list",
        12,
        small(lambda: make_inventory().pool("h100-b", nodes=2), **{"shared.yaml": SHARED_QUOTAS}),
        ("quota", "set", "ml2", "h100-b", "--nominal", "2", "--inventory", "inv"),
        1,
        says=("shared.yaml:14 teams[1].quotas: the team's `quotas` is written as `*q`",),
        issue=29,
    ),
    Case(
        "quota-set-anchored-list-new-entry",
        12,
        small(lambda: make_inventory().pool("h100-b", nodes=2), **{"shared.yaml": SHARED_QUOTAS}),
        ("quota", "set", "a", "h100-b", "--nominal", "2", "--inventory", "inv"),
        1,
        says=("teams[0].quotas: its quotas carries the anchor `&q`",),
        issue=29,
    ),
]


def unknown_teams(count: int) -> Callable[[Path], None]:
    """The example inventory, and `u.parquet` with `count` rows, each naming a team of its own that the inventory
    does not know."""

    def build(case: Path) -> None:
        example()(case)
        hour = dt.datetime(2026, 10, 1)
        table = pa.table(
            {
                "hour": [hour] * count,
                "cluster": ["eks-us-east-1"] * count,
                "team": [f"t{i}" for i in range(count)],
                "flavor": ["p5-od"] * count,
                "accelerators_used": [1.0] * count,
                "accelerators_requested": [1.0] * count,
            }
        )
        pq.write_table(table, case / "u.parquet")

    return build


CASES += [
    # 14. distinct unknown names are checked in DuckDB, not as a Python object each
    Case(
        "meter-200k-unknown-teams",
        14,
        unknown_teams(200_000),
        ("meter", "u.parquet", "--inventory", "inv"),
        1,
        says=("u.parquet:2 team: team `t0` is not a team of the inventory (200000 rows; the first is shown)",),
        issue=29,
    ),
]

CASES += [
    # 15. an unreachable object store is reported after a bounded retry, not after 600 s and more of silence
    Case(
        "meter-unreachable-gcs",
        15,
        example(),
        ("meter", "gs://quartermaster-no-such-bucket/usage.parquet", "--inventory", "inv"),
        1,
        says=("gs://quartermaster-no-such-bucket/usage.parquet: cannot read usage records",),
        issue=29,
    ),
]

OUTSIDE = "is outside the calendar the inventory may name (years 2000 to 2100)"

CASES += [
    # 20. options at their edges: a located usage error, never a traceback or a runaway
    Case(
        "meter-period-9999",
        20,
        usage_file("1"),
        ("meter", "u.csv", "--inventory", "inv", "--period", "9999-12"),
        2,
        says=(f"--period `9999-12` {OUTSIDE}",),
        issue=29,
    ),
    Case(
        "export-period-9999",
        20,
        example(),
        ("export", "focus", "inv", "--period", "9999-12", "--out", "out/f.csv"),
        2,
        says=(f"--period `9999-12` {OUTSIDE}",),
        issue=29,
    ),
    Case(
        "pull-until-9999",
        20,
        example(),
        (*pull()[:6], "--until", "9999-12-31T23:00", *pull()[8:]),
        2,
        says=("--until 9999-12-31T23:00: is outside 2000-2100",),
        issue=29,
    ),
    Case(
        "pull-since-year-1",
        20,
        example(),
        (*pull()[:4], "--since", "0001-01-01", *pull()[6:]),
        2,
        says=("--since 0001-01-01: is outside 2000-2100",),
        issue=29,
    ),
    Case(
        "diff-impact-days-huge",
        20,
        git_repo(),
        ("diff", "HEAD", "--inventory", "inv", "--impact-days", "100000000"),
        2,
        says=("--impact-days",),
        issue=29,
    ),
    Case(
        "plan-draws-huge",
        20,
        example(),
        ("plan", "inv", "--out", "out/p", "--draws", "1000000000000"),
        2,
        says=("--draws",),
        issue=29,
    ),
    Case(
        "plan-sweep-grid-huge",
        20,
        example(),
        ("plan", "inv", "--out", "out/p", *(a for i in range(8) for a in ("--sweep", f"demand{i}=1,2,3,4,5,6,7,8"))),
        2,
        says=("scenarios, each one solve; at most 10,000",),
        issue=29,
    ),
    # 27. a period outside the calendar is refused, not billed as a year of idle capacity
    Case(
        "meter-period-1900",
        27,
        usage_file("1"),
        ("meter", "u.csv", "--inventory", "inv", "--period", "1900-01"),
        2,
        says=(f"--period `1900-01` {OUTSIDE}",),
        never=("$1,551,032.87",),
        issue=29,
    ),
    Case(
        "meter-period-2101",
        27,
        usage_file("1"),
        ("meter", "u.csv", "--inventory", "inv", "--period", "2101-01"),
        2,
        says=(f"--period `2101-01` {OUTSIDE}",),
        issue=29,
    ),
]


def usage_parquet(name: str = "u.parquet", **columns: object) -> Callable[[Path], None]:
    """The example inventory, and a one-row Parquet usage file of `inference` in `p5-od` with `columns` replaced
    (each an Arrow array of one value)."""

    def build(case: Path) -> None:
        example()(case)
        row: dict[str, object] = {
            "hour": pa.array([dt.datetime(2026, 10, 1)], pa.timestamp("us")),
            "cluster": ["eks-us-east-1"],
            "team": ["inference"],
            "flavor": ["p5-od"],
            "accelerators_used": [1.0],
            "accelerators_requested": [1.0],
        }
        (case / name).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({k: v for k, v in {**row, **columns}.items() if v is not None}), case / name)

    return build


def gzip_named_csv(case: Path) -> None:
    example()(case)
    (case / "u.csv").write_bytes(gzip.compress((HEADER + EKS_ROW.format(used="1")).encode()))


CASES += [
    # 18. usage files that made qm meter trace back
    Case(
        "meter-hour-infinity",
        18,
        example(lambda inv: (inv.parent / "u.csv").write_text(HEADER + "infinity,eks-us-east-1,inference,p5-od,1,1\n")),
        ("meter", "u.csv", "--inventory", "inv"),
        1,
        says=("u.csv:2 hour: hour is not an ISO 8601 time (got 'infinity')",),
        issue=29,
    ),
    Case(
        "meter-timestamp-beyond-python",
        18,
        usage_parquet(hour=pa.array([300_000_000_000_000_000], pa.timestamp("us"))),  # the year 11476
        ("meter", "u.parquet", "--inventory", "inv"),
        1,
        says=("u.parquet:2 hour: hour is outside 2000-2100",),
        issue=29,
    ),
    Case(
        "meter-column-only-in-a-folder-name",
        18,
        usage_parquet("d/team=inference/u.parquet", team=None),
        ("meter", "d", "--inventory", "inv"),
        1,
        says=("u.parquet:1 header", "missing column(s)"),
        issue=29,
    ),
    Case(
        "meter-struct-team",
        18,
        usage_parquet(team=pa.array([{"a": "inference"}])),
        ("meter", "u.parquet", "--inventory", "inv"),
        1,
        says=("u.parquet:2 team: team `{'a': 'inference'}` is not a team of the inventory",),
        issue=29,
    ),
    Case(
        "meter-gzip-named-csv",
        18,
        gzip_named_csv,
        ("meter", "u.csv", "--inventory", "inv"),
        1,
        says=("u.csv: cannot read usage records",),
        issue=29,
    ),
    # 25. a number too large for metering's integers is located like any other
    Case(
        "meter-1e308",
        25,
        usage_file("1e308"),
        ("meter", "u.csv", "--inventory", "inv"),
        1,
        says=("u.csv:2 accelerators_used", BOUND),
        issue=29,
    ),
    # 26. a boolean is no number of accelerators
    Case(
        "meter-boolean-accelerators",
        26,
        usage_parquet(accelerators_used=[True]),
        ("meter", "u.parquet", "--inventory", "inv"),
        1,
        says=("u.parquet:2 accelerators_used", "(got True)"),
        issue=29,
    ),
    # 28. a header of tens of thousands of columns is refused from its first line
    Case(
        "meter-20000-columns",
        28,
        example(lambda inv: (inv.parent / "u.csv").write_text(",".join(f"c{i}" for i in range(20_000)) + "\n")),
        ("meter", "u.csv", "--inventory", "inv"),
        1,
        says=("u.csv:1 header: u.csv: the header has 20,000 or more columns; a usage file has 6",),
        issue=29,
    ),
]


def corrupt_plan(case: Path) -> None:
    example()(case)
    (case / "plan").mkdir()
    (case / "plan" / "plan.json").write_text('{"not": "a plan"\n')


CASES += [
    # 21. a corrupt plan folder and Kueue objects of the wrong shape: located, never a traceback
    Case(
        "report-corrupt-plan-json",
        21,
        corrupt_plan,
        ("report", "inv", "--plan", "plan", "--out", "out"),
        2,
        says=("--plan plan: the plan in it cannot be read (plan.json: Expecting ',' delimiter",),
        issue=29,
    ),
    Case(
        "import-node-labels-a-list",
        21,
        lambda case: (case / "rf.yaml").write_text(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: a\nspec:\n  nodeLabels: [x]\n"
        ),
        ("import", "kueue", "rf.yaml"),
        1,
        says=("rf.yaml:6 ResourceFlavor/a spec.nodeLabels: ['x'] is not of type 'object'",),
        issue=29,
    ),
    Case(
        "import-resource-groups-a-string",
        21,
        lambda case: (case / "cq.yaml").write_text(
            kueue_manifest("").replace("spec: {}", 'spec:\n  resourceGroups: "x"')
        ),
        ("import", "kueue", "cq.yaml"),
        1,
        says=("cq.yaml:", "nothing was imported"),
        issue=29,
    ),
    Case(
        "import-flavors-a-number",
        21,
        lambda case: (case / "cq.yaml").write_text(
            kueue_manifest("").replace(
                "spec: {}", "spec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: 5"
            )
        ),
        ("import", "kueue", "cq.yaml"),
        1,
        says=("cq.yaml:7 ClusterQueue/a spec.resourceGroups[0]",),
        issue=29,
    ),
]

CASES += [
    # 24. a message names the value's path, not a bare list index, and adds no follow-on errors
    Case(
        "message-names-the-value",
        24,
        example(replace(SPEECH, "namespaces: [speech]", "namespaces: [Bad_NS]")),
        ("validate", "inv"),
        1,
        says=("teams[0].namespaces[0]: `namespaces[0]` is not a valid name (got 'Bad_NS')",),
        never=("`0` is not", "tuple should have at least 1 item", "is not the cost centre of any team"),
        max_lines=2,
        issue=29,
    ),
]


# --- issue 37: the fourth round -----------------------------------------------------------------------------------

SLOW = pull("--timeout", "2")
"""A pull whose whole exchange must end within 2 s: every case below would hold a per-read timeout for minutes."""
LATE = ("no complete answer within the deadline",)
NOT_HTTP = ("the answer is not valid HTTP",)
ANSWER = prom.matrix()

CASES += [
    # 3. one deadline over connect, status line, headers, 1xx answers, chunk lines, body and trailers
    Case(
        "pull-status-line-dripped",
        3,
        example(),
        SLOW,
        1,
        says=LATE,
        issue=37,
        serve=prom.answering(prom.raw(then=b"HTTP/1.1 200 OK\r\n", every=0.3)),
    ),
    Case(
        "pull-header-dripped",
        3,
        example(),
        SLOW,
        1,
        says=LATE,
        issue=37,
        serve=prom.answering(prom.raw(prom.OK_HEAD, then=b"X-Slow: " + b"z" * 40 + b"\r\n", every=0.2)),
    ),
    Case(
        "pull-endless-100-continue",
        3,
        example(),
        SLOW,
        1,
        says=LATE,
        issue=37,
        serve=prom.answering(prom.raw(then=b"HTTP/1.1 100 Continue\r\n\r\n", forever=True)),
    ),
    Case(
        "pull-chunk-size-dripped",
        3,
        example(),
        SLOW,
        1,
        says=LATE,
        issue=37,
        serve=prom.answering(prom.raw(prom.CHUNKED, then=b"000000000000000000001\r\n", every=0.2)),
    ),
    Case(
        "pull-trailers-dripped",
        3,
        example(),
        SLOW,
        1,
        says=LATE,
        issue=37,
        serve=prom.answering(
            prom.raw(prom.CHUNKED + prom.chunk(ANSWER) + b"0\r\n", then=b"X-Trailer: 1\r\n", forever=True, every=0.05)
        ),
    ),
    # variant: a body that never ends, sent fast enough for every read, as a stream of blank chunk extensions
    Case(
        "pull-endless-trailers-fast",
        3,
        example(),
        SLOW,
        1,
        says=LATE,
        issue=37,
        serve=prom.answering(prom.raw(prom.CHUNKED + prom.chunk(ANSWER) + b"0\r\n", then=b"X-T: 1\r\n", forever=True)),
    ),
    # every protocol error is a located error
    Case(
        "pull-header-line-too-long",
        3,
        example(),
        pull(),
        1,
        says=(*NOT_HTTP, "LineTooLong"),
        issue=37,
        serve=prom.answering(prom.raw(prom.OK_HEAD + b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n")),
    ),
    Case(
        "pull-200-headers",
        3,
        example(),
        pull(),
        1,
        says=(*NOT_HTTP, "more than 100 headers"),
        issue=37,
        serve=prom.answering(prom.raw(prom.OK_HEAD + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n")),
    ),
    Case(
        "pull-malformed-status-line",
        3,
        example(),
        pull(),
        1,
        says=(*NOT_HTTP, "BadStatusLine"),
        issue=37,
        serve=prom.answering(prom.raw(b"HTTQ/1.1 2OO OK\r\n\r\n")),
    ),
    Case(
        "pull-bad-chunk-size",
        3,
        example(),
        pull(),
        1,
        says=NOT_HTTP,
        issue=37,
        serve=prom.answering(prom.raw(prom.CHUNKED + b"zz" * 40_000 + b"\r\n")),
    ),
    # memory bounded by the limits whatever the shape: deep nesting, one huge series
    Case(
        "pull-nested-20000-deep",
        3,
        example(),
        pull(),
        1,
        says=("nests arrays and objects more than 16 deep",),
        issue=37,
        serve=served(prom.nested(20_000)),
    ),
    Case(
        "pull-one-huge-series",
        3,
        example(),
        pull(),
        1,
        says=("series 1 of the answer takes more than", "one point per hour of the asked range"),
        issue=37,
        serve=served(prom.one_series(*[(prom.at_hour(0), "1")] * 400_000)),
    ),
    # duplicates: refused, never one overwriting another
    Case(
        "pull-duplicate-series",
        3,
        example(),
        pull(),
        1,
        says=("series 2 of the answer has the labels of series 1",),
        issue=37,
        serve=served(prom.matrix(*[{"metric": prom.LABELS, "values": [[prom.at_hour(0), "1"]]}] * 2)),
    ),
    Case(
        "pull-duplicate-point",
        3,
        example(),
        pull(),
        1,
        says=("point 2 is at", "each time comes once, in order"),
        issue=37,
        serve=served(prom.one_series((prom.at_hour(0), "1"), (prom.at_hour(0), "2"))),
    ),
    # variant: two series that differ only in a label the pull does not read land on the same team, pool and hour
    Case(
        "pull-two-series-one-hour",
        3,
        example(),
        pull(),
        1,
        says=("two series of", "for the hour from 2026-10-01 00:00 UTC", "nothing is written"),
        issue=37,
        serve=served(
            prom.matrix(*[{"metric": {**prom.LABELS, "replica": r}, "values": [[prom.at_hour(0), "1"]]} for r in "ab"])
        ),
    ),
    # credentials checked before use and never printed
    Case(
        "pull-token-with-a-line-break",
        3,
        example(),
        pull(),
        2,
        says=("QM_PROMETHEUS_TOKEN holds a character a bearer token cannot have", "Its value is not shown"),
        never=("s3cr3t", "Traceback"),
        issue=37,
        serve=served(ANSWER),
        env=(("QM_PROMETHEUS_TOKEN", "s3cr3t\nX-Injected: 1"),),
    ),
    Case(
        "pull-password-with-a-line-break",
        3,
        example(),
        pull(),
        2,
        says=("QM_PROMETHEUS_PASSWORD holds a line break",),
        never=("hunter2",),
        issue=37,
        serve=served(ANSWER),
        env=(("QM_PROMETHEUS_USER", "qm"), ("QM_PROMETHEUS_PASSWORD", "hunter2\r\n")),
    ),
]

# --- issue 37, point 4: no duplicates, no look-alikes ----------------------------------------------------------

HEADER_OF_DEMAND, DEMAND_ROW = (INVENTORY / "demand.csv").read_text().splitlines()[:2]
PRICE_ROW = (INVENTORY / "prices.csv").read_text().splitlines()[1]
BUDGET = "    - {cost_center: CC-2001, quarter: 2027Q1, usd: 900000}"
CB_TERM = "    term_months: 0\n    term_days: 91"


def add_lines(file: str, text: str) -> Callable[[Path], None]:
    """An edit: append `text` (whole lines) to one file of the inventory."""

    def change(inv: Path) -> None:
        with (inv / file).open("a", encoding="utf-8") as out:
            out.write(text)

    return change


CASES += [
    Case(
        "price-key-twice",
        4,  # the first row won, an appended update was ignored
        example(add_lines("prices.csv", PRICE_ROW.replace(",92.9376,", ",1.0,") + "\n")),
        ("validate", "inv"),
        1,
        says=(
            "inv/prices.csv:24 row 24: price (machine, site, pricing model, term)",
            "(the first at inv/prices.csv:2)",
        ),
        issue=37,
    ),
    Case(
        "demand-row-twice-in-two-files",  # variant: the repeat in a second demand file
        4,
        example(lambda inv: (inv / "demand-q1-update.csv").write_text(f"{HEADER_OF_DEMAND}\n{DEMAND_ROW}\n")),
        ("plan", "inv", "--out", "out"),
        1,
        says=(
            "inv/demand.csv:2 row 2: demand row (period, team, accelerator, site, scenario)",
            "(the first at inv/demand-q1-update.csv:2)",
        ),
        issue=37,
    ),
    Case(
        "budget-twice",  # `qm plan` traced back from PuLP
        4,
        example(replace("org.yaml", BUDGET, f"{BUDGET}\n{BUDGET.replace('900000', '1')}")),
        ("plan", "inv", "--out", "out"),
        1,
        says=(f"inv/org.yaml:{line_of('org.yaml', BUDGET) + 1} policy.budgets[3]: budget (cost centre, quarter)",),
        issue=37,
    ),
    Case(
        "budget-for-a-look-alike-cost-centre",  # variant: a letter O for a zero
        4,
        example(replace("org.yaml", BUDGET, BUDGET.replace("CC-2001", "CC-2OO1"))),
        ("validate", "inv"),
        1,
        says=("policy.budgets[2].cost_center: budget for cost centre `CC-2OO1`", "Did you mean `CC-2001`?"),
        max_lines=3,
        issue=37,
    ),
    Case(
        "quarter-in-devanagari-digits",  # variant: the issue's case was `\d`; Devanagari 2027 in a demand row
        4,
        example(replace("demand.csv", DEMAND_ROW, DEMAND_ROW.replace("2027Q1", "\u0968\u0966\u0968\u096dQ1"))),
        ("validate", "inv"),
        1,
        says=("inv/demand.csv:2 period: `period` is not a quarter",),
        issue=37,
    ),
    Case(
        "budget-quarter-outside-the-calendar",
        4,
        example(replace("org.yaml", BUDGET, BUDGET.replace("2027Q1", "2199Q1"))),
        ("validate", "inv"),
        1,
        says=("policy.budgets[2].quarter: `quarter` is not a quarter (got '2199Q1')", "from 2000 to 2100"),
        issue=37,
    ),
    Case(
        "capacity-block-of-no-length",
        4,
        example(replace("commitments.yaml", CB_TERM, "    term_months: 0\n    term_days: 0")),
        ("validate", "inv"),
        1,
        says=("the term is empty (term_months and term_days are both 0)",),
        issue=37,
    ),
    Case(
        "term-days-on-a-committed-use-discount",
        4,
        example(replace("commitments.yaml", "    term_months: 36\n", "    term_months: 36\n    term_days: 14\n")),
        ("validate", "inv"),
        1,
        says=("commitments[0]: term_days is for capacity blocks only (got a `cud`)",),
        issue=37,
    ),
    Case(
        "term-ending-after-the-calendar",  # variant: a capacity block starting on the calendar's last day
        4,
        example(replace("commitments.yaml", "    start: 2026-10-01", "    start: 2100-12-31")),
        ("validate", "inv"),
        1,
        says=("the term ends 2101-04-01, after the calendar's last day 2100-12-31",),
        issue=37,
    ),
]

# --- issue 37, point 7: options bounded and finite, no traceback for a date-shaped value or a deep file ---------

FINITE = "is not a finite number from 0 to 1"
ORG_KEY = "  allow_oversubscription: false\n"


def deep_plan(case: Path) -> None:
    """A plan folder whose plan.json is a list nested 100,000 deep (the issue's case was an object)."""
    example()(case)
    (case / "plan").mkdir()
    (case / "plan" / "plan.json").write_text("[" * 100_000 + "]" * 100_000)


CASES += [
    Case("plan-gap-nan", 7, example(), ("plan", "inv", "--gap", "nan", "--out", "out"), 2, says=(FINITE,), issue=37),
    Case(
        "plan-min-utilisation-above-one",
        7,
        example(),
        ("plan", "inv", "--min-utilisation", "2", "--out", "out"),
        2,
        says=(FINITE,),
        issue=37,
    ),
    Case(  # variant: the issue's case was -inf's cousin nan; an infinite time limit
        "plan-time-limit-infinite",
        7,
        example(),
        ("plan", "inv", "--time-limit", "inf", "--out", "out"),
        2,
        says=("is not a finite number from 0 to 86400",),
        issue=37,
    ),
    Case(  # variant: one team's demand, not the whole fleet's
        "plan-what-if-one-team-twentyfold",
        7,
        example(),
        ("plan", "inv", "--what-if", "demand:speech=+1900%", "--out", "out"),
        2,
        says=("multiplies speech by 20; at most by 11 (+1000%)",),
        issue=37,
    ),
    Case(
        "plan-start-before-the-calendar",
        7,
        example(),
        ("plan", "inv", "--start", "1999Q1", "--out", "out"),
        2,
        says=("'1999Q1' is not a quarter from 2000Q1 to 2100Q4",),
        issue=37,
    ),
    Case(
        "plan-horizon-past-the-calendar",
        7,
        example(),
        ("plan", "inv", "--start", "2100Q3", "--horizon", "2y", "--out", "out"),
        2,
        says=("a horizon of 8 quarters from 2100Q3 ends after 2100Q4", "use --horizon 2q or an earlier --start"),
        issue=39,
    ),
    Case(
        "report-quarter-not-a-quarter",
        7,
        example(),
        ("report", "inv", "--quarter", "2027Q9", "--out", "out"),
        2,
        says=("'2027Q9' is not a quarter from 2000Q1 to 2100Q4",),
        issue=39,
    ),
    Case(  # variant: inside the calendar, but years before the usage history (the same pandas traceback)
        "plan-start-before-the-history",
        7,
        example(),
        ("plan", "inv", "--start", "2003Q2", "--out", "out"),
        2,
        says=("--start 2003Q2 is before the usage history begins (2026-10-01)", "start at 2026Q4 or later"),
        issue=37,
    ),
    Case(
        "rayjob-results-claim-with-a-path",
        7,
        example(),
        ("plan", "inv", "--sweep", "demand=0,+10%", "--rayjob", "speech", "--image", "i", "--results-claim", "x/../y"),
        2,
        says=("'x/../y' is not a Kubernetes object name",),
        issue=37,
    ),
    Case(  # variant: 29 February of a year that is not a leap year, through `qm codeowners --check`
        "codeowners-date-that-is-no-day",
        7,
        example(replace(SPEECH, "namespaces: [speech]", "namespaces: [2025-02-29]")),
        ("codeowners", "inv", "--check"),
        1,
        says=(f"inv/{SPEECH}:", "`2025-02-29` is shaped like a date or time, but there is no such day"),
        never=("no such cohort", "Traceback"),
        max_lines=4,
        issue=37,
    ),
    Case(
        "deep-plan-file",
        7,
        deep_plan,
        ("report", "inv", "--plan", "plan", "--out", "out"),
        2,
        says=("plan.json: nested deeper than any plan",),
        issue=37,
    ),
    Case(  # one duplicate key in org.yaml: one error, no follow-ons blamed on the team files
        "duplicate-key-without-follow-ons",
        7,
        example(replace("org.yaml", ORG_KEY, ORG_KEY + ORG_KEY)),
        ("validate", "inv"),
        1,
        says=("duplicate key `allow_oversubscription`", "1 error(s) in inv"),
        never=("teams/",),
        max_lines=4,
        issue=37,
    ),
]

# --- issue 37, point 5: the namespaces of the controllers the Kueue configuration enables and of the add-ons -------

CONTROLLER_AND_ADDON_NAMESPACES = (
    "jobset-system",
    "lws-system",
    "kubeflow-system",
    "ray-system",
    "karpenter",
    "app-routing-system",
    "vault-secrets-operator-system",  # variant: a secrets operator the issue did not name
    "kyverno",
)

CASES += [
    Case(
        "controller-and-add-on-namespaces",
        5,
        small(team(namespaces=list(CONTROLLER_AND_ADDON_NAMESPACES))),
        ("validate", "inv"),
        1,
        says=tuple(
            f"teams[0].namespaces[{i}]: namespace `{ns}` is reserved"
            for i, ns in enumerate(CONTROLLER_AND_ADDON_NAMESPACES)
        ),
        issue=37,
    ),
]

# --- issue 37, points 1 and 2 -----------------------------------------------------------------------------------
# item 1: money and sharing moves need their approvers (enforced: what moves money lives in files CODEOWNERS gives
# to the finance approvers); item 2: metering bounded by the fleet.


def git_repo_on(base: Callable[[Path], None], *edits: Callable[[Path], None]) -> Callable[[Path], None]:
    """The example inventory changed by `base`, committed in a git repository at the case folder, then `edits` in
    the working tree."""

    def build(case: Path) -> None:
        git_repo(base)(case)
        subprocess.run([*GIT, "add", "-A"], cwd=case, check=True)
        subprocess.run([*GIT, "commit", "-qm", "base"], cwd=case, check=True)
        for change in edits:
            change(case / "inv")

    return build


def assert_finance_owns(case: Path, path: str) -> None:
    lines = (case / "out" / "CODEOWNERS").read_text().splitlines()
    assert f"{path} @northwind/finops" in lines, lines


COHORT_TEAMS = [
    t["team"] for t in yaml.safe_load((INVENTORY / "org.yaml").read_text())["team_terms"] if t.get("cohort")
]
"""The example's teams in a cohort: fair sharing switched on changes each one's ClusterQueue preemption."""


VISION = "teams/vision.yaml"
VISION_TERMS = "  - {team: vision, cost_center: CC-2002, cohort: product}\n"


def add_vision(inv: Path) -> None:
    """A team `vision` in its own team file, its terms in org.yaml."""
    (inv / VISION).write_text(
        'teams:\n  - name: vision\n    owners: ["@northwind/vision-leads"]\n    namespaces: [vision]\n'
        "    quotas:\n      - {flavor: ndh100, nominal: 8}\n"
    )
    terms("team_terms:\n", "team_terms:\n" + VISION_TERMS)(inv)


NO_FAIR_SHARING = replace("org.yaml", "    parent: northwind\n    fair_sharing_weight: 2\n", "    parent: northwind\n")
"""The example without any fair-sharing weight: Kueue's classic preemption (`maxPriorityThreshold`)."""

CASES += [
    # 1. each side priced with its own team -> cost-centre mapping: a move onto a centre over budget fails there
    Case(
        "diff-cost-centre-onto-a-budget",
        1,
        git_repo(*move_llm_pretrain("CC-2001")),
        diff_text(),
        0,  # without --plan the exposure gates nothing: over budget, finance approves (CI passes --plan)
        says=(
            "WARN over-budget: CC-2001 2027Q1: no plan",
            "exposure $2,519,705.23 of $900,000.00 (280.0%), not gated: over the budget, finance approves",
            "WARN exposure-moves: CC-2001's monthly exposure moves by +$712,098.06",
            "@northwind/serving-leads: cost centre CC-2001 exposure +$712,098.06/month",
            "@northwind/finops: over budget (CC-2001 2027Q1), changes policy, llm-pretrain: cost_center CC-1001 -> "
            "CC-2001",
        ),
        never=("Not blocked",),
        max_lines=DIFF_LINES,
        issue=37,
    ),
    # variant: onto a centre with no team and no budget yet; both centres named, the old one's charge leaves it
    Case(
        "diff-cost-centre-onto-a-new-centre",
        1,
        git_repo(*move_llm_pretrain("CC-4001")),
        diff_text(),
        0,
        says=(
            "NEEDS APPROVAL by the owners of CC-1001, CC-4001",
            "WARN exposure-moves: CC-4001's monthly exposure moves by +$",
            "WARN exposure-moves: CC-1001's monthly exposure moves by -$",
        ),
        never=("Not blocked", "monthly exposure $0.00 (0.0 %)\nFleet"),
        max_lines=DIFF_LINES,
        issue=37,
    ),
    # the fields that move money are refused in a team file (CODEOWNERS gives it to the team's owners alone)
    Case(
        "team-file-sets-its-cost-centre",
        1,
        example(replace(SPEECH, "    namespaces: [speech]\n", "    namespaces: [speech]\n    cost_center: CC-1001\n")),
        ("validate", "inv"),
        1,
        says=(f"{SPEECH}:7 teams[0].cost_center: `cost_center` in a team file", "team_terms"),
        issue=37,
    ),
    Case(
        "team-file-sets-a-fair-sharing-weight",
        1,
        example(
            replace(SPEECH, "    namespaces: [speech]\n", "    namespaces: [speech]\n    fair_sharing_weight: 1000\n")
        ),
        ("validate", "inv"),
        1,
        says=(f"{SPEECH}:7 teams[0].fair_sharing_weight: `fair_sharing_weight` in a team file",),
        issue=37,
    ),
    # a team added inside a team file without its terms (finance's) is refused; a team removed leaves its terms
    Case(
        "team-added-without-terms",
        1,
        example(lambda inv: (inv / SPEECH).write_text((inv / SPEECH).read_text() + SECOND_TEAM)),
        ("validate", "inv"),
        1,
        says=(f"{SPEECH}:10 teams[1].name: team `speech-extra` has no `team_terms` entry",),
        max_lines=4,
        issue=37,
    ),
    Case(
        "team-removed-without-its-terms",
        1,
        example(lambda inv: (inv / SPEECH).unlink()),
        ("validate", "inv"),
        1,
        says=("`team_terms` for `speech`: no such team", "needs the finance approvers"),
        issue=37,
    ),
    Case(
        "team-removed-with-its-terms",
        1,
        git_repo_on(add_vision, lambda inv: (inv / VISION).unlink(), terms(VISION_TERMS, "")),
        diff_text(),
        0,
        says=("vision (removed team)", "@northwind/finops: vision: removed from teams/vision.yaml"),
        max_lines=DIFF_LINES,
        issue=37,
    ),
    # a team file outside teams/ is finance's in CODEOWNERS (its teams may carry their terms inline)
    Case(
        "codeowners-team-file-outside-teams",
        1,
        example(
            replace(SPEECH, "    namespaces: [speech]\n", "    namespaces: [speech]\n    cost_center: CC-2003\n"),
            rename(SPEECH, "speech.yaml"),
            terms("  - " + SPEECH_TERMS + "}\n", ""),
        ),
        ("codeowners", "inv", "--output", "out/CODEOWNERS"),
        0,
        outputs=("out",),
        check=lambda case: assert_finance_owns(case, "/inv/speech.yaml"),
        issue=37,
    ),
    # a priority class, and what it lets a team preempt: its teams and their cohort trees named, finance asked
    Case(
        "diff-priority-class-value",
        1,
        git_repo_on(
            NO_FAIR_SHARING,
            replace("org.yaml", "  - name: training\n    value: 500", "  - name: training\n    value: 1000"),
        ),
        diff_text(),
        0,
        says=(
            "llm-pretrain: priority_class training (500) -> training (1000)",
            "maxPriorityThreshold: 1000",
            "@northwind/finops: changes priority_classes",
            "rl-research: no quota change, llm-pretrain's priority changes",
        ),
        never=("No quota, capacity or price changes",),
        max_lines=DIFF_LINES,
        issue=37,
    ),
    # variant: a team's own priority class changes (not listed: the issue changed the class's value)
    Case(
        "diff-team-priority-class",
        1,
        git_repo_on(NO_FAIR_SHARING, terms(SPEECH_TERMS, SPEECH_TERMS.replace("training", "prod-critical"))),
        diff_text(),
        0,
        says=(
            "speech: priority_class training (500) -> prod-critical (1000)",
            "inference: no quota change, speech's priority changes",
            "@northwind/finops: speech: priority_class training (500) -> prod-critical (1000)",
        ),
        max_lines=DIFF_LINES,
        issue=37,
    ),
    # fair sharing switched on by one team changes every cohort team's ClusterQueue: all told, with owners
    Case(
        "diff-fair-sharing-switched-on",
        1,
        git_repo_on(NO_FAIR_SHARING, terms(SPEECH_TERMS, SPEECH_TERMS + ", fair_sharing_weight: 3")),
        diff_text(),
        0,
        says=(
            "speech: fair_sharing_weight none -> 3.0",
            *(
                f"{t}: no quota change, its cohort changes with speech; fair sharing turns on"
                for t in COHORT_TEAMS
                if t != "speech"
            ),
            "@northwind/serving-leads: owner of inference (its cohort changes with speech; fair sharing turns on)",
            "@northwind/finops: speech: fair_sharing_weight none -> 3.0",
        ),
        max_lines=DIFF_LINES,
        issue=37,
    ),
]


def usage_rows(*rows: str, name: str = "u.csv") -> Callable[[Path], None]:
    """The example inventory as `inv/`, and a usage file beside it with `rows` (`hour,cluster,...` lines)."""
    return example(lambda inv: (inv.parent / name).write_text(HEADER + "".join(f"{r}\n" for r in rows)))


def october_and_a_re_pull(case: Path) -> None:
    """October's records, and a re-pull of its last two days in a second file of the same folder (issue 37)."""
    example()(case)
    (case / "d").mkdir()
    october = (INVENTORY / "usage.csv").read_text()
    (case / "d" / "october.csv").write_text(october)
    late = [line for line in october.splitlines()[1:] if line.startswith(("2026-10-30", "2026-10-31"))]
    (case / "d" / "re-pull.csv").write_text(HEADER + "\n".join(late) + "\n")


P5_ROW = "2026-10-01T{hour},eks-us-east-1,inference,p5-od,{used},{used}"
COVERAGE = "metering them would bill all their paid capacity as idle"

CASES += [
    # 2. usage per pool and hour is bounded by what the pool can hold: 1,000,000 (within the bound) in p5-od (32)
    Case(
        "meter-more-than-the-pool-holds",
        2,
        usage_rows(P5_ROW.format(hour="00:00:00", used="1000000")),
        ("meter", "u.csv", "--inventory", "inv", "--period", "2026-10"),
        1,
        says=("usage above what the pool can hold", "p5-od at 2026-10-01 00:00 UTC holds 1,000,000.0 of 32"),
        never=("$6,880,000",),
        issue=37,
    ),
    Case(
        "export-more-than-the-pool-holds",
        2,
        usage_rows(P5_ROW.format(hour="00:00:00", used="1000000")),
        ("export", "focus", "inv", "--usage", "u.csv", "--out", "out/focus.csv"),
        1,
        says=("p5-od at 2026-10-01 00:00 UTC holds 1,000,000.0 of 32",),
        issue=37,
    ),
    # variant: two teams' rows, each within the pool, together above it (33 of 32)
    Case(
        "meter-two-teams-above-the-pool",
        2,
        usage_rows(
            P5_ROW.format(hour="00:00:00", used="20"),
            P5_ROW.format(hour="00:00:00", used="13").replace("inference", "speech"),
        ),
        ("meter", "u.csv", "--inventory", "inv", "--period", "2026-10"),
        1,
        says=("p5-od at 2026-10-01 00:00 UTC holds 33.0 of 32",),
        issue=37,
    ),
    # the same team, pool and hour twice is refused, never added up: a re-pull beside October's pull
    Case(
        "meter-october-and-a-re-pull",
        2,
        october_and_a_re_pull,
        ("meter", "d", "--inventory", "inv"),
        1,
        says=("the same hour is recorded more than once", "at 2026-10-30 00:00 UTC (120 minutes)"),
        never=("$1,202,956.15", "usage above what the pool can hold"),
        issue=37,
    ),
    Case(
        "meter-a-repeated-row",
        2,
        usage_rows(P5_ROW.format(hour="05:00:00", used="1"), P5_ROW.format(hour="05:00:00", used="1")),
        ("meter", "u.csv", "--inventory", "inv", "--period", "2026-10"),
        1,
        says=("inference in p5-od at 2026-10-01 05:00 UTC (120 minutes)",),
        issue=37,
    ),
    Case(
        "meter-one-hour-two-offsets",
        2,
        usage_rows(P5_ROW.format(hour="07:00:00+02:00", used="1"), P5_ROW.format(hour="05:00:00Z", used="1")),
        ("meter", "u.csv", "--inventory", "inv", "--period", "2026-10"),
        1,
        says=("inference in p5-od at 2026-10-01 05:00 UTC (120 minutes)",),
        issue=37,
    ),
    Case(
        "meter-a-half-past-row",
        2,
        usage_rows(P5_ROW.format(hour="05:00:00", used="1"), P5_ROW.format(hour="05:30:00", used="1")),
        ("meter", "u.csv", "--inventory", "inv", "--period", "2026-10"),
        1,
        says=("inference in p5-od at 2026-10-01 05:00 UTC (120 minutes)",),
        issue=37,
    ),
    # variant: per-minute records with one minute written twice (61 minutes in the hour)
    Case(
        "meter-a-minute-twice",
        2,
        example(
            lambda inv: (inv.parent / "m.csv").write_text(
                HEADER.replace("hour,", "minute,")
                + "".join(f"2026-10-01T05:{m:02d}:00,eks-us-east-1,inference,p5-od,1,1\n" for m in [*range(60), 59])
            )
        ),
        ("meter", "m.csv", "--inventory", "inv", "--period", "2026-10"),
        1,
        says=("inference in p5-od at 2026-10-01 05:00 UTC (61 minutes)",),
        issue=37,
    ),
    # a period, or part of one, without records is refused, never billed as idle
    Case(
        "meter-a-quarter-with-one-month",
        2,
        example(),
        ("meter", "inv/usage.csv", "--inventory", "inv", "--period", "2026Q4"),
        1,
        says=("no usage records for 61 of the 2026Q4 period's 92 days (2026-11-01..2026-12-31)", COVERAGE),
        issue=37,
    ),
    Case(
        "meter-before-the-fleet",
        2,
        example(),
        ("meter", "inv/usage.csv", "--inventory", "inv", "--period", "2000-01"),
        1,
        says=("no usage records for 31 of the 2000-01 period's 31 days", COVERAGE),
        never=("$1,551,032.87",),
        issue=37,
    ),
    # variant: a gap inside the month (a day with no records), in the FOCUS export
    Case(
        "export-a-day-missing",
        2,
        example(
            lambda inv: (inv.parent / "u.csv").write_text(
                "".join(
                    line + "\n" for line in (inv / "usage.csv").read_text().splitlines() if "2026-10-15" not in line
                )
            )
        ),
        ("export", "focus", "inv", "--usage", "u.csv", "--out", "out/focus.csv"),
        1,
        says=("no usage records for 1 of the 2026-10 period's 31 days (2026-10-15)", COVERAGE),
        issue=37,
    ),
]

CASES += [
    # `qm usage pull` wrote a series of 1,000,000 accelerators in p5-od (32): refused, nothing written
    Case(
        "pull-more-than-the-pool-holds",
        2,
        example(),
        pull(),
        1,
        says=("p5-od at 2026-10-01 00:00 UTC: the series hold 1,000,000.0 accelerators, more than the pool's 32",),
        issue=37,
        serve=served(prom.one_series((prom.at_hour(0), "1000000"))),
    ),
    # variant: two ClusterQueues' series, each within the pool, together above it (20 + 13 of 32)
    Case(
        "pull-two-queues-above-the-pool",
        2,
        example(),
        pull(),
        1,
        says=("p5-od at 2026-10-01 03:00 UTC: the series hold 33.0 accelerators, more than the pool's 32",),
        issue=37,
        serve=served(
            prom.matrix(
                {"metric": prom.LABELS, "values": [[prom.at_hour(3), "20"]]},
                {"metric": {**prom.LABELS, "cluster_queue": "speech"}, "values": [[prom.at_hour(3), "13"]]},
            )
        ),
    ),
]

# --- issue 37, point 6: sinks: bidi and zero-width characters escaped in logs and comments ------------------------

CASES += [
    Case(
        "bidi-override-in-a-key",
        6,
        small(**{"extra.yaml": '"admin\\u202egnp.yaml": 1\n'}),
        ("validate", "inv"),
        1,
        says=("admin\\u202egnp.yaml",),
        never=("\u202e",),
        issue=37,
    ),
    Case(  # variant: a zero-width joiner and an isolate reach the PR comment (markdown), not the log
        "zero-width-in-pr-comment",
        6,
        git_repo(lambda inv: (inv / "zw.yaml").write_text('"fin\\u200dance\\u2066ok": 1\n')),
        ("diff", "HEAD", "--inventory", "inv"),
        1,
        says=("fin\\u200dance\\u2066ok",),
        never=("\u200d", "\u2066"),
        issue=37,
    ),
]

# --- issue 37, point 6: sizes: caps per team -----------------------------------------------------------------------

CASES += [
    Case(  # variant: through `qm diff` (the issue's case: 1.83 GB and a minute), 5,000 namespaces
        "team-of-5000-namespaces",
        6,
        git_repo(
            replace(SPEECH, "namespaces: [speech]", "namespaces: [" + ", ".join(f"n{i}" for i in range(5000)) + "]")
        ),
        ("diff", "HEAD", "--inventory", "inv", "--format", "text"),
        1,
        says=(
            "teams[0].namespaces: `namespaces` has 5,000 items; at most 100 are allowed",
            "Split the team into teams of at most 100 namespaces each",
        ),
        issue=37,
    ),
    Case(  # variant: the quota cap (1,000), located in the team file with its fix
        "team-of-1001-quotas",
        6,
        small(team(quotas=[{"flavor": "h100", "nominal": 1}] * 1_001)),
        ("validate", "inv"),
        1,
        says=(
            "inv/teams.yaml:11 ",
            "teams[0].quotas: `quotas` has 1,001 items; at most 1,000 are allowed",
            "merge the",
        ),
        never=("after validation",),
        max_lines=6,
        issue=37,
    ),
]


def duplicated_rows(prices: int, demand: int) -> Callable[[Path], None]:
    """The example's first price row `prices` more times and its first demand row `demand` more times."""

    def edit(inv: Path) -> None:
        for name, times in (("prices.csv", prices), ("demand.csv", demand)):
            first = (inv / name).read_text().splitlines()[1]
            with (inv / name).open("a") as f:
                f.write(f"{first}\n" * times)

    return edit


CASES += [
    Case(  # 2,400 bad rows (the issue's 2,000 printed 296 KB): the comment groups them by kind and file with counts
        "pr-comment-2400-duplicate-rows",
        6,
        git_repo(duplicated_rows(2_100, 300)),
        ("diff", "HEAD", "--inventory", "inv"),
        1,
        says=(
            "unique-keys in inv/prices.csv: 2,100 errors (first 5 shown)",
            "unique-keys in inv/demand.csv: 300 errors (first 5 shown)",
        ),
        max_lines=2_450,  # the log (stderr) keeps one line per error; the comment shows 10 of them
        issue=37,
    ),
    Case(  # variant: JSON counts them by kind and keeps every message
        "pr-json-2400-duplicate-rows",
        6,
        git_repo(duplicated_rows(2_000, 400)),
        ("diff", "HEAD", "--inventory", "inv", "--format", "json"),
        1,
        says=('"unique-keys in inv/prices.csv": 2000', '"unique-keys in inv/demand.csv": 400'),
        max_lines=5_000,
        issue=37,
    ),
]

# --- issue 37, point 7: `qm synth --now` bounded ----------------------------------------------------------------

CASES += [
    Case(  # the issue's case sized a paid, active capacity block to 0 nodes
        "synth-now-9999",
        7,
        example(),
        ("synth", "inv", "--out", "out", "--now", "9999-12-31"),
        2,
        says=("--now '9999-12-31' is outside 2000-2100",),
        never=("wrote",),
        issue=37,
    ),
    Case(  # variant: the calendar's last day, pushed past it by its UTC offset (2101-01-01T00:30Z)
        "synth-now-past-the-calendar-by-its-offset",
        7,
        example(),
        ("synth", "inv", "--out", "out", "--now", "2100-12-31T23:30:00-01:00"),
        2,
        says=("--now '2100-12-31T23:30:00-01:00' is outside 2000-2100",),
        never=("wrote",),
        issue=37,
    ),
]

# --- issue 37, point 2: the warehouse query flags what `qm meter` flags (tests/reports/test_meter_sql.py runs it) ---

CASES += [
    Case(  # the emitted query returns the metering checks as rows, and its header says how to read them
        "emit-sql-carries-the-metering-checks",
        2,
        example(),
        ("meter", "--inventory", "inv", "--emit-sql", "trino", "--period", "2026Q4"),
        0,
        says=(
            "usage-overlap: the same team (or pod), pool and hour recorded twice",
            "usage-coverage: a day of the period without any record",
            "'usage-capacity' AS problem",
        ),
        max_lines=2_000,  # the query itself
        issue=37,
    ),
]

# --- issue 37, point 2: a history that begins or ends inside a month: that part, said so, never idle ----------------


def october_lines(keep: Callable[[str], bool]) -> Callable[[Path], None]:
    """The example inventory, and `u.csv` with the October records whose line `keep` accepts."""
    return example(
        lambda inv: (inv.parent / "u.csv").write_text(
            "".join(
                f"{line}\n"
                for i, line in enumerate((inv / "usage.csv").read_text().splitlines())
                if not i or keep(line)
            )
        )
    )


CASES += [
    Case(  # refused before as 14 days without records; the part from the 15th is metered, and named as a part
        "meter-history-from-the-15th",
        2,
        october_lines(lambda line: line[:10] >= "2026-10-15"),
        ("meter", "u.csv", "--inventory", "inv"),
        0,
        says=("Metered cost, 2026-10, 2026-10-15 00:00..2026-11-01 00:00 only (no usage records before)",),
        never=("no usage records for 14",),
        issue=37,
    ),
    Case(  # variant: a history that ends on the 20th, through the FOCUS export (its charge period is that part)
        "export-history-to-the-20th",
        2,
        october_lines(lambda line: line[:10] < "2026-10-20"),
        ("export", "focus", "inv", "--usage", "u.csv", "--out", "out/focus.csv"),
        0,
        outputs=("out",),
        check=lambda case: _assert_charge_period(
            case / "out" / "focus.csv", "2026-10-01T00:00:00Z", "2026-10-20T00:00:00Z"
        ),
        issue=37,
    ),
]


def _assert_charge_period(path: Path, start: str, end: str) -> None:
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert rows and {(r["ChargePeriodStart"], r["ChargePeriodEnd"]) for r in rows} == {(start, end)}


# --- issue 37, point 2: per-pod records (a cost tool's export): pods share an hour, one pod's hour twice is refused --

POD_HEADER = "hour,cluster,team,flavor,pod,accelerators_used,accelerators_requested\n"
POD_HOUR = "".join(f"2026-10-01T00:00:00,gke-a,ml,h100,train-{i},1,1\n" for i in range(2))
"""Two pods of team ml on h100 for the whole first hour of October, one accelerator each."""
POD_IDLE = "".join(f"2026-10-{day:02d}T00:00:00,gke-a,ml,h100,,0,0\n" for day in range(2, 32))


def pod_usage(text: str) -> Callable[[Path], None]:
    """The small inventory (with prices) and `u.csv` holding `text` (a file of the cost tool, outside `inv/`)."""
    inventory = small(**{"prices.csv": PRICES})

    def build(case: Path) -> None:
        inventory(case)
        (case / "u.csv").write_text(text)

    return build


CASES += [
    Case(  # two pods of one team in one hour: 2 accelerator-hours, not an hour recorded twice
        "meter-pods-share-an-hour",
        2,
        pod_usage(POD_HEADER + POD_HOUR + POD_IDLE),
        ("meter", "u.csv", "--inventory", "inv", "--out", "out"),
        0,
        outputs=("out",),
        check=lambda case: _assert_held_hours(case, "ml", "2"),
        issue=37,
    ),
    Case(  # the same per-pod file twice (a doubled export): each pod's hour has 120 minutes, refused, named
        "meter-pods-doubled",
        2,
        pod_usage(POD_HEADER + POD_HOUR + POD_HOUR + POD_IDLE),
        ("meter", "u.csv", "--inventory", "inv"),
        1,
        says=("recorded more than once", "ml in h100 at 2026-10-01 00:00 UTC (120 minutes)"),
        issue=37,
    ),
]


def _assert_held_hours(case: Path, team: str, hours: str) -> None:
    """The team's charged accelerator-hours in out/meter.json."""
    teams = {t["team"]: t for t in json.loads((case / "out" / "meter.json").read_text())["teams"]}
    assert teams[team]["charged_hours"] == hours
