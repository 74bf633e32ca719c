package workloadapi

import (
	"crypto/x509"
	"encoding/pem"
	"io/fs"

	"github.com/ksa-go/ksa/internal/atomicdir"
	"github.com/ksa-go/ksa/podcert"
)

// File names of SPIFFE's filesystem delivery.
const (
	// CredentialFileName holds the PKCS#8 private key, then the
	// X509-SVID's chain, leaf first, without the root.
	CredentialFileName = "credential-bundle.private-key.pem"
	// TrustBundleFileSuffix ends the name of each trust domain's bundle
	// file: <trust domain>.spiffe-trust-bundle.pem.
	TrustBundleFileSuffix = ".spiffe-trust-bundle.pem"
)

// FolderMode is the permission of the credential folder when
// [WriteFolder] creates it, and of the directory of each write in it:
// readers of the pod traverse them; the key file's own mode
// (Config.CredentialFileMode) is what keeps the key.
const FolderMode fs.FileMode = 0o755

// WriteFolder writes a credential and the trust bundles, by trust domain,
// into dir (SPIFFE_CREDENTIAL_FOLDER) in the layout of SPIFFE's
// filesystem delivery: [CredentialFileName] with mode keyMode, and one
// <trust domain>[TrustBundleFileSuffix] per trust domain, never merged,
// with mode [TrustBundleFileMode]. All files are replaced in one atomic
// step, as the kubelet replaces a projected volume's (a new hidden
// directory, then the ..data link swapped by a rename; dir/NAME links to
// ..data/NAME), so that a reader never sees a key of one write with a
// chain or bundle of another; a trust domain no longer written loses its
// file (de-federation). Files in dir that this layout did not make are
// never replaced: the write is refused. dir is created (mode
// [FolderMode]) when it does not exist; its parent must. dir may be in a
// volume other containers write (a pod's emptyDir): the write works on
// directory descriptors and never follows a link another writer puts at
// a name it uses (dir itself included, which must not be a link), the
// files are written and given their modes in a new directory only this
// user can open, which is opened to readers (FolderMode) and swapped in
// once complete. Errors match [ErrFolder].
func WriteFolder(dir string, keyMode fs.FileMode, cred *podcert.Credential, bundles map[string]*podcert.TrustBundle) error {
	key, err := x509.MarshalPKCS8PrivateKey(cred.Certificate.PrivateKey)
	if err != nil {
		return wrap(ErrFolder, dir+": the key cannot be encoded", err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})
	for _, der := range SVIDChain(cred) {
		data = append(data, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	files := map[string]atomicdir.File{CredentialFileName: {Data: data, Mode: keyMode}}
	for td, b := range bundles {
		var pemData []byte
		for _, c := range b.Certificates {
			pemData = append(pemData, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
		}
		files[td+TrustBundleFileSuffix] = atomicdir.File{Data: pemData, Mode: TrustBundleFileMode}
	}
	if err := atomicdir.Write(dir, FolderMode, files); err != nil {
		return wrap(ErrFolder, dir, err)
	}
	return nil
}
