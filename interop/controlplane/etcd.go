package controlplane

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// startEtcd starts etcd on two free loopback ports and waits until it
// reports itself healthy. It tries new ports when the chosen ones were taken
// by someone else between choosing and binding.
func (cp *ControlPlane) startEtcd(ctx context.Context, path string, out io.Writer) error {
	extra := etcdOptionalArgs(ctx, path)
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		clientURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
		args := append([]string{
			"--name=ksa",
			"--data-dir=" + cp.Files.EtcdData,
			"--listen-client-urls=" + clientURL,
			"--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=ksa=" + peerURL,
			"--initial-cluster-state=new",
		}, extra...)
		p, err := startProcess(Etcd, path, args, cp.Files.EtcdLog, out)
		if err != nil {
			return err
		}
		cp.etcd = p
		err = waitReady(ctx, p, etcdHealthy(clientURL))
		if err == nil {
			cp.EtcdURL = clientURL
			return nil
		}
		p.Kill()
		if attempt < maxPortAttempts && portTaken(p) {
			continue
		}
		return &StartError{Component: Etcd, Err: err, Logs: p.LogTail(logTailLines)}
	}
}

// etcdOptionalArgs returns the flags worth passing that not every etcd
// release has: --unsafe-no-fsync (etcd 3.5 and later) makes writes much
// cheaper, and a test cluster's data need not survive a crash.
func etcdOptionalArgs(ctx context.Context, path string) []string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	help, _ := exec.CommandContext(ctx, path, "--help").CombinedOutput()
	if strings.Contains(string(help), "--unsafe-no-fsync") {
		return []string{"--unsafe-no-fsync"}
	}
	return nil
}

// etcdHealthy returns a readiness check that asks etcd's /health endpoint.
func etcdHealthy(clientURL string) func(context.Context) error {
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: time.Second}
	return func(ctx context.Context) error {
		defer client.CloseIdleConnections()
		return probe(ctx, client, clientURL+"/health", "")
	}
}
