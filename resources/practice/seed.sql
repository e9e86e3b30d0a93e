-- The practice database: what `innotune practice start` loads into a fresh practice server.
--
-- Run by the mariadb/mysql client program (it understands DELIMITER). Safe to run again:
-- it drops and recreates the `practice` database, so a seed interrupted half-way is redone
-- in full at the next start. Data is computed from row numbers, not RAND(), so every
-- practice server holds the same rows and tests can check exact values.
--
-- Tables:
--   customers   InnoDB, 5 000 rows, secondary index on email
--   orders      InnoDB, 20 000 rows, secondary index on customer_id
--   events      InnoDB, 2 000 rows, the append-only table the workloads write to
--   legacy_log  MyISAM, 3 000 rows: an old table nobody converted (the MyISAM advice sees it)
-- Workloads (stored procedures, see workload.sql for how the benchmark calls them):
--   workload_autocommit(n)         n single-row INSERTs, each its own autocommit transaction
--   workload_small_tx(tx, rows)    tx transactions of `rows` INSERTs plus one UPDATE each
--   workload_bulk(n)               one INSERT ... SELECT of n rows in a single transaction
--   workload_myisam(n)             n single-row INSERTs into the MyISAM table
--   workload_cleanup()             deletes every row the workloads added

DROP DATABASE IF EXISTS practice;
CREATE DATABASE practice CHARACTER SET utf8mb4;
USE practice;

CREATE TABLE customers (
    id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    email VARCHAR(128) NOT NULL,
    country CHAR(2) NOT NULL,
    balance DECIMAL(12, 2) NOT NULL DEFAULT 0,
    created_at DATETIME NOT NULL,
    KEY idx_customers_email (email)
) ENGINE = InnoDB;

CREATE TABLE orders (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    customer_id INT UNSIGNED NOT NULL,
    amount DECIMAL(10, 2) NOT NULL,
    status VARCHAR(12) NOT NULL,
    source VARCHAR(8) NOT NULL DEFAULT 'seed',
    created_at DATETIME NOT NULL,
    KEY idx_orders_customer (customer_id)
) ENGINE = InnoDB;

CREATE TABLE events (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    kind VARCHAR(16) NOT NULL,
    payload VARCHAR(255) NOT NULL,
    created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB;

CREATE TABLE legacy_log (
    id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    message VARCHAR(255) NOT NULL,
    logged_at DATETIME NOT NULL
) ENGINE = MyISAM;

-- 0..9999 from four cross-joined digit lists (portable: no sequence engine, no recursion limit).
CREATE TEMPORARY TABLE digits (d INT NOT NULL PRIMARY KEY);
INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
CREATE TEMPORARY TABLE numbers (n INT NOT NULL PRIMARY KEY);
INSERT INTO numbers
SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d
FROM digits a, digits b, digits c, digits e;

INSERT INTO customers (name, email, country, balance, created_at)
SELECT CONCAT('Customer ', n + 1),
       CONCAT('customer', n + 1, '@example.com'),
       ELT(1 + n % 5, 'DE', 'FR', 'US', 'JP', 'BR'),
       (n * 37 % 100000) / 100,
       '2024-01-01 00:00:00' + INTERVAL n MINUTE
FROM numbers WHERE n < 5000 ORDER BY n;

INSERT INTO orders (customer_id, amount, status, created_at)
SELECT 1 + (n * 7 + k.d) % 5000,
       (n * 53 + k.d * 11) % 50000 / 100,
       ELT(1 + (n + k.d) % 3, 'new', 'paid', 'shipped'),
       '2024-02-01 00:00:00' + INTERVAL (n * 2 + k.d) MINUTE
FROM numbers, digits k WHERE n < 10000 AND k.d < 2 ORDER BY n, k.d;

INSERT INTO events (kind, payload, created_at)
SELECT 'seed', CONCAT('seed event ', n + 1), '2024-03-01 00:00:00' + INTERVAL n SECOND
FROM numbers WHERE n < 2000 ORDER BY n;

INSERT INTO legacy_log (message, logged_at)
SELECT CONCAT('legacy message ', n + 1), '2023-01-01 00:00:00' + INTERVAL n MINUTE
FROM numbers WHERE n < 3000 ORDER BY n;

DROP TEMPORARY TABLE numbers;
DROP TEMPORARY TABLE digits;

DELIMITER //

CREATE PROCEDURE workload_autocommit(IN n INT)
    COMMENT 'n single-row INSERTs, each committed on its own (one log flush per row)'
BEGIN
    DECLARE i INT DEFAULT 0;
    -- Each statement of a procedure commits by itself when autocommit is on.
    SET autocommit = 1;
    WHILE i < n DO
        INSERT INTO events (kind, payload) VALUES ('autocommit', CONCAT('single row ', i));
        SET i = i + 1;
    END WHILE;
END //

CREATE PROCEDURE workload_small_tx(IN tx INT, IN rows_per_tx INT)
    COMMENT 'tx transactions of rows_per_tx order INSERTs plus one balance UPDATE'
BEGIN
    DECLARE t INT DEFAULT 0;
    DECLARE r INT DEFAULT 0;
    WHILE t < tx DO
        START TRANSACTION;
        SET r = 0;
        WHILE r < rows_per_tx DO
            INSERT INTO orders (customer_id, amount, status, source, created_at)
            VALUES (1 + (t * 31 + r) % 5000, 9.99, 'new', 'bench', NOW());
            SET r = r + 1;
        END WHILE;
        UPDATE customers SET balance = balance + 9.99 * rows_per_tx
        WHERE id = 1 + (t * 31) % 5000;
        COMMIT;
        SET t = t + 1;
    END WHILE;
END //

CREATE PROCEDURE workload_bulk(IN n INT)
    COMMENT 'one INSERT ... SELECT of n rows in a single transaction (a bulk load)'
BEGIN
    START TRANSACTION;
    INSERT INTO events (kind, payload)
    SELECT 'bulk', CONCAT('bulk row ', seq.n)
    FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n
          FROM (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                UNION ALL SELECT 8 UNION ALL SELECT 9) a,
               (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                UNION ALL SELECT 8 UNION ALL SELECT 9) b,
               (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                UNION ALL SELECT 8 UNION ALL SELECT 9) c,
               (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                UNION ALL SELECT 8 UNION ALL SELECT 9) e,
               (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                UNION ALL SELECT 8 UNION ALL SELECT 9) f) seq
    WHERE seq.n < n;
    COMMIT;
END //

CREATE PROCEDURE workload_myisam(IN n INT)
    COMMENT 'n single-row INSERTs into the MyISAM table (no transactions, table locks)'
BEGIN
    DECLARE i INT DEFAULT 0;
    WHILE i < n DO
        INSERT INTO legacy_log (message, logged_at) VALUES (CONCAT('bench message ', i), NOW());
        SET i = i + 1;
    END WHILE;
END //

CREATE PROCEDURE workload_cleanup()
    COMMENT 'delete every row the workloads added, so runs start from the same data'
BEGIN
    DELETE FROM events WHERE kind <> 'seed';
    DELETE FROM orders WHERE source = 'bench';
    DELETE FROM legacy_log WHERE message LIKE 'bench message %';
    UPDATE customers SET balance = (id - 1) * 37 % 100000 / 100;
END //

DELIMITER ;
