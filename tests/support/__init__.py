"""Helpers the tests share: one place (issue 45)."""
