"""Transports: run commands and move files on a target (the only paramiko user)."""
