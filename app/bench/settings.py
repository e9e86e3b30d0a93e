"""The server settings a benchmark report records, so that two runs can be told apart."""

from __future__ import annotations

from app.domain.errors import InnoTuneError
from app.mysql.session import Session

#: Server settings recorded with each report, so that two runs can be told apart: the version,
#: the binary log's switch, and every server variable a plan may touch (the catalogue's
#: server variables; a unit test holds the two lists together). A variable the server lacks
#: is simply absent from the report.
SETTINGS = (
    "version",
    "log_bin",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_log_at_timeout",
    "sync_binlog",
    "binlog_group_commit_sync_delay",
    "binlog_commit_wait_count",
    "binlog_commit_wait_usec",
    "innodb_doublewrite",
    "innodb_flush_method",
    "innodb_log_file_buffering",
    "innodb_data_file_buffering",
    "innodb_log_file_write_through",
    "innodb_data_file_write_through",
    "innodb_use_fdatasync",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_max_dirty_pages_pct",
    "innodb_max_dirty_pages_pct_lwm",
    "innodb_adaptive_flushing",
    "innodb_lru_scan_depth",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_change_buffering",
    "innodb_file_per_table",
    "innodb_buffer_pool_size",
    "innodb_buffer_pool_instances",
    "innodb_buffer_pool_chunk_size",
    "key_buffer_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_log_files_in_group",
    "innodb_log_buffer_size",
)


def server_settings(session: Session) -> dict[str, str]:
    """The settings a report records (see :data:`SETTINGS`)."""
    listed = ", ".join(f"'{n}'" for n in SETTINGS)
    rows = session.query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({listed})")  # noqa: S608
    return {str(r[0]): r[1] or "" for r in rows if r and r[0]}


def pool_free_bytes(session: Session) -> int | None:
    """The buffer pool's free pages, in bytes (None: the server does not say)."""
    rows = session.query("SHOW GLOBAL STATUS WHERE Variable_name = 'Innodb_buffer_pool_pages_free'")
    size = session.query("SELECT @@GLOBAL.innodb_page_size")
    free = str(rows[0][1]) if rows and rows[0] else ""
    page = str(size[0][0]) if size and size[0] else ""
    return int(free) * int(page) if free.isdigit() and page.isdigit() else None


def binlog_bytes(session: Session) -> int | None:
    """The binary log files' total size (None: no binary log, or the files may not be listed)."""
    try:
        rows = session.query("SHOW BINARY LOGS")
    except InnoTuneError:
        return None
    sizes = [str(r[1]) for r in rows if r and len(r) > 1]
    return sum(int(x) for x in sizes if x.isdigit()) if sizes else None


def binlog_growth(session: Session, first: int | None) -> int | None:
    """How much the binary log grew since :func:`binlog_bytes` read ``first`` (None: unknown)."""
    if first is None:
        return None
    last = binlog_bytes(session)
    # Smaller only when the server purged old files meanwhile: then not known.
    return last - first if last is not None and last >= first else None
