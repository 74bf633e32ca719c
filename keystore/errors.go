package keystore

import "github.com/ksa-go/ksa/internal/errs"

// prefix starts the messages of the package's errors.
const prefix = "keystore"

// ErrKeyFile matches a key file that cannot be opened or read; the error
// also matches the cause (fs.ErrNotExist, fs.ErrPermission, ...). A file
// that is read but holds no usable key matches jwks.ErrMalformedPEM,
// jwks.ErrNoKeys or jwks.ErrUnsupportedKey instead.
var ErrKeyFile = errs.New(prefix, "key file unreadable")
