"""The quota PR workflow (checked against the GitHub workflow JSON schema by check-jsonschema), the pre-commit
hooks and the generated CODEOWNERS."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.reports.quota_diff import MARKER
from quartermaster.reports.quota_diff.codeowners import BEGIN, END, render_codeowners
from tests.paths import REPO
from tests.prdiff.repo import QuotaRepo

WORKFLOW = REPO / ".github" / "workflows" / "quota-pr.yml"


def check_workflow(path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with its vendored schemastore `github-workflows` schema (no network)."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def yaml12(path: Path) -> dict:
    """YAML 1.2, as GitHub reads it (`on:` stays a string key)."""
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def test_workflow_is_valid_against_the_github_workflow_schema() -> None:
    checked = check_workflow(WORKFLOW)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok -- validation done" in checked.stdout


def test_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on: ubuntu-latest", "runs_on: ubuntu-latest"))
    checked = check_workflow(broken)
    assert checked.returncode == 1
    assert "runs_on" in checked.stdout or "runs-on" in checked.stdout


def test_workflow_runs_the_quota_review_steps() -> None:
    flow = yaml12(WORKFLOW)
    # issue 19: every pull request runs it (no `paths` filter, which would leave a required check "Pending");
    # the diff job runs when the `changes` job finds a file under inventory/ (or a renamed one from it)
    assert flow["on"] == {"pull_request": {"types": ["opened", "synchronize", "reopened"]}}
    changes = flow["jobs"]["changes"]
    assert "startsWith('inventory/')" in changes["steps"][0]["with"]["script"]
    assert "previous_filename" in changes["steps"][0]["with"]["script"]
    assert changes["outputs"]["inventory"] == "${{ steps.files.outputs.inventory }}"
    diff_job = flow["jobs"]["quota-diff"]
    assert diff_job["needs"] == "changes" and diff_job["if"] == "needs.changes.outputs.inventory == 'true'"
    steps = diff_job["steps"]
    # issue 19: the tool that judges the pull request is the base branch's. Two checkouts: the base branch's code
    # in tool/ (installed and run), the pull request in pr/ (read as data: inventory, CODEOWNERS, git history)
    checkouts = {s["with"]["path"]: s["with"] for s in steps if s.get("uses", "").startswith("actions/checkout@")}
    assert set(checkouts) == {"tool", "pr"}
    assert checkouts["tool"]["ref"] == "${{ github.base_ref }}" and "ref" not in checkouts["pr"]
    assert checkouts["pr"]["fetch-depth"] == 0  # qm diff reads origin/<base> from the pull request's clone
    assert not any(c.get("persist-credentials", True) for c in checkouts.values())
    assert diff_job["defaults"]["run"]["working-directory"] == "pr"
    python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert python["with"]["python-version"] == "3.11"
    # the install is cached on the base branch's pinned versions; the actions are their Node 24 majors
    assert python["with"]["cache"] == "pip"
    assert python["with"]["cache-dependency-path"].split() == ["tool/constraints.txt", "tool/pyproject.toml"]
    uses = {s["uses"].split("@")[0]: s["uses"].split("@")[1] for s in steps if "uses" in s}
    assert uses == {"actions/checkout": "v6", "actions/setup-python": "v6", "actions/github-script": "v8"}
    runs = [s.get("run", "") for s in steps]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = re.search(r"```bash\n(python3 -m venv[^\n]*)\n```", readme).group(1)  # type: ignore[union-attr]
    installs = [s for s in steps if "pip install" in s.get("run", "")]
    assert len(installs) == 1 and installs[0]["working-directory"] == "tool", "only the base branch is installed"
    install = installs[0]["run"]
    # The PR job installs as the README does, minus the test extra: validate and diff need no cloud SDKs.
    assert setup.startswith(install.replace(" -e .", " -e '.[test]'")), "the workflow installs as the README does"
    assert "-c constraints.txt" in install
    # every other command runs in pr/ (the job default) with the base branch's qm, never the pull request's
    for step in steps:
        if "run" in step and step is not installs[0]:
            assert "working-directory" not in step, step["name"]
            assert ".venv" not in step["run"].replace("../tool/.venv/bin/qm", ""), step["run"]
    assert "../tool/.venv/bin/qm validate inventory/" in runs
    assert "../tool/.venv/bin/qm codeowners inventory/ --check" in runs
    # issue 26: the pull request's inventory is planned first, so the comment carries the planned budget rows
    assert "../tool/.venv/bin/qm plan inventory/ --out out/plan" in runs
    plan_step, diff_step = _step(flow, "plan"), _step(flow, "diff")
    assert plan_step["continue-on-error"] is True and steps.index(plan_step) < steps.index(diff_step)
    assert diff_step["env"]["PLAN"] == "${{ steps.plan.outcome == 'success' && 'out/plan' || '' }}"
    assert diff_step["run"] == (
        '../tool/.venv/bin/qm diff "origin/${BASE_REF}" ${PLAN:+--plan "$PLAN"} --format markdown '
        '> "${RUNNER_TEMP}/comment.md"'
    )
    script = next(s for s in steps if s.get("uses", "").startswith("actions/github-script@"))["with"]["script"]
    assert f"const marker = '{MARKER}';" in script and "process.env.RUNNER_TEMP" in script
    assert "updateComment" in script and "createComment" in script
    last = steps[-1]
    assert "steps.diff.outcome == 'failure'" in last["if"] and "exit 1" in last["run"]
    # least privilege per job (issue 29): nothing by default, the job that only lists files reads
    assert flow["permissions"] == {}
    assert flow["jobs"]["changes"]["permissions"] == {"pull-requests": "read"}
    assert flow["jobs"]["quota-diff"]["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "issues": "write",
    }


def _step(flow: dict, step_id: str) -> dict:
    return next(s for s in flow["jobs"]["quota-diff"]["steps"] if s.get("id") == step_id)


@pytest.mark.slow  # plans the example (seconds) and diffs it, as the workflow does
def test_the_workflows_comment_carries_the_planned_budget_rows_of_the_finance_report(tmp_path: Path) -> None:
    """Issue 26, point 4: the workflow's own plan and diff steps, run as written (bash, in the pull request's
    checkout, with the base branch's `qm` at ../tool/.venv/bin/qm), give a comment whose planned budget rows are
    the finance report's `budget_status` rows of the same plan, to the cent."""
    from quartermaster.plan_contract import load_result
    from quartermaster.pricing import format_usd
    from quartermaster.reports.finance import build_report

    flow = yaml12(WORKFLOW)
    repo = QuotaRepo.create(tmp_path)
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")  # the base branch, as the checkout fetches it
    repo.quota("llm-pretrain", "h100-flex", nominal=16)  # the pull request of the first quota PR tutorial
    tool = tmp_path / "tool" / ".venv" / "bin"
    tool.mkdir(parents=True)
    (tool / "qm").symlink_to(Path(sys.executable).parent / "qm")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "RUNNER_TEMP": str(tmp_path), "BASE_REF": "main"}

    def run(step: dict, **more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", step["run"]], cwd=repo.root, env={**env, **more}, capture_output=True, text=True
        )

    planned = run(_step(flow, "plan"))
    assert planned.returncode == 0, planned.stderr
    diffed = run(_step(flow, "diff"), PLAN="out/plan")  # the expression's value when the plan step succeeded
    assert diffed.returncode == 0, diffed.stderr
    comment = (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert "(plan `out/plan`)" in comment

    report = json.loads(build_report(repo.load(), load_result(repo.root / "out" / "plan")).to_json())
    rows = next(t for t in report["tables"] if t["name"] == "budget_status")["rows"]
    centre = next(t.cost_center for t in repo.load().teams if t.name == "llm-pretrain")
    mine = [r for r in rows if r["cost_center"] == centre]
    assert mine, "the example budgets the cost centre of llm-pretrain"
    for row in mine:
        usd, budget = Decimal(row["usd"]), Decimal(row["budget_usd"])
        line = f"| {row['cost_center']} | {row['quarter']} | planned | {format_usd(usd)} | {format_usd(budget)} |"
        assert line in comment, comment

    without = run(_step(flow, "diff"), PLAN="")  # the plan step failed: no --plan, and the comment says so
    assert without.returncode == 0, without.stderr
    comment = (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert "| planned |" not in comment and "none shown" in comment


def test_pre_commit_hooks_validate_on_inventory_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # pre-commit runs hooks from the repository root
    offered = yaml12(REPO / ".pre-commit-hooks.yaml")
    config = yaml12(REPO / ".pre-commit-config.yaml")
    local = config["repos"][0]["hooks"]
    assert [h["id"] for h in offered] == [h["id"] for h in local] == ["qm-validate", "qm-codeowners"]
    for hook in [*offered, *local]:
        assert re.search(hook["files"], "inventory/teams/llm-pretrain.yaml")
        assert not re.search(hook["files"], "README.md")
        assert hook["pass_filenames"] is False
    # the hooks' commands do what they say, on this repository and on a broken inventory
    for hook in local:
        argv = shlex.split(hook["entry"])
        assert argv[0] == ".venv/bin/qm"
        result = CliRunner().invoke(app, argv[1:])
        assert result.exit_code == 0, result.output
    repo = QuotaRepo.create(tmp_path).replace(
        "org.yaml", "speech, cost_center: CC-2003, cohort: product", "speech, cost_center: CC-2003, cohort: prodct"
    )
    validate = [*shlex.split(local[0]["entry"])[1:-1], str(repo.inventory)]
    broken = CliRunner().invoke(app, validate)
    assert broken.exit_code == 1 and "Did you mean `product`?" in broken.output


def owner_of(codeowners: str, path: str) -> str:
    """Who GitHub asks to approve `path`: the owners on the LAST line whose pattern matches (GitHub's rule, cited
    in docs/how-to/review-quota-changes-in-ci.md). The generated patterns are folders (`/x/`, everything under it)
    or exact files."""
    owners = ""
    for line in codeowners.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        pattern, _, who = line.partition(" ")
        if path == pattern or (pattern.endswith("/") and path.startswith(pattern)):
            owners = who
    return owners


def test_codeowners_gives_team_files_to_owners_and_the_rest_to_finance(tmp_path: Path) -> None:
    result = load(REPO / "inventory")
    text = render_codeowners(result, REPO, REPO / "inventory")
    lines = text.splitlines()
    assert lines[0] == BEGIN and lines[-1] == END
    finance = " ".join(result.inventory.policy.finance_approvers)
    assert lines[1] == f"/inventory/ {finance}", "the catch-all comes first, so every later line overrides it"
    for team in result.inventory.teams:
        assert owner_of(text, f"/inventory/teams/{team.name}.yaml") == " ".join(team.owners)
    for money in ("prices.csv", "commitments.yaml", "org.yaml", "clusters.yaml", "sites.yaml", "usage.csv"):
        assert owner_of(text, f"/inventory/{money}") == finance, money
    # the code that judges and applies a change, and CODEOWNERS wherever GitHub reads it (issue 19)
    for code in (
        ".github/workflows/quota-pr.yml",
        ".github/CODEOWNERS",
        "CODEOWNERS",
        "docs/CODEOWNERS",
        "pyproject.toml",
        "quartermaster/cli/diff_command.py",
        "planner/solve.py",
        "modules/kueue/cluster_files.py",
        "reports/quota_diff/policy.py",
        "stacks/__main__.py",
    ):
        assert owner_of(text, f"/{code}") == finance, code
    assert owner_of(text, "/README.md") == ""


def test_a_new_inventory_file_with_paid_capacity_needs_finance(tmp_path: Path) -> None:
    """Issue 19: `inventory/speech-extra.yaml` adding a 64-node H100 pool validated, and the base branch's
    CODEOWNERS (the one GitHub applies) named no owner for it. The catch-all gives it to finance."""
    repo = QuotaRepo.create(tmp_path)
    base = load(repo.inventory)
    finance = " ".join(base.inventory.policy.finance_approvers)
    base_codeowners = render_codeowners(base, repo.root, repo.inventory)
    extra = (
        "clusters:\n  - name: gke-speech-extra\n    kind: gke\n    site: gcp-us-east4\n    project: p\n"
        "    pools:\n      - {name: h100-speech, machine: a3-megagpu-8g, zones: [us-east4-a], nodes: 64}\n"
        "teams:\n  - {name: speech-extra, cost_center: CC-2001, namespaces: [speech-extra], cohort: product,\n"
        "     owners: ['@northwind/speech-leads'], quotas: [{flavor: h100-speech, nominal: 512}]}\n"
    )
    repo.write("speech-extra.yaml", extra)
    head = load(repo.inventory)
    assert head.ok, [i.format() for i in head.issues]  # the loader accepts it: CODEOWNERS must catch it
    assert owner_of(base_codeowners, "/inventory/speech-extra.yaml") == finance
    # regenerated on the branch, the file holds a team and money: finance's alone (one owner on a line suffices)
    head_codeowners = render_codeowners(head, repo.root, repo.inventory)
    assert f"/inventory/speech-extra.yaml {finance}\n" in head_codeowners
    assert owner_of(head_codeowners, "/inventory/speech-extra.yaml") == finance
    # a team file in teams/ stays the team's
    assert owner_of(head_codeowners, "/inventory/teams/speech.yaml") == "@northwind/speech-leads"


def test_codeowners_keeps_hand_written_lines_and_check_detects_staleness(tmp_path: Path) -> None:
    repo = QuotaRepo.create(tmp_path)
    target = repo.root / ".github" / "CODEOWNERS"
    target.parent.mkdir()
    target.write_text("# code\n/quartermaster/ @northwind/platform\n")
    runner = CliRunner()
    args = ["codeowners", str(repo.inventory), "--output", str(target)]
    assert runner.invoke(app, args).exit_code == 0
    written = target.read_text()
    assert written.startswith("# code\n/quartermaster/ @northwind/platform\n\n" + BEGIN)
    assert runner.invoke(app, [*args, "--check"]).exit_code == 0
    repo.replace("teams/speech.yaml", '"@northwind/speech-leads"', '"@northwind/voice-leads"')
    stale = runner.invoke(app, [*args, "--check"])
    assert stale.exit_code == 1 and "not up to date" in stale.output
    assert runner.invoke(app, args).exit_code == 0
    assert "/inventory/teams/speech.yaml @northwind/voice-leads\n" in target.read_text()
    assert target.read_text().count(BEGIN) == 1


def test_committed_codeowners_is_current() -> None:
    result = CliRunner().invoke(
        app,
        ["codeowners", str(REPO / "inventory"), "--check", "--output", str(REPO / ".github" / "CODEOWNERS")],
    )
    assert result.exit_code == 0, result.output


def test_the_project_gate_runs_ci_run_on_every_pull_request() -> None:
    gate = REPO / ".github" / "workflows" / "ci.yml"
    checked = check_workflow(gate)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    flow = yaml12(gate)
    assert "pull_request" in flow["on"] and flow["on"]["push"] == {"branches": ["main"]}
    job = flow["jobs"]["gate"]
    assert job["container"].startswith("python:3.11-")  # .ci/run's machine: Debian, root, apt-get
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash .ci/run"]
    assert job["timeout-minutes"] >= 90  # the suite takes minutes; CI's own limit is 90


def test_pre_commit_runs_the_code_gates_ci_runs() -> None:
    config = yaml12(REPO / ".pre-commit-config.yaml")
    entries = {h["id"]: h["entry"] for repo in config["repos"] for h in repo["hooks"]}
    ci_run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    # each hook runs a gate that .ci/run runs, with the same tool
    assert ".venv/bin/ruff check ." in ci_run and entries["ruff-check"].startswith(".venv/bin/ruff check")
    assert ".venv/bin/ruff format --check ." in ci_run and entries["ruff-format"].startswith(".venv/bin/ruff format")
    assert "bash .ci/typecheck" in ci_run and entries["mypy"] == "bash .ci/typecheck"
