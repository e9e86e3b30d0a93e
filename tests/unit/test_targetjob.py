"""The job package on its own: values, formats, files, records, and a whole job in a temp dir.

Plain ``unittest`` and Python 3.7 syntax on purpose: test_targetjob_oldest_python.py runs
this same file under the oldest python3 the job promises, with the shipped zipapp on
``sys.path`` (so ``targetjob`` is the archive's package, not the source tree's).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
import unittest

try:  # under the oldest python: the zipapp is on sys.path
    from targetjob import files, formats, records, values
    from targetjob import main as job_main
    from targetjob.job import Job
except ImportError:
    from app.targetjob import files, formats, records, values
    from app.targetjob import main as job_main
    from app.targetjob.job import Job


class SameValueTest(unittest.TestCase):
    def test_spellings_of_one_value(self) -> None:
        same = values.same_value
        self.assertTrue(same("TRUE", "ON") and same("0", "OFF") and same("128M", "134217728"))
        self.assertTrue(same("O_DIRECT", "o_direct") and same("0.50", "0.5"))
        self.assertFalse(same("300", "1000") or same(None, "1") or same("1", "1K"))
        self.assertTrue(same("1", "on", "bool") and not same("2", "1", "int"))

    def test_the_servers_rounding_only_when_asked(self) -> None:
        cases = [
            ("x", "ON", "1", True),
            ("x", "OFF", "ON", False),
            ("innodb_buffer_pool_size", "134217728", "134217728", True),
            ("innodb_buffer_pool_size", "268435456", "200000000", True),  # up to a chunk
            ("innodb_buffer_pool_size", "134217728", "200000000", False),  # never down
            ("innodb_log_buffer_size", "16777216", "33554432", False),
            ("innodb_log_file_size", "100663296", "100000000", True),  # to a block size
            ("x", "O_DIRECT", "o_direct", True),
            ("x", "2", "1", False),
            ("x", None, "1", False),
        ]
        for key, actual, wanted, same in cases:
            self.assertIs(values.same_value(actual, wanted, key=key, rounded=True), same, key)
        self.assertFalse(values.same_value("100663296", "100000000"))

    def test_sql_literal_quotes_everything_but_plain_numbers(self) -> None:
        self.assertEqual(values.sql_literal("400"), "400")
        self.assertEqual(values.sql_literal("O_DIRECT"), "'O_DIRECT'")
        self.assertEqual(values.sql_literal("a'b\\"), "'a\\'b\\\\'")

    def test_set_statements_from_typed_values_and_their_order(self) -> None:
        self.assertEqual(values.set_global("sync_binlog", "1"), "SET GLOBAL sync_binlog = 1")
        self.assertEqual(
            values.set_global("innodb_flush_method", "O_DIRECT"),
            "SET GLOBAL innodb_flush_method = 'O_DIRECT'",
        )
        with self.assertRaises(ValueError):
            values.set_global("x; DROP TABLE t", "1")
        self.assertEqual(
            values.persist_sql("innodb_io_capacity", "900", "reset"),
            "RESET PERSIST IF EXISTS innodb_io_capacity",
        )
        self.assertEqual(
            values.persist_sql("innodb_io_capacity", "900", "persist"),
            "SET PERSIST_ONLY innodb_io_capacity = 900",
        )
        items = [
            formats.ValueItem("dynamic", "innodb_io_capacity", "30000"),
            formats.ValueItem("dynamic", "innodb_io_capacity_max", "40000"),
        ]
        raised = values.ordered_settings(
            items, lambda v: v.key, lambda v: v.value, {"innodb_io_capacity": "200"}
        )
        self.assertEqual(raised, items[::-1])  # the ceiling makes room first

    def test_sysfs_and_sysctl_spelling(self) -> None:
        self.assertEqual(values.active_value("none [mq-deadline] bfq\n"), "mq-deadline")
        where, line = values.live_write("sysctl", "vm.swappiness", "10", None)
        self.assertEqual(where, "/proc/sys/vm/swappiness")
        self.assertEqual(line, "write 10 to /proc/sys/vm/swappiness")


class FormatsTest(unittest.TestCase):
    def test_a_bundle_reads_back_as_written(self) -> None:
        bundle = formats.Bundle(
            id="j1",
            mode="apply",
            snapshot_id="s1",
            snapshot_dir="/x/s1",
            files=[formats.FileItem("/etc/a.cnf", None, "eA==", "0644", "", "option_file")],
            values=[
                formats.ValueItem("sysctl", "vm.swappiness", "10"),
                formats.ValueItem("dynamic", "innodb_io_capacity", "900"),
            ],
            persisted=[formats.PersistItem("innodb_io_capacity", "900", "reset")],
            commands=[formats.CommandItem(["udevadm", "control", "--reload-rules"], "why")],
            validate=formats.Validate(["/usr/sbin/mariadbd", "--help"], "mysql"),
            expected={"innodb_io_capacity": "900"},
        )
        again = formats.Bundle.from_json(bundle.to_json())
        self.assertEqual(again, bundle)
        self.assertEqual(again.format, formats.FORMAT)

    def test_a_bundle_of_sql_text_or_a_newer_one_is_refused_with_what_to_do(self) -> None:
        self.assertEqual(formats.FORMAT, 2)
        for old in (
            {"id": "j", "mode": "restore", "snapshot_id": "s"},  # unnumbered: format 0
            {"id": "j", "mode": "apply", "format": 1, "statements": ["SET GLOBAL x = 1"]},
        ):
            with self.assertRaises(formats.FormatError) as caught:
                formats.Bundle.from_dict(old)
            message = str(caught.exception)
            self.assertIn("older than this job's (2)", message)
            self.assertIn("SQL text", message)
            self.assertIn("apply again with this InnoTune", message)
        with self.assertRaises(formats.FormatError) as newer:
            formats.Bundle.from_dict({"id": "j", "mode": "apply", "format": formats.FORMAT + 1})
        self.assertIn("newer than this job's", str(newer.exception))
        with self.assertRaises(formats.FormatError):
            formats.Bundle.from_json(b"[1, 2]")

    def test_state_files(self) -> None:
        state = formats.JobState("awaiting-confirm", errors=["e"], confirm_deadline=5.0)
        self.assertEqual(formats.JobState.from_json(state.to_json()), state)
        self.assertIsNone(formats.JobState.from_json(b""))
        self.assertIsNone(formats.JobState.from_json(b'{"state": "appl'))

    def test_journal_lines(self) -> None:
        line = formats.JournalLine(3, formats.now_iso(), "write", "ok", "a\nb")
        self.assertEqual(formats.JournalLine.from_json(line.to_json()), line)
        self.assertIsNone(formats.JournalLine.from_json('{"seq": 1'))
        self.assertEqual(line.line(), "✓ write: a\n      b")


class OldBundleTest(unittest.TestCase):
    def test_the_job_refuses_a_bundle_of_sql_text_and_says_what_to_do(self) -> None:
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        old = {
            "id": "j1",
            "mode": "apply",
            "format": 1,
            "snapshot_id": "s1",
            "statements": ["SET GLOBAL innodb_io_capacity = 900"],
        }
        with open(os.path.join(directory, "bundle.json"), "w") as fh:
            json.dump(old, fh)
        self.assertEqual(job_main.main(["job.pyz", directory]), 1)
        with open(os.path.join(directory, "state.json"), "rb") as fh:
            state = formats.JobState.from_json(fh.read())
        assert state is not None
        self.assertEqual(state.state, "refused")
        self.assertIn("nothing changed", state.errors[0])
        self.assertIn("older than this job's (2)", state.errors[0])
        self.assertIn("apply again with this InnoTune", state.errors[0])
        with open(os.path.join(directory, "journal.jsonl")) as fh:
            line = formats.JournalLine.from_json(fh.readline())
        assert line is not None
        self.assertEqual((line.step, line.status), ("start", "fail"))


class FilesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp()

    def tearDown(self) -> None:
        shutil.rmtree(self.dir)

    def test_atomic_write_keeps_mode_and_leaves_no_temp_file(self) -> None:
        path = os.path.join(self.dir, "a.cnf")
        files.atomic_write(path, b"one\n", 0o640, "")
        files.atomic_write(path, b"two\n", None, "")
        self.assertEqual(files.read_or_none(path), b"two\n")
        self.assertEqual(files.mode_owner(path)[0], "0640")
        self.assertEqual(os.listdir(self.dir), ["a.cnf"])
        self.assertIsNone(files.read_or_none(os.path.join(self.dir, "none")))

    def test_leftover_temp_files_are_removed(self) -> None:
        path = os.path.join(self.dir, "a.cnf")
        left = os.path.join(self.dir, ".a.cnf.x1.innotune-tmp")
        open(left, "w").close()
        self.assertEqual(files.remove_leftovers(path), [".a.cnf.x1.innotune-tmp"])


def _record(ident: str, state: str) -> dict:
    return {"id": ident, "state": state, "manifest": {"id": ident, "instance": {"key": "k"}}}


class RecordsTest(unittest.TestCase):
    def test_retention_spares_the_newest_in_force(self) -> None:
        ids = ["20260101T00000" + str(n) + "Z-000000" for n in range(4)]
        found = [_record(ids[0], "applied"), _record(ids[1], "rolled-back")]
        found += [_record(ids[2], "kept"), _record(ids[3], "applied")]
        self.assertEqual(records.prune_choice(found, 2), [ids[1], ids[0]])
        self.assertEqual(records.newer_in_force(found, ids[1]), [ids[3], ids[2]])


def _snapshot(root: str, ident: str, saved: dict) -> str:
    """A snapshot directory as the runner stores it, for the files in ``saved``."""
    directory = os.path.join(root, "snapshots", ident)
    os.makedirs(directory)
    entries = []
    for path, data in saved.items():
        mode, owner = files.mode_owner(path)
        entries.append(
            {
                "path": path,
                "existed": True,
                "sha256": hashlib.sha256(data).hexdigest(),
                "mode": mode,
                "owner": owner,
                "purpose": "option_file",
                "content_b64": base64.b64encode(data).decode(),
            }
        )
    manifest = json.dumps({"id": ident, "files": entries, "values": [], "how": {}}).encode()
    with open(os.path.join(directory, "manifest.json"), "wb") as fh:
        fh.write(manifest)
    with open(os.path.join(directory, "manifest.sha256"), "w") as fh:
        fh.write(hashlib.sha256(manifest).hexdigest() + "\n")
    return directory


class JobTest(unittest.TestCase):
    """A whole apply job on files in a temp dir (no server: nothing to restart or log in to)."""

    def setUp(self) -> None:
        self.root = tempfile.mkdtemp()
        self.saved_lock_dir = records.LOCK_DIR
        records.LOCK_DIR = os.path.join(self.root, "locks")
        self.target = os.path.join(self.root, "99-innotune.cnf")
        with open(self.target, "wb") as fh:
            fh.write(b"[mysqld]\n")

    def tearDown(self) -> None:
        records.LOCK_DIR = self.saved_lock_dir
        shutil.rmtree(self.root)

    def _run(self, before: bytes, new: bytes) -> tuple:
        snapshot_dir = _snapshot(self.root, "s1", {self.target: b"[mysqld]\n"})
        job_dir = os.path.join(self.root, "jobs", "s1")
        os.makedirs(job_dir)
        item = formats.FileItem(
            self.target,
            hashlib.sha256(before).hexdigest(),
            base64.b64encode(new).decode(),
            "0644",
            "",
            "option_file",
        )
        bundle = formats.Bundle("s1", "apply", "s1", snapshot_dir, files=[item])
        with open(os.path.join(job_dir, "bundle.json"), "wb") as fh:
            fh.write(bundle.to_json())
        final = Job(job_dir).main()
        with open(os.path.join(job_dir, "journal.jsonl")) as fh:
            steps = [formats.JournalLine.from_json(line) for line in fh]
        with open(os.path.join(job_dir, "state.json"), "rb") as fh:
            state = formats.JobState.from_json(fh.read())
        return final, steps, state, files.load_json(os.path.join(snapshot_dir, "state.json"))

    def test_apply_writes_the_file_and_records_every_step(self) -> None:
        final, steps, state, snap_state = self._run(b"[mysqld]\n", b"[mysqld]\nx=1\n")
        self.assertEqual(final, "applied")
        self.assertEqual(files.read_or_none(self.target), b"[mysqld]\nx=1\n")
        self.assertEqual([s.seq for s in steps], list(range(1, len(steps) + 1)))
        self.assertIn(("write", "ok"), [(s.step, s.status) for s in steps])
        self.assertEqual((state.state, snap_state["state"]), ("applied", "applied"))
        self.assertEqual(os.listdir(records.LOCK_DIR), [])  # its free lock is removed

    def _refusing(self, with_taken: bool, rules_dir: str = "") -> tuple:
        """A job with a queue file the host lacks (vdc), and with_taken one it has (vdb)."""
        taken = os.path.join(self.root, "read_ahead_kb")
        with open(taken, "w") as fh:
            fh.write("128\n")
        ids = {"vdb": "queue/read_ahead_kb@vdb", "vdc": "queue/read_ahead_kb@vdc"}
        missing = os.path.join(self.root, "no-such-device", "read_ahead_kb")
        paths = {"vdb": taken, "vdc": missing}
        folder = rules_dir or self.root
        rules = {d: os.path.join(folder, "99-innotune-" + d + ".rules") for d in ids}
        disks = ["vdb", "vdc"] if with_taken else ["vdc"]
        snapshot_dir = _snapshot(self.root, "s1", {})
        job_dir = os.path.join(self.root, "jobs", "s1")
        os.makedirs(job_dir)
        bundle = formats.Bundle(
            "s1",
            "apply",
            "s1",
            snapshot_dir,
            files=[
                formats.FileItem(rules[d], None, "cnVsZQo=", "0644", "", "udev", [ids[d]])
                for d in disks
            ],
            values=[
                formats.ValueItem("sysfs", "queue/read_ahead_kb", "256", paths[d], d, ids[d])
                for d in disks
            ],
            commands=[formats.CommandItem(["true", d], "reload", [ids[d]]) for d in disks],
            changes=[ids[d] for d in disks],
        )
        with open(os.path.join(job_dir, "bundle.json"), "wb") as fh:
            fh.write(bundle.to_json())
        final = Job(job_dir).main()
        with open(os.path.join(job_dir, "journal.jsonl")) as fh:
            steps = [formats.JournalLine.from_json(line) for line in fh]
        with open(os.path.join(job_dir, "state.json"), "rb") as fh:
            state = formats.JobState.from_json(fh.read())
        return final, steps, state, rules, taken

    def test_a_value_the_host_refuses_is_not_applied_nor_kept(self) -> None:
        final, steps, state, rules, taken = self._refusing(with_taken=True)
        self.assertEqual(final, "applied")
        self.assertEqual(sorted(state.not_applied), ["queue/read_ahead_kb@vdc"])
        self.assertIn("does not exist", state.not_applied["queue/read_ahead_kb@vdc"])
        self.assertEqual(files.read_or_none(taken), b"256\n")
        self.assertEqual(files.read_or_none(rules["vdb"]), b"rule\n")
        self.assertIsNone(files.read_or_none(rules["vdc"]))  # no rule kept for it
        ran = [s.detail for s in steps if s.step == "commands" and s.status == "start"]
        self.assertEqual(ran, ["true vdb"])
        said = [s.detail for s in steps if s.step == "apply" and s.status == "ok"]
        self.assertEqual(said, ["applied 1 of 2 changes; not applied: queue/read_ahead_kb@vdc"])

    def test_without_the_rules_directory_a_value_is_set_live_and_said_not_kept(self) -> None:
        missing = os.path.join(self.root, "no-rules.d")
        final, steps, state, _rules, taken = self._refusing(with_taken=True, rules_dir=missing)
        self.assertEqual(final, "applied")  # not a failure: the value is in force
        self.assertEqual(files.read_or_none(taken), b"256\n")
        self.assertFalse(os.path.exists(missing))
        self.assertEqual([s.detail for s in steps if s.step == "commands"], [])
        self.assertIn(
            f"queue/read_ahead_kb@vdb set live only, not kept across reboots: {missing} does not "
            "exist on this host",
            " ".join(state.warnings),
        )

    def test_a_job_whose_every_value_is_refused_changes_nothing(self) -> None:
        final, _steps, state, rules, _taken = self._refusing(with_taken=False)
        self.assertEqual((final, state.state), ("refused", "refused"))
        self.assertIn("takes none of the changes", state.errors[0])
        self.assertIsNone(files.read_or_none(rules["vdc"]))

    def test_a_failure_shows_only_the_servers_error_lines_since_the_job_began(self) -> None:
        job_dir = os.path.join(self.root, "jobs", "s1")
        os.makedirs(job_dir)
        with open(os.path.join(job_dir, "bundle.json"), "wb") as fh:
            fh.write(formats.Bundle("s1", "apply", "s1", self.root).to_json())
        log = os.path.join(self.root, "error.log")
        with open(log, "w") as fh:
            fh.write("2026-11-29T05:00:00Z 0 [ERROR] [MY-010119] an old failure\n")
        job = Job(job_dir)
        self.addCleanup(job.journal.close)
        job.how = {"log": {"kind": "file", "path": log}}
        job.mark_log()
        normal = [
            "2026-11-29T05:01:00Z 0 [System] [MY-010116] /usr/sbin/mysqld (mysqld 9.7.4) "
            "starting as process 2461",
            "2026-11-29T05:01:01Z 1 [System] [MY-013577] InnoDB initialization has ended.",
            "2026-11-29T05:01:02Z 0 [System] [MY-010931] /usr/sbin/mysqld: ready for "
            "connections. Version: '9.7.4'",
        ]
        with open(log, "a") as fh:
            fh.write("\n".join(normal) + "\n")
        job.explain()
        self.assertEqual(job.log_lines, [])  # a normal start-up explains nothing
        bad = "2026-11-29T05:01:03Z 0 [ERROR] [MY-000067] unknown variable 'innodb_x=1'."
        with open(log, "a") as fh:
            fh.write(bad + "\n")
        job.explain()
        self.assertEqual(job.log_lines, [bad])

    def test_a_file_changed_since_the_plan_is_refused_untouched(self) -> None:
        final, steps, state, snap_state = self._run(b"something else\n", b"x")
        self.assertEqual(final, "refused")
        self.assertEqual(files.read_or_none(self.target), b"[mysqld]\n")
        self.assertIn("changed since the plan", " ".join(state.errors))
        self.assertEqual(snap_state["state"], "refused")


if __name__ == "__main__":
    unittest.main()
