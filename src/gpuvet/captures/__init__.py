"""Reading what people paste: captured tool output from a machine gpuvet cannot run on.

Pure parsing (no host access): each format has a parser that claims the lines it understood
from a cleaned text (launcher prefixes, markdown quotes and code fences removed), so a file may
hold several outputs at once (a post, a ticket, an nvidia-bug-report.log) and whatever no parser
claimed is reported in a note instead of being silently dropped.
"""
