"""The plan's texts on the four server lines: window words, this server's own remarks.

Every sentence, reason, risk, left-alone remark and warning of plans for MariaDB 10.5, 10.11,
11.8 and MySQL 9.7 (on the host profiles of tests/unit/test_planner_matrix.py) is shown in the
window as it is: it carries no command-line flag, no "(s)", no "..", no backtick, no raw
slider token and no "slider 5" (the page has 5a and 5b); a remark names only this server's
product line and only variables this server has.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from app.domain.plan import Plan
from app.planner import default_positions, make_plan
from app.planner.report import ending, plan_text
from tests.unit.planner_truth import LINES, Line
from tests.unit.test_planner_matrix import CAT, facts_for, hosts

FOUR = ("10.5.27", "10.11.19", "11.8.2", "9.7.4")
HOSTS = ("sata-ssd", "lvm-hdd", "vm-2g", "practice", "box-256g")
FLAG = re.compile(r"(^|[\s(`])--[a-z]")
TOKENS = ("(fast-recovery)", "position '", "'none'", "'os'", "'any'", "'keep'")


def _cases() -> list[tuple[Line, str]]:
    return [(x, h) for x in LINES if x.version in FOUR for h in HOSTS]


def window_faults(text: str) -> list[str]:
    """What a window text must not carry: a flag, "(s)", "..", a backtick, a raw token."""
    bad = []
    if FLAG.search(text):
        bad.append("a command-line flag")
    if "(s)" in text or "(ies)" in text:
        bad.append('"(s)"')
    if ".." in text.replace("...", ""):
        bad.append("a doubled period")
    if "`" in text:
        bad.append("a backtick")
    if re.search(r"\b[Ss]lider 5(?![ab])", text):
        bad.append('"slider 5" without a or b')
    bad += [f"the raw token {t}" for t in TOKENS if t in text]
    return bad


def _texts(plan: Plan) -> list[str]:
    texts = [s for _, s in plan.sentences] + list(plan.warnings)
    texts += [c.reason for c in plan.changes] + [c.risk for c in plan.changes]
    texts += [f"{x.knob}: {x.why}" for x in plan.left_alone]
    return texts


def _plans(line: Line, host: str) -> list[Plan]:
    facts = facts_for(next(h for h in hosts() if h.name == host), line)
    start = default_positions(facts)
    plans = [make_plan(facts, start, CAT)]
    for field in ("fit_disks", "fit_os", "myisam", "doublewrite"):
        plans.append(make_plan(facts, dataclasses.replace(start, **{field: False}), CAT))
    for crash in ("none", "os", "any"):
        plans.append(make_plan(facts, dataclasses.replace(start, crash_loss=crash), CAT))
    return plans


@pytest.mark.parametrize(("line", "host"), _cases(), ids=[f"{x.version}-{h}" for x, h in _cases()])
def test_plan_texts_are_window_words_of_this_server(line: Line, host: str) -> None:
    mariadb = line.flavour == "mariadb"
    other = "MySQL" if mariadb else "MariaDB"
    bad = []
    for plan in _plans(line, host):
        for text in _texts(plan):
            bad += [f"{fault}: {text!r}" for fault in window_faults(text)]
        for x in plan.left_alone:
            if re.search(rf"\b(for|on|in) {other}\b", x.why):
                bad.append(f"a remark about {other} on {line.flavour}: {x.knob}: {x.why!r}")
            knob = CAT.knob(x.knob)
            lacks = CAT.facts_for(x.knob, line.flavour, line.version) is None
            if knob.is_server_variable and lacks and "(line removed)" not in x.why:
                bad.append(f"a variable this server lacks: {x.knob}: {x.why!r}")
    assert not bad, "\n".join(sorted(set(bad)))


def test_mariadb_11_8_plan_does_not_name_the_buffer_pool_instances() -> None:
    line = next(x for x in LINES if x.version == "11.8.2")
    for host in HOSTS:
        for plan in _plans(line, host):
            assert not [t for t in _texts(plan) if "scales with the pool size" in t], host
            said = [x for x in plan.left_alone if x.knob == "innodb_buffer_pool_instances"]
            assert all("(line removed)" in x.why for x in said), host  # only a stale line


def test_mysql_plan_text_carries_no_mariadb_remark() -> None:
    line = next(x for x in LINES if x.version == "9.7.4")
    for host in HOSTS:
        text = plan_text(
            make_plan(
                facts := facts_for(next(h for h in hosts() if h.name == host), line),
                default_positions(facts),
                CAT,
            ),
            CAT,
        )
        assert "never writes it for MariaDB" not in text
        assert "MariaDB 10.6 or later" not in text


def test_the_plan_ends_by_saying_what_would_happen_not_that_it_happened() -> None:
    assert ending(1, 0) == "1 change; it can be applied live, without a restart."
    assert ending(2, 0) == "2 changes; all can be applied live, without a restart."
    assert ending(1, 1) == "1 change; it takes effect only after a server restart."
    assert ending(3, 3) == "3 changes; all take effect only after a server restart."
    assert ending(3, 1) == "3 changes; 1 of them takes effect only after a server restart."
    assert ending(4, 2) == "4 changes; 2 of them take effect only after a server restart."
    line = next(x for x in LINES if x.version == "11.8.2")
    facts = facts_for(next(h for h in hosts() if h.name == "sata-ssd"), line)
    last = plan_text(make_plan(facts, default_positions(facts), CAT), CAT).splitlines()[-1]
    assert "(s)" not in last and "all applied live" not in last
    assert last.endswith(("without a restart.", "server restart.", "slider positions."))


def test_the_command_line_plan_names_its_flag_where_the_window_says_it_in_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan's reason says "inspect again measuring the disk's sync rate" (the window's
    box); innotune plan adds the flag that does it on the command line."""
    from app.cli import run_cli

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # its log goes there
    facts = Path(__file__).parents[1] / "fixtures/hosts/practice-debian12/facts.json"
    assert run_cli(["plan", "--facts", str(facts)]) == 0
    out = capsys.readouterr().out
    assert "measuring the disk's sync rate" in out
    assert out.rstrip().endswith("plan again with --probe-disk.")
    assert "change(s)" not in out and "all applied live" not in out
