package grpcserver_test

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/internal/bench"
	"github.com/ksa-go/ksa/jwks"
)

// cpuChildEnv makes the test binary a signer process of
// BenchmarkSignerCPU: "MODE ALG SOCKET" (see cpuChild).
const cpuChildEnv = "KSA_BENCH_SIGNER_CHILD"

// cpuProfileEnv, when set to a directory, has each server process of
// BenchmarkSignerCPU write a CPU profile there (MODE-ALG.prof) of all its
// rounds.
const cpuProfileEnv = "KSA_BENCH_SIGNER_PROFILES"

func TestMain(m *testing.M) {
	if spec := os.Getenv(cpuChildEnv); spec != "" {
		os.Exit(cpuChild(spec))
	}
	os.Exit(m.Run())
}

// The processes BenchmarkSignerCPU measures.
const (
	// cpuRing: the ring over the socket with a key read from a file (a
	// standard-library key: its own copy, not verified per signature).
	cpuRing = "ring"
	// cpuOpaque: the same key behind a signer the ring does not know (as
	// an HSM or KMS key is): every signature verified, which is also what
	// the ring did for every key before.
	cpuOpaque = "opaque"
	// cpuNoop: a gRPC server answering every Sign with a fixed header and
	// signature, no claims read, nothing signed: the socket's floor.
	cpuNoop = "noop"
	// cpuBare: the bare signatures of the same signing inputs, no server.
	cpuBare = "bare"
	// cpuSigning: a gRPC server that signs each request's claims and
	// answers a fixed header and signature: the floor of any signer that
	// signs in its handler (no claims check, no header, no ring).
	cpuSigning = "signing"
)

// opaqueSigner hides a key's type from the ring.
type opaqueSigner struct{ crypto.Signer }

// noopSigner answers Sign without reading or signing anything.
type noopSigner struct {
	externaljwtv1.UnimplementedExternalJWTSignerServer
	resp *externaljwtv1.SignJWTResponse
}

func (n noopSigner) Sign(context.Context, *externaljwtv1.SignJWTRequest) (*externaljwtv1.SignJWTResponse, error) {
	return n.resp, nil
}

// signingSigner signs each request's claims and answers a fixed response.
type signingSigner struct {
	externaljwtv1.UnimplementedExternalJWTSignerServer
	key  crypto.Signer
	resp *externaljwtv1.SignJWTResponse
}

func (s signingSigner) Sign(_ context.Context, req *externaljwtv1.SignJWTRequest) (*externaljwtv1.SignJWTResponse, error) {
	d := crypto.SHA256.New()
	d.Write([]byte(req.Claims))
	_, err := s.key.Sign(rand.Reader, d.Sum(nil), crypto.SHA256)
	return s.resp, err
}

// cpuKey generates the key of an algorithm.
func cpuKey(alg string) crypto.Signer {
	var k crypto.Signer
	var err error
	if alg == jwks.RS256 {
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		panic(err)
	}
	return k
}

// cpuChild runs one measured process. It serves the mode's signer on the
// socket (bare: none), then reads commands on standard input, answering
// each on standard output:
//
//	# command  answer
//	begin      ok: CPU time counted from now
//	end        cpu N: nanoseconds of CPU (user and system) since begin
//	run N      cpu M: N bare signatures on 8 goroutines, their CPU time
//
// It exits when standard input ends.
func cpuChild(spec string) int {
	f := strings.Fields(spec)
	mode, alg, sock := f[0], f[1], f[2]
	key := cpuKey(alg)
	claims := encodeClaims(testClaims(time.Now(), time.Hour))
	switch mode {
	case cpuRing, cpuOpaque:
		signer := key
		if mode == cpuOpaque {
			signer = opaqueSigner{key}
		}
		ring, err := extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{primary(signer)}})
		if err != nil {
			panic(err)
		}
		srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring, ProbeInterval: -1})
		if err != nil {
			panic(err)
		}
		l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
		if err != nil {
			panic(err)
		}
		go func() { _ = srv.Serve(l) }()
	case cpuNoop, cpuSigning:
		resp := &externaljwtv1.SignJWTResponse{Header: "eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vb3AiLCJ0eXAiOiJKV1QifQ", Signature: strings.Repeat("A", 86)}
		g := grpc.NewServer(grpcserver.ServerOptions()...)
		if mode == cpuNoop {
			externaljwtv1.RegisterExternalJWTSignerServer(g, noopSigner{resp: resp})
		} else {
			externaljwtv1.RegisterExternalJWTSignerServer(g, signingSigner{key: key, resp: resp})
		}
		l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
		if err != nil {
			panic(err)
		}
		go func() { _ = g.Serve(l) }()
	}
	fmt.Println("ready")
	var prof *os.File
	defer func() {
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	var start time.Duration
	for in.Scan() {
		cmd := strings.Fields(in.Text())
		switch cmd[0] {
		case "begin":
			if dir := os.Getenv(cpuProfileEnv); dir != "" && prof == nil {
				prof, _ = os.Create(filepath.Join(dir, mode+"-"+alg+".prof"))
				_ = pprof.StartCPUProfile(prof)
			}
			start = cpuTime()
			fmt.Println("ok")
		case "end":
			fmt.Println("cpu", int64(cpuTime()-start))
		case "run":
			n, _ := strconv.Atoi(cmd[1])
			input := []byte("eyJhbGciOiJFUzI1NiIsImtpZCI6ImsiLCJ0eXAiOiJKV1QifQ." + claims)
			h := crypto.SHA256
			begin := cpuTime()
			bench.Phase(nopTB{}, 8, n, func() error {
				d := h.New()
				d.Write(input)
				_, err := key.Sign(rand.Reader, d.Sum(nil), h)
				return err
			})
			fmt.Println("cpu", int64(cpuTime()-begin))
		}
	}
	return 0
}

// nopTB is a testing.TB for bench.Phase outside a test.
type nopTB struct{ testing.TB }

func (nopTB) Error(args ...any) { panic(fmt.Sprint(args...)) }

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuProc is a measured child process.
type cpuProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	client externaljwtv1.ExternalJWTSignerClient
}

func startCPUProc(b *testing.B, mode, alg, dir string) *cpuProc {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(dir, mode+".sock")
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), cpuChildEnv+"="+mode+" "+alg+" "+sock, "GOMAXPROCS="+strconv.Itoa(2))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &cpuProc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	if p.answer(b) != "ready" {
		b.Fatal("the child did not start")
	}
	if mode != cpuBare {
		p.client = externaljwtv1.NewExternalJWTSignerClient(dial(b, sock))
	}
	return p
}

func (p *cpuProc) answer(b *testing.B) string {
	b.Helper()
	if !p.out.Scan() {
		b.Fatalf("the child ended: %v", p.out.Err())
	}
	return p.out.Text()
}

func (p *cpuProc) send(b *testing.B, cmd string) string {
	b.Helper()
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		b.Fatal(err)
	}
	return p.answer(b)
}

func parseCPU(b *testing.B, answer string) time.Duration {
	b.Helper()
	ns, err := strconv.ParseInt(strings.TrimPrefix(answer, "cpu "), 10, 64)
	if err != nil {
		b.Fatalf("answer %q", answer)
	}
	return time.Duration(ns)
}

// BenchmarkSignerCPU measures the signer process's CPU per 1,000 tokens,
// the figure the external signer's goal is stated in: the ring with a key
// read from a file, the same key behind an opaque signer (verified on
// every signature, as every key was before), a no-op gRPC signer (the
// socket's floor), the bare signatures, and a gRPC server that signs and
// does nothing else (the floor of any signer that signs in its handler),
// each in a process of its own (CPU from getrusage), 8 callers over the
// socket, interleaved in rounds so that other load weighs on all alike.
// It reports CPU seconds per 1,000 tokens of each, ring/(noop+bare), whose
// goal is at most 1.2, and ring/signing, the ring's own share. Run it
// alone: go test ./extsigner/grpcserver -run '^$' -bench SignerCPU
// -benchtime 1x (each x is three rounds).
func BenchmarkSignerCPU(b *testing.B) {
	for _, tc := range []struct {
		alg string
		n   int
	}{{jwks.ES256, 5000}, {jwks.RS256, 1000}} {
		b.Run(tc.alg, func(b *testing.B) {
			dir, err := os.MkdirTemp("", "ksa-cpu-")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(dir) })
			modes := []string{cpuRing, cpuOpaque, cpuNoop, cpuBare, cpuSigning}
			procs := map[string]*cpuProc{}
			for _, m := range modes {
				procs[m] = startCPUProc(b, m, tc.alg, dir)
			}
			claims := encodeClaims(testClaims(time.Now(), time.Hour))
			total := map[string]time.Duration{}
			const rounds = 3
			for range b.N {
				for r := range rounds {
					for i := range modes {
						m := modes[(i+r)%len(modes)]
						p := procs[m]
						if m == cpuBare {
							total[m] += parseCPU(b, p.send(b, "run "+strconv.Itoa(tc.n)))
							continue
						}
						p.send(b, "begin")
						bench.Phase(b, 8, tc.n, func() error {
							_, err := p.client.Sign(b.Context(), &externaljwtv1.SignJWTRequest{Claims: claims})
							return err
						})
						total[m] += parseCPU(b, p.send(b, "end"))
					}
				}
			}
			per1k := func(m string) float64 { return total[m].Seconds() / float64(b.N*rounds*tc.n) * 1000 }
			for _, m := range modes {
				b.ReportMetric(per1k(m), m+"-cpu-s/1k")
			}
			b.ReportMetric(per1k(cpuRing)/(per1k(cpuNoop)+per1k(cpuBare)), "ring/(noop+bare)")
			b.ReportMetric(per1k(cpuOpaque)/(per1k(cpuNoop)+per1k(cpuBare)), "opaque/(noop+bare)")
			b.ReportMetric(per1k(cpuRing)/per1k(cpuSigning), "ring/signing")
			b.ReportMetric(0, "ns/op")
		})
	}
}
