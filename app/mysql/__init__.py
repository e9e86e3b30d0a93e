"""Database access (the only PyMySQL user): socket, TCP through SSH, or a relay under sudo."""
