package signertest

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"
	"k8s.io/externaljwt/apis/v1alpha1"
)

// Dial connects to a signer's socket the way kube-apiserver does: a Unix
// socket path, or "@name" for an abstract socket, plain gRPC (the socket's
// permissions are the protection). The connection is made on first use.
func Dial(address string) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///externaljwt",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("localhost"),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", address)
		}),
	)
}

// signer is one API version's client, in plain types.
type signer interface {
	sign(ctx context.Context, claims string) (header, signature string, err error)
	fetchKeys(ctx context.Context) (rawKeySet, error)
	metadata(ctx context.Context) (int64, error)
}

type v1Client struct {
	c externaljwtv1.ExternalJWTSignerClient
}

func (v v1Client) sign(ctx context.Context, claims string) (string, string, error) {
	resp, err := v.c.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: claims})
	if err != nil {
		return "", "", err
	}
	return resp.GetHeader(), resp.GetSignature(), nil
}

func (v v1Client) fetchKeys(ctx context.Context) (rawKeySet, error) {
	resp, err := v.c.FetchKeys(ctx, &externaljwtv1.FetchKeysRequest{})
	if err != nil {
		return rawKeySet{}, err
	}
	raw := rawKeySet{RefreshHintSeconds: resp.GetRefreshHintSeconds()}
	if ts := resp.GetDataTimestamp(); ts.CheckValid() == nil {
		raw.DataTimestamp = ts.AsTime()
	}
	for _, k := range resp.GetKeys() {
		raw.Keys = append(raw.Keys, rawKey{KeyID: k.GetKeyId(), DER: k.GetKey(), ExcludeFromDiscovery: k.GetExcludeFromOidcDiscovery()})
	}
	return raw, nil
}

func (v v1Client) metadata(ctx context.Context) (int64, error) {
	resp, err := v.c.Metadata(ctx, &externaljwtv1.MetadataRequest{})
	return resp.GetMaxTokenExpirationSeconds(), err
}

type v1alpha1Client struct {
	c v1alpha1.ExternalJWTSignerClient
}

func (v v1alpha1Client) sign(ctx context.Context, claims string) (string, string, error) {
	resp, err := v.c.Sign(ctx, &v1alpha1.SignJWTRequest{Claims: claims})
	if err != nil {
		return "", "", err
	}
	return resp.GetHeader(), resp.GetSignature(), nil
}

func (v v1alpha1Client) fetchKeys(ctx context.Context) (rawKeySet, error) {
	resp, err := v.c.FetchKeys(ctx, &v1alpha1.FetchKeysRequest{})
	if err != nil {
		return rawKeySet{}, err
	}
	raw := rawKeySet{RefreshHintSeconds: resp.GetRefreshHintSeconds()}
	if ts := resp.GetDataTimestamp(); ts.CheckValid() == nil {
		raw.DataTimestamp = ts.AsTime()
	}
	for _, k := range resp.GetKeys() {
		raw.Keys = append(raw.Keys, rawKey{KeyID: k.GetKeyId(), DER: k.GetKey(), ExcludeFromDiscovery: k.GetExcludeFromOidcDiscovery()})
	}
	return raw, nil
}

func (v v1alpha1Client) metadata(ctx context.Context) (int64, error) {
	resp, err := v.c.Metadata(ctx, &v1alpha1.MetadataRequest{})
	return resp.GetMaxTokenExpirationSeconds(), err
}

// call runs f with the per-call timeout.
func call[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return f(ctx)
}
