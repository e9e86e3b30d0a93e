"""One wizard page per step."""
