package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIServerConfig says how a kube-apiserver started after the first
// ([ControlPlane.AddAPIServer], [ControlPlane.RestartAPIServer]) signs
// service-account tokens; everything else is the control plane's: its
// etcd, CA, serving certificate, admin token, issuers and audiences.
type APIServerConfig struct {
	// SigningEndpoint is --service-account-signing-endpoint: the socket of
	// an external JWT signer, which the test starts first. Zero: the
	// control plane's own signing ([Config.SigningEndpoint], or its key
	// files).
	SigningEndpoint string
}

// APIServer is a kube-apiserver that [ControlPlane.AddAPIServer] started
// beside the control plane's own, on the same etcd: a second replica, as
// in a highly available control plane. [ControlPlane.Stop] stops it too.
type APIServer struct {
	// URL is its base URL, "https://127.0.0.1:PORT"; it serves the control
	// plane's certificate and accepts its admin token.
	URL string
	// Args are the arguments it was started with.
	Args []string

	cp        *ControlPlane
	process   *process
	clientset kubernetes.Interface
}

// config returns the control plane's configuration with ac's signing.
func (cp *ControlPlane) config(ac APIServerConfig) Config {
	cfg := cp.cfg
	if ac.SigningEndpoint != "" {
		cfg.SigningEndpoint = ac.SigningEndpoint
	}
	return cfg
}

// AddAPIServer starts another kube-apiserver on the control plane's etcd,
// signing as ac says, and returns it once its /readyz answers 200. If ctx
// has no deadline, [DefaultStartTimeout] applies. A failure to start is a
// [*StartError] with the tail of its log.
func (cp *ControlPlane) AddAPIServer(ctx context.Context, ac APIServerConfig) (*APIServer, error) {
	ctx, cancel := startContext(ctx)
	defer cancel()
	cp.mu.Lock()
	n := len(cp.more) + 2
	cp.mu.Unlock()
	logPath := filepath.Join(cp.Files.Dir, "kube-apiserver-"+strconv.Itoa(n)+".log")
	p, url, args, err := cp.launchAPIServer(ctx, cp.apiserverPath, cp.config(ac), logPath)
	if err != nil {
		return nil, err
	}
	a := &APIServer{URL: url, Args: args, cp: cp, process: p}
	if a.clientset, err = kubernetes.NewForConfig(a.RESTConfig()); err != nil {
		p.Kill()
		return nil, fmt.Errorf("controlplane: clientset: %w", err)
	}
	cp.mu.Lock()
	cp.more = append(cp.more, a)
	cp.mu.Unlock()
	return a, nil
}

// RESTConfig returns a client-go configuration for the admin on this
// kube-apiserver, as [ControlPlane.RESTConfig] does for the first.
func (a *APIServer) RESTConfig() *rest.Config {
	c := a.cp.RESTConfig()
	c.Host = a.URL
	return c
}

// Clientset returns a clientset for the admin on this kube-apiserver.
func (a *APIServer) Clientset() kubernetes.Interface { return a.clientset }

// PID returns its process ID (also its process group's).
func (a *APIServer) PID() int { return a.process.PID() }

// Stop kills it (with its process group) and waits for it to exit; the
// control plane's etcd and other kube-apiservers run on.
func (a *APIServer) Stop() { a.process.Kill() }

// RestartAPIServer stops the control plane's own kube-apiserver and starts
// it again, on a new port, signing as ac says (a cluster moving from key
// files to an external signer, say): [ControlPlane.URL],
// [ControlPlane.APIServerArgs] and [ControlPlane.Clientset] are then the
// new one's. What etcd holds (service accounts, pods) stays. Not safe to
// call while the control plane is used from other goroutines.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context, ac APIServerConfig) error {
	ctx, cancel := startContext(ctx)
	defer cancel()
	cp.mu.Lock()
	old := cp.apiserver
	cp.restarts++
	logPath := filepath.Join(cp.Files.Dir, "kube-apiserver-restart-"+strconv.Itoa(cp.restarts)+".log")
	cp.mu.Unlock()
	old.Kill()
	p, url, args, err := cp.launchAPIServer(ctx, cp.apiserverPath, cp.config(ac), logPath)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.apiserver = p
	cp.mu.Unlock()
	cp.URL, cp.APIServerArgs = url, args
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return fmt.Errorf("controlplane: clientset: %w", err)
	}
	cp.clientset = cs
	return nil
}

// startContext bounds ctx by DefaultStartTimeout when it has no deadline.
func startContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultStartTimeout)
}
