"""Real hosts for the tests: sshd, the Debian MariaDB, private servers, a loop device."""
