//go:build race

package apisnap_test

// raceEnabled: this test binary was built with -race.
const raceEnabled = true
