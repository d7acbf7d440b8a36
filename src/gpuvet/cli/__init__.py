"""The command line: parse, call the job, render (rich or JSON), map errors to exit codes."""
