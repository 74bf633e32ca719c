// Package signertest is a conformance harness for external JWT signers:
// it drives any signer (ksa's extsigner, or another implementation) over
// its Unix socket, as kube-apiserver does, and reports each check it made.
//
// Checks come in two levels. [LevelKubernetes] checks are the ones
// kube-apiserver makes itself: a signer failing one does not work at all
// (kube-apiserver refuses to start, or refuses its Sign answers).
// [LevelStrict] checks are the ones kube-apiserver skips, which ksa's
// signer passes: a signer failing one issues tokens that fail validation
// later (a signature in the wrong base64 alphabet, a kid FetchKeys does
// not publish, a signature by another key), or signs what it should
// refuse (claims that are not a base64url JSON object, claims that outlive
// its advertised maximum lifetime), or reports a data_timestamp that moves
// while its keys do not.
//
//	report, err := signertest.Run(ctx, signertest.Config{Address: "/run/signer.sock"})
//	if err != nil {
//		return err // a configuration Run refuses
//	}
//	fmt.Print(report) // PASS/FAIL/SKIP, level, check, why
//	switch err := report.Err(); {
//	case errors.Is(err, signertest.ErrKubernetes): // unusable: kube-apiserver refuses it
//	case errors.Is(err, signertest.ErrStrict): // usable, but its tokens may fail later
//	}
//
// Run sends Kubernetes-shaped claims for [Audience], issued now for
// [Lifetime], checks the answer (header, key, signature) as kube-apiserver
// does and stricter, and validates the assembled token with ksa's
// tokens.Validator and the keys FetchKeys published; then it sends claims
// a signer must refuse and expects InvalidArgument. Each call is bounded
// by Config.Timeout. [CheckHeader] checks a Sign answer's header alone,
// its error matching ErrKubernetes or ErrStrict as the failed checks do.
package signertest
