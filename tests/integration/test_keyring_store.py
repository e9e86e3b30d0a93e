"""Passwords in the system keyring: a real GNOME Keyring on a private D-Bus session bus.

Store, look up and delete go through keyring's SecretService backend to gnome-keyring-daemon;
the refusals are checked against the real alternatives (keyrings.alt's plain file, keyring's
fail and null backends, a chain with nothing usable), and the failures against a really
locked keyring and a bus that has gone away.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import TypeVar

import pytest

from app.access.doctor import Secrets
from app.access.keyring_store import (
    SERVICE,
    Account,
    KeyringFailed,
    KeyringStore,
    KeyringUnavailable,
    probe_keyring,
)
from app.domain.errors import OnGuiThreadError
from app.domain.threads import register_gui_thread, unregister_gui_thread
from tests.hosts.secret_service import SecretService, secret_service
from tests.hosts.util import need

T = TypeVar("T")

ACCOUNT = Account(kind="ssh", host="DB1.example.com", user="admin", port=2222, mysql_user="tuner")
SECRETS = Secrets(
    login_password="kr-login-PW-7f3a",
    sudo_password="kr-sudo-PW-91c2",
    mysql_password="kr-db-PW-e55d",
)
NO_BUS = "unix:path=/nonexistent/innotune-no-bus"


@pytest.fixture
def keyring_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SecretService]:
    with secret_service(tmp_path) as service:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", service.address)
        monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no keyringrc.cfg
        yield service


@pytest.fixture
def no_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", NO_BUS)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def test_entry_names_say_whose_password_each_is() -> None:
    assert ACCOUNT.entries() == {
        "login_password": "ssh:admin@db1.example.com:2222",
        "sudo_password": "sudo:admin@db1.example.com:2222",
        "mysql_password": "mysql:tuner@admin@db1.example.com:2222",
    }
    assert Account(kind="ssh", host="2001:db8::7").entries()["login_password"] == (
        "ssh:[2001:db8::7]"
    )
    assert Account(kind="local").entries() == {
        "sudo_password": "sudo:local",
        "mysql_password": "mysql:root@local",
    }
    assert Account(kind="practice").entries() == {}


def test_store_lookup_delete_through_the_real_secret_service(
    keyring_service: SecretService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    status = probe_keyring()
    assert status.usable, status.reason
    assert status.backend == "keyring.backends.SecretService.Keyring"
    store = KeyringStore.open()
    store.store(ACCOUNT, SECRETS)

    # Another store (a new process would do the same) reads them back from the daemon.
    found = KeyringStore.open().lookup(ACCOUNT)
    assert (found.login_password, found.sudo_password, found.mysql_password) == (
        SECRETS.login_password,
        SECRETS.sudo_password,
        SECRETS.mysql_password,
    )
    assert found.key_passphrase is None
    # Straight from the Secret Service, under InnoTune's name and the entry's.
    import secretstorage

    with closing(secretstorage.dbus_init()) as conn:
        collection = secretstorage.get_default_collection(conn)
        items = list(collection.search_items({"service": SERVICE}))
        assert {i.get_attributes()["username"] for i in items} == set(ACCOUNT.entries().values())
    # The keyring file on disk is encrypted: no password in it.
    files = list((keyring_service.data_dir / "keyrings").iterdir())
    assert files
    for path in files:
        data = path.read_bytes()
        for secret in (SECRETS.login_password, SECRETS.sudo_password, SECRETS.mysql_password):
            assert secret is not None and secret.encode() not in data, path

    # A password left empty is removed; the others stay.
    store.store(ACCOUNT, Secrets(login_password="kr-login-PW-new1"))
    found = store.lookup(ACCOUNT)
    assert found.login_password == "kr-login-PW-new1"
    assert found.sudo_password is None and found.mysql_password is None

    store.delete(ACCOUNT)
    assert store.lookup(ACCOUNT) == Secrets()
    store.delete(ACCOUNT)  # deleting what is not there is fine
    for record in caplog.records:
        assert "PW" not in record.getMessage()


def test_a_locked_keyring_is_a_clear_error(keyring_service: SecretService) -> None:
    KeyringStore.open().store(ACCOUNT, SECRETS)
    # Restarted without its password, the login keyring on disk stays locked; the unlock
    # prompt cannot be shown (no prompter on this bus), as when a person dismisses it.
    keyring_service.stop_keyring()
    keyring_service.start_keyring(unlock=False)
    store = KeyringStore.open()
    with pytest.raises(KeyringFailed) as info:
        store.lookup(ACCOUNT)
    assert "is locked" in info.value.problem
    assert "Unlock it" in info.value.fix
    with pytest.raises(KeyringFailed):
        store.store(ACCOUNT, SECRETS)
    assert "PW" not in str(info.value)


def test_a_bus_gone_away_is_a_clear_error_without_the_password(
    keyring_service: SecretService, caplog: pytest.LogCaptureFixture
) -> None:
    store = KeyringStore.open()
    keyring_service.stop()  # the session ended under us
    caplog.set_level(logging.DEBUG)
    with pytest.raises(KeyringFailed) as info:
        store.store(ACCOUNT, SECRETS)
    text = f"{info.value.problem} {info.value.fix}"
    assert "failed while storing ssh:admin@db1.example.com:2222" in text
    assert "keyring service" in info.value.fix
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "keyring" in logged
    for secret in (SECRETS.login_password, SECRETS.sudo_password, SECRETS.mysql_password):
        assert secret is not None and secret not in text and secret not in logged
    assert not probe_keyring().usable


def test_no_secret_service_means_no_keyring(no_keyring: None) -> None:
    # With keyrings.alt installed, the keyring library itself would settle for its plain
    # file here (it is viable, and the best left); InnoTune refuses it.
    need(importlib.util.find_spec("keyrings.alt") is not None, "needs keyrings.alt (dev extra)")
    from keyrings.alt.file import PlaintextKeyring

    assert PlaintextKeyring.priority > 0
    status = probe_keyring()
    assert not status.usable
    assert status.reason.startswith("No system keyring found: install and unlock GNOME Keyring")
    assert "KWallet" in status.reason
    with pytest.raises(KeyringUnavailable) as info:
        KeyringStore.open()
    assert "No system keyring found" in info.value.problem


@pytest.mark.parametrize(
    ("backend", "why"),
    [
        ("keyrings.alt.file.PlaintextKeyring", "may keep passwords in a file"),
        ("keyring.backends.fail.Keyring", "refuses every request"),
        ("keyring.backends.null.Keyring", "switches the keyring off"),
    ],
)
def test_a_configured_insecure_backend_is_refused_even_with_a_keyring_running(
    keyring_service: SecretService,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    backend: str,
    why: str,
) -> None:
    need(importlib.util.find_spec("keyrings.alt") is not None, "needs keyrings.alt (dev extra)")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "plain"))  # where a plain file would go
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", backend)
    status = probe_keyring()
    assert not status.usable
    assert backend in status.reason and why in status.reason
    assert "PYTHON_KEYRING_BACKEND" in status.reason
    with pytest.raises(KeyringUnavailable):
        KeyringStore.open()
    assert not (tmp_path / "plain").exists()  # nothing was written anywhere


def test_keyringrc_is_honoured_and_judged(
    keyring_service: SecretService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = tmp_path / "config" / "python_keyring" / "keyringrc.cfg"
    rc.parent.mkdir(parents=True)
    rc.write_text("[backend]\ndefault-keyring=keyrings.alt.file.PlaintextKeyring\n")
    status = probe_keyring()
    assert not status.usable and str(rc) in status.reason
    # A chain means "whatever is best": the Secret Service, never the plain file it also holds.
    rc.write_text("[backend]\ndefault-keyring=keyring.backends.chainer.ChainerBackend\n")
    assert probe_keyring().backend == "keyring.backends.SecretService.Keyring"
    rc.write_text("[backend]\ndefault-keyring=keyring.backends.SecretService.Keyring\n")
    assert probe_keyring().usable


def test_a_chain_with_nothing_usable_is_refused(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.chainer.ChainerBackend")
    status = probe_keyring()
    assert not status.usable and "No system keyring found" in status.reason


def _in_thread(call: Callable[[], T]) -> T:
    box: list[T] = []
    worker = threading.Thread(target=lambda: box.append(call()))
    worker.start()
    worker.join(120)
    return box[0]


def test_keyring_calls_refuse_the_gui_thread(keyring_service: SecretService) -> None:
    store = KeyringStore.open()
    register_gui_thread()
    try:
        with pytest.raises(OnGuiThreadError):
            probe_keyring()
        with pytest.raises(OnGuiThreadError):
            store.lookup(ACCOUNT)
        assert _in_thread(lambda: store.lookup(ACCOUNT)) == Secrets()  # fine in a worker
    finally:
        unregister_gui_thread()
