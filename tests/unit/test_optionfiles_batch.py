"""The one-command batch read answers exactly as reading each path on its own."""

from __future__ import annotations

from pathlib import Path

from app.optionfiles import batch_argv, batch_reader, transport_reader
from app.remote.local import LocalTransport


def test_the_batch_answers_as_single_reads(tmp_path: Path) -> None:
    conf = tmp_path / "conf.d"
    conf.mkdir()
    (conf / "50-server.cnf").write_bytes(b"[mysqld]\ninnodb_io_capacity = 400\n\xff odd bytes\n")
    (conf / "readme.txt").write_text("not read by the server\n")
    extra = tmp_path / "extra.cnf"
    extra.write_text("[mysqld]\nport = 3307\n")
    main = tmp_path / "my.cnf"
    main.write_text(f"[mysqld]\n!includedir {conf}/\n!include {extra}\n")
    transport = LocalTransport()
    batch = transport.run(batch_argv([str(main), str(tmp_path / "missing.cnf")])).stdout
    asked: list[str] = []
    single = transport_reader(transport)

    class Counting:
        def run(self, argv: list[str], **kw: object) -> object:
            asked.append(argv[-1])
            return transport.run(argv)

    read = batch_reader(Counting(), batch)  # type: ignore[arg-type]
    paths = [main, tmp_path / "missing.cnf", f"{conf}/", conf / "50-server.cnf", extra]
    for path in paths:
        assert read(str(path)) == single(str(path)), path
    assert asked == []  # every one came from the batch
    assert read(str(conf / "readme.txt")) == single(str(conf / "readme.txt"))
    assert asked == [str(conf / "readme.txt")]  # not a *.cnf: read on its own
