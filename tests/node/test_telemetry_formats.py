"""watch/formats.py: the one ordered list of telemetry log formats (issue 45). Each entry says
how it is recognised and which reader parses it; readers.detect answers from the list alone."""

from __future__ import annotations

from gpuvet.watch import formats, readers


def test_every_format_is_recognised_and_read_one_way() -> None:
    names = [f.name for f in formats.FORMATS]
    assert len(names) == len(set(names))
    for fmt in formats.FORMATS:
        assert (fmt.head is None) != (fmt.line is None), fmt.name
        assert (fmt.read is None) != (fmt.read_body is None), fmt.name
        assert fmt.what


def test_the_first_header_line_decides_among_the_line_formats() -> None:
    dmon = "# gpu   pwr  gtemp  sm\n# Idx     W      C   %\n    0   300     60  90\n"
    query = "timestamp, index, temperature.gpu, power.draw [W]\n"
    assert readers.detect(dmon) == "dmon"
    assert readers.detect(query + dmon) == "query-csv"
    assert readers.detect(dmon + query) == "dmon"
    assert readers.detect("# gpu pid type sm\n") == "pmon"


def test_a_headerless_log_is_its_own_kind_only_with_fields() -> None:
    row = "2024/01/16 14:44:16.981, 0, 61, 583.54 W\n"
    assert readers.detect(row) is None
    assert readers.detect(row, ("timestamp", "index", "temperature.gpu", "power.draw")) == "query-csv-noheader"
