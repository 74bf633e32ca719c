package podcertcmd

import (
	"crypto"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// rotationFlags are the settings of a CA rotation in "ksa podcert serve".
type rotationFlags struct {
	nextCAKey, nextCACert, nextSignsAt string
	propagation                        time.Duration
}

func (f *rotationFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.nextCAKey, "next-ca-key", "", "PEM private key file, or key-store URI, of the CA that takes over at --next-ca-signs-at (published from the start)")
	fl.StringVar(&f.nextCACert, "next-ca-cert", "", "PEM certificate of the next CA, then its issuers (with --next-ca-key)")
	fl.StringVar(&f.nextSignsAt, "next-ca-signs-at", "", "RFC 3339 time from which the next CA signs, at least --ca-propagation from its first start (with --next-ca-key)")
	fl.DurationVar(&f.propagation, "ca-propagation", podcertctl.DefaultPropagation, "least time between publishing the next CA and its first certificate, for every pod to receive the trust bundle (lower it in tests only)")
}

// rotation returns the rotation of the flags, nil without --next-ca-key;
// current is the signer of --ca-key and currentKey its key.
func (f *podcertServeFlags) rotation(a *base.App, cmd *cobra.Command, currentKey crypto.Signer) (*podcertctl.Rotation, error) {
	given := func(name string) bool { return cmd.Flags().Changed(name) }
	if !given("next-ca-key") && !given("next-ca-cert") && !given("next-ca-signs-at") {
		return nil, base.OnlyWith(cmd, "ca-propagation", false, "--next-ca-key")
	}
	for _, name := range []string{"next-ca-key", "next-ca-cert", "next-ca-signs-at"} {
		if !given(name) {
			return nil, base.Usage("give --next-ca-key, --next-ca-cert and --next-ca-signs-at together", "--%s is missing for a CA rotation", name)
		}
	}
	if f.noBundle {
		return nil, base.Usage("leave out --no-trust-bundle: a rotation publishes the next CA in the ClusterTrustBundle before it signs", "--next-ca-key applies only with the trust bundle published")
	}
	if f.propagation <= 0 {
		return nil, base.Usage("give --ca-propagation a positive duration (default "+podcertctl.DefaultPropagation.String()+")", "--ca-propagation %s is not positive", f.propagation)
	}
	at, err := time.Parse(time.RFC3339, f.nextSignsAt)
	if err != nil {
		return nil, base.Usage("give an RFC 3339 time, e.g. 2026-12-01T09:00:00Z", "--next-ca-signs-at %s does not parse", base.Quoted(f.nextSignsAt))
	}
	s, key, err := f.signerOf(a, f.nextCAKey, f.nextCACert, "--next-ca-key", "--next-ca-cert")
	if err != nil {
		return nil, err
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); ok && pub.Equal(currentKey.Public()) {
		return nil, base.Usage("give --next-ca-key a new key and --next-ca-cert a CA certificate of it", "--next-ca-key is the key of --ca-key")
	}
	return &podcertctl.Rotation{Signer: s, CAKey: key, SignsAt: at, Propagation: f.propagation}, nil
}

// rotationError explains a rotation the controller refuses to start.
func rotationError(err error, propagation time.Duration) (error, bool) {
	if !errors.Is(err, podcertctl.ErrNextCANotPublished) {
		return nil, false
	}
	return base.Fail(err, "give --next-ca-signs-at a time at least --ca-propagation ("+propagation.String()+") from now: every pod must receive the next CA before it signs",
		"starting the CA rotation"), true
}

// newRotationMetrics registers the CA rotation's metrics with reg:
// ksa_podcert_ca_info, one series per CA the controller signs with or
// publishes as cas returns them, and the counters of switches postponed
// and records capped, fed by the function returned.
func newRotationMetrics(reg prometheus.Registerer, cas func() []podcertctl.CAState) (func(podcertctl.Event), error) {
	postponed := prometheus.NewCounter(prometheus.CounterOpts{Name: "ksa_podcert_ca_switch_postponements_total",
		Help: "Switches to the next CA postponed because the published trust bundle lacked it."})
	capped := prometheus.NewCounter(prometheus.CounterOpts{Name: "ksa_podcert_ca_switch_records_capped_total",
		Help: "Switch records of the published trust bundle later than the rotation allows, capped at the latest safe switch."})
	info := caInfo{cas: cas, desc: prometheus.NewDesc("ksa_podcert_ca_info",
		"The CAs signing or published: 1 per CA, by the SHA-256 fingerprint of its certificate and its state (signing, next, retiring).",
		[]string{"fingerprint", "subject", "state"}, nil)}
	if err := errors.Join(reg.Register(postponed), reg.Register(capped), reg.Register(info)); err != nil {
		return nil, err
	}
	return func(e podcertctl.Event) {
		switch e.Kind {
		case podcertctl.CASwitchPostponed:
			postponed.Inc()
		case podcertctl.CASwitchRecordCapped:
			capped.Inc()
		}
	}, nil
}

type caInfo struct {
	cas  func() []podcertctl.CAState
	desc *prometheus.Desc
}

func (c caInfo) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c caInfo) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.cas() {
		// A subject that is not UTF-8 cannot be a label value: the series
		// is left out rather than the scrape failed.
		if m, err := prometheus.NewConstMetric(c.desc, prometheus.GaugeValue, 1, s.Fingerprint, s.Subject, s.State); err == nil {
			ch <- m
		}
	}
}
