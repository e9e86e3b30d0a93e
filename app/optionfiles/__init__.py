"""my.cnf reading as the server does it, effective values with their origin, and editing.

Pure logic over bytes: files are read through a :data:`Reader` callable, so the
same code reads this computer and a remote host through a Transport.
:mod:`app.optionfiles.binary` (asking the server binary) and
:mod:`app.optionfiles.serverview` (the instance's reading of its files) work on a host
through a Transport; they are imported from their own modules.
"""

from app.optionfiles.editing import (
    holds_secrets,
    quote_value,
    remove_option_line,
    set_option,
    set_server_option,
    unified_diff,
)
from app.optionfiles.effective import (
    CommandLine,
    Setting,
    Source,
    effective,
    normalise,
    parse_argv,
    parse_help_table,
    parse_persisted,
    parse_size,
    resolve,
)
from app.optionfiles.readers import (
    Node,
    Reader,
    batch_argv,
    batch_reader,
    local_reader,
    transport_reader,
)
from app.optionfiles.reading import Arg, OptionFileError, Problem, Reading, collect, read_config
from app.optionfiles.search import TopFile, parse_help_default_files, search_order, server_groups
from app.optionfiles.syntax import Kind, Line, OptionFile, parse, render

__all__ = [
    "batch_argv",
    "batch_reader",
    "Arg",
    "CommandLine",
    "Kind",
    "Line",
    "Node",
    "OptionFile",
    "OptionFileError",
    "Problem",
    "Reader",
    "Reading",
    "Setting",
    "Source",
    "TopFile",
    "collect",
    "effective",
    "holds_secrets",
    "local_reader",
    "normalise",
    "parse",
    "parse_argv",
    "parse_help_default_files",
    "parse_help_table",
    "parse_persisted",
    "parse_size",
    "quote_value",
    "read_config",
    "render",
    "resolve",
    "search_order",
    "server_groups",
    "remove_option_line",
    "set_option",
    "set_server_option",
    "transport_reader",
    "unified_diff",
]
