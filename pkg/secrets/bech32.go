package secrets

import (
	"errors"
	"strings"
)

// bech32 encoding (BIP 173), the text form age uses for X25519 identities
// and recipients. filippo.io/age keeps its encoder internal, and an
// identity can only be built from this text, so syslet carries the
// encoder (the decoder is age's own, in age.ParseX25519Identity).

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func bech32HRPExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := range len(hrp) {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := range len(hrp) {
		out = append(out, hrp[i]&31)
	}
	return out
}

// to5Bits regroups 8-bit bytes into 5-bit groups, padding the last one.
func to5Bits(data []byte) []byte {
	var out []byte
	acc, bits := uint32(0), uint(0)
	for _, b := range data {
		acc = acc<<8 | uint32(b)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, byte(acc>>bits)&31)
		}
	}
	if bits > 0 {
		out = append(out, byte(acc<<(5-bits))&31)
	}
	return out
}

// bech32Encode encodes data under the human-readable part hrp, in lower
// case. age writes identities upper case; callers convert.
func bech32Encode(hrp string, data []byte) (string, error) {
	hrp = strings.ToLower(hrp)
	if hrp == "" {
		return "", errors.New("bech32: empty human-readable part")
	}
	values := to5Bits(data)
	check := append(bech32HRPExpand(hrp), values...)
	check = append(check, 0, 0, 0, 0, 0, 0)
	mod := bech32Polymod(check) ^ 1
	var b strings.Builder
	b.Grow(len(hrp) + 1 + len(values) + 6)
	b.WriteString(hrp)
	b.WriteByte('1')
	for _, v := range values {
		b.WriteByte(bech32Charset[v])
	}
	for i := range 6 {
		b.WriteByte(bech32Charset[(mod>>(5*(5-i)))&31])
	}
	return b.String(), nil
}
