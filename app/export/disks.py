"""Each host's datadir disks, found when an export runs, never taken from the planned host.

:data:`FIND_DISKS` (POSIX sh, shared by the script and the playbook) lists the disks under
the filesystem that holds the datadir (``findmnt``, ``lsblk``), their kind as
:func:`disk_kind` tells the planned disk's, and a stable identifier to match in the udev
rule, with the rule file named as :func:`app.describe.udev.rule_path` names the job's. A
disk of a kind the plan was made for gets the plan's queue settings for that kind; any
other gets none, and the export says which (:data:`DISKS_TEMPLATE` for the playbook).
"""

from __future__ import annotations

from app.describe.udev import MATCH_KEYS, SAFE_ID_CHARS
from app.domain.facts import BlockDevice

#: Disk kinds as the exports tell them apart at run time, in plain words.
KIND_WORDS = {
    "loop": "a loop device",
    "nvme": "an NVMe drive",
    "ssd": "an SSD",
    "hdd": "a spinning disk",
    "unknown": "a disk of unknown kind",
}


def disk_kind(device: BlockDevice | None) -> str:
    """loop, nvme, ssd, hdd or unknown, as :data:`FIND_DISKS` tells them apart at run time."""
    if device is None:
        return "unknown"
    if device.kind == "loop" or device.name.startswith("loop"):
        return "loop"
    if device.name.startswith("nvme"):
        return "nvme"
    if device.rotational is None:
        return "unknown"
    return "hdd" if device.rotational else "ssd"


# The characters udev matches literally, as a shell pattern (the space escaped).
_SAFE_PATTERN = SAFE_ID_CHARS.replace(" ", "\\ ")


def _find_disks_script() -> str:
    sources = " ".join(f"{src}:{match}" for src, match in MATCH_KEYS.items())
    return (
        "d=$1; tab='|'\n"
        'src=$(findmnt -n -o SOURCE -T "$d" 2>/dev/null) || '
        '{ printf "none%s%s\\n" "$tab" "findmnt cannot tell where the datadir $d lies"; exit 0; }\n'
        "src=${src%%[[]*}\n"
        'case "$src" in /dev/*) ;; *) printf "none%s%s\\n" "$tab" '
        '"the datadir $d lies on $src, not on a block device"; exit 0 ;; esac\n'
        "found=no\n"
        'for name in $(lsblk -nrs -o KNAME,TYPE "$src" 2>/dev/null '
        '| awk \'$2 == "disk" || $2 == "loop" { print $1 }\'); do\n'
        "    found=yes; q=/sys/block/$name\n"
        '    case "$name" in\n'
        "        loop*) kind=loop ;;\n"
        "        nvme*) kind=nvme ;;\n"
        '        *) case "$(cat "$q/queue/rotational" 2>/dev/null)" in 1) kind=hdd ;; '
        "0) kind=ssd ;; *) kind=unknown ;; esac ;;\n"
        "    esac\n"
        '    rule=; match=; why="no stable identifier (WWID, serial or backing file)"\n'
        f"    for s in {sources}; do\n"
        '        f=$q/${s%%:*}; [ -r "$f" ] || continue\n'
        "        v=$(sed 's/^ *//; s/ *$//' \"$f\" 2>/dev/null | head -n 1)\n"
        '        [ -n "$v" ] || continue\n'
        '        case "$v" in\n'
        f"            *[!{_SAFE_PATTERN}]*) "
        'why="its identifier holds characters a udev rule cannot match literally" ;;\n'
        "            *)\n"
        "                slug=$(printf '%s' \"$v\" | tr -cs 'A-Za-z0-9' '-' "
        "| sed 's/^-*//; s/-*$//' "
        "| awk '{ n = length($0); print (n > 24 ? substr($0, n - 23) : $0) }')\n"
        "                sum=$(printf '%s' \"$v\" | sha256sum | cut -c1-8)\n"
        '                rule="99-innotune-${slug:-device}-$sum.rules"\n'
        '                match="${s#*:}==\\"$v\\""; why= ;;\n'
        "        esac\n"
        "        break\n"
        "    done\n"
        '    printf "disk%s%s%s%s%s%s%s%s%s%s\\n" "$tab" "$name" "$tab" "$kind" "$tab" "$rule" '
        '"$tab" "$match" "$tab" "$why"\n'
        "done\n"
        '[ "$found" = yes ] || printf "none%s%s\\n" "$tab" "no disk found under $src"\n'
    )


#: ``sh -c FIND_DISKS sh DATADIR``: one line per disk under the datadir's filesystem,
#: ``disk|name|kind|rule file|udev match|why no rule``, or ``none|why`` when the datadir
#: is not on a block device. The rule file is named as
#: :func:`app.describe.udev.rule_path` names it; the match is on the same stable identifier.
FIND_DISKS = _find_disks_script()


#: Each datadir disk (the lines of FIND_DISKS) with the settings of its kind and a sentence
#: saying what it gets; a JSON list for ``from_json``.
DISKS_TEMPLATE = """\
{%- set out = [] -%}
{%- for line in innotune_found_disks.stdout_lines -%}
{%- set f = (line ~ '|||||').split('|') -%}
{%- if f[0] == 'disk' -%}
{%- set settings = innotune_queue_by_kind.get(f[2], []) -%}
{%- set words = f[1] ~ ' is ' ~ innotune_kind_words.get(f[2], f[2]) -%}
{%- if not settings -%}
{%- set says = words ~ "; the plan's queue settings are for " ~ innotune_planned_kinds
    ~ ': none set on this host' -%}
{%- else -%}
{%- set pairs = [] -%}
{%- for s in settings -%}{%- set _ = pairs.append(s.attr ~ '=' ~ s.value) -%}{%- endfor -%}
{%- set says = words ~ ': it gets ' ~ pairs | join(' ') ~ (
    ', kept in ' ~ f[3] ~ ' (matching ' ~ f[4] ~ ')' if f[3]
    else '; ' ~ f[5] ~ ', no udev rule: the live values last until the next reboot') -%}
{%- endif -%}
{%- set _ = out.append({'name': f[1], 'kind': f[2], 'rule': f[3], 'match': f[4],
    'settings': settings, 'says': says}) -%}
{%- elif f[0] == 'none' -%}
{%- set _ = out.append({'name': '', 'kind': '', 'rule': '', 'match': '', 'settings': [],
    'says': 'no disk queue settings on this host: ' ~ f[1]}) -%}
{%- endif -%}
{%- endfor -%}
{{ out | tojson }}
"""
