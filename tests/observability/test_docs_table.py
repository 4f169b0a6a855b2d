"""The alerts docs/reference/metrics-and-alerts.md lists for the example are the ones `qm observability render`
writes (issue 35, point 6: a figure the docs quote from the example is checked against its output)."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from typing import Any

from quartermaster.loader import load
from quartermaster.modules.observability.rules import Options, build_rules
from tests.paths import DOCS, INVENTORY

PAGE = DOCS / "reference" / "metrics-and-alerts.md"


def key(rule: dict[str, Any]) -> tuple[str, str, str]:
    """An alert as the page's table names it: name, `for` and its labels but severity."""
    labels = ", ".join(f"{k}={v}" for k, v in rule["labels"].items() if k != "severity")
    return rule["alert"], rule["for"], labels


def test_the_documented_alerts_of_the_example_are_the_rendered_ones() -> None:
    text = PAGE.read_text(encoding="utf-8")
    intro = re.search(r"`--at (\S+)`, no `--plan`\) gives (\d+) alerts: (\d+) `(\w+)`.*?, (\d+) `(\w+)`", text, re.S)
    assert intro, "the page's first sentence names the day, the count and the two most common alerts"
    rules, _ = build_rules(load(INVENTORY), Options(at=dt.date.fromisoformat(intro[1])))
    alerts = [r for g in rules["groups"] for r in g["rules"] if "alert" in r]
    count = Counter(r["alert"] for r in alerts)
    assert (len(alerts), count[intro[4]], count[intro[6]]) == (int(intro[2]), int(intro[3]), int(intro[5]))
    rows = re.findall(r"^\| `(\w+)` \| (\w+) \| ([^|]+) \| ([^|]+) \|$", text, re.M)
    assert rows, "the page's table of alerts"
    shown = {key(r): r["annotations"]["summary"] for r in alerts}
    for alert, wait, labels, summary in rows:
        assert shown.get((alert, wait, labels.strip())) == summary.strip(), (alert, labels)
    # every alert that is neither of the two counted kinds is in the table
    others = {k for k in shown if k[0] not in (intro[4], intro[6])}
    assert others == {(a, w, labels.strip()) for a, w, labels, _ in rows}
