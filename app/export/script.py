"""The plan as one POSIX sh script for one host: ``apply`` (default), ``check``, ``rollback``.

Rendered from the same Actions as Preview and the job (:func:`app.export.model.digest`).
The script refuses a server whose version is not the plan's, sizes the buffer pool from the
host's own RAM with the plan's rule (as the playbook does), finds the disks under the
datadir at run time (:data:`app.export.disks.FIND_DISKS`: a disk of the planned kind gets
the plan's queue settings and a udev rule matching a stable identifier; any other gets none,
and the script says which), takes its own snapshot into a root-only directory before the
first write (a copy of every file it replaces or a note that it did not exist, and the live
sysctl and sysfs values), and ``rollback`` puts every file back byte for byte and the live
values back. Everything it writes is generated from fixed
text: values were checked against narrow patterns by :func:`app.export.model.digest`, and
the script quotes every variable it expands.
"""

from __future__ import annotations

import shlex

from app.describe.sysctl import render_conf
from app.domain.hostfacts import HostFacts
from app.domain.plan import Plan
from app.export.disks import FIND_DISKS, KIND_WORDS
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
    overhead_ratio,
    plan_header,
    pool_rule_words,
    restart_service,
    udev_line,
)

EOF_MARK = "INNOTUNE_EOF"


def _heredoc(text: str) -> str:
    """``cat`` of fixed text: a quoted here-document, so nothing in it is expanded."""
    if not text:
        return ":\n"
    if not text.endswith("\n"):
        text += "\n"
    return f"cat <<'{EOF_MARK}'\n{text}{EOF_MARK}\n"


def shell_script(plan: Plan, facts: HostFacts | None = None) -> str:
    """The whole script, from the plan's Actions (``facts``: see :func:`digest`).

    Raises:
        ExportError: the plan holds something an export will not write.
    """
    return render_script(digest(plan, facts))


def render_script(export: Export) -> str:
    """The whole script for digested Actions."""
    q = shlex.quote
    dirs = (
        "/etc/mysql/mariadb.conf.d /etc/my.cnf.d /etc/mysql/conf.d"
        if export.mariadb
        else "/etc/mysql/mysql.conf.d /etc/my.cnf.d /etc/mysql/conf.d"
    )
    out = ["#!/bin/sh", *plan_header(export)]
    out += [
        "#",
        "# Usage: sh THIS_SCRIPT [apply|check|rollback]   (apply is the default; run as root)",
        "#   check     show what apply would change, change nothing",
        "#   rollback  put back the files and live values the snapshot holds",
        "#   pool      print the buffer pool this host gets (empty: none fits / not planned)",
        "# Variables (environment) to point it elsewhere:",
        "#   INNOTUNE_DROPIN_DIR   the include directory for the drop-in (first that exists of:",
        f"#                         {dirs})",
        "#   INNOTUNE_MYSQL        the client command (word-split; root by unix socket or a",
        "#                         --defaults-extra-file; never put a password here)",
        f"#   INNOTUNE_RESTART      the restart command (default: service {restart_service(export)}"
        " restart)",
        "#   INNOTUNE_SYSCTL_FILE, INNOTUNE_UDEV_DIR, INNOTUNE_SNAPSHOT_DIR, INNOTUNE_RAM_BYTES",
        "",
        "set -eu",
        f"PLAN_VERSION={q(export.version)}",
        'if [ -z "${INNOTUNE_DROPIN_DIR:-}" ]; then',
        f"    for d in {dirs}; do",
        '        if [ -d "$d" ]; then INNOTUNE_DROPIN_DIR=$d; break; fi',
        "    done",
        "fi",
        ': "${INNOTUNE_DROPIN_DIR:?no include directory found: set INNOTUNE_DROPIN_DIR}"',
        f'DROPIN="$INNOTUNE_DROPIN_DIR"/{q(DROPIN_NAME)}',
        f': "${{INNOTUNE_SYSCTL_FILE:={SYSCTL_FILE}}}"',
        f': "${{INNOTUNE_UDEV_DIR:={UDEV_DIR}}}"',
        ': "${INNOTUNE_SNAPSHOT_DIR:=/var/lib/innotune/script-snapshot}"',
        f': "${{INNOTUNE_MYSQL:={client_program(export)}}}"',
        f': "${{INNOTUNE_RESTART:=service {restart_service(export)} restart}}"',
        ': "${INNOTUNE_RAM_BYTES:=}"',
        'SNAP="$INNOTUNE_SNAPSHOT_DIR"',
        "",
        "say() { printf 'innotune: %s\\n' \"$*\"; }",
        "die() { printf 'innotune: %s\\n' \"$*\" >&2; exit 1; }",
        "",
        "# The client, word-split on purpose (INNOTUNE_MYSQL may carry options), never globbed.",
        'sql() { set -f; $INNOTUNE_MYSQL -N -B -e "$1"; rc=$?; set +f; return $rc; }',
        "",
        "check_version() {",
        "    v=$(sql 'SELECT VERSION()') || die \"cannot ask the server its version "
        '(INNOTUNE_MYSQL=$INNOTUNE_MYSQL)"',
        "    n=$(printf '%s\\n' \"$v\" |"
        " sed -n 's/^\\([0-9][0-9]*\\(\\.[0-9][0-9]*\\)*\\).*/\\1/p')",
        '    if [ "$n" != "$PLAN_VERSION" ]; then',
        '        die "the server runs $v, but this script was made for $PLAN_VERSION:'
        ' nothing changed. Make a plan for this server (innotune plan) and export it again."',
        "    fi",
        "}",
        "",
        *_pool_function(export),
        "",
        "# The files, as InnoTune's renderers write them.",
        *_dropin_function(export),
        "",
        "write_sysctl() {",
        _heredoc(_sysctl_text(export)).rstrip("\n"),
        "}",
        "",
        *_udev_functions(export),
        "",
        *_files_list(export),
        "",
        *_live_lists(export),
        "",
        *_snapshot_functions(),
        "",
        *_apply_function(export),
        "",
        *_rollback_function(),
        "",
        'case "${1:-apply}" in',
        "    apply) apply_plan apply ;;",
        "    check) apply_plan check ;;",
        "    rollback) rollback ;;",
        "    pool) pool_size ;;",
        '    *) die "usage: $0 [apply|check|rollback|pool]" ;;',
        "esac",
    ]
    return "\n".join(out) + "\n"


def _pool_function(export: Export) -> list[str]:
    rule = export.pool_rule
    if rule is None:
        return ["pool_size() { :; }"]
    num, den = overhead_ratio(rule)
    lines = [*pool_rule_words(rule), "pool_size() {"]
    lines += [
        "    ram=$INNOTUNE_RAM_BYTES",
        '    if [ -z "$ram" ]; then',
        "        kb=$(sed -n 's/^MemTotal: *\\([0-9][0-9]*\\) kB$/\\1/p' /proc/meminfo)",
        "        ram=$((kb * 1024))",
        "    fi",
        f"    reserve=$((ram / {rule.reserve_divisor}))",
        f'    if [ "$reserve" -lt {rule.reserve_min} ]; then reserve={rule.reserve_min}; fi',
        f'    if [ "$reserve" -gt {rule.reserve_max} ]; then reserve={rule.reserve_max}; fi',
        f"    fits=$(((ram - reserve - {rule.fixed_bytes}) * {den} / {num}))",
        '    if [ "$fits" -lt 0 ]; then fits=0; fi',
        f"    target=$((ram * {rule.share_percent} / 100))",
        '    if [ "$fits" -lt "$target" ]; then target=$fits; fi',
        f"    unit={rule.units[0][1]}",
    ]
    for threshold, unit in rule.units[1:]:
        lines.append(f'    if [ "$target" -ge {threshold} ]; then unit={unit}; fi')
    lines += [
        '    if [ "$unit" -gt "$target" ]; then unit=1048576; fi',
        f'    if [ "$fits" -lt {rule.minimum} ]; then return 0; fi',
        "    pool=$((target / unit * unit))",
        '    if [ "$pool" -lt "$unit" ]; then pool=$unit; fi',
        f'    if [ "$pool" -lt {rule.minimum} ]; then pool={rule.minimum}; fi',
        '    printf "%s\\n" "$pool"',
        "}",
    ]
    return lines


def _dropin_function(export: Export) -> list[str]:
    """write_dropin: the fixed text around the one per-host line."""
    reasons = {s.key: s.change for s in export.settings}
    before: list[str] = list(plan_header(export))
    after: list[str] = []
    current = before
    for line in dropin_text(export).splitlines():
        key = line.partition("=")[0].strip()
        if key in reasons:
            current += explain(reasons[key])
        if key == POOL_KEY and PLACEHOLDER in line:
            if export.pool_rule is not None:
                current += pool_rule_words(export.pool_rule)
            current = after
            continue
        current.append(line)
    lines = ["write_dropin() {", _heredoc("\n".join(before)).rstrip("\n")]
    if export.pool_rule is not None:
        lines += [
            '    if [ -n "$POOL" ]; then',
            f"        printf '{POOL_KEY} = %s\\n' \"$POOL\"",
            "    fi",
        ]
        if after:
            lines.append(_heredoc("\n".join(after)).rstrip("\n"))
    lines.append("}")
    return lines


def _sysctl_text(export: Export) -> str:
    if not export.sysctl:
        return ""
    lines: list[str] = []
    for setting in export.sysctl:
        lines += explain(setting.change)
    body = render_conf(None, {k.key: k.value for k in export.sysctl}).decode()
    return "\n".join(lines) + "\n" + body


def _udev_functions(export: Export) -> list[str]:
    """find_disks, queue_for KIND, write_udev KIND MATCH NAME and say_disks."""
    planned = " or ".join(KIND_WORDS[k] for k in export.kinds) or "no disk"
    lines = [
        "# The disks under the datadir's filesystem, found on this host now (never by the",
        "# planned host's names): disk|NAME|KIND|RULE FILE|UDEV MATCH|WHY NO RULE, or none|WHY.",
        "find_disks() (",
        *("    " + line if line else "" for line in FIND_DISKS.rstrip("\n").splitlines()),
        ")",
        "",
        "# The plan's queue settings for a disk of each kind it was made for.",
        "queue_for() {",
        '    case "$1" in',
    ]
    for kind in export.kinds:
        pairs = " ".join(f"{a}={v}" for a, v in export.queue_for(kind).items())
        lines.append(f"        {kind}) printf '%s\\n' {shlex.quote(pairs)} ;;")
    lines += [
        "    esac",
        "}",
        "kind_words() {",
        '    case "$1" in',
        *(f"        {k}) printf '%s' {shlex.quote(w)} ;;" for k, w in KIND_WORDS.items()),
        "    esac",
        "}",
        "",
        "write_udev() {  # KIND MATCH NAME",
        '    case "$1" in',
    ]
    for kind in export.kinds:
        comments = [line for q in export.queue if q.kind == kind for line in explain(q.change)]
        head, _, tail = udev_line(export, kind).partition("MATCH")
        lines += [
            f"    {kind})",
            _heredoc(
                "# Written by InnoTune: queue settings for one database disk.\n"
                "# Matches the disk by a stable identifier, never by its kernel name, which can\n"
                "# change between boots.\n" + "\n".join(comments)
            ).rstrip("\n"),
            f"        printf '%s%s%s\\n' {shlex.quote(head)} \"$2\" {shlex.quote(tail)}",
            "        ;;",
        ]
    lines += [
        "    esac",
        "}",
        "",
        "write_rules() {  # DIR: the rule of each datadir disk that gets settings",
        "    printf '%s\\n' \"$DISKS\" | while IFS='|' read -r what name kind rule match why; do",
        '        if [ "$what" = disk ] && [ -n "$rule" ] && [ -n "$(queue_for "$kind")" ]; then',
        '            write_udev "$kind" "$match" "$name" > "$1/udev-$name"',
        "        fi",
        "    done",
        "}",
        "",
        "say_disks() {",
        "    printf '%s\\n' \"$DISKS\" | while IFS='|' read -r what name kind rule match why; do",
        '        case "$what" in',
        '            none) say "no disk queue settings on this host: $name" ;;',
        "            disk)",
        '                s=$(queue_for "$kind")',
        '                if [ -z "$s" ]; then',
        '                    say "$name is $(kind_words "$kind"); the plan\'s queue settings'
        f' are for {planned}: none set on this host"',
        "                else",
        '                    say "$name is $(kind_words "$kind"): it gets $s"',
        '                    if [ -z "$rule" ]; then say "$name: $why; no udev rule, the live'
        ' values last until the next reboot"; fi',
        "                fi ;;",
        "        esac",
        "    done",
        "}",
    ]
    return lines


def _files_list(export: Export) -> list[str]:
    """The files the script may replace, one per line: ROLE PATH."""
    lines = ["all_files() {", "    printf 'dropin %s\\n' \"$DROPIN\""]
    if export.sysctl:
        lines.append("    printf 'sysctl %s\\n' \"$INNOTUNE_SYSCTL_FILE\"")
    lines += [
        "    printf '%s\\n' \"$DISKS\" | while IFS='|' read -r what name kind rule match why; do",
        '        if [ "$what" = disk ] && [ -n "$rule" ] && [ -n "$(queue_for "$kind")" ]; then',
        '            printf \'udev-%s %s\\n\' "$name" "$INNOTUNE_UDEV_DIR/$rule"',
        "        fi",
        "    done",
        "}",
    ]
    return lines


def _live_lists(export: Export) -> list[str]:
    sysctl = " ".join(f"{k.key}={k.value}" for k in export.sysctl)
    return [
        "# Live kernel values, KEY=VALUE.",
        f"SYSCTL_VALUES={shlex.quote(sysctl)}",
        "DISKS=",
        "",
        "# The datadir's disks and their queue values on this host: NAME/queue/ATTR=VALUE.",
        "find_datadir_disks() {",
        "    datadir=$(sql 'SELECT @@datadir') || die 'cannot ask the server its datadir'",
        '    DISKS=$(find_disks "$datadir")',
        "}",
        "queue_writes() {",
        "    printf '%s\\n' \"$DISKS\" | while IFS='|' read -r what name kind rule match why; do",
        '        [ "$what" = disk ] || continue',
        '        for kv in $(queue_for "$kind"); do printf \'%s/%s\\n\' "$name" "$kv"; done',
        "    done",
        "}",
        "",
        "active() { sed -n 's/.*\\[\\(.*\\)\\].*/\\1/p; t; p'; }",
    ]


def _snapshot_functions() -> list[str]:
    return [
        "# The snapshot: taken once, before the first write; a later apply keeps the first.",
        "take_snapshot() {",
        '    if [ -f "$SNAP/complete" ]; then',
        '        say "keeping the snapshot taken $(cat "$SNAP/complete") in $SNAP"; return 0',
        "    fi",
        '    if [ -e "$SNAP" ]; then die "$SNAP holds an incomplete snapshot: look, remove it,'
        ' run again"; fi',
        '    mkdir -p "$(dirname "$SNAP")"',
        '    (umask 077 && mkdir "$SNAP" "$SNAP/files")',
        '    : > "$SNAP/manifest"',
        "    i=0",
        "    all_files | while read -r role path; do",
        "        i=$((i + 1))",
        '        if [ -e "$path" ]; then',
        '            cp -p "$path" "$SNAP/files/$i"',
        '            printf \'file %s %s %s\\n\' "$i" "$role" "$path" >> "$SNAP/manifest"',
        "        else",
        '            printf \'absent %s %s %s\\n\' "$i" "$role" "$path" >> "$SNAP/manifest"',
        "        fi",
        "    done",
        "    for kv in $SYSCTL_VALUES; do",
        "        key=${kv%%=*}",
        '        printf \'sysctl %s %s\\n\' "$key" "$(sysctl -n "$key")" >> "$SNAP/manifest"',
        "    done",
        "    for kv in $(queue_writes); do",
        "        f=/sys/block/${kv%%=*}",
        '        if [ -f "$f" ]; then',
        '            printf \'sysfs %s %s\\n\' "$f" "$(active < "$f")" >> "$SNAP/manifest"',
        "        fi",
        "    done",
        '    date -u +%Y-%m-%dT%H:%M:%SZ > "$SNAP/complete"',
        '    say "snapshot taken in $SNAP"',
        "}",
    ]


def _apply_function(export: Export) -> list[str]:
    lines = [
        "install_file() {  # SRC DEST: atomic replace when the content differs",
        '    if [ -f "$2" ] && cmp -s "$1" "$2"; then return 1; fi',
        '    mkdir -p "$(dirname "$2")"',
        '    cp "$1" "$2.innotune-tmp.$$"',
        '    chmod 0644 "$2.innotune-tmp.$$"',
        '    mv -f "$2.innotune-tmp.$$" "$2"',
        "}",
        "",
        "apply_plan() {",
        "    mode=$1",
        "    check_version",
        "    POOL=$(pool_size)",
        "    work=$(mktemp -d)",
        "    trap 'rm -rf \"$work\"' EXIT",
        '    write_dropin > "$work/dropin"',
    ]
    if export.sysctl:
        lines.append('    write_sysctl > "$work/sysctl"')
    if export.queue:  # the disks matter only for the plan's queue settings
        lines += ["    find_datadir_disks", "    say_disks", '    write_rules "$work"']
    lines += [
        '    old="$work/old-dropin"',
        '    if [ -f "$DROPIN" ]; then cp "$DROPIN" "$old"; else : > "$old"; fi',
        "    restart=no",
        "    live=''",
    ]
    for setting in export.settings:
        if setting.per_host:
            value = '"$POOL"'
            guard = '[ -n "$POOL" ] && '
        else:
            value = shlex.quote(setting.value)
            guard = ""
        line = f'"{setting.key} = "{value}'
        if setting.restart:
            action = "restart=yes"
        elif setting.per_host:
            action = f'live="$live${{live:+, }}{setting.key} = "{value}'
        else:
            # Spelled as the job spells it (a number as it is, anything else quoted).
            assignment = (setting.statement or "").removeprefix("SET GLOBAL ")
            action = f'live="$live${{live:+, }}"{shlex.quote(assignment)}'
        lines.append(f'    if {guard}! grep -qxF {line} "$old"; then {action}; fi')
    lines += [
        '    if [ "$mode" = check ]; then',
        "        all_files | while read -r role path; do",
        '            if [ -f "$path" ]; then diff -u "$path" "$work/$role" || true;'
        ' else say "would create $path"; diff -u /dev/null "$work/$role" || true; fi',
        "        done",
        "        for kv in $SYSCTL_VALUES; do",
        '            cur=$(sysctl -n "${kv%%=*}")',
        '            if [ "$cur" != "${kv#*=}" ]; then say "would set ${kv%%=*} from $cur to'
        ' ${kv#*=}"; fi',
        "        done",
        "        for kv in $(queue_writes); do",
        "            f=/sys/block/${kv%%=*}",
        '            if [ -f "$f" ] && [ "$(active < "$f")" != "${kv#*=}" ]; then'
        ' say "would write ${kv#*=} to $f"; fi',
        "        done",
        '        if [ "$restart" = yes ]; then say "would restart the server: $INNOTUNE_RESTART";'
        ' elif [ -n "$live" ]; then say "would run SET GLOBAL $live"; fi',
        "        return 0",
        "    fi",
        "    take_snapshot",
        "    udev=no",
        "    all_files | while read -r role path; do",
        '        if install_file "$work/$role" "$path"; then say "wrote $path"; fi',
        "    done",
        "    for f in $(all_files | sed -n 's/^udev-[^ ]* //p'); do",
        '        if [ -f "$f" ]; then udev=yes; fi',
        "    done",
        "    for kv in $SYSCTL_VALUES; do",
        '        if [ "$(sysctl -n "${kv%%=*}")" != "${kv#*=}" ]; then',
        '            sysctl -q -w "$kv"; say "set $kv"',
        "        fi",
        "    done",
        "    for kv in $(queue_writes); do",
        "        f=/sys/block/${kv%%=*}",
        '        if [ ! -f "$f" ]; then say "not supported on this host: $f"; continue; fi',
        '        if [ "$(active < "$f")" != "${kv#*=}" ]; then',
        '            if { printf \'%s\\n\' "${kv#*=}" > "$f"; } 2>/dev/null; then',
        '                say "set $f to ${kv#*=}"',
        "            else",
        '                say "not supported on this host: $f is read-only"',
        "            fi",
        "        fi",
        "    done",
        '    if [ "$udev" = yes ]; then',
        "        udevadm control --reload-rules 2>/dev/null || say 'udev is not running: the"
        " rules apply at the next boot'",
        "    fi",
        '    if [ "$restart" = yes ]; then',
        '        say "restarting the server: $INNOTUNE_RESTART"',
        '        sh -c "$INNOTUNE_RESTART"',
        '    elif [ -n "$live" ]; then',
        '        sql "SET GLOBAL $live"; say "set live: $live"',
        "    fi",
        '    say "done; undo with: $0 rollback"',
        "}",
    ]
    return lines


def _rollback_function() -> list[str]:
    return [
        "rollback() {",
        '    if [ ! -f "$SNAP/complete" ]; then die "no snapshot in $SNAP: nothing to roll'
        ' back"; fi',
        "    restart=no",
        "    udev=no",
        "    while read -r kind a b c; do",
        '        case "$kind" in',
        "            file)",
        '                if ! cmp -s "$SNAP/files/$a" "$c"; then',
        '                    cp -p "$SNAP/files/$a" "$c"; say "restored $c"',
        '                    case "$b" in dropin) restart=yes ;; udev-*) udev=yes ;; esac',
        "                fi ;;",
        "            absent)",
        '                if [ -e "$c" ]; then',
        '                    rm -f "$c"; say "removed $c"',
        '                    case "$b" in dropin) restart=yes ;; udev-*) udev=yes ;; esac',
        "                fi ;;",
        '            sysctl) v="$b${c:+ $c}"; sysctl -q -w "$a=$v"; say "set $a back to $v" ;;',
        "            sysfs)",
        '                if [ -f "$a" ]; then printf \'%s\\n\' "$b" > "$a";'
        ' say "set $a back to $b";'
        " fi ;;",
        "        esac",
        '    done < "$SNAP/manifest"',
        '    if [ "$udev" = yes ]; then udevadm control --reload-rules 2>/dev/null || true; fi',
        '    if [ "$restart" = yes ]; then',
        '        say "restarting the server: $INNOTUNE_RESTART"',
        '        sh -c "$INNOTUNE_RESTART"',
        "    fi",
        '    mv "$SNAP" "$SNAP.rolled-back.$(date -u +%Y%m%d%H%M%S)"',
        '    say "rolled back"',
        "}",
    ]
