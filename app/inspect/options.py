"""The options report (``innotune options``): each effective option and where it was set."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.instance import ServerInstance
from app.optionfiles.binary import ask_binary, binary_present
from app.optionfiles.serverview import host_reader, read_view, user_home
from app.remote.transport import Transport


@dataclass(frozen=True)
class OptionRow:
    """One line of ``innotune options``."""

    name: str
    value: str | None
    source: str
    written: str
    overridden: tuple[str, ...]
    values: tuple[str | None, ...]


@dataclass(frozen=True)
class OptionsTable:
    """The effective options of an instance and where each was set."""

    instance: str
    files: tuple[str, ...]
    command_line: tuple[str, ...]
    persisted: str | None
    rows: tuple[OptionRow, ...]
    problems: tuple[str, ...]
    binary: tuple[str, ...]  # how the binary was asked, when it was

    def text(self) -> str:
        """A table for people."""
        lines = [f"Option files of {self.instance}, in the order the server reads them:"]
        lines += [f"  {f}" for f in self.files] or ["  (none)"]
        if self.command_line:
            lines.append("Command line (beats every file): " + " ".join(self.command_line))
        if self.persisted:
            lines.append(f"Persisted settings (SET PERSIST): {self.persisted}")
        width = max((len(r.name) for r in self.rows), default=10)
        vwidth = min(40, max((len(str(r.value)) for r in self.rows), default=5))
        lines.append("")
        lines.append(f"{'option'.ljust(width)}  {'value'.ljust(vwidth)}  set in")
        for row in self.rows:
            value = "(on)" if row.value is None else row.value
            if len(row.values) > 1:
                value = ", ".join("(on)" if v is None else v for v in row.values)
            line = f"{row.name.ljust(width)}  {value.ljust(vwidth)}  {row.source}"
            if row.overridden:
                line += f"  (overrides {', '.join(row.overridden)})"
            lines.append(line)
        if self.problems:
            lines.append("")
            lines.append("Problems:")
            lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)

    def to_json(self) -> str:
        """JSON for scripts."""
        return json.dumps(dataclasses.asdict(self), indent=2)


def options_for(
    transport: Transport,
    instance: ServerInstance,
    flavour: str,
    version: str,
    *,
    help_files: Sequence[str] = (),
    datadir: str | None = None,
    sudo: bool = False,
) -> OptionsTable:
    """The effective options of ``instance``, each with file:line, command line or persisted.

    Files are read as the server reads them: its ``--defaults-file`` or the default order
    (asked from the binary when ``help_files`` is empty), includes, the instance's argv
    (which beats the files) and MySQL's ``datadir/mysqld-auto.cnf``.

    Raises:
        OptionFileError: the server would refuse its files, or one cannot be read.
    """
    files = list(help_files)
    if not files and binary_present(transport, instance.binary):
        files = list(ask_binary(transport, instance.binary, ["--no-defaults"]).default_files)
    home = user_home(transport, instance.user)
    view = read_view(
        host_reader(transport, sudo),
        instance,
        flavour,
        version,
        help_files=files,
        home=home,
        datadir=datadir or instance.datadir,
    )
    rows = tuple(
        OptionRow(
            name=name,
            value=s.value,
            source=str(s.source),
            written=s.text,
            overridden=tuple(str(o) for o in s.overridden),
            values=s.values,
        )
        for name, s in sorted(view.settings.items())
    )
    seen: list[str] = []
    for path in view.reading.files:
        if path not in seen:
            seen.append(path)
    return OptionsTable(
        instance=instance.label,
        files=tuple(seen),
        command_line=view.cmdline.args,
        persisted=view.persisted_path if view.persisted else None,
        rows=rows,
        problems=tuple(str(p) for p in view.reading.problems),
        binary=(),
    )
