"""How old facts are, and whether a change since has put them out of date (app/flows/freshness)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.domain.container import Container
from app.domain.hostfacts import HostFacts
from app.domain.instance import ServerInstance
from app.flows.freshness import (
    ServerChange,
    ago,
    applied_since,
    changes_since,
    dated,
    file_notes,
    is_old,
    of_target,
    restarted_since,
)
from app.inspect.instances import find_again
from app.jobs import snapshot as snap

SID = Path(__file__).parents[1] / "fixtures/hosts/sid-mysql-9.7/facts.json"
READ = datetime(2026, 11, 27, 14, 2, 31, tzinfo=UTC)


def _at(seconds: float) -> datetime:
    return READ + timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0, "just now"),
        (4.9, "just now"),
        (5, "5 seconds ago"),
        (59, "59 seconds ago"),
        (60, "1 minute ago"),
        (181, "3 minutes ago"),
        (3599, "59 minutes ago"),
        (3600, "1 hour ago"),
        (2 * 86400 - 1, "47 hours ago"),
        (3 * 86400, "3 days ago"),
        (-30, "just now"),  # a clock a little behind
        (-3600, "later than this computer's clock says it is now"),
    ],
)
def test_ago_in_plain_words(seconds: float, words: str) -> None:
    assert ago(seconds) == words


def test_fresh_facts_say_when_they_were_read() -> None:
    read = READ.isoformat()
    assert dated(read, now=_at(181), tz=UTC) == "Read at 14:02:31, 3 minutes ago."
    # Another day: the date too.
    assert dated(read, now=_at(86400), tz=UTC) == "Read at 2026-11-27 14:02:31, 24 hours ago."
    # A change before the facts were read leaves them current.
    before = ServerChange("the apply", _at(-60), restarted=True)
    assert dated(read, [before], now=_at(181), tz=UTC) == "Read at 14:02:31, 3 minutes ago."
    assert not is_old(read, [before])
    # A change in the same second as the reading came before it (both are to the second,
    # and the host's worker runs one task at a time).
    assert not is_old(read, [ServerChange("the apply", READ, restarted=True)])


def test_facts_from_before_a_change_are_marked_out_of_date() -> None:
    read = READ.isoformat()
    apply = ServerChange("the apply", _at(159), restarted=True)
    assert is_old(read, [apply])
    assert dated(read, [apply], now=_at(360), tz=UTC) == (
        "Read at 14:02:31, 6 minutes ago, before the apply at 14:05:10 restarted the server: "
        "the pid, uptime and values shown are out of date."
    )
    live = ServerChange("the apply", _at(159), restarted=False)
    assert dated(read, [live], now=_at(360), tz=UTC).endswith(
        "before the apply at 14:05:10 changed the server: the values shown are out of date."
    )
    rollback = ServerChange("the rollback", _at(271), restarted=False)
    earlier = ServerChange("the apply", _at(-600), restarted=True)
    text = dated(
        read, [earlier, live, rollback], now=_at(360), tz=UTC, lead="Planned from facts read"
    )
    assert text == (
        "Planned from facts read at 14:02:31, 6 minutes ago, before the apply at 14:05:10 and "
        "the rollback at 14:07:02 changed the server: the values shown are out of date."
    )
    assert changes_since(read, [earlier, live, rollback]) == [live, rollback]
    planned = dated(read, [apply], now=_at(360), tz=UTC, subject="the values it starts from")
    assert planned.endswith("restarted the server: the values it starts from are out of date.")
    # Facts read again after the changes are current again.
    assert not is_old(_at(400).isoformat(), [earlier, live, rollback])
    # A change to another host leaves these facts alone.
    elsewhere = ServerChange("the apply", _at(159), restarted=True, target="root@db2")
    here = ServerChange("the apply", _at(159), restarted=True, target="root@db1")
    assert of_target([elsewhere, here, apply], "root@db1") == [here, apply]
    assert not is_old(read, of_target([elsewhere], "root@db1"))
    # An unreadable time: every change may have come after.
    assert is_old("yesterday", [earlier])


def _sid() -> HostFacts:
    return HostFacts.from_json(SID.read_text())


def test_a_restart_is_told_by_the_uptime_and_the_pid() -> None:
    facts = _sid()  # read at 14:35:01 with the server up 7 s (pid 104)
    assert facts.server is not None and facts.server.uptime_seconds == 7
    read = datetime.fromisoformat(facts.collected_at)
    # Ten minutes later the same server has been up ten minutes and 7 s: no restart.
    assert restarted_since(facts, 607, 104, now=read + timedelta(seconds=600)) is None
    assert restarted_since(facts, 605, None, now=read + timedelta(seconds=600)) is None  # slack
    # Up 40 s only: it started after the facts were read.
    restart = restarted_since(facts, 40, 104, now=read + timedelta(seconds=600))
    assert restart is not None
    assert restart.why == (
        "it has been up 40 seconds, so it started at 14:44:21, after these facts were read at "
        "14:35:01 (up 7 seconds then)"
    )
    # No uptime to compare: a new pid tells it.
    moved = restarted_since(facts, None, 2461, now=read + timedelta(seconds=600))
    assert moved is not None and moved.why == "its pid is 2461 now, 104 in these facts"
    no_server = dataclasses.replace(facts, server=None)
    assert restarted_since(no_server, 1, 1) is None


def test_the_restarted_server_is_found_again_by_what_stays() -> None:
    old = ServerInstance(
        pid=105,
        binary="/usr/sbin/mysqld",
        argv=("/usr/sbin/mysqld",),
        sockets=("/run/mysqld/mysqld.sock",),
        ports=(3306,),
        started_by="systemd",
        service="mysql.service",
    )
    new = dataclasses.replace(old, pid=2461)
    other = dataclasses.replace(
        old, pid=300, sockets=("/tmp/other.sock",), ports=(3307,), service="mysql@other.service"
    )
    assert find_again([other, new], old) == new
    # Sockets not readable (no root): the port, then the service.
    blind = dataclasses.replace(new, sockets=())
    assert find_again([other, blind], old) == blind
    unit = dataclasses.replace(new, sockets=(), ports=())
    assert find_again([other, unit], old) == unit
    # Nothing that stays matches, or two do: not guessed.
    assert find_again([other], old) is None
    assert find_again([new, dataclasses.replace(new, pid=2462)], old) is None
    # A container by its name, whatever its host pid.
    box = Container(engine="docker", id="abc", name="db", image="mariadb:11.8")
    in_box = dataclasses.replace(old, container=box, sockets=(), ports=())
    assert find_again([dataclasses.replace(in_box, pid=9)], in_box) is not None
    renamed = dataclasses.replace(box, name="db2")
    assert find_again([dataclasses.replace(in_box, container=renamed)], in_box) is None


def _snapshot(taken: float, stamp: str) -> snap.Snapshot:
    return snap.Snapshot(
        id=f"{stamp}-abcdef",
        created=stamp,
        target="root@127.0.0.1:56365",
        instance={},
        files=(),
        values=(),
        taken=taken,
    )


def test_applies_since_are_told_by_this_computers_snapshots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = _sid()
    read = datetime.fromisoformat(facts.collected_at).timestamp()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from app.places import local_snapshot_dir

    kept = local_snapshot_dir(facts.target)
    snap.store_locally(_snapshot(read - 60, "20261127T143401Z"), kept)
    assert applied_since(facts, kept) == []
    now = datetime.fromisoformat(facts.collected_at) + timedelta(hours=3)
    notes = file_notes(facts, "sid.json", now=now, tz=UTC)
    assert notes == [
        f"The facts in sid.json, of {facts.target}, were read at 14:35:01, 3 hours ago."
    ]
    snap.store_locally(_snapshot(read + 60, "20261127T143601Z"), kept)
    assert applied_since(facts, kept) == ["20261127T143601Z-abcdef"]
    notes = file_notes(facts, "sid.json", now=now, tz=UTC)
    assert len(notes) == 2 and "20261127T143601Z-abcdef" in notes[1]
    assert notes[1].startswith(f"Warning: InnoTune applied changes to {facts.target} after")
