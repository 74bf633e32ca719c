//go:build ksa_nos3

package stores

// s3Open refuses: this ksa was built without the store's SDK.
var s3Open = notBuilt("ksa_nos3")
