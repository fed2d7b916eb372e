package data

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/internal/memtest"
)

// fuzzMaxSamples is the most samples the fuzzed decoders are asked to
// accept, as a trainer asks for at most its wire limit.
const fuzzMaxSamples = 64

// FuzzDecodeShard decodes arbitrary bytes, their checksum made valid
// where they are long enough to hold one (a shard from another machine
// need only be well formed to pass it), so that every check past the
// checksum is reached.
func FuzzDecodeShard(f *testing.F) {
	for _, raw := range seedShards(f) {
		f.Add(raw)
	}
	f.Add([]byte(shardMagic))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) >= 12 {
			if at := 12 + int(binary.LittleEndian.Uint16(raw[10:])) + 28; len(raw) >= at+4 {
				raw = resealShard(raw)
			}
		}
		checkDecoded(t, raw)
	})
}

// FuzzDecodeShardSamples decodes a well-formed shard around an arbitrary
// uncompressed payload, claiming count samples in format version, so
// that the fuzzer works on the samples themselves rather than on
// deflate's stream.
func FuzzDecodeShardSamples(f *testing.F) {
	g := tictactoe.Game{}
	for _, raw := range seedShards(f) {
		payload, err := io.ReadAll(flate.NewReader(bytes.NewReader(raw[12+len(g.Name())+32:])))
		if err != nil {
			f.Fatal(err)
		}
		n := uint8(binary.LittleEndian.Uint32(raw[12+len(g.Name())+16:]))
		f.Add(uint8(shardVersion), n, payload)
		f.Add(uint8(shardVersion), n+1, payload)
	}
	f.Fuzz(func(t *testing.T, version, count uint8, payload []byte) {
		var z bytes.Buffer
		zw, _ := flate.NewWriter(&z, flate.BestSpeed)
		zw.Write(payload)
		zw.Close()
		raw := shardHeader(g, int(count), z.Len())
		binary.LittleEndian.PutUint16(raw[8:], uint16(version))
		crc := crc32.Update(crc32.Checksum(raw, castagnoli), castagnoli, z.Bytes())
		raw = binary.LittleEndian.AppendUint32(raw, crc)
		checkDecoded(t, append(raw, z.Bytes()...))
	})
}

// seedShards are shards of one and of five tic-tac-toe samples.
func seedShards(f *testing.F) [][]byte {
	var out [][]byte
	for _, n := range []int{1, 5} {
		raw, err := EncodeShard(tictactoe.Game{}, someSamples(f, n))
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, raw)
	}
	return out
}

// checkDecoded decodes raw as a trainer decodes a shard from elsewhere: it
// must not panic, must allocate in proportion to what the shard holds,
// must refuse with ErrCorrupt or return at most the samples asked for,
// each valid, which encode and decode to the same bytes. (Values a
// trainer needs finite are the wire's to check: cluster.checkValues.)
func checkDecoded(t *testing.T, raw []byte) {
	g := tictactoe.Game{}
	var samples []Sample
	var err error
	used := memtest.Allocated(func() { samples, err = DecodeShard(raw, g, fuzzMaxSamples) })
	// A sample of tic-tac-toe takes under a kilobyte however it decodes.
	if used > 2<<20+fuzzMaxSamples<<10 {
		t.Fatalf("decoding %d bytes allocated %d KiB", len(raw), used>>10)
	}
	if err != nil {
		if !errors.Is(err, ErrCorrupt) || samples != nil {
			t.Fatalf("%d samples with error %v, want none and %v", len(samples), err, ErrCorrupt)
		}
		return
	}
	if len(samples) > fuzzMaxSamples {
		t.Fatalf("%d samples, asked for at most %d", len(samples), fuzzMaxSamples)
	}
	for i := range samples {
		if err := samples[i].Validate(g); err != nil {
			t.Fatalf("sample %d accepted but invalid: %v", i, err)
		}
	}
	encoded, err := EncodeShard(g, samples)
	if err != nil {
		t.Fatalf("accepted samples do not encode: %v", err)
	}
	again, err := DecodeShard(encoded, g, fuzzMaxSamples)
	if err != nil {
		t.Fatalf("accepted samples encoded do not decode: %v", err)
	}
	if reencoded, err := EncodeShard(g, again); err != nil || !bytes.Equal(reencoded, encoded) {
		t.Fatalf("a second encoding differs from the first (error %v)", err)
	}
}
