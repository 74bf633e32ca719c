package keystore

import (
	"context"
	"crypto"
	"errors"
	"io"
)

// Openers opens each reference with the opener of its scheme, and is the
// [Opener] (and [Creator]) a program passes to what needs keys: PEM files
// itself, with [LoadSigningKeyFile]; pkcs11, awskms, cloudkms and azurekms
// keys with the field of that name, typically a *Store of the package of
// that name under keystore/ (this package imports none of them, so a
// program builds only the stores it sets). A nil field refuses its
// scheme's references with a *[StoreError] matching
// [ErrUnsupportedStore]. The zero value opens PEM files only.
//
//	hsm, err := pkcs11.NewStore(pkcs11.Config{})
//	keys := keystore.Openers{PKCS11: hsm}
//	defer keys.Close()
//	signer, err := keys.Open(ctx, "pkcs11:token=ksa;id=0a0b?pin-source=/run/secrets/pin")
//
// Openers holds no state of its own; it is safe for concurrent use when
// its fields are.
type Openers struct {
	PKCS11   Opener
	AWSKMS   Opener
	CloudKMS Opener
	AzureKMS Opener
}

// Open parses ref with [ParseRef] and opens its key: a file with
// [LoadSigningKeyFile], a key-store key with the field of its scheme.
func (o Openers) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if r.Scheme() == SchemeFile {
		return LoadSigningKeyFile(r.Path())
	}
	opener, err := o.of(r)
	if err != nil {
		return nil, err
	}
	return opener.Open(ctx, ref)
}

// Create parses ref with [ParseNewKeyRef] and makes the key with the
// field of its scheme, which must be a [Creator]. A file reference is
// refused with [ErrUnsupportedStore]: a program writes key files itself.
func (o Openers) Create(ctx context.Context, ref string, spec KeySpec) (Created, error) {
	r, err := ParseNewKeyRef(ref)
	if err != nil {
		return Created{}, err
	}
	if r.Scheme() == SchemeFile {
		return Created{}, &StoreError{Ref: r.String(), What: "is a file", Fix: "write the key file yourself", Kind: ErrUnsupportedStore}
	}
	opener, err := o.of(r)
	if err != nil {
		return Created{}, err
	}
	c, ok := opener.(Creator)
	if !ok {
		return Created{}, &StoreError{Ref: r.String(), What: "cannot be created: this program's " + string(r.Scheme()) + " opener makes no keys",
			Fix: "create the key with the store's own tools, and give its reference", Kind: ErrUnsupportedStore}
	}
	return c.Create(ctx, ref, spec)
}

// Close closes the fields that are an io.Closer, and returns their
// errors joined.
func (o Openers) Close() error {
	var errs []error
	for _, f := range []Opener{o.PKCS11, o.AWSKMS, o.CloudKMS, o.AzureKMS} {
		if c, ok := f.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// of returns the opener of r's scheme.
func (o Openers) of(r Ref) (Opener, error) {
	var opener Opener
	pkg := ""
	switch r.Scheme() {
	case SchemePKCS11:
		opener, pkg = o.PKCS11, "pkcs11"
	case SchemeAWSKMS:
		opener, pkg = o.AWSKMS, "awskms"
	case SchemeCloudKMS:
		opener, pkg = o.CloudKMS, "cloudkms"
	case SchemeAzureKMS:
		opener, pkg = o.AzureKMS, "azurekms"
	}
	if opener == nil {
		return nil, &StoreError{Ref: r.String(), What: "this program opens no " + string(r.Scheme()) + " keys",
			Fix: "give it an opener of them (package github.com/ksa-go/ksa/keystore/" + pkg + ")", Kind: ErrUnsupportedStore}
	}
	return opener, nil
}
