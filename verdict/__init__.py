"""The result record shared by the harness (writer) and every report (readers)."""
