package vec

import "golang.org/x/sys/cpu"

// useVAES selects the VAES keystream (AESCTR); tests clear it to compare.
var useVAES = cpu.X86.HasAVX2 && cpu.X86.HasAES && cpu.X86.HasAVX512VAES

//go:noescape
func expandKey256(key *[32]byte, rk *[15][16]byte)

//go:noescape
func ctr256VAES(rk *[15][16]byte, dst *byte, n int, lo, hi uint64)
