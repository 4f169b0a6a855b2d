"""Each escaping function of `quartermaster.textsafety` against the real consumer of its sink (issue 29): what the
function writes is read back by that consumer as the literal text, never as syntax."""

from __future__ import annotations

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


def test_an_invalid_inventory_comment_fits_a_pull_request_comment() -> None:
    # 2,000 located messages of 140 characters (280 KB): GitHub refuses a comment over 65,536 characters, so the
    # comment shows what fits in its budget and counts the rest
    from quartermaster.reports.quota_diff.diff_formats import render_invalid

    problems = [f"inv/usage.csv:{n} row {n}: " + "x" * 120 for n in range(2, 2002)]
    comment = render_invalid("markdown", problems)
    shown = sum(p in comment for p in problems)
    assert len(comment) <= 65_536
    assert 300 < shown < len(problems)  # 60,000 characters of ~150-character lines: about 400 shown
    assert f"... and {len(problems) - shown:,} more" in comment
