package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// serviceClusterIPRange is the range of Service IPs, as in kubeadm's default.
const serviceClusterIPRange = "10.96.0.0/12"

// startAPIServer starts kube-apiserver on a free loopback port and waits
// until /readyz answers 200 to the admin token. Like startEtcd, it retries
// with a new port when the chosen one was taken.
func (cp *ControlPlane) startAPIServer(ctx context.Context, path string, cfg Config) error {
	p, url, args, err := cp.launchAPIServer(ctx, path, cfg, cp.Files.APIServerLog)
	if err != nil {
		return err
	}
	cp.apiserver, cp.URL, cp.APIServerArgs = p, url, args
	return nil
}

// launchAPIServer starts a kube-apiserver with cfg, logging to logPath, on
// a free loopback port, and returns it once /readyz answers 200, with its
// URL and arguments. Like startEtcd, it retries with a new port when the
// chosen one was taken.
func (cp *ControlPlane) launchAPIServer(ctx context.Context, path string, cfg Config, logPath string) (*process, string, []string, error) {
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(1)
		if err != nil {
			return nil, "", nil, err
		}
		args := cp.apiserverArgs(cfg, ports[0])
		p, err := startProcess(KubeAPIServer, path, args, logPath, cfg.Output)
		if err != nil {
			return nil, "", nil, err
		}
		url := "https://127.0.0.1:" + strconv.Itoa(ports[0])
		err = waitReady(ctx, p, cp.apiserverReady(url))
		if err == nil {
			return p, url, args, nil
		}
		p.Kill()
		if attempt < maxPortAttempts && portTaken(p) {
			continue
		}
		return nil, "", nil, &StartError{
			Component: KubeAPIServer,
			Err:       err,
			Logs:      cp.etcd.LogTail(logTailLines/2) + p.LogTail(logTailLines),
		}
	}
}

// apiserverArgs returns kube-apiserver's flags: loopback only, etcd from
// startEtcd, the files written by writeFiles, then cfg's settings.
func (cp *ControlPlane) apiserverArgs(cfg Config, port int) []string {
	f := &cp.Files
	args := []string{
		"--etcd-servers=" + cp.EtcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + f.CertDir,
		"--tls-cert-file=" + f.ServingCert,
		"--tls-private-key-file=" + f.ServingKey,
		"--client-ca-file=" + f.ClientCA,
		"--token-auth-file=" + f.TokenAuth,
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		"--authorization-mode=" + strings.Join(cfg.AuthorizationModes, ","),
		signingArg(cfg, f),
		"--api-audiences=" + strings.Join(cfg.APIAudiences, ","),
		"--profiling=false",
		// The default reconciler would publish 127.0.0.1 as the endpoint of
		// Service "kubernetes", which validation refuses, and log it forever.
		"--endpoint-reconciler-type=none",
	}
	for _, iss := range cfg.Issuers {
		args = append(args, "--service-account-issuer="+iss)
	}
	if cfg.SigningEndpoint == "" {
		for _, k := range f.VerificationKeys {
			args = append(args, "--service-account-key-file="+k)
		}
	}
	if len(cfg.EnableAdmissionPlugins) > 0 {
		args = append(args, "--enable-admission-plugins="+strings.Join(cfg.EnableAdmissionPlugins, ","))
	}
	if len(cfg.DisableAdmissionPlugins) > 0 {
		args = append(args, "--disable-admission-plugins="+strings.Join(cfg.DisableAdmissionPlugins, ","))
	}
	if len(cfg.FeatureGates) > 0 {
		var gates []string
		for _, name := range slices.Sorted(maps.Keys(cfg.FeatureGates)) {
			gates = append(gates, name+"="+strconv.FormatBool(cfg.FeatureGates[name]))
		}
		args = append(args, "--feature-gates="+strings.Join(gates, ","))
	}
	if len(cfg.RuntimeConfig) > 0 {
		var groups []string
		for _, name := range slices.Sorted(maps.Keys(cfg.RuntimeConfig)) {
			groups = append(groups, name+"="+cfg.RuntimeConfig[name])
		}
		args = append(args, "--runtime-config="+strings.Join(groups, ","))
	}
	return append(args, cfg.ExtraArgs...)
}

// signingArg is the flag that tells kube-apiserver how to sign: the key
// file, or the external signer's socket.
func signingArg(cfg Config, f *Files) string {
	if cfg.SigningEndpoint != "" {
		return "--service-account-signing-endpoint=" + cfg.SigningEndpoint
	}
	return "--service-account-signing-key-file=" + f.SigningKey
}

// apiserverReady returns a readiness check that asks /readyz with the admin
// token, trusting only the control plane's CA.
func (cp *ControlPlane) apiserverReady(url string) func(context.Context) error {
	client := &http.Client{
		Transport: &http.Transport{
			Proxy:           nil,
			TLSClientConfig: &tls.Config{RootCAs: cp.CertPool, MinVersion: tls.VersionTLS12},
		},
		Timeout: 2 * time.Second,
	}
	return func(ctx context.Context) error {
		defer client.CloseIdleConnections()
		return probe(ctx, client, url+"/readyz?verbose", cp.AdminToken)
	}
}

// tokenAuthLine is the --token-auth-file line for the admin: token, user
// name, uid, and groups.
func tokenAuthLine(token string) string {
	return fmt.Sprintf("%s,%s,%s,%q\n", token, AdminUser, AdminUID, strings.Join(AdminGroups, ","))
}
