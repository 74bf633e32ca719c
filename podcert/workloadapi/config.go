package workloadapi

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/atomicdir"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// Defaults and limits.
const (
	// DefaultMaxClients bounds the streams open at once when
	// Config.MaxClients is zero.
	DefaultMaxClients = 1024
	// MaxRequestBytes is the largest request the server reads; gRPC
	// refuses a larger one (ResourceExhausted) before decoding it. The
	// X.509 requests are empty; the JWT ones, which are refused, carry
	// audiences.
	MaxRequestBytes = 16 << 10
	// MaxResponseBytes bounds an answer: gRPC clients refuse messages over
	// 4 MiB unless told otherwise, so an identity whose answer would not
	// fit (trust bundles of many large trust domains) is refused, and the
	// last one served stays.
	MaxResponseBytes = 4<<20 - 64<<10
	// MaxTrustDomains bounds Config.TrustBundles.
	MaxTrustDomains = 64
	// DefaultCredentialFileMode is the permission of the credential
	// folder's key file when Config.CredentialFileMode is zero: readable
	// by the sidecar's user only. Containers of the pod that run as
	// another user need a group (the pod's fsGroup) and 0640.
	DefaultCredentialFileMode fs.FileMode = 0o600
	// TrustBundleFileMode is the permission of the credential folder's
	// trust bundle files, which hold no secret.
	TrustBundleFileMode fs.FileMode = 0o644
)

// Config configures a [Server]. Credential and TrustBundles are required.
type Config struct {
	// Credential names the mounted pod certificate: its BundlePath (a
	// podCertificate projection's credentialBundlePath), or its KeyPath
	// and ChainPath. The certificate must carry a SPIFFE ID
	// (AnyCertificate is refused). OnReload, when set, sees every load as
	// podcert documents it; the server reports failed loads to OnError
	// too. Now defaults to Config.Now.
	Credential podcert.SourceConfig
	// TrustBundles are the trust bundles, one per trust domain: the
	// clusterTrustBundle projections of the signers whose certificates
	// the workload trusts. The bundle of the SVID's own trust domain goes
	// with the SVID; the others are federated bundles. At most
	// [MaxTrustDomains].
	TrustBundles []TrustBundle
	// CredentialFolder, when set, is a directory (SPIFFE_CREDENTIAL_FOLDER)
	// where the server also writes what it serves, in the layout of
	// SPIFFE's filesystem delivery, for software that reads files: see
	// [WriteFolder]. A folder that does not exist is created by the first
	// write (mode 0755); its parent must exist. It must not be a symbolic
	// link.
	CredentialFolder string
	// CredentialFileMode is the permission of the folder's key file. Zero
	// means [DefaultCredentialFileMode].
	CredentialFileMode fs.FileMode
	// MaxClients bounds the streams open at once; more are refused with
	// ResourceExhausted. Zero means [DefaultMaxClients].
	MaxClients int
	// OnError, when set, is called with every failure to load or serve a
	// credential or bundle (the last good one stays in service) and to
	// write the credential folder. It must be quick and safe for
	// concurrent use.
	OnError func(error)
	// OnUpdate, when set, is called after each change is published, with
	// the server's status then. It runs on the goroutine that called
	// [Server.Update] (the watcher's); it must be quick.
	OnUpdate func(Status)
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// TrustBundle is the trust bundle file of a trust domain.
type TrustBundle struct {
	// TrustDomain is the SPIFFE trust domain, such as cluster.local.
	TrustDomain string
	// Path is the PEM file (podcert.ParseTrustBundle's rules).
	Path string
}

// checkFolder checks the credential folder: a directory (not a link to
// one), or missing in a directory that exists (the first write creates
// it).
func checkFolder(folder string) error {
	st, err := os.Lstat(folder)
	if errors.Is(err, fs.ErrNotExist) {
		parent := filepath.Dir(folder)
		if st, err = os.Stat(parent); err == nil && !st.IsDir() {
			return configError("CredentialFolder", folder+" cannot be created: "+parent+" is not a directory", nil)
		}
		if err != nil {
			return configError("CredentialFolder", folder+" cannot be created", unwrapPath(err))
		}
		return nil
	}
	switch {
	case err != nil:
		return configError("CredentialFolder", folder+" cannot be used", unwrapPath(err))
	case st.Mode().Type() == fs.ModeSymlink:
		return configError("CredentialFolder", folder+" is a symbolic link: name the directory itself (a link in a shared volume is another writer's to swap)", nil)
	case !st.IsDir():
		return configError("CredentialFolder", folder+" is not a directory", nil)
	}
	return nil
}

// unwrapPath returns the system's error of a *fs.PathError, without the
// path the message names already.
func unwrapPath(err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err
	}
	return err
}

// configError reports a Config field NewServer refuses.
func configError(field, reason string, cause error) error {
	return &ksa.ConfigError{Field: "workloadapi.Config." + field, Reason: reason, Err: cause}
}

// check validates the configuration and fills in the defaults.
func (c *Config) check() error {
	if c.Credential.AnyCertificate {
		return configError("Credential", "has AnyCertificate set: a pod certificate with a SPIFFE ID is required", nil)
	}
	switch n := len(c.TrustBundles); {
	case n == 0:
		return configError("TrustBundles", "is required (at least the trust bundle of the SVID's trust domain)", nil)
	case n > MaxTrustDomains:
		return configError("TrustBundles", "holds more than "+strconv.Itoa(MaxTrustDomains)+" trust domains", nil)
	}
	seen := map[string]bool{}
	for i, b := range c.TrustBundles {
		field := "TrustBundles[" + strconv.Itoa(i) + "]"
		if err := x509sa.CheckTrustDomain(b.TrustDomain); err != nil {
			return configError(field+".TrustDomain", "is not a SPIFFE trust domain", err)
		}
		if seen[b.TrustDomain] {
			return configError(field+".TrustDomain", "names "+b.TrustDomain+" a second time (one bundle per trust domain)", nil)
		}
		seen[b.TrustDomain] = true
		if err := atomicdir.CheckName(b.TrustDomain + TrustBundleFileSuffix); err != nil {
			return configError(field+".TrustDomain", "cannot name a file of the credential folder", err)
		}
		if b.Path == "" {
			return configError(field+".Path", "is required", nil)
		}
	}
	if c.CredentialFolder != "" {
		if err := checkFolder(c.CredentialFolder); err != nil {
			return err
		}
	}
	if c.CredentialFileMode == 0 {
		c.CredentialFileMode = DefaultCredentialFileMode
	}
	if c.CredentialFileMode&^fs.ModePerm != 0 {
		return configError("CredentialFileMode", "holds more than permission bits", nil)
	}
	if c.MaxClients == 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.MaxClients < 0 {
		return configError("MaxClients", "is negative", nil)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Credential.Now == nil {
		c.Credential.Now = c.Now
	}
	return nil
}
