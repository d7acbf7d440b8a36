"""The logbook: runs kept in SQLite so that today's figures can be compared with last month's."""
