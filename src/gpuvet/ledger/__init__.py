"""The module ledger: each module followed by its identity (serial, UUID) wherever it sat, its
findings and events, the step of its fault's escalation ladder, and the RMA packet. Pure: it
reads the logbook's rows (logbook/ledger_rows.py) and judges them; docs/ledger.md."""
