package podcert_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
)

// validRequest is a request every rule accepts.
func validRequest() podcert.Request {
	return podcert.Request{
		Namespace: "shop", Name: "req-1", SignerName: "example.com/workload",
		PodName: "cart-0", PodUID: "pod-uid-1", ServiceAccountName: "cart", ServiceAccountUID: "sa-uid-1",
		NodeName: "node-1", NodeUID: "node-uid-1", MaxExpirationSeconds: podcert.DefaultMaxExpirationSeconds,
	}
}

// TestRequestCheck: each rule kube-apiserver applies to a new request,
// at its boundary. field is the field refused, "" when accepted.
func TestRequestCheck(t *testing.T) {
	label := func(n int) string { return strings.Repeat("a", n) }
	// A 253-byte domain of four labels and a 317-byte path of a
	// namespace-sized part and a name-sized part: 571 bytes.
	longDomain := label(63) + "." + label(63) + "." + label(63) + "." + label(61)
	longPath := label(63) + "." + label(253)
	// The documented limits: 571 bytes, 256 KiB.
	require.Len(t, longDomain+"/"+longPath, podcert.MaxSignerNameLength)
	assert.Equal(t, 571, podcert.MaxSignerNameLength)
	assert.Equal(t, 256*1024, podcert.MaxUnverifiedUserAnnotationsSize)
	for _, tc := range []struct {
		name    string
		mod     func(*podcert.Request)
		field   string
		wantErr error
	}{
		{name: "valid", mod: func(*podcert.Request) {}},

		{name: "no namespace", mod: func(r *podcert.Request) { r.Namespace = "" }, field: "metadata.namespace", wantErr: ksa.ErrInvalidName},
		{name: "namespace of 64 bytes", mod: func(r *podcert.Request) { r.Namespace = label(64) }, field: "metadata.namespace", wantErr: ksa.ErrInvalidName},
		{name: "no name", mod: func(r *podcert.Request) { r.Name = "" }, field: "metadata.name", wantErr: ksa.ErrInvalidName},
		{name: "name not a subdomain", mod: func(r *podcert.Request) { r.Name = "Req_1" }, field: "metadata.name", wantErr: ksa.ErrInvalidName},

		{name: "signer name of 571 bytes", mod: func(r *podcert.Request) { r.SignerName = longDomain + "/" + longPath }},
		{name: "signer name path part of 253 bytes", mod: func(r *podcert.Request) { r.SignerName = "example.com/" + label(253) }},
		{name: "signer name of the kubelet's CSR signer", mod: func(r *podcert.Request) { r.SignerName = "kubernetes.io/kubelet-serving" }},
		{name: "no signer name", mod: func(r *podcert.Request) { r.SignerName = "" }, field: "spec.signerName"},
		{name: "signer name without a path", mod: func(r *podcert.Request) { r.SignerName = "example.com" }, field: "spec.signerName"},
		{name: "signer name with two slashes", mod: func(r *podcert.Request) { r.SignerName = "example.com/a/b" }, field: "spec.signerName"},
		{name: "signer name of one label", mod: func(r *podcert.Request) { r.SignerName = "example/x" }, field: "spec.signerName"},
		{name: "signer name domain label of 64 bytes", mod: func(r *podcert.Request) { r.SignerName = label(64) + ".com/x" }, field: "spec.signerName"},
		{name: "signer name domain of 254 bytes", mod: func(r *podcert.Request) { r.SignerName = longDomain + "a/x" }, field: "spec.signerName"},
		{name: "signer name path part of 254 bytes", mod: func(r *podcert.Request) { r.SignerName = "example.com/" + label(254) }, field: "spec.signerName"},
		{name: "signer name empty path part", mod: func(r *podcert.Request) { r.SignerName = "example.com/a..b" }, field: "spec.signerName"},
		{name: "signer name of 572 bytes", mod: func(r *podcert.Request) { r.SignerName = longDomain + "/" + longPath + "a" }, field: "spec.signerName"},
		{name: "signer name upper case", mod: func(r *podcert.Request) { r.SignerName = "Example.com/x" }, field: "spec.signerName"},

		{name: "pod name of 253 bytes", mod: func(r *podcert.Request) { r.PodName = label(253) }},
		{name: "no pod name", mod: func(r *podcert.Request) { r.PodName = "" }, field: "spec.podName", wantErr: ksa.ErrInvalidName},
		{name: "pod name of 254 bytes", mod: func(r *podcert.Request) { r.PodName = label(254) }, field: "spec.podName", wantErr: ksa.ErrInvalidName},
		{name: "pod name upper case", mod: func(r *podcert.Request) { r.PodName = "Cart" }, field: "spec.podName", wantErr: ksa.ErrInvalidName},
		{name: "no service account name", mod: func(r *podcert.Request) { r.ServiceAccountName = "" }, field: "spec.serviceAccountName", wantErr: ksa.ErrInvalidName},
		{name: "service account name with a slash", mod: func(r *podcert.Request) { r.ServiceAccountName = "a/b" }, field: "spec.serviceAccountName", wantErr: ksa.ErrInvalidName},
		{name: "no node name", mod: func(r *podcert.Request) { r.NodeName = "" }, field: "spec.nodeName", wantErr: ksa.ErrInvalidName},
		{name: "node name with a space", mod: func(r *podcert.Request) { r.NodeName = "node 1" }, field: "spec.nodeName", wantErr: ksa.ErrInvalidName},

		{name: "UIDs of 128 bytes", mod: func(r *podcert.Request) {
			r.PodUID, r.ServiceAccountUID, r.NodeUID = label(128), label(128), label(128)
		}},
		{name: "no pod UID", mod: func(r *podcert.Request) { r.PodUID = "" }, field: "spec.podUID"},
		{name: "pod UID of 129 bytes", mod: func(r *podcert.Request) { r.PodUID = label(129) }, field: "spec.podUID"},
		{name: "no service account UID", mod: func(r *podcert.Request) { r.ServiceAccountUID = "" }, field: "spec.serviceAccountUID"},
		{name: "service account UID of 129 bytes", mod: func(r *podcert.Request) { r.ServiceAccountUID = label(129) }, field: "spec.serviceAccountUID"},
		{name: "service account UID x509sa cannot carry", mod: func(r *podcert.Request) { r.ServiceAccountUID = "a b" }, field: "spec"},
		{name: "no node UID", mod: func(r *podcert.Request) { r.NodeUID = "" }, field: "spec.nodeUID"},
		{name: "node UID of 129 bytes", mod: func(r *podcert.Request) { r.NodeUID = label(129) }, field: "spec.nodeUID"},

		{name: "lifetime unset", mod: func(r *podcert.Request) { r.MaxExpirationSeconds = 0 }},
		{name: "lifetime of an hour", mod: func(r *podcert.Request) { r.MaxExpirationSeconds = podcert.MinMaxExpirationSeconds }},
		{name: "lifetime of 91 days", mod: func(r *podcert.Request) { r.MaxExpirationSeconds = podcert.MaxMaxExpirationSeconds }},
		{name: "lifetime of a day, kubernetes.io", mod: func(r *podcert.Request) {
			r.SignerName, r.MaxExpirationSeconds = "kubernetes.io/x", podcert.KubernetesMaxExpirationSeconds
		}},
		{name: "lifetime under an hour", mod: func(r *podcert.Request) { r.MaxExpirationSeconds = podcert.MinMaxExpirationSeconds - 1 }, field: "spec.maxExpirationSeconds"},
		{name: "lifetime negative", mod: func(r *podcert.Request) { r.MaxExpirationSeconds = -1 }, field: "spec.maxExpirationSeconds"},
		{name: "lifetime over 91 days", mod: func(r *podcert.Request) { r.MaxExpirationSeconds = podcert.MaxMaxExpirationSeconds + 1 }, field: "spec.maxExpirationSeconds"},
		{name: "lifetime over a day, kubernetes.io", mod: func(r *podcert.Request) {
			r.SignerName, r.MaxExpirationSeconds = "sub.kubernetes.io/x", podcert.KubernetesMaxExpirationSeconds+1
		}, field: "spec.maxExpirationSeconds"},

		{name: "annotation keys of any case", mod: func(r *podcert.Request) {
			r.UnverifiedUserAnnotations = map[string]string{"Example.COM/Key_1.x": "v", "a.b/" + label(63): ""}
		}},
		{name: "annotations at the size limit", mod: func(r *podcert.Request) {
			r.UnverifiedUserAnnotations = map[string]string{"example.com/x": label(podcert.MaxUnverifiedUserAnnotationsSize - len("example.com/x"))}
		}},
		{name: "annotations over the size limit", mod: func(r *podcert.Request) {
			r.UnverifiedUserAnnotations = map[string]string{"example.com/x": label(podcert.MaxUnverifiedUserAnnotationsSize - len("example.com/x") + 1)}
		}, field: "spec.unverifiedUserAnnotations", wantErr: podcert.ErrLimit},
		{name: "annotation key without a prefix", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"serve-hosts": "a"} }, field: "spec.unverifiedUserAnnotations"},
		{name: "annotation key with two slashes", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"a.b/c/d": "a"} }, field: "spec.unverifiedUserAnnotations"},
		{name: "annotation key with an empty prefix", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"/x": "a"} }, field: "spec.unverifiedUserAnnotations"},
		{name: "annotation key prefix with an underscore", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"a_b.c/x": "a"} }, field: "spec.unverifiedUserAnnotations"},
		{name: "annotation key empty name", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"a.b/": "a"} }, field: "spec.unverifiedUserAnnotations"},
		{name: "annotation key name of 64 bytes", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"a.b/" + label(64): "a"} }, field: "spec.unverifiedUserAnnotations"},
		{name: "annotation key name starting with a dash", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"a.b/-x": "a"} }, field: "spec.unverifiedUserAnnotations"},
		{name: "annotation key name ending with a dot", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"a.b/x.": "a"} }, field: "spec.unverifiedUserAnnotations"},
		{name: "annotation key name with a colon", mod: func(r *podcert.Request) { r.UnverifiedUserAnnotations = map[string]string{"a.b/x:y": "a"} }, field: "spec.unverifiedUserAnnotations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validRequest()
			tc.mod(&r)
			err := r.Check()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, podcert.ErrInvalidRequest)
			assert.ErrorContains(t, err, "podcert: "+tc.field+": ")
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			}
		})
	}
}
