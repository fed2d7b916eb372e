package main

import "testing"

// TestVPDPBUSDVEX: the hand-encoded AVX-VNNI instruction has the bytes
// GNU as writes for "{vex} vpdpbusd" (AT&T order: src2, src1, dst), over
// low and high registers in each operand.
func TestVPDPBUSDVEX(t *testing.T) {
	for _, tc := range []struct {
		dst, src1, src2 int
		want            string
	}{
		{0, 1, 2, "BYTE $0xc4; BYTE $0xe2; BYTE $0x75; BYTE $0x50; BYTE $0xc2"},
		{11, 15, 14, "BYTE $0xc4; BYTE $0x42; BYTE $0x05; BYTE $0x50; BYTE $0xde"},
		{3, 15, 12, "BYTE $0xc4; BYTE $0xc2; BYTE $0x05; BYTE $0x50; BYTE $0xdc"},
		{8, 15, 13, "BYTE $0xc4; BYTE $0x42; BYTE $0x05; BYTE $0x50; BYTE $0xc5"},
	} {
		if got := vpdpbusdVEX(tc.dst, tc.src1, tc.src2); got != tc.want {
			t.Errorf("VPDPBUSD Y%d, Y%d, Y%d: %s, want %s", tc.src2, tc.src1, tc.dst, got, tc.want)
		}
	}
}
