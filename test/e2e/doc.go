// Package e2e measures Surveyor end to end: the real binaries (bin/ingest,
// bin/scanner, ...) run as processes against local test sites, as they run
// in production. Services cannot import each other's internal packages, so
// this is where a benchmark that crosses them lives. Benchmarks skip unless
// SURVEYOR_BIN names the directory of the binaries (make bench sets it).
package e2e
