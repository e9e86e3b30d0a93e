"""Our known_hosts parser on the lines that crash or fool paramiko's."""

from __future__ import annotations

import base64
import hashlib
import hmac
import subprocess
from pathlib import Path

import paramiko
import pytest

from app.domain.errors import HostKeyChanged, HostKeyRevoked, HostKeyUnknown
from app.remote.hostkeys import (
    HostKeyStore,
    OfferedKey,
    default_own_file,
    host_field_matches,
    key_type_name,
    parse_known_hosts,
    split_host_port,
)


def _key(tmp_path: Path, name: str, kind: str = "ed25519") -> tuple[str, str, paramiko.PKey]:
    path = tmp_path / name
    size = ["-b", "1024"] if kind == "rsa" else []  # only the fingerprint matters: keep it quick
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, *size, "-N", "", "-f", str(path)], check=True, timeout=30
    )
    key_type, b64 = Path(f"{path}.pub").read_text().split()[:2]
    return key_type, b64, paramiko.PKey.from_path(path)


def _hashed(name: str, salt: bytes = b"0123456789abcdefghij") -> str:
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


@pytest.mark.parametrize(
    ("patterns", "name", "expected"),
    [
        (["db1.example.com"], "DB1.example.com", True),  # host names ignore case
        (["*.example.com"], "db1.example.com", True),
        (["*.example.com"], "example.com", False),
        (["db?.example.com"], "db7.example.com", True),
        (["db?.example.com"], "db17.example.com", False),
        (["*.example.com", "!db2.example.com"], "db2.example.com", False),  # negation wins
        (["!db2.example.com", "*.example.com"], "db1.example.com", True),
        (["!db2.example.com"], "db1.example.com", False),  # negation alone never matches
        (["[10.0.0.5]:2222"], "[10.0.0.5]:2222", True),
        (["[10.0.0.5]:2222"], "10.0.0.5", False),  # a port-22 lookup is a different name
        (["[10.0.0.*]:2222"], "[10.0.0.9]:2222", True),
        (["[a]b"], "[a]b", True),  # brackets are literal, not a character class
        (["a.b"], "axb", False),  # dots are literal
        ([_hashed("[127.0.0.1]:2200")], "[127.0.0.1]:2200", True),
        ([_hashed("[127.0.0.1]:2200")], "[127.0.0.1]:2201", False),
        (["|1|bad-base64|x"], "anything", False),
        (["|2|abc|def"], "anything", False),
    ],
)
def test_host_patterns_follow_openssh(patterns: list[str], name: str, expected: bool) -> None:
    assert host_field_matches(patterns, name) is expected


def test_tricky_file_is_parsed_without_crashing(tmp_path: Path) -> None:
    kt, b64, _ = _key(tmp_path, "a")
    text = "\n".join(
        [
            "# a comment",
            "",
            "   ",
            f"@cert-authority *.example.com {kt} {b64}",
            f"@revoked * {kt} {b64}",
            f"@bogus host {kt} {b64}",
            "garbage",
            "host-only ssh-ed25519",
            f"host {kt} not*base64!",
            f"host ssh-rsa {b64}",  # the blob says ed25519: a mismatch
            f"{_hashed('h1')} {kt} {b64} comment with spaces",
            f"h2,h3,[h4]:2222\t{kt}  {b64}\r",
            "\x00\xff binary junk",
        ]
    )
    parsed = parse_known_hosts(text, "kh")
    assert [(e.marker, e.lineno) for e in parsed.entries] == [("@revoked", 5), ("", 11), ("", 12)]
    assert parsed.entries[2].patterns == ("h2", "h3", "[h4]:2222")
    joined = "\n".join(parsed.notes)
    assert "kh:4: @cert-authority line skipped" in joined
    for lineno in (6, 7, 8, 9, 10, 13):
        assert f"kh:{lineno}:" in joined


def test_openssh_hashed_lines_match(tmp_path: Path) -> None:
    """Lines hashed by ssh-keygen -H itself are found, so we agree with OpenSSH's hashing."""
    kt, b64, key = _key(tmp_path, "a")
    kh = tmp_path / "kh"
    kh.write_text(f"[127.0.0.1]:2200 {kt} {b64}\nother.example {kt} {b64}\n")
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(kh)], check=True, capture_output=True)
    assert kh.read_text().startswith("|1|")
    store = HostKeyStore(own_file=tmp_path / "own", user_file=kh)
    assert store.check("127.0.0.1", 2200, OfferedKey.from_pkey(key)) == "known"
    with pytest.raises(HostKeyUnknown):
        store.check("127.0.0.1", 2201, OfferedKey.from_pkey(key))


def test_fingerprint_and_type_match_ssh_keygen(tmp_path: Path) -> None:
    for kind, shown in (("ed25519", "ED25519"), ("rsa", "RSA"), ("ecdsa", "ECDSA")):
        _, _, key = _key(tmp_path, kind, kind)
        out = subprocess.run(
            ["ssh-keygen", "-lf", str(tmp_path / f"{kind}.pub")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        offered = OfferedKey.from_pkey(key)
        assert offered.fingerprint == out[1] == key.fingerprint
        assert f"({offered.type_name})" == out[-1] == f"({shown})"
    assert key_type_name("ecdsa-sha2-nistp521") == "ECDSA"
    assert key_type_name("sk-ssh-ed25519@openssh.com") == "ED25519-SK"


def test_decisions_known_changed_revoked_unknown_accepted(tmp_path: Path) -> None:
    kt, b64, key = _key(tmp_path, "a")
    kt2, b64_2, other = _key(tmp_path, "b")
    _, _, third = _key(tmp_path, "c")
    user_kh = tmp_path / "user_kh"
    extra = tmp_path / "extra_kh"
    own = tmp_path / "share" / "InnoTune" / "known_hosts"
    user_kh.write_text(f"garbage\n*.lan,!bad.lan {kt} {b64}\n")
    extra.write_text(f"@revoked nowhere.example {kt2} {b64_2}\n")
    system = tmp_path / "ssh_known_hosts"
    system.write_text(f"@cert-authority * {kt2} {b64_2}\n")
    store = HostKeyStore(own_file=own, extra_file=extra, user_file=user_kh, system_file=system)
    assert store.sources() == [system, user_kh, extra, own]
    mine, theirs = OfferedKey.from_pkey(key), OfferedKey.from_pkey(other)

    assert store.check("db.lan", 22, mine) == "known"
    with pytest.raises(HostKeyChanged) as changed:
        store.check("db.lan", 22, OfferedKey.from_pkey(third))
    assert mine.fingerprint in changed.value.known
    assert changed.value.offered == f"ED25519 {third.fingerprint}"
    # Revoked anywhere means refused everywhere, even when also listed as known.
    user_kh.write_text(f"db.lan {kt2} {b64_2}\n")
    with pytest.raises(HostKeyRevoked, match="@revoked"):
        store.check("db.lan", 22, theirs)

    with pytest.raises(HostKeyUnknown) as unknown:
        store.check("bad.lan", 2222, mine, accept_fingerprint="SHA256:not-this-one")
    assert unknown.value.fingerprint == mine.fingerprint
    assert unknown.value.key_type == "ED25519"
    assert unknown.value.key_line == f"[bad.lan]:2222 {kt} {b64}"
    assert not own.exists()
    assert store.check("bad.lan", 2222, mine, accept_fingerprint=mine.fingerprint) == "accepted"
    assert own.read_text() == f"[bad.lan]:2222 {kt} {b64}\n"
    assert store.check("bad.lan", 2222, mine) == "known"
    assert user_kh.read_text() == f"db.lan {kt2} {b64_2}\n"  # the user's file is never touched
    assert not list(own.parent.glob(".*.tmp"))


def test_own_file_honours_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_own_file() == tmp_path / "data" / "InnoTune" / "known_hosts"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_own_file() == tmp_path / "home" / ".local/share/InnoTune/known_hosts"
    assert split_host_port("[::1]:2222") == ("::1", 2222)
    assert split_host_port("db.lan") == ("db.lan", 22)
