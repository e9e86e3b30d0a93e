"""The plan as an Ansible playbook with one role, for a group of hosts.

Layout written into the output directory::

    site.yml                      the playbook (hosts: the ``innotune`` group by default)
    inventory.example.ini
    README.md                     how to run it, the variables, the collections it needs
    roles/innotune/defaults/main.yml   the plan's values and rules as variables
    roles/innotune/tasks/main.yml
    roles/innotune/handlers/main.yml
    roles/innotune/templates/innotune.cnf.j2   the option-file drop-in
    roles/innotune/templates/pool.j2           the buffer-pool rule (plain Jinja2)
    roles/innotune/templates/changed.j2        which settings a run changes
    roles/innotune/templates/sysctl.conf.j2
    roles/innotune/templates/disks.j2          which queue settings each datadir disk gets
    roles/innotune/templates/udev.rules.j2

Rendered from the same Actions as Preview and the job (:func:`app.export.model.digest`).
The disks are found on each host at run time (:data:`app.export.disks.FIND_DISKS`): the
disks under the datadir's filesystem, their kind and a stable identifier for the udev rule;
a disk of the planned kind gets the plan's queue settings, any other none, and the run
says which. Only ``ansible.builtin`` modules are used, so ansible-core alone runs it. Every
value that reaches a command goes through ``argv`` lists, never a shell line.
"""

from __future__ import annotations

import json

from app.describe.sysctl import render_conf
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.export.disks import DISKS_TEMPLATE, FIND_DISKS, KIND_WORDS
from app.export.model import (
    DROPIN_NAME,
    PLACEHOLDER,
    POOL_KEY,
    SYSCTL_FILE,
    UDEV_DIR,
    Export,
    client_program,
    digest,
    dropin_text,
    explain,
    plan_header,
    pool_rule_words,
    restart_service,
    udev_line,
)

ROLE = "roles/innotune"

# Reads a kernel value, sets it only when it differs; prints same / changed / would-change.
SYSCTL_SCRIPT = (
    'cur=$(sysctl -n "$1") || exit 1; '
    'if [ "$cur" = "$2" ]; then echo same; exit 0; fi; '
    'if [ "$3" = True ]; then echo would-change; exit 0; fi; '
    'sysctl -q -w "$1=$2" && echo changed'
)
# The same for a sysfs queue file, whose value may be a list like "none [mq-deadline]";
# a file that is missing or read-only is reported, never an error.
SYSFS_SCRIPT = (
    'f="/sys/block/$1/$2"; if [ ! -f "$f" ]; then echo missing; exit 0; fi; '
    'cur=$(cat "$f"); case "$cur" in *"[$3]"*) echo same; exit 0;; esac; '
    'if [ "$cur" = "$3" ]; then echo same; exit 0; fi; '
    'if [ "$4" = True ]; then echo would-change; exit 0; fi; '
    'if { printf "%s\\n" "$3" > "$f"; } 2>/dev/null; then echo changed; else echo read-only; fi'
)


def _q(value: object) -> str:
    """A YAML scalar (JSON is YAML): quoted and escaped."""
    return json.dumps(value)


def _raw(text: str) -> str:
    """Text a Jinja2 template must copy verbatim, even if it holds braces."""
    if "{" in text or "}" in text:
        return "{% raw %}" + text + "{% endraw %}"
    return text


def _yaml_comments(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def playbook_files(plan: Plan, facts: HostFacts | None = None) -> dict[str, str]:
    """Every file of the playbook directory: relative path → content.

    Rendered from the plan's Actions (``facts``: see :func:`digest`).

    Raises:
        ExportError: the plan holds something an export will not write.
    """
    return render_playbook(digest(plan, facts))


def render_playbook(export: Export) -> dict[str, str]:
    """Every file of the playbook directory for digested Actions."""
    files = {
        "site.yml": _site(export),
        "inventory.example.ini": _inventory(),
        "README.md": _readme(export),
        f"{ROLE}/defaults/main.yml": _defaults(export),
        f"{ROLE}/tasks/main.yml": _tasks(export),
        f"{ROLE}/handlers/main.yml": _handlers(),
        f"{ROLE}/templates/innotune.cnf.j2": dropin_template(export),
        f"{ROLE}/templates/pool.j2": POOL_TEMPLATE,
        f"{ROLE}/templates/changed.j2": CHANGED_TEMPLATE,
        f"{ROLE}/templates/set_global.j2": SET_GLOBAL_TEMPLATE,
        f"{ROLE}/templates/sysctl.conf.j2": _sysctl_template(export),
        f"{ROLE}/templates/disks.j2": DISKS_TEMPLATE,
        f"{ROLE}/templates/udev.rules.j2": _udev_template(export),
    }
    return files


def _site(export: Export) -> str:
    return _yaml_comments(plan_header(export)) + (
        "- name: Apply the InnoTune plan\n"
        "  hosts: \"{{ innotune_hosts | default('innotune') }}\"\n"
        "  become: true\n"
        "  gather_facts: true\n"
        "  # Only ansible_os_family is read (defaults/main.yml); the role reads MemTotal itself.\n"
        "  gather_subset: ['!all', '!min', distribution]\n"
        "  roles:\n"
        "    - innotune\n"
    )


def _inventory() -> str:
    return (
        "# One line per database host; every host sizes its own buffer pool from its RAM.\n"
        "[innotune]\n"
        "db1.example.com\n"
        "db2.example.com ansible_port=2222\n"
        "\n"
        "[innotune:vars]\n"
        "# innotune_dropin_dir=/etc/my.cnf.d\n"
        "# innotune_service=mariadb\n"
    )


def _readme(export: Export) -> str:
    facts = export.plan.facts
    restart = ", ".join(export.restart_keys) or "none"
    kinds = ", ".join(KIND_WORDS[k].split(" ", 1)[1] for k in export.kinds) or "none"
    return f"""# InnoTune plan as an Ansible playbook

Planned on `{facts.target}` ({facts.flavour} {facts.version}); generated by `innotune export`.

## Collections

Only `ansible.builtin` (part of ansible-core) is used: no other collection is needed.
Any `ansible` package from PyPI (which bundles the community collections too) or
`ansible-core` >= 2.15 runs it. Targets need Python 3 and the `{client_program(export)}` client.

## Run

    ansible-playbook -i inventory.ini site.yml --check --diff   # what would change
    ansible-playbook -i inventory.ini site.yml                  # apply

Hosts are the `innotune` group (override with `-e innotune_hosts=...`). The play uses
`become: true`: with a login that needs a sudo password add `--ask-become-pass`. Setting
`ANSIBLE_PIPELINING=1` (where sudoers has no `requiretty`) halves the SSH round trips.
Every replaced file is kept beside it as a timestamped `~` backup (`backup: true`).
A run refuses a host whose server version is not `{export.version}` (the plan's).
The server is restarted only when a setting that needs a restart changes ({restart});
settings that apply live are set with SET GLOBAL instead.

## Per-host values

`innodb_buffer_pool_size` is not the planned host's number: `templates/pool.j2` computes it
on each host from its RAM (MemTotal in `/proc/meminfo`) with the plan's rule
(`innotune_pool_rule` in `defaults/main.yml`: the share of RAM, the OS reserve, the room
for connections and other processes, the server's rounding unit). Set `innotune_ram_bytes`
or `innotune_pool_rule.fixed_bytes` per host to override.

## Variables (defaults/main.yml)

- `innotune_dropin_dir`: where the drop-in goes (Debian `/etc/mysql/mariadb.conf.d` or
  `/etc/mysql/mysql.conf.d`, RHEL `/etc/my.cnf.d`); `innotune_dropin_name`: `{DROPIN_NAME}`.
- `innotune_service`: the service restarted; `innotune_restart_command`: an argv list used
  instead of the service module when set.
- `innotune_mysql_command`: the client argv (root by unix socket, or add
  `--defaults-extra-file=...`; never a password on the command line).
- `innotune_sysctl_file`, `innotune_udev_dir`, `innotune_queue_by_kind` (the disk queue
  settings for each kind of disk the plan was made for: {kinds}).

## Disks

Each host's disks are found when the play runs, not taken from the planned host: the disks
under the filesystem that holds the server's datadir (`findmnt`, `lsblk`), their kind
(loop device, NVMe drive, SSD, spinning disk) and a stable identifier (WWID, serial or a
loop device's backing file). A disk of a kind the plan was made for gets the plan's queue
settings, live and in a udev rule that matches that identifier, never the kernel name; a
disk of another kind, or a datadir that is not on a block device, gets none. The play says
which for every host ("Say which disk queue settings this host gets").
"""


def _defaults(export: Export) -> str:
    static = {s.key: s.value for s in export.settings if not s.per_host}
    mariadb_dir = "/etc/mysql/mariadb.conf.d" if export.mariadb else "/etc/mysql/mysql.conf.d"
    rhel_service = "mariadb" if export.mariadb else "mysqld"
    lines = [
        "# The plan's values and rules. Override per host or group in the inventory.",
        "innotune_dropin_dir: >-",
        "  {{ '" + mariadb_dir + "' if ansible_os_family == 'Debian' else '/etc/my.cnf.d' }}",
        f"innotune_dropin_name: {_q(DROPIN_NAME)}",
        "innotune_service: >-",
        "  {{ '"
        + restart_service(export)
        + "' if ansible_os_family == 'Debian' else '"
        + rhel_service
        + "' }}",
        "innotune_restart_command: []",
        f"innotune_mysql_command: [{_q(client_program(export))}]",
        f"innotune_server_version: {_q(export.version)}",
        f"innotune_sysctl_file: {_q(SYSCTL_FILE)}",
        f"innotune_udev_dir: {_q(UDEV_DIR)}",
        "# MemTotal in bytes as the planner reads it; ansible_memtotal_mb (whole MiB) otherwise",
        "# (a fact the play does not gather: add hardware to its gather_subset for that).",
        "innotune_ram_bytes: >-",
        "  {{ innotune_meminfo_bytes if innotune_meminfo_bytes is defined",
        "  else (ansible_memtotal_mb | int) * 1048576 }}",
        "# Settings with the same value on every host.",
        f"innotune_static_settings: {json.dumps(static)}",
        "# Settings that need a restart when they change; the others are set live.",
        f"innotune_restart_keys: {json.dumps(list(export.restart_keys))}",
        f"innotune_dynamic_keys: {json.dumps(list(export.dynamic_keys))}",
        "innotune_sysctl: " + json.dumps({k.key: k.value for k in export.sysctl}),
        "# Disk queue settings by the kind of disk they were planned for; each host's datadir",
        "# disks are found at run time (tasks: Find the disks under the datadir).",
        "innotune_queue_by_kind: "
        + json.dumps(
            {
                kind: [
                    {"attr": attr, "value": value}
                    # The scheduler first: other queue limits depend on it (as udev does).
                    for attr, value in sorted(
                        export.queue_for(kind).items(), key=lambda kv: kv[0] != "queue/scheduler"
                    )
                ]
                for kind in export.kinds
            }
        ),
        f"innotune_kind_words: {json.dumps(KIND_WORDS)}",
        "innotune_planned_kinds: "
        + _q(" or ".join(KIND_WORDS[k] for k in export.kinds) or "no disk"),
    ]
    rule = export.pool_rule
    if rule is not None:
        lines += pool_rule_words(rule)
        lines.append(
            "innotune_pool_rule: "
            + json.dumps(
                {
                    "share_percent": rule.share_percent,
                    "reserve_divisor": rule.reserve_divisor,
                    "reserve_min": rule.reserve_min,
                    "reserve_max": rule.reserve_max,
                    "fixed_bytes": rule.fixed_bytes,
                    "overhead": rule.overhead,
                    "units": [list(u) for u in rule.units],
                    "minimum": rule.minimum,
                }
            )
        )
    return "\n".join(lines) + "\n"


#: The buffer-pool rule of :class:`app.domain.plan.PoolRule` in plain Jinja2 (no Ansible
#: filters), so a test can render it with jinja2 alone. Prints nothing where no pool fits.
POOL_TEMPLATE = """\
{%- set r = innotune_pool_rule -%}
{%- set ram = innotune_ram_bytes | int -%}
{%- set reserve = [[ram // r.reserve_divisor, r.reserve_min] | max, r.reserve_max] | min -%}
{%- set fits = [0, ((ram - reserve - r.fixed_bytes) / r.overhead) | int] | max -%}
{%- set target = [ram * r.share_percent // 100, fits] | min -%}
{%- set ns = namespace(unit=r.units[0][1]) -%}
{%- for threshold, unit in r.units if threshold <= target -%}
{%- set ns.unit = unit -%}
{%- endfor -%}
{%- if ns.unit > target -%}{%- set ns.unit = 1048576 -%}{%- endif -%}
{%- if fits >= r.minimum -%}
{{ [r.minimum, [ns.unit, target // ns.unit * ns.unit] | max] | max }}
{%- endif -%}
"""

#: The settings whose line in the drop-in is not already as this run writes it.
CHANGED_TEMPLATE = """\
{%- for key in innotune_settings if innotune_settings[key] | string -%}
{%- if ('\\n' ~ key ~ ' = ' ~ innotune_settings[key] ~ '\\n') not in ('\\n' ~ innotune_old_text) -%}
{{ key }} {% endif -%}
{%- endfor -%}
"""


#: SET GLOBAL for the changed settings that apply live.
SET_GLOBAL_TEMPLATE = """\
SET GLOBAL {% for key in innotune_changed if key in innotune_dynamic_keys -%}
{{ key }} = {{ innotune_settings[key] }}{{ ', ' if not loop.last else '' }}
{%- endfor %}
"""


def dropin_template(export: Export) -> str:
    """The drop-in rendered by the option-file renderer, values from ``innotune_settings``."""
    reasons = {s.key: s.change for s in export.settings}
    out = [_raw(line) for line in plan_header(export)]
    out.append("# {{ ansible_managed | default('Managed by Ansible') }}")
    for line in dropin_text(export).splitlines():
        key = line.partition("=")[0].strip()
        if key not in reasons:
            out.append(line)
            continue
        out += [_raw(c) for c in explain(reasons[key])]
        if key == POOL_KEY and export.pool_rule is not None:
            assert PLACEHOLDER in line
            out += [_raw(c) for c in pool_rule_words(export.pool_rule)]
            out.append(
                "{% if innotune_settings."
                + key
                + " | string %}"
                + key
                + " = {{ innotune_settings."
                + key
                + " }}\n{% endif %}"
            )
        else:
            out.append(f"{key} = {{{{ innotune_settings.{key} }}}}")
    return "\n".join(out) + "\n"


def _sysctl_template(export: Export) -> str:
    lines: list[str] = []
    for setting in export.sysctl:
        lines += explain(setting.change)
    body = render_conf(None, {k.key: k.value for k in export.sysctl}).decode()
    return _raw("\n".join(lines) + "\n" + body)


def _udev_template(export: Export) -> str:
    lines = [
        "# Written by InnoTune: queue settings for one database disk ({{ item.name }} when "
        "written).",
        "# Matches the disk by a stable identifier, never by its kernel name, which can",
        "# change between boots.",
    ]
    body = ""
    for kind in export.kinds:
        comments = [line for q in export.queue if q.kind == kind for line in explain(q.change)]
        head, _, tail = udev_line(export, kind).partition("MATCH")
        body += (
            "{% if item.kind == "
            + _q(kind)
            + " %}\n"
            + "".join(_raw(c) + "\n" for c in comments)
            + _raw(head)
            + "{{ item.match }}"
            + _raw(tail)
            + "\n{% endif %}\n"
        )
    return "\n".join(lines) + "\n" + body


def _tasks(export: Export) -> str:
    parts = [
        "# Tasks of the InnoTune role: checks, then the drop-in, kernel and disk settings.",
        # One query for both (one round trip): the version, and the datadir the disks are
        # found under.
        "- name: Read the server's version and datadir",
        "  ansible.builtin.command:",
        "    argv: \"{{ innotune_mysql_command + ['-N', '-B', '-e',"
        " 'SELECT VERSION(), @@datadir'] }}\"",
        "  register: innotune_server",
        "  changed_when: false",
        "  check_mode: false",
        "",
        "- name: Take the version and the datadir",
        "  ansible.builtin.set_fact:",
        "    innotune_version: \"{{ innotune_server.stdout.split('\\t')[0] }}\"",
        "    innotune_datadir: \"{{ innotune_server.stdout.split('\\t')[-1] }}\"",
        "",
        "- name: Refuse a server version other than the plan's",
        "  ansible.builtin.assert:",
        "    that:",
        "      - (innotune_version | regex_search('^[0-9]+(\\.[0-9]+){0,2}')) =="
        " innotune_server_version",
        "    fail_msg: >-",
        "      The server runs {{ innotune_version }}, the plan was made for",
        "      {{ innotune_server_version }}: make a plan for this version (innotune plan),",
        "      or set innotune_server_version for this host if you checked it.",
        "    quiet: true",
        "",
    ]
    settings = "{{ innotune_static_settings }}"
    if export.pool_rule is not None:
        parts += [
            "- name: Read this host's RAM as the planner does (MemTotal in /proc/meminfo)",
            "  ansible.builtin.slurp:",
            "    src: /proc/meminfo",
            "  register: innotune_meminfo",
            "",
            "- name: Take MemTotal in bytes",
            "  ansible.builtin.set_fact:",
            "    innotune_meminfo_bytes: >-",
            "      {{ (innotune_meminfo.content | b64decode"
            " | regex_findall('MemTotal: *([0-9]+)') | first | int) * 1024 }}",
            "",
            "- name: Size this host's buffer pool from its own RAM (the plan's rule)",
            "  ansible.builtin.set_fact:",
            "    innotune_buffer_pool_size: \"{{ lookup('ansible.builtin.template', 'pool.j2')"
            ' | trim }}"',
            "",
        ]
        settings = (
            "{{ innotune_static_settings | combine({'"
            + POOL_KEY
            + "': innotune_buffer_pool_size}) }}"
        )
    parts += [
        "- name: Read the drop-in as it is now",
        "  ansible.builtin.slurp:",
        '    src: "{{ innotune_dropin_dir }}/{{ innotune_dropin_name }}"',
        "  register: innotune_old_dropin",
        "  failed_when: false",
        "",
        "- name: Work out this host's settings",
        "  ansible.builtin.set_fact:",
        f'    innotune_settings: "{settings}"',
        "    innotune_old_text: \"{{ (innotune_old_dropin.content | default('') | b64decode)"
        " if innotune_old_dropin.content is defined else '' }}\"",
        "",
        "- name: Work out which settings change",
        "  ansible.builtin.set_fact:",
        "    innotune_changed: \"{{ lookup('ansible.builtin.template', 'changed.j2')"
        ' | trim | split }}"',
        "",
        "- name: Write the option-file drop-in",
        "  ansible.builtin.template:",
        "    src: innotune.cnf.j2",
        '    dest: "{{ innotune_dropin_dir }}/{{ innotune_dropin_name }}"',
        "    owner: root",
        "    group: root",
        '    mode: "0644"',
        "    backup: true",
        "",
        "- name: A setting that needs a restart changed",
        "  ansible.builtin.debug:",
        '    msg: "Restart for: {{ innotune_changed | intersect(innotune_restart_keys)'
        " | join(', ') }}\"",
        "  when: innotune_changed | intersect(innotune_restart_keys) | length > 0",
        "  changed_when: true",
        "  notify: innotune restart",
        "",
        "- name: Set the settings that apply live (no restart follows)",
        "  ansible.builtin.command:",
        "    argv: \"{{ innotune_mysql_command + ['-e',"
        " lookup('ansible.builtin.template', 'set_global.j2') | trim] }}\"",
        "  when:",
        "    - innotune_changed | intersect(innotune_dynamic_keys) | length > 0",
        "    - innotune_changed | intersect(innotune_restart_keys) | length == 0",
        "",
    ]
    if export.sysctl:
        parts += [
            "- name: Keep the kernel settings across reboots (sysctl.d)",
            "  ansible.builtin.template:",
            "    src: sysctl.conf.j2",
            '    dest: "{{ innotune_sysctl_file }}"',
            "    owner: root",
            "    group: root",
            '    mode: "0644"',
            "    backup: true",
            "",
            "- name: Set the kernel settings live",
            "  ansible.builtin.command:",
            "    argv: [sh, -c, " + _q(SYSCTL_SCRIPT) + ', sh, "{{ item.key }}",'
            ' "{{ item.value }}", "{{ ansible_check_mode }}"]',
            '  loop: "{{ innotune_sysctl | dict2items }}"',
            "  register: innotune_sysctl_live",
            "  changed_when: innotune_sysctl_live.stdout in ['changed', 'would-change']",
            "  check_mode: false",
            "",
        ]
    if export.queue:
        parts += [
            "- name: Find the disks under the datadir, their kind and a stable identifier",
            "  ansible.builtin.command:",
            "    argv: [sh, -c, " + _q(FIND_DISKS) + ', sh, "{{ innotune_datadir }}"]',
            "  register: innotune_found_disks",
            "  changed_when: false",
            "  check_mode: false",
            "",
            "- name: Match each disk with the plan's queue settings for its kind",
            "  ansible.builtin.set_fact:",
            "    innotune_disks: \"{{ lookup('ansible.builtin.template', 'disks.j2')"
            ' | from_json }}"',
            "",
            "- name: Say which disk queue settings this host gets",
            "  ansible.builtin.debug:",
            '    msg: "{{ item.says }}"',
            '  loop: "{{ innotune_disks }}"',
            "  loop_control:",
            "    label: \"{{ item.name or 'no disk' }}\"",
            "",
            "- name: Keep the disk queue settings across reboots (udev rule)",
            "  ansible.builtin.template:",
            "    src: udev.rules.j2",
            '    dest: "{{ innotune_udev_dir }}/{{ item.rule }}"',
            "    owner: root",
            "    group: root",
            '    mode: "0644"',
            "    backup: true",
            "  loop: \"{{ innotune_disks | selectattr('settings') | selectattr('rule') | list }}\"",
            "  loop_control:",
            '    label: "{{ item.name }}"',
            "  notify: innotune udev",
            "",
            "- name: Set the disk queue settings live",
            "  ansible.builtin.command:",
            "    argv: [sh, -c, " + _q(SYSFS_SCRIPT) + ', sh, "{{ item.0.name }}",'
            ' "{{ item.1.attr }}", "{{ item.1.value }}", "{{ ansible_check_mode }}"]',
            "  loop: \"{{ innotune_disks | subelements('settings') }}\"",
            "  register: innotune_sysfs_live",
            "  changed_when: innotune_sysfs_live.stdout in ['changed', 'would-change']",
            "  check_mode: false",
            "",
            "- name: Say which queue files this host does not support",
            "  ansible.builtin.debug:",
            '    msg: "/sys/block/{{ item.item.0.name }}/{{ item.item.1.attr }} is'
            ' {{ item.stdout }}: not supported on this host"',
            "  loop: \"{{ innotune_sysfs_live.results | selectattr('stdout', 'in',"
            " ['missing', 'read-only']) | list }}\"",
            "  loop_control:",
            '    label: "{{ item.item.0.name }}"',
            "",
        ]
    comments: list[str] = []
    for setting in export.settings:
        comments += explain(setting.change)
    for change in [k.change for k in export.sysctl] + [q.change for q in export.queue]:
        comments += explain(change)
    return _yaml_comments(comments) + "\n".join(parts)


def _handlers() -> str:
    return """\
- name: Restart the database server (service)
  ansible.builtin.service:
    name: "{{ innotune_service }}"
    state: restarted
  when: innotune_restart_command | length == 0
  listen: innotune restart

- name: Restart the database server (command)
  ansible.builtin.command:
    argv: "{{ innotune_restart_command }}"
  when: innotune_restart_command | length > 0
  listen: innotune restart

- name: Wait until the server answers again
  ansible.builtin.command:
    argv: "{{ innotune_mysql_command + ['-N', '-B', '-e', 'SELECT 1'] }}"
  register: innotune_ping
  retries: 60
  delay: 2
  until: innotune_ping.rc == 0
  changed_when: false
  listen: innotune restart

- name: Reload the udev rules (the live values are already set)
  ansible.builtin.command:
    argv: [udevadm, control, --reload-rules]
  register: innotune_udev_reload
  failed_when: false
  changed_when: innotune_udev_reload.rc == 0
  listen: innotune udev
"""
