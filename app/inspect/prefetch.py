"""Statements asked in one round trip, their answers kept until each is used once."""

from __future__ import annotations

from app.domain.errors import InnoTuneError
from app.mysql.session import Outcome, Row, Session, query_many

Prefetched = dict[str, Outcome]
"""Answers already fetched in a batch, by statement; each is used once."""


def ask(session: Session, sql: str, pre: Prefetched | None = None) -> list[Row]:
    """The rows of ``sql``: from ``pre`` when the batch fetched them, else asked now.

    Raises:
        InnoTuneError: the statement failed (in the batch, or now).
    """
    if pre is not None and sql in pre:
        outcome = pre.pop(sql)
        if isinstance(outcome, InnoTuneError):
            raise outcome
        return outcome
    return session.query(sql)


def prefetch(session: Session, statements: list[str], pre: Prefetched) -> None:
    """Ask ``statements`` in one round trip; keep their answers in ``pre``."""
    pre.update(zip(statements, query_many(session, statements), strict=True))
