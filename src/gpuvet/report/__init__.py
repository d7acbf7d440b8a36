"""Showing results: JSON-ready records (and, in later steps, HTML and JUnit reports)."""
