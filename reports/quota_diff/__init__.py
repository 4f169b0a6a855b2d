"""The quota PR diff: what a quota change does, what it costs and who must approve it.

build_quota_diff(base, head, ...) -> QuotaDiff     the data (past / current / delta), policies, approvers
render_markdown | render_text | render_json        one renderer per format: (data, options) -> str
open_side(spec, inventory, scratch) -> Side        an inventory folder or a git revision, loaded
"""

from quartermaster.reports.quota_diff.diff_data import build_quota_diff
from quartermaster.reports.quota_diff.diff_formats import (
    RENDERERS,
    RenderOptions,
    render_invalid,
    render_json,
    render_markdown,
    render_text,
)
from quartermaster.reports.quota_diff.policy import CHECKS
from quartermaster.reports.quota_diff.quota_cost import FlavorEconomics, flavor_economics
from quartermaster.reports.quota_diff.snapshot import RevisionError, Side, open_side
from quartermaster.reports.quota_diff.types import MARKER, Change, QuotaDiff, QuotaRow, TeamChange, Verdict

__all__ = [
    "CHECKS",
    "MARKER",
    "RENDERERS",
    "Change",
    "FlavorEconomics",
    "QuotaDiff",
    "QuotaRow",
    "RenderOptions",
    "RevisionError",
    "Side",
    "TeamChange",
    "Verdict",
    "build_quota_diff",
    "flavor_economics",
    "open_side",
    "render_invalid",
    "render_json",
    "render_markdown",
    "render_text",
]
