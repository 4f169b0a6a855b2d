-- The only part of metering that reads every usage row: held, used and requested units per cluster, team, pool
-- and hour (a team holds max(requested, used) in each row), and how many rows have numbers that are missing,
-- negative, infinite or NaN (NaN compares above every number in DuckDB, Spark, BigQuery and Trino; such rows
-- count 0). Units are milli-accelerator-minutes: a row's mean accelerators x 1000, rounded, x its minutes.
held AS (
  SELECT cluster, team, flavor AS pool, hour,
         SUM(ok * CAST(ROUND(used * 1000) AS BIGINT) * minutes) AS used_units,
         SUM(ok * CAST(ROUND(requested * 1000) AS BIGINT) * minutes) AS requested_units,
         SUM(ok * CAST(ROUND(GREATEST(used, requested) * 1000) AS BIGINT) * minutes) AS held_units,
         COUNT(*) AS row_count,
         SUM(1 - ok) AS bad_numbers
  FROM (
    SELECT cluster, team, flavor, hour, minutes,
           CASE WHEN ok = 1 THEN accelerators_used ELSE 0 END AS used,
           CASE WHEN ok = 1 THEN accelerators_requested ELSE 0 END AS requested, ok
    FROM (
      SELECT u.*,
             CASE WHEN accelerators_used >= 0 AND accelerators_used < 1000000000
                       AND accelerators_requested >= 0 AND accelerators_requested < 1000000000
                  THEN 1 ELSE 0 END AS ok
      FROM usage AS u
    ) AS checked
  ) AS r
  GROUP BY cluster, team, flavor, hour
)
