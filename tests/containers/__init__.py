"""Docker and Podman for the tests: private daemons and images built from the test hosts."""
