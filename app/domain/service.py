"""What the service manager knows about the unit that runs a server (systemd)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServiceInfo:
    """The properties of a systemd unit that matter when InnoTune restarts or sizes a server.

    Timeouts are in seconds and the memory limit in bytes; ``None`` means systemd sets no limit
    (``infinity``) or did not report the property.
    """

    unit: str
    active_state: str = ""  # active, inactive, failed, activating, …
    sub_state: str = ""  # running, dead, …
    result: str = ""  # success, timeout, exit-code, …
    main_pid: int | None = None  # None while no process runs
    exec_start: tuple[str, ...] = ()  # the argv as the unit writes it ($VARS not expanded)
    user: str = ""
    environment: tuple[str, ...] = ()  # NAME=value, from Environment=
    restart: str = ""  # no, on-failure, on-abort, always, …
    fragment_path: str = ""  # the unit file
    drop_in_paths: tuple[str, ...] = ()  # the override files read after it
    timeout_start_s: float | None = None
    timeout_stop_s: float | None = None
    memory_max_bytes: int | None = None  # the lower of MemoryMax= and the older MemoryLimit=

    @property
    def running(self) -> bool:
        """True when systemd says the unit is up."""
        return self.active_state == "active"
