"""Observability: actual usage pulled from Prometheus (Kueue's gauges), alert rules and dashboards from the
inventory. Metric names and their sources live in `metrics`."""
