//go:build ksa_nogcs

package stores

// gcsOpen refuses: this ksa was built without the store's SDK.
var gcsOpen = notBuilt("ksa_nogcs")
