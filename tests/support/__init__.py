"""Helpers shared by the test tree: one way to run the suite in a sub-process."""
