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
    assert argv[:2] == ["sh", "-c"]
    assert argv[-6:] == ["/var/lib/my sql", "2", "32", "auto", "auto", "8"]
    with pytest.raises(ValueError):
        probe_argv("relative", 2, 32, "auto")
    with pytest.raises(ValueError):
        probe_argv("/d", 2, 32, "fio")
    with pytest.raises(ValueError):
        probe_argv("/d", 2, 32, "auto", "dd")
    with pytest.raises(ValueError):
        probe_argv("/d", 2, 32, "auto", "fio", 0)


def test_page_writes_are_parsed_with_their_method_and_depth() -> None:
    text = (
        "page_method=python3 O_DIRECT\npage_depth=8\npage_writes_per_s=4200.5\n"
        "page_bytes=1048576\npage_seconds=1.5\nmethod=dd\n"
    )
    probe = parse_probe_output("/d", text)
    assert probe.page_writes_per_s == pytest.approx(4200.5)
    assert (probe.page_method, probe.page_queue_depth) == ("python3 O_DIRECT", 8)
    assert probe.bytes_written == 1048576 and probe.seconds == pytest.approx(1.5)
    failed = parse_probe_output("/d", "page_error=fio failed: boom\nmethod=dd\n")
    assert failed.page_writes_per_s is None
    assert {u.what: u.why for u in failed.unknown}["page writes per second"] == "fio failed: boom"
