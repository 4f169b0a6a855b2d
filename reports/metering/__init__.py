"""Usage metering as `qm meter` runs it: the metering function of the core (`quartermaster.metering`), usage
files read where they lie (`source`) and the exports (`export`)."""

from quartermaster.metering import (
    ChargeLine,
    MeterResult,
    Period,
    TeamCharge,
    check_policy,
    check_usage,
    coverage_label,
    covered_month,
    inventory_records,
    meter,
    parse_period,
    period_of,
    read_usage,
)
from quartermaster.pricing import IDLE_POLICIES

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
