//! A camt.053.001.08 generator (tests and benchmarks).
