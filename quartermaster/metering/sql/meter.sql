-- Metering body: continues the WITH clause that quartermaster.metering.query opens with the inventory's
-- tables (blocks, pool_windows, teams, idle_policy) and `held` (sql/held.sql: the usage rows summed). Written in the portable subset (tests/reports/test_meter_sql.py
-- lints it) so that SQLGlot can transpile it to Spark, BigQuery and Trino/Athena unchanged in meaning.
-- Quantities are integer "units": milli-accelerator-minutes (60,000 units = one accelerator-hour).
-- Money is exact DECIMAL: units x rate is 600 x cents.
placed AS (
  SELECT h.team, h.pool, w.pool_order, h.hour, w.block_id, h.used_units, h.requested_units, h.held_units
  FROM held AS h
  JOIN pool_windows AS w ON h.pool = w.pool AND h.hour >= w.window_from AND h.hour < w.window_to
),
block_hours AS (
  SELECT p.block_id, p.hour, SUM(p.held_units) AS held_units,
         LEAST(SUM(p.held_units), MAX(b.paid_units)) AS covered_units
  FROM placed AS p
  JOIN blocks AS b ON p.block_id = b.block_id
  GROUP BY p.block_id, p.hour
),
line_units AS (
  SELECT p.team, p.pool, p.pool_order, p.block_id, SUM(p.held_units) AS held_units,
         CAST(ROUND(SUM(CASE WHEN bh.held_units > 0
                             THEN p.held_units * (CAST(bh.covered_units AS DOUBLE) / bh.held_units)
                             ELSE 0 END), 3) AS DECIMAL(20, 3)) AS covered_units
  FROM placed AS p
  JOIN block_hours AS bh ON p.block_id = bh.block_id AND p.hour = bh.hour
  GROUP BY p.team, p.pool, p.pool_order, p.block_id
),
block_use AS (
  SELECT block_id, SUM(covered_units) AS covered_units, SUM(held_units - covered_units) AS overflow_units
  FROM block_hours
  GROUP BY block_id
),
lines AS (
  SELECT 'usage' AS kind, 0 AS part, q.team, q.pool, q.pool_order, b.committed, q.block_id, b.category, b.rate,
         CASE WHEN b.merged = 1 THEN CAST(q.held_units AS DECIMAL(20, 3)) ELSE q.covered_units END AS units
  FROM line_units AS q
  JOIN blocks AS b ON q.block_id = b.block_id
  UNION ALL
  SELECT 'usage' AS kind, 1 AS part, q.team, q.pool, q.pool_order, b.committed, q.block_id, b.overflow_category AS category, b.overflow_rate AS rate,
         CAST(q.held_units AS DECIMAL(20, 3)) - q.covered_units AS units
  FROM line_units AS q
  JOIN blocks AS b ON q.block_id = b.block_id
  WHERE b.merged = 0
  UNION ALL
  SELECT 'idle' AS kind, 0 AS part, CAST(NULL AS VARCHAR) AS team, b.idle_pool AS pool, 0 AS pool_order,
         b.committed, b.block_id, b.category, b.rate,
         CAST(b.paid_units * b.paid_hours - COALESCE(u.covered_units, 0) AS DECIMAL(20, 3)) AS units
  FROM blocks AS b
  LEFT JOIN block_use AS u ON b.block_id = u.block_id
),
total AS (
  -- 600 x the half-up cents of every paid unit at its rate and every overflow unit at its overflow rate
  SELECT SUM(CAST(b.paid_units * b.paid_hours AS DECIMAL(20, 3)) * b.rate
             + CAST(COALESCE(u.overflow_units, 0) AS DECIMAL(20, 3)) * b.overflow_rate) + 300 AS amount
  FROM blocks AS b
  LEFT JOIN block_use AS u ON b.block_id = u.block_id
),
target AS (
  SELECT CAST((amount - MOD(amount, 600)) / 600 AS BIGINT) AS cents FROM total
),
priced AS (
  SELECT l.*, l.units * l.rate AS amount FROM lines AS l WHERE l.units > 0
),
floored AS (
  SELECT p.*, CAST((p.amount - MOD(p.amount, 600)) / 600 AS BIGINT) AS floor_cents, MOD(p.amount, 600) AS remainder
  FROM priced AS p
),
ranked AS (
  -- largest remainder (pricing.allocate_cents); ties in line order: usage by team, pool, pool before
  -- commitment, covered before overflow; then idle by block
  SELECT f.*,
         ROW_NUMBER() OVER (ORDER BY f.remainder DESC, f.kind DESC, COALESCE(f.team, ''), f.pool_order, f.committed,
                            f.part, f.block_id) AS up_rank,
         ROW_NUMBER() OVER (ORDER BY f.remainder, f.kind, COALESCE(f.team, '') DESC, f.pool_order DESC,
                            f.committed DESC, f.part DESC, f.block_id DESC) AS down_rank,
         COUNT(*) OVER () AS n,
         SUM(f.floor_cents) OVER () AS floors
  FROM floored AS f
),
costed AS (
  SELECT r.kind, r.part, r.team, r.pool, r.block_id, r.category, r.rate, r.units,
         r.floor_cents
         + CASE WHEN t.cents >= r.floors THEN CAST(FLOOR((t.cents - r.floors - r.up_rank + r.n) / r.n) AS BIGINT)
                ELSE -CAST(FLOOR((r.floors - t.cents - r.down_rank + r.n) / r.n) AS BIGINT) END AS cents
  FROM ranked AS r
  CROSS JOIN target AS t
),
team_block_use AS (
  SELECT team, block_id, SUM(cents) AS cents FROM costed WHERE kind = 'usage' GROUP BY team, block_id
),
team_use AS (
  SELECT team, SUM(cents) AS cents FROM team_block_use GROUP BY team
),
payers AS (
  SELECT COUNT(*) AS n FROM team_use WHERE cents > 0
),
block_payers AS (
  SELECT block_id, COUNT(*) AS n FROM team_block_use WHERE cents > 0 GROUP BY block_id
),
idle_lines AS (
  SELECT c.block_id, c.pool, c.category, c.rate, c.cents, COALESCE(bp.n, 0) AS block_payers
  FROM costed AS c
  LEFT JOIN block_payers AS bp ON c.block_id = bp.block_id
  WHERE c.kind = 'idle'
),
weights AS (
  -- pricing.idle_weights: owner:TEAM; even (the teams that paid anything, else every team); proportional
  -- (the teams' charges on the idle block, else their charges overall)
  SELECT i.block_id, p.owner AS team, CAST(1 AS DECIMAL(38, 0)) AS weight
  FROM idle_lines AS i CROSS JOIN idle_policy AS p
  WHERE p.policy = 'owner'
  UNION ALL
  SELECT i.block_id, t.team, CAST(1 AS DECIMAL(38, 0)) AS weight
  FROM idle_lines AS i CROSS JOIN idle_policy AS p CROSS JOIN payers AS n CROSS JOIN teams AS t
  LEFT JOIN team_use AS u ON t.team = u.team
  WHERE p.policy = 'even' AND (n.n = 0 OR u.cents > 0)
  UNION ALL
  SELECT i.block_id, u.team, CAST(u.cents AS DECIMAL(38, 0)) AS weight
  FROM idle_lines AS i CROSS JOIN idle_policy AS p
  JOIN team_block_use AS u ON i.block_id = u.block_id
  WHERE p.policy = 'proportional' AND u.cents > 0
  UNION ALL
  SELECT i.block_id, u.team, CAST(u.cents AS DECIMAL(38, 0)) AS weight
  FROM idle_lines AS i CROSS JOIN idle_policy AS p CROSS JOIN team_use AS u
  WHERE p.policy = 'proportional' AND i.block_payers = 0 AND u.cents > 0
),
shared AS (
  -- pricing.split_cents: each share idle x weight / all weights, floored, then largest remainder by team
  SELECT w.block_id, w.team, i.cents AS idle_cents,
         CAST(i.cents AS DECIMAL(38, 0)) * w.weight AS x,
         SUM(w.weight) OVER (PARTITION BY w.block_id) AS whole
  FROM weights AS w
  JOIN idle_lines AS i ON w.block_id = i.block_id
),
share_floors AS (
  SELECT s.block_id, s.team, s.idle_cents, CAST((s.x - MOD(s.x, s.whole)) / s.whole AS BIGINT) AS floor_cents,
         MOD(s.x, s.whole) AS remainder
  FROM shared AS s
),
share_ranked AS (
  SELECT f.*, ROW_NUMBER() OVER (PARTITION BY f.block_id ORDER BY f.remainder DESC, f.team) AS up_rank,
         COUNT(*) OVER (PARTITION BY f.block_id) AS n,
         SUM(f.floor_cents) OVER (PARTITION BY f.block_id) AS floors
  FROM share_floors AS f
),
team_units AS (
  SELECT team, SUM(requested_units) AS requested_units, SUM(used_units) AS used_units,
         SUM(held_units) AS held_units
  FROM placed
  GROUP BY team
)
SELECT kind, part, team, block_id, pool, category, rate, units, cents,
       CAST(NULL AS BIGINT) AS requested_units, CAST(NULL AS BIGINT) AS used_units,
       CAST(NULL AS TIMESTAMP) AS hour, CAST(NULL AS BIGINT) AS minutes, CAST(NULL AS BIGINT) AS limit_units
FROM costed
UNION ALL
SELECT 'idle-share' AS kind, 0 AS part, r.team, r.block_id, i.pool, i.category, i.rate, CAST(0 AS DECIMAL(20, 3)) AS units,
       r.floor_cents + CAST(FLOOR((r.idle_cents - r.floors - r.up_rank + r.n) / r.n) AS BIGINT) AS cents,
       CAST(NULL AS BIGINT) AS requested_units, CAST(NULL AS BIGINT) AS used_units,
       CAST(NULL AS TIMESTAMP) AS hour, CAST(NULL AS BIGINT) AS minutes, CAST(NULL AS BIGINT) AS limit_units
FROM share_ranked AS r
JOIN idle_lines AS i ON r.block_id = i.block_id
UNION ALL
SELECT 'team' AS kind, 0 AS part, team, CAST(NULL AS INT) AS block_id, CAST(NULL AS VARCHAR) AS pool,
       CAST(NULL AS VARCHAR) AS category, CAST(NULL AS DECIMAL(16, 10)) AS rate,
       CAST(held_units AS DECIMAL(20, 3)) AS units, CAST(NULL AS BIGINT) AS cents, requested_units, used_units,
       CAST(NULL AS TIMESTAMP) AS hour, CAST(NULL AS BIGINT) AS minutes, CAST(NULL AS BIGINT) AS limit_units
FROM team_units
