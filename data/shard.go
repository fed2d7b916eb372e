package data

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/internal/atomicfile"
)

// A shard file is a fixed header followed by a deflate-compressed payload
// of samples:
//
//	magic "FZSHARD\x00"  8 bytes
//	version              uint16 (3)
//	game name length     uint16, then the name
//	planes, height, width, action space, sample count   uint32 each
//	payload length       uint64 (compressed bytes)
//	checksum             uint32, CRC-32C of everything before it and the payload
//	payload
//
// and each sample in the payload is: legal count uint32, outcome float32,
// weight float32, flags uint32 (bit 0: the auxiliary targets follow),
// then if flagged the score margin float32 and the ownership of each of
// the height × width cells as int8, then the planes as float32, the legal
// actions as uint32, the policy as float32. All little-endian.
//
// Version 2, still read, had no flags and no auxiliary targets. Version
// 1 stored the outcome as an int8 (-1, 0, 1), which could not hold a
// one-player game's normalised score; its outcomes convert to float32
// exactly.
const (
	shardMagic   = "FZSHARD\x00"
	shardVersion = 3
	// shardVersionInt8 is the first format, whose outcomes are int8;
	// shardVersionNoAux the second, without auxiliary targets.
	shardVersionInt8  = 1
	shardVersionNoAux = 2
	// flagOwnership marks a sample with its auxiliary targets.
	flagOwnership = 1
	// Limits on what a header may claim, so that a corrupt or foreign file
	// can never make the reader allocate without bound.
	maxNameLen      = 64
	maxPlaneValues  = 1 << 16
	maxActionSpace  = 1 << 16
	maxShardSamples = 1 << 22
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt marks a shard that is truncated, damaged or not a shard.
var ErrCorrupt = errors.New("corrupt shard")

// WriteShard writes samples of game g to path atomically.
func WriteShard(path string, g env.Game, samples []Sample) error {
	raw, err := EncodeShard(g, samples)
	if err != nil {
		return fmt.Errorf("write shard %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, raw)
}

// EncodeShard is a shard file's bytes: what WriteShard writes, for
// sending over a network.
func EncodeShard(g env.Game, samples []Sample) ([]byte, error) {
	for i := range samples {
		if err := samples[i].Validate(g); err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
	}
	var payload bytes.Buffer
	zw, err := flate.NewWriter(&payload, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(zw, 1<<16)
	var scratch [4]byte
	put32 := func(v uint32) {
		binary.LittleEndian.PutUint32(scratch[:], v)
		bw.Write(scratch[:])
	}
	for i := range samples {
		s := &samples[i]
		put32(uint32(len(s.Legal)))
		put32(math.Float32bits(s.Outcome))
		put32(math.Float32bits(s.Weight))
		if s.HasOwnership() {
			put32(flagOwnership)
			put32(math.Float32bits(s.Margin))
			for _, o := range s.Ownership {
				bw.WriteByte(byte(o))
			}
		} else {
			put32(0)
		}
		for _, v := range s.Planes {
			put32(math.Float32bits(v))
		}
		for _, a := range s.Legal {
			put32(uint32(a))
		}
		for _, p := range s.Policy {
			put32(math.Float32bits(p))
		}
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	header := shardHeader(g, len(samples), payload.Len())
	crc := crc32.Update(crc32.Checksum(header, castagnoli), castagnoli, payload.Bytes())
	out := make([]byte, 0, len(header)+4+payload.Len())
	out = append(out, header...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	return append(out, payload.Bytes()...), nil
}

// DecodeShard reads the samples of a shard's bytes (EncodeShard's) for
// game g, refusing more than maxSamples before allocating any: bytes from
// elsewhere decide nothing about memory beyond that bound.
func DecodeShard(raw []byte, g env.Game, maxSamples int) ([]Sample, error) {
	r := bytes.NewReader(raw)
	head, err := readHeader(r, int64(len(raw)), g)
	if err != nil {
		return nil, err
	}
	if head.count > maxSamples {
		return nil, corrupt("%d samples, at most %d accepted", head.count, maxSamples)
	}
	return readShard(bytes.NewReader(raw), int64(len(raw)), g)
}

func shardHeader(g env.Game, count, payloadLen int) []byte {
	planes, h, w := g.EncodedShape()
	var b bytes.Buffer
	b.WriteString(shardMagic)
	binary.Write(&b, binary.LittleEndian, uint16(shardVersion))
	binary.Write(&b, binary.LittleEndian, uint16(len(g.Name())))
	b.WriteString(g.Name())
	for _, v := range []int{planes, h, w, g.ActionSpace(), count} {
		binary.Write(&b, binary.LittleEndian, uint32(v))
	}
	binary.Write(&b, binary.LittleEndian, uint64(payloadLen))
	return b.Bytes()
}

// ReadShard reads the samples of a shard written for game g. A truncated,
// damaged or foreign file gives an error wrapping ErrCorrupt that says
// what is wrong.
func ReadShard(path string, g env.Game) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read shard: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read shard: %w", err)
	}
	samples, err := readShard(bufio.NewReader(f), info.Size(), g)
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", path, err)
	}
	return samples, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// shardHead is what a shard's header says.
type shardHead struct {
	version    int
	count      int
	payloadLen int64
	crc        uint32 // the stored checksum
	partialCRC uint32 // the checksum of the header bytes before it
}

func readHeader(r io.Reader, fileSize int64, g env.Game) (shardHead, error) {
	var fixed [12]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return shardHead{}, corrupt("too short for a header")
	}
	if string(fixed[:8]) != shardMagic {
		return shardHead{}, corrupt("not a shard file (bad magic)")
	}
	version := int(binary.LittleEndian.Uint16(fixed[8:]))
	if version < shardVersionInt8 || version > shardVersion {
		return shardHead{}, corrupt("format version %d, this program reads %d to %d", version, shardVersionInt8, shardVersion)
	}
	nameLen := int(binary.LittleEndian.Uint16(fixed[10:]))
	if nameLen > maxNameLen {
		return shardHead{}, corrupt("game name of %d bytes", nameLen)
	}
	rest := make([]byte, nameLen+5*4+8+4)
	if _, err := io.ReadFull(r, rest); err != nil {
		return shardHead{}, corrupt("header cut short")
	}
	name := string(rest[:nameLen])
	var dims [5]int
	for i := range dims {
		dims[i] = int(binary.LittleEndian.Uint32(rest[nameLen+4*i:]))
	}
	payloadLen := binary.LittleEndian.Uint64(rest[nameLen+20:])
	if name != g.Name() {
		return shardHead{}, corrupt("written for game %q, not %q", name, g.Name())
	}
	planes, h, w := g.EncodedShape()
	if dims[0] != planes || dims[1] != h || dims[2] != w || dims[3] != g.ActionSpace() {
		return shardHead{}, corrupt("shapes %d×%d×%d, %d actions differ from the game's %d×%d×%d, %d",
			dims[0], dims[1], dims[2], dims[3], planes, h, w, g.ActionSpace())
	}
	if planes*h*w > maxPlaneValues || g.ActionSpace() > maxActionSpace || dims[4] > maxShardSamples {
		return shardHead{}, corrupt("header claims %d samples of %d values", dims[4], planes*h*w)
	}
	headerLen := int64(len(fixed) + len(rest))
	if payloadLen != uint64(fileSize-headerLen) {
		return shardHead{}, corrupt("payload of %d bytes, file holds %d (truncated?)", payloadLen, fileSize-headerLen)
	}
	crc := crc32.Checksum(fixed[:], castagnoli)
	crc = crc32.Update(crc, castagnoli, rest[:len(rest)-4])
	return shardHead{
		version:    version,
		count:      dims[4],
		payloadLen: int64(payloadLen),
		crc:        binary.LittleEndian.Uint32(rest[nameLen+28:]),
		partialCRC: crc,
	}, nil
}

// readAux reads a sample's flags and, if flagged, its auxiliary targets
// for a grid of cells.
func readAux(r *bufio.Reader, s *Sample, cells int) error {
	var word [4]byte
	if _, err := io.ReadFull(r, word[:]); err != nil {
		return errors.New("cut short")
	}
	switch flags := binary.LittleEndian.Uint32(word[:]); flags {
	case 0:
		return nil
	case flagOwnership:
	default:
		return fmt.Errorf("flags %#x, want 0 or %#x", flags, flagOwnership)
	}
	if _, err := io.ReadFull(r, word[:]); err != nil {
		return errors.New("cut short")
	}
	s.Margin = math.Float32frombits(binary.LittleEndian.Uint32(word[:]))
	s.Ownership = make([]int8, cells)
	for c := range s.Ownership {
		b, err := r.ReadByte()
		if err != nil {
			return errors.New("cut short")
		}
		s.Ownership[c] = int8(b)
	}
	return nil
}

// ShardSamples reads only a shard's header and returns its sample count.
func ShardSamples(path string, g env.Game) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read shard: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("read shard: %w", err)
	}
	head, err := readHeader(f, info.Size(), g)
	if err != nil {
		return 0, fmt.Errorf("shard %s: %w", path, err)
	}
	return head.count, nil
}

func readShard(r io.Reader, fileSize int64, g env.Game) ([]Sample, error) {
	head, err := readHeader(r, fileSize, g)
	if err != nil {
		return nil, err
	}
	payload := make([]byte, head.payloadLen)
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, corrupt("payload cut short")
	}
	if crc32.Update(head.partialCRC, castagnoli, payload) != head.crc {
		return nil, corrupt("checksum mismatch")
	}
	count := head.count
	planes, h, w := g.EncodedShape()
	planeValues := planes * h * w
	zr := bufio.NewReaderSize(flate.NewReader(bytes.NewReader(payload)), 1<<16)
	// The count is checked, not proven: a header with a valid checksum
	// may claim millions of samples and hold five, so memory grows with
	// the samples read, past a first block.
	samples := make([]Sample, 0, min(count, 1<<12))
	var word [4]byte
	read32 := func() (uint32, error) {
		_, err := io.ReadFull(zr, word[:])
		return binary.LittleEndian.Uint32(word[:]), err
	}
	for i := 0; i < count; i++ {
		nLegal, err := read32()
		if err != nil || nLegal == 0 || int(nLegal) > g.ActionSpace() {
			return nil, corrupt("sample %d: bad legal count", i)
		}
		var outcome float32
		if head.version == shardVersionInt8 {
			b, err := zr.ReadByte()
			if err != nil {
				return nil, corrupt("sample %d cut short", i)
			}
			outcome = float32(int8(b))
		} else {
			v, err := read32()
			if err != nil {
				return nil, corrupt("sample %d cut short", i)
			}
			outcome = math.Float32frombits(v)
		}
		weight, err := read32()
		if err != nil {
			return nil, corrupt("sample %d cut short", i)
		}
		s := Sample{
			Outcome: outcome,
			Weight:  math.Float32frombits(weight),
			Planes:  make([]float32, planeValues),
			Legal:   make([]int32, nLegal),
			Policy:  make([]float32, nLegal),
		}
		if head.version > shardVersionNoAux {
			if err := readAux(zr, &s, h*w); err != nil {
				return nil, corrupt("sample %d: %v", i, err)
			}
		}
		for k := range s.Planes {
			v, err := read32()
			if err != nil {
				return nil, corrupt("sample %d cut short", i)
			}
			s.Planes[k] = math.Float32frombits(v)
		}
		for k := range s.Legal {
			v, err := read32()
			if err != nil {
				return nil, corrupt("sample %d cut short", i)
			}
			s.Legal[k] = int32(v)
		}
		for k := range s.Policy {
			v, err := read32()
			if err != nil {
				return nil, corrupt("sample %d cut short", i)
			}
			s.Policy[k] = math.Float32frombits(v)
		}
		if err := s.Validate(g); err != nil {
			return nil, corrupt("sample %d: %v", i, err)
		}
		samples = append(samples, s)
	}
	if _, err := zr.ReadByte(); err != io.EOF {
		return nil, corrupt("data after the last sample")
	}
	return samples, nil
}
