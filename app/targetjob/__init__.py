"""The apply/restore job that runs ON THE TARGET, detached from the SSH session.

This package is the only code that changes a server. It is shipped as one zipapp
(:func:`app.targetjob.pack.zipapp`, built from these source files) to
``/var/lib/innotune/jobs/<id>/job.pyz`` and run there as root with ``python3 job.pyz DIR``,
under ``setsid -f`` or ``systemd-run``. It must therefore stay self-contained: Python 3.7+
standard library only, nothing of ``app`` outside this package, relative imports only.
Everything it needs is in ``DIR/bundle.json`` (:class:`~app.targetjob.formats.Bundle`,
written by :mod:`app.jobs.runner`) and in the snapshot directory the bundle names.

Modules: ``formats`` (bundle, journal line, states: shared with the runner), ``values``
(the one "same value" test, SQL and sysfs spelling: shared with the planner and the
describers), ``files``, ``records`` (snapshot states, retention, locks), ``journal`` (the
job's core), ``health``, ``restore``, ``job`` (the apply order), ``watchdog``, ``main``
and ``pack`` (builds the zipapp on this computer; never shipped).

What it writes:

* ``DIR/journal.jsonl``: one :class:`~app.targetjob.formats.JournalLine` per step, each
  line fsync'd, so a client that reconnects after a dropped link reads exactly how far it got;
* ``DIR/state.json`` (replaced atomically): ``running``, ``awaiting-confirm``, then one of
  the final states ``applied``, ``refused`` (nothing was changed), ``rolled-back`` or
  ``failed-rollback``, with the errors, warnings and the error-log lines that explain a
  failure;
* ``DIR/pid``: its own pid, so a reader can tell a running job from an interrupted one.

The order (reliability.md 2.5, 3.1-3.4; house style: save first, undo newest first, keep
going past a failure): refuse when a file changed since it was planned; write files
atomically; validate the server's options before any restart; set dynamic variables, sysfs
and sysctl values live; run the follow-up commands (udevadm); restart only when needed;
judge health by polling (process, socket greeting, a login, "ready for connections"),
waiting as long as a crash recovery may take; compare the settings in force with the
expected ones; watch a short window for the process dying; wait for a confirmation if
asked. Any failure restores the snapshot newest first and restarts on the old files.
"""
