"""The systemd unit behind a server: one `systemctl show` run, parsed into a ServiceInfo.

The timeouts matter because a restart after a large buffer-pool or redo change can take longer than
systemd waits (it then kills the server mid-recovery); the memory limit because a buffer pool larger
than MemoryMax= gets the server OOM-killed inside its cgroup whatever the machine has free.
"""

from __future__ import annotations

import re
import shlex

from app.domain.errors import InnoTuneError
from app.domain.service import ServiceInfo
from app.remote.transport import CommandResult, Transport

#: The properties InnoTune reads; asking for these keeps the output a few hundred bytes.
PROPERTIES = (
    "Id",
    "ActiveState",
    "SubState",
    "Result",
    "MainPID",
    "ExecStart",
    "User",
    "Environment",
    "Restart",
    "FragmentPath",
    "DropInPaths",
    "TimeoutStartUSec",
    "TimeoutStopUSec",
    "MemoryMax",
    "MemoryLimit",
)

# systemd's format_timespan() units, longest first so "month" is not read as "m"+"onth".
_UNITS = {
    "y": 31_557_600.0,
    "month": 2_629_800.0,
    "w": 604_800.0,
    "d": 86_400.0,
    "h": 3_600.0,
    "min": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
}
_SPAN_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(month|min|ms|us|µs|μs|y|w|d|h|s)(?![a-z])")
_UINT64_MAX = 2**64 - 1  # how older systemd prints "no limit" for byte properties


def systemd_argv_for(unit: str) -> list[str]:
    """The command that prints the unit's properties InnoTune needs (no root required)."""
    argv = ["systemctl", "show", "--no-pager"]
    for prop in PROPERTIES:
        argv += ["-p", prop]
    return [*argv, "--", unit]


def parse_timespan(text: str) -> float | None:
    """Seconds in a systemd time span ("5min", "15min 30s", "900ms"); None for "infinity".

    A bare number is microseconds, as the *USec property names say.

    Raises:
        ValueError: the text is not a time span.
    """
    text = text.strip()
    if text == "infinity":
        return None
    if text.isdigit():
        return int(text) / 1e6
    total, end = 0.0, 0
    for match in _SPAN_PART.finditer(text):
        if text[end : match.start()].strip():
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        end = match.end()
    if end == 0 or text[end:].strip():
        raise ValueError(f"not a systemd time span: {text!r}")
    return total


def _timeout(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = parse_timespan(value)
    except ValueError:
        return None
    # Older systemd prints a disabled timeout (TimeoutSec=0) as "0" rather than "infinity".
    return None if seconds == 0 else seconds


def _bytes(value: str | None) -> int | None:
    if not value or not value.isdigit() or int(value) >= _UINT64_MAX:
        return None  # infinity, [not set], or the u64 "no limit" of older systemd
    return int(value)


def _words(value: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(value))
    except ValueError:  # an unbalanced quote: plain words are still better than nothing
        return tuple(value.split())


def parse_exec(value: str) -> tuple[str, ...]:
    """The argv of a `{ path=… ; argv[]=… ; … }` command as systemctl prints it."""
    inner = value.strip().removeprefix("{").removesuffix("}")
    for field in inner.split(" ; "):
        field = field.strip()
        if field.startswith("argv[]="):
            return _words(field.removeprefix("argv[]="))
    return ()


def parse_systemctl_show(text: str) -> ServiceInfo:
    """Turn `systemctl show UNIT` output (Key=Value lines) into a ServiceInfo (pure).

    Raises:
        ValueError: the text names no unit (no Id= line).
    """
    props: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key and key not in props:  # a repeated key (several ExecStartPre=): the first
            props[key] = value
    if not props.get("Id"):
        raise ValueError("no Id= line: this is not `systemctl show` output for a unit")
    pid = props.get("MainPID", "")
    limits = [b for b in (_bytes(props.get("MemoryMax")), _bytes(props.get("MemoryLimit"))) if b]
    return ServiceInfo(
        unit=props["Id"],
        active_state=props.get("ActiveState", ""),
        sub_state=props.get("SubState", ""),
        result=props.get("Result", ""),
        main_pid=int(pid) if pid.isdigit() and int(pid) > 0 else None,
        exec_start=parse_exec(props.get("ExecStart", "")),
        user=props.get("User", ""),
        environment=_words(props.get("Environment", "")),
        restart=props.get("Restart", ""),
        fragment_path=props.get("FragmentPath", ""),
        drop_in_paths=tuple(props.get("DropInPaths", "").split()),
        timeout_start_s=_timeout(props.get("TimeoutStartUSec")),
        timeout_stop_s=_timeout(props.get("TimeoutStopUSec")),
        memory_max_bytes=min(limits) if limits else None,
    )


def read_service(transport: Transport, unit: str) -> ServiceInfo:
    """Ask systemd on the target about ``unit``, in one command run.

    Raises:
        InnoTuneError: systemctl failed or printed something that is not a unit's properties.
    """
    return service_from(transport.run(systemd_argv_for(unit), timeout=20), unit)


def service_from(result: CommandResult, unit: str) -> ServiceInfo:
    """The ServiceInfo in a run of :func:`systemd_argv_for` ``unit``.

    Raises:
        InnoTuneError: systemctl failed or printed something that is not a unit's properties.
    """
    if not result.ok:
        raise InnoTuneError(
            f"`systemctl show {unit}` failed: {result.err.strip()[:200] or result.exit_status}",
            "Check that the host runs systemd and that the unit name is right.",
        )
    try:
        return parse_systemctl_show(result.out)
    except ValueError as exc:
        raise InnoTuneError(f"`systemctl show {unit}` printed no unit: {exc}") from exc
