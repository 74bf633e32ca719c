package jws

import (
	"bytes"
	"encoding/asn1"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

// ecSig is the ASN.1 form of an ECDSA signature, parsed with encoding/asn1
// as an independent check of der.go.
type ecSig struct{ R, S *big.Int }

// sizes are the R and S widths of ES256, ES384 and ES512.
var sizes = []int{32, 48, 66}

// FuzzDERToRaw feeds arbitrary bytes to derToRaw. Whatever it accepts must
// be a DER ECDSA signature by encoding/asn1's reading too, with positive r
// and s that fit the width, and rawToDER must give back exactly the input
// (DER has one encoding per value).
func FuzzDERToRaw(f *testing.F) {
	f.Add([]byte{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02})
	f.Add([]byte{0x30, 0x08, 0x02, 0x02, 0x00, 0x80, 0x02, 0x02, 0x00, 0xff})
	f.Add([]byte{0x30, 0x06, 0x02, 0x01, 0x80, 0x02, 0x01, 0x01})             // negative r
	f.Add([]byte{0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01})       // non-minimal r
	f.Add([]byte{0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x01})             // zero r
	f.Add([]byte{0x30, 0x05, 0x02, 0x00, 0x02, 0x01, 0x01})                   // empty r
	f.Add([]byte{0x30, 0x81, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01})       // non-minimal length
	f.Add([]byte{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02, 0x00})       // trailing data
	f.Add([]byte{0x30, 0x09, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02, 0x05, 0x00}) // extra element
	f.Add(mustMarshal(f, big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 527)))
	f.Add(mustMarshal(f, new(big.Int).Lsh(big.NewInt(1), 528), big.NewInt(1)))
	f.Fuzz(func(t *testing.T, der []byte) {
		for _, size := range sizes {
			raw, ok := derToRaw(der, size)
			var sig ecSig
			rest, err := asn1.Unmarshal(der, &sig)
			asn1OK := err == nil && len(rest) == 0 &&
				sig.R.Sign() > 0 && sig.S.Sign() > 0 &&
				len(sig.R.Bytes()) <= size && len(sig.S.Bytes()) <= size
			if asn1OK {
				// encoding/asn1 also accepts a few non-DER forms; only
				// canonical DER must be accepted by derToRaw.
				canonical, err := asn1.Marshal(sig)
				require.NoError(t, err)
				if bytes.Equal(canonical, der) {
					require.True(t, ok, "derToRaw refused DER %x", der)
				}
			}
			if !ok {
				require.Nil(t, raw)
				continue
			}
			require.True(t, asn1OK, "derToRaw accepted %x (asn1: %v)", der, err)
			require.Len(t, raw, 2*size)
			require.Equal(t, 0, sig.R.Cmp(new(big.Int).SetBytes(raw[:size])))
			require.Equal(t, 0, sig.S.Cmp(new(big.Int).SetBytes(raw[size:])))

			back, ok := rawToDER(raw[:size], raw[size:])
			require.True(t, ok)
			require.Equal(t, der, back)
		}
	})
}

// FuzzRawToDER feeds arbitrary r and s to rawToDER: the DER it returns
// parses with encoding/asn1 to the same integers, and derToRaw reads it
// back. Values a JWS signature can carry (non-zero, at most 66 bytes)
// are always accepted.
func FuzzRawToDER(f *testing.F) {
	f.Add([]byte{1}, []byte{2})
	f.Add([]byte{0x80}, []byte{0xff, 0xff})
	f.Add([]byte{0, 0, 0x7f}, []byte{0, 0x80})
	f.Add([]byte{0}, []byte{1})
	f.Add([]byte{}, []byte{1})
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0x01}, 32))
	f.Add(bytes.Repeat([]byte{0xff}, 66), bytes.Repeat([]byte{0xff}, 66))
	f.Add(bytes.Repeat([]byte{0xff}, 126), []byte{1})
	f.Add(bytes.Repeat([]byte{0x7f}, 127), bytes.Repeat([]byte{0x7f}, 127))
	f.Add(bytes.Repeat([]byte{0xff}, 127), []byte{1})
	f.Fuzz(func(t *testing.T, r, s []byte) {
		wantR, wantS := new(big.Int).SetBytes(r), new(big.Int).SetBytes(s)
		der, ok := rawToDER(r, s)
		fits := wantR.Sign() > 0 && wantS.Sign() > 0 &&
			len(wantR.Bytes()) <= 66 && len(wantS.Bytes()) <= 66
		if fits {
			require.True(t, ok, "rawToDER refused r=%x s=%x", r, s)
		}
		if !ok {
			require.Nil(t, der)
			return
		}
		require.Positive(t, wantR.Sign())
		require.Positive(t, wantS.Sign())

		var sig ecSig
		rest, err := asn1.Unmarshal(der, &sig)
		require.NoError(t, err, "DER %x", der)
		require.Empty(t, rest)
		require.Equal(t, 0, wantR.Cmp(sig.R), "r")
		require.Equal(t, 0, wantS.Cmp(sig.S), "s")
		canonical, err := asn1.Marshal(sig)
		require.NoError(t, err)
		require.Equal(t, canonical, der, "rawToDER's output is not canonical DER")

		size := max(len(wantR.Bytes()), len(wantS.Bytes()))
		raw, ok := derToRaw(der, size)
		require.True(t, ok)
		require.Equal(t, 0, wantR.Cmp(new(big.Int).SetBytes(raw[:size])))
		require.Equal(t, 0, wantS.Cmp(new(big.Int).SetBytes(raw[size:])))
	})
}

func mustMarshal(tb testing.TB, r, s *big.Int) []byte {
	tb.Helper()
	der, err := asn1.Marshal(ecSig{r, s})
	require.NoError(tb, err)
	return der
}
