// Command probe is the node harness's test workload: a pod runs it to
// show what it was given. It prints one JSON line per file named on its
// command line, {"path": P, "data": CONTENT} or {"path": P, "error": E},
// to standard output (the container's log), then, with -wait, waits for
// SIGTERM or SIGINT, so that the pod stays Running until it is deleted.
//
//	probe -wait /var/run/secrets/tokens/token /var/run/bundle/ca.pem
//
// Tests read the lines with package node's ProbeFiles.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// maxFile bounds what is read of each file: a log line is the kubelet's
// to store, and projected credentials are a few kilobytes.
const maxFile = 1 << 20

// line is one file's report.
type line struct {
	Path  string `json:"path"`
	Data  string `json:"data,omitempty"`
	Error string `json:"error,omitempty"`
}

func main() {
	wait := flag.Bool("wait", false, "after printing, wait for SIGTERM or SIGINT")
	flag.Parse()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	enc := json.NewEncoder(os.Stdout)
	for _, p := range flag.Args() {
		l := line{Path: p}
		if data, err := readFile(p); err != nil {
			l.Error = err.Error()
		} else {
			l.Data = string(data)
		}
		if err := enc.Encode(l); err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
	}
	if *wait {
		<-stop
	}
}

// readFile reads p, and fails when it holds more than maxFile bytes.
func readFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", p, maxFile)
	}
	return data, nil
}
