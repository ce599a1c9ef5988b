// Package job is Surveyor's contract in Go: the job document that travels
// from ingest through the JOBS stream to a worker and back through RESULTS,
// the result documents of each kind, and the rules that make a request
// canonical (target URLs, email addresses, scan options, limits, the key
// repeats share a job by). Ingest applies the rules once; workers trust
// the documents they receive.
package job
