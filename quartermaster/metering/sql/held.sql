-- The only part of metering that reads every usage row: held, used and requested units per cluster, team, pool
-- and hour (a team holds max(requested, used) in each row), and how many rows have numbers that are missing,
-- negative, infinite, NaN (NaN compares above every number in DuckDB, Spark, BigQuery and Trino) or above
-- :max_accelerators (quartermaster.bounds.MAX_ACCELERATORS, inlined by query.held_sql); such rows count 0.
-- Units are milli-accelerator-minutes: a row's mean accelerators x 1000, rounded, x its minutes. Rows are summed
-- per pod first (`pod` NULL: the team's records are one pod); `minutes` is the most minutes of records one pod
-- has in the group (above 60: the same hour recorded twice, see meter.record_problems).
held AS (
  SELECT cluster, team, pool, hour,
         SUM(used_units) AS used_units,
         SUM(requested_units) AS requested_units,
         SUM(held_units) AS held_units,
         SUM(bad_numbers) AS bad_numbers,
         MAX(minutes) AS minutes
  FROM (
    SELECT cluster, team, flavor AS pool, hour, pod,
           SUM(used_milli * minutes) AS used_units,
           SUM(requested_milli * minutes) AS requested_units,
           SUM(GREATEST(used_milli, requested_milli) * minutes) AS held_units,
           SUM(1 - ok) AS bad_numbers,
           SUM(minutes) AS minutes
    FROM (
      SELECT cluster, team, flavor, hour, pod, minutes, ok,
             CASE WHEN ok = 1 THEN CAST(ROUND(accelerators_used * 1000) AS BIGINT) ELSE 0 END AS used_milli,
             CASE WHEN ok = 1 THEN CAST(ROUND(accelerators_requested * 1000) AS BIGINT) ELSE 0 END AS requested_milli
      FROM (
        SELECT u.*,
               CASE WHEN accelerators_used >= 0 AND accelerators_used <= :max_accelerators
                         AND accelerators_requested >= 0 AND accelerators_requested <= :max_accelerators
                    THEN 1 ELSE 0 END AS ok
        FROM usage AS u
      ) AS checked
    ) AS r
    GROUP BY cluster, team, flavor, hour, pod
  ) AS per_pod
  GROUP BY cluster, team, pool, hour
)
