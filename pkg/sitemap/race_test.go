//go:build race

package sitemap

// raceEnabled skips the 50 MiB test, which the race detector makes slow.
const raceEnabled = true
