package podcertctl

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ksa-go/ksa/podcert"
)

// EventKind says what an [Event] reports.
type EventKind uint8

// The kinds of events.
const (
	// Decided: a request was decided and its status written
	// (Event.Decision).
	Decided EventKind = iota + 1
	// Skipped: the request needed nothing: decided already, another
	// signer's, or gone.
	Skipped
	// Conflict: the API server refused the status write because the
	// request had changed meanwhile; the request is read again.
	Conflict
	// CAKeyFailed: the CA key failed to sign, for a request's certificate
	// or for a probe of [Controller.Ready] (an event of no request). It is
	// not the request's fault: the request is tried again, however often
	// (Retry), at most [MaxRetryDelay] apart.
	CAKeyFailed
	// Errored: anything else kept the status from being written (Err): the
	// API server refused or did not answer, or the signer's own check of
	// the status refused it. Retry says whether the request is tried again.
	Errored
	// TrustBundleWritten: the ClusterTrustBundle was created or updated.
	TrustBundleWritten
	// CASwitched: the next CA of [Rotation] signs from now on.
	CASwitched
	// CARetired: the former CA has left the ClusterTrustBundle (a
	// TrustBundleWritten event came just before).
	CARetired
	// CASwitchPostponed: before the switch, the published trust bundle
	// lacked the next CA (another writer replaced it); it was published
	// again and the switch moved to Rotation.Propagation from then
	// ([Controller.SwitchAt]), the retirement with it.
	CASwitchPostponed
	// CASwitchRecordCapped: the published trust bundle recorded a switch
	// ([SwitchAtAnnotation]) later than the rotation allows: past the
	// last time the current CA issues certificates of the full lifetime,
	// or the last switch whose retirement the next CA outlives. The
	// switch was kept at that latest safe time instead, and recorded so.
	CASwitchRecordCapped
	// Deferred: the request was put off, not decided, because the CA that
	// signs now is not in the published trust bundle as this replica last
	// read it (Err matches [ErrCANotPublished]); it is tried again (Retry)
	// as the queue's backoff allows, and another replica may decide it
	// meanwhile.
	Deferred
	// LeaseAcquired: this replica holds the Lease of
	// [Config.LeaderElection] and publishes the trust bundle from now.
	LeaseAcquired
	// LeaseLost: this replica no longer holds the Lease (another holds it,
	// it was not renewed within RenewDeadline, or Run is returning) and no
	// longer publishes.
	LeaseLost
)

// String names the kind: "Decided", "Skipped", ...
func (k EventKind) String() string {
	switch k {
	case Decided:
		return "Decided"
	case Skipped:
		return "Skipped"
	case Conflict:
		return "Conflict"
	case CAKeyFailed:
		return "CAKeyFailed"
	case Errored:
		return "Errored"
	case TrustBundleWritten:
		return "TrustBundleWritten"
	case CASwitched:
		return "CASwitched"
	case CARetired:
		return "CARetired"
	case CASwitchPostponed:
		return "CASwitchPostponed"
	case CASwitchRecordCapped:
		return "CASwitchRecordCapped"
	case Deferred:
		return "Deferred"
	case LeaseAcquired:
		return "LeaseAcquired"
	case LeaseLost:
		return "LeaseLost"
	}
	return "Unknown"
}

// Event is something the controller did: a request handled, a probe of
// the CA key that failed, the trust bundle written. [Config.Observe]
// receives them.
type Event struct {
	Kind EventKind
	// Namespace, Name and UID name the request; empty in events of no
	// request.
	Namespace, Name string
	UID             types.UID
	// Decision is what was decided and written; set for Decided only.
	Decision *podcert.Decision
	// Err is why the status could not be written (Conflict, CAKeyFailed,
	// Errored); Retry whether the request is tried again.
	Err   error
	Retry bool
	// Duration is how long handling the request took, by the controller's
	// clock: deciding it (signing included) and writing its status.
	Duration time.Duration
}

// caKeyError reports whether err is the CA key failing to sign: the
// signer's ErrSigning, except its own check of the status it made (a
// *podcert.StatusError), which signing again would not change.
func caKeyError(err error) bool {
	var se *podcert.StatusError
	return errors.Is(err, podcert.ErrSigning) && !errors.As(err, &se)
}
