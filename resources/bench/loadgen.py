"""InnoTune's load generator: the benchmark's clients, run on the target next to the server.

Standard library only (Python 3.6+), never installed: InnoTune sends this text on the
command's standard input and the target's ``python3`` runs it from memory. It speaks the
MySQL client protocol itself, over the server's Unix socket (or 127.0.0.1), so a commit
costs a few microseconds of client CPU instead of an SSH round trip.

Standard input, after this program's own text:
  line 1: the run as JSON (socket or port, user, password, schema, workload, threads,
          seconds, max_tx, the workload's sizes, the server's pid if known);
  then:   ``stop`` ends the run early (a cancel). End of input (InnoTune went away) kills
          every client at once.
Standard output: JSON lines: ``ready`` once every client is logged in, ``result`` at the end
(or ``error``). A password only ever arrives on standard input and is never printed.
"""

import hashlib
import json
import math
import os
import random
import select
import signal
import socket
import struct
import sys
import time

RETRYABLE = (1213, 1205)  # deadlock, lock wait timeout: roll back and go on
CLIENT_FLAGS = (
    0x00000001  # LONG_PASSWORD
    | 0x00000004  # LONG_FLAG
    | 0x00000008  # CONNECT_WITH_DB
    | 0x00000200  # PROTOCOL_41
    | 0x00002000  # TRANSACTIONS
    | 0x00008000  # SECURE_CONNECTION
    | 0x00080000  # PLUGIN_AUTH
)
LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


class DbError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, "ERROR %d: %s" % (code, message))
        self.code = code


class Stop(Exception):
    pass


def emit(obj):
    os.write(1, (json.dumps(obj) + "\n").encode())


# -- the MySQL client protocol, the few parts a write benchmark needs -------------------------


def _xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def native_scramble(password, salt):
    if not password:
        return b""
    p1 = hashlib.sha1(password).digest()
    p2 = hashlib.sha1(p1).digest()
    return _xor(p1, hashlib.sha1(salt + p2).digest())


def sha2_scramble(password, salt):
    if not password:
        return b""
    p1 = hashlib.sha256(password).digest()
    p2 = hashlib.sha256(hashlib.sha256(p1).digest() + salt).digest()
    return _xor(p1, p2)


class Conn:
    def __init__(self, cfg):
        self.unix = bool(cfg.get("socket"))
        if self.unix:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(30)
            s.connect(cfg["socket"])
        else:
            s = socket.create_connection(("127.0.0.1", int(cfg.get("port") or 3306)), 30)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.s = s
        self.buf = b""
        self.password = (cfg.get("password") or "").encode()
        self.login(cfg["user"], cfg["schema"])
        # A run keeps its own time; a server that stops answering for this long is dead.
        s.settimeout(float(cfg["seconds"]) + 60)

    def peer_pid(self):
        if not self.unix or not hasattr(socket, "SO_PEERCRED"):
            return None
        raw = self.s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", raw)[0]

    def _recv(self):
        data = self.s.recv(65536)
        if not data:
            raise DbError(2013, "Lost connection to the server")
        return data

    def packet(self):
        buf = self.buf
        while len(buf) < 4:
            buf += self._recv()
        n = buf[0] | buf[1] << 8 | buf[2] << 16
        while len(buf) < 4 + n:
            buf += self._recv()
        self.seq = buf[3]
        self.buf = buf[4 + n :]
        return buf[4 : 4 + n]

    def send(self, payload, seq):
        self.s.sendall(struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload)

    @staticmethod
    def error(pkt):
        code = struct.unpack("<H", pkt[1:3])[0]
        text = pkt[9:] if pkt[3:4] == b"#" else pkt[3:]
        return DbError(code, text.decode("utf-8", "replace"))

    def login(self, user, schema):
        hs = self.packet()
        if hs[:1] == b"\xff":
            raise self.error(hs)
        end = hs.index(b"\0", 1)
        pos = end + 1 + 4
        salt = hs[pos : pos + 8]
        pos += 8 + 1
        caps = struct.unpack("<H", hs[pos : pos + 2])[0]
        pos += 2 + 1 + 2
        caps |= struct.unpack("<H", hs[pos : pos + 2])[0] << 16
        pos += 2
        salt_len = hs[pos]
        pos += 1 + 10
        rest = max(13, salt_len - 8)
        salt += hs[pos : pos + rest].rstrip(b"\0")
        pos += rest
        plugin = hs[pos:].split(b"\0", 1)[0].decode() or "mysql_native_password"
        auth = self.answer(plugin, salt)
        body = struct.pack("<IIB23x", CLIENT_FLAGS, 1 << 24, 45)
        body += user.encode() + b"\0" + bytes([len(auth)]) + auth
        body += schema.encode() + b"\0" + plugin.encode() + b"\0"
        self.send(body, 1)
        while True:
            pkt = self.packet()
            first = pkt[:1]
            if first == b"\x00":
                return
            if first == b"\xff":
                raise self.error(pkt)
            if first == b"\xfe":  # switch to another method
                name, _, data = pkt[1:].partition(b"\0")
                plugin = name.decode()
                self.send(self.answer(plugin, data.rstrip(b"\0")), self.seq + 1)
            elif first == b"\x01" and plugin == "caching_sha2_password":
                if pkt[1:2] == b"\x03":  # fast path: the OK follows
                    continue
                if not self.unix:
                    raise DbError(
                        2061,
                        "caching_sha2_password wants the full login, which over TCP needs "
                        "TLS or RSA; log in once with the mysql client, or use the socket",
                    )
                self.send(self.password + b"\0", self.seq + 1)
            else:
                raise DbError(2027, "unexpected packet during login")

    def answer(self, plugin, salt):
        if plugin == "mysql_native_password":
            return native_scramble(self.password, salt[:20])
        if plugin == "caching_sha2_password":
            return sha2_scramble(self.password, salt[:20])
        if plugin == "mysql_clear_password":
            return self.password + b"\0"
        # unix_socket, auth_socket and the like: the server checks who we are by itself.
        return b""

    def querier(self):
        """A function that sends one COM_QUERY packet and reads its answer (an OK; an error
        is raised). Built once per client: the hot path has no attribute lookups and reads
        into one buffer instead of allocating one per answer."""
        sendall, recv_into = self.s.sendall, self.s.recv_into
        buf = bytearray(65536)
        conn = self

        def query(packet):
            sendall(packet)
            if not conn.buf:
                # The usual case: the whole answer in one read, one packet.
                n = recv_into(buf)
                if n > 4 and n == 4 + (buf[0] | buf[1] << 8 | buf[2] << 16):
                    if buf[4] == 0xFF:
                        raise conn.error(bytes(buf[4:n]))
                    return
                if not n:
                    raise DbError(2013, "Lost connection to the server")
                conn.buf = bytes(buf[:n])
            pkt = conn.packet()
            if pkt[:1] == b"\xff":
                raise conn.error(pkt)

        return query

    def close(self):
        try:
            self.s.sendall(b"\x01\x00\x00\x00\x01")  # COM_QUIT
        except OSError:
            pass
        self.s.close()


def com_query(sql):
    payload = b"\x03" + sql.encode()
    return struct.pack("<I", len(payload))[:3] + b"\0" + payload


# -- the workloads (the statements of app/bench/workloads.py) ---------------------------------


def row(rng):
    c = "".join(rng.choice(LETTERS) for _ in range(120))
    pad = "".join(rng.choice(LETTERS) for _ in range(60))
    return "(%d, '%s', '%s')" % (rng.randrange(1, 1000000), c, pad)


class Work:
    def __init__(self, cfg, seed):
        rng = random.Random(seed)
        self.rng = rng
        self.kind = cfg["workload"]
        self.table = "bench_" + self.kind
        self.prefill = int(cfg["prefill_rows"])
        ins = "INSERT INTO %s (k, c, pad) VALUES " % self.table
        self.singles = [com_query(ins + row(rng)) for _ in range(256)]
        self.begin, self.commit = com_query("BEGIN"), com_query("COMMIT")
        self.rollback = com_query("ROLLBACK")
        # A data set: the one-row writes go at random across bench_data (one row per
        # autocommit, the small transaction's UPDATE), as app/bench/workloads.py writes them.
        self.data_rows = int(cfg.get("data_rows") or 0)
        # Seeded afresh: a client of every round starts with the same seed, and the same rows
        # round after round would be in the pool after the first, whatever its size.
        self.spread_rng = random.Random()
        self.data_update = "UPDATE bench_data SET k = k + 1 WHERE id = %d"
        if self.kind == "small_tx":
            upd = "UPDATE " + self.table + " SET k = k + 1 WHERE id = %d"
            self.updates = [
                com_query(upd % rng.randrange(1, self.prefill + 1)) for _ in range(1024)
            ]
        if self.kind == "bulk":
            rows = ", ".join(row(rng) for _ in range(int(cfg["bulk_rows"])))
            self.bulk = [com_query(ins + rows)] * int(cfg["bulk_inserts"])
        self.i = 0

    def spread(self):
        """One row of the data set written, picked at random."""
        return com_query(self.data_update % (self.spread_rng.randrange(self.data_rows) + 1))

    def transaction(self):
        self.i += 1
        if self.kind == "autocommit":
            return (self.spread() if self.data_rows else self.singles[self.i % 256],)
        if self.kind == "small_tx":
            b = self.i * 3
            return (
                self.begin,
                self.singles[b % 256],
                self.singles[(b + 1) % 256],
                self.singles[(b + 2) % 256],
                self.spread() if self.data_rows else self.updates[self.i % 1024],
                self.commit,
            )
        return [self.begin] + self.bulk + [self.commit]


# -- one client: a process of its own --------------------------------------------------------


def client(cfg, number, go_fd, out_fd):
    stopping = []

    def on_term(_signum, _frame):
        stopping.append(1)
        raise Stop()

    signal.signal(signal.SIGTERM, on_term)
    report = {"client": number, "commits": 0, "errors": 0, "buckets": {}}
    conn = None
    try:
        conn = Conn(cfg)
        work = Work(cfg, number + 1)
        os.write(out_fd, (json.dumps({"ready": number, "peer": conn.peer_pid()}) + "\n").encode())
        os.read(go_fd, 1)  # blocks until the parent closes the pipe: all start at once
        cpu0, t0 = time.process_time(), time.perf_counter()
        deadline = t0 + float(cfg["seconds"])
        max_tx = int(cfg["max_tx"])
        lat = []
        add = lat.append
        clock = time.perf_counter
        query = conn.querier()
        commits = errors = 0
        single = work.kind == "autocommit" and not work.data_rows
        singles = work.singles
        while commits < max_tx and not stopping:
            if single:
                # One statement, one commit: the tightest loop the client can run.
                packet = singles[commits & 255]
                start = clock()
                try:
                    query(packet)
                except DbError as exc:
                    if exc.code not in RETRYABLE:
                        raise
                    errors += 1
                    continue
                now = clock()
                add(now - start)
                commits += 1
                if now >= deadline:
                    break
                continue
            tx = work.transaction()
            start = clock()
            try:
                for packet in tx:
                    query(packet)
            except DbError as exc:
                if exc.code not in RETRYABLE:
                    raise
                errors += 1
                query(work.rollback)
                continue
            now = clock()
            add(now - start)
            commits += 1
            if now >= deadline:
                break
        report["seconds"] = time.perf_counter() - t0
        report["cpu"] = time.process_time() - cpu0
        report.update(commits=commits, errors=errors)
        report["buckets"] = histogram(lat)
    except Stop:
        report["stopped"] = True
    except (DbError, OSError) as exc:
        report["error"] = str(exc)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.write(out_fd, (json.dumps(report) + "\n").encode())
    if conn is not None:
        conn.close()


def histogram(seconds):
    """Latencies in buckets 1 % apart: {bucket: count}; a bucket b stands for 1.01**b µs."""
    out = {}
    log = math.log
    step = log(1.01)
    for s in seconds:
        b = int(log(max(s, 1e-6) * 1e6) / step)
        out[b] = out.get(b, 0) + 1
    return out


# -- the run: clients, stop, CPU figures -----------------------------------------------------


def proc_cpu(pid):
    """Seconds of CPU the process has used, or None."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def proc_wait(pid):
    """Seconds the process's threads have waited for a CPU (their schedstat), or None."""
    total, seen = 0, False
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    for task in tasks:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, task)) as fh:
                total += int(fh.read().split()[1])
            seen = True
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended, or a kernel without schedstat
    return total / 1e9 if seen else None


def host_cpu():
    """(busy, total) jiffies of the whole host (iowait counts as idle)."""
    try:
        with open("/proc/stat") as fh:
            parts = [int(x) for x in fh.readline().split()[1:]]
        idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
        return sum(parts[:8]) - idle, sum(parts[:8])
    except (OSError, ValueError, IndexError):
        return None


def lines(fd, pending):
    data = os.read(fd, 65536)
    if not data:
        return None
    pending[fd] = pending.get(fd, b"") + data
    *whole, pending[fd] = pending[fd].split(b"\n")
    return [json.loads(w) for w in whole if w.strip()]


def die_with(parent):
    """Make this client die when the process that started it does (Linux's parent-death
    signal, where ctypes is there; else the clients' own deadline ends them)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (ImportError, OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before the signal was set up
        os._exit(1)


def next_settings(pending):
    """The next run's settings line from standard input (a late ``stop`` is skipped), or None
    at its end (InnoTune is done, or went away)."""
    stdin = sys.stdin.fileno()
    while True:
        while b"\n" not in pending[0]:
            try:
                data = os.read(stdin, 65536)
            except OSError:
                data = b""
            if not data:
                return None
            pending[0] += data
        line, pending[0] = pending[0].split(b"\n", 1)
        if line.strip().startswith(b"{"):
            return json.loads(line)


def main():
    # The first run's settings follow the program's text (read through Python's buffer);
    # then the program stays for more runs of the same benchmark, one settings line each,
    # until its input ends (rounds of a benchmark need no new start of python3).
    cfg = json.loads(sys.stdin.buffer.readline())
    pending = [b""]
    while cfg is not None:
        code = run(cfg)
        if code:
            return code
        cfg = next_settings(pending)
    return 0


def run(cfg):
    """One run: its clients started together, its result printed."""
    threads = int(cfg["threads"])
    # The row cap as transactions, shared so the clients together never pass it.
    whole, extra = divmod(int(cfg["max_tx"]), threads)
    go_r, go_w = os.pipe()
    children = {}
    pipes = {}
    for n in range(threads):
        r, w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            die_with(parent)
            os.close(go_w)
            os.close(r)
            try:
                client(dict(cfg, max_tx=whole + (1 if n < extra else 0)), n, go_r, w)
            finally:
                os._exit(0)
        os.close(w)
        children[pid] = n
        pipes[r] = n
    os.close(go_r)
    cfg.pop("password", None)
    gate = [go_w]  # emptied once the clients are let go (the pipe closed)
    try:
        return supervise(cfg, threads, children, pipes, gate)
    except BaseException:
        # Whatever went wrong here (InnoTune's end closed with our output unread, a broken
        # pipe), no client may outlive this process.
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        raise
    finally:
        for fd in list(pipes) + gate:
            os.close(fd)


def supervise(cfg, threads, children, pipes, gate):
    """Start the clients together, pass on a stop, collect their figures; print the result."""
    stdin = sys.stdin.fileno()
    pending = {}
    ready, results, peer = set(), {}, None
    started = None
    cpu0 = host0 = wait0 = None
    server_pid = cfg.get("server_pid")
    hard = time.monotonic() + 60

    def kill(sig):
        for pid in children:
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    stopped = None
    while len(results) < threads:
        now = time.monotonic()
        if now > hard:
            kill(signal.SIGKILL)
            stopped = stopped or "killed"
            break
        wait = [stdin] + [fd for fd, n in pipes.items() if n not in results]
        readable = select.select(wait, [], [], 0.5)[0]
        if stdin in readable:
            try:
                data = os.read(stdin, 4096)
            except OSError:  # reset: InnoTune's end closed with our output unread
                data = b""
            if not data:  # InnoTune went away: no one to report to
                kill(signal.SIGKILL)
                os._exit(3)
            if b"stop" in data and stopped is None:
                stopped = "cancelled"
                kill(signal.SIGTERM)
                hard = min(hard, now + 10)
        for fd in readable:
            if fd == stdin:
                continue
            got = lines(fd, pending)
            if got is None:
                results.setdefault(pipes[fd], {"error": "a client ended without a word"})
                continue
            for msg in got:
                if "ready" in msg:
                    ready.add(msg["ready"])
                    peer = peer or msg.get("peer")
                else:
                    results[msg["client"]] = msg
        if started is None and (len(ready) == threads or results):
            if results:  # a client could not log in: stop the others
                kill(signal.SIGTERM)
                hard = min(hard, now + 10)
                started = now
                continue
            server_pid = server_pid or peer
            cpu0 = proc_cpu(server_pid) if server_pid else None
            wait0 = proc_wait(server_pid) if server_pid else None
            host0 = host_cpu()
            os.close(gate.pop())
            started = time.monotonic()
            hard = started + float(cfg["seconds"]) + 30
            emit({"event": "ready", "server_pid": server_pid})
    ended = time.monotonic()
    cpu1 = proc_cpu(server_pid) if (server_pid and cpu0 is not None) else None
    wait1 = proc_wait(server_pid) if (server_pid and wait0 is not None) else None
    host1 = host_cpu()
    for pid in list(children):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    errors = [r["error"] for r in results.values() if r.get("error")]
    if errors and stopped is None:
        emit({"event": "error", "message": errors[0]})
        return 1
    buckets = {}
    for r in results.values():
        for b, n in r.get("buckets", {}).items():
            buckets[int(b)] = buckets.get(int(b), 0) + n
    seconds = max([r.get("seconds", 0.0) for r in results.values()] + [0.0])
    out = {
        "event": "result",
        "commits": sum(r.get("commits", 0) for r in results.values()),
        "errors": sum(r.get("errors", 0) for r in results.values()),
        "seconds": seconds or (ended - (started or ended)),
        "histogram": [
            [round(1.01 ** (b + 0.5) / 1000.0, 4), n] for b, n in sorted(buckets.items())
        ],
        "client_cpu": sum(r.get("cpu", 0.0) for r in results.values()),
        "server_cpu": None if cpu1 is None or cpu0 is None else cpu1 - cpu0,
        # A thread that ended during the run takes its wait with it: never below 0.
        "server_wait": None if wait1 is None or wait0 is None else max(0.0, wait1 - wait0),
        "host": None
        if host0 is None or host1 is None
        else [host1[0] - host0[0], host1[1] - host0[1]],
        "cpus": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "stopped": stopped,
        "python": sys.version.split()[0],
    }
    emit(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
