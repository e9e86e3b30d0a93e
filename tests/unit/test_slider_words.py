"""Names mean what they say (issue 26): fast recovery, "keep", the crash-loss positions."""

from __future__ import annotations

import dataclasses

import pytest

from app.knobs.sliders import slider
from app.planner import default_positions, make_plan
from app.planner.context import reports_rotational
from app.planner.redolog import recovery_range, redo_total
from app.planner.slidertexts import note
from app.planner.values import size_text
from tests.unit.planner_truth import LINES, Line
from tests.unit.test_planner_matrix import CAT, facts_for, hosts

FOUR = [x for x in LINES if x.version in ("10.5.27", "10.11.19", "11.8.2", "9.7.4")]
FAST = int(str(slider("redo").position("fast-recovery").value))


@pytest.mark.parametrize("line", FOUR, ids=[x.version for x in FOUR])
def test_fast_recovery_never_grows_the_log_and_shortens_recovery(line: Line) -> None:
    for host in hosts():
        facts = facts_for(host, line)
        assert facts.server is not None
        now = redo_total(facts.server)
        assert now is not None
        plan = make_plan(
            facts, dataclasses.replace(default_positions(facts), redo_minutes=FAST), CAT
        )
        sentence = dict(plan.sentences)["redo"]
        change = next(
            (
                c
                for c in plan.changes
                if c.key in ("innodb_redo_log_capacity", "innodb_log_file_size")
                and c.proposed.isdigit()
            ),
            None,
        )
        where = f"{line.version}/{host.name}"
        if change is None:
            assert "already as small as this server allows" in sentence, (where, sentence)
            continue
        files = now // int(change.current or now) or 1
        total = int(change.proposed) * files
        assert total < now, where
        spinning = reports_rotational(facts)
        assert recovery_range(total, spinning)[1] < recovery_range(now, spinning)[1], where
        assert sentence.startswith('At "Fast recovery (about 15 minutes of writes)" the redo')
        assert f"from {size_text(now)} to {size_text(total)}" in sentence, sentence
        assert "shortens crash recovery" in sentence


def test_fast_recovery_on_the_sid_host_defaults() -> None:
    """MySQL 9.7 at its 100 MiB default: the issue saw 100 -> 256 MiB and 8 s -> 20 s."""
    line = next(x for x in FOUR if x.version == "9.7.4")
    facts = facts_for(next(h for h in hosts() if h.name == "practice"), line)
    plan = make_plan(facts, dataclasses.replace(default_positions(facts), redo_minutes=FAST), CAT)
    change = plan.change("innodb_redo_log_capacity")
    assert change is not None and int(change.proposed) == 50 * 2**20
    assert "against roughly 1 s to 8 s at 100 MiB now" in dict(plan.sentences)["redo"]


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
    assert note("memory", kept, facts) == "1% of RAM: 128 MiB (kept as it is)"


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
