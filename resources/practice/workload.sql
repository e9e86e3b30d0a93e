-- A write workload for the practice server, for the before/after benchmark.
--
-- Run it with the client program over the practice server's socket, for example:
--   mariadb --defaults-file=PRACTICE/etc/my.cnf practice < resources/practice/workload.sql
-- or issue the CALL statements one by one through a database connection and time each.
-- The procedures are created by seed.sql; each exercises a different part of the write path:
--
--   workload_autocommit   many tiny transactions: one redo-log flush (and binary-log sync, if
--                         enabled) per row, so innodb_flush_log_at_trx_commit and the disk's
--                         fsync latency dominate.
--   workload_small_tx     typical OLTP: a few rows per transaction, secondary-index upkeep
--                         (change buffer, buffer pool) and one UPDATE per transaction.
--   workload_bulk         one large transaction: redo-log size and buffer-pool size matter,
--                         flushes per commit barely do.
--   workload_myisam       the MyISAM table: no transactions, key cache and table locks.
--
-- workload_cleanup() puts the data back as seeded, so every run starts from the same rows.

USE practice;
CALL workload_autocommit(500);
CALL workload_small_tx(100, 5);
CALL workload_bulk(20000);
CALL workload_myisam(500);
CALL workload_cleanup();
