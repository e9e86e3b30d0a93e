"""Judging the server: is it running, does it answer, restarting it, watching it after.

Standard library only, Python 3.7+: this module runs on the target.
"""

# ruff: noqa: UP031  (printf-style formatting reads well for the journal lines)

from __future__ import annotations

import os
import re
import socket
import subprocess
import time

from .errors import JobFailed
from .journal import JobBase

SERVER_NAMES = ("mariadbd", "mysqld")
#: With no socket to greet and no login, a server whose log stays empty this long after a
#: restart is judged by its process alone (its error log is a file the job cannot see).
SILENT_LOG_SECONDS = 30.0
# Case matters: the --help output is full of option names like "log-error".
ERROR_LINE = re.compile(
    r"\[ERROR\]|\[FATAL\]|^ERROR\b|unknown (variable|option)|\bAborting\b|Fatal error"
    r"|\bAssertion failure\b|\bOut of memory\b"
)


def live_argv(pid: int) -> list[str] | None:
    """The command line of ``pid``; None when it is gone or a zombie."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
        with open("/proc/%d/stat" % pid) as fh:
            if fh.read().rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
                return None
    except OSError:
        return None
    return argv


def _same_pid_namespace(pid: int) -> bool:
    """True when ``pid`` is in the job's own pid namespace (or the kernel does not say)."""
    try:
        return os.readlink("/proc/%d/ns/pid" % pid) == os.readlink("/proc/self/ns/pid")
    except OSError:
        return os.path.exists("/proc/%d" % pid) and not os.path.exists("/proc/self/ns/pid")


def under_root(root: str, path: str) -> str:
    """``path`` as seen from ``root`` (a container's /proc/PID/root), its symlinks followed.

    An absolute symlink inside the container (Debian's /var/run -> /run) names the
    container's own root; the kernel would resolve it against the host's, so each one is
    followed here, below ``root``.
    """
    parts = [p for p in path.split("/") if p]
    done: list[str] = []
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            if done:
                done.pop()
            continue
        if part == ".":
            continue
        here = root + "/" + "/".join([*done, part])
        try:
            target = os.readlink(here)
        except OSError:  # not a link (or absent): taken as it is
            done.append(part)
            continue
        hops += 1
        if hops > 40:
            break
        if target.startswith("/"):
            done = []
        parts = [p for p in target.split("/") if p] + parts
    return root + "/" + "/".join(done)


class Health(JobBase):
    """The job's view of the server: its process, socket, log; restart and watch."""

    def server_pid(self) -> int | None:
        """The server's pid: from its pid file, else a server process with its markers."""
        pid_file = self.how.get("pid_file")
        if pid_file:
            try:
                with open(pid_file) as fh:
                    pid = int(fh.read().strip())
                if self._is_server(pid, require_marker=False):
                    return pid
            except (OSError, ValueError):
                pass
        for name in os.listdir("/proc"):
            if name.isdigit() and self._is_server(int(name), require_marker=True):
                return int(name)
        return None

    def _is_server(self, pid: int, require_marker: bool) -> bool:
        argv = live_argv(pid)
        if not argv or os.path.basename(argv[0]) not in SERVER_NAMES:
            return False
        if not require_marker:
            return True
        cgroup_id = self.how.get("cgroup_id")
        if cgroup_id:  # a server in a container: its cgroup path names the container
            try:
                with open("/proc/%d/cgroup" % pid) as fh:
                    return cgroup_id in fh.read()
            except OSError:
                return False
        if not _same_pid_namespace(pid):
            # A server in a container or another booted system, seen in this host's /proc:
            # it may share a marker (--datadir=/var/lib/mysql), never the instance. A restart
            # once took such a one for the restarted server, and called it dead when it ended.
            return False
        markers = self.how.get("markers") or []
        return any(m in argv for m in markers)

    def greets(self, pid: int | None = None) -> bool:
        """True when the socket answers with a MySQL protocol greeting.

        A server in a container has its socket inside the container: it is reached through
        the server process's root (/proc/PID/root/…), which root on the host may open.
        """
        path = self.how.get("socket")
        inside = self.how.get("container_socket")
        if not path and inside and pid is not None:
            path = under_root("/proc/%d/root" % pid, inside)
        if not path:
            return True
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(3)
                sock.connect(path)
                greeting = sock.recv(512)
        except OSError:
            return False
        return len(greeting) > 5 and greeting[3] == 0 and greeting[4] in (10, 255)

    def mark_log(self) -> None:
        """Remember where the error log ends now, so only new lines are read later."""
        log = self.how.get("log") or {}
        if log.get("kind") in ("file", "syslog"):
            try:
                self.log_mark = os.path.getsize(log["path"])
            except OSError:
                self.log_mark = 0
        else:
            self.log_mark = time.time()

    def new_log_lines(self) -> list[str] | None:
        """Lines the server logged since :meth:`mark_log`; None when there is no log to read."""
        log = self.how.get("log") or {}
        kind = log.get("kind")
        if kind in ("file", "syslog"):
            try:
                with open(log["path"], "rb") as fh:
                    size = os.fstat(fh.fileno()).st_size
                    fh.seek(
                        self.log_mark if self.log_mark is not None and self.log_mark <= size else 0
                    )
                    text = fh.read().decode("utf-8", "replace")
            except OSError:
                return None
            lines = text.splitlines()
            if kind == "syslog":
                names = log.get("match") or ["mariadbd", "mysqld"]
                lines = [ln for ln in lines if any(n in ln for n in names)]
            return lines
        if kind == "container" and log.get("name"):
            # The engine keeps the server's standard error; --since takes a Unix time.
            since = "%d" % int(self.log_mark or time.time())
            status, out = self.run(
                [log["engine"], "logs", "--since", since, log["name"]], timeout=30
            )
            return out.splitlines() if status == 0 else None
        if kind == "journal" and log.get("unit"):
            since = "@%d" % int(self.log_mark or time.time())
            status, out = self.run(
                ["journalctl", "-u", log["unit"], "--since", since, "-o", "cat", "--no-pager"],
                timeout=30,
            )
            return out.splitlines() if status == 0 else None
        return None

    def explain(self) -> None:
        """Keep the error-log lines that explain a failure (the last 25 error lines).

        Only error lines: a server's normal start-up lines (notes, "ready for connections")
        explain nothing and make a healthy server look broken.
        """
        lines = self.new_log_lines() or []
        self.log_lines = [ln for ln in lines if ERROR_LINE.search(ln)][-25:]
        if self.log_lines:
            self.step("error-log", "info", "\n".join(self.log_lines))

    def _logged_ready(self, silent_ok: bool) -> bool:
        """Whether the server logged "ready for connections" since the restart.

        True when there is no log to read, or (``silent_ok``) when it stayed empty: a
        server whose error log goes to a file inside its container says nothing here, and
        then the process is all there is to go by.
        """
        lines = self.new_log_lines()
        if lines is None or (silent_ok and not lines):
            return True
        return any("ready for connections" in ln for ln in lines)

    def wait_healthy(
        self, old_pid: int | None, proc: subprocess.Popen[bytes] | None, timeout: float
    ) -> int:
        """Poll until the restarted server is healthy; its pid, or JobFailed.

        Healthy: a server process other than ``old_pid``, its socket greets, a login works
        (when the job can log in); with neither a socket nor a login, the process and
        "ready for connections" in its log since the restart. While a server process lives
        (crash recovery in progress) it waits up to ``timeout``; with no process for
        ``grace`` seconds after the restart command returned, the start failed.
        """
        start = time.monotonic()
        grace = float(self.how.get("gone_grace", 3))
        gone_since: float | None = None
        last_note = start
        last_log_look = 0.0
        while True:
            elapsed = time.monotonic() - start
            pid = self.server_pid()
            restart_done = proc is None or proc.poll() is not None
            if pid is not None and (pid != old_pid or restart_done) and self.greets(pid):
                has_client = bool(self.how.get("client"))
                ok = self.client("SELECT 1")[0] if has_client else False
                if ok:
                    return pid
                # No login (none given, or it never worked, even before the change).
                no_login = not has_client or self.client_ok is False
                if no_login and (self.how.get("socket") or self.how.get("container_socket")):
                    return pid  # the socket greets: enough
                if no_login and time.monotonic() - last_log_look >= 1:
                    # Nothing to greet either (a server in a container whose root wants a
                    # password): a new process is not a ready server; its log says when it is.
                    last_log_look = time.monotonic()
                    if self._logged_ready(silent_ok=elapsed > SILENT_LOG_SECONDS):
                        return pid
            if pid is None and restart_done:
                gone_since = gone_since if gone_since is not None else time.monotonic()
                if time.monotonic() - gone_since > grace:
                    raise JobFailed(
                        f"the server is not running {grace:.0f} s after the restart command ended"
                    )
            else:
                gone_since = None
            if elapsed > timeout:
                raise JobFailed(f"the server was not healthy after {timeout:.0f} s")
            if time.monotonic() - last_note >= 5:
                last_note = time.monotonic()
                lines = self.new_log_lines() or []
                self.step(
                    "health",
                    "progress",
                    "{:.0f} s: process {}, waiting (last log line: {})".format(
                        elapsed, pid or "absent", lines[-1] if lines else "-"
                    ),
                )
            time.sleep(0.2)

    def restart(self, phase: str) -> None:
        """Restart through the service manager (or the given command) and wait for health."""
        argv = self.how.get("restart")
        if not argv:
            raise JobFailed("no way to restart the server is known (started by hand?)")
        unit = self.how.get("unit")
        if unit and phase == "restart-old":
            # A unit that failed to start may have hit systemd's start rate limit.
            self.run(["systemctl", "reset-failed", unit], timeout=30)
        old_pid = self.server_pid()
        self.mark_log()
        self.restart_attempted = True
        self.step(phase, "start", " ".join(argv))
        began = time.monotonic()
        out_path = os.path.join(self.dir, f"{phase}.out")
        with open(out_path, "ab") as out:
            # Output to a file, never a pipe: the daemon it starts inherits it and would keep
            # a pipe open for ever.
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        timeout = float(self.how.get("health_timeout", 300))
        try:
            pid = self.wait_healthy(old_pid, proc, timeout)
        finally:
            if proc.poll() is None:
                try:
                    proc.wait(timeout=max(1.0, timeout - (time.monotonic() - began)))
                except subprocess.TimeoutExpired:
                    self.warnings.append(
                        f"the restart command `{' '.join(argv)}` was still running when the "
                        "server became healthy"
                    )
        self.downtime = time.monotonic() - began
        if proc.returncode not in (0, None):
            self.warnings.append(
                f"`{' '.join(argv)}` exited {proc.returncode}, but the server is healthy "
                "(judged by polling, not the exit code)"
            )
        lines = self.new_log_lines()
        ready = None if lines is None else any("ready for connections" in ln for ln in lines)
        # A container's engine log with no line at all since the restart: the server logs
        # to a file inside the container, and no line will come to wait for.
        elsewhere = not lines and (self.how.get("log") or {}).get("kind") == "container"
        if ready is False and not elsewhere:
            # The line can lag the socket by a moment.
            time.sleep(1.0)
            lines = self.new_log_lines() or []
            ready = any("ready for connections" in ln for ln in lines)
        detail = "pid %d healthy after %.1f s (%s%s; %s)" % (
            pid,
            self.downtime,
            "socket greets" if self.how.get("socket") else "server process found",
            ", login works" if self.how.get("client") else "",
            {
                True: '"ready for connections" logged',
                False: '"ready for connections" not found in the log',
                None: "no log to read",
            }[ready],
        )
        if ready is False:
            self.warnings.append(
                'the server answers but "ready for connections" was not found in its log'
            )
        self.step(phase, "ok", detail)
        self.restarted = True
        self.healthy_pid = pid

    def watch(self) -> None:
        """Watch a short window after start for the server dying (an OOM kill, a crash)."""
        seconds = float(self.how.get("watch_seconds", 15))
        pid = self.healthy_pid
        self.step("watch", "start", f"watching the server for {seconds:.0f} s")
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.check_cancel("while watching the restarted server")
            if pid is not None and not self._is_server(pid, require_marker=False):
                status, out = self.run(["dmesg"], timeout=10)
                oom = [
                    ln
                    for ln in out.splitlines()
                    if "Killed process %d" % pid in ln or ("oom" in ln.lower() and str(pid) in ln)
                ]
                raise JobFailed(
                    "the server (pid %d) died within %.0f s of starting%s"
                    % (pid, seconds, ": " + oom[-1] if oom else "")
                )
            time.sleep(0.25)
        lines = self.new_log_lines() or []
        errors = [ln for ln in lines if "[ERROR]" in ln]
        if errors:
            self.warnings.append(
                "new [ERROR] lines in the error log since the restart: " + " | ".join(errors[-5:])
            )
            self.step("watch", "warn", "\n".join(errors[-10:]))
        self.step("watch", "ok", "the server kept running")
