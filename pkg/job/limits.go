package job

// Limits of the contract (§3), checked once by ingest.
const (
	MaxItems        = 1000  // urls and emails in one multiple request
	MaxURLLength    = 2048  // characters of a target URL, as sent and once canonical
	MaxEmailLength  = 320   // characters of an email target
	DefaultMaxPages = 100   // max_pages of a sitemap request that names none
	MaxMaxPages     = 10000 // the largest max_pages
)
