"""Tests of the faces: commands, flags, output at 80 columns, --json."""
