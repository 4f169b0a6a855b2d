"""Usage metering: usage records -> cost per team and cost centre, idle capacity and its sharing."""

from quartermaster.pricing import IDLE_POLICIES
from quartermaster.reports.metering.meter import ChargeLine, MeterResult, TeamCharge, check_policy, meter
from quartermaster.reports.metering.usage import (
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
    "IDLE_POLICIES",
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
