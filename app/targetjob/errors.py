"""How a job step fails. Standard library only, Python 3.7+."""


class JobFailed(Exception):
    """A step failed; the message says which and why."""


class JobCancelled(JobFailed):
    """The person asked (``DIR/cancel``) to stop; what was changed is rolled back."""
