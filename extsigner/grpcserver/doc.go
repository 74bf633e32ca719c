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
//	l, err := extsigner.Listen(extsigner.ListenConfig{Address: "/run/ksa/signer.sock"})
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
// ring shows in the next answer.
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
// workers). Config.OnRequest reports every request (method, version,
// key, status code, duration) for logs and metrics.
package grpcserver
