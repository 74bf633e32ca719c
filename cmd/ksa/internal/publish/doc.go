// Package publish writes an issuer's documents to where relying parties
// read them: an Azure Blob container, an S3 bucket, a Google Cloud Storage
// bucket or a local directory, each named by a URL ([ParseLocation]):
//
//	https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX
//	s3://BUCKET/PREFIX
//	gs://BUCKET/PREFIX
//	file:///DIR, or a plain path
//
// [Open] returns the [Store] of a location. Every store writes one object
// with one request ([Store.Put]), with the content type and Cache-Control
// it is given, and reads one back ([Store.Get]) so that a publisher can
// see what is already there before it replaces anything.
// [Store.GetVersion] and [Store.PutIf] make a write conditional on what
// was read, in the same request: an object another writer changed since
// is left as it is ([ErrChanged]). Azure and S3 compare the ETag
// (If-Match; If-None-Match: * for an object read absent), GCS the
// generation (ifGenerationMatch), a directory the digest of the file,
// read while ksa holds the flock(2) of the location's directory (which
// every write of a directory takes). An S3-compatible server that
// ignores the conditions writes unconditionally.
// [Store.Preflight] checks, before anything is written, what can be
// checked without writing: that there are credentials, that the bucket or
// container exists and may be read and written, and whether the cloud
// serves it to anonymous readers.
//
// Credentials come from each cloud's default chain, as its own tools find
// them:
//
//   - Azure: AZURE_STORAGE_CONNECTION_STRING when set (an account key or a
//     SAS, and the endpoint: Azurite in tests), else azidentity's
//     DefaultAzureCredential (environment, workload identity, managed
//     identity, the az CLI...);
//   - S3: the AWS SDK's default chain (environment, shared files, web
//     identity for IRSA, EC2/ECS roles); AWS_ENDPOINT_URL_S3 or
//     AWS_ENDPOINT_URL point it at another endpoint (an S3-compatible
//     server), addressed path-style;
//   - GCS: Google's application default credentials; STORAGE_EMULATOR_HOST
//     points it at an emulator, without credentials.
//
// Every failure is an [*Error] of one [Kind], matching its sentinel with
// errors.Is ([ErrNoCredentials], [ErrNotFound], [ErrPermissionDenied],
// [ErrNotPublic], [ErrLocation], [ErrNotBuilt], [ErrChanged], [ErrStore]), naming the
// location and the fix in the words of the cloud's own command-line tool.
//
// Each cloud's SDK is left out of a build with a tag (ksa_noazblob,
// ksa_nos3, ksa_nogcs): a location of that kind then fails with
// [ErrNotBuilt], naming the tag.
package publish
