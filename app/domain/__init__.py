"""Plain values shared by every layer: facts, plans, errors. Standard library only."""
