"""Usage metering: usage records -> cost per team and cost centre, idle capacity and its sharing (`meter`).

Part of the core: `qm meter` and the reports (`quartermaster.reports.metering`: reading usage files, exports) and
the planner (the closed months of the quarter in progress, metered as `qm meter` meters them) call the same
function.
"""

from quartermaster.metering.meter import ChargeLine, MeterResult, TeamCharge, check_policy, meter
from quartermaster.metering.usage import (
    Period,
    check_usage,
    coverage_label,
    covered_month,
    inventory_records,
    parse_period,
    period_of,
    read_usage,
)

__all__ = [
    "ChargeLine",
    "MeterResult",
    "Period",
    "TeamCharge",
    "check_policy",
    "check_usage",
    "coverage_label",
    "covered_month",
    "inventory_records",
    "meter",
    "parse_period",
    "period_of",
    "read_usage",
]
