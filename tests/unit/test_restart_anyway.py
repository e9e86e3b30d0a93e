"""Restart anyway: the preview says so, and the bundle sets each value once."""

from __future__ import annotations

import dataclasses

from app.describe.actions import Action, Host, ValueChange
from app.describe.preview import build_preview, with_requested_restart
from app.jobs import runner
from app.jobs import snapshot as snap
from app.targetjob.formats import Bundle
from app.targetjob.values import persist_sql, set_global
from tests.unit.test_appliers_units import _practice_plan


def test_the_preview_of_a_requested_restart_names_it_and_its_downtime() -> None:
    facts, plan = _practice_plan()
    live_only = dataclasses.replace(plan, changes=tuple(c for c in plan.changes if c.live))
    preview = build_preview(live_only, Host(facts))
    assert not preview.restart_needed and not preview.will_restart
    asked = with_requested_restart(preview, facts, live_only, ["/etc/init.d/mariadb", "restart"])
    assert asked.restart_requested and asked.will_restart and asked.downtime is not None
    text = asked.text()
    assert "a restart was asked for" in text and "Estimated downtime: about" in text
    assert "/etc/init.d/mariadb restart" in text.split("== Commands, in order ==")[1]
    assert with_requested_restart(asked, facts, live_only) is asked


def _action(applier: str, ids: tuple[str, ...], **kw: object) -> Action:
    return Action(applier=applier, change_ids=ids, summary="test", **kw)  # type: ignore[arg-type]


def test_the_bundle_holds_back_only_values_the_option_files_carry() -> None:
    def dyn(key: str) -> Action:
        value = ValueChange("dynamic", key, "1", "2", True, "drop-in")
        return _action("dynamic", (key,), values=(value,))

    actions = [
        _action("optionfile", ("innodb_io_capacity",)),
        dyn("innodb_io_capacity"),
        dyn("sync_binlog"),  # not in any option file: the restart would not keep it
    ]
    saved = snap.Snapshot("id", "now", "test", {}, (), ())
    bundle = runner.build_bundle(
        "id", saved, actions, validate=None, expected={}, restart_anyway=True
    )
    assert bundle.restart_needed and bundle.restart_requested
    assert bundle.persisted_keys == ["innodb_io_capacity"]
    plain = runner.build_bundle("id", saved, actions, validate=None, expected={})
    assert not plain.restart_needed and not plain.restart_requested


def job_statements(bundle: Bundle) -> list[str]:
    """The SQL the job spells from the bundle's typed values, in its order (targetjob/job.py):
    when it restarts, no SET GLOBAL of a variable the option files carry."""
    held = set(bundle.persisted_keys) if bundle.restart_needed else set()
    live = [
        set_global(v.key, v.value or "")
        for v in bundle.values
        if v.kind == "dynamic" and v.key not in held
    ]
    return live + [persist_sql(p.key, p.value, p.how) for p in bundle.persisted]


def test_the_bundle_carries_typed_values_and_no_sql_text() -> None:
    dyn = ValueChange("dynamic", "innodb_io_capacity", "200", "345", True, "drop-in")
    saved = snap.Snapshot("id", "now", "test", {}, (), ())
    bundle = runner.build_bundle(
        "id", saved, [_action("dynamic", ("x",), values=(dyn,))], validate=None, expected={}
    )
    assert [(v.kind, v.key, v.value) for v in bundle.values] == [
        ("dynamic", "innodb_io_capacity", "345")
    ]
    assert "SET GLOBAL" not in bundle.to_json().decode()


def test_the_bundle_carries_exactly_what_the_preview_shows() -> None:
    """Preview and job come from the same Actions: files, values, SQL and commands agree."""
    import base64

    from app.targetjob.values import live_write

    facts, plan = _practice_plan()
    preview = build_preview(plan, Host(facts))
    writes = [w for a in preview.actions for w in a.files]
    saved = snap.Snapshot(
        "id", "now", "test", {}, tuple(snap.SavedFile(w.path, False, None) for w in writes), ()
    )
    bundle = runner.build_bundle("id", saved, preview.actions, validate=None, expected={})
    assert [(f.path, base64.b64decode(f.content_b64)) for f in bundle.files] == [
        (w.path, w.after) for w in writes
    ]
    shown = [line.split("    #")[0].strip() for line in preview.text().splitlines()]
    kernel = [v for v in bundle.values if v.kind != "dynamic"]
    for value in kernel:
        assert live_write(value.kind, value.key, value.value or "", value.path)[1] in shown
    assert len(kernel) == len(preview.live_writes) > 0
    assert job_statements(bundle) == list(preview.statements)
    ran = [c.argv for c in preview.commands if c is not preview.restart]  # the restart: `how`
    assert [tuple(c.argv) for c in bundle.commands] == ran and ran
