-- What the usage records cannot mean: continues the WITH clause after `held` (sql/held.sql, with its `minutes`),
-- `period` (period_from, period_to), `period_days` (day_from, day_to) and `pool_capacity` (pool, capacity_units:
-- the pool's accelerators at its largest, capacity.pool_accelerators, in units an hour), which
-- quartermaster.metering.query writes. Run as it is by `qm meter` (meter.record_problems) and appended to
-- the warehouse query (`qm meter --emit-sql`), so both flag the same rows; in the portable subset of meter.sql.
in_period AS (
  SELECT h.* FROM held AS h CROSS JOIN period AS p WHERE h.hour >= p.period_from AND h.hour < p.period_to
),
overlap AS (
  -- more than 60 minutes of records for one pod (or, without pods, one team) in a pool and hour: the same hour
  -- recorded twice
  SELECT team, pool, hour, minutes FROM in_period WHERE minutes > 60
),
overlap_count AS (
  SELECT COUNT(*) AS n FROM overlap
),
over_capacity AS (
  -- checked once hours are single (a doubled hour would count twice)
  SELECT i.pool, i.hour, SUM(i.held_units) AS held_units, MAX(c.capacity_units) AS capacity_units
  FROM in_period AS i
  JOIN pool_capacity AS c ON i.pool = c.pool
  GROUP BY i.pool, i.hour
  HAVING SUM(i.held_units) > MAX(c.capacity_units)
),
recorded_hours AS (
  SELECT DISTINCT hour FROM in_period
),
unrecorded AS (
  -- a day of the period without any record (a day the fleet was idle is written as rows of 0 accelerators)
  SELECT d.day_from
  FROM period_days AS d
  LEFT JOIN recorded_hours AS r ON r.hour >= d.day_from AND r.hour < d.day_to
  GROUP BY d.day_from
  HAVING COUNT(r.hour) = 0
),
problems AS (
  SELECT 'usage-overlap' AS problem, team, pool, hour, CAST(minutes AS BIGINT) AS minutes,
         CAST(NULL AS BIGINT) AS held_units, CAST(NULL AS BIGINT) AS capacity_units
  FROM overlap
  UNION ALL
  SELECT 'usage-capacity' AS problem, CAST(NULL AS VARCHAR) AS team, o.pool, o.hour, CAST(NULL AS BIGINT) AS minutes,
         CAST(o.held_units AS BIGINT) AS held_units, CAST(o.capacity_units AS BIGINT) AS capacity_units
  FROM over_capacity AS o
  CROSS JOIN overlap_count AS n
  WHERE n.n = 0
  UNION ALL
  SELECT 'usage-coverage' AS problem, CAST(NULL AS VARCHAR) AS team, CAST(NULL AS VARCHAR) AS pool,
         day_from AS hour, CAST(NULL AS BIGINT) AS minutes, CAST(NULL AS BIGINT) AS held_units,
         CAST(NULL AS BIGINT) AS capacity_units
  FROM unrecorded
)
