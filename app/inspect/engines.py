"""Tables and bytes per storage engine in user schemas, in a few queries whatever the count."""

from __future__ import annotations

from app.domain.errors import InnoTuneError
from app.domain.serverfacts import EngineUse
from app.inspect.prefetch import Prefetched, ask
from app.mysql.session import Session

SYSTEM = "('mysql', 'information_schema', 'performance_schema', 'sys')"
COUNT_USER_TABLES = (
    f"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN {SYSTEM}"  # noqa: S608
)
# Partitions, full-text index tables and temporary tables are InnoDB's own, not user tables.
COUNT_INNODB_TABLES = (
    "SELECT COUNT(*) FROM information_schema.INNODB_SYS_TABLES WHERE NAME LIKE '%/%' "
    "AND NAME NOT LIKE 'mysql/%' AND NAME NOT LIKE 'sys/%' AND NAME NOT LIKE '%/FTS\\_%' "
    "AND NAME NOT LIKE '%#P#%' AND NAME NOT LIKE '%#p#%' AND NAME NOT LIKE '%/#sql%'"
)
PER_ENGINE = (
    "SELECT ENGINE, COUNT(*), COALESCE(SUM(DATA_LENGTH), 0), "
    "COALESCE(SUM(INDEX_LENGTH), 0) FROM information_schema.TABLES "
)
PLAIN_ENGINES = (
    PER_ENGINE + f"WHERE TABLE_SCHEMA NOT IN {SYSTEM} AND ENGINE IS NOT NULL GROUP BY ENGINE"  # noqa: S608
)
INNODB_BYTES = (
    "SELECT COALESCE(SUM(FILE_SIZE), 0) FROM information_schema.INNODB_SYS_TABLESPACES "
    "WHERE NAME LIKE '%/%' AND NAME NOT LIKE 'mysql/%'"
)


def uses_dictionary(flavour: str, version: str) -> bool:
    """Whether engine use is counted from InnoDB's dictionary (MariaDB, MySQL 5.x)."""
    return flavour == "mariadb" or version.startswith("5.")


def engine_use(
    session: Session, flavour: str, version: str, pre: Prefetched | None = None
) -> list[EngineUse]:
    """Tables and bytes per storage engine in user schemas, in a few queries whatever the count.

    Asking information_schema.TABLES for sizes makes MariaDB and MySQL 5.7 open every
    table (seconds with tens of thousands). So: every table name (a directory scan), minus
    the InnoDB tables InnoDB's own dictionary lists with their file sizes, leaves the few
    other tables, whose sizes are then asked for by name. MySQL 8.0+ keeps sizes in its
    data dictionary, so one query is cheap there.
    """
    if not uses_dictionary(flavour, version):
        return _engine_rows(ask(session, PLAIN_ENGINES, pre))
    try:
        return _engine_use_from_dictionary(session, pre)
    except InnoTuneError:
        # InnoDB's dictionary tables need PROCESS; the slow query needs only SELECT.
        return _engine_rows(ask(session, PLAIN_ENGINES, pre))


def _engine_use_from_dictionary(session: Session, pre: Prefetched | None) -> list[EngineUse]:
    innodb_bytes = 0
    for (size,) in ask(session, INNODB_BYTES, pre):
        innodb_bytes = int(size or 0)
    # Counting is a directory scan; when every user table is InnoDB, that is all it takes.
    total = int(ask(session, COUNT_USER_TABLES, pre)[0][0] or 0)
    innodb_count = int(ask(session, COUNT_INNODB_TABLES, pre)[0][0] or 0)
    if total == innodb_count:
        return _engine_rows([("InnoDB", str(total), str(innodb_bytes), "0")] if total else [])
    names = session.query(
        f"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "  # noqa: S608
        f"WHERE TABLE_SCHEMA NOT IN {SYSTEM}"
    )
    innodb: set[tuple[str, str]] = set()
    for (name,) in session.query("SELECT NAME FROM information_schema.INNODB_SYS_TABLES"):
        schema, _, table = (name or "").partition("/")
        table = table.split("#P#")[0].split("#p#")[0]
        if table and schema not in ("mysql", "sys") and not table.startswith(("FTS_", "#sql")):
            innodb.add((decode_filename(schema), decode_filename(table)))
    others: dict[str, list[str]] = {}
    innodb_tables = 0
    for row_schema, row_table in names:
        if row_schema is None or row_table is None:
            continue
        if (row_schema, row_table) in innodb:
            innodb_tables += 1
        else:
            others.setdefault(row_schema, []).append(row_table)
    rows: list[tuple[str | None, ...]] = []
    for schema, tables in sorted(others.items()):
        for start in range(0, len(tables), 500):
            chunk = tables[start : start + 500]
            marks = ", ".join(["%s"] * len(chunk))
            sql = PER_ENGINE + f"WHERE TABLE_SCHEMA = %s AND TABLE_NAME IN ({marks})"
            rows += session.query(sql + " AND ENGINE IS NOT NULL GROUP BY ENGINE", [schema, *chunk])
    if innodb_tables:
        # Table files hold data and indexes together; the split is not known cheaply.
        rows.append(("InnoDB", str(innodb_tables), str(innodb_bytes), "0"))
    return _engine_rows(rows)


def _engine_rows(rows: list[tuple[str | None, ...]]) -> list[EngineUse]:
    merged: dict[str, list[int]] = {}
    for engine, count, data, index in rows:
        slot = merged.setdefault(engine or "", [0, 0, 0])
        slot[0] += int(count or 0)
        slot[1] += int(float(data or 0))
        slot[2] += int(float(index or 0))
    uses = [EngineUse(e, n, d, i) for e, (n, d, i) in merged.items()]
    return sorted(uses, key=lambda u: (-(u.data_bytes + u.index_bytes), u.engine))


def decode_filename(name: str) -> str:
    """Undo the server's file-name encoding of schema and table names (@0020 is a space)."""
    out, i = [], 0
    while i < len(name):
        if name[i] == "@" and i + 5 <= len(name):
            code = name[i + 1 : i + 5]
            try:
                out.append(chr(int(code, 16)))
                i += 5
                continue
            except ValueError:
                pass
        out.append(name[i])
        i += 1
    return "".join(out)
