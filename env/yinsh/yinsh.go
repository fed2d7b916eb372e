package yinsh

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// The action space: every decision is one index.
const (
	actPlace = 0                   // + point: place a ring
	actMove  = actPlace + Points   // + ring move number (from, to)
	actRow   = actMove + ringMoves // + window: remove a row
	actRing  = actRow + Windows    // + point: remove a ring
	actPass  = actRing + Points    // pass
	// ActionCount is the size of the action space.
	ActionCount = actPass + 1
)

const (
	// Markers is the size of the common supply of markers.
	Markers = 51
	// RingsEach is the number of rings each player places.
	RingsEach = 5
)

// White and Black are the players: White places and moves first.
const (
	White env.Player = 0
	Black env.Player = 1
)

// Game is YINSH or its blitz variant. Use Full or Blitz.
type Game struct {
	blitz bool
}

// Full is YINSH: the first player to remove 3 rings wins.
func Full() env.Game { return Game{} }

// Blitz is YINSH blitz: the first player to remove 1 ring wins.
func Blitz() env.Game { return Game{blitz: true} }

func (g Game) Name() string {
	if g.blitz {
		return "yinsh-blitz"
	}
	return "yinsh"
}

// RingsToWin is the number of removed rings that wins the game.
func (g Game) RingsToWin() int {
	if g.blitz {
		return 1
	}
	return 3
}

func (g Game) NewState() env.State { return g.Start() }

// Start returns the start position as a concrete state.
func (g Game) Start() *State {
	return &State{supply: Markers, blitz: g.blitz, winner: env.NoPlayer}
}

func (Game) PlayerName(p env.Player) string {
	if p == White {
		return "white"
	}
	return "black"
}

func (Game) ActionSpace() int { return ActionCount }

// phase is the kind of decision pending.
type phase uint8

const (
	phasePlace phase = iota
	phaseMove
	phaseRemoveRow
	phaseRemoveRing
	phaseOver
)

// State is a YINSH position with the decision pending. It is a small
// value: copying it with = is a complete, independent copy.
type State struct {
	rings, markers [2]bitboard
	removed        [2]uint8
	supply         uint8 // markers not on the board
	placed         uint8 // rings placed so far, both players
	phase          phase
	toMove         env.Player
	// mover made the ring move whose rows are being removed: after the
	// removals, mover.Other() moves next.
	mover  env.Player
	winner env.Player // of a finished game; NoPlayer for a draw
	blitz  bool
}

func (s *State) Game() env.Game     { return Game{blitz: s.blitz} }
func (s *State) ToMove() env.Player { return s.toMove }
func (s *State) Terminal() bool     { return s.phase == phaseOver }
func (s *State) Winner() env.Player { return s.winner }
func (s *State) Clone() env.State   { c := *s; return &c }

func (s *State) CopyFrom(src env.State) { *s = *src.(*State) }

// Supply is the number of markers not on the board.
func (s *State) Supply() int { return int(s.supply) }

// Removed is the number of rings player p has removed.
func (s *State) Removed(p env.Player) int { return int(s.removed[p]) }

// RingsOnBoard is the number of player p's rings on the board.
func (s *State) RingsOnBoard(p env.Player) int { return s.rings[p].count() }

// MarkersOnBoard is the number of markers showing player p's colour.
func (s *State) MarkersOnBoard(p env.Player) int { return s.markers[p].count() }

// HasRow reports whether player p has 5 markers in a row on the board.
func (s *State) HasRow(p env.Player) bool { return s.hasRow(p) }

func (s *State) ringsToWin() uint8 {
	if s.blitz {
		return 1
	}
	return 3
}

func (s *State) occupied() bitboard {
	return s.rings[0].or(s.rings[1]).or(s.markers[0]).or(s.markers[1])
}

// targets is the set of points the ring at from can move to.
func (s *State) targets(from int) bitboard {
	var t bitboard
	base := int(geo.moveBase[from])
	for m := moveSet(from, s.rings[0].or(s.rings[1]), s.markers[0].or(s.markers[1])); m != 0; m &= m - 1 {
		t.set(int(geo.moveTo[base+bits.TrailingZeros64(m)]))
	}
	return t
}

// moveSet is the set of moves of the ring at from, as bits numbered from
// geo.moveBase[from]: the bit order is the order of the move numbers.
// Along each ray the ring slides over empty points and over one group of
// markers, stopping at the first empty point after the group; a ring
// stops it.
func moveSet(from int, rings, markers bitboard) uint64 {
	var set uint64
	occupied := rings.or(markers)
	for h := 0; h < 6; h++ {
		if occupied.and(geo.rayMask[from][h]).empty() {
			set |= geo.rayMoves[from][h]
			continue
		}
		ray, offset := &geo.ray[from][h], &geo.rayOffset[from][h]
		jumped := false
		for i := int8(0); i < geo.rayLen[from][h]; i++ {
			q := int(ray[i])
			if rings.has(q) {
				break
			}
			if markers.has(q) {
				jumped = true
				continue
			}
			set |= 1 << offset[i]
			if jumped {
				break
			}
		}
	}
	return set
}

// moveCount is the number of ring moves of player p.
func (s *State) moveCount(p env.Player) int {
	rings, markers := s.rings[0].or(s.rings[1]), s.markers[0].or(s.markers[1])
	n := 0
	for w := 0; w < 2; w++ {
		for x := s.rings[p][w]; x != 0; x &= x - 1 {
			n += bits.OnesCount64(moveSet(w<<6|bits.TrailingZeros64(x), rings, markers))
		}
	}
	return n
}

// canMove reports whether player p has a ring move.
func (s *State) canMove(p env.Player) bool {
	rings, markers := s.rings[0].or(s.rings[1]), s.markers[0].or(s.markers[1])
	for w := 0; w < 2; w++ {
		for x := s.rings[p][w]; x != 0; x &= x - 1 {
			if moveSet(w<<6|bits.TrailingZeros64(x), rings, markers) != 0 {
				return true
			}
		}
	}
	return false
}

func (s *State) hasRow(p env.Player) bool {
	m := s.markers[p]
	for w := range geo.window {
		if m.covers(geo.window[w]) {
			return true
		}
	}
	return false
}

// LegalActions appends the legal actions in increasing order to buf[:0].
func (s *State) LegalActions(buf []int) []int {
	buf = buf[:0]
	switch s.phase {
	case phasePlace:
		free := allPoints.andNot(s.rings[0].or(s.rings[1]))
		for w := 0; w < 2; w++ {
			for x := free[w]; x != 0; x &= x - 1 {
				buf = append(buf, actPlace+(w<<6|bits.TrailingZeros64(x)))
			}
		}
	case phaseMove:
		rings := s.rings[0].or(s.rings[1])
		markers := s.markers[0].or(s.markers[1])
		for w := 0; w < 2; w++ {
			for x := s.rings[s.toMove][w]; x != 0; x &= x - 1 {
				from := w<<6 | bits.TrailingZeros64(x)
				base := actMove + int(geo.moveBase[from])
				for m := moveSet(from, rings, markers); m != 0; m &= m - 1 {
					buf = append(buf, base+bits.TrailingZeros64(m))
				}
			}
		}
		if len(buf) == 0 {
			buf = append(buf, actPass)
		}
	case phaseRemoveRow:
		m := s.markers[s.toMove]
		for w := range geo.window {
			if m.covers(geo.window[w]) {
				buf = append(buf, actRow+w)
			}
		}
	case phaseRemoveRing:
		for w := 0; w < 2; w++ {
			for x := s.rings[s.toMove][w]; x != 0; x &= x - 1 {
				buf = append(buf, actRing+(w<<6|bits.TrailingZeros64(x)))
			}
		}
	}
	return buf
}

// countActions is len(LegalActions) without listing them.
func (s *State) countActions() int {
	switch s.phase {
	case phasePlace:
		return Points - s.rings[0].count() - s.rings[1].count()
	case phaseMove:
		if n := s.moveCount(s.toMove); n > 0 {
			return n
		}
		return 1
	case phaseRemoveRow:
		n, m := 0, s.markers[s.toMove]
		for w := range geo.window {
			if m.covers(geo.window[w]) {
				n++
			}
		}
		return n
	case phaseRemoveRing:
		return s.rings[s.toMove].count()
	}
	return 0
}

func (s *State) IsLegal(action int) bool {
	if action < 0 || action >= ActionCount {
		return false
	}
	switch s.phase {
	case phasePlace:
		return action < actMove && !s.rings[0].or(s.rings[1]).has(action-actPlace)
	case phaseMove:
		if action == actPass {
			return !s.canMove(s.toMove)
		}
		if action < actMove || action >= actRow {
			return false
		}
		m := action - actMove
		from, to := int(geo.moveFrom[m]), int(geo.moveTo[m])
		return s.rings[s.toMove].has(from) && s.targets(from).has(to)
	case phaseRemoveRow:
		return action >= actRow && action < actRing && s.markers[s.toMove].covers(geo.window[action-actRow])
	case phaseRemoveRing:
		return action >= actRing && action < actPass && s.rings[s.toMove].has(action-actRing)
	}
	return false
}

// Apply plays a legal action.
func (s *State) Apply(action int) {
	switch {
	case action < actMove:
		s.place(action - actPlace)
	case action < actRow:
		m := action - actMove
		s.move(int(geo.moveFrom[m]), int(geo.moveTo[m]), geo.between[m])
	case action < actRing:
		s.removeRow(action - actRow)
	case action < actPass:
		s.removeRing(action - actRing)
	default:
		s.pass()
	}
}

func (s *State) place(p int) {
	s.rings[s.toMove].set(p)
	s.placed++
	s.toMove = s.toMove.Other()
	if s.placed == 2*RingsEach {
		s.startMove(White)
	}
}

// move moves the ring at from to to, jumping the points between.
func (s *State) move(from, to int, between bitboard) {
	p := s.toMove
	s.rings[p].clear(from)
	s.rings[p].set(to)
	s.markers[p].set(from)
	flip := between.and(s.markers[0].or(s.markers[1]))
	s.markers[0][0] ^= flip[0]
	s.markers[0][1] ^= flip[1]
	s.markers[1][0] ^= flip[0]
	s.markers[1][1] ^= flip[1]
	s.supply--
	s.mover = p
	// No row was on the board before the move, so any row now goes
	// through the new marker or a flipped one.
	mine := s.rowThrough(p, from)
	theirs := false
	for w := 0; w < 2; w++ {
		for x := flip[w]; x != 0; x &= x - 1 {
			q := w<<6 | bits.TrailingZeros64(x)
			if s.markers[p].has(q) {
				mine = mine || s.rowThrough(p, q)
			} else {
				theirs = theirs || s.rowThrough(p.Other(), q)
			}
		}
	}
	switch {
	case mine:
		s.phase = phaseRemoveRow
	case theirs:
		s.phase = phaseRemoveRow
		s.toMove = p.Other()
	default:
		s.startMove(p.Other())
	}
}

// rowThrough reports whether player p has a row through point q.
func (s *State) rowThrough(p env.Player, q int) bool {
	m := s.markers[p]
	at := &geo.windowsAt[q]
	for i := int8(0); i < geo.windowsAtSize[q]; i++ {
		if m.covers(geo.window[at[i]]) {
			return true
		}
	}
	return false
}

func (s *State) removeRow(w int) {
	s.markers[s.toMove] = s.markers[s.toMove].andNot(geo.window[w])
	s.supply += 5
	s.phase = phaseRemoveRing
}

func (s *State) removeRing(pt int) {
	p := s.toMove
	s.rings[p].clear(pt)
	s.removed[p]++
	switch {
	case s.removed[p] >= s.ringsToWin():
		s.phase = phaseOver
		s.winner = p
	case s.hasRow(p):
		s.phase = phaseRemoveRow
	case p == s.mover && s.hasRow(p.Other()):
		s.phase = phaseRemoveRow
		s.toMove = p.Other()
	default:
		s.startMove(s.mover.Other())
	}
}

func (s *State) pass() {
	next := s.toMove.Other()
	if !s.canMove(next) {
		s.finishByScore()
		return
	}
	s.startMove(next)
}

// startMove gives player p the next ring move, or ends the game when the
// supply of markers has run out.
func (s *State) startMove(p env.Player) {
	s.toMove = p
	s.phase = phaseMove
	if s.supply == 0 {
		s.finishByScore()
	}
}

func (s *State) finishByScore() {
	s.phase = phaseOver
	switch {
	case s.removed[White] > s.removed[Black]:
		s.winner = White
	case s.removed[Black] > s.removed[White]:
		s.winner = Black
	default:
		s.winner = env.NoPlayer
	}
}

// String draws the board, row 11 at the top: W and B are rings, w and b
// markers, . an empty point; then who is to decide what.
func (s *State) String() string {
	var b strings.Builder
	for row := 11; row >= 1; row-- {
		fmt.Fprintf(&b, "%2d ", row)
		for col := 0; col < 11; col++ {
			p := geo.pointAt(col, row)
			switch {
			case p < 0:
				b.WriteString("  ")
			case s.rings[White].has(p):
				b.WriteString(" W")
			case s.rings[Black].has(p):
				b.WriteString(" B")
			case s.markers[White].has(p):
				b.WriteString(" w")
			case s.markers[Black].has(p):
				b.WriteString(" b")
			default:
				b.WriteString(" .")
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString("    A B C D E F G H I J K\n")
	g := s.Game()
	fmt.Fprintf(&b, "removed white %d black %d, supply %d: ", s.removed[White], s.removed[Black], s.supply)
	switch s.phase {
	case phasePlace:
		fmt.Fprintf(&b, "%s to place a ring\n", g.PlayerName(s.toMove))
	case phaseMove:
		fmt.Fprintf(&b, "%s to move\n", g.PlayerName(s.toMove))
	case phaseRemoveRow:
		fmt.Fprintf(&b, "%s to remove a row\n", g.PlayerName(s.toMove))
	case phaseRemoveRing:
		fmt.Fprintf(&b, "%s to remove a ring\n", g.PlayerName(s.toMove))
	default:
		if s.winner == env.NoPlayer {
			b.WriteString("over, a draw\n")
		} else {
			fmt.Fprintf(&b, "over, %s wins\n", g.PlayerName(s.winner))
		}
	}
	return b.String()
}
