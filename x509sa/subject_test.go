package x509sa_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/x509sa"
)

func TestSubjectName(t *testing.T) {
	s := x509sa.Subject{
		ServiceAccount: testSA,
		PodName:        "cart-7d9f",
		Extensions:     map[string]string{"zone": "eu-1", "example.com/team": "payments"},
	}
	name, err := s.Name()
	require.NoError(t, err)
	assert.Equal(t, pkix.Name{
		CommonName:   "system:serviceaccount:shop:cart",
		Organization: []string{"system:serviceaccounts", "system:serviceaccounts:shop"},
		OrganizationalUnit: []string{
			"system:pod-namespace=shop", "system:pod-name=cart-7d9f",
			"example.com/team=payments", "zone=eu-1",
		},
		ExtraNames: []pkix.AttributeTypeAndValue{{Type: x509sa.UIDAttribute(), Value: testSA.UID}},
	}, name)

	// Without pod, extensions or UID: CN and O only.
	name, err = x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "a", Name: "b"}}.Name()
	require.NoError(t, err)
	assert.Equal(t, pkix.Name{CommonName: "system:serviceaccount:a:b", Organization: []string{"system:serviceaccounts", "system:serviceaccounts:a"}}, name)

	assert.Equal(t, "1.3.6.1.4.1.57683.2", x509sa.UIDAttribute().String())
	assert.Equal(t, ksa.Identity{ServiceAccount: testSA, Pod: ksa.ObjectRef{Name: "cart-7d9f"}}, s.Identity())
	assert.Equal(t, ksa.UserInfo{Username: testSA.Username(), UID: testSA.UID, Groups: testSA.Groups()}, s.UserInfo())
}

// TestSubjectRoundTrip encodes subjects into real requests and certificates
// and decodes them back: DER reorders the O and OU values (a SET is
// sorted), the decoder must not care.
func TestSubjectRoundTrip(t *testing.T) {
	key := testkeys.Generated("p256")
	ca := newCA(t, "p256-ca")
	tests := []struct {
		name    string
		subject x509sa.Subject
	}{
		{name: "service account only", subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "ns1", Name: "sa1"}}},
		{name: "with UID", subject: x509sa.Subject{ServiceAccount: testSA}},
		{name: "with pod", subject: x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0"}},
		{name: "UID with underscore (UTF8String)", subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "a", Name: "b", UID: "uid_with_underscore"}}},
		{name: "all limits", subject: func() x509sa.Subject {
			ext := map[string]string{}
			for i := range x509sa.MaxExtensions {
				ext[fmt.Sprintf("%s/k%02d", strings.Repeat("p", 200), i)] = strings.Repeat("v", x509sa.MaxExtensionValueLength)
			}
			return x509sa.Subject{
				ServiceAccount: ksa.ServiceAccount{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("s", 253), UID: strings.Repeat("u", x509sa.MaxUIDLength)},
				PodName:        strings.Repeat("p", 253),
				Extensions:     ext,
			}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr, err := x509sa.ParseCSR(mustCSR(t, key, x509sa.CSROptions{Subject: tt.subject}))
			require.NoError(t, err)
			assert.True(t, csr.Subject.Equal(tt.subject), "CSR: got %+v", csr.Subject)

			cert := ca.sign(t, leafTemplate(t, tt.subject), key.Public())
			got, err := x509sa.DecodeName(cert.Subject)
			require.NoError(t, err)
			assert.True(t, got.Equal(tt.subject), "certificate: got %+v", got)
			// kube-apiserver reads the groups in DER order.
			assert.ElementsMatch(t, tt.subject.ServiceAccount.Groups(), cert.Subject.Organization)
		})
	}
}

// TestGroupOrderIsDER: the O values come back in DER SET order, not the
// order written.
func TestGroupOrderIsDER(t *testing.T) {
	key := testkeys.Generated("p256")
	der := rawCSR(t, key, &x509.CertificateRequest{Subject: pkix.Name{
		Organization: []string{"zeta", "system:serviceaccounts", "alpha", "system:serviceaccounts:ns1"},
	}})
	req, err := x509.ParseCertificateRequest(der)
	require.NoError(t, err)
	assert.Equal(t, []string{"zeta", "alpha", "system:serviceaccounts", "system:serviceaccounts:ns1"}, req.Subject.Organization)

	// Our own groups written in the other order decode all the same.
	names := []pkix.AttributeTypeAndValue{
		atv(oidO, "system:serviceaccounts:ns1"),
		atv(oidCN, "system:serviceaccount:ns1:sa1"),
		atv(oidO, "system:serviceaccounts"),
	}
	got, err := x509sa.DecodeName(pkix.Name{Names: names})
	require.NoError(t, err)
	assert.Equal(t, ksa.ServiceAccount{Namespace: "ns1", Name: "sa1"}, got.ServiceAccount)
}

func TestDecodeName(t *testing.T) {
	with := func(extra ...pkix.AttributeTypeAndValue) []pkix.AttributeTypeAndValue {
		return append(saNames("shop", "cart"), extra...)
	}
	extensions := func(n int) []pkix.AttributeTypeAndValue {
		var out []pkix.AttributeTypeAndValue
		for i := range n {
			out = append(out, atv(oidOU, fmt.Sprintf("k%d=v", i)))
		}
		return out
	}
	cart := ksa.ServiceAccount{Namespace: "shop", Name: "cart"}
	tests := []struct {
		name      string
		names     []pkix.AttributeTypeAndValue
		want      x509sa.Subject
		wantErr   error // matched with errors.Is
		wantAttr  string
		wantLimit string // what the limit error names
	}{
		{name: "minimal", names: saNames("shop", "cart"), want: x509sa.Subject{ServiceAccount: cart}},
		{name: "full, any order", names: []pkix.AttributeTypeAndValue{
			atv(oidUID, "uid-1"), atv(oidOU, "team=a"), atv(oidOU, "system:pod-name=p1"),
			atv(oidO, "system:serviceaccounts:shop"), atv(oidOU, "system:pod-namespace=shop"),
			atv(oidCN, "system:serviceaccount:shop:cart"), atv(oidO, "system:serviceaccounts"),
		}, want: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: "uid-1"}, PodName: "p1", Extensions: map[string]string{"team": "a"}}},
		{name: "16 extensions", names: with(extensions(16)...), want: x509sa.Subject{ServiceAccount: cart, Extensions: func() map[string]string {
			m := map[string]string{}
			for i := range 16 {
				m[fmt.Sprintf("k%d", i)] = "v"
			}
			return m
		}()}},
		{name: "17 extensions", names: with(extensions(17)...), wantErr: x509sa.ErrLimit, wantLimit: "extensions"},
		{name: "32 attributes", names: with(extensions(29)...), wantErr: x509sa.ErrLimit, wantLimit: "extensions"},
		{name: "33 attributes", names: with(extensions(30)...), wantErr: x509sa.ErrLimit, wantLimit: "subject attributes"},
		{name: "empty value allowed", names: with(atv(oidOU, "k=")), want: x509sa.Subject{ServiceAccount: cart, Extensions: map[string]string{"k": ""}}},
		{name: "value at limit", names: with(atv(oidOU, "k="+strings.Repeat("v", 256))), want: x509sa.Subject{ServiceAccount: cart, Extensions: map[string]string{"k": strings.Repeat("v", 256)}}},
		{name: "UID at limit", names: with(atv(oidUID, strings.Repeat("u", 128))), want: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: strings.Repeat("u", 128)}}},

		{name: "empty subject", names: nil, wantErr: x509sa.ErrNotServiceAccount, wantAttr: "CN"},
		{name: "user CN", names: []pkix.AttributeTypeAndValue{atv(oidCN, "alice"), atv(oidO, "system:masters")}, wantErr: x509sa.ErrNotServiceAccount, wantAttr: "CN"},
		{name: "user CN with a foreign attribute", names: []pkix.AttributeTypeAndValue{atv(oidC, "US"), atv(oidCN, "alice")}, wantErr: x509sa.ErrNotServiceAccount, wantAttr: "CN"},
		{name: "non-string CN", names: []pkix.AttributeTypeAndValue{atv(oidCN, int64(7)), atv(oidO, "system:serviceaccounts")}, wantErr: x509sa.ErrNotServiceAccount, wantAttr: "CN"},
		{name: "invalid namespace", names: saNames("Shop", "cart"), wantErr: ksa.ErrInvalidName, wantAttr: "CN"},
		{name: "three-part username", names: saNames("shop", "cart:x"), wantErr: ksa.ErrInvalidUsername, wantAttr: "CN"},
		{name: "NUL in name", names: saNames("shop", "cart\x00"), wantErr: ksa.ErrInvalidName, wantAttr: "CN"},
		{name: "two CNs, service account last", names: append([]pkix.AttributeTypeAndValue{atv(oidCN, "alice")}, saNames("shop", "cart")...), wantErr: x509sa.ErrInvalidSubject, wantAttr: "CN"},
		{name: "two CNs, user last", names: with(atv(oidCN, "alice")), wantErr: x509sa.ErrNotServiceAccount, wantAttr: "CN"},
		{name: "foreign attribute", names: with(atv(oidC, "US")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "2.5.4.6"},
		{name: "non-string O", names: with(atv(oidO, int64(1))), wantErr: x509sa.ErrInvalidSubject, wantAttr: "O"},
		{name: "system:masters", names: with(atv(oidO, "system:masters")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "O"},
		{name: "duplicate all group", names: with(atv(oidO, "system:serviceaccounts")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "O"},
		{name: "second namespace group", names: with(atv(oidO, "system:serviceaccounts:other")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "O"},
		{name: "missing all group", names: saNames("shop", "cart")[:1], wantErr: x509sa.ErrInvalidSubject, wantAttr: "O"},
		{name: "missing namespace group", names: []pkix.AttributeTypeAndValue{atv(oidCN, "system:serviceaccount:shop:cart"), atv(oidO, "system:serviceaccounts")}, wantErr: x509sa.ErrInvalidSubject, wantAttr: "O"},
		{name: "group of another namespace", names: []pkix.AttributeTypeAndValue{atv(oidCN, "system:serviceaccount:shop:cart"), atv(oidO, "system:serviceaccounts"), atv(oidO, "system:serviceaccounts:other")}, wantErr: x509sa.ErrInvalidSubject, wantAttr: "O"},
		{name: "pod namespace alone", names: with(atv(oidOU, "system:pod-namespace=shop")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "pod name alone", names: with(atv(oidOU, "system:pod-name=p")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "pod in another namespace", names: with(atv(oidOU, "system:pod-namespace=other"), atv(oidOU, "system:pod-name=p")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "invalid pod name", names: with(atv(oidOU, "system:pod-namespace=shop"), atv(oidOU, "system:pod-name=P_1")), wantErr: ksa.ErrInvalidName, wantAttr: "pod"},
		{name: "duplicate pod name", names: with(atv(oidOU, "system:pod-namespace=shop"), atv(oidOU, "system:pod-name=a"), atv(oidOU, "system:pod-name=b")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "duplicate pod namespace", names: with(atv(oidOU, "system:pod-namespace=shop"), atv(oidOU, "system:pod-namespace=shop"), atv(oidOU, "system:pod-name=a")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "unknown reserved entry", names: with(atv(oidOU, "system:node-name=n1")), wantErr: x509sa.ErrReservedExtension, wantAttr: "OU"},
		{name: "reserved entry in upper case", names: with(atv(oidOU, "SYSTEM:pod-name=p")), wantErr: x509sa.ErrReservedExtension, wantAttr: "OU"},
		{name: "reserved prefix alone", names: with(atv(oidOU, "system:")), wantErr: x509sa.ErrReservedExtension, wantAttr: "OU"},
		{name: "extension without =", names: with(atv(oidOU, "My Unit")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "extension with bad key", names: with(atv(oidOU, "-k=v")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "extension with = in value", names: with(atv(oidOU, "k=a=b")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "extension with control character", names: with(atv(oidOU, "k=a\nb")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "extension value over limit", names: with(atv(oidOU, "k="+strings.Repeat("v", 257))), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "duplicate extension key", names: with(atv(oidOU, "k=a"), atv(oidOU, "k=b")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "OU"},
		{name: "empty UID", names: with(atv(oidUID, "")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "UID"},
		{name: "two UIDs", names: with(atv(oidUID, "a"), atv(oidUID, "b")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "UID"},
		{name: "UID over limit", names: with(atv(oidUID, strings.Repeat("u", 129))), wantErr: x509sa.ErrInvalidSubject, wantAttr: "UID"},
		{name: "UID with space", names: with(atv(oidUID, "a b")), wantErr: x509sa.ErrInvalidSubject, wantAttr: "UID"},
		{name: "non-string UID", names: with(atv(oidUID, int64(5))), wantErr: x509sa.ErrInvalidSubject, wantAttr: "UID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x509sa.DecodeName(pkix.Name{Names: tt.names})
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.True(t, got.Equal(tt.want), "got %+v", got)
				assert.Equal(t, tt.want.ServiceAccount, got.ServiceAccount)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, x509sa.Subject{}, got)
			if tt.wantLimit != "" {
				assert.ErrorContains(t, err, " "+tt.wantLimit+" is over the limit")
				return
			}
			assert.ErrorContains(t, err, "subject "+tt.wantAttr)
			require.ErrorIs(t, err, x509sa.ErrInvalidSubject)
		})
	}
}

func TestSubjectValidate(t *testing.T) {
	ok := ksa.ServiceAccount{Namespace: "shop", Name: "cart"}
	exts := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m
	}
	tests := []struct {
		name    string
		subject x509sa.Subject
		wantErr []error
	}{
		{name: "zero", subject: x509sa.Subject{}, wantErr: []error{x509sa.ErrInvalidSubject, ksa.ErrInvalidName}},
		{name: "bad name", subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "shop", Name: "Cart"}}, wantErr: []error{x509sa.ErrInvalidSubject, ksa.ErrInvalidName}},
		{name: "bad UID", subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: "a,b"}}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "UID over limit", subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: strings.Repeat("u", 129)}}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "bad pod", subject: x509sa.Subject{ServiceAccount: ok, PodName: "p/1"}, wantErr: []error{x509sa.ErrInvalidSubject, ksa.ErrInvalidName}},
		{name: "17 extensions", subject: x509sa.Subject{ServiceAccount: ok, Extensions: exts(17)}, wantErr: []error{x509sa.ErrLimit}},
		{name: "forged pod entry", subject: x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{"system:pod-name": "other"}}, wantErr: []error{x509sa.ErrInvalidSubject, x509sa.ErrReservedExtension}},
		{name: "forged in upper case", subject: x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{"System:Pod-Name": "other"}}, wantErr: []error{x509sa.ErrReservedExtension}},
		{name: "key with =", subject: x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{"a=b": "c"}}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "empty key", subject: x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{"": "c"}}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "key name over 63", subject: x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{strings.Repeat("k", 64): "c"}}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "value over limit", subject: x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{"k": strings.Repeat("v", 257)}}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "value with space", subject: x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{"k": "a b"}}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "value with comma", subject: x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{"k": "a,b"}}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "valid", subject: x509sa.Subject{ServiceAccount: ok, PodName: "p.1", Extensions: exts(16)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.subject.Check()
			_, nameErr := tt.subject.Name()
			if tt.wantErr == nil {
				require.NoError(t, err)
				require.NoError(t, nameErr)
				return
			}
			for _, want := range tt.wantErr {
				require.ErrorIs(t, err, want)
				require.ErrorIs(t, nameErr, want)
			}
		})
	}

	err := x509sa.Subject{ServiceAccount: ok, Extensions: map[string]string{"system:pod-name": "x"}}.Check()
	assert.ErrorIs(t, err, x509sa.ErrReservedExtension)
	assert.ErrorContains(t, err, `"system:pod-name"`)
}
