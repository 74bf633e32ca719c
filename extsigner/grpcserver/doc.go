// Package grpcserver serves an [extsigner.Ring] to kube-apiserver over
// gRPC: the ExternalJWTSigner service of k8s.io/externaljwt, API v1
// (kube-apiserver 1.34 and later) and v1alpha1 (1.32 and 1.33), on the
// socket [extsigner.Listen] makes. It is the one package of the signer
// that imports gRPC; the ring, its rotation and its checks build without.
//
//	ring, err := extsigner.NewRing(extsigner.RingConfig{
//		Keys: []extsigner.RingKey{{Signer: kmsKey, Role: extsigner.RolePrimary}},
//	})
//	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring})
//	l, err := extsigner.Listen(extsigner.ListenConfig{Address: "/run/ksa-signer/signer.sock"})
//	err = srv.Serve(l) // until srv.GracefulStop()
//
// # Answers
//
// Sign answers with the ring's Sign: the header and the signature, or a
// status with the reason: InvalidArgument for claims the ring refuses
// (extsigner.ErrInvalidClaims), Unavailable for a signing key that failed
// (Canceled or DeadlineExceeded when the request's context ended first),
// Internal for a signature the published key rejects. FetchKeys answers
// the ring's KeySet (each key PKIX DER, verify-only keys with their
// exclusion from discovery), built once per published set; Metadata
// answers the ring's MaxTokenLifetime in seconds. A rotation step on the
// ring, a transition of its schedule or an Update shows in the next
// answer; neither FetchKeys nor Metadata ever calls the key store (the
// ring holds the public keys).
//
// Every Sign has a request ID ("5f3a9c1e-42": a random prefix per server
// and a counter), reported to Config.OnRequest and quoted at the end of
// the status message of a Sign that fails, which kube-apiserver logs: the
// two logs name the same request.
//
// # Health
//
// The standard gRPC health service (grpc.health.v1.Health) answers on the
// same socket, for the server ("") and for [HealthService]: SERVING
// exactly while [Server.Ready] holds, that is while the key store
// answered recently. While it serves, the server makes sure of it: every
// Config.ProbeInterval ([DefaultProbeInterval], ten seconds) that saw no
// successful Sign, it signs a probe with the primary key
// (extsigner.Ring.Probe, bounded by [ProbeTimeout]). A signature that
// succeeded keeps the server ready for [ReadyWindows] intervals; a signing
// key that fails makes it unready at once, with the key store's error,
// until a signature succeeds again. Probes are reported to
// Config.OnRequest as [MethodProbe].
//
// # Limits
//
// Requests over [MaxRequestBytes] are refused by gRPC (ResourceExhausted)
// before they are decoded; claims that fit but would make a token over
// extsigner.MaxTokenBytes are refused by the ring (InvalidArgument).
// [StreamWorkersPerCPU] goroutines per CPU take requests in turn.
//
// # A gRPC server of your own
//
// [Server.Register] registers the service on a gRPC server of the
// caller's, made with [ServerOptions] (the request limit and the
// workers); it registers the health service too, and [Server.CheckHealth]
// runs one round of probes for a caller that serves its own gRPC server.
// Config.OnRequest reports every request and probe (method, version,
// request ID, key, claims' subject and ID, status code, duration) for logs
// and metrics.
package grpcserver
