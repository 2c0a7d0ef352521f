-- bench/sample_shell.sql: the sqlite3 shell's workload in bench/sample.py
-- (a table of 200000 rows with text, an index, grouping and a join).
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO t SELECT i, printf('row %d %s', i, hex(randomblob(16))), i % 977 FROM n;
CREATE INDEX tc ON t(c);
SELECT c, count(*), max(length(b)) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 3;
SELECT count(*) FROM t x JOIN t y ON x.c = y.c AND y.a = x.a + 977;
UPDATE t SET b = b || b WHERE a % 3 = 0;
SELECT sum(length(b)) FROM t;
