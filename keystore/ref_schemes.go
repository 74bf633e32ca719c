package keystore

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// schemeAttrs are the attributes each scheme's references may have.
var schemeAttrs = map[Scheme][]string{
	SchemePKCS11:   {"module-path", "token", "serial", "slot-id", "id", "object", "type", "pin-source", "max-sessions", "pin-value"},
	SchemeAWSKMS:   {"key-id", "name", "region", "profile", "credentials-file"},
	SchemeCloudKMS: {"resource", "credentials-file"},
	SchemeAzureKMS: {"name", "vault", "version", "hsm", "environment", "client-id", "tenant-id", "aad-endpoint", "client-secret"},
}

// secretAttrs are attributes whose values are secrets: refused, and
// never shown.
var secretAttrs = map[string]bool{"pin-value": true, "client-secret": true}

// schemeExample is a reference of each scheme, for messages.
var schemeExample = map[Scheme]string{
	SchemePKCS11:   "pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=LABEL;id=HEX;object=LABEL?pin-source=/path/to/pin",
	SchemeAWSKMS:   "awskms:key-id=KEY_ID;region=REGION",
	SchemeCloudKMS: "cloudkms:projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/N",
	SchemeAzureKMS: "azurekms:name=KEY;vault=VAULT",
}

// pinFix is the advice for a PIN written into a reference.
const pinFix = "put the PIN in a file only ksa's user can read and write pin-source=/path/to/file, or pin-source=env:NAME to read it from the environment variable NAME"

// envName is the name of an environment variable.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (r Ref) checkPKCS11(create bool) error {
	if r.has("pin-value") {
		return r.refError("has pin-value, a PIN that process listings and logs would show", pinFix)
	}
	var tokens []string
	for _, n := range []string{"token", "serial", "slot-id"} {
		if r.has(n) {
			tokens = append(tokens, n)
		}
	}
	switch {
	case len(tokens) == 0:
		return r.refError("names no token", "add token=LABEL (softhsm2-util --show-slots, or pkcs11-tool --list-slots, lists them), serial=SERIAL or slot-id=N")
	case len(tokens) > 1:
		return r.refError("names the token twice ("+strings.Join(tokens, " and ")+")", "keep one of token, serial and slot-id")
	}
	if v := r.Attr("slot-id"); r.has("slot-id") {
		if n, err := strconv.ParseUint(v, 10, 31); err != nil || n > 1<<31-1 {
			return r.refError(fmt.Sprintf("has slot-id %q, not a slot number", v), "give the slot's decimal number, e.g. slot-id=0")
		}
	}
	if v := r.Attr("max-sessions"); r.has("max-sessions") {
		if n, err := strconv.Atoi(v); err != nil || n < 2 || n > 1<<16 {
			return r.refError(fmt.Sprintf("has max-sessions %q", v), "give a number of sessions from 2 to 65536, or leave it out (1024)")
		}
	}
	if v := r.Attr("type"); r.has("type") && v != "private" {
		return r.refError(fmt.Sprintf("has type=%s, which names no signing key", v), "write type=private or leave it out")
	}
	if r.has("id") && len(r.ObjectID()) == 0 {
		return r.refError("has an id of no bytes", "write the key's CKA_ID in hex, e.g. id=0a0b")
	}
	switch {
	case create && !r.has("id") && !r.has("object"):
		return r.refError("names no key to create", "add id=HEX (its CKA_ID, e.g. id=0a0b) and object=LABEL (its CKA_LABEL)")
	case create && !r.has("object"):
		return r.refError("has no object, which a new key needs beside its id", "add object=LABEL (its CKA_LABEL)")
	case create && !r.has("id"):
		return r.refError("has no id, which a new key needs beside its object", "add id=HEX (its CKA_ID, e.g. id=0a0b)")
	case !r.has("id") && !r.has("object"):
		return r.refError("names no key", "add id=HEX (the key's CKA_ID, e.g. id=0a0b) or object=LABEL (its CKA_LABEL)")
	}
	src := r.Attr("pin-source")
	switch name, isEnv := strings.CutPrefix(src, "env:"); {
	case !r.has("pin-source"):
		return r.refError("has no pin-source", pinFix)
	case isEnv && !envName.MatchString(name):
		return r.refError(fmt.Sprintf("has pin-source=env:%s, not an environment variable name", name), "write pin-source=env:NAME with letters, digits and underscores")
	case !isEnv && pinPath(src) == "":
		return r.refError("has a pin-source that names no file", "write pin-source=/path/to/file or pin-source=file:///path/to/file")
	}
	return nil
}

// objectID reads a pkcs11 id as step-ca does: hex (0x prefix and colons
// dropped, an odd number of digits padded with a leading 0), or else the
// bytes as they are.
func objectID(v string) []byte {
	hx := strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X")
	hx = strings.ReplaceAll(hx, ":", "")
	if len(hx)%2 != 0 {
		hx = "0" + hx
	}
	if b, err := hex.DecodeString(hx); err == nil {
		return b
	}
	return []byte(v)
}

// awsRegion is the form of an AWS region.
var awsRegion = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

func (r Ref) checkAWSKMS(create bool) error {
	if v := r.Attr("region"); r.has("region") && !awsRegion.MatchString(v) {
		return r.refError(fmt.Sprintf("has region %q", v), "give an AWS region such as region=eu-west-1, or leave it out to use AWS_REGION")
	}
	if create {
		name := r.Attr("name")
		switch {
		case r.has("key-id"):
			return r.refError("names an existing key (key-id)", "name the new key with name=LABEL (its description and alias prefix); AWS KMS chooses its key ID")
		case !r.has("name"):
			return r.refError("has no name for the new key", "add name=LABEL (its description and alias prefix), e.g. name=ksa-service-accounts")
		case !awsAliasName.MatchString(name) || strings.HasPrefix(strings.ToLower(name), "aws"):
			return r.refError(fmt.Sprintf("has name %q, which cannot start an alias", name), "use letters, digits, '/', '_' and '-', not starting with aws, at most 200 characters")
		}
		return nil
	}
	id := r.Attr("key-id")
	switch {
	case r.has("name"):
		return r.refError("has a name, which only a key to create takes", "name the key by key-id=KEY_ID or its ARN")
	case !r.has("key-id"):
		return r.refError("names no key", "add key-id=KEY_ID or key-id=ARN (aws kms list-keys lists them)")
	case strings.HasPrefix(id, "alias/") || strings.Contains(id, ":alias/"):
		return r.refError("names an alias", "name the key itself by key-id=KEY_ID or its ARN, which aws kms describe-key prints: an alias can move to another key, and the AWS KMS client lowercases it")
	case strings.ToLower(id) != id:
		return r.refError("has a key-id with upper-case letters, which the AWS KMS client lowercases", "write the key ID or ARN in lower case, as AWS prints it")
	case !awsKeyID.MatchString(id):
		return r.refError(fmt.Sprintf("has key-id %q, not a key ID or key ARN", id), "give the key ID (1234abcd-12ab-34cd-56ef-1234567890ab, mrk-...) or its ARN (arn:aws:kms:REGION:ACCOUNT:key/KEY_ID)")
	}
	return nil
}

var (
	// awsAliasName is what may follow "alias/" in an AWS KMS alias.
	awsAliasName = regexp.MustCompile(`^[A-Za-z0-9/_-]{1,200}$`)
	// awsKeyID is a key ID or a key ARN, in lower case.
	awsKeyID = regexp.MustCompile(`^((arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/)?(mrk-)?[0-9a-f-]{1,64})$`)
)

// cloudKMSName is a Cloud KMS cryptoKey name, then its version.
var (
	cloudKMSKey     = `projects/[A-Za-z0-9._:-]{1,128}/locations/[a-zA-Z0-9_-]{1,63}/keyRings/[a-zA-Z0-9_-]{1,63}/cryptoKeys/[a-zA-Z0-9_-]{1,63}`
	cloudKMSKeyName = regexp.MustCompile(`^` + cloudKMSKey + `$`)
	cloudKMSVersion = regexp.MustCompile(`^` + cloudKMSKey + `/cryptoKeyVersions/[0-9]{1,20}$`)
)

// opaqueResource reads a cloudkms reference written without attributes.
func opaqueResource(rest string) (attr, error) {
	if strings.ContainsAny(rest, ";?&=") {
		return attr{}, &RefError{Reason: "adds attributes to a cloudkms name written without resource=",
			Fix: "write cloudkms:resource=projects/...;credentials-file=/path/to/credentials.json"}
	}
	if err := checkRaw(rest, "the name"); err != nil {
		return attr{}, err
	}
	v, err := unescape(rest)
	if err != nil {
		return attr{}, &RefError{Reason: "has a malformed %-escape in the name", Fix: "write a byte as % and two hex digits"}
	}
	return attr{name: "resource", value: v, raw: rest}, nil
}

func (r Ref) checkCloudKMS(create bool) error {
	name := r.Attr("resource")
	switch {
	case !r.has("resource"):
		return r.refError("names no key", "write "+schemeExample[SchemeCloudKMS])
	case create && cloudKMSVersion.MatchString(name):
		return r.refError("names a key version, which exists already", "name the cryptoKey without /cryptoKeyVersions/N: Cloud KMS numbers the new version")
	case create && !cloudKMSKeyName.MatchString(name):
		return r.refError("does not name a cryptoKey", "write cloudkms:projects/P/locations/L/keyRings/R/cryptoKeys/K")
	case !create && cloudKMSKeyName.MatchString(name):
		return r.refError("names a cryptoKey without its version", "add /cryptoKeyVersions/N (gcloud kms keys versions list --key K --keyring R --location L lists them)")
	case !create && !cloudKMSVersion.MatchString(name):
		return r.refError("does not name a key version", "write "+schemeExample[SchemeCloudKMS])
	}
	return nil
}

var (
	azureKeyName = regexp.MustCompile(`^[0-9A-Za-z-]{1,127}$`)
	azureVault   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{1,22}[A-Za-z0-9]$`)
	azureVersion = regexp.MustCompile(`^[0-9A-Za-z]{1,64}$`)
)

// azureEnvironments are the environment names Azure Key Vault clients
// know, upper-cased.
var azureEnvironments = []string{"PUBLIC", "AZURECLOUD", "AZUREPUBLICCLOUD", "USGOV", "AZUREUSGOVERNMENT", "AZUREUSGOVERNMENTCLOUD", "CHINA", "AZURECHINACLOUD"}

func (r Ref) checkAzureKMS(create bool) error {
	switch {
	case r.has("client-secret"):
		return r.refError("holds a client secret, which process listings and logs would show",
			"set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET in ksa's environment, or use a managed or workload identity")
	case !r.has("name") || !r.has("vault"):
		return r.refError("lacks name or vault", "write "+schemeExample[SchemeAzureKMS])
	case !azureKeyName.MatchString(r.Attr("name")):
		return r.refError(fmt.Sprintf("has name %q, not a Key Vault key name", r.Attr("name")), "use letters, digits and '-', at most 127")
	case !azureVault.MatchString(r.Attr("vault")):
		return r.refError(fmt.Sprintf("has vault %q, not a Key Vault name", r.Attr("vault")), "give the vault's name (3 to 24 letters, digits and '-'), not its URL")
	case create && r.has("version"):
		return r.refError("has a version, which a new key does not have yet", "remove version")
	case r.has("version") && !azureVersion.MatchString(r.Attr("version")):
		return r.refError(fmt.Sprintf("has version %q", r.Attr("version")), "give the key version Key Vault printed (32 hex digits)")
	case r.has("hsm") && r.Attr("hsm") != "true" && r.Attr("hsm") != "false":
		return r.refError(fmt.Sprintf("has hsm=%s", r.Attr("hsm")), "write hsm=true or hsm=false")
	case r.has("environment") && !containsFold(azureEnvironments, r.Attr("environment")):
		return r.refError(fmt.Sprintf("has environment %q", r.Attr("environment")), "write environment=public, usgov or china")
	case r.has("aad-endpoint") && !strings.HasPrefix(r.Attr("aad-endpoint"), "https://"):
		return r.refError("has an aad-endpoint that is not https", "give the https:// URL of the Entra ID authority")
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
