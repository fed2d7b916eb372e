package nn

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/internal/atomicfile"
)

// The file format of checkpoints and model files, version 2, all integers
// and floats little-endian:
//
//	magic     8 bytes "FZNET\x00\r\n" (the CR LF catches text-mode copies)
//	version   uint32
//	length    uint32, the header's length in bytes (at most 1 MiB)
//	header    JSON: fileHeader
//	arrays    float32 values: every learnable array, then every batch-norm
//	          statistic, then (only if header.optimizer) the momentum of
//	          every learnable array, in the network's fixed order; their
//	          sizes follow from the game and the architecture in the header
//	checksum  SHA-256 of everything before it
//
// A model file is the same format without the optimizer section. An
// exported model (header.folded, new in version 2) holds instead the
// inference weights with batch norm folded in: see SaveFolded. A
// checkpoint of a run that averages its weights (header.trained, new in
// version 3) holds the average as the network's arrays and, after the
// momentum, the trained weights and statistics the momentum belongs to:
// see SaveAveragedCheckpoint. A file is written with the oldest version
// that can hold it; versions 1 and 2 are version 3 without the fields
// they lack, and are still read.
const (
	fileMagic     = "FZNET\x00\r\n"
	formatVersion = 3
	// oldestVersion is the oldest format version this program reads.
	oldestVersion = 1
	maxHeaderLen  = 1 << 20
	checksumLen   = sha256.Size
)

// Errors a load can wrap, to tell the causes apart.
var (
	ErrNotNetwork = errors.New("not a flipzero network file")
	ErrVersion    = errors.New("unsupported network file version")
	ErrTruncated  = errors.New("network file is truncated")
	ErrCorrupt    = errors.New("network file is corrupted")
	ErrWrongGame  = errors.New("network file is for another game")
	ErrWrongArch  = errors.New("network file has another architecture")
	// ErrWrongEncoding: the file is for this game but for another number
	// of input planes, as when a game's encoding gained a plane.
	ErrWrongEncoding = errors.New("network file is for another encoding of the game")
)

type fileHeader struct {
	Game      string            `json:"game"`
	Arch      Config            `json:"architecture"`
	Step      int64             `json:"step"`
	Created   time.Time         `json:"created"`
	Optimizer bool              `json:"optimizer"`
	Folded    bool              `json:"folded,omitempty"`
	Trained   bool              `json:"trained,omitempty"`
	Train     *TrainConfig      `json:"train,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// Checkpoint is what a network file holds.
type Checkpoint struct {
	// Network is the network that plays: in a run that averages its
	// weights, the average.
	Network *Network
	// Training is the saved optimizer state and step count, which any
	// backend's NewTraining resumes; nil for a model file, which has
	// none. Its network is Network, or in a run that averages its
	// weights the trained weights the average follows.
	Training *TrainingState
	Step     int64
	Created  time.Time
	Metadata map[string]string
	// Folded says the file held inference weights with batch norm folded
	// in (an exported model): Network then plays like the network it was
	// exported from but cannot be trained.
	Folded bool
}

// SaveCheckpoint writes the trainer's network, optimizer state and step
// count, with free-form metadata, atomically to path.
func SaveCheckpoint(path string, t Training, metadata map[string]string) error {
	return SaveAveragedCheckpoint(path, t, nil, metadata)
}

// SaveAveragedCheckpoint is SaveCheckpoint for a run that averages its
// weights: average, the network that plays, is the file's network, and
// the trainer's weights follow the optimizer state, so that training
// resumes where it was and everything that loads the file to play
// (arena, export, a self-play worker) plays the average. A nil average
// writes a plain checkpoint.
func SaveAveragedCheckpoint(path string, t Training, average *Network, metadata map[string]string) error {
	if err := t.Sync(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	cfg := t.Config()
	net := t.Network()
	velocity := t.Velocity()
	if velocity == nil {
		return fmt.Errorf("checkpoint %s: the trainer gave no momentum to save", path)
	}
	if err := (TrainingState{Network: net, Velocity: velocity}).CheckVelocity(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	h := fileHeader{Step: t.Steps(), Optimizer: true, Train: &cfg, Metadata: metadata}
	if average == nil {
		return writeNetworkFile(path, net.game, net.cfg, h, append(net.arrays(), velocity...))
	}
	if !average.sameLayout(net) {
		return fmt.Errorf("checkpoint %s: the average is a %s %v, the trained network a %s %v: %w",
			path, average.game.Name(), average.cfg, net.game.Name(), net.cfg, ErrWrongArch)
	}
	h.Trained = true
	arrays := append(average.arrays(), velocity...)
	return writeNetworkFile(path, net.game, net.cfg, h, append(arrays, net.arrays()...))
}

// SaveModel writes a network without optimizer state atomically to path:
// the file to play with.
func SaveModel(path string, n *Network, step int64, metadata map[string]string) error {
	return writeNetworkFile(path, n.game, n.cfg, fileHeader{Step: step, Metadata: metadata}, n.arrays())
}

func writeNetworkFile(path string, game env.Game, arch Config, h fileHeader, arrays [][]float32) error {
	h.Game = game.Name()
	h.Arch = arch
	h.Created = time.Now().UTC().Truncate(time.Second)
	header, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("save network %s: %w", path, err)
	}
	if len(header) > maxHeaderLen {
		return fmt.Errorf("save network %s: header of %d bytes (metadata too large), limit %d", path, len(header), maxHeaderLen)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		sum := sha256.New()
		out := io.MultiWriter(w, sum)
		var fixed [16]byte
		copy(fixed[:8], fileMagic)
		binary.LittleEndian.PutUint32(fixed[8:], h.version())
		binary.LittleEndian.PutUint32(fixed[12:], uint32(len(header)))
		if _, err := out.Write(fixed[:]); err != nil {
			return err
		}
		if _, err := out.Write(header); err != nil {
			return err
		}
		buf := make([]byte, 0, 1<<16)
		for _, a := range arrays {
			for _, v := range a {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
				if len(buf) == cap(buf) {
					if _, err := out.Write(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
			}
		}
		if _, err := out.Write(buf); err != nil {
			return err
		}
		_, err := w.Write(sum.Sum(nil))
		return err
	})
}

// version is the oldest format version that holds a file with this
// header.
func (h fileHeader) version() uint32 {
	if h.Trained {
		return 3
	}
	return 2
}

// arrays lists the network's arrays in file order: learnables, then
// statistics.
func (n *Network) arrays() [][]float32 {
	var out [][]float32
	for _, p := range n.learnables {
		out = append(out, p.data)
	}
	for _, p := range n.stats {
		out = append(out, p.data)
	}
	return out
}

// LoadCheckpoint reads a checkpoint or model file for game. Everything is
// checked before use: the magic, version, sizes, checksum, game and
// architecture; no size read from the file decides an allocation.
func LoadCheckpoint(path string, game env.Game) (*Checkpoint, error) {
	c, err := loadNetworkFile(path, game)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return c, nil
}

// LoadCheckpointAs is LoadCheckpoint for a file that must have the
// architecture cfg.
func LoadCheckpointAs(path string, game env.Game, cfg Config) (*Checkpoint, error) {
	c, err := LoadCheckpoint(path, game)
	if err != nil {
		return nil, err
	}
	if c.Network.cfg != cfg.normal() {
		return nil, fmt.Errorf("load %s: %w: %v, want %v", path, ErrWrongArch, c.Network.cfg, cfg)
	}
	return c, nil
}

func loadNetworkFile(path string, game env.Game) (*Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	var fixed [16]byte
	if _, err := io.ReadFull(f, fixed[:]); err != nil {
		if size > 0 && string(fixed[:min(8, size)]) == fileMagic[:min(8, size)] {
			return nil, fmt.Errorf("%w: %d bytes", ErrTruncated, size)
		}
		return nil, fmt.Errorf("%w: %d bytes", ErrNotNetwork, size)
	}
	if string(fixed[:8]) != fileMagic {
		return nil, ErrNotNetwork
	}
	version := binary.LittleEndian.Uint32(fixed[8:])
	if version < oldestVersion || version > formatVersion {
		return nil, fmt.Errorf("%w %d (this program reads versions %d to %d)", ErrVersion, version, oldestVersion, formatVersion)
	}
	headerLen := int64(binary.LittleEndian.Uint32(fixed[12:]))
	if headerLen > maxHeaderLen {
		return nil, fmt.Errorf("%w: header length %d", ErrCorrupt, headerLen)
	}
	if 16+headerLen+checksumLen > size {
		return nil, fmt.Errorf("%w: %d bytes, the header alone needs %d", ErrTruncated, size, 16+headerLen+checksumLen)
	}
	headerBytes := make([]byte, headerLen)
	if _, err := io.ReadFull(f, headerBytes); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	var h fileHeader
	dec := json.NewDecoder(bytes.NewReader(headerBytes))
	dec.DisallowUnknownFields()
	headerErr := dec.Decode(&h)

	// The checksum first, so that damage is reported as damage.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	sum := sha256.New()
	if _, err := io.CopyN(sum, f, size-checksumLen); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTruncated, err)
	}
	var stored [checksumLen]byte
	if _, err := io.ReadFull(f, stored[:]); err != nil {
		return nil, fmt.Errorf("%w: checksum: %v", ErrTruncated, err)
	}
	if !bytes.Equal(stored[:], sum.Sum(nil)) {
		// A file cut short fails the checksum too; the header, if it is
		// whole, says how long the file should be.
		if headerErr == nil && h.Game == game.Name() {
			if want, err := h.fileSize(game, headerLen); err == nil && size < want {
				return nil, fmt.Errorf("%w: %d bytes, the header promises %d", ErrTruncated, size, want)
			}
		}
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	if headerErr != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrCorrupt, headerErr)
	}
	if h.Game != game.Name() {
		return nil, fmt.Errorf("%w: %q, want %q", ErrWrongGame, h.Game, game.Name())
	}
	if h.Step < 0 {
		return nil, fmt.Errorf("%w: step %d", ErrCorrupt, h.Step)
	}
	if h.Folded && (version < 2 || h.Optimizer) {
		return nil, fmt.Errorf("%w: folded weights in a version %d file with optimizer %v", ErrCorrupt, version, h.Optimizer)
	}
	if h.Trained && (version < 3 || !h.Optimizer) {
		return nil, fmt.Errorf("%w: averaged and trained weights in a version %d file with optimizer %v", ErrCorrupt, version, h.Optimizer)
	}
	// The size before the network: a header may claim any architecture
	// its limits allow, gigabytes of weights, and only a file that holds
	// them justifies allocating them.
	want, err := h.fileSize(game, headerLen)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if size != want {
		if planes, ok := h.filePlanes(game, size-want); ok {
			gamePlanes, _, _ := game.EncodedShape()
			return nil, fmt.Errorf("%w: the network reads %d input planes, %s encodes %d: it was trained on an older encoding and cannot be used",
				ErrWrongEncoding, planes, game.Name(), gamePlanes)
		}
		return nil, fmt.Errorf("%w: %d bytes, the header promises %d", ErrCorrupt, size, want)
	}
	n, tr, err := h.newNetwork(game)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(16+headerLen, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 1<<16)
	if h.Folded {
		arrays := n.foldedArrays()
		if err := readArrays(r, arrays); err != nil {
			return nil, err
		}
		n.unfold(arrays)
	} else {
		arrays := n.arrays()
		if tr != nil {
			arrays = append(arrays, tr.Velocity...)
			if tr.Network != n {
				arrays = append(arrays, tr.Network.arrays()...)
			}
		}
		if err := readArrays(r, arrays); err != nil {
			return nil, err
		}
	}
	return &Checkpoint{Network: n, Training: tr, Step: h.Step, Created: h.Created, Metadata: h.Metadata, Folded: h.Folded}, nil
}

// newNetwork builds the network (and the training state, with optimizer
// state) the header describes. The sizes come from the game and the
// validated architecture, which bounds every allocation.
func (h fileHeader) newNetwork(game env.Game) (*Network, *TrainingState, error) {
	if err := h.Arch.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	n, err := New(game, h.Arch, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if !h.Optimizer {
		return n, nil, nil
	}
	if h.Train == nil {
		return nil, nil, fmt.Errorf("%w: optimizer state without its configuration", ErrCorrupt)
	}
	trained := n
	if h.Trained {
		trained = n.Clone()
	}
	if err := h.Train.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w: train config: %v", ErrCorrupt, err)
	}
	tr := &TrainingState{Network: trained, Config: *h.Train, Steps: h.Step}
	for _, p := range trained.learnables {
		tr.Velocity = append(tr.Velocity, make([]float32, len(p.data)))
	}
	return n, tr, nil
}

// fileSize is the size of a file with this header, computed from the
// network's layout without allocating its arrays.
func (h fileHeader) fileSize(game env.Game, headerLen int64) (int64, error) {
	if h.Folded && h.Arch != h.Arch.Inference() {
		return 0, errors.New("an exported model with auxiliary heads, which exports leave out")
	}
	n, err := layout(game, h.Arch, true)
	if err != nil {
		return 0, err
	}
	learn, stats, folded := n.sizes()
	values := learn + stats
	if h.Optimizer {
		values += learn
	}
	if h.Trained {
		values += learn + stats
	}
	if h.Folded {
		values = folded
	}
	return 16 + headerLen + 4*values + checksumLen, nil
}

// filePlanes explains an intact file whose size differs from the header's
// by extra bytes: only the stem convolution depends on the input planes
// (9·filters weights per plane, once more with optimizer state and once
// more with trained weights beside an average), so a
// difference that is a whole number of planes means the file was written
// for another encoding of the game.
func (h fileHeader) filePlanes(game env.Game, extra int64) (int, bool) {
	sh, err := gameShape(game)
	if err != nil || h.Arch.Validate() != nil {
		return 0, false
	}
	copies := int64(1)
	if h.Optimizer {
		copies++
	}
	if h.Trained {
		copies++
	}
	perPlane := copies * 4 * 9 * int64(h.Arch.Filters)
	if extra%perPlane != 0 {
		return 0, false
	}
	planes := int64(sh.planes) + extra/perPlane
	if planes < 1 || planes > maxWidth {
		return 0, false
	}
	return int(planes), true
}

// readArrays fills arrays from r.
func readArrays(r io.Reader, arrays [][]float32) error {
	buf := make([]byte, 1<<16)
	for k, a := range arrays {
		for i := 0; i < len(a); {
			chunk := buf[:min(len(buf), 4*(len(a)-i))]
			if _, err := io.ReadFull(r, chunk); err != nil {
				return fmt.Errorf("%w: %v", ErrTruncated, err)
			}
			for j := 0; j < len(chunk); j += 4 {
				v := math.Float32frombits(binary.LittleEndian.Uint32(chunk[j:]))
				// A NaN or an infinity, which no training step keeps,
				// would make every evaluation NaN: refused here, where
				// the file can be named, not mid-game.
				if v-v != 0 {
					return fmt.Errorf("%w: value %d of array %d of %d is %v", ErrCorrupt, i, k+1, len(arrays), v)
				}
				a[i] = v
				i++
			}
		}
	}
	return nil
}
