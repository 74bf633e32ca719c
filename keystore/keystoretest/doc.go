// Package keystoretest holds the conformance checks every key store's
// opener passes ([Run]: open, sign with the key's JWT algorithm, sign from
// many goroutines, end with the caller's context, refuse bad references
// with the right sentinels, create, close), and runs the key stores that
// stand in for an HSM and AWS KMS in tests, each private to its test: a
// SoftHSM2 token ([StartSoftHSM]: its own configuration and token
// directory, a random PIN in a file, keys imported with softhsm2-util) and
// local-kms ([StartLocalKMS]: an independent implementation of the AWS KMS
// API on a port of its own, the AWS SDK's environment pointed at it, its
// log in a file). Both are programs, looked for where they are usually
// installed; when one is missing the test is skipped with the command that
// installs it ([SoftHSMInstall], [LocalKMSInstall]), in a first line such
// as
//
//	# a test's skip line
//	SoftHSM2: skipped (softhsm2-util not found); install it with apt-get install -y softhsm2
//
// which the runner of README.md's test command counts and repeats at the
// end of its output, and with CI=1 in the environment it fails instead, so
// that a CI job cannot lose the proof silently. [NewSoftHSM] and
// [NewLocalKMS] do the same outside tests and return errors matching
// [ErrNotInstalled].
//
//	hsm := keystoretest.StartSoftHSM(t)
//	err := hsm.Import(key, "0a0b", "sa")
//	ref := hsm.Ref("0a0b", "sa") // pkcs11:module-path=...;token=ksa;id=0a0b;object=sa?pin-source=...
//	store, err := pkcs11.NewStore(pkcs11.Config{})
//	keystoretest.Run(t, keystoretest.Config{Opener: store, Keys: []keystoretest.Key{{Ref: ref, Public: key.Public()}}, Secrets: []string{hsm.PIN}})
//
// SoftHSM2 reads SOFTHSM2_CONF when its module is first initialized in a
// process; a PKCS #11 library that keeps the module loaded keeps the token
// it found then. This package imports only the standard library and the
// module's core.
package keystoretest
