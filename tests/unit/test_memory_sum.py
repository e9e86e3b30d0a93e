"""Every memory figure shown adds up (issue 36, item 4).

The words are parsed back into numbers, the way a person reading them would: the slider's
note and the plan's sentence (share = pool / RAM), the budget clause in reasons, warnings and
the starting point's why (RAM - each part = what is left = what fits + its bookkeeping), and
what stays free (RAM - kept - pool - bookkeeping = free). Each figure is taken as the
interval its rounding allows (size_text shows one decimal: "1.2 GiB" is 1.15-1.25 GiB), so a
sum "adds up" when the intervals allow it, and no more.

Over the recorded host facts (tests/fixtures/hosts/*/facts.json), every host profile of the
planner matrix on every server line, and host variants with a big process and other
database servers on the same host, at many slider positions.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.domain.container import Container
from app.domain.facts import MachineFacts, ProcessMemory
from app.domain.hostfacts import HostFacts
from app.domain.instance import ServerInstance
from app.domain.plan import Plan
from app.domain.words import size_text
from app.inspect.host_machine import parse_database_processes, parse_processes
from app.inspect.report import machine_lines
from app.planner import default_positions, make_plan
from app.planner.budget import memory_budget, pool_of
from app.planner.memorysum import POOL_OVERHEAD
from app.planner.slidertexts import note
from app.planner.starts import starting_points
from tests.unit.planner_truth import LINES
from tests.unit.test_planner_matrix import CAT, facts_for, hosts

FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "hosts").glob("*/facts.json"))
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}
SIZE = r"\d+(?:\.\d)? (?:B|KiB|MiB|GiB|TiB)"
GIB = UNITS["GiB"]
MIB = UNITS["MiB"]


@dataclasses.dataclass(frozen=True)
class Fig:
    """A figure as shown, and how far the bytes behind it may be from it."""

    value: float
    slack: float

    def __add__(self, other: Fig) -> Fig:
        return Fig(self.value + other.value, self.slack + other.slack)

    def __sub__(self, other: Fig) -> Fig:
        return Fig(self.value - other.value, self.slack + other.slack)


def fig(text: str) -> Fig:
    """ "1.2 GiB" -> 1.2 GiB, give or take 0.05 GiB; "16 MiB" is exact (size_text)."""
    number, unit = text.split()
    scale = UNITS[unit]
    if unit == "B":
        return Fig(float(number), 0.5)
    return Fig(float(number) * scale, 0.05 * scale if "." in number else 0.0)


def agree(a: Fig, b: Fig, what: str) -> list[str]:
    """Empty when the two figures can be the same bytes; else why not."""
    if abs(a.value - b.value) <= a.slack + b.slack + 2:
        return []
    return [f"{what}: {a.value / MIB:.1f} MiB is not {b.value / MIB:.1f} MiB"]


def _top_figures(listing: str) -> list[tuple[Fig, str]]:
    """The figure in each top-level parenthesis of "the OS (2.4 GiB), ... (1.2 GiB: ...)"."""
    found, depth, start = [], 0, 0
    for i, ch in enumerate(listing):
        if ch == "(":
            if depth == 0:
                start = i + 1
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                inner = listing[start:i]
                head = re.match(rf"({SIZE})(?:: (.*))?$", inner, re.S)
                assert head is not None, inner
                found.append((fig(head[1]), head[2] or ""))
    return found


FITS = re.compile(
    rf"of the ({SIZE}) (?:of RAM|the server's container may use), room is kept for (.*?), "
    rf"which (?:is ({SIZE}) more than there is, so no pool fits|leaves ({SIZE})"
    rf"(?:, and the pool with its bookkeeping may take at most ({SIZE}) of it \([^)]*\))?; "
    rf"the pool needs about 5% more for its bookkeeping, so at most ({SIZE}) fits "
    rf"\(with ({SIZE}) of bookkeeping\))"
)
FREE = re.compile(
    rf"with every connection busy (?:only ({SIZE}) stay free|({SIZE}) stay free|"
    rf"(nothing) stays free|the server needs ({SIZE}) more than there is) \(the ({SIZE}) "
    rf"(?:of RAM|the server's container may use) less ({SIZE}) kept for [^()]*?, less the "
    rf"({SIZE}) pool and its ({SIZE}) of bookkeeping\)"
)
CONNECTIONS = re.compile(rf"(\d+) connections x ({SIZE}) of buffers")
SHARE = re.compile(rf"(?:^|\()((?:under )?[\d.]+)% of RAM[:;)]? ?({SIZE})?")


def fits_problems(text: str) -> tuple[list[str], Fig | None]:
    """The budget clause in ``text`` adds up; also what it keeps beside the pool."""
    bad: list[str] = []
    kept = None
    for m in FITS.finditer(text):
        total, listing, over, left, cap, fits, books = m.groups()
        parts = _top_figures(listing)
        kept = Fig(0, 0)
        for part, detail in parts:
            kept += part
            inner = [fig(x) for x in re.findall(SIZE, detail)]
            if inner:
                whole = Fig(0, 0)
                for x in inner:
                    whole += x
                bad += agree(whole, part, f"the parts of {detail!r}")
        for n, each in CONNECTIONS.findall(listing):
            one = fig(each)
            times = Fig(one.value * int(n), one.slack * int(n))
            conn = next(p for p, _ in parts if abs(p.value - times.value) <= times.slack + p.slack)
            bad += agree(times, conn, f"{n} connections x {each}")
        if over:
            bad += agree(kept - fig(total), fig(over), f"the parts over RAM in {m[0]!r}")
            continue
        bad += agree(fig(total) - kept, fig(left), f"RAM less the parts in {m[0]!r}")
        room = fig(cap) if cap else fig(left)
        bad += agree(fig(fits) + fig(books), room, f"what fits and its bookkeeping in {m[0]!r}")
        pool = fig(fits)
        expected = Fig(pool.value * (POOL_OVERHEAD - 1), pool.slack * (POOL_OVERHEAD - 1))
        bad += agree(fig(books), expected, f"5% bookkeeping in {m[0]!r}")
    return bad, kept


def free_problems(text: str, kept: Fig | None) -> list[str]:
    """What stays free adds up to the total it names, and keeps what the budget kept."""
    bad = []
    for m in FREE.finditer(text):
        thin, free, nothing, short, total, reserved, pool, books = m.groups()
        if nothing:
            stays = Fig(0, MIB)
        elif short:
            stays = Fig(-fig(short).value, fig(short).slack)
        else:
            stays = fig(thin or free)
        bad += agree(fig(total) - fig(reserved) - fig(pool) - fig(books), stays, m[0])
        if kept is not None:
            bad += agree(fig(reserved), kept, f"kept in {m[0]!r} and in the budget")
    return bad


def share_problems(text: str, ram: Fig) -> list[str]:
    """ "55% of RAM: 12.9 GiB" or "to 12.9 GiB (55% of RAM": the share is the pool's own."""
    bad = []
    shown = [(m[1], m[2]) for m in SHARE.finditer(text)]
    pools = re.findall(rf"to ({SIZE}) \(((?:under )?[\d.]+)% of RAM", text)
    pools += re.findall(rf"stays at ({SIZE}) \(((?:under )?[\d.]+)% of RAM", text)
    pairs = [(p, s) for s, p in shown if p] + list(pools)
    for size, share in pairs:
        pool = fig(size)
        low = (pool.value - pool.slack) * 100 / (ram.value + ram.slack)
        high = (pool.value + pool.slack) * 100 / (ram.value - ram.slack)
        if share.startswith("under"):
            ok = low < float(share.split()[1])
        else:
            half = 0.05 if "." in share else 0.5
            ok = low - half <= float(share) <= high + half
        if not ok:
            bad.append(f"{share}% of RAM for {size}: {low:.2f}-{high:.2f}% in {text!r}")
    return bad


def texts(plan: Plan, facts: HostFacts) -> Iterator[str]:
    """Every text that speaks of the buffer pool's memory."""
    yield note("memory", plan, facts)
    yield dict(plan.sentences).get("memory", "")
    change = plan.change("innodb_buffer_pool_size")
    if change is not None:
        yield change.reason + " " + change.risk
    for x in plan.left_alone:
        if x.knob == "innodb_buffer_pool_size":
            yield x.why
    yield from plan.warnings


def problems(plan: Plan, facts: HostFacts) -> list[str]:
    """Every memory figure in the plan's words that does not add up."""
    ram = facts.os.machine.mem_total_bytes
    assert ram
    budget = memory_budget(facts, pool_key_buffer(plan, facts))
    assert budget is not None
    bad: list[str] = []
    shown_ram = Fig(float(ram), 0.05 * GIB)  # the RAM as sentences show it, one decimal
    for text in texts(plan, facts):
        found, kept = fits_problems(text)
        bad += found + free_problems(text, kept)
        bad += share_problems(text, shown_ram)
    # The free clause stands alone in the sentence: it must still keep what the budget keeps.
    full = fits_problems(budget.words())[1]
    bad += free_problems(dict(plan.sentences).get("memory", ""), full)
    pool = pool_of(plan, facts)
    assert pool is not None
    if plan.change("innodb_buffer_pool_size") is not None and "fits" not in budget.words():
        bad.append(f"no budget clause: {budget.words()!r}")
    return bad


def pool_key_buffer(plan: Plan, facts: HostFacts) -> int | None:
    change = plan.change("key_buffer_size")
    return int(change.proposed) if change is not None else None


def start_problems(facts: HostFacts) -> list[str]:
    """The starting point's why: RAM less the others, the margin, the cap, all add up."""
    start = starting_points(facts).get("memory")
    if start is None:
        return []
    why = start.why
    found, _ = fits_problems(why)
    bad = list(found)
    held = re.search(rf"hold (?:only )?({SIZE}) \(([\d.]+)% of RAM\).*?half of the ({SIZE})", why)
    ram = Fig(float(facts.os.machine.mem_total_bytes or 0), 0.05 * GIB)
    if held:
        bad += agree(ram - fig(held[1]), fig(held[3]), f"RAM less the others in {why!r}")
    margin = re.search(
        rf"which leaves ({SIZE}); .*?; ({SIZE}) of that stays free for surprises, which leaves "
        rf"({SIZE}) for the pool and its bookkeeping and caps the pool at ({SIZE})",
        why,
    )
    if margin:
        left, spare, rest, cap = (fig(x) for x in margin.groups())
        bad += agree(left - spare, rest, f"the margin in {why!r}")
        bad += agree(
            Fig(cap.value * POOL_OVERHEAD, cap.slack * POOL_OVERHEAD), rest, f"the cap in {why!r}"
        )
    return bad


# -- host facts ----------------------------------------------------------------------------


def with_process(facts: HostFacts, rss: int) -> HostFacts:
    """The facts with one more big process (SYNTHETIC: the issue's 6 GiB one)."""
    m = facts.os.machine
    big = (ProcessMemory(999_999, "stress", rss), *m.big_processes)
    return dataclasses.replace(
        facts, os=dataclasses.replace(facts.os, machine=dataclasses.replace(m, big_processes=big))
    )


def with_other_servers(facts: HostFacts) -> HostFacts:
    """Two more database servers beside this one (SYNTHETIC), as inspection records them.

    One started with its own 4 GiB pool on its command line (RSS 300 MiB, idle), one whose
    option files set a 2 GiB pool (RSS 300 MiB), one whose files set none (the default
    128 MiB pool, RSS 500 MiB), one in a container with only its resident memory known,
    one whose memory was not read.
    """
    m = facts.os.machine
    server = facts.server
    assert server is not None
    me = server.instance
    pooled = ServerInstance(
        4242, "/usr/sbin/mariadbd", ("mariadbd", "--innodb-buffer-pool-size=4G")
    )
    boxed = ServerInstance(
        4343,
        "/usr/sbin/mariadbd",
        ("mariadbd",),
        container=Container("docker", "c0ffee", "db2", "mariadb:11.8"),
    )
    unread = ServerInstance(4444, "/usr/sbin/mysqld", ("mysqld",))
    files = ServerInstance(
        4545,
        "/usr/sbin/mariadbd",
        ("mariadbd", "--defaults-file=/etc/b.cnf"),
        files_pool="2G",
        files_read=True,
        files_connections="300",
    )
    unset = ServerInstance(4646, "/usr/sbin/mysqld", ("mysqld",), files_read=True)
    procs = parse_database_processes(
        [
            f"{me.pid} 200000 mariadbd",
            "4242 307200 mariadbd",
            "4343 1048576 mariadbd",
            "4545 307200 mariadbd",
            "4646 512000 mysqld",
        ]
    )
    machine = dataclasses.replace(m, database_processes=procs)
    return dataclasses.replace(
        facts,
        os=dataclasses.replace(facts.os, machine=machine),
        instances=(me, pooled, boxed, unread, files, unset),
    )


def recorded() -> list[tuple[str, HostFacts]]:
    return [(p.parent.name, HostFacts.from_json(p.read_text())) for p in FIXTURES]


def matrix() -> list[tuple[str, HostFacts]]:
    return [(f"{x.version}/{h.name}", facts_for(h, x)) for x in LINES for h in hosts()]


SHARES = (1, 5, 25, 50, 69, 90)  # with both MyISAM positions; the recorded hosts get all 90


def _check(
    facts: HostFacts, shares: tuple[int, ...] | range, myisam: tuple[bool, ...] = (True,)
) -> list[str]:
    """Every share (and MyISAM position: it sizes the key buffer, a part of the sum)."""
    start = default_positions(facts)
    bad = start_problems(facts)
    for share in shares:
        for keys in myisam:
            pos = dataclasses.replace(start, memory_share=share, myisam=keys)
            plan = make_plan(facts, pos, CAT)
            bad += [f"{share}% myisam={keys}: {p}" for p in problems(plan, facts)]
    return bad


def test_the_recorded_hosts_add_up_at_every_share() -> None:
    assert len(FIXTURES) >= 5
    failures: list[str] = []
    for name, facts in recorded():
        for variant, f in (
            ("", facts),
            (" +6 GiB process", with_process(facts, 6 * GIB)),
            (" +other servers", with_other_servers(facts)),
        ):
            failures += [f"{name}{variant}: {p}" for p in _check(f, range(1, 91))]
    assert not failures, f"{len(failures)} sums:\n" + "\n".join(failures[:30])


def test_every_matrix_host_profile_adds_up() -> None:
    failures: list[str] = []
    cases = matrix()
    assert len(cases) == len(LINES) * len(hosts())
    sums = frees = 0
    for name, facts in cases:
        failures += [f"{name}: {p}" for p in _check(facts, SHARES, (True, False))]
        plan = make_plan(facts, default_positions(facts), CAT)
        words = " ".join(texts(plan, facts))
        sums += bool(FITS.search(words) or FITS.search(memory_budget(facts).words()))  # type: ignore[union-attr]
        frees += bool(FREE.search(dict(plan.sentences)["memory"]))
    assert not failures, f"{len(failures)} sums:\n" + "\n".join(failures[:30])
    assert sums == len(cases) and frees == len(cases), (sums, frees)  # the parsers read them all


def test_a_container_limit_adds_up() -> None:
    """A server in a container with a 4 GiB limit: the limit is the total, 90% the cap."""
    facts = _sid()
    assert facts.server is not None
    for limit in (2 * GIB, 4 * GIB):
        box = Container("docker", "c0ffee", "db", "mysql:9.7", memory_limit_bytes=limit)
        instance = dataclasses.replace(facts.server.instance, container=box)
        boxed = dataclasses.replace(
            facts,
            server=dataclasses.replace(facts.server, instance=instance),
            instances=(instance,),
        )
        budget = memory_budget(boxed)
        assert budget is not None and budget.container_limit == limit
        assert FITS.search(budget.words()), budget.words()
        failures = _check(boxed, SHARES)
        assert not failures, "\n".join(failures[:10])


def test_the_checks_catch_figures_that_do_not_add_up() -> None:
    """The parsers are not vacuous: the issue's own sentences fail them."""
    issue = (
        "of the 23.5 GiB of RAM, room is kept for the OS (2.4 GiB), the other processes seen "
        "(73.7 MiB), 151 connections x 1.9 MiB of buffers (290.2 MiB) and the server's other "
        "memory (1.2 GiB), which leaves 18.7 GiB; the pool needs about 5% more for its "
        "bookkeeping, so at most 17.8 GiB fits (with 911.4 MiB of bookkeeping)"
    )
    assert any("RAM less the parts" in p for p in fits_problems(issue)[0])
    fixed = issue.replace("18.7 GiB", "19.5 GiB").replace("17.8", "18.6")
    assert not fits_problems(fixed.replace("911.4 MiB", "952.3 MiB"))[0]
    ram = Fig(23.5 * GIB, 0.05 * GIB)
    assert share_problems("69% of RAM: 12.9 GiB", ram)
    assert not share_problems("55% of RAM: 12.9 GiB (the 69% asked does not fit)", ram)
    free = (
        "with every connection busy 1.6 GiB stay free (the 23.5 GiB of RAM less 9.9 GiB kept "
        "for the OS, the other processes, the connections and the server's other memory, less "
        "the 11.8 GiB pool and its 601.6 MiB of bookkeeping)"
    )
    assert free_problems(free, None)
    assert not free_problems(free.replace("1.6 GiB", "1.2 GiB"), None)


# -- the issue's cases ------------------------------------------------------------------------


def _sid() -> HostFacts:
    return dict(recorded())["sid-mysql-9.7"]


def test_a_6_gib_process_shows_the_pools_own_share() -> None:
    """Issue 36: "69% of RAM: 12.9 GiB" on 23.5 GiB; 12.9 of 23.5 GiB is 55%."""
    facts = with_process(_sid(), 6 * GIB)
    plan = make_plan(facts, dataclasses.replace(default_positions(facts), memory_share=69), CAT)
    pool = pool_of(plan, facts)
    assert pool is not None
    label = note("memory", plan, facts)
    assert label.startswith(f"{round(pool * 100 / (facts.os.machine.mem_total_bytes or 1))}% of")
    assert label.endswith("(the 69% asked does not fit)"), label
    assert not label.startswith("69%")
    assert "the 69% asked does not fit" in dict(plan.sentences)["memory"]
    assert not problems(plan, facts)


def test_the_budget_names_the_pools_bookkeeping() -> None:
    """Issue 36: the parts shown left 19.5 GiB, "at most 18.7 GiB fits": 5% bookkeeping."""
    facts = _sid()
    budget = memory_budget(facts)
    assert budget is not None
    words = budget.words()
    found, kept = fits_problems(words)
    assert not found and kept is not None, (found, words)
    assert "the pool needs about 5% more for its bookkeeping" in words
    left = budget.sum.left
    assert budget.fits + budget.sum.bookkeeping(budget.fits) <= left
    assert left - budget.fits - budget.sum.bookkeeping(budget.fits) < MIB


def test_what_stays_free_adds_up_from_the_figures_shown() -> None:
    """Issue 36: "1.4 GiB stay free" came to 2.2 GiB from the figures shown."""
    facts = _sid()
    for share in (50, 60, 69, 75):
        plan = make_plan(
            facts, dataclasses.replace(default_positions(facts), memory_share=share), CAT
        )
        sentence = dict(plan.sentences)["memory"]
        assert FREE.search(sentence), sentence
        assert not free_problems(sentence, fits_problems(memory_budget(facts).words())[1])  # type: ignore[union-attr]


def test_other_database_servers_count_at_what_they_may_take() -> None:
    """Another mariadbd with a 4 GiB pool counts 4 GiB, its bookkeeping and its connections'
    buffers (not its 300 MiB idle RSS), one whose option files set 2 GiB and 300 connections
    counts those, and the words say which figure was used and where it came from."""
    facts = _sid()
    crowded = with_other_servers(facts)
    alone, shared = memory_budget(facts), memory_budget(crowded)
    assert alone is not None and shared is not None
    conn = shared.per_connection
    assert conn > 0
    # 4 GiB (151 connections, the default) and 2 GiB (300 connections from its files) pools
    # with their bookkeeping and buffers (their RSS is less), the container's 1 GiB resident,
    # 500 MiB resident (more than a default 128 MiB pool and 151 connections at this server's
    # buffers: checked below); pid 4444 unread.
    assert int(128 * MIB * POOL_OVERHEAD) + 151 * conn < 500 * MIB
    pools = int(4 * GIB * POOL_OVERHEAD) + 151 * conn + int(2 * GIB * POOL_OVERHEAD) + 300 * conn
    assert shared.other_servers == pools + GIB + 500 * MIB
    assert alone.fits - shared.fits == pytest.approx(shared.other_servers / POOL_OVERHEAD, abs=2)
    words = shared.words()
    assert (
        "mariadbd pid 4242, its 4 GiB buffer pool from its command line, 204.8 MiB of "
        f"bookkeeping and {size_text(151 * conn)} of buffers for its 151 connections, at this "
        "server's buffers per connection; " in words
    ), words
    assert "mariadbd in container db2, 1 GiB resident now (its option files were not read)" in words
    assert (
        "mariadbd pid 4545, its 2 GiB buffer pool from its option files, 102.4 MiB of "
        f"bookkeeping and {size_text(300 * conn)} of buffers for its 300 connections (its "
        "option files), at this server's buffers per connection" in words
    ), words
    default = (
        "mysqld pid 4646, 500 MiB resident now, more than its buffer pool at the default size "
        "(its option files set none) with its bookkeeping and buffers"
    )
    assert default in words
    assert "mysqld pid 4444 not counted, its memory was not read" in words
    assert not fits_problems(words)[0]
    why = starting_points(crowded)["memory"].why
    assert "other processes and database servers hold" in why, why
    start = default_positions(crowded)
    assert start.memory_share < default_positions(facts).memory_share
    plan = make_plan(crowded, start, CAT)
    assert "database servers" in dict(plan.sentences)["memory"]
    assert not problems(plan, crowded)


def test_inspection_keeps_the_database_servers_memory() -> None:
    lines = ["1 100 systemd", "2 900000 mariadbd", "3 5000 java", "7 20000 mysqld_safe"]
    assert [p.name for p in parse_processes(lines)] == ["java", "systemd"]
    servers = parse_database_processes([*lines, "9 400 mysqld"])
    assert [(p.pid, p.rss_bytes) for p in servers] == [(2, 900000 * 1024), (9, 400 * 1024)]
    shown = machine_lines(MachineFacts(database_processes=servers))
    assert "Database servers' memory in use: mariadbd (pid 2) 878.9 MiB" in shown[-1]
