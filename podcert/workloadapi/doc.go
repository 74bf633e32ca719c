// Package workloadapi serves the SPIFFE Workload API from a pod's
// mounted pod certificate, so that software that speaks SPIFFE (Envoy,
// go-spiffe's clients, ghostunnel, meshes) uses Kubernetes' pod
// certificates without linking ksa: the X.509 calls of the
// SpiffeWorkloadAPI gRPC service, with the definitions go-spiffe ships,
// on a Unix socket, usually in a (native) sidecar sharing an emptyDir
// with the workload's containers. The ksa command's "ksa spiffe serve"
// is that sidecar. It is the one package of pod certificates that imports
// gRPC and go-spiffe; podcert builds without them.
//
//	srv, err := workloadapi.NewServer(workloadapi.Config{
//		Credential: podcert.SourceConfig{BundlePath: "/var/run/podcert/credentialbundle.pem"},
//		TrustBundles: []workloadapi.TrustBundle{
//			{TrustDomain: "cluster.local", Path: "/var/run/podcert/ca.pem"},
//		},
//		CredentialFolder: "/var/run/spiffe/credentials", // optional: files too
//	})
//	l, err := workloadapi.Listen(workloadapi.ListenConfig{Address: "unix:///var/run/spiffe/api.sock"})
//	go srv.Watch(ctx) // file events drive the updates
//	err = srv.Serve(l) // until srv.GracefulStop()
//
// The workload's containers set SPIFFE_ENDPOINT_SOCKET to the same
// address.
//
// # Answers
//
// FetchX509SVID streams one X509-SVID: the SPIFFE ID of the certificate
// (spiffe://<trust domain>/ns/<namespace>/sa/<name>, as podcert's signer
// and x509sa write it), its chain without a self-signed root, the PKCS#8
// key, the trust bundle of its trust domain, and the other trust domains'
// bundles as federated bundles. FetchX509Bundles streams every trust
// domain's bundle. Each stream sends the current answer when it opens
// (once an identity is loaded: a stream opened before waits for it) and
// again after every change, at once. JWT-SVIDs, JWT bundles and WIT-SVIDs
// are answered Unimplemented: a pod certificate is an X.509 identity, and
// no sound JWT-SVID can be made from it. Every request must carry the
// metadata [SecurityHeader] "true", or is refused with InvalidArgument.
//
// # Changes
//
// [Server.Watch] follows the files with file events (inotify on Linux),
// not a polling interval, and calls [Server.Update], which reads what
// changed (podcert's Source and TrustFile, stat on use) and publishes the
// new state to every stream. Nothing half-done is ever served: a
// credential or bundle that does not load (a torn write, a key that is
// not the chain's, a file over podcert's limits) or cannot be served (no
// SPIFFE ID, no trust bundle for its trust domain, a chain its own trust
// bundle does not verify, an answer over [MaxResponseBytes]) leaves the
// last good one in service; the failure goes to Config.OnError and is
// counted ([Status].Errors). A credential refused because its CA is not
// in the bundle yet is served as soon as the bundle holds it.
//
// # Files for software that reads files
//
// With Config.CredentialFolder, every state published is also written in
// the layout of SPIFFE's filesystem delivery ([WriteFolder]): the key
// with its chain in one file, one bundle file per trust domain, replaced
// all at once with a symbolic-link swap as the kubelet replaces a
// projected volume's files. The workload's containers set
// SPIFFE_CREDENTIAL_FOLDER to it. The folder is created when missing (in
// a fresh emptyDir), and written through directory descriptors only: a
// container sharing the volume cannot, by planting symbolic links, make
// the server write the key or change permissions anywhere else.
//
// # Limits and errors
//
// Requests over [MaxRequestBytes] are refused by gRPC; at most
// Config.MaxClients streams ([DefaultMaxClients]) are open at once;
// at most [MaxTrustDomains] trust domains. Refused configurations are a
// *ksa.ConfigError; [Server.Ready] matches [ErrNoIdentity] until an
// identity valid now is served; failures reported to OnError match
// podcert's sentinels (a file that does not load), [ErrRefused] or
// [ErrFolder].
package workloadapi
