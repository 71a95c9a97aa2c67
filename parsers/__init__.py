"""Pure streaming parsers: text in, records out. No I/O, no clock, no servers."""
