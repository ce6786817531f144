"""The nightly: the whole conformance suite and the benchmark's quick table into a dated folder, judged against
the previous night (`python -m nightly`); shards over several nodes merged with `python -m nightly --merge`."""
