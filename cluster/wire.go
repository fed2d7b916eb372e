package cluster

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/selfplay"
)

// A shard on the wire is
//
//	magic "FZWIRE\x00\x00"   8 bytes
//	header length            uint32, at most MaxHeaderBytes
//	header                   JSON (ShardHeader)
//	shard                    the data package's shard encoding, checksummed
//
// Format is bumped whenever this layout, the header, the state's meaning
// or the shard encoding inside changes; trainers and workers of different
// formats refuse each other with a message that says so. Format 2: shards
// of the data package's second version, whose outcomes are real numbers;
// format 3: its third, whose samples may carry the auxiliary targets;
// format 4: the header carries each game's record and the resignation
// counts, so that a run fed by workers keeps its games and statistics;
// format 5: and the positions' policy surprise.
const (
	Format      = 5
	wireMagic   = "FZWIRE\x00\x00"
	MaxHeader   = 1 << 20
	MaxMessage  = 16 << 20
	MaxSamples  = 1 << 15
	maxGames    = 1 << 16
	policySlack = 1e-3
)

// ShardHeader says where a shard comes from.
type ShardHeader struct {
	Format int    `json:"format"`
	RunID  string `json:"run_id"`
	Game   string `json:"game"`
	// Generation is the network's that played every game in the shard.
	Generation int    `json:"generation"`
	Shard      string `json:"shard"`  // random id, unique over the run
	Worker     string `json:"worker"` // who played it, for the log
	Version    string `json:"version"`
	Samples    int    `json:"samples"`
	// The games' counts: games, moves, results, resignations, score.
	selfplay.Tally
	// Records are the games, one line each as the run folder keeps them
	// (loop.FormatGame): moves, a tab, the outcome, a tab, the game.
	Records []string `json:"records"`
}

// maxRecordBytes bounds one game's record line: a game of thousands of
// plies.
const maxRecordBytes = 64 << 10

var validShardID = validName

// encodeShard makes a message body from a header and samples.
func encodeShard(h ShardHeader, g env.Game, samples []data.Sample) ([]byte, error) {
	h.Samples = len(samples)
	head, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if len(head) > MaxHeader {
		return nil, fmt.Errorf("shard header of %d bytes, limit %d", len(head), MaxHeader)
	}
	body, err := data.EncodeShard(g, samples)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(wireMagic)+4+len(head)+len(body))
	out = append(out, wireMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(head)))
	out = append(out, head...)
	return append(out, body...), nil
}

// errRefused marks a message that is not a good shard of this run.
var errRefused = errors.New("refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errRefused, fmt.Sprintf(format, args...))
}

// decodeHeader reads a message's header, checking what can be checked
// without the run: sizes, format, the id's form, counts in range.
func decodeHeader(msg []byte) (ShardHeader, []byte, error) {
	if len(msg) > MaxMessage {
		return ShardHeader{}, nil, refuse("message of %d bytes, limit %d", len(msg), MaxMessage)
	}
	if len(msg) < len(wireMagic)+4 || string(msg[:len(wireMagic)]) != wireMagic {
		return ShardHeader{}, nil, refuse("not a flipzero shard (bad magic)")
	}
	n := int(binary.LittleEndian.Uint32(msg[len(wireMagic):]))
	rest := msg[len(wireMagic)+4:]
	if n > MaxHeader || n > len(rest) {
		return ShardHeader{}, nil, refuse("header of %d bytes in a message of %d", n, len(msg))
	}
	var h ShardHeader
	dec := json.NewDecoder(bytes.NewReader(rest[:n]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return ShardHeader{}, nil, refuse("header: %v", err)
	}
	switch {
	case h.Format != Format:
		return h, nil, refuse("wire format %d from flipzero %q, this trainer speaks format %d: run the same flipzero version everywhere", h.Format, h.Version, Format)
	case !validShardID.MatchString(h.Shard):
		return h, nil, refuse("shard id %q is not an id", h.Shard)
	case h.Samples < 1 || h.Samples > MaxSamples:
		return h, nil, refuse("%d samples, must be 1..%d", h.Samples, MaxSamples)
	case h.Games < 1 || h.Games > maxGames || h.Moves < 0 || h.Moves > maxGames*10000:
		return h, nil, refuse("%d games of %d moves", h.Games, h.Moves)
	case h.Results[0] < 0 || h.Results[1] < 0 || h.Results[2] < 0 || h.Results[0]+h.Results[1]+h.Results[2] != h.Games:
		return h, nil, refuse("results %v do not add up to %d games", h.Results, h.Games)
	case h.Generation < 0:
		return h, nil, refuse("generation %d", h.Generation)
	case h.Resigned < 0 || h.Resigned > h.Games || h.NoResign < 0 || h.NoResign > h.Games || h.FalseResign < 0 || h.FalseResign > h.NoResign:
		return h, nil, refuse("resignations %d, %d played out, %d false in %d games", h.Resigned, h.NoResign, h.FalseResign, h.Games)
	case h.Forked < 0 || h.Forked > h.Games:
		return h, nil, refuse("%d games of %d started from forks", h.Forked, h.Games)
	case math.IsNaN(h.Score) || math.IsInf(h.Score, 0):
		return h, nil, refuse("score %v", h.Score)
	case h.SurpriseSamples != h.Samples || !(h.Surprise >= 0 && h.Surprise <= selfplay.MaxPolicySurprise*float64(h.Samples)):
		return h, nil, refuse("policy surprise %v over %d of %d samples", h.Surprise, h.SurpriseSamples, h.Samples)
	}
	if err := checkRecords(h); err != nil {
		return h, nil, err
	}
	return h, rest[n:], nil
}

// checkRecords checks the games' records as far as they can be without
// playing them (the run's page replays each and says where one fails):
// one a game, each a line of printable text with an outcome and the
// header's game.
func checkRecords(h ShardHeader) error {
	if len(h.Records) != h.Games {
		return refuse("%d game records for %d games", len(h.Records), h.Games)
	}
	for i, r := range h.Records {
		if len(r) > maxRecordBytes || !utf8.ValidString(r) {
			return refuse("game record %d: %d bytes, or not UTF-8", i, len(r))
		}
		for _, c := range r {
			if c != '\t' && unicode.IsControl(c) {
				return refuse("game record %d holds a control character %q", i, c)
			}
		}
		fields := strings.Split(r, "\t")
		if len(fields) != 3 || fields[1] == "" || fields[2] != h.Game {
			return refuse("game record %d is not moves, an outcome and the game %q", i, h.Game)
		}
	}
	return nil
}

// decodeSamples reads and checks a shard's samples: the data package
// checks the checksum, shapes and legal actions; this adds what training
// needs of values from elsewhere.
func decodeSamples(h ShardHeader, body []byte, g env.Game) ([]data.Sample, error) {
	samples, err := data.DecodeShard(body, g, min(h.Samples, MaxSamples))
	if err != nil {
		return nil, refuse("%v", err)
	}
	if len(samples) != h.Samples {
		return nil, refuse("%d samples, the header says %d", len(samples), h.Samples)
	}
	for i := range samples {
		if err := checkValues(&samples[i]); err != nil {
			return nil, refuse("sample %d: %v", i, err)
		}
	}
	return samples, nil
}

func checkValues(s *data.Sample) error {
	for k, v := range s.Planes {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("plane value %d is %v", k, v)
		}
	}
	sum := 0.0
	for k, p := range s.Policy {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("policy entry %d is %v", k, p)
		}
		sum += float64(p)
	}
	if math.Abs(sum-1) > policySlack {
		return fmt.Errorf("policy sums to %v", sum)
	}
	if !(s.Weight >= 0 && s.Weight <= data.MaxWeight) {
		return fmt.Errorf("weight %v", s.Weight)
	}
	return nil
}
