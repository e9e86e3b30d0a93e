"""The disk probe's output parser and argument checks."""

from __future__ import annotations

import pytest

from app.inspect.diskprobe import parse_probe_output, probe_argv


def test_rates_from_counts_and_seconds() -> None:
    text = "method=dd\nsync_writes=2048\nsync_seconds=1.024\nseq_bytes=33554432\nseq_seconds=0.5\n"
    probe = parse_probe_output("/d", text)
    assert probe.method == "dd"
    assert probe.sync_writes_per_s == pytest.approx(2000)
    assert probe.seq_write_mb_s == pytest.approx(33554432 / 0.5 / 1e6)
    assert probe.bytes_written == 2048 * 4096 + 33554432
    assert probe.unknown == ()


def test_a_failed_phase_is_unknown_with_the_reason() -> None:
    # BusyBox 1.35's dd has no oflag=dsync; its real message, as the script passes it on.
    text = "method=dd\nerror=dd oflag=dsync failed: dd: invalid argument 'dsync' to 'oflag'\n"
    probe = parse_probe_output("/d", text)
    assert probe.sync_writes_per_s is None and probe.seq_write_mb_s is None
    whats = {u.what: u.why for u in probe.unknown}
    assert "invalid argument 'dsync'" in whats["disk probe"]
    assert "synced 4 KiB writes per second" in whats


def test_arguments_are_checked_and_passed_as_argv() -> None:
    argv = probe_argv("/var/lib/my sql", 2, 32, "auto")
    assert argv[:2] == ["sh", "-c"] and argv[-4:] == ["/var/lib/my sql", "2", "32", "auto"]
    with pytest.raises(ValueError):
        probe_argv("relative", 2, 32, "auto")
    with pytest.raises(ValueError):
        probe_argv("/d", 2, 32, "fio")
