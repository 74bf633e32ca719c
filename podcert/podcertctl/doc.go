// Package podcertctl is the pod-certificate controller: it watches the
// PodCertificateRequests of one signer name, decides each with a
// podcert.Signer, writes the status (checked beforehand as the API server
// will check it), and publishes the signer's CA as a ClusterTrustBundle
// that workloads and kube-apiserver can trust. "ksa podcert serve" runs
// it; so can a program of one's own, an operator's manager beside its
// other controllers: this is a leaf package over client-go, which no core
// package imports.
//
// # Running it in a program of one's own
//
// The controller takes what the program has: a client ([Client]), a
// logger, a clock, and hooks for metrics. A program with a clientset
// hands it over through package clientgo; one without gets the client
// from a rest.Config with [NewRESTClient], which links certificates.k8s.io
// alone:
//
//	client, err := podcertctl.NewRESTClient(restConfig) // or clientgo.New(clientset)
//	if err != nil {
//		return err
//	}
//	ctl, err := podcertctl.New(podcertctl.Config{
//		Client: client,
//		Signer: podSigner, // a *podcert.Signer: the CA, the signer name, the policy
//		CAKey:  caKey,     // the key it signs with, probed for readiness
//		Log:    slog.Default(),
//		Observe: func(e podcertctl.Event) {
//			// metrics: ksaprom.PodCertMetrics, or one's own
//		},
//	})
//	if err != nil {
//		return err // a *ksa.ConfigError naming the field
//	}
//	go func() { _ = ctl.Run(ctx) }() // until ctx ends
//
// [Controller.Ready] answers a readiness probe, [Controller.Stats],
// [Controller.OldestUndecided] and [Controller.CAs] what a metrics
// endpoint shows. Prometheus is not linked here: package ksaprom's
// NewPodCertMetrics takes the events, and the ksa command wires it to
// [Config.Observe]. [Config.Now] and [Config.After] are the clock and the
// timer, for tests.
//
// It speaks certificates.k8s.io/v1 (Kubernetes 1.37) or v1beta1 (1.35 and
// 1.36, with the PodCertificateRequest feature gate and the v1beta1 API
// enabled), chosen by discovery unless configured ([Config.APIVersion]).
// The identity it runs as needs the RBAC of [Rules] (its ClusterRole's
// rules, as data); [Objects] adds the ServiceAccount, the binding and the
// Namespace, [Manifests] renders them for kubectl apply: read the signer's
// requests, update their status, the sign and attest verbs on the signer
// name, and create or update its trust bundle. Signer names under
// kubernetes.io (the domain or a subdomain of it), which Kubernetes
// reserves for its own signers, are refused ([ErrReservedSignerName]).
//
// # Deciding requests
//
// A request is decided once: the controller skips requests that already
// carry an Issued, Denied or Failed condition, and a conflict (another
// writer, a stale cache) puts the request back on the queue to be read
// again. Status writes carry the resourceVersion read, so replicas running
// side by side never both issue for one request: the second write is
// refused and its reader then finds the request decided.
//
// A status that cannot be written is tried again, [RetryDelay] doubling up
// to [MaxRetryDelay], at most Config.MaxRetries times. A CA key that fails
// to sign (a key store down) is not the request's fault: that request is
// tried again for as long as the key fails, and never Failed for it.
//
// # Replicas and leader election
//
// Every replica watches the requests and decides them: a status write
// carries the resourceVersion read, so when two replicas decide one
// request the API server refuses the second write, a conflict
// ([Stats].Conflicts, the Conflict event; ksaprom counts them in
// ksa_podcert_status_update_conflicts_total) after which that replica
// reads the request again and finds it decided: harmless, and cheap
// (one refused write each).
//
// Only one replica should write the ClusterTrustBundle. With
// [Config.LeaderElection] the replicas elect it: the holder of a
// coordination.k8s.io/v1 Lease in the controller's namespace
// ([LeaderElectionConfig]; its RBAC is [LeaseRules]). The holder renews
// its Lease every RetryPeriod, and stops writing once RenewDeadline has
// passed since its last renewal; the others take the Lease over once they
// have seen it unchanged for its LeaseDuration, by their own clock (never
// by the renewal time it states, another pod's clock), and at their next
// try when the holder gave it up, as it does when Run returns. The
// election is this package's own, over the three calls of [Leases] and
// [Config.Now] and [Config.After]: client-go's leaderelection package
// keeps its clock unexported (the real one) and waits with the wait
// package on the real clock, so tests of a takeover would sleep; and its
// callbacks would have to be turned into the one context per term the
// controller writes in. [Controller.Leading]
// says whether this replica holds the Lease (ksaprom's
// ksa_podcert_leader gauge); readiness does not depend on it.
//
// Every replica reads the published bundle, and its rotation record,
// before it decides anything, and again at each phase of a rotation and
// every Config.Resync; a new holder reads them as its term begins, before
// it writes. A replica signs only with a CA the bundle held when it last
// read it, and not with a CA the bundle records as retiring
// ([RetiringCAAnnotation]) past the recorded switch: otherwise the
// request waits (a Deferred event, [ErrCANotPublished]; [Stats].Deferred)
// and is tried again, by this replica or another. The writer keeps every
// valid CA it finds in the bundle after its own, but a CA its rotation
// retires past the retirement: so the bundle always holds every CA a live
// certificate chains to, whichever replica writes it, even one started
// with an older configuration (the stale standby that became leader and
// published stale trust): it keeps the next CA, and drops the record that
// retires its own CA rather than sign with a CA nobody trusts.
//
// Without leader election every replica writes: replicas with the same
// configuration write the same bundle, so that is safe, but run one
// replica, or give every replica the same Signer and Next: a replica with
// another CA, or without the rotation another one runs, writes its own
// bundle. It keeps the valid CAs it finds rather than drop one whose
// certificates are alive, and a rotating replica puts back a CA another
// writer left out (and postpones its switch for it), so such replicas
// fight over the bundle without breaking a handshake, until they agree.
//
// # Rotating the CA
//
// [Config.Next] hands signing over to another CA without a certificate
// any peer refuses: both CAs are published from the start (the current
// one first), the next one signs from [Rotation.SignsAt], and the current
// one leaves the bundle at [Controller.RetireAt], once its last
// certificate has expired. The rotation is a schedule of package rotation
// (the one model of the module's key rotations), the bundle its one copy:
// each phase is a function of the clock, so a controller started again
// with the same configuration, at any time, does what the first would have
// done then. Run refuses to start a rotation whose next CA would sign
// within [Rotation.Propagation], or signs already (retirement past
// included), unless the published bundle holds it already
// ([ErrNextCANotPublished]). Until the retirement the controller reads the
// published bundle again at the switch and every Config.Resync, and
// publishes it again when another writer left a CA out; a next CA missing
// before the switch postpones the switch, and the retirement, to
// Propagation from then when that is later ([CASwitchPostponed],
// [Controller.SwitchAt]). The bundle records the switch
// ([SwitchAtAnnotation], with [NextCAAnnotation] naming the next CA), so a
// controller started again, or a replica, keeps a postponed switch and its
// retirement: the switch is the later of SignsAt and the record of the
// same next CA, never earlier, and never past the latest safe switch (the
// current CA's NotAfter less MaxLifetime, the next CA's NotAfter less
// MaxLifetime and Skew: a later record, another writer's, is capped there,
// [CASwitchRecordCapped]); the record goes at the retirement. A
// controller without a rotation keeps the published bundle's other valid
// CAs after its own. The bundle is labelled [CanaryingLabel]=live and
// [TrustDomainLabel]=<trust domain>; [Controller.CAs] says which CA signs,
// which is next and which retires.
//
// # Operating it
//
// Every log line about a request names it by namespace, name and UID.
// [Controller.Ready] answers a readiness probe: the requests are listed,
// the API server answered the last list of them (one list per
// Config.APICheckInterval, however often readiness is asked), and the CA
// key signed within Config.CAProbeInterval, a certificate or a probe
// digest signed when the check asks. [Config.Observe] receives an [Event]
// for each request handled, each failed signature of the CA key, each
// trust bundle write and each step of a rotation;
// [Controller.OldestUndecided] is the backlog, when the oldest request not
// yet decided was created.
package podcertctl
