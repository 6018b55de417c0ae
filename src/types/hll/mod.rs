//! HyperLogLog values (issue 19): Valkey's `HYLL` representation, sparse and dense.
