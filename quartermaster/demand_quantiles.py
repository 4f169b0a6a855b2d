"""A demand forecast row's distribution, and what one accelerator of demand needs of another class.

Read by the planner (load-duration curves, demand draws, routes) and by the finance report (a quarter's cost at
p10 demand) alike, so both read the same fitted distribution: it belongs to the inventory's demand rows, not to
either of them.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def quantile_curve(quantiles: dict[float, float], bands: tuple[tuple[float, float], ...]) -> list[tuple[float, float]]:
    """(weight, level) per band of the demand distribution through the given quantiles (share -> accelerators),
    level = the distribution's mean over the band.

    The quantile function Q(p) is fitted in z = Phi^-1(p): between two given quantiles log Q is linear in z,
    a lognormal piece (linear in z where the lower one is 0), and beyond the outer ones the outer piece goes on.
    With p50 and p90 alone that is the lognormal with median p50 and sigma = ln(p90 / p50) / z_0.9, so
    right-skewed demand keeps its long upper tail; p10 and p99, where given, bend the tails through them.
    The band means are exact: int exp(a + b z) phi(z) dz = exp(a + b^2 / 2) Phi(z - b), and
    int (a + b z) phi(z) dz = a Phi(z) - b phi(z).
    """
    if len(set(quantiles.values())) == 1:  # one level: every band at it, exactly
        return [(hi - lo, float(next(iter(quantiles.values())))) for lo, hi in bands]
    pieces = _pieces(quantiles)
    out = []
    for lo, hi in bands:
        za, zb = _Z.inv_cdf(lo) if lo > 0 else -math.inf, _Z.inv_cdf(hi) if hi < 1 else math.inf
        total = sum(
            _integral(kind, a, b, max(za, z1), min(zb, z2))
            for z1, z2, kind, a, b in pieces
            if max(za, z1) < min(zb, z2)
        )
        out.append((hi - lo, max(0.0, total / (hi - lo))))
    return out


def quantile_at(quantiles: dict[float, float], p: float) -> float:
    """Q(p): the demand (accelerators) at share `p` of the hours (0 < p < 1) of the distribution quantile_curve fits
    through `quantiles`; with p50 and p90 alone Q(0.1) = p50^2 / p90 (the lognormal is symmetric in log space)."""
    if p in quantiles or len(set(quantiles.values())) == 1:  # a given quantile exactly
        return float(quantiles.get(p, next(iter(quantiles.values()))))
    z = _Z.inv_cdf(p)
    _, _, kind, a, b = next(piece for piece in _pieces(quantiles) if piece[0] <= z <= piece[1])
    return max(0.0, math.exp(a + b * z) if kind == "log" else a + b * z)


def _pieces(quantiles: dict[float, float]) -> list[tuple[float, float, str, float, float]]:
    """The pieces (z from, z to, kind, a, b) of the fitted Q: Q(z) = exp(a + b z) ("log") or a + b z ("lin"),
    for at least two distinct quantiles (see quantile_curve)."""
    knots = sorted((_Z.inv_cdf(p), float(v)) for p, v in quantiles.items())
    pieces: list[tuple[float, float, str, float, float]] = []
    for i, (z, v) in enumerate(knots):
        lo = -math.inf if i == 0 else z
        if i + 1 < len(knots):
            z2, v2 = knots[i + 1]
            pieces.append((lo, z2, *_piece(z, v, z2, v2)))
        else:
            pieces.append((z, math.inf, *pieces[-1][2:]))  # the last piece goes on
    if knots[0][1] <= 0:  # below a zero quantile demand stays 0
        first = pieces[0]
        pieces[0:1] = [(-math.inf, knots[0][0], "lin", 0.0, 0.0), (knots[0][0], *first[1:])]
    return pieces


_Z = NormalDist()


def _piece(z1: float, v1: float, z2: float, v2: float) -> tuple[str, float, float]:
    """(kind, a, b) of Q through (z1, v1) and (z2, v2): log-linear if both are positive, else linear."""
    if v1 > 0 and v2 > 0:
        b = (math.log(v2) - math.log(v1)) / (z2 - z1)
        return "log", math.log(v1) - b * z1, b
    b = (v2 - v1) / (z2 - z1)
    return "lin", v1 - b * z1, b


def _integral(kind: str, a: float, b: float, z1: float, z2: float) -> float:
    """int_{z1}^{z2} Q(z) phi(z) dz for one piece of Q (see quantile_curve)."""
    if kind == "log":
        return math.exp(a + b * b / 2) * (_Z.cdf(z2 - b) - _Z.cdf(z1 - b))
    pdf = [0.0 if math.isinf(z) else _Z.pdf(z) for z in (z1, z2)]
    return a * (_Z.cdf(z2) - _Z.cdf(z1)) - b * (pdf[1] - pdf[0])


def shifted_quantiles(quantiles: dict[float, float], z: float) -> dict[float, float]:
    """The quantiles of the fitted distribution moved by `z` standard deviations in z = Phi^-1(p): each given p
    takes Q(Phi(Phi^-1(p) + z)). With p50 and p90 alone that scales every level by (p90 / p50)^(z / z_0.9), so the
    new median is Q(Phi(z)); a demand draw of `qm plan --draws` (planner/sweep.py)."""
    return {p: quantile_at(quantiles, min(max(_Z.cdf(_Z.inv_cdf(p) + z), 1e-12), 1 - 1e-12)) for p in quantiles}


def equivalence_ratio(
    inventory_equivalence: dict[str, float], demand_accelerator: str, offer_accelerator: str
) -> float | None:
    """Accelerators of the offer needed per accelerator of demand; None if they are not fungible."""
    if demand_accelerator == offer_accelerator:
        return 1.0
    a, b = inventory_equivalence.get(demand_accelerator), inventory_equivalence.get(offer_accelerator)
    return None if a is None or b is None else a / b
