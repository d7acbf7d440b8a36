"""Tests of hostile input: bad files, flags, sizes and races, each refused clearly."""
