package jws

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex in test table: %v", err)
	}
	return b
}

func TestRawToDER(t *testing.T) {
	tests := []struct {
		name   string
		r, s   string // hex
		want   string // hex; "" when refused
		wantOK bool
	}{
		{name: "small values", r: "01", s: "02", want: "3006020101020102", wantOK: true},
		{name: "fixed width padding is dropped", r: "000001", s: "0002", want: "3006020101020102", wantOK: true},
		{name: "high-bit r gets a leading zero", r: "80", s: "01", want: "300702020080020101", wantOK: true},
		{name: "high-bit s gets a leading zero", r: "01", s: "ff", want: "3007020101020200ff", wantOK: true},
		{name: "both high-bit", r: "ff00", s: "8001", want: "300a020300ff0002030080 01", wantOK: true},
		{name: "padding before a high-bit byte", r: "0080", s: "7f", want: "30070202008002017f", wantOK: true},
		{name: "zero r", r: "0000", s: "01", wantOK: false},
		{name: "zero s", r: "01", s: "00", wantOK: false},
		{name: "empty r", r: "", s: "01", wantOK: false},
		{name: "both empty", r: "", s: "", wantOK: false},
		{
			// 2+33+2+33 = 70 bytes of content: still the short form.
			name: "ES256-sized high-bit values", r: "ff" + repeatHex("11", 31), s: "80" + repeatHex("22", 31),
			want: "3046" + "022100ff" + repeatHex("11", 31) + "02210080" + repeatHex("22", 31), wantOK: true,
		},
		{
			// 2+67+2+67 = 138 bytes of content: the 0x81 long form.
			name: "ES512-sized high-bit values", r: "ff" + repeatHex("11", 65), s: "ff" + repeatHex("22", 65),
			want: "3081" + "8a" + "024300ff" + repeatHex("11", 65) + "024300ff" + repeatHex("22", 65), wantOK: true,
		},
		{
			// The longest content the one-byte length can hold.
			name: "content of 255 bytes", r: repeatHex("7f", 125), s: repeatHex("7f", 126),
			want: "3081ff" + "027d" + repeatHex("7f", 125) + "027e" + repeatHex("7f", 126), wantOK: true,
		},
		{name: "content of 256 bytes", r: repeatHex("7f", 126), s: repeatHex("7f", 126), wantOK: false},
		{name: "integer too long for the short form", r: repeatHex("7f", 128), s: "01", wantOK: false},
		{name: "high-bit integer too long for the short form", r: repeatHex("ff", 127), s: "01", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := rawToDER(unhex(t, tt.r), unhex(t, tt.s))
			assert.Equal(t, tt.wantOK, ok)
			if !tt.wantOK {
				assert.Nil(t, got)
				return
			}
			assert.Equal(t, string(bytes.ReplaceAll([]byte(tt.want), []byte(" "), nil)), hex.EncodeToString(got))
		})
	}
}

func repeatHex(b string, n int) string {
	return string(bytes.Repeat([]byte(b), n))
}

func TestDERToRaw(t *testing.T) {
	tests := []struct {
		name   string
		der    string // hex
		size   int
		want   string // hex; "" when refused
		wantOK bool
	}{
		{name: "small values", der: "3006020101020102", size: 4, want: "00000001" + "00000002", wantOK: true},
		{name: "leading zeros of high-bit values are dropped", der: "300702020080020101", size: 2, want: "0080" + "0001", wantOK: true},
		{name: "values that fill the width", der: "3009020300ffff02027fff", size: 2, want: "ffff7fff", wantOK: true},
		{name: "long-form sequence length", der: "3081" + "8a" + "024300ff" + repeatHex("11", 65) + "024300ff" + repeatHex("22", 65), size: 66,
			want: "ff" + repeatHex("11", 65) + "ff" + repeatHex("22", 65), wantOK: true},
		{name: "r wider than the size", der: "3007020201010201 01", size: 1},
		{name: "high-bit r wider than the size", der: "30090204008000000201 01", size: 2},
		{name: "negative r", der: "3006020180020101", size: 2},
		{name: "negative s", der: "30060201010201ff", size: 2},
		{name: "zero r", der: "3006020100020101", size: 2},
		{name: "zero s", der: "3006020101020100", size: 2},
		{name: "empty r", der: "30050200020101", size: 2},
		{name: "non-minimal r", der: "300702020001020101", size: 2},
		{name: "non-minimal s", der: "300702010102020001", size: 2},
		{name: "non-minimal sequence length", der: "30810602010102 0101", size: 2},
		{name: "two-byte sequence length", der: "3082000602010102 0101", size: 2},
		{name: "wrong outer tag", der: "3106020101020101", size: 2},
		{name: "wrong integer tag", der: "3006030101020101", size: 2},
		{name: "sequence length beyond the input", der: "3007020101020101", size: 2},
		{name: "integer length beyond the sequence", der: "3006020201020101", size: 2},
		{name: "trailing data", der: "300602010102010100", size: 2},
		{name: "third element", der: "3008020101020101 0500", size: 2},
		{name: "only r", der: "3003020101", size: 2},
		{name: "empty sequence", der: "3000", size: 2},
		{name: "empty input", der: "", size: 2},
		{name: "tag only", der: "30", size: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			der := unhex(t, string(bytes.ReplaceAll([]byte(tt.der), []byte(" "), nil)))
			got, ok := derToRaw(der, tt.size)
			assert.Equal(t, tt.wantOK, ok)
			if !tt.wantOK {
				assert.Nil(t, got)
				return
			}
			assert.Equal(t, tt.want, hex.EncodeToString(got))
		})
	}
}
