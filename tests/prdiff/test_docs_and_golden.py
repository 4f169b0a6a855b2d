"""The quota docs' examples run as documented, and the rendered comment matches its golden files."""

from __future__ import annotations

import functools
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.modules.kueue.cluster_files import rendered_documents
from quartermaster.reports.quota_diff import RenderOptions, build_quota_diff, render_json, render_markdown, render_text
from tests.builders import DURING_THE_BLOCK
from tests.paths import REPO
from tests.prdiff.repo import QuotaRepo

GOLDEN = REPO / "tests" / "data" / "prdiff" / "golden"


def quota_docs() -> str:
    """The first-quota-pull-request tutorial and the reference of `qm quota set` and `qm diff`."""
    pages = ("tutorials/first-quota-pr.md", "reference/quota-diff.md")
    return "\n".join((REPO / "docs" / page).read_text(encoding="utf-8") for page in pages)


def test_documented_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tutorial's first step, in process (tests/docs/test_examples.py runs every step as a process)."""
    repo = QuotaRepo.create(tmp_path)
    shutil.copytree(REPO / ".github", repo.root / ".github")
    monkeypatch.chdir(repo.root)
    block = re.search(r"```console\n(.*?)```", quota_docs(), re.S).group(1)  # type: ignore[union-attr]
    outputs = []
    for line in block.strip().splitlines():
        if not line.startswith("$ "):
            continue
        argv = shlex.split(line[2:])
        assert argv[0] == ".venv/bin/qm"
        result = CliRunner().invoke(app, argv[1:])
        assert result.exit_code == 0, (line, result.output)
        outputs.append(result.stdout)
    # the change step 2's comment shows: llm-pretrain's reserved H100 quota (its first quota) cut from 64 to 16
    assert "teams[0].quotas[0].nominal: 64 -> 16" in outputs[0]
    assert "CODEOWNERS is up to date" in outputs[1]


def over_capacity_diff(tmp_path: Path):
    repo = QuotaRepo.create(tmp_path)
    base = load(repo.inventory).inventory
    repo.quota("multimodal", "h100-mega-spot", nominal=8, borrowing_limit=24)
    repo.replace(
        "teams/llm-pretrain.yaml",
        "{flavor: h100-mega-resv, nominal: 64,",
        "{flavor: h100-mega-resv, nominal: 192,",
    )
    head = load(repo.inventory).inventory
    return build_quota_diff(
        base,
        head,
        base_label="origin/main",
        head_label="quota-pr",
        render_documents=functools.partial(rendered_documents, at=DURING_THE_BLOCK),
    )


def test_documented_headline_is_what_the_diff_prints(tmp_path: Path) -> None:
    comment = render_markdown(over_capacity_diff(tmp_path))
    headline = re.search(r"- a headline per team: `(.*?)`,", quota_docs()).group(1)  # type: ignore[union-attr]
    assert headline.replace("llm-pretrain", "**llm-pretrain**", 1) in comment


@pytest.mark.parametrize(
    "name, render",
    [
        ("over_capacity.md", render_markdown),  # the PR comment
        ("over_capacity.txt", render_text),  # the terminal view
        ("over_capacity.json", render_json),  # the data, past / current / delta
    ],
)
def test_rendered_comment_matches_golden(
    tmp_path: Path, golden: Callable[[Path, str], None], name: str, render: Callable[..., str]
) -> None:
    golden(GOLDEN / name, render(over_capacity_diff(tmp_path)))


def test_long_kueue_diffs_are_cut_to_a_shared_budget(tmp_path: Path) -> None:
    data = over_capacity_diff(tmp_path)
    total = sum(len(k.diff.splitlines()) for k in data.kueue)
    comment = render_markdown(data, RenderOptions(max_diff_lines=total - 5))
    assert comment.count("... 5 more lines: run `qm diff` locally") == 1
    assert render_markdown(data, RenderOptions(max_diff_lines=total)).count("more lines") == 0


def test_documented_comment_is_what_the_diff_prints(tmp_path: Path) -> None:
    """The tutorial's example comment (a quota cut on paid capacity, with the impact table) is real output."""
    repo = QuotaRepo.create(tmp_path)
    repo.quota("llm-pretrain", "h100-mega-resv", nominal=16)
    comment = repo.diff("HEAD").stdout
    block = re.search(r"```console\n\$ \.venv/bin/qm diff HEAD\n(.*?)```", quota_docs(), re.S).group(1)  # type: ignore[union-attr]
    # the labels name the working tree and commit of the run, so those two words are left out of the match
    lines = [line for line in block.splitlines() if "working tree" not in line and "HEAD (" not in line]
    assert [line for line in lines if line not in comment.splitlines()] == []
    assert "| llm-pretrain | h100-mega-resv | 0.0 → 19,849.3 | 0 → 695 |" in block


def test_the_replay_cites_a_reference_inside_the_repository() -> None:
    """Audit of issue 19: the impact module and the README (now the quota docs) cited the project's notes on Kueue
    admission outside the repository. The copy in docs/ keeps its sources; every
    section the code and tests cite is in it."""
    from quartermaster.reports.quota_diff import impact

    cited = [
        impact.__doc__ or "",
        quota_docs(),
        (REPO / "tests" / "prdiff" / "test_impact.py").read_text(encoding="utf-8"),
    ]
    assert not any("../shared" in text for text in cited)
    assert all("docs/kueue-admission.md" in text for text in cited)
    reference = (REPO / "docs" / "kueue-admission.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d)\. ", reference, re.M)
    assert {"1", "2", "3", "5"} <= set(headings)  # sections 1-3 (test_impact.py) and 5 (the module's docstring)
    assert "kubernetes-sigs/kueue" in reference and "v0.19.2" in reference and "kueue.sigs.k8s.io/docs" in reference
