"""The bounded before/after write benchmark."""
