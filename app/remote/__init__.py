"""Transports: run commands and move files on a target.

The only paramiko user; it loads paramiko through app/remote/sshlib.py.
"""
