package job

// Kind names what a job does. It is also the last token of its subjects:
// jobs.<kind>, results.<kind>.<id>, deadletter.<kind>.
type Kind string

const (
	Scan    Kind = "scan"
	Sitemap Kind = "sitemap"
	Email   Kind = "email"
)

// Kinds lists every job kind, in a stable order.
var Kinds = []Kind{Scan, Sitemap, Email}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return k == Scan || k == Sitemap || k == Email }

// Enum lists the values of Kind.
func (Kind) Enum() []string { return enum(Kinds) }

// IDField is the name the job's id carries in JSON documents for this kind.
func (k Kind) IDField() string {
	switch k {
	case Scan:
		return "scan_id"
	case Sitemap:
		return "sitemap_id"
	default:
		return "job_id"
	}
}

// Status is where a job is in its life.
type Status string

const (
	Queued    Status = "queued"
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
)

// Finished reports whether the job will not change any more.
func (s Status) Finished() bool { return s == Completed || s == Failed }

// Enum lists the values of Status.
func (Status) Enum() []string { return enum([]Status{Queued, Running, Completed, Failed}) }

// enum turns a list of string constants into the strings that an Enum
// method returns. Every string type of the contract that takes a fixed set
// of values has an Enum method, so the OpenAPI document lists the values
// from the code that defines them.
func enum[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
