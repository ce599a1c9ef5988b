package bus

import "github.com/surveyor/surveyor/pkg/job"

// Subjects of the streams (contract §5). A job kind is the last token of
// its subjects, before the id where there is one.
const (
	// AllJobsSubject matches every JobSubject.
	AllJobsSubject = "jobs.*"
	// AllResultsSubject is what RESULTS stores, and what other systems
	// subscribe to.
	AllResultsSubject = "results.>"
	// AllDeadLettersSubject is what DEADLETTER stores.
	AllDeadLettersSubject = "deadletter.>"
)

// Subjects of Surveyor's own announcements: core NATS, not persisted, so a
// lost one only makes a process's view of the others older.
const (
	// AllWorkersSubject matches every WorkersSubject.
	AllWorkersSubject = "surveyor.workers.*"
	// AllEventsSubject matches every EventSubject.
	AllEventsSubject = "surveyor.events.*"
	// AcceptedSubject is where each ingest replica announces the jobs it
	// stored in JOBS (see Announce).
	AcceptedSubject = "surveyor.accepted"
)

// Headers Surveyor sets besides JetStream's own.
const (
	// AnnouncerHeader names the ingest replica of an accepted announcement.
	AnnouncerHeader = "Surveyor-Ingest"
	// JobIDHeader carries the job id of a dead letter.
	JobIDHeader = "Surveyor-Job-Id"
)

// JobSubject is the JOBS subject of a kind: jobs.<kind>.
func JobSubject(k job.Kind) string { return "jobs." + string(k) }

// ResultSubject is the RESULTS subject of one job: results.<kind>.<id>.
func ResultSubject(k job.Kind, id string) string { return "results." + string(k) + "." + id }

// DeadLetterSubject is the DEADLETTER subject of a kind: deadletter.<kind>.
func DeadLetterSubject(k job.Kind) string { return "deadletter." + string(k) }

// WorkersSubject is where the workers of a kind announce their capacity.
func WorkersSubject(k job.Kind) string { return "surveyor.workers." + string(k) }

// EventSubject is where workers announce each status change of a job of a
// kind, with its status document.
func EventSubject(k job.Kind) string { return "surveyor.events." + string(k) }
