// Package publish puts an issuer where relying parties read it, checks it
// as they fetch it, and rotates its keys on a schedule: what "ksa issuer
// publish", "ksa issuer check" and "ksa issuer rotate --ring FILE --to URL"
// do from a shell, for a program (a Cluster API controller, an operator)
// to do from Go. The package is standard library only; each cloud's store
// is a leaf package (publish/azblob, publish/s3, publish/gcs), so that an
// importer builds only the SDKs of the stores it opens.
//
// # Stores
//
// A location is a URL ([ParseLocation]):
//
//	# the kinds of location
//	https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX   (Azure Blob, publish/azblob)
//	s3://BUCKET/PREFIX                                       (Amazon S3, publish/s3)
//	gs://BUCKET/PREFIX                                       (Google Cloud Storage, publish/gcs)
//	file:///DIR, or a plain path                             (a directory, this package)
//
// [Open] returns its [Store], through the opener of its kind that the
// caller gives (no registry: the caller's map):
//
//	loc, err := publish.ParseLocation("s3://oidc-example/cluster-1")
//	store, err := publish.Open(ctx, loc, publish.Config{Openers: map[publish.Kind]publish.Opener{
//		publish.S3: s3.Open, publish.Azure: azblob.Open, publish.GCS: gcs.Open,
//	}})
//
// A Store writes one object with one request (Put), reads one with its
// [Version] (Get, bounded), writes only if the object is still at the
// version read (PutIf: an ETag, a generation, a directory's digest under
// its flock(2)), and checks credentials and the bucket before anything is
// written (Preflight). Every failure is an [*Error] of one kind
// ([ErrLocation], [ErrNoOpener], [ErrNoCredentials], [ErrNotFound],
// [ErrPermissionDenied], [ErrChanged], [ErrStore]) with a fix in plain
// words or the cloud CLI's, the location called "the location".
//
// # Publishing and checking
//
// A [Site] is the discovery document and the key set oidc.Render writes.
// [Publish] writes it in the safe order, the key set (and its copies, such
// as azwi's jwks.json) first and the discovery document last, so that no
// reader finds a discovery document whose keys are missing, and says
// which key IDs the store published that the new key set drops
// (withdrawn: their tokens stop verifying once caches expire):
//
//	res, err := publish.Publish(ctx, store, &publish.Site{Discovery: docs.Discovery, KeySet: docs.JWKS}, publish.PublishOptions{})
//	rep := publish.Check(ctx, "https://oidc.example.com/cluster-1", publish.CheckOptions{Token: raw, Audience: publish.EntraAudience})
//	if !rep.OK() {
//		for _, f := range rep.Findings {
//			fmt.Printf("%s [%s] %s; fix: %s\n", f.Severity, f.Code, f.Problem, f.Fix)
//		}
//	}
//
// [Check] fetches the issuer anonymously over https as Entra ID, AWS and
// Google do and returns every [Finding] (severity, code, problem, fix):
// the discovery document, the issuer byte for byte, jwks_uri, content
// types, cache headers, private material, RS256 for Entra ID, and a
// token's iss, sub, aud, expiry and signature.
//
// # A scheduled rotation
//
// The issuer's keys are a ring file (extsigner.RingFile) that the
// external signers follow; a [Rotation] moves it one step per run, on the
// one model of package rotation: each [Rotation.Step] reads the ring file
// from a [RingStore] and every copy of the key set from the Store, asks
// rotation.Schedule.Next what is due, and makes at most that change:
//
//   - repair: the store publishes what the ring file publishes now (a
//     next key a copy lacks is published again, and waits again);
//   - publish the next key, made by RotationConfig.NewKey (the key store
//     makes keys: a file, an HSM or a KMS), added to the ring file
//     published and not signing, then to the store;
//   - make it sign Cadence.Delay later, once it has been published for the
//     propagation time (the time every signer takes to read the ring file);
//   - retire the old key once every token it signed has expired, then
//     withdraw it from the store;
//   - or wait, saying until when and why.
//
// The ring file is written only if unchanged since it was read (compare
// and swap: [FileRing] compares its bytes, a Secret its resourceVersion),
// the store's objects with PutIf: a concurrent writer is never
// overwritten, and the step fails with ErrChanged. A ring file and store
// it cannot move on from (a key the ring file never had, two next keys, a
// switch written too early) is a [*RotationError] before anything is
// written. A controller's reconcile:
//
//	rot, err := publish.NewRotation(publish.RotationConfig{
//		Ring:    ringStore, // a RingStore over a Secret, updated on its resourceVersion
//		Store:   store,
//		Keys:    opener, // opens the ring file's keys: files, or a key store
//		NewKey:  newKey,
//		Cadence: rotation.Cadence{Every: 90 * 24 * time.Hour, Delay: time.Minute, Propagation: 24 * time.Hour},
//	})
//	res, err := rot.Step(ctx)
//	if err == nil && res.Action.Kind == rotation.Wait {
//		requeueAfter := res.Action.At.Sub(res.Now)
//		_ = requeueAfter
//	}
//
// [Rotation.Plan] reads and decides without writing (a dry run). A
// ring file on disk is a [FileRing]; its Lock keeps a second writer out
// for the whole step (an flock(2) of FILE.lock beside it).
package publish
