"""How an option file's path is read: on this computer, through a Transport, or from one batch.

A :data:`Reader` answers what is at a path (a file with its bytes, a directory with its
names, or nothing), so the same reading code works here and on a remote host.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol


@dataclass(frozen=True)
class Node:
    """What a reader found at a path: a file with its bytes, a directory, or nothing."""

    kind: Literal["file", "dir", "missing"]
    data: bytes = b""
    names: tuple[str, ...] = ()
    world_writable: bool = False


Reader = Callable[[str], Node]
"""Returns the :class:`Node` at a path (following symlinks).

Raises ``PermissionError`` (or another ``OSError``) when the path exists but
cannot be read.
"""


def local_reader(path: str) -> Node:
    """Read a path on this computer."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return Node("missing")
    if stat.S_ISDIR(st.st_mode):
        return Node("dir", names=tuple(os.listdir(path)))
    with open(path, "rb") as fh:
        data = fh.read()
    writable = bool(st.st_mode & stat.S_IWOTH) and stat.S_ISREG(st.st_mode)
    return Node("file", data=data, world_writable=writable)


class _Result(Protocol):
    exit_status: int
    stdout: bytes
    stderr: bytes


class _Runs(Protocol):
    def run(
        self,
        argv: Sequence[str],
        *,
        sudo: bool = False,
        input: bytes | None = None,
        timeout: float = 60.0,
    ) -> _Result: ...


# One round trip per path, in POSIX sh (BusyBox hosts too). Output: "M\0", "D\0" + names each
# ending "\0", or "F<mode>\0" + the bytes. Anything we may not read exits non-zero: a path whose
# directory we cannot search is "unreadable", never "missing".
_READ_SCRIPT = r"""
p=$1
d=$(dirname -- "$p")
# A missing directory means a missing file, provided the nearest existing ancestor is
# searchable (else we cannot tell, and say so).
a=$d
while [ ! -e "$a" ] && [ "$a" != / ]; do a=$(dirname -- "$a"); done
if [ "$a" != "$d" ] && [ -x "$a" ]; then printf 'M\000'; exit 0; fi
if [ ! -x "$d" ]; then echo "cannot search $d" >&2; exit 13; fi
if [ -d "$p" ]; then
    if [ ! -r "$p" ] || [ ! -x "$p" ]; then echo "cannot list $p" >&2; exit 13; fi
    printf 'D\000'
    for f in "$p"/* "$p"/.*; do
        name=${f##*/}
        case $name in .|..) continue ;; esac
        if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\000' "$name"; fi
    done
elif [ -e "$p" ]; then
    printf 'F%s\000' "$(stat -L -c %a -- "$p")"
    cat -- "$p"
else
    printf 'M\000'
fi
"""


# Reads many paths in one command: each path's answer from _READ_SCRIPT as a header line and
# the answer in hex (od is POSIX), or the reason it failed; for a directory each *.cnf in it.
_BATCH_SCRIPT = r"""
r=$1; shift
one() {
    case $1 in *"
"*) return ;; esac
    if why=$(sh -c "$r" sh "$1" 2>&1 >/dev/null); then
        printf '@@path %s\n' "$1"
        sh -c "$r" sh "$1" | od -An -v -tx1
    else
        printf '@@fail %s\n' "$1"
        printf '%s\n' "$why" | head -n 1
    fi
}
dir() {
    if [ -d "$1" ] && [ -r "$1" ] && [ -x "$1" ]; then
        for f in "${1%/}"/*.cnf; do [ -e "$f" ] && one "$f"; done
    fi
}
for p in "$@"; do
    one "$p"
    dir "$p"
done
# What the files name with !include / !includedir, one level down.
for p in "$@"; do
    [ -f "$p" ] && [ -r "$p" ] || continue
    sed -n 's/^[[:space:]]*!include[[:space:]][[:space:]]*//p' "$p" | while IFS= read -r f; do
        one "$f"
    done
    sed -n 's/^[[:space:]]*!includedir[[:space:]][[:space:]]*//p' "$p" | while IFS= read -r d; do
        one "$d"
        dir "$d"
    done
done
"""


def batch_argv(paths: Sequence[str]) -> list[str]:
    """The one command that reads ``paths`` for :func:`batch_reader`."""
    return ["sh", "-c", _BATCH_SCRIPT, "sh", _READ_SCRIPT, *paths]


def _node(out: bytes, path: str) -> Node:
    tag, _, rest = out.partition(b"\0")
    if tag == b"M":
        return Node("missing")
    if tag == b"D":
        names = [n.decode("utf-8", "surrogateescape") for n in rest.split(b"\0") if n]
        return Node("dir", names=tuple(names))
    if tag.startswith(b"F"):
        mode = int(tag[1:] or b"0", 8)
        return Node("file", data=rest, world_writable=bool(mode & 0o002))
    raise OSError(f"unexpected answer while reading {path}")


def batch_reader(transport: _Runs, batch: bytes, *, sudo: bool = False) -> Reader:
    """A :data:`Reader` that answers from ``batch`` (the output of :func:`batch_argv`).

    A path the batch did not cover is read on its own, as :func:`transport_reader` does;
    one it could not read raises as that reader would.
    """
    known: dict[str, bytes | str] = {}
    current: str | None = None
    kind = "@@path"
    body: list[str] = []
    for line in batch.decode("utf-8", "surrogateescape").splitlines() + ["@@path "]:
        tag, _, rest = line.partition(" ")
        if tag in ("@@path", "@@fail"):
            if current is not None:
                known[current] = (
                    bytes.fromhex("".join(body))
                    if kind == "@@path"
                    else (" ".join(body).strip() or "permission denied")
                )
            current, kind, body = rest, tag, []
        elif current is not None:
            body.append(line.replace(" ", "") if kind == "@@path" else line)
    single = transport_reader(transport, sudo=sudo)

    def read(path: str) -> Node:
        found = known.get(path, known.get(path.rstrip("/") or "/"))  # !includedir dir/
        if found is None:
            return single(path)
        if isinstance(found, str):
            raise PermissionError(13, found, path)
        return _node(found, path)

    return read


def transport_reader(transport: _Runs, *, sudo: bool = False) -> Reader:
    """A :data:`Reader` that reads through a Transport (local or SSH)."""

    def read(path: str) -> Node:
        result = transport.run(["sh", "-c", _READ_SCRIPT, "sh", path], sudo=sudo)
        out = result.stdout
        if result.exit_status != 0:
            reason = result.stderr.decode("utf-8", "replace").strip()
            raise PermissionError(13, reason or "permission denied", path)
        return _node(out, path)

    return read
