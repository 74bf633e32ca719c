package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ksa-go/ksa/interop/internal/proc"
)

// pollInterval is how often a readiness endpoint is asked while a process starts.
const pollInterval = 50 * time.Millisecond

// maxPortAttempts bounds the restarts of a process whose port was taken.
const maxPortAttempts = 3

// maxProbeBody bounds how much of a readiness answer is read.
const maxProbeBody = 64 << 10

// waitReady calls check until it succeeds, p exits, or ctx is done.
func waitReady(ctx context.Context, p *process, check func(context.Context) error) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.Done():
			if p.Err() != nil {
				return fmt.Errorf("exited: %w", p.Err())
			}
			return errors.New("exited with status 0")
		case <-ctx.Done():
			return fmt.Errorf("%w (last check: %v)", context.Cause(ctx), err)
		case <-ticker.C:
		}
	}
}

// probe GETs url (with the bearer token, if not empty) and returns nil on
// 200 OK, or an error quoting the failing lines of the answer.
func probe(ctx context.Context, client *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	return fmt.Errorf("GET %s: %s: %s", url, resp.Status, failingLines(string(body)))
}

// failingLines keeps the "[-]" lines of a verbose /readyz answer, or the
// whole answer if it has none.
func failingLines(body string) string {
	var failing []string
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "[-]") {
			failing = append(failing, strings.TrimSpace(line))
		}
	}
	if len(failing) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(failing, "; ")
}

// freePorts returns n distinct loopback TCP ports that were free a moment
// ago. Another process may take one before it is used: callers retry with
// new ports when [portTaken] says so.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("controlplane: finding a free port: %w", err)
		}
		// Keep each listener open until all are chosen, so the ports differ.
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portTaken reports whether p failed because an address it was to listen on
// was in use.
func portTaken(p *process) bool {
	select {
	case <-p.Done():
	default:
		return false
	}
	return strings.Contains(proc.TailFile(p.LogPath(), logTailLines), "address already in use")
}
