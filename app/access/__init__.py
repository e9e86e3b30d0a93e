"""Reaching a host's database server: which instance, which route, and the doctor's checks."""
