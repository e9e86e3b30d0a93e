"""Facts survive a JSON round trip unchanged (property-based)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.facts import (
    BlockDevice,
    DiskProbe,
    MachineFacts,
    OsFacts,
    ProcessMemory,
    Unknown,
    WritePath,
    from_json,
    from_jsonable,
    to_json,
)


def every_field(cls: type, **given: Any) -> st.SearchStrategy[Any]:
    """builds() that also fills the fields that have defaults (inferred from type hints)."""
    inferred: dict[str, Any] = {f.name: ... for f in dataclasses.fields(cls)}
    return st.builds(cls, **{**inferred, **given})


finite = st.floats(allow_nan=False)  # NaN is never equal to itself, so it cannot round-trip
text = st.text(max_size=20)
unknowns = st.lists(st.builds(Unknown, text, text), max_size=3).map(tuple)

devices = every_field(
    BlockDevice,
    name=text,
    kind=st.sampled_from(["partition", "dm", "md", "loop", "disk"]),
    lower=st.lists(text, max_size=3).map(tuple),
    schedulers_available=st.lists(text, max_size=4).map(tuple),
)
paths = every_field(
    WritePath,
    directory=text,
    devices=st.lists(devices, max_size=4).map(tuple),
    mount_options=st.lists(text, max_size=4).map(tuple),
    unknown=unknowns,
)
machines = every_field(
    MachineFacts,
    big_processes=st.lists(
        st.builds(ProcessMemory, st.integers(), text, st.integers()), max_size=3
    ).map(tuple),
    unknown=unknowns,
)
os_facts = every_field(
    OsFacts,
    machine=machines,
    write_paths=st.lists(paths, max_size=3).map(tuple),
    commands_run=st.integers(0, 5),
    unknown=unknowns,
)
probes = every_field(
    DiskProbe,
    directory=text,
    method=text,
    sync_writes_per_s=st.none() | finite,
    seq_write_mb_s=st.none() | finite,
    bytes_written=st.integers(0, 2**40),
    seconds=finite,
    unknown=unknowns,
    page_writes_per_s=st.none() | finite,
)


@settings(max_examples=40, deadline=None)
@given(os_facts)
def test_os_facts_round_trip(facts: OsFacts) -> None:
    assert from_json(OsFacts, to_json(facts)) == facts


@settings(max_examples=40, deadline=None)
@given(probes)
def test_disk_probe_round_trip(probe: DiskProbe) -> None:
    assert from_json(DiskProbe, to_json(probe)) == probe


def test_the_json_is_plain_objects_lists_and_scalars() -> None:
    facts = OsFacts(
        machine=MachineFacts(cpu_cores=4, unknown=(Unknown("RAM", "missing"),)),
        write_paths=(WritePath("/d", devices=(BlockDevice("sda", "disk", rotational=True),)),),
    )
    data = json.loads(to_json(facts))
    assert data["machine"]["cpu_cores"] == 4
    assert data["machine"]["unknown"] == [{"what": "RAM", "why": "missing"}]
    assert data["write_paths"][0]["devices"][0]["rotational"] is True


def test_wrong_types_are_rejected_not_coerced() -> None:
    with pytest.raises(ValueError, match="cpu_cores"):
        from_jsonable(MachineFacts, {"cpu_cores": "four"})
    with pytest.raises(ValueError):
        from_jsonable(BlockDevice, {"name": "sda", "kind": "disk", "rotational": 1})
    # Fields added later and missing from an old file take their defaults.
    assert from_jsonable(MachineFacts, {}) == MachineFacts()
