"""Glue between pytest and the pieces: backend choice, the kernel under test, launching, comparing."""
