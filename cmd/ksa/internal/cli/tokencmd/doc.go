// Package tokencmd is "ksa token": inspect, verify and mint.
package tokencmd
