"""Each escaping function of `quartermaster.textsafety` against the real consumer of its sink (issue 29): what the
function writes is read back by that consumer as the literal text, never as syntax."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest
import yaml

from quartermaster.textsafety import (
    codeowners_path,
    log_line,
    prometheus_template_text,
    promql_label_name,
    sql_string,
)

HOSTILE = [
    '{{ query "up" }}',  # runs a query in every firing alert
    "{{ x",  # made promtool refuse the whole rules file
    "}} {{ end }} {{",
    "plain text",
]


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (apt-get install prometheus)")
@pytest.mark.parametrize("text", HOSTILE)
def test_prometheus_expands_an_annotation_to_the_literal_text(tmp_path: Path, text: str) -> None:
    rule = {"alert": "A", "expr": "vector(1)", "annotations": {"runbook": prometheus_template_text(text)}}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [{"name": "g", "rules": [rule]}]}))
    test = {
        "rule_files": ["rules.yaml"],
        "tests": [
            {
                "interval": "1m",
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": "A", "exp_alerts": [{"exp_annotations": {"runbook": text}}]}
                ],
            }
        ],
    }
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(test))
    done = subprocess.run(["promtool", "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("text", ["it's", "'; DROP TABLE usage; --", "a''b", "x?.csv"])
def test_duckdb_reads_an_sql_string_as_the_literal_text(text: str) -> None:
    with duckdb.connect() as con:
        assert con.execute(f"SELECT {sql_string(text)} AS v").fetchall() == [(text,)]


def test_a_nul_cannot_be_an_sql_string() -> None:
    with pytest.raises(ValueError, match="NUL"):
        sql_string("a\x00b")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("x\n::error title=Finance approved::ok", "x\\x0a::error title=Finance approved::ok"),  # a line feed in a key
        ("::add-mask::secret", "\\x3a:add-mask::secret"),  # a file name that starts a workflow command
        ("  ##[error]x", "  \\x23#[error]x"),  # the older syntax, after leading spaces
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),  # a window-title escape
        ("a\u2028b", "a\\u2028b"),  # a Unicode line separator
    ],
)
def test_a_log_line_cannot_start_a_workflow_command_or_a_new_line(text: str, want: str) -> None:
    assert log_line(text) == want
    assert "\n" not in log_line(text) and not log_line(text).lstrip().startswith(("::", "##["))


@pytest.mark.parametrize("path", ["/inventory/teams/*.yaml", "/a/x\n* @attacker\n#.yaml", "/a b.yaml", "/!x", "/#x"])
def test_a_codeowners_path_with_pattern_syntax_is_refused(path: str) -> None:
    with pytest.raises(ValueError, match="cannot be a CODEOWNERS path"):
        codeowners_path(path)


@pytest.mark.parametrize("name", ['cluster"}) or vector(1', "a-b", "", "1x"])
def test_a_promql_label_name_that_is_not_one_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a Prometheus label name"):
        promql_label_name(name)


def test_an_invalid_inventory_comment_groups_its_errors_by_kind_under_the_limit() -> None:
    """Issue 37: 2,400 located messages of ~140 characters (340 KB; GitHub refuses a comment over 65,536
    characters): the comment names each kind with its count and shows the first 5 of each."""
    from quartermaster.reports.quota_diff.diff_formats import PER_KIND, render_invalid

    rows = [("duplicate-key", f"inv/prices.csv:{n} row {n}: duplicate key " + "x" * 100) for n in range(2, 2002)]
    dates = [("date-shaped", f"inv/teams/t{n}.yaml:1 namespaces[0]: no such day " + "y" * 100) for n in range(400)]
    problems = [*rows, *dates]
    comment = render_invalid("markdown", problems)
    assert len(comment) <= 65_536
    assert "duplicate-key: 2,000 errors (first 5 shown)" in comment
    assert "date-shaped: 400 errors (first 5 shown)" in comment
    # the first PER_KIND messages of each kind, not the next one
    assert all(m in comment for _, m in rows[:PER_KIND] + dates[:PER_KIND])
    assert rows[PER_KIND][1] not in comment and dates[PER_KIND][1] not in comment
    # text and JSON keep every message; JSON counts them by kind
    assert render_invalid("text", problems).count("\n") == 2_400
    assert json.loads(render_invalid("json", problems))["error_counts"] == {"duplicate-key": 2_000, "date-shaped": 400}


def test_a_few_errors_are_all_shown_with_their_kind() -> None:
    from quartermaster.reports.quota_diff.diff_formats import render_invalid

    problems = [("duplicate-key", "inv/a.csv:2 duplicate"), ("duplicate-key", "inv/a.csv:3 duplicate")]
    comment = render_invalid("markdown", problems)
    assert "duplicate-key: 2 errors\n  inv/a.csv:2 duplicate\n  inv/a.csv:3 duplicate\n" in comment
    assert "shown" not in comment


def test_thousands_of_kinds_are_counted_past_the_limit() -> None:
    """A kind per message (2,000 kinds of one error each) cannot be grouped down: the kinds that fit are shown,
    the rest counted."""
    from quartermaster.reports.quota_diff.diff_formats import render_invalid

    problems = [(f"kind-{n}", f"inv/f{n}.yaml:1 " + "z" * 120) for n in range(2_000)]
    comment = render_invalid("markdown", problems)
    assert len(comment) <= 65_536
    shown = sum(f"kind-{n}: 1 error\n" in comment for n in range(2_000))
    assert 300 < shown < 2_000  # ~160 characters a kind in 60,000: about 370
    assert f"... and {2_000 - shown:,} more errors of {2_000 - shown:,} more kinds" in comment
