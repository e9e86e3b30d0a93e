"""The exports without a host: the per-host pool rule agrees with the planner, files are valid.

The Ansible runs against real hosts are in tests/integration/test_export.py.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest
import yaml

from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.export import ExportError, playbook_files, shell_script
from app.export.ansible import ROLE
from app.knobs import default_catalogue
from app.planner import default_positions, make_plan
from tests.unit.planner_profiles import GIB, MIB, PROFILES

RAM_SIZES_GIB = (2, 3, 4, 8, 16, 24, 32, 64, 128, 512)
ANSIBLE_PLAYBOOK = shutil.which("ansible-playbook") or str(
    Path(__file__).resolve().parents[2] / ".venv" / "bin" / "ansible-playbook"
)


def with_ram(facts: HostFacts, ram: int) -> HostFacts:
    machine = dataclasses.replace(facts.os.machine, mem_total_bytes=ram)
    return dataclasses.replace(facts, os=dataclasses.replace(facts.os, machine=machine))


def plan_of(facts: HostFacts, share: int = 60) -> Plan:
    positions = dataclasses.replace(default_positions(facts), memory_share=share)
    return make_plan(facts, positions, default_catalogue())


def template_pool(files: dict[str, str], memtotal_mb: int) -> str:
    """Render the role's pool.j2 with jinja2 alone, for fake facts of one host."""
    defaults = yaml.safe_load(files[f"{ROLE}/defaults/main.yml"])
    # Option-file text, not HTML: autoescaping would be wrong (as in Ansible's templating).
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)  # noqa: S701
    host = {
        "ansible_memtotal_mb": memtotal_mb,
        "innotune_pool_rule": defaults["innotune_pool_rule"],
    }
    host["innotune_ram_bytes"] = env.from_string(defaults["innotune_ram_bytes"]).render(host)
    return env.from_string(files[f"{ROLE}/templates/pool.j2"]).render(host).strip()


def script_pool(script: str, ram: int, tmp_path: Path) -> str:
    path = tmp_path / "plan.sh"
    path.write_text(script)
    proc = subprocess.run(
        ["sh", str(path), "pool"],
        env={"PATH": "/usr/bin:/bin", "INNOTUNE_RAM_BYTES": str(ram), "INNOTUNE_DROPIN_DIR": "/x"},
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


@pytest.mark.parametrize("profile", ["mariadb1011-md-raid1-ssd", "mysql80-sata-ssd"])
def test_template_and_script_size_each_hosts_pool_as_the_planner_does(
    profile: str, tmp_path: Path
) -> None:
    """One plan (from the first host) exported; every other RAM size gets the planner's pool."""
    base = PROFILES[profile].facts
    plan = plan_of(with_ram(base, 32 * GIB))
    assert plan.pool_rules, "the plan moves the pool, so it carries the rule"
    files, script = playbook_files(plan), shell_script(plan)
    compared = 0
    for gib in RAM_SIZES_GIB:
        ram = gib * GIB
        other = plan_of(with_ram(base, ram))
        change = other.change("innodb_buffer_pool_size")
        if change is None:  # the planner leaves a pool that is already about right
            continue
        assert template_pool(files, ram // MIB) == change.proposed, f"{gib} GiB"
        assert script_pool(script, ram, tmp_path) == change.proposed, f"{gib} GiB"
        compared += 1
    assert compared >= 7
    # The first host's own number is not what the others get.
    assert template_pool(files, 8 * 1024) != plan.change("innodb_buffer_pool_size").proposed  # type: ignore[union-attr]


def test_a_pool_that_fits_nowhere_is_left_out() -> None:
    plan = plan_of(with_ram(PROFILES["mariadb1011-md-raid1-ssd"].facts, 32 * GIB))
    files = playbook_files(plan)
    assert template_pool(files, 700) == ""  # 700 MiB: the OS reserve and connections take it


def test_playbook_passes_syntax_check_and_carries_the_explanations(tmp_path: Path) -> None:
    plan = plan_of(with_ram(PROFILES["mariadb1011-md-raid1-ssd"].facts, 32 * GIB))
    files = playbook_files(plan)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "hosts.ini").write_text("[innotune]\nh1\n")
    proc = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", str(tmp_path / "hosts.ini"), "--syntax-check", "site.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dropin = files[f"{ROLE}/templates/innotune.cnf.j2"]
    for change in plan.changes:
        if change.target in ("option_file", "dynamic"):
            assert change.reason.split()[0] in dropin
    assert "backup: true" in files[f"{ROLE}/tasks/main.yml"]
    assert "collection" in files["README.md"]
    sysctl = files[f"{ROLE}/templates/sysctl.conf.j2"]
    assert "vm.swappiness = 1" in sysctl and "Why:" in sysctl


def test_script_is_posix_sh_and_refuses_unsafe_values(tmp_path: Path) -> None:
    plan = plan_of(with_ram(PROFILES["mariadb1011-md-raid1-ssd"].facts, 32 * GIB))
    path = tmp_path / "plan.sh"
    path.write_text(shell_script(plan))
    subprocess.run(["sh", "-n", str(path)], check=True)
    if shutil.which("dash"):
        subprocess.run(["dash", "-n", str(path)], check=True)
    bad = dataclasses.replace(plan.changes[0], proposed="1; rm -rf /")
    with pytest.raises(ExportError):
        shell_script(dataclasses.replace(plan, changes=(bad, *plan.changes[1:])))
    with pytest.raises(ExportError):
        playbook_files(dataclasses.replace(plan, changes=(bad,)))


def test_a_saved_plan_round_trips_with_its_rules() -> None:
    plan = plan_of(with_ram(PROFILES["mysql80-sata-ssd"].facts, 64 * GIB))
    again = Plan.from_json(plan.to_json())
    assert again.pool_rules == plan.pool_rules and again == plan
    old = plan.to_json().replace('"pool_rules"', '"ignored"')
    assert Plan.from_json(old).pool_rules == ()  # plans saved before the rules still load


def test_templates_name_the_changed_settings_and_the_live_statement() -> None:
    """changed.j2 and set_global.j2 rendered with jinja2 alone, as the role's tasks use them."""
    plan = plan_of(with_ram(PROFILES["mariadb1011-md-raid1-ssd"].facts, 32 * GIB))
    files = playbook_files(plan)
    env = jinja2.Environment()  # noqa: S701 - option-file text, not HTML
    changed = env.from_string(files[f"{ROLE}/templates/changed.j2"])
    settings = {"innodb_io_capacity": "3000", "innodb_buffer_pool_size": "1073741824"}
    old = "[mysqld]\ninnodb_io_capacity = 3000\ninnodb_buffer_pool_size = 2147483648\n"
    host = {"innotune_settings": settings, "innotune_old_text": old}
    assert changed.render(host).split() == ["innodb_buffer_pool_size"]
    assert changed.render({**host, "innotune_old_text": ""}).split() == list(settings)
    no_pool = {**settings, "innodb_buffer_pool_size": ""}  # none fits: never "changed"
    assert changed.render({**host, "innotune_settings": no_pool}).split() == []
    statement = env.from_string(files[f"{ROLE}/templates/set_global.j2"]).render(
        innotune_changed=["innodb_io_capacity", "innodb_buffer_pool_size"],
        innotune_dynamic_keys=["innodb_buffer_pool_size", "innodb_io_capacity"],
        innotune_settings=settings,
    )
    assert statement.strip() == (
        "SET GLOBAL innodb_io_capacity = 3000, innodb_buffer_pool_size = 1073741824"
    )
