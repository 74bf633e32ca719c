//go:build !goexperiment.jsonv2

package jsonx_test

// stdlibJSONv2 reports whether encoding/json runs on the json/v2 engine
// (GOEXPERIMENT=jsonv2), whose encoder writes invalid UTF-8 differently.
const stdlibJSONv2 = false
