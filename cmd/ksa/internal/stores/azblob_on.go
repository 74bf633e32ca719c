//go:build !ksa_noazblob

package stores

import "github.com/ksa-go/ksa/publish/azblob"

// azblobOpen opens the store with the library's leaf package.
var azblobOpen = azblob.Open
