package deploy

// surveyorServices are the four binaries, each with the variable that sets
// the address its probes and metrics are served on.
var surveyorServices = map[string]string{
	"ingest":     "HTTP_ADDR",
	"scanner":    "ADMIN_ADDR",
	"sitemapper": "ADMIN_ADDR",
	"emailcheck": "ADMIN_ADDR",
}

// workers maps each worker to the durable JetStream consumer it shares on
// stream JOBS and to the variable holding its per-pod concurrency.
var workers = map[string]struct{ consumer, concurrency string }{
	"scanner":    {"scan-workers", "SCANNER_CONCURRENCY"},
	"sitemapper": {"sitemap-workers", "SITEMAPPER_CONCURRENCY"},
	"emailcheck": {"email-workers", "EMAILCHECK_CONCURRENCY"},
}

// knownEnv is every variable the deployment files may set: contract §2, the
// tuning variables the services read today, and the Go runtime's
// GOMEMLIMIT. The services ignore a misspelt name silently, so the tests
// reject any name not listed here; add a new variable when a service
// starts reading it.
var knownEnv = map[string]bool{
	// contract §2
	"NATS_URL": true, "EMBEDDED_NATS": true, "DATA_DIR": true, "STREAM_REPLICAS": true,
	"HTTP_ADDR": true, "ADMIN_ADDR": true, "ALLOW_PRIVATE_TARGETS": true,
	"DNS_SERVER": true, "SMTP_PORT": true, "SMTP_HELO": true, "SMTP_FROM": true,
	"CACHE_TTL": true, "RESULT_TTL": true, "TECHNOLOGIES_API_TOKENS": true,
	"FINGERPRINTS_DIR": true, "RATE_LIMIT": true, "TRUSTED_PROXIES": true,
	"SCANNER_CONCURRENCY": true, "SITEMAPPER_CONCURRENCY": true, "EMAILCHECK_CONCURRENCY": true,
	// pkg/obs, pkg/service
	"LOG_LEVEL": true, "JOBS_MAX_MSGS": true, "JOBS_MAX_BYTES": true,
	"WORKER_ACK_WAIT": true, "WORKER_MAX_DELIVER": true, "WORKER_GRACE": true,
	// services/scanner
	"SCANNER_HTTP_FALLBACK": true, "SCANNER_BODY_TIMEOUT": true, "SCANNER_DIAL_TIMEOUT": true,
	"SCANNER_HEADER_TIMEOUT": true, "SCANNER_TIMEOUT": true, "SCANNER_TLS_TIMEOUT": true,
	"SCANNER_BODY_LIMIT": true, "SCANNER_MAX_REDIRECTS": true, "SCANNER_USER_AGENT": true,
	// services/sitemapper
	"SITEMAPPER_JOB_BUDGET": true, "SITEMAPPER_TIMEOUT": true, "SITEMAPPER_BODY_LIMIT": true,
	"SITEMAPPER_MAX_DEPTH": true, "SITEMAPPER_PER_HOST": true, "SITEMAPPER_USER_AGENT": true,
	// services/emailcheck
	"EMAILCHECK_BANNER_TIMEOUT": true, "EMAILCHECK_COMMAND_TIMEOUT": true,
	"EMAILCHECK_CONNECT_TIMEOUT": true, "EMAILCHECK_GREYLIST_RETRY": true,
	"EMAILCHECK_IDLE_TIMEOUT": true, "EMAILCHECK_TIMEOUT": true, "EMAILCHECK_PER_SERVER": true,
	"EMAILCHECK_LISTS_DIR": true,
	"GOMEMLIMIT":           true,
}

// consumerMaxAckPending is the cap pkg/worker puts on a consumer's jobs in
// flight across all its pods: scaling a worker past it adds idle pods.
const consumerMaxAckPending = 1000

// defaultWorkerGrace is pkg/service's WORKER_GRACE when unset.
const defaultWorkerGrace = "20s"
