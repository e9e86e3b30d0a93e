"""Facts about a host and its server, gathered through a Transport."""
