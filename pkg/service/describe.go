package service

import "github.com/surveyor/surveyor/pkg/config"

// Binary is what the files that deploy a binary need to know about it:
// every variable it reads, with its default, and how it is probed and
// scaled. Each binary's test writes it to deploy/settings/<binary>.json
// and fails when the file is stale; the deploy module checks its manifests
// against those files.
type Binary struct {
	// Listen is the variable holding the address of /healthz, /readyz
	// and /metrics.
	Listen    string       `json:"listen"`
	Variables []config.Var `json:"variables"`
	Worker    *WorkerInfo  `json:"worker,omitempty"`
}

// WorkerInfo is how a worker shares its work and how far it scales.
type WorkerInfo struct {
	Consumer      string `json:"consumer"`        // durable consumer on JOBS its replicas share
	Concurrency   string `json:"concurrency"`     // variable of the jobs one process runs at once
	MaxAckPending int    `json:"max_ack_pending"` // jobs in flight across all replicas at most
}

// Describe lists the variables of a binary made of Common and own.
func Describe(listen string, own ...config.Component) Binary {
	return Binary{Listen: listen, Variables: config.Describe(append([]config.Component{&Common{}}, own...)...)}
}
