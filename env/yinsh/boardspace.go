package yinsh

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// maxRecordBytes bounds what ReadBoardspace reads: real records are a few
// kilobytes.
const maxRecordBytes = 1 << 20

// sgfNode is one node of a record: its number (the first node is 1) and
// properties in file order.
type sgfNode struct {
	number int
	props  []sgfProp
}

type sgfProp struct {
	id     string
	values []string
}

// parseSGF reads the main line of an SGF game tree. Records from
// boardspace.net have no variations, so a nested tree is an error.
func parseSGF(text string) ([]sgfNode, error) {
	i := 0
	skipSpace := func() {
		for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n') {
			i++
		}
	}
	skipSpace()
	if i >= len(text) || text[i] != '(' {
		return nil, errors.New("not an SGF record: it does not start with '('")
	}
	i++
	var nodes []sgfNode
	for {
		skipSpace()
		if i >= len(text) {
			return nil, fmt.Errorf("node %d: the record ends without ')'", len(nodes))
		}
		switch c := text[i]; {
		case c == ')':
			if len(nodes) == 0 {
				return nil, errors.New("the record has no nodes")
			}
			return nodes, nil
		case c == ';':
			i++
			nodes = append(nodes, sgfNode{number: len(nodes) + 1})
		case c == '(':
			return nil, fmt.Errorf("node %d: variations are not supported", len(nodes))
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			if len(nodes) == 0 {
				return nil, errors.New("a property before the first node")
			}
			start := i
			for i < len(text) && (text[i] >= 'A' && text[i] <= 'Z' || text[i] >= 'a' && text[i] <= 'z' || text[i] >= '0' && text[i] <= '9') {
				i++
			}
			prop := sgfProp{id: text[start:i]}
			for {
				skipSpace()
				if i >= len(text) || text[i] != '[' {
					break
				}
				i++
				var v strings.Builder
				for ; i < len(text) && text[i] != ']'; i++ {
					if text[i] == '\\' && i+1 < len(text) {
						i++
					}
					v.WriteByte(text[i])
				}
				if i >= len(text) {
					return nil, fmt.Errorf("node %d: property %s: unterminated value", len(nodes), prop.id)
				}
				i++
				prop.values = append(prop.values, v.String())
			}
			if len(prop.values) == 0 {
				return nil, fmt.Errorf("node %d: property %s has no value", len(nodes), prop.id)
			}
			node := &nodes[len(nodes)-1]
			node.props = append(node.props, prop)
		default:
			return nil, fmt.Errorf("node %d: unexpected character %q", len(nodes), c)
		}
	}
}

// ReadBoardspace reads one game in boardspace.net's SGF dialect (see the
// rules document): ring placements, ring moves in one step ("move") or in
// two ("place" a marker, then "drop board", possibly taken back with
// "pick board"), row removals by their end points, ring removals, and
// the nodes that change nothing ("Start", "Done", "time", "pick"/"drop"
// of a ring taken from the reserve and put back). A player with no ring
// move gets the pass the rules require. The outcome is the winner when the
// record reaches the end of the game, "unfinished" when it stops before
// (a resignation or an abandoned game). An error names the node.
func ReadBoardspace(r io.Reader) (env.Record, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxRecordBytes+1))
	if err != nil {
		return env.Record{}, fmt.Errorf("reading the record: %w", err)
	}
	if len(data) > maxRecordBytes {
		return env.Record{}, fmt.Errorf("record larger than %d bytes", maxRecordBytes)
	}
	nodes, err := parseSGF(string(data))
	if err != nil {
		return env.Record{}, err
	}
	g := Game{}
	for _, p := range nodes[0].props {
		if p.id != "SU" {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(p.values[0])) {
		case "yinsh":
		case "yinsh-blitz":
			g = Game{blitz: true}
		default:
			return env.Record{}, fmt.Errorf("node 1: SU %q is not a YINSH variant", p.values[0])
		}
	}
	rp := &replay{game: g, state: g.Start()}
	for _, n := range nodes {
		for _, p := range n.props {
			var who env.Player
			switch p.id {
			case "P0":
				who = White
			case "P1":
				who = Black
			default:
				continue
			}
			for _, v := range p.values {
				if err := rp.step(who, v); err != nil {
					return env.Record{}, fmt.Errorf("node %d: %s %q: %w", n.number, p.id, strings.TrimSpace(v), err)
				}
			}
		}
	}
	if err := rp.flush(); err != nil {
		return env.Record{}, fmt.Errorf("node %d: %w", len(nodes), err)
	}
	rec := env.Record{Game: g.Name(), Moves: rp.moves, Outcome: "unfinished"}
	if rp.state.Terminal() {
		rec.Outcome = env.ResultName(rp.state)
	}
	return rec, nil
}

// replay plays a record's steps on a state.
type replay struct {
	game  Game
	state *State
	moves []string
	// A ring move in two steps: the ring at ringFrom is in hand
	// (ringTo < 0) or dropped at ringTo, which a "pick board" can take
	// back. ringFrom < 0 when no such move is under way.
	ringFrom, ringTo int
	pending          bool
	pendingWho       env.Player
	reserveRing      bool // a ring taken from the reserve is in hand
	resigned         bool
}

// step applies one property value of player who.
func (rp *replay) step(who env.Player, value string) error {
	f := strings.Fields(value)
	if len(f) > 0 {
		if _, err := strconv.Atoi(f[0]); err == nil {
			f = f[1:] // the move number
		}
	}
	if len(f) == 0 {
		return errors.New("empty move")
	}
	verb := strings.ToLower(f[0])
	args := f[1:]
	switch verb {
	case "id", "time", "start", "done":
		return rp.flush()
	case "resign":
		if err := rp.flush(); err != nil {
			return err
		}
		rp.resigned = true
		return nil
	}
	if rp.resigned {
		return errors.New("a move after the resignation")
	}
	switch verb {
	case "pick", "drop":
		return rp.pickDrop(who, verb, args)
	}
	if err := rp.flush(); err != nil {
		return err
	}
	switch verb {
	case "pass":
		return rp.play(who, "pass")
	case "move":
		pts, err := points(args, 2)
		if err != nil {
			return err
		}
		return rp.play(who, "M "+pts[0]+" "+pts[1])
	case "place", "remove":
		if len(args) == 0 {
			return fmt.Errorf("%q what?", verb)
		}
		piece := strings.ToLower(args[0])
		if err := checkColour(who, piece); err != nil {
			return err
		}
		ring := len(piece) == 2
		switch {
		case verb == "place" && ring:
			pts, err := points(args[1:], 1)
			if err != nil {
				return err
			}
			return rp.play(who, "P "+pts[0])
		case verb == "place":
			// A marker into a ring: the first step of a ring move.
			pts, err := points(args[1:], 1)
			if err != nil {
				return err
			}
			from, _ := ParsePoint(pts[0])
			rp.pending, rp.pendingWho, rp.ringFrom, rp.ringTo = true, who, from, -1
			return nil
		case ring:
			pts, err := points(args[1:], 1)
			if err != nil {
				return err
			}
			return rp.play(who, "X "+pts[0])
		default:
			pts, err := points(args[1:], 2)
			if err != nil {
				return err
			}
			a, _ := ParsePoint(pts[0])
			b, _ := ParsePoint(pts[1])
			if a > b {
				pts[0], pts[1] = pts[1], pts[0]
			}
			return rp.play(who, "R "+pts[0]+" "+pts[1])
		}
	}
	return fmt.Errorf("unknown move %q", verb)
}

// pickDrop handles the pick and drop steps of a ring in hand.
func (rp *replay) pickDrop(who env.Player, verb string, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%q what?", verb)
	}
	where := strings.ToLower(args[0])
	if where != "board" {
		// A ring from the reserve: picked up, then put back or dropped on
		// the board.
		if err := checkColour(who, where); err != nil {
			return err
		}
		if len(where) != 2 {
			return fmt.Errorf("%s %q: only rings are picked from the reserve", verb, where)
		}
		if verb == "drop" {
			if !rp.reserveRing {
				return fmt.Errorf("drop %q with no ring in hand", where)
			}
			rp.reserveRing = false
			return nil
		}
		if err := rp.flush(); err != nil {
			return err
		}
		rp.reserveRing = true
		return nil
	}
	pts, err := points(args[1:], 1)
	if err != nil {
		return err
	}
	p, _ := ParsePoint(pts[0])
	switch {
	case verb == "drop" && rp.reserveRing:
		rp.reserveRing = false
		return rp.play(who, "P "+pts[0])
	case verb == "drop" && rp.pending && who == rp.pendingWho:
		rp.ringTo = p
		return nil
	case verb == "pick" && rp.pending && who == rp.pendingWho && rp.ringTo >= 0 && (p == rp.ringFrom || p == rp.ringTo):
		// Taking back a drop: the ring is in hand again. The records name
		// the point the ring started from.
		rp.ringTo = -1
		return nil
	}
	return fmt.Errorf("%s board %s with no ring in hand", verb, pts[0])
}

// flush plays the two-step ring move under way, if any.
func (rp *replay) flush() error {
	if rp.reserveRing {
		return errors.New("a ring taken from the reserve was never dropped")
	}
	if !rp.pending {
		return nil
	}
	rp.pending = false
	if rp.ringTo < 0 {
		return fmt.Errorf("the ring picked up at %s was never dropped", PointName(rp.ringFrom))
	}
	return rp.play(rp.pendingWho, "M "+PointName(rp.ringFrom)+" "+PointName(rp.ringTo))
}

// play checks and applies one move of player who in this project's
// notation, first passing for the player to move if they cannot move and
// the record goes on with the other player.
func (rp *replay) play(who env.Player, text string) error {
	s := rp.state
	if !s.Terminal() && s.phase == phaseMove && s.toMove != who && !s.canMove(s.toMove) {
		s.Apply(actPass)
		rp.moves = append(rp.moves, "pass")
	}
	if s.Terminal() {
		return fmt.Errorf("%s after the end of the game", text)
	}
	if s.toMove != who {
		return fmt.Errorf("%s by %s, but %s is to decide", text, rp.game.PlayerName(who), rp.game.PlayerName(s.toMove))
	}
	a, err := rp.game.ParseAction(text)
	if err != nil {
		return err
	}
	if !s.IsLegal(a) {
		return fmt.Errorf("%s is not legal here", text)
	}
	s.Apply(a)
	rp.moves = append(rp.moves, text)
	return nil
}

// checkColour checks that a piece (w, b, wr, br) is player who's.
func checkColour(who env.Player, piece string) error {
	switch piece {
	case "w", "wr":
		if who == White {
			return nil
		}
	case "b", "br":
		if who == Black {
			return nil
		}
	default:
		return fmt.Errorf("unknown piece %q", piece)
	}
	return fmt.Errorf("piece %q does not belong to the player", piece)
}

// points reads n points written as a letter and a number, with or without
// a space between ("C 4" or "C4"), and returns them in this project's
// notation.
func points(args []string, n int) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		text := strings.ToUpper(args[i])
		if len(text) == 1 && i+1 < len(args) {
			text += args[i+1]
			i++
		}
		p, err := ParsePoint(text)
		if err != nil {
			return nil, err
		}
		out = append(out, PointName(p))
	}
	if len(out) != n {
		return nil, fmt.Errorf("want %d point(s), got %d", n, len(out))
	}
	return out, nil
}
