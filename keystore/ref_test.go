package keystore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
)

const (
	softhsm = "/usr/lib/softhsm/libsofthsm2.so"
	awsKey  = "1234abcd-12ab-34cd-56ef-1234567890ab"
	gcpKey  = "projects/p-1/locations/global/keyRings/ring/cryptoKeys/sa"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		scheme keystore.Scheme
		// want is String(); empty means the input itself.
		want  string
		path  string
		attrs map[string]string
		id    []byte
	}{
		{name: "relative path", in: "sa.key", scheme: keystore.SchemeFile, path: "sa.key"},
		{name: "absolute path", in: "/etc/kubernetes/pki/sa.key", scheme: keystore.SchemeFile, path: "/etc/kubernetes/pki/sa.key"},
		{name: "Windows drive", in: `C:\keys\sa.key`, scheme: keystore.SchemeFile, path: `C:\keys\sa.key`},
		{name: "file named like a URI", in: "./pkcs12:sa.key", scheme: keystore.SchemeFile, path: "./pkcs12:sa.key"},
		{name: "colon after a slash", in: "keys/a:b.key", scheme: keystore.SchemeFile, path: "keys/a:b.key"},
		{name: "pkcs11, step-ca's form", in: "pkcs11:module-path=" + softhsm + ";token=ksa;id=0a0b;object=sa?pin-source=/run/secrets/pin",
			scheme: keystore.SchemePKCS11, attrs: map[string]string{"module-path": softhsm, "token": "ksa", "object": "sa", "pin-source": "/run/secrets/pin"}, id: []byte{0x0a, 0x0b}},
		{name: "pkcs11, scheme in upper case, raw id bytes", in: "PKCS11:token=ksa;id=%0a%0b?pin-source=env:HSM_PIN",
			want: "pkcs11:token=ksa;id=%0a%0b?pin-source=env:HSM_PIN", scheme: keystore.SchemePKCS11, id: []byte{0x0a, 0x0b}},
		{name: "pkcs11 id with 0x", in: "pkcs11:token=ksa;id=0x0A0b;pin-source=/p", scheme: keystore.SchemePKCS11, id: []byte{0x0a, 0x0b}},
		{name: "pkcs11 id with colons", in: "pkcs11:token=ksa;id=0a:0b;pin-source=/p", scheme: keystore.SchemePKCS11, id: []byte{0x0a, 0x0b}},
		{name: "pkcs11 id of decimal-looking digits is hex", in: "pkcs11:token=ksa;id=1001;pin-source=/p", scheme: keystore.SchemePKCS11, id: []byte{0x10, 0x01}},
		{name: "pkcs11 id of an odd number of digits", in: "pkcs11:token=ksa;id=abc;pin-source=/p", scheme: keystore.SchemePKCS11, id: []byte{0x0a, 0xbc}},
		{name: "pkcs11 id that is not hex", in: "pkcs11:token=ksa;id=sa-key;pin-source=/p", scheme: keystore.SchemePKCS11, id: []byte("sa-key")},
		{name: "pkcs11 object with an escaped space", in: "pkcs11:serial=1a2b;object=my%20key;type=private?pin-source=file:///run/pin",
			scheme: keystore.SchemePKCS11, attrs: map[string]string{"serial": "1a2b", "object": "my key", "type": "private"}},
		{name: "pkcs11 slot and sessions", in: "pkcs11:slot-id=0;object=sa;max-sessions=16?pin-source=/p",
			scheme: keystore.SchemePKCS11, attrs: map[string]string{"slot-id": "0", "max-sessions": "16"}},
		{name: "awskms key ID", in: "awskms:key-id=" + awsKey + ";region=eu-west-1", scheme: keystore.SchemeAWSKMS,
			attrs: map[string]string{"key-id": awsKey, "region": "eu-west-1"}},
		{name: "awskms ARN", in: "awskms:key-id=arn:aws:kms:eu-west-2:111122223333:key/" + awsKey, scheme: keystore.SchemeAWSKMS},
		{name: "awskms multi-region key", in: "awskms:key-id=mrk-0123456789abcdef0123456789abcdef;profile=prod", scheme: keystore.SchemeAWSKMS},
		{name: "cloudkms name", in: "cloudkms:" + gcpKey + "/cryptoKeyVersions/1", scheme: keystore.SchemeCloudKMS,
			attrs: map[string]string{"resource": gcpKey + "/cryptoKeyVersions/1"}},
		{name: "cloudkms attributes", in: "cloudkms:resource=" + gcpKey + "/cryptoKeyVersions/12;credentials-file=/etc/gcp.json", scheme: keystore.SchemeCloudKMS,
			attrs: map[string]string{"resource": gcpKey + "/cryptoKeyVersions/12", "credentials-file": "/etc/gcp.json"}},
		{name: "azurekms", in: "azurekms:name=sa;vault=my-vault?version=0123456789abcdef0123456789abcdef&hsm=true", scheme: keystore.SchemeAzureKMS,
			attrs: map[string]string{"name": "sa", "vault": "my-vault", "version": "0123456789abcdef0123456789abcdef", "hsm": "true"}},
		{name: "azurekms environment and client", in: "azurekms:name=sa;vault=my-vault;environment=USGov;client-id=c;tenant-id=t", scheme: keystore.SchemeAzureKMS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := keystore.ParseRef(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.scheme, r.Scheme())
			want := tt.want
			if want == "" {
				want = tt.in
			}
			assert.Equal(t, want, r.String())
			assert.Equal(t, tt.path, r.Path())
			for k, v := range tt.attrs {
				assert.Equal(t, v, r.Attr(k), k)
			}
			if tt.id != nil {
				assert.Equal(t, tt.id, r.ObjectID())
			}
			again, err := keystore.ParseRef(r.String())
			require.NoError(t, err)
			assert.Equal(t, r, again, "String parses back to the same reference")
		})
	}
}

// refErrorCase is a refused reference: the phrase its reason holds, and
// the reference the error shows ("" when it must show none).
type refErrorCase struct {
	name, in string
	reason   string
	shown    string
}

func (tt refErrorCase) check(t *testing.T, r keystore.Ref, err error) {
	t.Helper()
	require.ErrorIs(t, err, keystore.ErrInvalidRef)
	var re *keystore.RefError
	require.True(t, errors.As(err, &re))
	assert.Contains(t, re.Reason, tt.reason)
	assert.NotEmpty(t, re.Fix)
	assert.Equal(t, tt.shown, re.Ref)
	assert.Zero(t, r)
	for _, secret := range []string{"4321", "s3cret"} {
		assert.NotContains(t, err.Error(), secret)
	}
	assert.NotContains(t, err.Error(), "\n")
}

func TestParseRefErrors(t *testing.T) {
	tests := []refErrorCase{
		{name: "empty", in: "", reason: "is empty"},
		{name: "over the limit", in: "pkcs11:object=" + strings.Repeat("a", keystore.MaxRefBytes), reason: "over the 4096-byte limit"},
		{name: "NUL in a path", in: "sa\x00.key", reason: "NUL"},
		{name: "unknown scheme", in: "pkcs12:token=ksa?pin-value=4321", reason: `unknown scheme "pkcs12"`},
		{name: "file scheme", in: "file:sa.key", reason: `unknown scheme "file"`},
		{name: "no attributes", in: "pkcs11:", reason: "without attributes"},
		{name: "pin-value", in: "pkcs11:token=ksa;id=01?pin-value=4321", reason: "has pin-value",
			shown: "pkcs11:token=ksa;id=01?pin-value=REDACTED"},
		{name: "pin-value in the path", in: "pkcs11:token=ksa;id=01;pin-value=4321", reason: "has pin-value",
			shown: "pkcs11:token=ksa;id=01;pin-value=REDACTED"},
		{name: "misspelt pin-value", in: "pkcs11:token=ksa;id=01;Pin-Value=4321?pin-source=/p", reason: `attribute "Pin-Value" that ksa does not read`},
		{name: "escaped pin-value", in: "pkcs11:token=ksa;id=01?pin%2Dvalue=4321", reason: "has pin-value",
			shown: "pkcs11:token=ksa;id=01?pin%2Dvalue=REDACTED"},
		{name: "raw & before the query", in: "pkcs11:token=ksa;object=a&pin-value=4321?pin-source=/p", reason: `raw "&"`},
		{name: "raw ; in the query", in: "pkcs11:token=ksa;id=01?pin-source=/p;pin-value=4321", reason: `raw ";"`},
		{name: "empty attribute", in: "pkcs11:token=ksa;;id=01?pin-source=/p", reason: "empty attribute #2"},
		{name: "trailing separator", in: "pkcs11:token=ksa;id=01;?pin-source=/p", reason: "empty attribute #3"},
		{name: "malformed escape", in: "pkcs11:token=ksa;id=%zz4321?pin-source=/p", reason: "malformed %-escape in attribute #2"},
		{name: "attribute without =", in: "pkcs11:token=ksa;4321?pin-source=/p", reason: `attribute #2 without "="`},
		{name: "space", in: "pkcs11:token=ksa;object=a b?pin-source=/p", reason: "space or control character"},
		{name: "raw +", in: "pkcs11:token=ksa;object=a+b?pin-source=/p", reason: `raw '+'`},
		{name: "raw #", in: "pkcs11:token=ksa;object=a#b?pin-source=/p", reason: `raw '#'`},
		{name: "attribute twice", in: "pkcs11:token=ksa;id=01;id=02?pin-source=/p", reason: "gives id twice",
			shown: "pkcs11:token=ksa;id=01;id=02?pin-source=/p"},
		{name: "empty value", in: "pkcs11:token=;id=01?pin-source=/p", reason: "has an empty token", shown: "pkcs11:token=;id=01?pin-source=/p"},
		{name: "no token", in: "pkcs11:module-path=/m.so;id=01?pin-source=/p", reason: "names no token", shown: "pkcs11:module-path=/m.so;id=01?pin-source=/p"},
		{name: "two tokens", in: "pkcs11:token=a;serial=b;id=01?pin-source=/p", reason: "names the token twice (token and serial)",
			shown: "pkcs11:token=a;serial=b;id=01?pin-source=/p"},
		{name: "no key", in: "pkcs11:token=ksa?pin-source=/p", reason: "names no key", shown: "pkcs11:token=ksa?pin-source=/p"},
		{name: "no pin-source", in: "pkcs11:token=ksa;id=01", reason: "has no pin-source", shown: "pkcs11:token=ksa;id=01"},
		{name: "bad env name", in: "pkcs11:token=ksa;id=01?pin-source=env:1PIN", reason: "not an environment variable name",
			shown: "pkcs11:token=ksa;id=01?pin-source=env:1PIN"},
		{name: "file URI of another host", in: "pkcs11:token=ksa;id=01?pin-source=file://host/p", reason: "names no file",
			shown: "pkcs11:token=ksa;id=01?pin-source=file://host/p"},
		{name: "empty id", in: "pkcs11:token=ksa;id=0x?pin-source=/p", reason: "id of no bytes", shown: "pkcs11:token=ksa;id=0x?pin-source=/p"},
		{name: "slot-id not a number", in: "pkcs11:slot-id=x;id=01?pin-source=/p", reason: `slot-id "x"`, shown: "pkcs11:slot-id=x;id=01?pin-source=/p"},
		{name: "one session", in: "pkcs11:token=ksa;id=01;max-sessions=1?pin-source=/p", reason: `max-sessions "1"`,
			shown: "pkcs11:token=ksa;id=01;max-sessions=1?pin-source=/p"},
		{name: "certificate type", in: "pkcs11:token=ksa;id=01;type=cert?pin-source=/p", reason: "type=cert", shown: "pkcs11:token=ksa;id=01;type=cert?pin-source=/p"},
		{name: "unknown pkcs11 attribute", in: "pkcs11:token=ksa;id=01;model=SoftHSM?pin-source=/p", reason: `attribute "model"`},
		{name: "awskms bare key ID", in: "awskms:" + awsKey, reason: `attribute #1 without "="`},
		{name: "awskms alias", in: "awskms:key-id=alias/ksa", reason: "names an alias", shown: "awskms:key-id=alias/ksa"},
		{name: "awskms alias ARN", in: "awskms:key-id=arn:aws:kms:eu-west-2:111122223333:alias/ksa", reason: "names an alias",
			shown: "awskms:key-id=arn:aws:kms:eu-west-2:111122223333:alias/ksa"},
		{name: "awskms upper case", in: "awskms:key-id=" + strings.ToUpper(awsKey), reason: "upper-case", shown: "awskms:key-id=" + strings.ToUpper(awsKey)},
		{name: "awskms not a key ID", in: "awskms:key-id=my-key", reason: `key-id "my-key"`, shown: "awskms:key-id=my-key"},
		{name: "awskms no key", in: "awskms:region=eu-west-1", reason: "names no key", shown: "awskms:region=eu-west-1"},
		{name: "awskms region", in: "awskms:key-id=" + awsKey + ";region=EU", reason: `region "EU"`, shown: "awskms:key-id=" + awsKey + ";region=EU"},
		{name: "awskms name", in: "awskms:key-id=" + awsKey + ";name=sa", reason: "has a name", shown: "awskms:key-id=" + awsKey + ";name=sa"},
		{name: "cloudkms without a version", in: "cloudkms:" + gcpKey, reason: "without its version", shown: "cloudkms:" + gcpKey},
		{name: "cloudkms not a key", in: "cloudkms:projects/p/locations/global", reason: "does not name a key version", shown: "cloudkms:projects/p/locations/global"},
		{name: "cloudkms name with attributes", in: "cloudkms:" + gcpKey + "/cryptoKeyVersions/1;credentials-file=/c.json", reason: "without resource="},
		{name: "cloudkms no resource", in: "cloudkms:credentials-file=/c.json", reason: "names no key", shown: "cloudkms:credentials-file=/c.json"},
		{name: "azurekms client secret", in: "azurekms:name=sa;vault=my-vault;client-id=c;tenant-id=t;client-secret=s3cret", reason: "client secret",
			shown: "azurekms:name=sa;vault=my-vault;client-id=c;tenant-id=t;client-secret=REDACTED"},
		{name: "azurekms no vault", in: "azurekms:name=sa", reason: "lacks name or vault", shown: "azurekms:name=sa"},
		{name: "azurekms vault URL", in: "azurekms:name=sa;vault=https://v.vault.azure.net/", reason: "not a Key Vault name",
			shown: "azurekms:name=sa;vault=https://v.vault.azure.net/"},
		{name: "azurekms key name", in: "azurekms:name=s_a;vault=my-vault", reason: "not a Key Vault key name", shown: "azurekms:name=s_a;vault=my-vault"},
		{name: "azurekms hsm", in: "azurekms:name=sa;vault=my-vault;hsm=yes", reason: "hsm=yes", shown: "azurekms:name=sa;vault=my-vault;hsm=yes"},
		{name: "azurekms environment", in: "azurekms:name=sa;vault=my-vault;environment=german", reason: `environment "german"`,
			shown: "azurekms:name=sa;vault=my-vault;environment=german"},
		{name: "azurekms http authority", in: "azurekms:name=sa;vault=my-vault;aad-endpoint=http://login", reason: "not https",
			shown: "azurekms:name=sa;vault=my-vault;aad-endpoint=http://login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := keystore.ParseRef(tt.in)
			tt.check(t, r, err)
		})
	}
}

func TestParseNewKeyRef(t *testing.T) {
	for _, in := range []string{
		"sa.key",
		"pkcs11:module-path=" + softhsm + ";token=ksa;id=0a0b;object=sa?pin-source=/run/pin",
		"awskms:name=ksa-service-accounts;region=eu-west-1",
		"cloudkms:" + gcpKey,
		"cloudkms:resource=" + gcpKey + ";credentials-file=/c.json",
		"azurekms:name=sa;vault=my-vault;hsm=true",
	} {
		t.Run(in, func(t *testing.T) {
			r, err := keystore.ParseNewKeyRef(in)
			require.NoError(t, err)
			assert.Equal(t, in, r.String())
		})
	}
	errs := []refErrorCase{
		{name: "pkcs11 without object", in: "pkcs11:token=ksa;id=01?pin-source=/p", reason: "has no object", shown: "pkcs11:token=ksa;id=01?pin-source=/p"},
		{name: "pkcs11 without id", in: "pkcs11:token=ksa;object=sa?pin-source=/p", reason: "has no id", shown: "pkcs11:token=ksa;object=sa?pin-source=/p"},
		{name: "pkcs11 without either", in: "pkcs11:token=ksa?pin-source=/p", reason: "names no key to create", shown: "pkcs11:token=ksa?pin-source=/p"},
		{name: "awskms key-id", in: "awskms:key-id=" + awsKey, reason: "names an existing key", shown: "awskms:key-id=" + awsKey},
		{name: "awskms without a name", in: "awskms:region=eu-west-1", reason: "has no name", shown: "awskms:region=eu-west-1"},
		{name: "awskms reserved name", in: "awskms:name=aws-sa", reason: "cannot start an alias", shown: "awskms:name=aws-sa"},
		{name: "cloudkms version", in: "cloudkms:" + gcpKey + "/cryptoKeyVersions/1", reason: "names a key version", shown: "cloudkms:" + gcpKey + "/cryptoKeyVersions/1"},
		{name: "cloudkms key ring", in: "cloudkms:projects/p/locations/global/keyRings/r", reason: "does not name a cryptoKey", shown: "cloudkms:projects/p/locations/global/keyRings/r"},
		{name: "azurekms version", in: "azurekms:name=sa;vault=my-vault;version=01", reason: "has a version", shown: "azurekms:name=sa;vault=my-vault;version=01"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			r, err := keystore.ParseNewKeyRef(tt.in)
			tt.check(t, r, err)
		})
	}
}

func TestRefWith(t *testing.T) {
	tests := []struct {
		name, in     string
		attr, value  string
		want         string
		parseCreated bool
	}{
		{name: "awskms key created", in: "awskms:name=sa;region=eu-west-1", attr: "key-id", value: awsKey,
			want: "awskms:name=sa;region=eu-west-1;key-id=" + awsKey},
		{name: "attribute removed", in: "pkcs11:token=ksa;id=01;object=sa?pin-source=/p", attr: "object",
			want: "pkcs11:token=ksa;id=01?pin-source=/p", parseCreated: true},
		{name: "cloudkms version", in: "cloudkms:" + gcpKey, attr: "resource", value: gcpKey + "/cryptoKeyVersions/1",
			want: "cloudkms:" + gcpKey + "/cryptoKeyVersions/1", parseCreated: true},
		{name: "cloudkms name gains an attribute", in: "cloudkms:" + gcpKey + "/cryptoKeyVersions/1", attr: "credentials-file", value: "/etc/gcp.json",
			want: "cloudkms:resource=" + gcpKey + "/cryptoKeyVersions/1;credentials-file=/etc/gcp.json", parseCreated: true},
		{name: "value escaped", in: "azurekms:name=sa;vault=v-1", attr: "version", value: "a b&c",
			want: "azurekms:name=sa;vault=v-1;version=a%20b%26c"},
		{name: "query attribute replaced in place", in: "pkcs11:token=ksa;object=sa?pin-source=/p", attr: "pin-source", value: "env:PIN",
			want: "pkcs11:token=ksa;object=sa?pin-source=env:PIN", parseCreated: true},
		{name: "file reference unchanged", in: "sa.key", attr: "id", value: "01", want: "sa.key", parseCreated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := keystore.ParseNewKeyRef(tt.in)
			if err != nil {
				r, err = keystore.ParseRef(tt.in)
			}
			require.NoError(t, err)
			got := r.With(tt.attr, tt.value)
			assert.Equal(t, tt.want, got.String())
			if tt.value != "" && r.Scheme() != keystore.SchemeFile {
				assert.Equal(t, tt.value, got.Attr(tt.attr))
			}
			if tt.parseCreated {
				_, err := keystore.ParseRef(got.String())
				require.NoError(t, err)
			}
			assert.Equal(t, tt.in, r.String(), "the original is unchanged")
		})
	}
}

// FuzzParseRef: ParseRef never panics; a reference it accepts prints
// back to itself (the scheme lower-cased); a refusal is one *RefError.
func FuzzParseRef(f *testing.F) {
	for _, seed := range []string{
		"sa.key", "C:\\sa.key", "./pkcs11:x",
		"pkcs11:module-path=" + softhsm + ";token=ksa;id=0a0b;object=sa?pin-source=/run/pin",
		"PKCS11:token=ksa;id=%0a%0b?pin-source=env:PIN&max-sessions=4",
		"pkcs11:token=ksa;id=01?pin-value=1234", "pkcs11:token=ksa;;id=%zz", "pkcs11:token=a&b;id=0x",
		"awskms:key-id=" + awsKey + ";region=eu-west-1", "awskms:key-id=alias/A",
		"cloudkms:" + gcpKey + "/cryptoKeyVersions/1", "cloudkms:resource=" + gcpKey + "/cryptoKeyVersions/1;credentials-file=/c",
		"azurekms:name=sa;vault=my-vault?version=01&hsm=true", "azurekms:name=sa;vault=v1;client-secret=x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (keystore.Ref, error){keystore.ParseRef, keystore.ParseNewKeyRef} {
			r, err := parse(s)
			if err != nil {
				var re *keystore.RefError
				require.True(t, errors.As(err, &re), "%T %v", err, err)
				require.Zero(t, r)
				continue
			}
			again, err := parse(r.String())
			require.NoError(t, err, "%q prints as %q", s, r.String())
			require.Equal(t, r, again)
			require.Equal(t, r.String(), again.String())
			if r.Scheme() == keystore.SchemeFile {
				require.Equal(t, s, r.Path())
			}
		}
	})
}

// FuzzRefSecret: a pin-value or client-secret attribute, or a secret-like
// attribute ksa does not read (a misspelt PIN-VALUE=, Client-Secret=),
// wherever it is put in a reference, never shows in the reference's
// String or in an error; unparsable input around it included, and an
// earlier attribute that is empty or repeated (whose refusal quotes the
// reference).
func FuzzRefSecret(f *testing.F) {
	for _, seed := range [][3]string{
		{"pkcs11:token=ksa;id=01", ";", ""}, {"pkcs11:token=ksa;id=01", "?", "&pin-source=/p"},
		{"pkcs11:token=ksa;object=a%", ";", ""}, {"azurekms:name=sa;vault=my-vault", ";", ""},
		{"pkcs11:token=ksa?pin-source=/p", "&", ""}, {"cloudkms:" + gcpKey, ";", ""}, {"PKCS11:", "", ";id=01"},
		{"pkcs11:token=", ";", ""}, {"pkcs11:token=a;token=b", ";", ""}, {"pkcs11:token=ksa", ";", ";id="},
		{"azurekms:name=;vault=v", ";", ""}, {"azurekms:name=sa", ";", ";name=sa"}, {"awskms:key-id=", "?", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, prefix, sep, suffix string) {
		// The secret starts an attribute of its own: after a separator,
		// or right after the scheme.
		if sep != ";" && sep != "&" && sep != "?" && (sep != "" || !strings.HasSuffix(prefix, ":")) {
			return
		}
		const secret = "Zq9SECRETx7"
		if strings.Contains(prefix+suffix, "Zq9") {
			return
		}
		for _, name := range []string{"pin-value", "client-secret", "pin%2Dvalue",
			"PIN-VALUE", "Pin-Value", "pin_value", "pinvalue", "pin", "Client-Secret", "client_secret", "secret", "password"} {
			s := prefix + sep + name + "=" + secret + suffix
			for _, parse := range []func(string) (keystore.Ref, error){keystore.ParseRef, keystore.ParseNewKeyRef} {
				r, err := parse(s)
				if err != nil {
					require.NotContains(t, err.Error(), "Zq9", "input %q", s)
					continue
				}
				if r.Scheme() != keystore.SchemeFile {
					require.NotContains(t, r.String(), "Zq9", "input %q", s)
				}
			}
		}
	})
}
