// Package extsigner is an external JWT signer for kube-apiserver: the
// service-account signing keys stay in a KMS, an HSM or a process of their
// own, and never touch a control-plane disk.
//
// Since Kubernetes 1.34 (GA in 1.36) kube-apiserver started with
// --service-account-signing-endpoint=<socket> (in place of
// --service-account-key-file and --service-account-signing-key-file)
// builds each token's claims itself and asks a signer on a Unix socket to
// sign them, over the gRPC service ExternalJWTSigner of k8s.io/externaljwt:
// Sign (header and signature for the claims), FetchKeys (the keys tokens
// verify with, which kube-apiserver also publishes in its discovery
// documents) and Metadata (the longest token lifetime). This package is
// that signer's key ring, for any crypto.Signer: rotation, the checked
// Sign, the socket; it imports the standard library alone. Its gRPC
// server, which imports gRPC and k8s.io/externaljwt, is the grpcserver
// package below it.
//
// # A signer in four steps
//
//	ring, err := extsigner.NewRing(extsigner.RingConfig{
//		Keys: []extsigner.RingKey{{Signer: kmsKey, Role: extsigner.RolePrimary}},
//		MaxTokenLifetime: 24 * time.Hour, // Metadata; kube-apiserver caps tokens at it
//	})
//	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring})
//	l, err := extsigner.Listen(extsigner.ListenConfig{Address: "/run/ksa-signer/signer.sock"})
//	err = srv.Serve(l) // until srv.GracefulStop()
//
// and kube-apiserver runs with --service-account-signing-endpoint=/run/ksa-signer/signer.sock
// (it waits up to 60 s for the first FetchKeys, so either may start first).
// The server answers API v1 (kube-apiserver 1.34 and later) and v1alpha1
// (1.32 and 1.33).
//
// # Keys
//
// A [Ring] holds one primary key, which signs, and keys published for
// verification only: staged keys (the next primary), previous keys (until
// their tokens expire) and verify-only keys (see Migrating below). Each
// signing key is a crypto.Signer: an *ecdsa.PrivateKey or *rsa.PrivateKey
// read from a PEM file (keystore.LoadSigningKeyFile), or a KMS or HSM key. A
// signer that implements [ContextSigner] gets each request's context, so
// a KMS call kube-apiserver gave up on is abandoned; [SignerFunc] makes
// one from a KMS client's sign call:
//
//	kmsKey := extsigner.SignerFunc(pub, func(ctx context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
//		return kms.AsymmetricSign(ctx, keyVersion, digest) // ASN.1 for ECDSA, PKCS #1 v1.5 for RSA
//	})
//
// Keys are RSA (RS256) or ECDSA P-256, P-384, P-521 (ES256/384/512): the
// algorithms kube-apiserver accepts from a signer. Key IDs default to
// Kubernetes' own (jwks.KeyID), so tokens look like those of the in-tree
// signer.
//
// # What Sign guarantees
//
// kube-apiserver checks a Sign answer's header (exactly alg, kid and typ
// "JWT"; an allowed alg; a kid of at most 1024 bytes; a key not excluded
// from discovery) but neither verifies the signature nor that the kid is
// one FetchKeys publishes: a faulty signer's tokens fail only later, at
// every relying party. [Ring.Sign] answers nothing it has not checked:
//
//   - the claims are strict unpadded base64url of a strict JSON object
//     ([CheckClaims]), carry an exp no later than the ring's clock plus
//     MaxTokenLifetime and [MaxClockSkew], and make a token of at most
//     [MaxTokenBytes] (what ksa's validator accepts); otherwise
//     [ErrInvalidClaims] (InvalidArgument over gRPC), with the reason;
//   - the header is built once per key from the published key ID;
//   - no signature is returned that is not proven: a key of crypto/ecdsa
//     or crypto/rsa is the ring's own copy, its public half derived again
//     from its private half and a probe signature verified when the ring
//     takes it, so its signatures verify by construction (and cost no
//     verification each); the signature of any other signer (a KMS, an
//     HSM) is verified with the published key before it is returned: one
//     that signs with another key version, or returns a corrupt
//     signature, yields a [*SignError] matching [ErrSelfCheck] (Internal),
//     never a token;
//   - a key that fails (a KMS outage) yields a [*SignError] matching
//     [ErrSignerFailed] with its error (Unavailable; Canceled or
//     DeadlineExceeded when the request's context ended first);
//   - the key that signs and the keys FetchKeys publishes come from one
//     immutable version of the ring, so a kid is always published when it
//     signs.
//
// The grpcserver package refuses requests over its MaxRequestBytes before
// they are decoded (ResourceExhausted). The signertest package checks any
// signer's answers over its socket, as kube-apiserver does and stricter.
//
// # Rotation
//
// A rotation is three steps, each refused (with a [*RotationError] that
// says when it becomes safe) until it cannot break a live token:
//
//  1. Stage the new key: [Ring.Stage]. FetchKeys publishes it at once;
//     it does not sign yet.
//  2. Wait at least MinStaging (twice the refresh hint by default):
//     every kube-apiserver fetches the keys again within one refresh hint,
//     and its discovery documents are cached for at most one more, so
//     every relying party can know the key. Then make it the primary:
//     [Ring.Promote]. The old primary becomes a previous key, still
//     published.
//  3. Wait until every token the old key signed has expired:
//     MaxTokenLifetime, MaxClockSkew, tokens.DefaultLeeway and a second
//     after it stopped signing ([Ring.RetireAt]). Then remove it:
//     [Ring.Retire].
//
// Promote refuses a key published for less than MinStaging (ErrTooEarly),
// and a key that cannot sign (ErrInvalidTransition); Retire refuses the
// primary, and a previous key before its wait is over. A previous key may
// be promoted again at any time (a rollback); a staged key may be retired
// at any time (a rotation called off).
//
//	next, err := ring.Stage(newKMSKey, "")   // day 0
//	err = ring.Promote(next.KeyID)           // day 0 + MinStaging
//	err = ring.Retire(oldKeyID)              // + MaxTokenLifetime and two minutes
//
// The data_timestamp FetchKeys answers changes exactly when the published
// set does (Stage, AddVerifyOnly, Retire; not Promote), and only forward;
// kube-apiserver rebuilds its discovery documents when it moves. A ring's
// state survives a restart: save [Ring.Keys] (roles and times) and the
// KeySet's DataTimestamp, and give them back to [NewRing]. Do not lower
// MaxTokenLifetime while a key is previous: its tokens were signed under
// the old maximum.
//
// # Following a schedule: ring files
//
// A ring can instead follow a schedule written in advance
// (RingConfig.Schedule, [ScheduledKey]): each key with the times at which
// it is published, becomes the primary and is retired. The ring moves at
// those instants on its clock, so that every replica given the same
// schedule answers FetchKeys alike at every moment (keys, order, and a
// data timestamp taken from the schedule: the latest publication or
// retirement so far), and a schedule is refused unless each of its steps
// is safe (the waits of Promote and Retire above). [Ring.Update] replaces
// the schedule at once and whole, refusing one that would withdraw a key
// whose tokens may be live or make an unknown key sign.
//
// A ring file is that schedule as an operator writes it: one strict JSON
// object ([ParseRingFile]; the ksa command also reads it as YAML), keys
// named by reference and opened by the program's keystore.Opener
// ([RingFile.Open]):
//
//	# ring.json: sa-1 signs; sa-2 is published on March 1 and signs two
//	# minutes later; sa-1 is retired when its last tokens have expired; the
//	# key of --service-account-key-file before the move to the signer is
//	# published to kube-apiserver alone.
//	{
//	  "maxTokenLifetime": "24h",
//	  "keys": [
//	    {"key": "/etc/ksa/sa-1.key", "primary": "2027-01-01T00:00:00Z",
//	     "retired": "2027-03-02T09:04:01Z"},
//	    {"key": "pkcs11:token=ksa;object=sa-2?pin-source=/etc/ksa/pin",
//	     "published": "2027-03-01T09:00:00Z", "primary": "2027-03-01T09:02:00Z"},
//	    {"publicKeys": "/etc/kubernetes/pki/sa.pub"}
//	  ]
//	}
//
// Its members, every one optional but keys:
//
//	# member              meaning (default)
//	refreshHint           RingConfig.RefreshHint, a Go duration ("1m")
//	maxTokenLifetime      RingConfig.MaxTokenLifetime ("24h")
//	minStaging            RingConfig.MinStaging (twice refreshHint)
//	keys[].key            a signing key's reference, for the Opener
//	keys[].publicKeys     or: a PEM file of public keys, verify-only
//	keys[].kid            the key ID (Kubernetes' key ID of the key)
//	keys[].published      RFC 3339 (a signing key: its primary time;
//	                      public keys: from the start)
//	keys[].primary        when the key starts signing (never)
//	keys[].retired        when it is withdrawn (never)
//	keys[].publishInDiscovery
//	                      public keys in discovery too (false: excluded,
//	                      for kube-apiserver alone)
//
// [RingFile.Rotate] writes the next ring file of a rotation, and
// [RingFile.AppendJSON] the file itself.
//
// A [RingFileWatcher] keeps a ring in step with its ring file, as a signer
// needs: it reads the file every interval without ever waiting on it
// ([ReadRingFile]: a regular file, at most MaxRingFileBytes), applies a
// changed file with Update, and leaves the ring as it was when the file
// is refused. A refused file is tried again when it, or a PIN file its
// keys name, changes; unchanged, after a back-off (a schedule too early:
// when it becomes safe), and never for a refusal the caller says retrying
// makes worse (RingFileWatcherConfig.NoRetry: a PIN refused, toward a
// token's lockout). Its hooks report each reload and each check, for logs
// and metrics, and [RingFileWatcher.Stalled] checks that stopped ending.
//
//	failing := false
//	w, err := extsigner.NewRingFileWatcher(ctx, extsigner.RingFileWatcherConfig{
//		Path:     "/etc/ksa/ring.json", // keys: PEM files, or Opener's references
//		OnReload: func(r extsigner.RingReload) { failing = r.Err != nil },
//	})
//	if err == nil {
//		go w.Watch(ctx)
//		ring := w.Ring() // what the signer serves
//		_ = ring
//	}
//
// # Migrating, and legacy tokens
//
// [Ring.AddVerifyOnly] publishes a key that never signs: the public key of
// kube-controller-manager's legacy Secret-based tokens, with
// ExcludeFromDiscovery so that only kube-apiserver uses it (a relying
// party never should), or the key of --service-account-key-file when a
// cluster moves to the signer, so that its tokens keep validating. The
// ring cannot know when such tokens expire (legacy ones never do):
// Retire removes a verify-only key whenever asked.
//
// # Serving
//
// [Listen] listens on a socket file (mode 0600 by default; a stale file
// left by a signer that is gone is replaced, a live one is not). Put it in
// a directory of its own that only root (or the signer's user) can write,
// mode 0700, such as /run/ksa-signer/signer.sock: kube-apiserver does not
// authenticate the signer it dials, so whoever holds the socket's name
// while the signer is not listening (before it starts, while it restarts
// or is upgraded, after it crashed) is kube-apiserver's signer: it
// publishes that process's key and has it sign tokens for any service
// account. Listen therefore refuses a socket file whose directory another
// user can write, or whose directories above another user could rename
// ([ErrSharedSocketDirectory]), unless ListenConfig.InsecureSharedDirectory
// says the directory is reachable by trusted processes only (an emptyDir
// volume, mode 0777, that only the signer's and kube-apiserver's
// containers mount).
//
// An address "@name" is a Linux abstract socket, which
// --service-account-signing-endpoint accepts too. Its name has no owner
// and no permissions: the first process of the network namespace to bind
// it serves it, so any local user can take the signer's place as above,
// and the signer then fails to start with "address already in use".
// Listen refuses one unless ListenConfig.InsecureAbstractSocket is set.
// Every process of the network namespace can also connect to one, so an
// abstract socket also needs ListenConfig.AllowedUIDs, the users that may
// connect (kube-apiserver's; KEP-740 advises this check for a signer in a
// pod): each peer's user ID is read (SO_PEERCRED) and other connections
// are closed at once. ListenConfig.InsecureAllowAnyPeer lifts that
// requirement where nothing else shares the network namespace. The peer
// check protects the clients' side only: it cannot stop a squatter from
// binding the name.
//
//	l, err := extsigner.Listen(extsigner.ListenConfig{
//		Address:     "/run/ksa-signer/signer.sock", // directory: root's, 0700
//		AllowedUIDs: []uint32{0},                   // kube-apiserver runs as root
//	})
//
// # Health
//
// [Ring.Probe] signs a fixed input (never a token) with the primary and
// verifies it, whatever the key: whether the key store answers, for a
// health check (the grpcserver package probes while it serves).
//
// # Errors
//
// A configuration NewRing or Listen refuses is a *ksa.ConfigError
// (ksa.ErrInvalidConfig; a socket's directory refused matches
// [ErrSharedSocketDirectory] too); a key the ring refuses matches
// ksa.ErrInvalidConfig too (and jwks.ErrUnsupportedKey when jwks refuses
// it), or [ErrDuplicateKeyID], [ErrTooManyKeys], [ErrUnknownKeyID]. A
// rotation step or an Update refused is a [*RotationError] (ReadyAt, for
// [ErrTooEarly]); a ring file refused matches [ErrInvalidRingFile] (one
// that cannot be read is a [*RingFileReadError]); claims
// refused match [ErrInvalidClaims]; a signing key that failed is a
// [*SignError] (KeyID).
package extsigner
