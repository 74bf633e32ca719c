package podcertctl

import (
	"fmt"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/podcert"
)

// ErrCANotPublished: the CA that would sign is not one the published
// trust bundle holds and keeps, as this replica last read it (see the
// package's "Replicas and leader election"): the request waits until it
// is (a [Deferred] event, whose Err matches this), and another replica
// may decide it meanwhile.
var ErrCANotPublished = errs.New(prefix, "the CA that signs now is not in the published trust bundle")

// bundleView is the published trust bundle as this replica last read
// it, or wrote it.
type bundleView struct {
	// pem is the bundle's certificates; "" when there is none.
	pem string
	// retiring and switchAt are the switch recorded: the CA that signs no
	// more from switchAt ([RetiringCAAnnotation], [SwitchAtAnnotation]);
	// empty and zero when there is no such record, or a malformed one.
	retiring string
	switchAt time.Time
	// err is why the last read failed: nothing signs until a read
	// succeeds.
	err error
}

// viewOf is the view of a bundle read or written.
func viewOf(pem string, annotations map[string]string) *bundleView {
	v := &bundleView{pem: pem}
	if at, err := time.Parse(time.RFC3339, annotations[SwitchAtAnnotation]); err == nil && annotations[RetiringCAAnnotation] != "" {
		v.retiring, v.switchAt = annotations[RetiringCAAnnotation], at
	}
	return v
}

// signerNow returns the signer that signs at now, or an error matching
// ErrCANotPublished when it must not sign (fail closed): unless
// Config.NoTrustBundle, a replica signs only with a CA that
//
//   - the published trust bundle holds, as it last read it (a read that
//     failed is a bundle that holds nothing);
//   - the bundle's record does not retire from its recorded switch on,
//     once that switch has come: no replica signs with a rotation's
//     current CA past the switch the publisher recorded, so at its
//     retirement no certificate of it is alive;
//   - its own rotation, past the switch, is the next CA, once the bundle
//     was seen to hold it.
func (c *Controller) signerNow(now time.Time) (*podcert.Signer, error) {
	s, _ := c.signer()
	if c.cfg.NoTrustBundle {
		return s, nil
	}
	refuse := func(format string, args ...any) (*podcert.Signer, error) {
		return nil, errs.Wrap(prefix, ErrCANotPublished, fmt.Sprintf(format, args...), nil)
	}
	if r := c.rot; r != nil && !r.switched.Load() {
		if switchAt, _ := r.times(); !now.Before(switchAt) {
			return refuse("the next CA signs from %s, and ClusterTrustBundle %s was not seen to hold it since",
				switchAt.UTC().Format(time.RFC3339), c.cfg.TrustBundleName)
		}
	}
	v := c.view.Load()
	fp := fingerprint(s.CA())
	switch {
	case v == nil:
		return refuse("ClusterTrustBundle %s is not read yet", c.cfg.TrustBundleName)
	case v.err != nil:
		return nil, errs.Wrap(prefix, ErrCANotPublished, fmt.Sprintf("ClusterTrustBundle %s cannot be read", c.cfg.TrustBundleName), v.err)
	case !holds(v.pem, s.TrustBundle()):
		return refuse("ClusterTrustBundle %s does not hold CA %s", c.cfg.TrustBundleName, fp)
	case v.retiring == fp && !now.Before(v.switchAt):
		return refuse("ClusterTrustBundle %s records that CA %s signs no more from %s", c.cfg.TrustBundleName, fp,
			v.switchAt.UTC().Format(time.RFC3339))
	}
	return s, nil
}
