package othello

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// The WTHOR database format of the French Othello federation: a 16-byte
// header, then 68-byte game records, little-endian. See the rules doc.
const (
	wthorHeaderSize = 16
	wthorRecordSize = 68
	wthorMoves      = 60
	// wthorMaxPrealloc bounds the records allocated on the header's word
	// alone, since files come from elsewhere.
	wthorMaxPrealloc = 1 << 12
)

// RecordError is what is wrong with one record of a file; records are
// numbered from 1 in file order.
type RecordError struct {
	Record int
	Err    error
}

func (e *RecordError) Error() string { return fmt.Sprintf("record %d: %v", e.Record, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// BadRecords lists the records of a file that could not be read, when
// the others could.
type BadRecords []*RecordError

// badRecordsShown is how many bad records the one-line message names.
const badRecordsShown = 5

func (b BadRecords) Error() string {
	var msg strings.Builder
	fmt.Fprintf(&msg, "%d bad record(s): ", len(b))
	for i, e := range b {
		if i == badRecordsShown {
			fmt.Fprintf(&msg, "; and %d more", len(b)-i)
			break
		}
		if i > 0 {
			msg.WriteString("; ")
		}
		msg.WriteString(e.Error())
	}
	return msg.String()
}

func (b BadRecords) Unwrap() []error {
	errs := make([]error, len(b))
	for i, e := range b {
		errs[i] = e
	}
	return errs
}

// ReadWTHOR reads a whole WTHOR .wtb file. Each record becomes a game of
// "othello" with its moves in this project's notation, the passes the
// file leaves out put back by replaying the game, and the outcome given
// by the recorded black score (more than 32: black, less: white, 32:
// draw) — also for the few records whose moves stop before the game is
// over, which Replay tells.
//
// A bad record (a byte that is no square, an illegal move, an impossible
// score) does not stop the reading: the good records are returned with a
// BadRecords error naming the bad ones. A file whose header is unreadable
// or which ends inside a record returns what could be read and an error
// saying where the file stops. The caller adds the file's name.
func ReadWTHOR(r io.Reader) ([]env.Record, error) {
	var header [wthorHeaderSize]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, fmt.Errorf("WTHOR header: %w", noEOF(err))
	}
	count := binary.LittleEndian.Uint32(header[4:8])
	if size := header[12]; size != 0 && size != 8 {
		return nil, fmt.Errorf("WTHOR header: board size %d, only 8×8 games are supported", size)
	}
	records := make([]env.Record, 0, min(count, wthorMaxPrealloc))
	var bad BadRecords
	var raw [wthorRecordSize]byte
	for i := 1; uint64(i) <= uint64(count); i++ {
		if n, err := io.ReadFull(r, raw[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("record %d of %d: the file ends %d bytes into it", i, count, n)
			} else {
				err = fmt.Errorf("record %d: %w", i, err)
			}
			return records, errors.Join(err, nilIfEmpty(bad))
		}
		rec, err := decodeWTHOR(&raw)
		if err != nil {
			bad = append(bad, &RecordError{Record: i, Err: err})
			continue
		}
		records = append(records, rec)
	}
	var extra [1]byte
	if n, _ := io.ReadFull(r, extra[:]); n > 0 {
		return records, errors.Join(fmt.Errorf("data after the %d records the header announces", count), nilIfEmpty(bad))
	}
	return records, nilIfEmpty(bad)
}

// nilIfEmpty keeps a nil list of bad records from becoming a non-nil
// error.
func nilIfEmpty(bad BadRecords) error {
	if len(bad) == 0 {
		return nil
	}
	return bad
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decodeWTHOR turns one 68-byte record into a game record, replaying it
// to check every move and to put back the passes.
func decodeWTHOR(raw *[wthorRecordSize]byte) (env.Record, error) {
	blackScore := int(raw[6])
	if blackScore > Squares {
		return env.Record{}, fmt.Errorf("black's score %d is more than %d", blackScore, Squares)
	}
	s := NewState(Game{variantOthello})
	moves := make([]string, 0, wthorMoves+4)
	ended := false
	for k, b := range raw[8:] {
		if b == 0 {
			ended = true
			continue
		}
		if ended {
			return env.Record{}, fmt.Errorf("move byte %d (%d) follows the end of the moves", k+1, b)
		}
		row, col := int(b/10), int(b%10)
		if row < 1 || row > 8 || col < 1 || col > 8 {
			return env.Record{}, fmt.Errorf("move %d: byte %d is not a square (want 10·row + column, 11..88)", k+1, b)
		}
		sq := 8*(row-1) + col - 1
		if s.MoveMask() == 0 {
			if s.Terminal() {
				return env.Record{}, fmt.Errorf("move %d (%s): the game is already over", k+1, SquareName(sq))
			}
			moves = append(moves, "pass")
			s.Apply(Pass)
		}
		if !s.IsLegal(sq) {
			return env.Record{}, fmt.Errorf("move %d (%s) is illegal", k+1, SquareName(sq))
		}
		moves = append(moves, SquareName(sq))
		s.Apply(sq)
	}
	outcome := "draw"
	switch {
	case blackScore > Squares/2:
		outcome = "black"
	case blackScore < Squares/2:
		outcome = "white"
	}
	return env.Record{Game: "othello", Moves: moves, Outcome: outcome}, nil
}

// Replay plays a record's moves from the start under the variant the
// record names and returns the position they reach: a record whose moves
// stop before the end of the game gives a position that is not Terminal.
func Replay(rec env.Record) (*State, error) {
	var g Game
	switch rec.Game {
	case "reversi":
		g = Game{variantReversi}
	case "othello":
		g = Game{variantOthello}
	case "reversi-single":
		g = Game{variantSingle}
	default:
		return nil, fmt.Errorf("record of %q: not a game of this package", rec.Game)
	}
	s := NewState(g)
	for i, text := range rec.Moves {
		a, err := env.ParseLegal(&s, text)
		if err != nil {
			return nil, fmt.Errorf("move %d: %w", i+1, err)
		}
		s.Apply(a)
	}
	return &s, nil
}
