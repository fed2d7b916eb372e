package data

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/internal/memtest"
)

// sampleOf builds a sample from a position with a made-up policy that
// differs per action, so that augmentation mistakes show.
func sampleOf(s env.State) Sample {
	g := s.Game()
	planes, h, w := g.EncodedShape()
	smp := Sample{Planes: make([]float32, planes*h*w), Outcome: 1, Weight: 1}
	s.Encode(smp.Planes)
	legal := s.LegalActions(nil)
	total := 0
	for _, a := range legal {
		total += a + 1
	}
	for _, a := range legal {
		smp.Legal = append(smp.Legal, int32(a))
		smp.Policy = append(smp.Policy, float32(a+1)/float32(total))
	}
	return smp
}

func someSamples(t testing.TB, n int) []Sample {
	t.Helper()
	var out []Sample
	for _, s := range envtest.RandomPositions(tictactoe.Game{}, 4*n, 1) {
		if !s.Terminal() {
			out = append(out, sampleOf(s))
		}
		if len(out) == n {
			break
		}
	}
	for i := range out {
		// Real-valued outcomes, as a one-player game's normalised score
		// gives them, beside the two-player game's -1, 0, 1.
		out[i].Outcome = float32(i%5-2) / 2
		if i%7 == 0 {
			out[i].Outcome = float32(i%13)/6.5 - 1 + 1e-3
		}
		out[i].Weight = float32(i%4) / 2
		// Two samples in three carry the auxiliary targets.
		if i%3 != 0 {
			out[i].Ownership = make([]int8, 9)
			for c := range out[i].Ownership {
				out[i].Ownership[c] = int8((c+i)%3 - 1)
			}
			out[i].Margin = float32(i%9-4) / 4
		}
	}
	return out
}

func TestShardRoundTrip(t *testing.T) {
	g := tictactoe.Game{}
	samples := someSamples(t, 200)
	path := filepath.Join(t.TempDir(), "gen-000001.shard")
	if err := WriteShard(path, g, samples); err != nil {
		t.Fatal(err)
	}
	got, err := ReadShard(path, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(samples) {
		t.Fatalf("read %d samples, wrote %d", len(got), len(samples))
	}
	for i := range got {
		a, b := got[i], samples[i]
		if !slices.Equal(a.Planes, b.Planes) || !slices.Equal(a.Legal, b.Legal) || !slices.Equal(a.Policy, b.Policy) ||
			a.Outcome != b.Outcome || a.Weight != b.Weight || !slices.Equal(a.Ownership, b.Ownership) || a.Margin != b.Margin {
			t.Fatalf("sample %d differs after the round trip", i)
		}
	}
	if n, err := ShardSamples(path, g); err != nil || n != len(samples) {
		t.Errorf("ShardSamples = %d, %v", n, err)
	}
}

// otherGame is tic-tac-toe under another name, for foreign shards.
type otherGame struct{ tictactoe.Game }

func (otherGame) Name() string { return "othergame" }

func TestShardDamage(t *testing.T) {
	g := tictactoe.Game{}
	dir := t.TempDir()
	path := filepath.Join(dir, "good.shard")
	if err := WriteShard(path, g, someSamples(t, 50)); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flipped := slices.Clone(good)
	flipped[len(flipped)-10] ^= 0x40
	headerFlip := slices.Clone(good)
	headerFlip[20] ^= 0x01
	foreign := filepath.Join(dir, "foreign.shard")
	if err := WriteShard(foreign, otherGame{}, someSamples(t, 5)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"flipped payload byte", write("a.shard", flipped), "checksum"},
		{"flipped header byte", write("b.shard", headerFlip), ""},
		{"truncated", write("c.shard", good[:len(good)-7]), "truncated"},
		{"header only", write("d.shard", good[:15]), "header"},
		{"empty", write("e.shard", nil), "header"},
		{"not a shard", write("f.shard", []byte(strings.Repeat("hello world ", 10))), "magic"},
		{"another game", foreign, "othergame"},
	}
	for _, tt := range tests {
		_, err := ReadShard(tt.path, g)
		if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want ErrCorrupt mentioning %q", tt.name, err, tt.want)
		}
		if err != nil && !strings.Contains(err.Error(), tt.path) {
			t.Errorf("%s: error %q does not name the file", tt.name, err)
		}
	}
}

func TestWindowSize(t *testing.T) {
	c := WindowConfig{Min: 1000, Alpha: 0.75, Beta: 0.4}
	if got := c.Size(500); got != 500 {
		t.Errorf("Size(500) = %d: below the minimum the window is everything", got)
	}
	if got := c.Size(1000); got != 1000 {
		t.Errorf("Size(1000) = %d", got)
	}
	prev := 1000
	for _, total := range []int{2000, 10000, 100000, 1000000} {
		got := c.Size(total)
		if got <= prev || got >= total {
			t.Errorf("Size(%d) = %d: want growth, sublinear", total, got)
		}
		prev = got
	}
	// At 16× the minimum: 1000 * (1 + 0.4*(16^0.75-1)/0.75) = 1000*(1+0.4*7/0.75).
	if got, want := c.Size(16000), 4733; got < want-1 || got > want+1 {
		t.Errorf("Size(16000) = %d, want %d", got, want)
	}
	c.Max = 2000
	if got := c.Size(1000000); got != 2000 {
		t.Errorf("capped Size = %d, want 2000", got)
	}
}

func TestReplaySamplesOnlyTheWindow(t *testing.T) {
	r := NewReplay(WindowConfig{Min: 100, Alpha: 1, Beta: 0}, 0) // a fixed window of 100
	for gen := 0; gen < 10; gen++ {
		chunk := make([]Sample, 30)
		for i := range chunk {
			chunk[i].Weight = float32(gen*30 + i) // the sample's serial number
		}
		r.Add(chunk)
	}
	if r.Len() != 100 || r.Total() != 300 {
		t.Fatalf("Len %d Total %d, want 100, 300", r.Len(), r.Total())
	}
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[float32]bool{}
	for i := 0; i < 5000; i++ {
		s := r.Sample(rng)
		if s.Weight < 200 {
			t.Fatalf("sampled #%v, outside the newest 100", s.Weight)
		}
		seen[s.Weight] = true
	}
	if len(seen) != 100 {
		t.Errorf("saw %d distinct samples of 100", len(seen))
	}
}

func TestLoadReplaySkipsCorruptShards(t *testing.T) {
	g := tictactoe.Game{}
	dir := t.TempDir()
	samples := someSamples(t, 40)
	for i, name := range []string{"gen-000001.shard", "gen-000002.shard", "gen-000003.shard"} {
		if err := WriteShard(filepath.Join(dir, name), g, samples[i*10:(i+1)*10]); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, "gen-000002.shard")
	b, _ := os.ReadFile(bad)
	b[len(b)-3] ^= 0xff
	os.WriteFile(bad, b, 0o644)
	var reported []error
	r, err := LoadReplay(dir, g, WindowConfig{Min: 1000}, func(err error) { reported = append(reported, err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "gen-000002") {
		t.Errorf("reported %v, want the damaged shard", reported)
	}
	if r.Len() != 20 {
		t.Errorf("window holds %d samples, want the 20 of the good shards", r.Len())
	}
}

func TestAugmentationMatchesTransformedPositions(t *testing.T) {
	g := tictactoe.Game{}
	aug := NewAugmenter(g)
	var dst Sample
	for _, s := range envtest.RandomPositions(g, 100, 3) {
		if s.Terminal() {
			continue
		}
		src := sampleOf(s)
		// Who holds each cell now stands in for the end of the game.
		owned := make([]float32, 9)
		s.(env.Ownership).Ownership(s.ToMove(), owned)
		for _, o := range owned {
			src.Ownership = append(src.Ownership, int8(o))
		}
		src.Margin = 0.25
		for k := 0; k < aug.Symmetries(); k++ {
			aug.Transform(&dst, &src, k)
			s.Transformed(k).(env.Ownership).Ownership(s.ToMove(), owned)
			for c, o := range owned {
				if dst.Ownership[c] != int8(o) {
					t.Fatalf("symmetry %d: ownership of cell %d is %d, the transformed position's is %v", k, c, dst.Ownership[c], o)
				}
			}
			if dst.Margin != src.Margin {
				t.Fatalf("symmetry %d: margin %v, want %v", k, dst.Margin, src.Margin)
			}
			// The transformed sample must be the sample of the transformed
			// position, with each action keeping its policy value.
			ts := s.Transformed(k)
			want := Sample{Planes: make([]float32, len(src.Planes))}
			ts.Encode(want.Planes)
			if !slices.Equal(dst.Planes, want.Planes) {
				t.Fatalf("symmetry %d: planes differ", k)
			}
			if got := ts.LegalActions(nil); len(got) != len(dst.Legal) {
				t.Fatalf("symmetry %d: legal count differs", k)
			}
			for i, a := range dst.Legal {
				if !ts.IsLegal(int(a)) || (i > 0 && dst.Legal[i-1] >= a) {
					t.Fatalf("symmetry %d: legal actions wrong or unsorted: %v", k, dst.Legal)
				}
			}
			for i, a := range src.Legal {
				j := slices.Index(dst.Legal, int32(g.Symmetries()[k].Action[a]))
				if j < 0 || dst.Policy[j] != src.Policy[i] {
					t.Fatalf("symmetry %d: action %d lost its policy value", k, a)
				}
			}
		}
	}
}

// TestDecodeShardBounds: bytes from elsewhere decode like a file, and a
// shard claiming more samples than the caller accepts is refused before
// anything is allocated for them.
func TestDecodeShardBounds(t *testing.T) {
	g := tictactoe.Game{}
	samples := someSamples(t, 50)
	raw, err := EncodeShard(g, samples)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeShard(raw, g, 50)
	if err != nil || len(got) != 50 || !slices.Equal(got[7].Planes, samples[7].Planes) {
		t.Fatalf("decode: %d samples, %v", len(got), err)
	}
	if _, err := DecodeShard(raw, g, 49); !errors.Is(err, ErrCorrupt) {
		t.Errorf("50 samples where 49 are accepted: %v", err)
	}
	if _, err := DecodeShard(raw[:len(raw)-1], g, 50); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a cut shard: %v", err)
	}
}

// TestOldShardVersions reads shards of the earlier formats, which had no
// auxiliary targets. testdata/v1.shard holds three tic-tac-toe samples
// made as v1Samples says, with int8 outcomes that come back as exactly
// -1, 0 and 1; testdata/v2.shard holds the same samples with real
// outcomes (halved). A shard written today is of the third format.
func TestOldShardVersions(t *testing.T) {
	g := tictactoe.Game{}
	for _, tt := range []struct {
		file         string
		outcomeScale float32
	}{
		{"v1.shard", 1},
		{"v2.shard", 0.5},
	} {
		got, err := ReadShard(filepath.Join("testdata", tt.file), g)
		if err != nil {
			t.Fatal(err)
		}
		want := v1Samples()
		if len(got) != len(want) {
			t.Fatalf("%s: read %d samples, want %d", tt.file, len(got), len(want))
		}
		for i := range got {
			a, b := got[i], want[i]
			b.Outcome *= tt.outcomeScale
			if !slices.Equal(a.Planes, b.Planes) || !slices.Equal(a.Legal, b.Legal) || !slices.Equal(a.Policy, b.Policy) ||
				a.Outcome != b.Outcome || a.Weight != b.Weight || a.HasOwnership() {
				t.Errorf("%s sample %d: read %+v, want %+v", tt.file, i, a, b)
			}
		}
	}
	raw, err := EncodeShard(g, v1Samples())
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(raw[8:]); v != 3 {
		t.Errorf("a new shard is of format version %d, want 3", v)
	}
}

// TestShardRefusesBadAuxiliaryTargets: ownership values other than −1, 0,
// 1, a grid of the wrong size, a margin out of [−1, 1] or one without
// ownership are refused when written and when read.
func TestShardRefusesBadAuxiliaryTargets(t *testing.T) {
	g := tictactoe.Game{}
	for _, tt := range []struct {
		name, want string
		spoil      func(s *Sample)
	}{
		{"ownership 2", "ownership of cell 4", func(s *Sample) { s.Ownership[4] = 2 }},
		{"short grid", "ownership values", func(s *Sample) { s.Ownership = s.Ownership[:8] }},
		{"margin NaN", "margin", func(s *Sample) { s.Margin = float32(math.NaN()) }},
		{"margin 1.5", "margin", func(s *Sample) { s.Margin = 1.5 }},
		{"margin alone", "without ownership", func(s *Sample) { s.Ownership, s.Margin = nil, 0.5 }},
	} {
		samples := someSamples(t, 6)
		tt.spoil(&samples[2])
		if _, err := EncodeShard(g, samples); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: encoding gave %v, want a refusal naming %q", tt.name, err, tt.want)
		}
	}
	// Read: a flags word other than 0 and 1, forged with a good checksum.
	samples := someSamples(t, 3)
	raw, err := EncodeShard(g, samples)
	if err != nil {
		t.Fatal(err)
	}
	forged := rewritePayload(t, raw, func(payload []byte) { binary.LittleEndian.PutUint32(payload[12:], 7) })
	if _, err := DecodeShard(forged, g, 3); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "flags") {
		t.Errorf("flags 7: %v, want ErrCorrupt naming the flags", err)
	}
}

// v1Samples are the samples of testdata/v1.shard.
func v1Samples() []Sample {
	var out []Sample
	for i, o := range []float32{-1, 0, 1} {
		s := Sample{Planes: make([]float32, 27), Outcome: o, Weight: float32(i+1) / 2,
			Legal: []int32{int32(i), 4, 8}, Policy: []float32{0.5, 0.25, 0.25}}
		for k := range s.Planes {
			s.Planes[k] = float32((k+i)%3) / 2
		}
		out = append(out, s)
	}
	return out
}

// withOutcome re-encodes a shard's bytes with sample i's outcome set to
// v, checksum and all, as a forger would: what EncodeShard refuses to
// write must still be refused when it arrives. The samples before i carry
// no auxiliary targets.
func withOutcome(t *testing.T, raw []byte, i int, v float32, planeValues int, legal []int) []byte {
	t.Helper()
	return rewritePayload(t, raw, func(payload []byte) {
		off := 0
		for k := 0; k < i; k++ {
			off += 4 + 4 + 4 + 4 + 4*planeValues + 8*legal[k]
		}
		binary.LittleEndian.PutUint32(payload[off+4:], math.Float32bits(v))
	})
}

// rewritePayload re-encodes a shard's bytes after edit changes its
// uncompressed payload, checksum and all.
func rewritePayload(t *testing.T, raw []byte, edit func(payload []byte)) []byte {
	t.Helper()
	nameLen := int(binary.LittleEndian.Uint16(raw[10:]))
	headerLen := 12 + nameLen + 5*4 + 8
	payload, err := io.ReadAll(flate.NewReader(bytes.NewReader(raw[headerLen+4:])))
	if err != nil {
		t.Fatal(err)
	}
	edit(payload)
	var z bytes.Buffer
	zw, _ := flate.NewWriter(&z, flate.BestSpeed)
	zw.Write(payload)
	zw.Close()
	out := append([]byte(nil), raw[:headerLen]...)
	binary.LittleEndian.PutUint64(out[headerLen-8:], uint64(z.Len()))
	crc := crc32.Update(crc32.Checksum(out, castagnoli), castagnoli, z.Bytes())
	out = binary.LittleEndian.AppendUint32(out, crc)
	return append(out, z.Bytes()...)
}

// TestShardRefusesBadOutcomes: an outcome that is not a number in
// [-1, 1] is refused, naming it, whether a caller tries to write it or a
// shard from elsewhere carries it.
func TestShardRefusesBadOutcomes(t *testing.T) {
	g := tictactoe.Game{}
	samples := someSamples(t, 6)
	for i := range samples {
		samples[i].Ownership, samples[i].Margin = nil, 0
	}
	raw, err := EncodeShard(g, samples)
	if err != nil {
		t.Fatal(err)
	}
	planes, h, w := g.EncodedShape()
	var legal []int
	for _, s := range samples {
		legal = append(legal, len(s.Legal))
	}
	// The forging itself is right: the outcome it writes comes back.
	if got, err := DecodeShard(withOutcome(t, raw, 4, 0.375, planes*h*w, legal), g, 6); err != nil || got[4].Outcome != 0.375 {
		t.Fatalf("a forged good outcome: %v", err)
	}
	for _, tt := range []struct {
		name string
		v    float32
	}{
		{"NaN", float32(math.NaN())},
		{"+Inf", float32(math.Inf(1))},
		{"-Inf", float32(math.Inf(-1))},
		{"above 1", 1.0001},
		{"below -1", -1.5},
		{"huge", 1e30},
	} {
		bad := slices.Clone(samples)
		bad[3].Outcome = tt.v
		if _, err := EncodeShard(g, bad); err == nil || !strings.Contains(err.Error(), "outcome") {
			t.Errorf("%s: encoding gave %v, want a refusal naming the outcome", tt.name, err)
		}
		_, err := DecodeShard(withOutcome(t, raw, 3, tt.v, planes*h*w, legal), g, 6)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "sample 3") || !strings.Contains(err.Error(), "outcome") {
			t.Errorf("%s: decoding gave %v, want ErrCorrupt naming sample 3's outcome", tt.name, err)
		}
	}
}

// resealShard recomputes a shard's checksum over its header and payload,
// as a buggy or hostile writer would have.
func resealShard(raw []byte) []byte {
	raw = slices.Clone(raw)
	nameLen := int(binary.LittleEndian.Uint16(raw[10:]))
	at := 12 + nameLen + 28
	crc := crc32.Update(crc32.Checksum(raw[:at], castagnoli), castagnoli, raw[at+4:])
	binary.LittleEndian.PutUint32(raw[at:], crc)
	return raw
}

// A shard with a valid checksum that claims millions of samples and holds
// five is refused without allocating for the millions: memory follows
// what a shard holds, not what its header says.
func TestShardRefusesLargeClaimBeforeAllocating(t *testing.T) {
	g := tictactoe.Game{}
	good, err := EncodeShard(g, someSamples(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	nameLen := int(binary.LittleEndian.Uint16(good[10:]))
	forged := slices.Clone(good)
	binary.LittleEndian.PutUint32(forged[12+nameLen+16:], maxShardSamples)
	forged = resealShard(forged)
	path := filepath.Join(t.TempDir(), "forged.shard")
	if err := os.WriteFile(path, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	used := memtest.Allocated(func() { _, err = ReadShard(path, g) })
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "sample 5") {
		t.Fatalf("error %v, want the sixth sample missing", err)
	}
	if used > 16<<20 {
		t.Errorf("refusing a %d-byte shard allocated %d MiB", len(forged), used>>20)
	}
	if n, err := ShardSamples(path, g); err != nil || n != maxShardSamples {
		t.Errorf("its header read alone: %d samples, error %v", n, err)
	}
}
