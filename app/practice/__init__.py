"""The practice server on this computer, shared with the tests' private instances."""
