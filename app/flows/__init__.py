"""The use cases the wizard (app/ui) and the command line (app/commands) share.

Each is a plain function over the services (inspect, planner, describe, jobs, export): read
facts and plans from files, inspect a connected host, preview a plan, apply it with its
options, list and restore snapshots, export. Neither face imports the other; both come
here, so a step written once works the same from both.
"""
