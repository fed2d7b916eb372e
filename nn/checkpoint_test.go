package nn

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/internal/memtest"
)

func TestCheckpointRoundTrip(t *testing.T) {
	tr := trainedTicTacToe(t)
	path := filepath.Join(t.TempDir(), "ckpt.fznet")
	meta := map[string]string{"positions": "12345"}
	if err := SaveCheckpoint(path, tr, meta); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCheckpoint(path, tictactoe.Game{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Step != 3 || c.Training == nil || c.Training.Steps != 3 || c.Metadata["positions"] != "12345" || c.Created.IsZero() {
		t.Fatalf("loaded step %d, training state %v, metadata %v, created %v", c.Step, c.Training != nil, c.Metadata, c.Created)
	}
	if c.Training.Config != tr.Config() || c.Training.Network != c.Network {
		t.Errorf("optimizer config %+v, want %+v; trains the network that plays: %v", c.Training.Config, tr.Config(), c.Training.Network == c.Network)
	}
	// Every array back exactly: weights, statistics, momentum.
	want, got := tr.s.Network.arrays(), c.Network.arrays()
	for i := range want {
		if maxAbsDiff(want[i], got[i]) != 0 {
			t.Fatalf("network array %d differs", i)
		}
	}
	for i, v := range tr.s.Velocity {
		if maxAbsDiff(v, c.Training.Velocity[i]) != 0 {
			t.Fatalf("momentum of %s differs", c.Network.learnables[i].name)
		}
	}

	// A model file has no optimizer state and is smaller.
	model := filepath.Join(t.TempDir(), "model.fznet")
	if err := SaveModel(model, tr.Network(), tr.Steps()+1, nil); err != nil {
		t.Fatal(err)
	}
	m, err := LoadCheckpoint(model, tictactoe.Game{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Training != nil || m.Step != 4 {
		t.Errorf("model file: trainer %v, step %d", m.Training != nil, m.Step)
	}
	if _, err := LoadCheckpointAs(model, tictactoe.Game{}, tinyConfig); err != nil {
		t.Errorf("LoadCheckpointAs with the right architecture: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(model))
	if len(entries) != 1 {
		t.Errorf("%d files in the directory after saving, want 1 (no temporary left)", len(entries))
	}
}

func TestCheckpointBadFiles(t *testing.T) {
	tr := trainedTicTacToe(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "good.fznet")
	if err := SaveCheckpoint(path, tr, nil); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	othello, err := New(shapeGame{"fake-othello", 4, 8, 8, 65}, tinyConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	othelloPath := filepath.Join(dir, "othello.fznet")
	if err := SaveModel(othelloPath, othello, 0, nil); err != nil {
		t.Fatal(err)
	}
	// resealed returns data with a valid checksum, as a file written by a
	// buggy or hostile program would have.
	resealed := func(data []byte) []byte {
		body := data[:len(data)-checksumLen]
		sum := sha256.Sum256(body)
		return append(append([]byte(nil), body...), sum[:]...)
	}
	hugeHeader := func() []byte {
		header := []byte(`{"game":"tictactoe","architecture":{"blocks":64,"filters":1000000000,"policy_filters":2,"value_filters":1,"value_hidden":8},"step":1,"created":"2026-01-01T00:00:00Z","optimizer":false}`)
		out := append([]byte(fileMagic), 0, 0, 0, 0, 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(out[8:], formatVersion)
		binary.LittleEndian.PutUint32(out[12:], uint32(len(header)))
		return resealed(append(append(out, header...), make([]byte, 64+checksumLen)...))
	}
	tests := []struct {
		name string
		data []byte
		path string
		want error
	}{
		{"flipped weight byte", func() []byte { d := append([]byte(nil), good...); d[len(d)/2] ^= 0x10; return d }(), "", ErrCorrupt},
		{"flipped header byte", func() []byte { d := append([]byte(nil), good...); d[20] ^= 0x01; return d }(), "", ErrCorrupt},
		{"flipped checksum byte", func() []byte { d := append([]byte(nil), good...); d[len(d)-1] ^= 0x01; return d }(), "", ErrCorrupt},
		{"truncated", good[:len(good)-100], "", ErrTruncated},
		{"truncated in header", good[:30], "", ErrTruncated},
		{"only magic", good[:5], "", ErrTruncated},
		{"empty", nil, "", ErrNotNetwork},
		{"text file", []byte("this is not a network at all, just some text\n"), "", ErrNotNetwork},
		{"future version", func() []byte {
			d := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(d[8:], formatVersion+1)
			return d
		}(), "", ErrVersion},
		{"huge header length", func() []byte {
			d := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(d[12:], 1<<31)
			return d
		}(), "", ErrCorrupt},
		{"huge architecture with a valid checksum", hugeHeader(), "", ErrCorrupt},
		{"extra bytes with a valid checksum", resealed(append(append([]byte(nil), good[:len(good)-checksumLen]...), 0, 0, 0, 0, 0, 0, 0, 0, 0)), "", ErrCorrupt},
		{"a NaN weight with a valid checksum", func() []byte {
			d := append([]byte(nil), good...)
			at := 16 + int(binary.LittleEndian.Uint32(d[12:])) + 4*3
			binary.LittleEndian.PutUint32(d[at:], math.Float32bits(float32(math.NaN())))
			return resealed(d)
		}(), "", ErrCorrupt},
		{"an infinite momentum with a valid checksum", func() []byte {
			d := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(d[len(d)-checksumLen-4:], math.Float32bits(float32(math.Inf(-1))))
			return resealed(d)
		}(), "", ErrCorrupt},
		{"another game", nil, othelloPath, ErrWrongGame},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path
			if p == "" {
				p = filepath.Join(dir, "bad.fznet")
				if err := os.WriteFile(p, tc.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, err := LoadCheckpoint(p, tictactoe.Game{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if c != nil {
				t.Error("a checkpoint came back with the error")
			}
		})
	}
	if _, err := LoadCheckpointAs(path, tictactoe.Game{}, DefaultConfig(tictactoe.Game{})); !errors.Is(err, ErrWrongArch) {
		t.Errorf("another architecture: error %v, want %v", err, ErrWrongArch)
	}
	if _, err := LoadCheckpoint(filepath.Join(dir, "missing.fznet"), tictactoe.Game{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v", err)
	}
}

// A file written when a game had fewer input planes (reversi before its
// side-to-move plane) is refused with ErrWrongEncoding, for a checkpoint
// and for a model file, not read as damage or with a panic.
func TestCheckpointOfAnotherEncoding(t *testing.T) {
	older := shapeGame{"fake-reversi", 4, 8, 8, 65}
	newer := shapeGame{"fake-reversi", 5, 8, 8, 65}
	dir := t.TempDir()
	net, err := New(older, tinyConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr := &storedTraining{TrainingState{Network: net, Config: DefaultTrainConfig()}}
	for _, p := range net.learnables {
		tr.s.Velocity = append(tr.s.Velocity, make([]float32, len(p.data)))
	}
	model, checkpoint := filepath.Join(dir, "model.fznet"), filepath.Join(dir, "checkpoint.fznet")
	if err := SaveModel(model, net, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := SaveCheckpoint(checkpoint, tr, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{model, checkpoint} {
		c, err := LoadCheckpoint(p, newer)
		if !errors.Is(err, ErrWrongEncoding) {
			t.Errorf("%s: error %v, want %v", filepath.Base(p), err, ErrWrongEncoding)
		}
		if c != nil {
			t.Errorf("%s: a checkpoint came back with the error", filepath.Base(p))
		}
		if _, err := LoadCheckpoint(p, older); err != nil {
			t.Errorf("%s: the encoding it was written for: %v", filepath.Base(p), err)
		}
	}
}

// TestCheckpointEveryDamageDetected flips single bits all over a model
// file and cuts it at many lengths: every load must fail with an error,
// none may panic.
func TestCheckpointEveryDamageDetected(t *testing.T) {
	net, err := New(tictactoe.Game{}, tinyConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "model.fznet")
	if err := SaveModel(path, net, 7, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.fznet")
	load := func(data []byte) error {
		if err := os.WriteFile(bad, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadCheckpoint(bad, tictactoe.Game{})
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		d := append([]byte(nil), good...)
		pos := rng.IntN(len(d))
		if i < 64 {
			pos = i // every byte of the fixed part and the header's start
		}
		d[pos] ^= 1 << rng.IntN(8)
		if err := load(d); err == nil {
			t.Fatalf("bit flipped at byte %d of %d: loaded without error", pos, len(d))
		}
	}
	for _, n := range []int{1, 7, 8, 15, 16, 17, 40, len(good) / 3, len(good) / 2, len(good) - checksumLen, len(good) - 1} {
		if err := load(good[:n]); err == nil {
			t.Fatalf("cut to %d of %d bytes: loaded without error", n, len(good))
		}
	}
}

// A small file with a valid checksum whose header claims a large network
// (a forged model sent to a worker) is refused by its size before any of
// the network it describes is allocated: a header's claim decides no
// memory a file of that size could not justify.
func TestCheckpointRefusesLargeClaimBeforeAllocating(t *testing.T) {
	header := []byte(`{"game":"tictactoe","architecture":{"blocks":8,"filters":1024,"policy_filters":2,"value_filters":1,"value_hidden":8},` +
		`"step":1,"created":"2026-01-01T00:00:00Z","optimizer":true,"train":` + trainConfigJSON(t) + `}`)
	data := append([]byte(fileMagic), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(data[8:], 2)
	binary.LittleEndian.PutUint32(data[12:], uint32(len(header)))
	data = append(append(data, header...), make([]byte, 1024)...)
	sum := sha256.Sum256(data)
	path := filepath.Join(t.TempDir(), "forged.fznet")
	if err := os.WriteFile(path, append(data, sum[:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	used := memtest.Allocated(func() { _, err = LoadCheckpoint(path, tictactoe.Game{}) })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %v, want %v", err, ErrCorrupt)
	}
	// The network claimed holds 151 million weights, twice (momentum):
	// over a gigabyte. Reading the header and the file takes kilobytes.
	if used > 16<<20 {
		t.Errorf("refusing a %d-byte file allocated %d MiB", len(data)+checksumLen, used>>20)
	}
}

func trainConfigJSON(t *testing.T) string {
	raw, err := json.Marshal(DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
