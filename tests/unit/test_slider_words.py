"""Names mean what they say (issue 26): fast recovery, "keep", the crash-loss positions."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain.hostfacts import HostFacts
from app.domain.plan import Change, Plan
from app.knobs.sliders import slider
from app.planner import default_positions, make_plan
from app.planner.context import reports_rotational
from app.planner.redolog import recovery_range, redo_rate, redo_total
from app.planner.slidertexts import note
from app.planner.values import size_text
from tests.unit.planner_profiles import GIB, MIB
from tests.unit.planner_truth import LINES, Line
from tests.unit.test_planner_matrix import CAT, facts_for, hosts

FOUR = [x for x in LINES if x.version in ("10.5.27", "10.11.19", "11.8.2", "9.7.4")]
FAST = int(str(slider("redo").position("fast-recovery").value))


def _redo_change(plan: Plan) -> Change | None:
    return next(
        (
            c
            for c in plan.changes
            if c.key in ("innodb_redo_log_capacity", "innodb_log_file_size")
            and c.proposed.isdigit()
        ),
        None,
    )


def _with_log(facts: HostFacts, line: Line, total: int, rate: float | None) -> HostFacts:
    """The facts with a redo log of ``total`` bytes and ``rate`` bytes/s of redo measured."""
    server = facts.server
    assert server is not None
    name = "innodb_redo_log_capacity" if line.version == "9.7.4" else "innodb_log_file_size"
    variables = tuple(
        dataclasses.replace(v, value=str(total)) if v.name == name else v for v in server.variables
    )
    rates = server.rates
    if rates is not None:
        rates = dataclasses.replace(rates, redo_bytes_per_s=rate)
    return dataclasses.replace(
        facts, server=dataclasses.replace(server, variables=variables, rates=rates)
    )


@pytest.mark.parametrize("line", FOUR, ids=[x.version for x in FOUR])
def test_fast_recovery_keeps_at_least_the_default_and_shortens_recovery(line: Line) -> None:
    """Issue 36: fast recovery holds at most ~15 min of writes, never below the default."""
    default = line.redo_default_total
    for host in hosts():
        for total, rate in (
            (default, None),
            (default, 3 * MIB),
            (8 * GIB, 3 * MIB),
            (8 * GIB, None),
        ):
            facts = _with_log(facts_for(host, line), line, total, rate)
            assert facts.server is not None
            now = redo_total(facts.server)
            assert now == total
            rate = redo_rate(facts.server)  # None where the host had no sample
            plan = make_plan(
                facts, dataclasses.replace(default_positions(facts), redo_minutes=FAST), CAT
            )
            sentence = dict(plan.sentences)["redo"]
            change = _redo_change(plan)
            where = f"{line.version}/{host.name}/{size_text(total)}/{rate}"
            if change is None:
                assert "already recovers within what fast recovery asks" in sentence or (
                    "that is the server's default, the smallest InnoTune plans" in sentence
                ), (where, sentence)
                assert now == default or rate is None or now <= rate * FAST * 60 + 32 * MIB, where
                continue
            planned = int(change.proposed)
            assert default <= planned < now, where
            spinning = reports_rotational(facts)
            assert recovery_range(planned, spinning)[1] < recovery_range(now, spinning)[1]
            assert f"from {size_text(now)} to {size_text(planned)}" in sentence, sentence
            assert "shortens crash recovery but makes InnoDB write pages back sooner" in sentence
            assert "18% fewer pages" in sentence
            if rate is not None:  # 15 min of the measured writes, rounded up to 32 MiB
                assert planned == max(default, -(-int(rate * FAST * 60) // (32 * MIB)) * 32 * MIB)


def test_fast_recovery_on_the_issues_hosts() -> None:
    """Issue 36: 100 MiB stayed 100 MiB on MySQL 9.7, 96 MiB on MariaDB at 3 MiB/s stays."""
    mysql = next(x for x in FOUR if x.version == "9.7.4")
    facts = facts_for(next(h for h in hosts() if h.name == "practice"), mysql)
    plan = make_plan(facts, dataclasses.replace(default_positions(facts), redo_minutes=FAST), CAT)
    assert plan.change("innodb_redo_log_capacity") is None
    said = dict(plan.sentences)["redo"]
    # No writes measured there: the position is named without "(about 15 minutes of writes)".
    assert said.startswith('At "Fast recovery" the redo log stays at 100 MiB'), said
    assert "the server's default" in said
    mariadb = next(x for x in FOUR if x.version == "11.8.2")
    facts = _with_log(facts_for(hosts()[0], mariadb), mariadb, 96 * MIB, 3 * MIB)
    plan = make_plan(facts, dataclasses.replace(default_positions(facts), redo_minutes=FAST), CAT)
    assert plan.change("innodb_log_file_size") is None
    said = dict(plan.sentences)["redo"]
    assert "stays at 96 MiB (about 32 s of the measured writes)" in said, said
    assert "no more than 15 min of writes, so it already recovers" in said
    # A log below the default grows to it, whatever the position.
    small = _with_log(facts_for(hosts()[0], mysql), mysql, 48 * MIB, 3 * MIB)
    for minutes in (FAST, 60, 120):
        grown = make_plan(
            small, dataclasses.replace(default_positions(small), redo_minutes=minutes), CAT
        )
        change = grown.change("innodb_redo_log_capacity")
        assert change is not None and int(change.proposed) >= 100 * MIB, minutes


def test_keep_is_possible_and_says_what_it_keeps() -> None:
    line = next(x for x in FOUR if x.version == "9.7.4")
    facts = facts_for(next(h for h in hosts() if h.name == "sata-ssd"), line)
    start = default_positions(facts)
    kept = make_plan(facts, dataclasses.replace(start, redo_minutes=None, memory_share=1), CAT)
    why = {x.knob: x.why for x in kept.left_alone}
    assert why["innodb_redo_log_capacity"].startswith(
        'The redo slider is at "Keep the current size": it stays 100 MiB'
    )
    assert dict(kept.sentences)["redo"].startswith("The redo log stays at 100 MiB")
    # The memory slider's keep is the current share: 128 MiB of 32 GiB is 1%.
    assert kept.change("innodb_buffer_pool_size") is None
    assert "keeps the buffer pool at 128 MiB" in why["innodb_buffer_pool_size"]
    assert f"InnoTune recommends {start.memory_share}% of RAM" in why["innodb_buffer_pool_size"]
    assert note("memory", kept, facts) == "0.4% of RAM: 128 MiB (kept as it is)"


def test_the_crash_loss_words_cover_three_positions() -> None:
    declared = slider("crash_loss")
    assert len(declared.positions) == 3
    text = declared.explanation
    assert "the second choice" not in text
    assert '"Nothing"' in text and "The middle position" in text
    assert f'"{declared.position("any").label}"' in text
    line = next(x for x in FOUR if x.version == "9.7.4")
    facts = facts_for(hosts()[0], line)
    for spot in declared.positions:
        plan = make_plan(
            facts, dataclasses.replace(default_positions(facts), crash_loss=spot.name), CAT
        )
        said = dict(plan.sentences)["crash_loss"]
        assert "that many" not in said and "innodb_flush_log_at_timeout" not in said
        assert "{" not in said
        texts = [c.reason + c.risk for c in plan.changes] + [x.why for x in plan.left_alone]
        texts += list(plan.warnings)
        for text in texts:
            assert f"'{spot.name}'" not in text and "position '" not in text, text
    os_plan = make_plan(facts, dataclasses.replace(default_positions(facts), crash_loss="os"), CAT)
    assert dict(os_plan.sentences)["crash_loss"].startswith(
        "Nothing if only the server process crashes; about the last 1 second of commits"
    )
