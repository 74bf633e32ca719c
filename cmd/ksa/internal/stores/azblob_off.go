//go:build ksa_noazblob

package stores

// azblobOpen refuses: this ksa was built without the store's SDK.
var azblobOpen = notBuilt("ksa_noazblob")
