"""Report code; generated reports land in this folder too (git-ignored)."""
